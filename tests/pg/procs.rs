//! What the PostgreSQL process tests (faults.rs, partition.rs) share: real processes read as
//! they run, with bounded waits, killed if a test ends first; polling with deadlines;
//! network namespaces; a private PostgreSQL server (initdb into a temp folder, started as
//! the `postgres` user, optionally inside a network namespace), stopped and removed also
//! when a test fails; and reading a state store on the shared test server (a Sandbox) or on
//! a private one.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Barrier};
use std::thread::{sleep, JoinHandle};
use std::time::{Duration, Instant};

use crate::support::{
    cmd_with_url, die_with_parent, only_number, pg_bin_dir, pg_insert_orders, pg_server_user,
    pg_slow_inserts, process_alive, OrderRow, Run, Sandbox,
};

// ---------------------------------------------------------------------------------------
// Waiting

/// Calls `ready` every 20 ms until it says yes (true) or `limit` has passed (false).
pub fn poll(limit: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if ready() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        sleep(Duration::from_millis(20));
    }
}

/// Polls `ready` until it says yes; fails after `limit`. Returns how long it took.
pub fn wait_until(what: &str, limit: Duration, ready: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    assert!(poll(limit, ready), "waited {limit:?} in vain until {what}");
    start.elapsed()
}

// ---------------------------------------------------------------------------------------
// Processes

/// A running process (`sqlrun` or a wrapper around it) whose output is read as it comes,
/// so a chatty process never blocks on a full pipe. Killed (by its own pid) if the test
/// ends before it does.
pub struct Proc {
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
    pub fn spawn(what: &str, mut cmd: Command) -> Proc {
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

    /// How it ended and what it did, if it has ended.
    fn reap(&mut self) -> Option<(ExitStatus, Run)> {
        let status = self.child.try_wait().expect("try_wait")?;
        self.reaped = true;
        let run = Run {
            code: status.code().unwrap_or(-1),
            stdout: joined(self.stdout.take()),
            stderr: joined(self.stderr.take()),
        };
        Some((status, run))
    }

    /// What it did, if it has ended.
    pub fn try_finish(&mut self) -> Option<Run> {
        self.reap().map(|(_, run)| run)
    }

    /// Whether it has ended (what it said is kept for `finish`).
    pub fn has_exited(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_some()
    }

    /// Panics, with what the process said, if it has ended already.
    pub fn assert_running(&mut self, waiting_for: &str) {
        if let Some((status, run)) = self.reap() {
            panic!(
                "{} ended ({status}) before {waiting_for}\nstdout: {}\nstderr: {}",
                self.what, run.stdout, run.stderr
            );
        }
    }

    /// Waits at most `limit` for the process to end by itself; kills it and fails if not.
    fn wait(mut self, limit: Duration) -> (ExitStatus, Run) {
        let mut ended = None;
        if poll(limit, || {
            ended = self.reap();
            ended.is_some()
        }) {
            return ended.expect("reaped");
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.reaped = true;
        let stderr = joined(self.stderr.take());
        panic!(
            "{} still ran after {limit:?} (killed now); its stderr:\n{stderr}",
            self.what
        );
    }

    /// Waits at most `limit` for the process to end by itself; kills it and fails if not.
    pub fn finish(self, limit: Duration) -> Run {
        self.wait(limit).1
    }

    /// Runs to its end (bounded) and checks the exit code.
    pub fn expect(self, code: i32, limit: Duration) -> Run {
        let what = self.what.clone();
        let run = self.finish(limit);
        assert_eq!(
            run.code, code,
            "{what}: exit {}, wanted {code}\nstdout: {}\nstderr: {}",
            run.code, run.stdout, run.stderr
        );
        run
    }

    /// Sends `signal` (SIGSTOP, SIGCONT, ...) to the process.
    pub fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: kill(2) on our own child, which has not been reaped.
        assert_eq!(
            unsafe { libc::kill(pid, signal) },
            0,
            "kill({pid}, {signal})"
        );
    }

    /// Whether the process is stopped (SIGSTOP): state T in /proc/PID/stat.
    pub fn is_stopped(&self) -> bool {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        let after_name = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
        after_name.split_whitespace().next() == Some("T")
    }

    /// SIGKILL, then reap: how it ended.
    pub fn sigkill(mut self) -> ExitStatus {
        self.child.kill().expect("SIGKILL");
        self.wait(Duration::from_secs(10)).0
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

/// Starts every command at the same instant (threads behind a barrier) and waits
/// (bounded) for all of them: (name, what it did), in the order given.
pub fn start_together(cmds: Vec<(String, Command)>) -> Vec<(String, Run)> {
    let barrier = Arc::new(Barrier::new(cmds.len()));
    let threads: Vec<_> = cmds
        .into_iter()
        .map(|(name, cmd)| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let run =
                    Proc::spawn(&format!("runner {name}"), cmd).finish(Duration::from_secs(120));
                (name, run)
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        .collect()
}

/// Waits (bounded) until the running backfill `victim` has recorded `n` dates, failing if
/// it ends first; returns its run (the newest).
pub fn wait_for_dates(db: &impl Query, victim: &mut Proc, n: i64, limit: Duration) -> i64 {
    let what = format!("{} recorded {n} dates", victim.what);
    wait_until(&what, limit, || {
        victim.assert_running(&format!("it recorded {n} dates"));
        db.number("SELECT count(*) FROM run_partitions") >= n
    });
    max_run_id(db)
}

/// Makes the process `cmd` starts enter the network namespace `netns` (as root), then
/// become `user` (uid, gid), in this order: the server's user may not enter namespaces.
pub fn enter(cmd: &mut Command, netns: Option<&File>, user: Option<(u32, u32)>) {
    let fd = netns.map(|ns| ns.as_raw_fd());
    // SAFETY: the closure calls only async-signal-safe functions (setns, setgroups, setgid,
    // setuid); the namespace's file outlives the spawn (the caller keeps it).
    unsafe {
        cmd.pre_exec(move || {
            let check = |rc: libc::c_int| match rc {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            };
            if let Some(fd) = fd {
                check(libc::setns(fd, libc::CLONE_NEWNET))?;
            }
            if let Some((uid, gid)) = user {
                check(libc::setgroups(1, &gid))?;
                check(libc::setgid(gid))?;
                check(libc::setuid(uid))?;
            }
            Ok(())
        });
    }
}

// ---------------------------------------------------------------------------------------
// Network namespaces

/// Namespaces are named `PREFIX<pid>-<tag>`.
const NETNS_PREFIX: &str = "sqlrun-netns-";

/// Runs `ip ARGS`; panics with its output if it fails, and says what to install if `ip`
/// is missing.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `ip` ({e}): the network tests need iproute2 \
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

/// A network namespace of this test process with its loopback up (`ip netns add`), kept
/// open; deleted when dropped, and with it what is left in it (a veth end goes with it).
pub struct Netns {
    pub name: String,
    file: Option<File>,
}

impl Netns {
    pub fn new(tag: &str) -> Netns {
        // SAFETY: geteuid has no preconditions.
        assert_eq!(
            unsafe { libc::geteuid() },
            0,
            "this test makes network namespaces: run it as root"
        );
        remove_stale_namespaces();
        let name = format!("{NETNS_PREFIX}{}-{tag}", std::process::id());
        ip(&["netns", "add", &name]);
        let mut ns = Netns { name, file: None };
        let path = Path::new("/var/run/netns").join(&ns.name);
        ns.file = Some(
            File::open(&path).unwrap_or_else(|e| panic!("open the namespace {}: {e}", ns.name)),
        );
        ip(&["-n", &ns.name, "link", "set", "lo", "up"]);
        ns
    }

    pub fn file(&self) -> &File {
        self.file.as_ref().expect("open until dropped")
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.file = None;
        let out = Command::new("ip")
            .args(["netns", "del", &self.name])
            .stdin(Stdio::null())
            .output();
        if !out.as_ref().is_ok_and(|o| o.status.success()) {
            eprintln!(
                "could not delete the network namespace {}: {out:?}",
                self.name
            );
        }
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
            .strip_prefix(NETNS_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = Command::new("ip")
                .args(["netns", "del", &name])
                .stdin(Stdio::null())
                .output();
        }
    }
}

// ---------------------------------------------------------------------------------------
// A private PostgreSQL server

/// A PostgreSQL server of one test, for what the shared test server must not see (a
/// restart, a network cut): initdb into a temp folder (as the `postgres` user when the
/// tests run as root), database `postgres`, its Unix socket in that folder, TCP on port
/// 5432 only inside the network namespace it is given (trusting that namespace's
/// networks), connections logged. The test reads it over the socket, which no network cut
/// reaches, in one session (search_path = `schema`). Stopped (immediate shutdown) and
/// removed when dropped; also tied to the test's thread by the parent-death signal.
pub struct PrivateServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    user: Option<(u32, u32)>,
    netns: Option<File>,
    listen: String,
    /// Names the folder and the application_name of the test's session.
    name: String,
    schema: String,
    postgres: Option<Child>,
    session: RefCell<Option<postgres::Client>>,
    /// The `--db` URL over the Unix socket.
    pub url: String,
}

impl PrivateServer {
    /// A server without TCP.
    pub fn start(name: &str, schema: &str) -> PrivateServer {
        PrivateServer::launch(name, schema, None, "")
    }

    /// A server inside the network namespace `ns`, listening there on `listen` (addresses,
    /// comma-separated), besides its Unix socket.
    pub fn start_in(name: &str, schema: &str, ns: &Netns, listen: &str) -> PrivateServer {
        let netns = ns.file().try_clone().expect("the namespace's file");
        PrivateServer::launch(name, schema, Some(netns), listen)
    }

    fn launch(name: &str, schema: &str, netns: Option<File>, listen: &str) -> PrivateServer {
        let bin = pg_bin_dir();
        let user = pg_server_user();
        let dir = tempfile::Builder::new()
            .prefix(&format!("sqlrun-{name}-pg-"))
            .tempdir()
            .expect("a temp dir");
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .expect("chown the private server's folder to postgres");
        }
        let data = dir.path().join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8"])
            .args(["--no-locale", "--no-sync"]);
        if let Some((uid, gid)) = user {
            initdb.uid(uid).gid(gid);
        }
        as_server(&mut initdb, dir.path());
        let out = initdb.output().expect("run initdb");
        assert!(
            out.status.success(),
            "initdb of the private server: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // TCP exists only inside the server's namespace: trust the networks there.
        let hba = data.join("pg_hba.conf");
        let mut text = std::fs::read_to_string(&hba).expect("read pg_hba.conf");
        text.push_str("host all all samenet trust\n");
        std::fs::write(&hba, text).expect("write pg_hba.conf");

        let url = format!(
            "postgresql:///postgres?host={}&user=postgres",
            dir.path().display()
        );
        let mut server = PrivateServer {
            dir,
            bin,
            user,
            netns,
            listen: listen.to_string(),
            name: name.to_string(),
            schema: schema.to_string(),
            postgres: None,
            session: RefCell::new(None),
            url,
        };
        server.run();
        server
    }

    fn base(&self) -> &Path {
        self.dir.path()
    }

    /// Starts postgres on the data folder and waits (bounded) until it takes connections.
    pub fn run(&mut self) {
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.base().join("server.log"))
            .expect("the server log");
        let mut cmd = Command::new(self.bin.join("postgres"));
        cmd.arg("-D").arg(self.base().join("data"));
        cmd.arg("-k").arg(self.base());
        for setting in [
            &format!("listen_addresses={}", self.listen),
            "max_connections=40",
            // The faults here kill the server, not the machine: the operating system keeps
            // what was written, so fsync may be off. A commit must be written before it is
            // acknowledged, though, or a crash loses dates the runner saw committed.
            "fsync=off",
            "synchronous_commit=on",
            "full_page_writes=off",
            "TimeZone=UTC",
            "log_timezone=UTC",
            "log_connections=on",
            "log_disconnections=on",
            "log_line_prefix=%m [%p] %h ",
        ] {
            cmd.arg("-c").arg(setting);
        }
        as_server(&mut cmd, self.base());
        cmd.stdout(log.try_clone().expect("the server log"))
            .stderr(log);
        enter(&mut cmd, self.netns.as_ref(), self.user);
        // After the change of user, which clears it: SIGQUIT (immediate shutdown) reaches
        // the server when this test's thread ends, however it ends.
        die_with_parent(&mut cmd, libc::SIGQUIT);
        let (config, base) = (self.config(), self.base().to_path_buf());
        let base = base.as_path();
        let postgres = self
            .postgres
            .insert(cmd.spawn().expect("start the private postgres"));
        let mut refused = None;
        let ready = poll(Duration::from_secs(60), || {
            if let Some(status) = postgres.try_wait().expect("try_wait") {
                panic!(
                    "the private postgres exited at start ({status}); its log:\n{}",
                    log_tail(base)
                );
            }
            refused = config.connect(postgres::NoTls).err();
            refused.is_none()
        });
        assert!(
            ready,
            "the private postgres takes no connections after 60 s: {}; its log:\n{}",
            refused.map(|e| e.to_string()).unwrap_or_default(),
            log_tail(base)
        );
    }

    /// Shuts the server down with `signal` (SIGINT: fast, SIGQUIT: immediate) and waits
    /// (bounded) until it has exited.
    pub fn stop(&mut self, signal: libc::c_int) {
        self.session.get_mut().take();
        let Some(mut child) = self.postgres.take() else {
            return;
        };
        assert!(
            shut_down(&mut child, signal, Duration::from_secs(30)),
            "the private postgres did not stop within 30 s of signal {signal} (killed now); \
             log:\n{}",
            self.log_tail()
        );
    }

    /// The server's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.base().join("server.log")).unwrap_or_default()
    }

    pub fn log_tail(&self) -> String {
        log_tail(self.base())
    }

    fn config(&self) -> postgres::Config {
        let mut config = postgres::Config::new();
        config
            .host_path(self.base())
            .user("postgres")
            .dbname("postgres")
            .application_name(&format!("sqlrun-{}-test", self.name))
            .options(&format!(
                "-c search_path={} -c TimeZone=UTC -c DateStyle=ISO -c lock_timeout=10s",
                self.schema
            ))
            .connect_timeout(Duration::from_secs(10));
        config
    }

    /// Runs `f` on the test's session, connecting first if needed; a failure drops the
    /// session and fails the test, with the end of the server's log.
    fn with_session<R>(
        &self,
        what: &str,
        f: impl FnOnce(&mut postgres::Client) -> Result<R, postgres::Error>,
    ) -> R {
        let mut session = self.session.borrow_mut();
        if session.as_ref().is_none_or(|c| c.is_closed()) {
            let client = self.config().connect(postgres::NoTls).unwrap_or_else(|e| {
                panic!(
                    "connect to the private server over its socket: {e}; its log:\n{}",
                    self.log_tail()
                )
            });
            *session = Some(client);
        }
        match f(session.as_mut().expect("connected")) {
            Ok(r) => r,
            Err(e) => {
                *session = None;
                panic!(
                    "{what}: {e}; the private server's log:\n{}",
                    self.log_tail()
                );
            }
        }
    }

    pub fn exec(&self, sql: &str) {
        self.with_session(sql, |c| c.batch_execute(sql));
    }

    /// Makes every insert into `table` sleep `secs` seconds inside its transaction.
    pub fn slow_inserts(&self, table: &str, secs: f64) {
        self.exec(&pg_slow_inserts(table, secs));
    }

    /// Inserts orders into the schema `schema`.
    pub fn insert_orders(&self, schema: &str, rows: &[OrderRow]) {
        let table = format!("\"{schema}\".orders");
        self.with_session("insert orders", |c| pg_insert_orders(c, &table, rows));
    }

    /// `sqlrun --db URL --schema SCHEMA ARGS` over the Unix socket.
    pub fn sqlrun(&self, schema: &str, args: &[&str]) -> Command {
        cmd_with_url(&self.url, schema, args)
    }

    /// The `--db` URL over TCP to `host` (inside the server's namespace).
    pub fn tcp_url(host: &str) -> String {
        format!("postgresql://postgres@{host}:5432/postgres")
    }

    /// Runs `sqlrun` to its end (bounded) and checks the exit code.
    pub fn expect(&self, schema: &str, code: i32, args: &[&str]) -> Run {
        let what = format!(
            "`sqlrun {}` on the private server, schema {schema}",
            args.join(" ")
        );
        Proc::spawn(&what, self.sqlrun(schema, args)).expect(code, Duration::from_secs(120))
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        self.session.get_mut().take();
        if let Some(mut child) = self.postgres.take() {
            shut_down(&mut child, libc::SIGQUIT, Duration::from_secs(10));
        }
    }
}

/// The environment of initdb and postgres: in the server's folder, C locale, no PGDATA.
fn as_server(cmd: &mut Command, dir: &Path) {
    cmd.current_dir(dir)
        .env_remove("PGDATA")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
}

/// Sends `signal` to the postmaster this test started (by its pid) and waits at most
/// `limit` for it to exit; if it has not, kills it and says false.
fn shut_down(child: &mut Child, signal: libc::c_int, limit: Duration) -> bool {
    // SAFETY: a signal to a process this test started, by its pid.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    if poll(limit, || child.try_wait().is_ok_and(|s| s.is_some())) {
        return true;
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

fn log_tail(base: &Path) -> String {
    let log = std::fs::read_to_string(base.join("server.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

// ---------------------------------------------------------------------------------------
// Reading the state store, on the shared server (a Sandbox) or a private one

pub trait Query {
    /// Every row, every value as text ("NULL" for null), dates `YYYY-MM-DD`.
    fn query(&self, sql: &str) -> Vec<Vec<String>>;

    fn number(&self, sql: &str) -> i64 {
        only_number(sql, &self.query(sql))
    }
}

impl Query for Sandbox {
    fn query(&self, sql: &str) -> Vec<Vec<String>> {
        self.rows(sql)
    }
}

impl Query for PrivateServer {
    fn query(&self, sql: &str) -> Vec<Vec<String>> {
        self.with_session(sql, |c| c.simple_query(sql))
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
}

pub fn max_run_id(db: &impl Query) -> i64 {
    db.number("SELECT coalesce(max(run_id), 0) FROM runs")
}

pub fn status_of(db: &impl Query, run_id: i64) -> String {
    db.query(&format!("SELECT status FROM runs WHERE run_id = {run_id}"))[0][0].clone()
}

/// The dates a run holds.
pub fn reservations_of(db: &impl Query, run_id: i64) -> BTreeSet<String> {
    db.query(&format!(
        "SELECT ds FROM reservations WHERE run_id = {run_id}"
    ))
    .into_iter()
    .map(|r| r[0].clone())
    .collect()
}

/// The 'reclaimed' events: (dead run, reclaiming run, date count, detail).
pub fn reclaims(db: &impl Query) -> Vec<(i64, i64, i64, String)> {
    db.query(
        "SELECT run_id, other_run_id, date_count, detail FROM run_events \
         WHERE event = 'reclaimed' ORDER BY event_id",
    )
    .into_iter()
    .map(|r| {
        (
            r[0].parse().unwrap(),
            r[1].parse().unwrap_or(-1),
            r[2].parse().unwrap_or(-1),
            r[3].clone(),
        )
    })
    .collect()
}
