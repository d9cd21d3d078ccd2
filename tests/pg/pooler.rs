//! PgBouncer (Debian's package) in front of the shared test server. In transaction mode a
//! run's session-level advisory lock means nothing, so sqlrun refuses it before anything is
//! recorded: busy or idle, with several idle server connections, handed out last in first
//! out or round robin. In session mode the whole story works as directly, a concurrent
//! second runner included.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::concurrency::{finish, wait_for};
use crate::support::*;

const START: &str = "2026-04-01";

/// A PgBouncer listening on a unix socket in a temp folder, killed when dropped.
struct Bouncer {
    dir: tempfile::TempDir,
    child: Child,
}

const PORT: u16 = 6432;

fn pgbouncer_bin() -> PathBuf {
    ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "these tests need PgBouncer: apt-get install pgbouncer (Debian's package; \
                 .ci/run installs it when it is missing)"
            )
        })
}

impl Bouncer {
    /// `pool_mode` and any more lines of the [pgbouncer] section.
    fn start(pool_mode: &str, more: &[&str]) -> Bouncer {
        let server = pg::server();
        let dir = tempfile::Builder::new()
            .prefix("sqlrun-pgb-")
            .tempdir_in("/tmp")
            .unwrap();
        let ini = format!(
            "[databases]\n{db} = host={host} dbname={db} user=postgres\n\n[pgbouncer]\n\
             listen_addr =\nlisten_port = {PORT}\nunix_socket_dir = {dir}\n\
             auth_type = trust\nauth_file = {dir}/users.txt\npool_mode = {pool_mode}\n\
             ignore_startup_parameters = extra_float_digits\n{more}\n",
            db = pg::DATABASE,
            host = server.base.display(),
            dir = dir.path().display(),
            more = more.join("\n"),
        );
        fs::write(dir.path().join("pgbouncer.ini"), ini).unwrap();
        fs::write(dir.path().join("users.txt"), "\"postgres\" \"\"\n").unwrap();
        let mut cmd = Command::new(pgbouncer_bin());
        cmd.arg(dir.path().join("pgbouncer.ini"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(dir.path().join("log")).unwrap());
        // pgbouncer refuses root, as postgres does: it runs as the server's user.
        if let Some((uid, gid)) = pg_server_user() {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
            cmd.uid(uid).gid(gid);
        }
        die_with_parent(&mut cmd, libc::SIGTERM);
        let child = cmd.spawn().expect("start pgbouncer");
        let bouncer = Bouncer { dir, child };
        bouncer.wait_ready();
        bouncer
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.client().is_err() {
            assert!(
                Instant::now() < deadline,
                "pgbouncer did not take connections within 30 s; its log:\n{}",
                fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn url(&self) -> String {
        format!(
            "postgresql:///{}?host={}&port={PORT}&user=postgres",
            pg::DATABASE,
            self.dir.path().display()
        )
    }

    fn client(&self) -> Result<postgres::Client, postgres::Error> {
        postgres::Config::new()
            .host_path(self.dir.path())
            .port(PORT)
            .user("postgres")
            .dbname(pg::DATABASE)
            .connect_timeout(Duration::from_secs(5))
            .connect(postgres::NoTls)
    }

    /// Leaves `n` server connections idle in the pool: `n` clients at once, each inside a
    /// statement that lasts, then gone. The backends they ran on, as seen.
    fn warm(&self, n: usize) -> Vec<String> {
        let clients: Vec<_> = (0..n)
            .map(|_| {
                let mut client = self.client().expect("a client of pgbouncer");
                std::thread::spawn(move || {
                    let row = client
                        .simple_query("SELECT pg_backend_pid()::text, pg_sleep(0.3)")
                        .unwrap();
                    row.into_iter()
                        .find_map(|m| match m {
                            postgres::SimpleQueryMessage::Row(r) => r.get(0).map(String::from),
                            _ => None,
                        })
                        .unwrap()
                })
            })
            .collect();
        let mut pids: Vec<String> = clients.into_iter().map(|t| t.join().unwrap()).collect();
        pids.sort();
        pids.dedup();
        pids
    }

    /// `sqlrun ARGS` through this pooler on the sandbox's schema.
    fn run(&self, sb: &Sandbox, args: &[&str]) -> Run {
        let mut cmd = cmd_with_url(&self.url(), sb.schema.as_deref().unwrap(), args);
        cmd.current_dir(sb.path());
        Run::from(cmd.output().expect("run sqlrun"))
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_refused(run: &Run) {
    assert_eq!(
        run.code, 2,
        "wanted exit 2\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    contains_all(
        &run.stderr,
        &[
            "a connection pooler in transaction or statement mode",
            "session-level advisory locks",
            "reservations would not mean anything",
            "pool_mode = session",
        ],
    );
}

/// A sandbox migrated and filled directly, the orders and their interval.
fn filled(seed: u64) -> (Sandbox, Orders) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, START, 8, false);
    sb.insert_orders(&orders.rows);
    (sb, orders)
}

/// Nothing of a refused command is in the database: no run, no date computed.
fn assert_nothing_recorded(sb: &Sandbox) {
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 0);
    assert_eq!(sb.count("SELECT count(*) FROM daily_revenue"), 0);
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
}

#[test]
fn a_transaction_pooler_is_refused_before_anything_is_written() {
    let bouncer = Bouncer::start("transaction", &[]);
    // On a new schema: not even the migrations run.
    let fresh = Sandbox::empty();
    assert_refused(&bouncer.run(&fresh, &["init"]));
    let schema = fresh.schema.clone().unwrap();
    assert_eq!(
        fresh.count(&format!(
            "SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'"
        )),
        0
    );
    let (sb, orders) = filled(301);
    assert_refused(&bouncer.run(&sb, &["apply", "--interval", &orders.interval()]));
    assert_nothing_recorded(&sb);
    // Statement mode hands out servers even more freely.
    let statement = Bouncer::start("statement", &[]);
    assert_refused(&statement.run(&sb, &["apply", "--interval", &orders.interval()]));
    assert_nothing_recorded(&sb);
}

#[test]
fn an_idle_transaction_pooler_with_a_warm_pool_is_refused() {
    let (sb, orders) = filled(302);
    for more in [&[][..], &["server_round_robin = 1"][..]] {
        let bouncer = Bouncer::start("transaction", more);
        let servers = bouncer.warm(4);
        assert!(
            servers.len() >= 3,
            "the pool has several servers: {servers:?}"
        );
        for _ in 0..3 {
            let run = bouncer.run(&sb, &["apply", "--interval", &orders.interval()]);
            assert_refused(&run);
        }
        assert_nothing_recorded(&sb);
    }
}

#[test]
fn a_session_pooler_runs_the_story_and_a_second_runner_is_skipped() {
    let bouncer = Bouncer::start("session", &[]);
    bouncer.warm(3);
    let sb = Sandbox::empty();
    let init = bouncer.run(&sb, &["init"]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    let orders = Orders::new(303, START, 8, false);
    sb.insert_orders(&orders.rows);
    let first = format!("{START}..{}", day(START, 2));
    let applied = bouncer.run(&sb, &["apply", "--interval", &first]);
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    assert_eq!(sb.count("SELECT count(*) FROM daily_revenue"), 3);

    // A slow backfill through the pooler; a second runner through it meanwhile.
    sb.slow_inserts("daily_revenue", 1_000_000);
    let mut cmd = cmd_with_url(
        &bouncer.url(),
        sb.schema.as_deref().unwrap(),
        &["apply", "--interval", &orders.interval()],
    );
    cmd.current_dir(sb.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut slow = cmd.spawn().expect("spawn sqlrun");
    let done_before = sb.last_run_id();
    assert!(wait_for(
        &sb,
        &format!("SELECT count(*) FROM run_partitions WHERE run_id > {done_before}"),
        1,
        &mut slow
    ));
    let slow_run = sb.last_run_id();
    assert_eq!(slow_run, done_before + 1);
    let second = bouncer.run(&sb, &["apply", "--interval", &orders.interval()]);
    assert_eq!(second.code, 99, "{}\n{}", second.stdout, second.stderr);
    let second_run = sb.last_run_id();
    assert_ne!(second_run, slow_run);
    let slow = finish(slow);
    assert_eq!(slow.code, 0, "{}", slow.stderr);
    sb.exec("DROP TRIGGER burn_time ON daily_revenue");
    assert_eq!(sb.daily(), orders.expected());
    let dates_of = |run: i64, status: &str| {
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {run} AND status = '{status}'"
        ))
    };
    assert_eq!(dates_of(slow_run, "success"), 8);
    // The second skipped what the first still held, and redid only dates the first had
    // finished and let go before.
    let overlapping = format!(
        "SELECT count(*) FROM run_partitions b WHERE b.run_id = {second_run} \
         AND NOT (b.status = 'skipped' AND b.held_by = {slow_run}) \
         AND NOT EXISTS (SELECT 1 FROM run_partitions a WHERE a.run_id = {slow_run} \
                         AND a.ds = b.ds AND a.finished_at <= b.started_at)"
    );
    assert_eq!(
        sb.count(&overlapping),
        0,
        "{:?}",
        sb.rows("SELECT run_id, ds, status, held_by, started_at, finished_at FROM run_partitions ORDER BY started_at")
    );
    assert!(dates_of(second_run, "skipped") >= 1);
}
