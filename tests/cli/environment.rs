//! Faults of where the database lives, not of its SQL: a read-only file, a read-only
//! folder, a file that is not a database or is damaged, a full disk, a server that cannot
//! be reached. Each is one line naming the cause and the fix, exit 2 when no date was
//! attempted and exit 1 when one was; nothing is half-written; and the commands that only
//! read work on a current database they cannot write.
//!
//! The tests run as root in CI, where permissions alone stop no write: they make files
//! and folders read-only with `chattr +i` (chmod when not root) and mount what they need
//! (a read-only bind mount, a small tmpfs) themselves, undoing it when dropped. Where the
//! machine cannot, the test says so on the terminal and skips, never silently.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

/// Says on the terminal (past the harness's output capture) that a test did not run.
fn skipped(what: &str, why: &str) {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("a test");
    let _ = writeln!(
        std::io::stderr(),
        "note: {name}: skipped {what}, this machine cannot: {why}"
    );
}

fn sh(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A mount this test made; unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    /// A tmpfs of `size` (`mount -o size=` units) on `dir`.
    fn tmpfs(dir: &Path, size: &str) -> Result<Mount, String> {
        let at = dir.to_str().unwrap();
        sh(
            "mount",
            &["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", at],
        )?;
        Ok(Mount(dir.to_path_buf()))
    }

    /// `dir` mounted on itself read-only: read-only media.
    fn read_only(dir: &Path) -> Result<Mount, String> {
        let at = dir.to_str().unwrap();
        sh("mount", &["--bind", at, at])?;
        let mount = Mount(dir.to_path_buf());
        sh("mount", &["-o", "remount,ro,bind", at])?;
        Ok(mount)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let at = self.0.to_str().unwrap();
        if sh("umount", &[at]).is_err() {
            let _ = sh("umount", &["-l", at]);
        }
    }
}

/// A file or folder that nobody can write, root included (`chattr +i`; chmod a-w when
/// not root); writable again when dropped.
struct Unwritable {
    path: PathBuf,
    chattr: bool,
}

impl Unwritable {
    fn make(path: &Path) -> Result<Unwritable, String> {
        let p = path.to_str().unwrap();
        // SAFETY: geteuid has no preconditions.
        let chattr = unsafe { libc::geteuid() } == 0;
        if chattr {
            sh("chattr", &["+i", p])?;
        } else {
            sh("chmod", &["a-w", p])?;
        }
        Ok(Unwritable {
            path: path.to_path_buf(),
            chattr,
        })
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        let p = self.path.to_str().unwrap();
        let _ = if self.chattr {
            sh("chattr", &["-i", p])
        } else {
            sh("chmod", &["u+w", p])
        };
    }
}

/// The one line of an error on stderr, which it asserts is all there is.
fn one_line(run: &Run) -> String {
    let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line on stderr:\n{}", run.stderr);
    assert!(lines[0].starts_with("sqlrun: "), "{}", run.stderr);
    lines[0].to_string()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What each read command prints, to compare a database with its read-only copy (a
/// whole date's render has the time in it: it is only run).
fn read_outputs(sb: &Sandbox, run_id: i64) -> Vec<String> {
    let render = sb.ok(&["render", "--date", "2026-02-02"]).stdout;
    assert!(render.contains("daily_revenue_corrections"), "{render}");
    let run_id = run_id.to_string();
    [
        &["status", "--list"][..],
        &["runs"],
        &["runs", &run_id],
        &["corrections"],
        &["templates"],
        &["render", "--date", "2026-02-03", "daily_revenue"],
        &["status"],
    ]
    .iter()
    .map(|args| sb.ok(args).stdout)
    .collect()
}

/// A sandbox with a few computed dates, one of them sealed and corrected.
fn computed_sandbox(sb: &Sandbox) -> Orders {
    let mut orders = Orders::new(71, "2026-02-01", 4, false);
    sb.ok(&["init"]);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&["seal", "--interval", "2026-02-02", "--reason", "sent"]);
    let late = orders.add("late-1", "2026-02-02", 5_000);
    sb.insert_orders(&[late]);
    sb.ok(&["apply", "--interval", "2026-02-02"]);
    orders
}

#[test]
fn the_read_commands_write_nothing() {
    let sb = Sandbox::empty();
    let orders = computed_sandbox(&sb);
    let before = snapshot(&sb);
    let run_id = sb.last_run_id();

    let outputs = read_outputs(&sb, run_id);
    let status = &outputs[0];
    // The state is the calendar's: the sealed date that took a correction is corrected.
    for (ds, state) in [
        ("2026-02-01", "computed"),
        ("2026-02-02", "corrected"),
        ("2026-02-03", "computed"),
        ("2026-02-04", "computed"),
    ] {
        let line = status.lines().find(|l| l.starts_with(ds)).unwrap();
        assert_eq!(line.split_whitespace().nth(1), Some(state), "{status}");
    }
    assert!(
        outputs[6].contains("\n2026-02  # C # #\n"),
        "{}",
        outputs[6]
    );
    assert!(outputs[1].contains("2026-02-02"), "runs:\n{}", outputs[1]);
    assert!(
        outputs[3].contains("+5,000"),
        "corrections:\n{}",
        outputs[3]
    );
    assert_eq!(snapshot(&sb), before, "a read command wrote");
    assert_eq!(sb.current(), orders.expected());
}

#[test]
fn status_works_on_a_read_only_copy_of_a_current_database() {
    if sqlite_only("a SQLite file on read-only media (a read-only bind mount)") {
        return;
    }
    let sb = Sandbox::empty();
    computed_sandbox(&sb);
    let run_id = sb.last_run_id();
    let want = read_outputs(&sb, run_id);
    let rows = snapshot(&sb);

    // The copy: the file alone, on read-only media.
    let mut copy = Sandbox::empty();
    let media = copy.path().join("media");
    std::fs::create_dir(&media).unwrap();
    copy.db = media.join("copy.db");
    std::fs::copy(&sb.db, &copy.db).unwrap();
    let bytes = std::fs::read(&copy.db).unwrap();
    let mount = match Mount::read_only(&media) {
        Ok(m) => m,
        Err(why) => return skipped("the read-only media", &why),
    };

    assert_eq!(read_outputs(&copy, run_id), want);
    assert_eq!(files_in(&media), ["copy.db"]);
    // The commands that write say why they cannot, on one line, and exit 2.
    for args in [
        &["apply", "--interval", "2026-02-05"][..],
        &["init"],
        &["seal", "--interval", "2026-02-01", "--reason", "x"],
        &["reserve", "--interval", "2026-02-06"],
    ] {
        let line = one_line(&copy.expect(2, args));
        contains_all(&line, &["copy.db", "read-only", "writable"]);
    }
    drop(mount);
    assert_eq!(std::fs::read(&copy.db).unwrap(), bytes);
    assert_eq!(snapshot(&copy), rows);
}

#[test]
fn a_read_only_file_is_said_in_one_line_and_exit_2() {
    if sqlite_only("a read-only SQLite file") {
        return;
    }
    // Orders, but no pipeline objects yet (`generate` migrates, it does not sync).
    let sb = Sandbox::empty();
    sb.ok(&["generate", "--start", "2026-02-01", "--days", "3"]);
    let before = snapshot(&sb);
    assert!(!sb.table_exists("cumulative_revenue"));
    let lock = match Unwritable::make(&sb.db) {
        Ok(l) => l,
        Err(why) => return skipped("a read-only file", &why),
    };
    let line = one_line(&sb.expect(2, &["status"]));
    contains_all(
        &line,
        &[
            "test.db",
            "pipeline objects",
            "missing",
            "sqlrun init",
            "write access",
        ],
    );
    let line = one_line(&sb.expect(2, &["apply", "--interval", "2026-02-01"]));
    contains_all(&line, &["test.db", "is read-only", "make it writable"]);
    assert!(!line.contains("CREATE"), "{line}");
    drop(lock);
    assert_eq!(snapshot(&sb), before);
    assert!(!sb.table_exists("cumulative_revenue"));

    // Initialised and computed: the file is read, and no write is attempted as a date.
    sb.ok(&["apply", "--interval", "2026-02-01..2026-02-02"]);
    let before = snapshot(&sb);
    let lock = Unwritable::make(&sb.db).unwrap();
    let status = sb.ok(&["status", "--list"]).stdout;
    assert!(status.contains("2026-02-02  computed"), "{status}");
    for args in [
        &["apply", "--interval", "2026-02-03"][..],
        &["apply", "--interval", "2026-02-01..2026-02-03"],
        &["seal", "--interval", "2026-02-01", "--reason", "x"],
        &["reserve", "--interval", "2026-02-03"],
    ] {
        let line = one_line(&sb.expect(2, args));
        contains_all(&line, &["test.db", "is read-only"]);
    }
    drop(lock);
    assert_eq!(snapshot(&sb), before, "nothing written");
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 1);
}

#[test]
fn a_read_only_folder_is_said_in_one_line_and_exit_2() {
    if sqlite_only("a SQLite file in a read-only folder") {
        return;
    }
    let mut sb = Sandbox::empty();
    let folder = sb.path().join("locked");
    std::fs::create_dir(&folder).unwrap();
    sb.db = folder.join("test.db");
    computed_sandbox(&sb);
    let run_id = sb.last_run_id();
    let want = read_outputs(&sb, run_id);
    let before = snapshot(&sb);
    assert_eq!(files_in(&folder), ["test.db"]);

    let lock = match Unwritable::make(&folder) {
        Ok(l) => l,
        Err(why) => return skipped("a read-only folder", &why),
    };
    // The file itself is writable: SQLite needs the folder for its -wal and -shm files.
    assert!(std::fs::OpenOptions::new().write(true).open(&sb.db).is_ok());
    for args in [
        &["apply", "--interval", "2026-02-05"][..],
        &["seal", "--interval", "2026-02-01", "--reason", "x"],
        &["init"],
    ] {
        let line = one_line(&sb.expect(2, args));
        contains_all(
            &line,
            &[
                "test.db",
                "folder",
                "read-only",
                "test.db-wal",
                "test.db-shm",
            ],
        );
    }
    // The read commands read it as it is.
    assert_eq!(read_outputs(&sb, run_id), want);
    assert_eq!(files_in(&folder), ["test.db"]);
    drop(lock);
    assert_eq!(snapshot(&sb), before);
}

#[test]
fn a_file_that_is_not_a_database_or_is_damaged_is_said_in_one_line() {
    if sqlite_only("SQLite files: garbage bytes and a truncated database") {
        return;
    }
    let sb = Sandbox::empty();
    computed_sandbox(&sb);
    let real = std::fs::read(&sb.db).unwrap();
    assert!(real.len() > 8192);

    let garbage: Vec<u8> = (0..20_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let truncated = real[..4096].to_vec();
    let cases = [
        ("garbage.db", garbage, "is not a SQLite database"),
        ("truncated.db", truncated, "is damaged"),
    ];
    for (name, bytes, cause) in cases {
        let mut bad = Sandbox::empty();
        bad.db = bad.path().join(name);
        std::fs::write(&bad.db, &bytes).unwrap();
        for args in [
            &["status"][..],
            &["runs"],
            &["init"],
            &["apply", "--interval", "2026-02-01"],
        ] {
            let line = one_line(&bad.expect(2, args));
            contains_all(&line, &[name, cause, "sqlrun init"]);
            assert!(!line.contains("writable"), "{line}");
        }
        assert_eq!(std::fs::read(&bad.db).unwrap(), bytes, "{name} unchanged");
    }
    // The real one still reads.
    assert_eq!(sb.count("SELECT count(*) FROM daily_revenue"), 4);
}

/// Each computed date also writes ~100 KB into `ballast`, in the date's transaction (a
/// trigger): a backfill that fills a small disk.
fn add_ballast(sb: &Sandbox) {
    sb.exec(
        "CREATE TABLE ballast (ds TEXT PRIMARY KEY, bytes BLOB NOT NULL);
         CREATE TRIGGER ballast AFTER INSERT ON daily_revenue BEGIN
           INSERT OR REPLACE INTO ballast VALUES (NEW.ds, randomblob(100000));
         END;",
    );
}

#[test]
fn a_full_disk_stops_the_backfill_at_a_date_and_a_rerun_finishes_it() {
    if sqlite_only("a full disk under a SQLite file (a small tmpfs)") {
        return;
    }
    let orders = Orders::new(93, "2026-05-01", 30, true);
    let expected = orders.expected();
    let interval = orders.interval();
    let all: Vec<String> = expected.keys().cloned().collect();

    let mut sb = Sandbox::empty();
    let disk = sb.path().join("small-disk");
    std::fs::create_dir(&disk).unwrap();
    let mount = match Mount::tmpfs(&disk, "16m") {
        Ok(m) => m,
        Err(why) => return skipped("the full disk", &why),
    };
    sb.db = disk.join("test.db");
    sb.ok(&["init"]);
    sb.insert_orders(&orders.rows);
    add_ballast(&sb);
    // Leave about 1.5 MB: room for some dates, not for 30.
    let filler = disk.join("filler");
    std::fs::write(&filler, vec![1u8; 14 * 1024 * 1024 + 512 * 1024]).unwrap();

    let run = sb.expect(1, &["--json", "apply", "--interval", &interval]);
    let run_id = sb.last_run_id();
    let done: Vec<String> = sb
        .rows(&format!(
            "SELECT ds FROM run_partitions WHERE run_id = {run_id} AND status = 'success' ORDER BY ds"
        ))
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert!(
        !done.is_empty() && done.len() < all.len(),
        "the disk filled mid-way: {done:?}\n{}",
        run.stderr
    );
    assert_eq!(done, all[..done.len()], "dates in ascending order");
    // Every committed date is whole: its partition, its record and its ballast together.
    let daily = sb.daily();
    assert_eq!(daily.keys().cloned().collect::<Vec<_>>(), done);
    for (ds, v) in &daily {
        assert_eq!(*v, expected[ds], "{ds}");
    }
    let ballast: Vec<String> = sb
        .rows("SELECT ds FROM ballast ORDER BY ds")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(ballast, done);
    let stopped_at = &all[done.len()];
    let later = sb.count(&format!(
        "SELECT count(*) FROM run_partitions WHERE run_id = {run_id} AND ds > '{stopped_at}'"
    ));
    assert_eq!(later, 0, "dates after the full disk are not attempted");

    // The last line names the date in progress, what committed before it, and the fix.
    let line = run.stderr.lines().last().unwrap();
    assert!(line.starts_with("sqlrun: "), "{}", run.stderr);
    contains_all(
        line,
        &[
            &format!("stopped at {stopped_at}"),
            &format!("{} dates committed before it", done.len()),
            "test.db",
            "is full",
            "free space",
            &format!("sqlrun apply --interval {interval}"),
        ],
    );

    // With --json the error is a document on stdout, with the dates that stay committed.
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let error = &doc["error"];
    assert_eq!(
        (error["exit_code"].as_i64(), error["run_id"].as_i64()),
        (Some(1), Some(run_id))
    );
    let committed: Vec<&str> = error["committed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["ds"].as_str().unwrap())
        .collect();
    assert_eq!(committed, done);
    assert_eq!(error["message"].as_str(), line.strip_prefix("sqlrun: "));

    // Space freed: the same backfill again completes, equal to a clean run.
    std::fs::remove_file(&filler).unwrap();
    sb.ok(&["apply", "--interval", &interval]);
    let clean = Sandbox::new();
    clean.insert_orders(&orders.rows);
    add_ballast(&clean);
    clean.ok(&["apply", "--interval", &interval]);
    assert_eq!(sb.daily(), clean.daily());
    assert_eq!(sb.current(), clean.current());
    assert_eq!(sb.cumulative(), clean.cumulative());
    assert_eq!(sb.daily(), expected);
    assert_eq!(sb.cumulative(), running(&expected));
    assert_eq!(sb.count("SELECT count(*) FROM ballast"), all.len() as i64);
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    let dead = sb.rows(&format!("SELECT status FROM runs WHERE run_id = {run_id}"));
    assert!(
        dead == [["failed"]] || dead == [["interrupted"]],
        "the stopped run: {dead:?}"
    );
    drop(mount);
}

/// `sqlrun --db DB ARGS`, with nothing from the environment that names a database.
fn sqlrun_at(db: &str, args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars() {
        if key.starts_with("SQLRUN_") || key.starts_with("PG") {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .env("USER", "tester")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    Run::from(out)
}

/// `sqlrun ARGS` on the sandbox's database, with its `--db` URL changed by `edit`.
fn sqlrun_with_url(sb: &Sandbox, edit: impl Fn(&str) -> String, args: &[&str]) -> Run {
    let cmd = sb.cmd(args);
    let mut args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let at = args.iter().position(|a| a == "--db").unwrap() + 1;
    let url = edit(&args.remove(at));
    args.remove(at - 1);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sqlrun_at(&url, &args)
}

#[test]
fn a_read_only_postgresql_session_reads_and_refuses_writes_in_one_line() {
    if postgres_only("a session whose transactions are read-only") {
        return;
    }
    let sb = Sandbox::empty();
    let orders = computed_sandbox(&sb);
    let before = snapshot(&sb);
    let read_only = |url: &str| format!("{url}&options=-c%20default_transaction_read_only%3Don");

    let status = sqlrun_with_url(&sb, read_only, &["status"]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert_eq!(status.stdout, sb.ok(&["status"]).stdout);
    let runs = sqlrun_with_url(&sb, read_only, &["runs"]);
    assert_eq!(runs.code, 0, "{}", runs.stderr);
    assert!(
        runs.stdout.contains("2026-02-01..2026-02-04"),
        "{}",
        runs.stdout
    );

    for args in [
        &["apply", "--interval", &orders.interval()][..],
        &["seal", "--interval", "2026-02-01", "--reason", "x"],
    ] {
        let run = sqlrun_with_url(&sb, read_only, args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        let line = one_line(&run);
        contains_all(&line, &["only takes reads", "read-only", "primary"]);
    }
    assert_eq!(snapshot(&sb), before, "nothing written");
}

#[test]
fn a_server_that_cannot_be_reached_is_said_in_one_line_and_exit_1_which_is_retried() {
    // Nothing listens on port 1: refused at once. Not bad input: a retry may find it up.
    for args in [
        &["status"][..],
        &["runs"],
        &["apply", "--interval", "2026-02-01"],
    ] {
        let run = sqlrun_at("postgresql://tester@127.0.0.1:1/sqlrun", args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        let line = one_line(&run);
        contains_all(
            &line,
            &[
                "cannot reach",
                "127.0.0.1:1",
                "refused",
                "nothing was written",
                "server is up",
            ],
        );
    }

    if postgres_only("an unknown database on the test server") {
        return;
    }
    let sb = Sandbox::new();
    let unknown = |url: &str| {
        let (scheme, rest) = url.split_once(":///").unwrap();
        let (_, query) = rest.split_once('?').unwrap();
        format!("{scheme}:///no_such_database?{query}")
    };
    for args in [&["status"][..], &["init"]] {
        let run = sqlrun_with_url(&sb, unknown, args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        let line = one_line(&run);
        contains_all(&line, &["no_such_database", "does not exist", "createdb"]);
    }
    // The server's databases are as they were.
    assert_eq!(
        sb.count("SELECT count(*) FROM pg_catalog.pg_database WHERE datname = 'no_such_database'"),
        0
    );
}
