//! A runner cut off from its server by the network: the measurement behind the README's
//! "a runner cut off from the server by the network holds its dates for about 10 seconds
//! over TCP". Two network namespaces made by the test, joined by a veth pair in a private
//! /30 that exists only inside them; a private PostgreSQL server in one, the real binary
//! in the other, talking TCP over the veth. Mid-backfill the test cuts the link and
//! measures, from the server's side (over its Unix socket, which no network cut touches),
//! how long the server keeps the runner's session (and so its dates), and how long the
//! runner takes to give up. Then a runner in the server's namespace reclaims the dates.
//!
//! Two ways to cut:
//! - silent: both links stay up, but each side now sends to a MAC address nobody has, so
//!   every packet leaves and is lost on the way (a partition: nothing errors locally, the
//!   peer just goes quiet);
//! - link down: the runner's interface goes down (a pulled cable on the runner's side).
//!
//! Needs root (network namespaces), `ip` (iproute2) and PostgreSQL (`initdb`, `postgres`,
//! a `postgres` user to run them as). A test takes about 12 s; every wait is bounded
//! (at most 40 s after the cut); it cleans up (server, namespaces, folder) also when it
//! fails.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::{sleep, JoinHandle};
use std::time::{Duration, Instant};

use crate::support::{day, Run, BIN};

/// The /30 of the veth pair; it exists only inside the two namespaces of a test.
const SERVER_ADDR: &str = "10.213.0.1";
const CLIENT_ADDR: &str = "10.213.0.2";
/// A MAC address no interface has: where a silent cut sends every packet.
const NOWHERE_MAC: &str = "02:00:5e:00:53:fe";
const PORT: u16 = 5439;
const SCHEMA: &str = "part";
const START: &str = "2025-01-01";
/// 300 dates of 0.2 s each: about a minute of backfill, far longer than the cut needs.
const DAYS: u32 = 300;
const SLEEP_PER_DATE: &str = "0.2";
/// The bounds asserted (with slack over the ~5-10 s the settings aim at).
const SESSION_GONE_WITHIN: Duration = Duration::from_secs(20);
const RUNNER_EXITS_WITHIN: Duration = Duration::from_secs(30);
/// How long the test keeps measuring after the cut before it gives up.
const MEASURE_AT_MOST: Duration = Duration::from_secs(40);
/// Namespaces are named `PREFIX<pid>-<tag>-srv` / `-cli`.
const PREFIX: &str = "sqlrun-part-";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cut {
    Silent,
    LinkDown,
}

impl Cut {
    fn tag(self) -> &'static str {
        match self {
            Cut::Silent => "silent",
            Cut::LinkDown => "down",
        }
    }
}

// ---------------------------------------------------------------------------------------
// Processes

/// A running process whose output is read as it comes. Killed (by its own pid) if the
/// test ends before it does.
struct Proc {
    what: String,
    child: Child,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
    reaped: bool,
}

fn read_all(mut from: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn joined(handle: Option<JoinHandle<String>>) -> String {
    handle
        .map(|h| h.join().unwrap_or_default())
        .unwrap_or_default()
}

impl Proc {
    fn spawn(what: &str, mut cmd: Command) -> Proc {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: cannot start {:?}: {e}", cmd.get_program()));
        let stdout = child.stdout.take().map(read_all);
        let stderr = child.stderr.take().map(read_all);
        Proc {
            what: what.to_string(),
            child,
            stdout,
            stderr,
            reaped: false,
        }
    }

    /// What it did, if it has ended.
    fn try_finish(&mut self) -> Option<Run> {
        let status = self.child.try_wait().expect("try_wait")?;
        self.reaped = true;
        Some(Run {
            code: status.code().unwrap_or(-1),
            stdout: joined(self.stdout.take()),
            stderr: joined(self.stderr.take()),
        })
    }

    /// Panics, with what the process said, if it has ended already.
    fn assert_running(&mut self, waiting_for: &str) {
        if let Some(run) = self.try_finish() {
            panic!(
                "{} ended (exit {}) before {waiting_for}\nstdout: {}\nstderr: {}",
                self.what, run.code, run.stdout, run.stderr
            );
        }
    }

    /// Waits at most `limit` for the process to end by itself; kills it and fails if not.
    fn finish(mut self, limit: Duration) -> Run {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(run) = self.try_finish() {
                return run;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                self.reaped = true;
                let stderr = joined(self.stderr.take());
                panic!(
                    "{} still ran after {limit:?} (killed now); its stderr:\n{stderr}",
                    self.what
                );
            }
            sleep(Duration::from_millis(20));
        }
    }

    /// Runs to its end (bounded) and checks the exit code.
    fn expect(self, code: i32, limit: Duration) -> Run {
        let what = self.what.clone();
        let run = self.finish(limit);
        assert_eq!(
            run.code, code,
            "{what}: exit {}, wanted {code}\nstdout: {}\nstderr: {}",
            run.code, run.stdout, run.stderr
        );
        run
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Makes `cmd` start inside the network namespace `ns` (an open /var/run/netns file); as
/// `user` (uid, gid) if given (setns needs root, so the switch comes after it); with
/// `deathsig` sent to it when the thread that starts it ends, if given.
fn in_netns(cmd: &mut Command, ns: &File, user: Option<(u32, u32)>, deathsig: Option<libc::c_int>) {
    let fd = ns.as_raw_fd();
    let parent = std::process::id();
    // SAFETY: the closure calls only async-signal-safe functions (setns, setgroups,
    // setgid, setuid, prctl, getppid, _exit); `ns` outlives the spawn (the caller keeps it).
    unsafe {
        cmd.pre_exec(move || {
            let check = |rc: libc::c_int| {
                if rc == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            };
            check(libc::setns(fd, libc::CLONE_NEWNET))?;
            if let Some((uid, gid)) = user {
                check(libc::setgroups(1, &gid))?;
                check(libc::setgid(gid))?;
                check(libc::setuid(uid))?;
            }
            if let Some(signal) = deathsig {
                check(libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    signal as libc::c_ulong,
                    0,
                    0,
                    0,
                ))?;
                // The test process died between fork and prctl: no signal will come.
                if libc::getppid() as u32 != parent {
                    libc::_exit(1);
                }
            }
            Ok(())
        });
    }
}

// ---------------------------------------------------------------------------------------
// The lab: two namespaces, a veth pair, a private server

/// Runs `ip ARGS`; panics with its output if it fails, and says what to install if `ip`
/// is missing.
fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `ip` ({e}): the partition tests need iproute2 \
                 (Debian/Ubuntu: `apt-get install iproute2`)"
            )
        });
    assert!(
        out.status.success(),
        "`ip {}` failed ({}): {}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether a process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Deletes the namespaces left by earlier test processes that were killed before their
/// cleanup ran (their pid is in the name and gone). Anything of a live process stays.
fn remove_stale_namespaces() {
    let Ok(entries) = std::fs::read_dir("/var/run/netns") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !alive(pid) {
            let _ = Command::new("ip")
                .args(["netns", "del", &name])
                .stdin(Stdio::null())
                .output();
        }
    }
}

/// The folder with initdb and postgres: from PATH (through symlinks), else the newest
/// /usr/lib/postgresql/*/bin.
fn pg_bin_dir() -> PathBuf {
    let mut candidates = Vec::new();
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if let Ok(real) = std::fs::canonicalize(dir.join("initdb")) {
                if let Some(parent) = real.parent() {
                    candidates.push(parent.to_path_buf());
                }
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    candidates.extend(versions.into_iter().map(|(_, p)| p));
    candidates
        .into_iter()
        .find(|d| d.join("initdb").is_file() && d.join("postgres").is_file())
        .expect("PostgreSQL's initdb and postgres (apt-get install postgresql)")
}

/// The `postgres` user's (uid, gid): initdb and postgres refuse root.
fn pg_server_user() -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .expect("run `id`");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("a `postgres` user to run the private server as (apt-get install postgresql)")
    };
    (id("-u"), id("-g"))
}

/// Two namespaces joined by a veth pair, a PostgreSQL server in one of them. Dropping it
/// stops the server and deletes the namespaces (the veth pair goes with them), then the
/// folder.
struct Lab {
    server_ns: String,
    client_ns: String,
    namespaces_made: Vec<String>,
    server_ns_file: Option<File>,
    client_ns_file: Option<File>,
    postgres: Option<Child>,
    dir: tempfile::TempDir,
}

impl Lab {
    fn start(cut: Cut) -> Lab {
        // SAFETY: geteuid has no preconditions.
        assert_eq!(
            unsafe { libc::geteuid() },
            0,
            "the partition tests make network namespaces: run them as root"
        );
        remove_stale_namespaces();
        let bin = pg_bin_dir();
        let user = pg_server_user();
        let dir = tempfile::Builder::new()
            .prefix("sqlrun-partition-pg-")
            .tempdir()
            .expect("a temp dir");
        std::os::unix::fs::chown(dir.path(), Some(user.0), Some(user.1))
            .expect("chown the private server's folder to postgres");
        let stem = format!("{PREFIX}{}-{}", std::process::id(), cut.tag());
        let mut lab = Lab {
            server_ns: format!("{stem}-srv"),
            client_ns: format!("{stem}-cli"),
            namespaces_made: Vec::new(),
            server_ns_file: None,
            client_ns_file: None,
            postgres: None,
            dir,
        };

        // The network: two namespaces, a veth pair made straight into them (it never
        // exists in the host's namespace), a /30 that exists only on that pair.
        for ns in [lab.server_ns.clone(), lab.client_ns.clone()] {
            ip(&["netns", "add", &ns]);
            lab.namespaces_made.push(ns);
        }
        let (srv, cli) = (lab.server_ns.clone(), lab.client_ns.clone());
        ip(&[
            "link", "add", "vsrv", "netns", &srv, "type", "veth", "peer", "name", "vcli", "netns",
            &cli,
        ]);
        ip(&[
            "-n",
            &srv,
            "addr",
            "add",
            &format!("{SERVER_ADDR}/30"),
            "dev",
            "vsrv",
        ]);
        ip(&[
            "-n",
            &cli,
            "addr",
            "add",
            &format!("{CLIENT_ADDR}/30"),
            "dev",
            "vcli",
        ]);
        for (ns, dev) in [(&srv, "vsrv"), (&cli, "vcli"), (&srv, "lo"), (&cli, "lo")] {
            ip(&["-n", ns, "link", "set", dev, "up"]);
        }
        let open = |ns: &str| {
            File::open(Path::new("/var/run/netns").join(ns))
                .unwrap_or_else(|e| panic!("open the namespace {ns}: {e}"))
        };
        lab.server_ns_file = Some(open(&srv));
        lab.client_ns_file = Some(open(&cli));

        // The server: initdb, trust for the /30 and the namespace's loopback.
        let as_postgres = |cmd: &mut Command, dir: &Path| {
            cmd.current_dir(dir)
                .env_remove("PGDATA")
                .env("LC_ALL", "C")
                .stdin(Stdio::null());
        };
        let data = lab.dir.path().join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8"])
            .args(["--no-locale", "--no-sync"]);
        as_postgres(&mut initdb, lab.dir.path());
        initdb.uid(user.0).gid(user.1);
        let out = initdb.output().expect("run initdb");
        assert!(
            out.status.success(),
            "initdb of the private server: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let hba = data.join("pg_hba.conf");
        let mut text = std::fs::read_to_string(&hba).expect("read pg_hba.conf");
        text.push_str(&format!("host all all {SERVER_ADDR}/30 trust\n"));
        std::fs::write(&hba, text).expect("write pg_hba.conf");

        let log = File::create(lab.dir.path().join("server.log")).expect("the server log");
        std::os::unix::fs::chown(
            lab.dir.path().join("server.log"),
            Some(user.0),
            Some(user.1),
        )
        .expect("chown the server log");
        let mut postgres = Command::new(bin.join("postgres"));
        postgres.arg("-D").arg(&data).arg("-k").arg(lab.dir.path());
        for setting in [
            format!("listen_addresses={SERVER_ADDR},127.0.0.1"),
            format!("port={PORT}"),
            "max_connections=20".into(),
            "fsync=off".into(),
            "synchronous_commit=off".into(),
            "full_page_writes=off".into(),
            "TimeZone=UTC".into(),
            "log_timezone=UTC".into(),
            "log_connections=on".into(),
            "log_disconnections=on".into(),
            "log_line_prefix=%m [%p] %h ".into(),
        ] {
            postgres.arg("-c").arg(setting);
        }
        as_postgres(&mut postgres, lab.dir.path());
        postgres
            .stdout(log.try_clone().expect("the server log"))
            .stderr(log);
        in_netns(
            &mut postgres,
            lab.server_ns_file.as_ref().unwrap(),
            Some(user),
            Some(libc::SIGQUIT),
        );
        lab.postgres = Some(postgres.spawn().expect("start the private postgres"));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = lab.postgres.as_mut().unwrap().try_wait().unwrap() {
                panic!(
                    "the private postgres exited at start ({status}); its log:\n{}",
                    lab.log_tail(30)
                );
            }
            match lab.config().connect(postgres::NoTls) {
                Ok(_) => break,
                Err(e) if Instant::now() > deadline => panic!(
                    "the private postgres takes no connections after 30 s: {e}; its log:\n{}",
                    lab.log_tail(30)
                ),
                Err(_) => sleep(Duration::from_millis(50)),
            }
        }
        lab
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    fn log_tail(&self, n: usize) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// The server's own view, over its Unix socket: no network cut reaches it.
    fn config(&self) -> postgres::Config {
        let mut config = postgres::Config::new();
        config
            .host_path(self.dir.path())
            .port(PORT)
            .user("postgres")
            .dbname("postgres")
            .application_name("sqlrun-partition-test")
            .options(&format!(
                "-c search_path={SCHEMA} -c TimeZone=UTC -c DateStyle=ISO -c lock_timeout=10s"
            ))
            .connect_timeout(Duration::from_secs(10));
        config
    }

    fn admin(&self) -> Admin {
        let client = self.config().connect(postgres::NoTls).unwrap_or_else(|e| {
            panic!(
                "connect to the private server over its socket: {e}; its log:\n{}",
                self.log_tail(30)
            )
        });
        Admin { client }
    }

    /// `sqlrun --db URL --schema part ARGS` started inside the namespace `ns`.
    fn sqlrun(&self, what: &str, ns: &File, url: &str, args: &[&str]) -> Proc {
        let mut cmd = Command::new(BIN);
        for (key, _) in std::env::vars() {
            if key.starts_with("SQLRUN_") || key.starts_with("PG") {
                cmd.env_remove(key);
            }
        }
        cmd.env("USER", "tester").env("NO_COLOR", "1");
        cmd.args(["--db", url, "--schema", SCHEMA]).args(args);
        in_netns(&mut cmd, ns, None, None);
        Proc::spawn(what, cmd)
    }

    /// The binary in the client namespace, over TCP across the veth pair.
    fn client_sqlrun(&self, what: &str, args: &[&str]) -> Proc {
        let url = format!("postgresql://postgres@{SERVER_ADDR}:{PORT}/postgres");
        self.sqlrun(what, self.client_ns_file.as_ref().unwrap(), &url, args)
    }

    /// The binary in the server namespace, over TCP on that namespace's loopback.
    fn server_side_sqlrun(&self, what: &str, args: &[&str]) -> Proc {
        let url = format!("postgresql://postgres@127.0.0.1:{PORT}/postgres");
        self.sqlrun(what, self.server_ns_file.as_ref().unwrap(), &url, args)
    }

    /// Cuts the link between the two namespaces.
    fn cut(&self, cut: Cut) {
        match cut {
            Cut::Silent => {
                // Each side now addresses its frames to a MAC nobody has: they leave, and
                // the other end drops them (not for its address). No local error anywhere.
                for (ns, dev, peer) in [
                    (&self.client_ns, "vcli", SERVER_ADDR),
                    (&self.server_ns, "vsrv", CLIENT_ADDR),
                ] {
                    ip(&[
                        "-n",
                        ns,
                        "neigh",
                        "replace",
                        peer,
                        "lladdr",
                        NOWHERE_MAC,
                        "dev",
                        dev,
                        "nud",
                        "permanent",
                    ]);
                }
            }
            Cut::LinkDown => ip(&["-n", &self.client_ns, "link", "set", "vcli", "down"]),
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(mut child) = self.postgres.take() {
            // SAFETY: a signal to the postmaster this test started, by its pid.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGQUIT) };
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                sleep(Duration::from_millis(20));
            }
        }
        self.server_ns_file = None;
        self.client_ns_file = None;
        for ns in self.namespaces_made.drain(..) {
            let out = Command::new("ip")
                .args(["netns", "del", &ns])
                .stdin(Stdio::null())
                .output();
            if !out.as_ref().is_ok_and(|o| o.status.success()) {
                eprintln!("partition: could not delete the namespace {ns}: {out:?}");
            }
        }
    }
}

/// A session on the private server over its Unix socket, search_path = the schema.
struct Admin {
    client: postgres::Client,
}

impl Admin {
    fn exec(&mut self, sql: &str) {
        self.client
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Every row, every value as text ("NULL" for null).
    fn query(&mut self, sql: &str) -> Vec<Vec<String>> {
        self.client
            .simple_query(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(row) => Some(
                    (0..row.len())
                        .map(|i| row.get(i).unwrap_or("NULL").to_string())
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    }

    fn number(&mut self, sql: &str) -> i64 {
        let rows = self.query(sql);
        assert!(
            rows.len() == 1 && rows[0].len() == 1,
            "{sql}: wanted one value, got {rows:?}"
        );
        rows[0][0]
            .parse()
            .unwrap_or_else(|_| panic!("{sql}: {:?} is not a number", rows[0][0]))
    }

    /// The sessions the server has from the client namespace's address.
    fn client_sessions(&mut self) -> i64 {
        self.number(&format!(
            "SELECT count(*) FROM pg_catalog.pg_stat_activity \
             WHERE client_addr = '{CLIENT_ADDR}'::inet"
        ))
    }

    /// Whether the pipeline's lock (see queries/postgres/bookkeeping_lock.sql) could be
    /// taken now (and, outside a transaction, is given back at once).
    fn pipeline_lock_free(&mut self) -> bool {
        self.query(
            "SELECT pg_catalog.pg_try_advisory_xact_lock(\
             pg_catalog.hashtext('sqlrun ' || pg_catalog.current_schema()))",
        ) == [["t"]]
    }

    fn partitions_of(&mut self, run_id: i64) -> i64 {
        self.number(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {run_id}"
        ))
    }
}

// ---------------------------------------------------------------------------------------
// The test

fn secs(d: Option<Duration>) -> String {
    match d {
        Some(d) => format!("{:.1} s", d.as_secs_f64()),
        None => format!("more than {} s", MEASURE_AT_MOST.as_secs()),
    }
}

fn cut_off_runner(cut: Cut) {
    let how = format!("partition ({})", cut.tag());
    let lab = Lab::start(cut);
    let end = day(START, i64::from(DAYS) - 1);
    let interval = format!("{START}..{end}");
    let long = Duration::from_secs(30);

    // The pipeline and its orders, by the binary, from the client namespace over TCP.
    lab.client_sqlrun("sqlrun init (client namespace)", &["init"])
        .expect(0, long);
    lab.client_sqlrun(
        "sqlrun generate (client namespace)",
        &[
            "generate",
            "--start",
            START,
            "--days",
            &DAYS.to_string(),
            "--per-day",
            "5",
            "--seed",
            "7",
        ],
    )
    .expect(0, long);
    let mut admin = lab.admin();
    admin.exec(&format!(
        "CREATE FUNCTION burn_time() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM pg_catalog.pg_sleep({SLEEP_PER_DATE}); RETURN NULL; END $$; \
         CREATE TRIGGER burn_time AFTER INSERT ON daily_revenue FOR EACH ROW \
         EXECUTE FUNCTION burn_time();"
    ));

    // The slow backfill, until it has committed a few dates.
    let mut runner = lab.client_sqlrun(
        "the backfill in the client namespace",
        &["apply", "--interval", &interval],
    );
    let deadline = Instant::now() + long;
    let run_id = loop {
        runner.assert_running("it committed 3 dates");
        let run_id = admin.number("SELECT coalesce(max(run_id), 0) FROM runs");
        if run_id > 0 && admin.partitions_of(run_id) >= 3 {
            break run_id;
        }
        assert!(
            Instant::now() < deadline,
            "{how}: the backfill committed no 3 dates within {long:?}"
        );
        sleep(Duration::from_millis(20));
    };
    let sessions_before = admin.client_sessions();
    assert!(
        sessions_before >= 1,
        "{how}: the server has the runner's session from {CLIENT_ADDR}"
    );
    // Somewhere into the next date (its sleep, or its commit), so that the cut lands while
    // a date is in flight: at a different point each time.
    let offset = rand::random_range(0..200u64);
    sleep(Duration::from_millis(offset));
    let at_cut = admin.partitions_of(run_id);
    lab.cut(cut);
    let cut_at = Instant::now();

    // Measure, from the server's side, every 20 ms: whether the pipeline's lock is free
    // (a date's transaction of the cut-off runner holds it shared, which makes every
    // other runner's bookkeeping wait), whether the runner's session is gone, whether the
    // runner has exited. Right when the session is gone, a runner in the server's
    // namespace starts over the loopback (no slow dates now).
    let mut lock_held_at_cut = None;
    let mut lock_free = None;
    let mut gone = None;
    let mut at_gone = None;
    let mut rerun = None;
    let mut exit = None;
    while cut_at.elapsed() < MEASURE_AT_MOST {
        if gone.is_none() && lock_free.is_none() {
            let free = admin.pipeline_lock_free();
            lock_held_at_cut.get_or_insert(!free);
            if free {
                lock_free = Some(cut_at.elapsed());
            }
        }
        if gone.is_none() && admin.client_sessions() == 0 {
            gone = Some(cut_at.elapsed());
            let status = admin.query(&format!("SELECT status FROM runs WHERE run_id = {run_id}"));
            let held = admin.number(&format!(
                "SELECT count(*) FROM reservations WHERE run_id = {run_id}"
            ));
            at_gone = Some((admin.partitions_of(run_id), status, held));
            admin.exec("DROP TRIGGER burn_time ON daily_revenue");
            rerun = Some(lab.server_side_sqlrun(
                "the rerun in the server namespace",
                &["apply", "--interval", &interval, "--only", "missing"],
            ));
        }
        if exit.is_none() {
            if let Some(run) = runner.try_finish() {
                exit = Some((cut_at.elapsed(), run));
            }
        }
        if gone.is_some() && exit.is_some() {
            break;
        }
        sleep(Duration::from_millis(20));
    }
    let run = exit.as_ref().map(|(_, run)| run);
    let message = run
        .map(|r| r.stderr.trim().replace('\n', " | "))
        .unwrap_or_else(|| "(still running)".into());
    let server_saw: Vec<String> = lab
        .log()
        .lines()
        .filter(|l| l.contains(CLIENT_ADDR) && !l.contains("connection received"))
        .filter(|l| !l.contains("connection authorized") && !l.contains("connection authenticated"))
        .map(str::to_string)
        .collect();
    let lock = match (lock_held_at_cut, lock_free) {
        (Some(false), _) => "free at the cut".to_string(),
        (Some(true), Some(after)) => format!("held at the cut, free after {}", secs(Some(after))),
        (Some(true), None) => "held at the cut, until the session ended".to_string(),
        (None, _) => "not polled".to_string(),
    };
    eprintln!(
        "{how}: cut {offset} ms into the date after {at_cut} committed dates of run {run_id} \
         ({sessions_before} session(s) from {CLIENT_ADDR}); pipeline lock {lock}; session gone \
         after {}; runner exit {} after {}; its stderr: {message}\n\
         {how}: the server's log about {CLIENT_ADDR}:\n  {}",
        secs(gone),
        run.map(|r| r.code.to_string())
            .unwrap_or_else(|| "-".into()),
        secs(exit.as_ref().map(|(after, _)| *after)),
        server_saw.join("\n  ")
    );

    // The bounds.
    let gone = gone.unwrap_or_else(|| {
        panic!(
            "{how}: the server still had the runner's session {} s after the cut; its log:\n{}",
            MEASURE_AT_MOST.as_secs(),
            lab.log_tail(30)
        )
    });
    assert!(
        gone <= SESSION_GONE_WITHIN,
        "{how}: the server ended the cut-off runner's session after {gone:?}, wanted at most \
         {SESSION_GONE_WITHIN:?}"
    );
    let (exit_after, run) = match exit {
        Some(exit) => exit,
        None => panic!(
            "{how}: the cut-off runner still ran {} s after the cut",
            MEASURE_AT_MOST.as_secs()
        ),
    };
    assert!(
        exit_after <= RUNNER_EXITS_WITHIN,
        "{how}: the cut-off runner exited after {exit_after:?}, wanted at most \
         {RUNNER_EXITS_WITHIN:?}\nstderr: {}",
        run.stderr
    );
    assert_eq!(
        run.code, 1,
        "{how}: the cut-off runner exits 1\nstderr: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("lost the connection to the database during "),
        "{how}: the cut-off runner says it lost the connection:\n{}",
        run.stderr
    );

    // When its session ended, the cut-off run had written nothing after the cut (but the
    // date whose commit was in flight), was still `running`, and held the rest.
    let (at_gone, status, held) = at_gone.expect("measured when the session was gone");
    assert!(
        (at_cut..=at_cut + 1).contains(&at_gone),
        "{how}: the cut-off run had {at_cut} dates at the cut and {at_gone} when its session \
         was gone"
    );
    assert_eq!(status, [["running"]], "{how}: nobody had reclaimed it yet");
    assert_eq!(
        held,
        i64::from(DAYS) - at_gone,
        "{how}: it still held the rest"
    );
    let rerun = rerun
        .expect("started when the session was gone")
        .expect(0, long);
    let at_end = admin.partitions_of(run_id);
    assert_eq!(at_end, at_gone, "{how}: and nothing since");
    let done = admin.number(&format!(
        "SELECT count(*) FROM run_partitions WHERE run_id = {run_id} AND status = 'success'"
    ));
    assert_eq!(done, at_end, "{how}: its dates are all done");
    assert_eq!(
        admin.number(&format!(
            "SELECT count(*) FROM daily_revenue WHERE run_id = {run_id}"
        )),
        done,
        "{how}: its daily_revenue rows are its done dates"
    );

    // The rerun reclaimed the rest.
    let me = admin.number("SELECT max(run_id) FROM runs");
    assert!(me > run_id, "{how}: the rerun is a new run");
    let events = admin.query(
        "SELECT run_id, other_run_id, date_count, detail FROM run_events \
         WHERE event = 'reclaimed' ORDER BY event_id",
    );
    assert_eq!(events.len(), 1, "{how}: one reclaim: {events:?}");
    assert_eq!(
        events[0][..3],
        [run_id.to_string(), me.to_string(), held.to_string()],
        "{how}: the rerun reclaimed the cut-off run's dates: {events:?}"
    );
    assert!(
        rerun.stderr.contains(&format!("run {run_id}")),
        "{how}: the reclaim is reported:\n{}",
        rerun.stderr
    );
    assert_eq!(
        admin.query(&format!("SELECT status FROM runs WHERE run_id = {run_id}")),
        [["interrupted"]],
        "{how}: the cut-off run is interrupted"
    );
    assert_eq!(
        admin.number(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {me} AND status = 'success'"
        )),
        held,
        "{how}: the rerun did exactly the rest"
    );
    assert_eq!(
        admin.number("SELECT count(*) FROM reservations"),
        0,
        "{how}"
    );

    // Every date once, equal to the orders' numbers (computed here, not by sqlrun).
    let differ = admin.number(&format!(
        "WITH win AS (SELECT DISTINCT ON (order_id) order_date, amount FROM orders \
                      ORDER BY order_id, created_at DESC, rowid DESC), \
              expected AS (SELECT d::date AS ds, coalesce(sum(w.amount), 0)::bigint AS revenue, \
                                  count(w.amount)::bigint AS order_count \
                           FROM generate_series(DATE '{START}', DATE '{end}', interval '1 day') AS d \
                           LEFT JOIN win AS w ON w.order_date = d::date GROUP BY 1), \
              got AS (SELECT ds, revenue::bigint, order_count::bigint FROM daily_revenue) \
         SELECT count(*) FROM ((SELECT * FROM expected EXCEPT ALL SELECT * FROM got) \
                              UNION ALL (SELECT * FROM got EXCEPT ALL SELECT * FROM expected)) AS x"
    ));
    assert_eq!(differ, 0, "{how}: daily_revenue equals the orders' numbers");
    eprintln!(
        "{how}: run {me} in the server namespace reclaimed {held} dates of run {run_id} \
         (now interrupted; why: {}); the cut-off run had {at_cut} dates at the cut and {at_end} \
         at the end",
        events[0][3]
    );
}

#[test]
fn a_runner_cut_off_by_a_silent_partition_frees_its_dates_within_seconds() {
    cut_off_runner(Cut::Silent);
}

#[test]
fn a_runner_whose_link_goes_down_frees_its_dates_within_seconds() {
    cut_off_runner(Cut::LinkDown);
}
