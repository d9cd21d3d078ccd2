//! The disk under a SQLite file fails while sqlrun runs: a sync or a write of the
//! database's files fails with EIO or EROFS. A COMMIT that fails is in doubt (its WAL
//! frames may or may not be in the file), so sqlrun reads the database again through a
//! new connection and says the date as it finds it, committed or rolled back, in its
//! output, in `--json` and in the state store; the run stops there (exit 1), and a rerun
//! finishes the work. Before any date, the fault is one line with its fix (exit 2).
//!
//! SQLite only: this file is not listed in tests/pg/main.rs (PostgreSQL's lost COMMIT is
//! tests/pg's).
//!
//! The fault is real, under the file: a shim of a few lines of C, built here with `cc`
//! into the sandbox's folder and preloaded into sqlrun (`LD_PRELOAD`), makes `fdatasync`
//! and `fsync`, or `write` and `pwrite`, on the named files fail while a trigger file
//! exists (a given number of times, or until the process ends). The runner stops itself
//! right after its first date's COMMIT (`SQLRUN_STOP_AT=committed`); the test makes the
//! trigger and lets it go, so the COMMIT of its second date is what meets the fault.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::*;

/// The shim. `SQLRUN_FAULT_FILES` (paths joined by `:`), `SQLRUN_FAULT_CALLS` (`sync`,
/// `write`), `SQLRUN_FAULT_ERRNO`, `SQLRUN_FAULT_TIMES` (0: until the process ends),
/// `SQLRUN_FAULT_TRIGGER`, and `SQLRUN_FAULT_LOG`, where each failed call is written.
const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failed_so_far;

static int listed(const char *path) {
    const char *files = getenv("SQLRUN_FAULT_FILES");
    size_t n = strlen(path);
    while (files && *files) {
        const char *end = strchr(files, ':');
        size_t len = end ? (size_t)(end - files) : strlen(files);
        if (len == n && strncmp(files, path, n) == 0) return 1;
        files = end ? end + 1 : NULL;
    }
    return 0;
}

static void note(const char *call, const char *path) {
    const char *log = getenv("SQLRUN_FAULT_LOG");
    int fd = log ? open(log, O_WRONLY | O_APPEND | O_CREAT, 0644) : -1;
    if (fd < 0) return;
    char line[4200];
    int n = snprintf(line, sizeof line, "%s %s\n", call, path);
    ssize_t (*real_write)(int, const void *, size_t) =
        (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    real_write(fd, line, (size_t)n);
    close(fd);
}

/* Whether this call fails: a listed file, a listed call, the trigger there. */
static int fails(int fd, const char *call) {
    const char *calls = getenv("SQLRUN_FAULT_CALLS");
    const char *trigger = getenv("SQLRUN_FAULT_TRIGGER");
    if (!calls || !strstr(calls, call) || !trigger || access(trigger, F_OK) != 0) return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    if (!listed(path)) return 0;
    note(call, path);
    const char *times = getenv("SQLRUN_FAULT_TIMES");
    if (times && atoi(times) > 0 && __atomic_add_fetch(&failed_so_far, 1, __ATOMIC_SEQ_CST) >= atoi(times))
        unlink(trigger);
    errno = atoi(getenv("SQLRUN_FAULT_ERRNO"));
    return 1;
}

typedef int (*sync_fn)(int);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

int fdatasync(int fd) {
    static sync_fn real;
    if (!real) real = (sync_fn)dlsym(RTLD_NEXT, "fdatasync");
    return fails(fd, "sync") ? -1 : real(fd);
}
int fsync(int fd) {
    static sync_fn real;
    if (!real) real = (sync_fn)dlsym(RTLD_NEXT, "fsync");
    return fails(fd, "sync") ? -1 : real(fd);
}
ssize_t write(int fd, const void *buf, size_t n) {
    static write_fn real;
    if (!real) real = (write_fn)dlsym(RTLD_NEXT, "write");
    return fails(fd, "write") ? -1 : real(fd, buf, n);
}
ssize_t pwrite(int fd, const void *buf, size_t n, off_t at) {
    static pwrite_fn real;
    if (!real) real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
    return fails(fd, "write") ? -1 : real(fd, buf, n, at);
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t at) {
    static pwrite_fn real;
    if (!real) real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
    return fails(fd, "write") ? -1 : real(fd, buf, n, at);
}
"#;

const EIO: i32 = 5;
const EROFS: i32 = 30;

/// The shim, built into the sandbox's folder. A machine without a C compiler fails the
/// test saying how to get one (Rust links with `cc`, so it is rarely missing).
fn shim(sb: &Sandbox) -> PathBuf {
    let source = sb.path().join("fault_shim.c");
    let built = sb.path().join("fault_shim.so");
    std::fs::write(&source, SHIM).unwrap();
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&built)
        .arg(&source)
        .arg("-ldl")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "these tests build a fault shim with `cc`, which cannot run here ({e}): \
                 install a C compiler (Debian: apt-get install gcc)"
            )
        });
    assert!(
        out.status.success(),
        "building the fault shim with cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    built
}

/// A fault of the disk under the sandbox's database.
struct Fault {
    /// `sync` or `write`.
    calls: &'static str,
    errno: i32,
    /// How many calls fail (0: every one, until the process ends).
    times: u32,
    /// Whether the -shm file fails too (the WAL index: a new connection cannot open).
    shm_too: bool,
}

impl Fault {
    fn files(&self, db: &Path) -> String {
        let mut files = vec![db.to_path_buf(), beside(db, "-wal")];
        if self.shm_too {
            files.push(beside(db, "-shm"));
        }
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        files.join(":")
    }
}

fn beside(db: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", db.display()))
}

/// `sqlrun ARGS` with the shim preloaded; the fault armed from the start (`armed`), or
/// once the run stopped itself at `SQLRUN_STOP_AT=committed`. What it did, and the
/// calls that failed.
fn with_fault(sb: &Sandbox, fault: &Fault, armed: bool, args: &[&str]) -> (Run, Vec<String>) {
    let trigger = sb.path().join("fault.trigger");
    let log = sb.path().join("fault.log");
    let _ = std::fs::remove_file(&log);
    if armed {
        std::fs::write(&trigger, "").unwrap();
    }
    let mut cmd = sb.cmd(args);
    cmd.env("LD_PRELOAD", shim(sb))
        .env("SQLRUN_FAULT_FILES", fault.files(&sb.db))
        .env("SQLRUN_FAULT_CALLS", fault.calls)
        .env("SQLRUN_FAULT_ERRNO", fault.errno.to_string())
        .env("SQLRUN_FAULT_TIMES", fault.times.to_string())
        .env("SQLRUN_FAULT_TRIGGER", &trigger)
        .env("SQLRUN_FAULT_LOG", &log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !armed {
        cmd.env("SQLRUN_STOP_AT", "committed");
    }
    let mut child = cmd.spawn().expect("spawn sqlrun");
    if !armed {
        if !stopped_itself(&mut child) {
            let run = Run::from(child.wait_with_output().unwrap());
            panic!("sqlrun did not stop itself at SQLRUN_STOP_AT=committed: {run:?}");
        }
        std::fs::write(&trigger, "").unwrap();
        // SAFETY: kill has no preconditions; the pid is our child's.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGCONT) }, 0);
    }
    let run = Run::from(child.wait_with_output().unwrap());
    let _ = std::fs::remove_file(&trigger);
    let failed = std::fs::read_to_string(&log).unwrap_or_default();
    (run, failed.lines().map(str::to_string).collect())
}

/// The story: 2026-02-01..03 computed by run 1, then a late order on 02-03, so that a
/// run that recomputes 02-03 changes it. The faulty run (run 2) applies 02-02..02-05:
/// 02-02 commits, then 02-03's COMMIT meets the fault.
struct Story {
    sb: Sandbox,
    orders: Orders,
    /// 02-03 as run 1 computed it.
    before: (i64, i64),
}

const INTERVAL: &str = "2026-02-02..2026-02-05";
const DS: &str = "2026-02-03";

fn story(seed: u64) -> Story {
    assert!(is_sqlite(), "tests/cli/disk_faults.rs is SQLite-only");
    let sb = Sandbox::new();
    let mut orders = Orders::new(seed, "2026-02-01", 5, false);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", "2026-02-01..2026-02-03"]);
    let before = sb.daily()[DS];
    let late = orders.add("late-1", DS, 12_345);
    sb.insert_orders(&[late]);
    assert_ne!(orders.expected()[DS], before);
    Story { sb, orders, before }
}

impl Story {
    /// How run 2 recorded each of its dates.
    fn recorded(&self) -> BTreeMap<String, String> {
        self.sb
            .rows("SELECT ds, status FROM run_partitions WHERE run_id = 2 ORDER BY ds")
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect()
    }

    /// 02-03's row in daily_revenue: its numbers and the run that wrote them.
    fn row(&self) -> (i64, i64, i64) {
        let rows = self.sb.rows(&format!(
            "SELECT revenue, order_count, run_id FROM daily_revenue WHERE ds = '{DS}'"
        ));
        let n = |i: usize| rows[0][i].parse::<i64>().unwrap();
        (n(0), n(1), n(2))
    }

    fn run_status(&self) -> String {
        self.sb.rows("SELECT status FROM runs WHERE run_id = 2")[0][0].clone()
    }

    /// With the fault gone, the same backfill again finishes the work: equal to a clean
    /// run, nothing left held; run 2 ended as `then`.
    fn rerun_finishes(&self, then: &str) {
        self.sb
            .ok(&["apply", "--interval", "2026-02-01..2026-02-05"]);
        let expected = self.orders.expected();
        assert_eq!(self.sb.daily(), expected);
        assert_eq!(self.sb.cumulative(), running(&expected));
        assert_eq!(self.sb.count("SELECT count(*) FROM reservations"), 0);
        assert_eq!(self.run_status(), then);
    }
}

/// The last line on stderr, sqlrun's error.
fn error_line(run: &Run) -> &str {
    let line = run.stderr.lines().last().unwrap_or_default();
    assert!(line.starts_with("sqlrun: "), "{}", run.stderr);
    line
}

#[test]
fn a_commit_whose_sync_failed_but_landed_is_reported_and_recorded_committed() {
    let st = story(381);
    let fault = Fault {
        calls: "sync",
        errno: EIO,
        times: 0,
        shm_too: false,
    };
    let (run, failed) = with_fault(
        &st.sb,
        &fault,
        false,
        &["--json", "apply", "--interval", INTERVAL],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        failed[0].starts_with("sync ") && failed[0].ends_with("test.db-wal"),
        "{failed:?}"
    );

    // The frames were written before the sync failed: the date is in the file, whole.
    let expected = st.orders.expected();
    assert_eq!(
        st.recorded(),
        BTreeMap::from([
            ("2026-02-02".into(), "success".into()),
            (DS.into(), "success".into()),
        ])
    );
    assert_eq!(st.row(), (expected[DS].0, expected[DS].1, 2));
    assert_eq!(st.run_status(), "failed");
    let note = st.sb.rows("SELECT error FROM runs WHERE run_id = 2")[0][0].clone();
    contains_all(
        &note,
        &[
            DS,
            "COMMIT failed",
            "landed (committed)",
            "SQLITE_IOERR_FSYNC",
        ],
    );

    // --json: the error document says the date as found.
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let error = &doc["error"];
    assert_eq!(error["exit_code"], 1);
    assert_eq!(error["run_id"], 2);
    assert_eq!(
        error["in_doubt"],
        serde_json::json!({"ds": DS, "found": "committed", "status": "success", "run_recorded": true})
    );
    let committed: Vec<&str> = error["committed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["ds"].as_str().unwrap())
        .collect();
    assert_eq!(committed, ["2026-02-02", DS]);
    contains_all(
        error["message"].as_str().unwrap(),
        &[
            &format!("stopped at {DS}, whose COMMIT failed but landed"),
            "committed (success)",
            "the disk under",
            "test.db failed (disk I/O error, code SQLITE_IOERR_FSYNC",
            "dmesg",
            "1 date committed before it (2026-02-02)",
            "the run is recorded failed",
            &format!("sqlrun apply --interval {INTERVAL}"),
        ],
    );
    st.rerun_finishes("failed");
}

#[test]
fn a_commit_that_did_not_land_is_reported_rolled_back_and_recorded_failed() {
    // A write that fails: the frames never reach the file. A sync that fails once: the
    // old connection, closed, checkpoints what it knew and drops the WAL file, and the
    // frames with it. Either way the date is not there, and is said so.
    for (calls, code) in [
        ("write", "SQLITE_IOERR_WRITE"),
        ("sync", "SQLITE_IOERR_FSYNC"),
    ] {
        let st = story(382);
        let fault = Fault {
            calls,
            errno: EIO,
            times: 1,
            shm_too: false,
        };
        let (run, failed) = with_fault(&st.sb, &fault, false, &["apply", "--interval", INTERVAL]);
        assert_eq!(run.code, 1, "{calls}: {}", run.stderr);
        assert_eq!(failed.len(), 1, "{failed:?}");

        assert_eq!(
            st.recorded(),
            BTreeMap::from([
                ("2026-02-02".into(), "success".into()),
                (DS.into(), "failed".into()),
            ]),
            "{calls}"
        );
        assert_eq!(
            st.row(),
            (st.before.0, st.before.1, 1),
            "{calls}: 02-03 as run 1 left it"
        );
        let error = st.sb.rows(&format!(
            "SELECT error FROM run_partitions WHERE run_id = 2 AND ds = '{DS}'"
        ))[0][0]
            .clone();
        contains_all(
            &error,
            &["COMMIT failed", "did not land (rolled back)", code],
        );
        assert_eq!(st.run_status(), "failed");

        // The text: the date's line, then the run's error.
        assert!(
            run.stderr.contains(&format!("{DS}  failed  (")),
            "{calls}: {}",
            run.stderr
        );
        contains_all(
            error_line(&run),
            &[
                &format!("stopped at {DS}, which rolled back"),
                "the date is not there (recorded failed)",
                code,
                "1 date committed before it (2026-02-02)",
                &format!("sqlrun apply --interval {INTERVAL}"),
            ],
        );
        st.rerun_finishes("failed");
    }
}

#[test]
fn a_file_system_turned_read_only_mid_run_is_said_and_the_record_goes_as_far_as_it_can() {
    let st = story(383);
    let fault = Fault {
        calls: "write",
        errno: EROFS,
        times: 0,
        shm_too: false,
    };
    let (run, _) = with_fault(&st.sb, &fault, false, &["apply", "--interval", INTERVAL]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    // Nothing more could be written: 02-02 stays committed, 02-03 is not there and has
    // no record, and the run's row still says running (the next run finds it dead).
    assert_eq!(
        st.recorded(),
        BTreeMap::from([("2026-02-02".into(), "success".into())])
    );
    assert_eq!(st.row(), (st.before.0, st.before.1, 1));
    assert_eq!(st.run_status(), "running");
    contains_all(
        error_line(&run),
        &[
            &format!("stopped at {DS}, which rolled back"),
            "its failure could not be recorded",
            "the file system under",
            "is read-only",
            "Read-only file system",
            "remount it read-write",
            "the run's end could not be recorded",
            "the next run finds this process gone",
            &format!("sqlrun apply --interval {INTERVAL}"),
        ],
    );
    st.rerun_finishes("interrupted");
}

#[test]
fn a_commit_whose_database_cannot_be_read_again_is_said_unknown_with_how_to_find_out() {
    // The -shm file fails too: no new connection can open the WAL database.
    let st = story(384);
    let fault = Fault {
        calls: "write",
        errno: EROFS,
        times: 0,
        shm_too: true,
    };
    let (run, _) = with_fault(
        &st.sb,
        &fault,
        false,
        &["--json", "apply", "--interval", INTERVAL],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        doc["error"]["in_doubt"],
        serde_json::json!({"ds": DS, "found": "unknown", "status": null, "run_recorded": false})
    );
    contains_all(
        doc["error"]["message"].as_str().unwrap(),
        &[
            "whether it landed is not known",
            &format!("sqlrun status --interval {DS}"),
            "read-only",
        ],
    );
    // Once the fault is gone the database answers: the write never reached the file.
    assert_eq!(
        st.recorded(),
        BTreeMap::from([("2026-02-02".into(), "success".into())])
    );
    assert_eq!(st.row(), (st.before.0, st.before.1, 1));
    let status = st.sb.ok(&["status", "--interval", DS]).stdout;
    assert!(status.contains(DS), "{status}");
    st.rerun_finishes("interrupted");
}

#[test]
fn a_failing_or_read_only_disk_before_any_date_is_one_line_with_its_fix_and_writes_nothing() {
    let st = story(385);
    let before = snapshot(&st.sb);
    let cases = [
        (
            EROFS,
            &[
                "the file system under",
                "is read-only",
                "remount it read-write",
                "dmesg",
            ][..],
        ),
        (
            EIO,
            &[
                "the disk under",
                "failed (disk I/O error, code SQLITE_IOERR_WRITE",
                "dmesg",
                "then run again",
            ],
        ),
    ];
    for (errno, words) in cases {
        let fault = Fault {
            calls: "write",
            errno,
            times: 0,
            shm_too: false,
        };
        for args in [
            &["apply", "--interval", "2026-02-04"][..],
            &["seal", "--interval", "2026-02-01", "--reason", "sent"],
            &["reserve", "--interval", "2026-02-05"],
        ] {
            let (run, failed) = with_fault(&st.sb, &fault, true, args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(!failed.is_empty(), "the fault was met: {args:?}");
            let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.is_empty()).collect();
            assert_eq!(lines.len(), 1, "one line: {}", run.stderr);
            contains_all(lines[0], words);
            contains_all(lines[0], &["test.db"]);
            assert!(!lines[0].contains("database error"), "{}", lines[0]);
        }
        // The read commands read it as it is.
        let (status, _) = with_fault(&st.sb, &fault, true, &["status", "--interval", DS]);
        assert_eq!(status.code, 0, "{}", status.stderr);
    }
    assert_eq!(snapshot(&st.sb), before, "nothing written");
}
