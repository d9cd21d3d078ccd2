//! Faults on PostgreSQL: real `sqlrun` processes against a real server, with the faults a
//! shared database sees in production: many runners started at the same instant, a runner
//! killed while it holds dates, a live holder on another machine, a session terminated by
//! the server, a server restart. The assertions read the rows in the database, not only
//! exit codes: who computed what, what is still held, what was reclaimed and why, and that
//! the numbers equal those of a clean run.
//!
//! Every wait has a deadline. Data stays small (tens of dates); dates are made slow with
//! the harness's `slow_inserts` (a `pg_sleep` inside each date's transaction), so that a
//! fault lands while a date is in flight.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Barrier};
use std::thread::{sleep, JoinHandle};
use std::time::{Duration, Instant};

use crate::support::*;

type Daily = BTreeMap<String, (i64, i64)>;

// ---------------------------------------------------------------------------------------
// Processes

/// A running `sqlrun` (or a wrapper around it) whose output is read as it comes, so a
/// chatty process never blocks on a full pipe. Killed (by its own pid) if the test ends
/// before it does.
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

    /// Panics, with what the process said, if it has ended already.
    fn assert_running(&mut self, waiting_for: &str) {
        if let Some(status) = self.child.try_wait().expect("try_wait") {
            self.reaped = true;
            let stdout = joined(self.stdout.take());
            let stderr = joined(self.stderr.take());
            panic!(
                "{} ended ({status}) before {waiting_for}\nstdout: {stdout}\nstderr: {stderr}",
                self.what
            );
        }
    }

    /// Waits at most `limit` for the process to end by itself; kills it and fails if not.
    fn finish(mut self, limit: Duration) -> (ExitStatus, Run) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
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
        };
        self.reaped = true;
        let run = Run {
            code: status.code().unwrap_or(-1),
            stdout: joined(self.stdout.take()),
            stderr: joined(self.stderr.take()),
        };
        (status, run)
    }

    /// SIGKILL, then reap.
    fn sigkill(mut self) -> (ExitStatus, Run) {
        self.child.kill().expect("SIGKILL");
        self.finish(Duration::from_secs(10))
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
fn start_together(cmds: Vec<(String, Command)>) -> Vec<(String, Run)> {
    let barrier = Arc::new(Barrier::new(cmds.len()));
    let threads: Vec<_> = cmds
        .into_iter()
        .map(|(name, cmd)| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let proc = Proc::spawn(&format!("runner {name}"), cmd);
                let (_, run) = proc.finish(Duration::from_secs(120));
                (name, run)
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        .collect()
}

/// Polls `ready` every 20 ms until it says yes; fails after `limit`. Returns how long it
/// took.
fn wait_until(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    loop {
        if ready() {
            return start.elapsed();
        }
        if start.elapsed() > limit {
            panic!("waited {limit:?} in vain until {what}");
        }
        sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------------------
// The binary against a given URL and schema

/// The `--db` URL the harness gives the binary (the shared test server).
fn db_url(sb: &Sandbox) -> String {
    let cmd = sb.cmd(&[]);
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let at = args
        .iter()
        .position(|a| a == "--db")
        .expect("Sandbox::cmd passes --db");
    args[at + 1].clone()
}

fn schema_of(sb: &Sandbox) -> String {
    sb.schema.clone().expect("a PostgreSQL sandbox")
}

/// The URL with `application_name` set, so the test can find (and terminate) exactly
/// the sessions of one runner.
fn with_app(url: &str, app: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}application_name={app}")
}

/// An application_name unique to this sandbox (at most 63 characters).
fn app_name(sb: &Sandbox, tag: &str) -> String {
    let mut name = format!("faults_{}_{tag}", schema_of(sb));
    name.truncate(63);
    name
}

/// The binary's arguments: `--db URL --schema SCHEMA ARGS...`.
fn sqlrun_args(url: &str, schema: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec![
        "--db".to_string(),
        url.to_string(),
        "--schema".to_string(),
        schema.to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    all
}

/// The environment the harness gives the binary: a fixed $USER, no colours, no SQLRUN_*.
fn clean_env(cmd: &mut Command) {
    for (key, _) in std::env::vars() {
        if key.starts_with("SQLRUN_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("USER", "tester").env("NO_COLOR", "1");
}

fn sqlrun(url: &str, schema: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    clean_env(&mut cmd);
    cmd.args(sqlrun_args(url, schema, args));
    cmd
}

/// Whether a stderr line names `ds`, alone or inside a `START..END` range.
fn names_date(line: &str, ds: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || c == ',' || c == ':' || c == '(' || c == ')')
        .any(|token| match token.split_once("..") {
            Some((a, b)) => a.len() == 10 && b.len() == 10 && a <= ds && ds <= b,
            None => token == ds,
        })
}

/// Whether stderr reports `ds` as skipped because run `holder` holds it.
fn reports_skip(stderr: &str, ds: &str, holder: &str) -> bool {
    stderr.lines().any(|l| {
        l.contains("skipped") && names_date(l, ds) && l.contains(&format!("run {holder} "))
    })
}

fn dates(start: &str, end: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let d = day(start, i);
        if d.as_str() > end {
            return out;
        }
        out.push(d);
        i += 1;
    }
}

/// Makes every date take about `ms` milliseconds inside its transaction.
fn slow_dates(sb: &Sandbox, ms: u32) {
    // slow_inserts sleeps 0.3 µs a row
    sb.slow_inserts("daily_revenue", ms * 10_000 / 3);
}

/// Counts the sessions on the server with this application_name.
fn sessions(sb: &Sandbox, app: &str) -> i64 {
    sb.count(&format!(
        "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE application_name = '{app}'"
    ))
}

// ---------------------------------------------------------------------------------------
// Reading the state store, on the shared server (a Sandbox) or a private one

trait Query {
    /// Every row, every value as text ("NULL" for null), dates `YYYY-MM-DD`.
    fn query(&self, sql: &str) -> Vec<Vec<String>>;

    fn number(&self, sql: &str) -> i64 {
        let rows = self.query(sql);
        assert!(
            rows.len() == 1 && rows[0].len() == 1,
            "{sql}: wanted one value, got {rows:?}"
        );
        rows[0][0]
            .parse()
            .unwrap_or_else(|_| panic!("{sql}: {:?} is not a number", rows[0][0]))
    }
}

impl Query for Sandbox {
    fn query(&self, sql: &str) -> Vec<Vec<String>> {
        self.rows(sql)
    }
}

fn daily_of(db: &impl Query) -> Daily {
    db.query("SELECT ds, revenue, order_count FROM daily_revenue")
        .into_iter()
        .map(|r| (r[0].clone(), (r[1].parse().unwrap(), r[2].parse().unwrap())))
        .collect()
}

/// A run's dates (its run_partitions rows) and the status each got.
fn partitions(db: &impl Query, run_id: i64) -> BTreeMap<String, String> {
    db.query(&format!(
        "SELECT ds, status FROM run_partitions WHERE run_id = {run_id}"
    ))
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

fn done_dates(db: &impl Query, run_id: i64) -> BTreeSet<String> {
    partitions(db, run_id)
        .into_iter()
        .filter(|(_, s)| s == "success")
        .map(|(ds, _)| ds)
        .collect()
}

fn reservations_of(db: &impl Query, run_id: i64) -> BTreeSet<String> {
    db.query(&format!(
        "SELECT ds FROM reservations WHERE run_id = {run_id}"
    ))
    .into_iter()
    .map(|r| r[0].clone())
    .collect()
}

fn status_of(db: &impl Query, run_id: i64) -> String {
    db.query(&format!("SELECT status FROM runs WHERE run_id = {run_id}"))[0][0].clone()
}

fn max_run_id(db: &impl Query) -> i64 {
    db.number("SELECT coalesce(max(run_id), 0) FROM runs")
}

/// The 'reclaimed' events: (dead run, reclaiming run, date count, detail).
fn reclaims(db: &impl Query) -> Vec<(i64, i64, i64, String)> {
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

/// A date is whole: every daily_revenue row equals the expected numbers and was built by a
/// run that recorded that date as done; every date recorded as done has its row.
fn assert_whole(db: &impl Query, expected: &Daily, what: &str) {
    for (ds, numbers) in daily_of(db) {
        assert_eq!(
            Some(&numbers),
            expected.get(&ds),
            "{what}: daily_revenue {ds} is whole"
        );
    }
    let orphans = db.query(
        "SELECT d.ds, d.run_id FROM daily_revenue AS d \
         WHERE NOT EXISTS (SELECT 1 FROM run_partitions AS p \
                           WHERE p.run_id = d.run_id AND p.ds = d.ds AND p.status = 'success')",
    );
    assert!(
        orphans.is_empty(),
        "{what}: daily_revenue rows without their run_partitions record: {orphans:?}"
    );
    let unrecorded = db.query(
        "SELECT p.run_id, p.ds FROM run_partitions AS p \
         WHERE p.status = 'success' AND NOT EXISTS \
               (SELECT 1 FROM daily_revenue AS d WHERE d.ds = p.ds)",
    );
    assert!(
        unrecorded.is_empty(),
        "{what}: dates recorded as done without a daily_revenue row: {unrecorded:?}"
    );
}

/// The line of stderr that reports a lost connection, and the date it names.
fn lost_connection(stderr: &str) -> Option<(String, String)> {
    const SAYS: &str = "lost the connection to the database during ";
    let line = stderr
        .lines()
        .find(|l| l.strip_prefix("sqlrun: ").unwrap_or(l).starts_with(SAYS))?;
    let at = line.find(SAYS)? + SAYS.len();
    let ds = line.get(at..at + 10)?.to_string();
    Some((line.to_string(), ds))
}

/// After a run lost its connection during `named`: the date in progress rolled back (it is
/// the first date the run did not finish), unless the break came during its COMMIT, which
/// the message then says.
fn assert_named_date_is_the_one_in_flight(
    line: &str,
    named: &str,
    all: &[String],
    done: &BTreeSet<String>,
) {
    let next = all.iter().find(|d| !done.contains(*d));
    let in_flight = next.map(String::as_str) == Some(named);
    let at_commit = line.contains("may or may not have landed") && done.contains(named);
    assert!(
        in_flight || at_commit,
        "the lost-connection message names {named}, but the run had done {done:?}; \
         the date in progress was {next:?}: {line}"
    );
    if in_flight {
        assert!(
            line.contains(&format!("{named} rolled back")),
            "the message says the date in progress rolled back: {line}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// (1) A crowd: 8 runners started together on overlapping intervals, 3 rounds

/// Logs every committed write to daily_revenue (a row per date's INSERT), with the run
/// that wrote it: a rolled-back date leaves no log row either.
fn audit_writes(sb: &Sandbox) {
    let schema = schema_of(sb);
    sb.exec(&format!(
        "CREATE TABLE faults_writes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
           ds date NOT NULL, revenue bigint NOT NULL, order_count bigint NOT NULL, \
           run_id bigint NOT NULL); \
         CREATE FUNCTION \"{schema}\".faults_write() RETURNS trigger LANGUAGE plpgsql AS $$ \
           BEGIN \
             INSERT INTO \"{schema}\".faults_writes (ds, revenue, order_count, run_id) \
             VALUES (NEW.ds, NEW.revenue, NEW.order_count, NEW.run_id); \
             RETURN NULL; \
           END $$; \
         CREATE TRIGGER faults_write AFTER INSERT ON daily_revenue FOR EACH ROW \
           EXECUTE FUNCTION \"{schema}\".faults_write();"
    ));
}

#[test]
fn a_crowd_started_together_on_overlapping_intervals_agrees_with_a_clean_run() {
    let sb = Sandbox::new();
    let url = db_url(&sb);
    let schema = schema_of(&sb);
    let start = "2026-03-01";
    let mut orders = Orders::new(101, start, 30, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 40);
    audit_writes(&sb);

    // 8 runners: backfills over overlapping intervals (one covers all 30 dates, so every
    // date is computed each round) and two regular runs for dates inside the backfills.
    let jobs: Vec<(Vec<String>, String, String)> = {
        let backfill = |a: i64, b: i64| {
            let (a, b) = (day(start, a), day(start, b));
            (
                vec!["apply".into(), "--interval".into(), format!("{a}..{b}")],
                a,
                b,
            )
        };
        let regular = |a: i64| {
            let ds = day(start, a);
            (
                vec!["apply".into(), "--as-of".into(), day(start, a + 1)],
                ds.clone(),
                ds,
            )
        };
        vec![
            backfill(0, 11),
            backfill(4, 17),
            backfill(9, 21),
            backfill(14, 29),
            backfill(0, 29),
            backfill(19, 29),
            regular(8),
            regular(25),
        ]
    };

    for round in 1..=3 {
        if round > 1 {
            // Late data between rounds: an amended order that moves to another date, and
            // a new order; the round must then compute the new numbers.
            let amended = orders.latest().keys().nth(round * 7).unwrap().clone();
            let late = vec![
                orders.add(&amended, &day(start, 3 * round as i64), 123_000),
                orders.add(
                    &format!("late-{round}"),
                    &day(start, 20 + round as i64),
                    -4_500,
                ),
            ];
            sb.insert_orders(&late);
        }
        let expected = orders.expected();
        let first_write = sb.count("SELECT coalesce(max(id), 0) FROM faults_writes");
        let runs_before = max_run_id(&sb);

        let results = start_together(
            jobs.iter()
                .enumerate()
                .map(|(k, (args, _, _))| {
                    let by = format!("crowd{k}-round{round}");
                    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
                    args.extend(["--by", &by]);
                    let cmd = sqlrun(&url, &schema, &args);
                    (by, cmd)
                })
                .collect(),
        );

        for (by, run) in &results {
            assert!(
                run.code == 0 || run.code == 99,
                "round {round}: {by} exited {}, wanted 0 or 99\nstderr: {}",
                run.code,
                run.stderr
            );
        }
        assert_eq!(
            sb.count("SELECT count(*) FROM run_partitions WHERE status = 'failed'"),
            0,
            "round {round}: no date failed"
        );
        assert_eq!(
            sb.rows("SELECT ds, run_id FROM reservations"),
            Vec::<Vec<String>>::new(),
            "round {round}: nothing left held"
        );
        assert_eq!(
            max_run_id(&sb) - runs_before,
            jobs.len() as i64,
            "round {round}: one run per runner"
        );

        let mut round_runs = BTreeSet::new();
        for ((_, first, last), (by, run)) in jobs.iter().zip(&results) {
            let run_id = sb.count(&format!(
                "SELECT run_id FROM runs WHERE requested_by = '{by}'"
            ));
            round_runs.insert(run_id);
            let parts = partitions(&sb, run_id);
            assert_eq!(
                parts.keys().cloned().collect::<Vec<_>>(),
                dates(first, last),
                "round {round}: {by} (run {run_id}) has one record per date it asked for"
            );
            assert!(
                parts.values().all(|s| s == "success" || s == "skipped"),
                "round {round}: {by} (run {run_id}): {parts:?}"
            );
            let skips = sb.rows(&format!(
                "SELECT ds, held_by FROM run_partitions \
                 WHERE run_id = {run_id} AND status = 'skipped' ORDER BY ds"
            ));
            let (want_code, want_status) = if skips.is_empty() {
                (0, "success")
            } else {
                (99, "partial")
            };
            assert_eq!(
                (run.code, status_of(&sb, run_id).as_str()),
                (want_code, want_status),
                "round {round}: {by} (run {run_id}) skipped {skips:?}\nstderr: {}",
                run.stderr
            );
            for skip in &skips {
                assert!(
                    reports_skip(&run.stderr, &skip[0], &skip[1]),
                    "round {round}: {by} (run {run_id}) skipped {} held by run {}, and its \
                     stderr does not say so:\n{}",
                    skip[0],
                    skip[1],
                    run.stderr
                );
            }
        }
        let ids = round_runs
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        // Each skip names another run of this round that computed the date.
        let bad_skips = sb.rows(&format!(
            "SELECT s.run_id, s.ds, s.held_by FROM run_partitions AS s \
             WHERE s.run_id IN ({ids}) AND s.status = 'skipped' \
               AND (s.held_by IS NULL OR s.held_by = s.run_id OR s.held_by NOT IN ({ids}) \
                    OR NOT EXISTS (SELECT 1 FROM run_partitions AS h WHERE h.run_id = s.held_by \
                                   AND h.ds = s.ds AND h.status = 'success'))"
        ));
        assert!(
            bad_skips.is_empty(),
            "round {round}: skips must name a holder of this round that computed the date: \
             {bad_skips:?}"
        );

        // Every write of this round: the round's numbers, one committed write per date
        // recorded as done, no write that no record owns.
        let writes = sb.rows(&format!(
            "SELECT ds, revenue, order_count, run_id FROM faults_writes WHERE id > {first_write}"
        ));
        for w in &writes {
            let numbers = (w[1].parse::<i64>().unwrap(), w[2].parse::<i64>().unwrap());
            assert_eq!(
                Some(&numbers),
                expected.get(&w[0]),
                "round {round}: run {} wrote {} with numbers other than the round's",
                w[3],
                w[0]
            );
        }
        let written: BTreeSet<(String, String)> = writes
            .iter()
            .map(|w| (w[3].clone(), w[0].clone()))
            .collect();
        assert_eq!(
            written.len(),
            writes.len(),
            "round {round}: a run wrote a date twice"
        );
        let recorded: BTreeSet<(String, String)> = sb
            .rows(&format!(
                "SELECT run_id, ds FROM run_partitions WHERE run_id IN ({ids}) AND status = 'success'"
            ))
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect();
        assert_eq!(
            written, recorded,
            "round {round}: the committed writes are exactly the dates recorded as done"
        );
        let per_date: BTreeMap<&str, usize> = writes.iter().fold(BTreeMap::new(), |mut m, w| {
            *m.entry(w[0].as_str()).or_default() += 1;
            m
        });
        assert_eq!(
            per_date.len(),
            expected.len(),
            "round {round}: every date written"
        );

        assert_eq!(sb.daily(), expected, "round {round}");
        assert_eq!(sb.current(), expected, "round {round}");
        assert_eq!(sb.cumulative(), running(&expected), "round {round}");
        assert_whole(&sb, &expected, &format!("round {round}"));
        let twice = per_date.values().filter(|n| **n > 1).count();
        eprintln!(
            "crowd round {round}: {} writes, {twice} dates written by more than one run, \
             exits {:?}",
            writes.len(),
            results.iter().map(|(_, r)| r.code).collect::<Vec<_>>()
        );
    }

    // A clean single run on a fresh sandbox, same orders: the same numbers.
    let clean = Sandbox::new();
    clean.insert_orders(&orders.rows);
    clean.ok(&["apply", "--interval", &orders.interval()]);
    assert_eq!(clean.daily(), sb.daily());
    assert_eq!(clean.cumulative(), sb.cumulative());
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
}

// ---------------------------------------------------------------------------------------
// (2) SIGKILL while holding dates

#[test]
fn a_runner_killed_while_holding_dates_is_reclaimed_by_the_next_apply() {
    let sb = Sandbox::new();
    let url = db_url(&sb);
    let schema = schema_of(&sb);
    let orders = Orders::new(202, "2026-04-01", 20, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 250);
    let expected = orders.expected();
    let interval = orders.interval();
    let all: Vec<String> = expected.keys().cloned().collect();

    let app = app_name(&sb, "killed");
    let mut victim = Proc::spawn(
        "the backfill to kill",
        sqlrun(
            &with_app(&url, &app),
            &schema,
            &["apply", "--interval", &interval],
        ),
    );
    wait_until(
        "the backfill committed 3 dates",
        Duration::from_secs(60),
        || {
            victim.assert_running("it committed 3 dates");
            sb.count("SELECT count(*) FROM run_partitions") >= 3
        },
    );
    let dead = max_run_id(&sb);
    let (status, _) = victim.sigkill();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "killed, not finished");

    // Right after the kill: the committed prefix is whole, the rest is still held.
    let done = done_dates(&sb, dead);
    assert!(done.len() >= 3 && done.len() < all.len(), "done: {done:?}");
    assert_eq!(
        done.iter().cloned().collect::<Vec<_>>(),
        all[..done.len()].to_vec(),
        "dates are computed in ascending order"
    );
    assert_eq!(partitions(&sb, dead).len(), done.len(), "no other record");
    assert_eq!(
        daily_of(&sb).into_keys().collect::<BTreeSet<_>>(),
        done,
        "exactly the recorded dates have rows"
    );
    assert_whole(&sb, &expected, "after SIGKILL");
    assert_eq!(status_of(&sb, dead), "running", "nobody has found out yet");
    let held = reservations_of(&sb, dead);
    let rest: BTreeSet<String> = all.iter().filter(|d| !done.contains(*d)).cloned().collect();
    assert_eq!(
        held, rest,
        "the dead run still holds what it did not finish"
    );

    // The server ends the session of a client that is gone (at once when it was idle,
    // within client_connection_check_interval when a statement ran), and with it the
    // run's advisory lock.
    let gone = wait_until(
        "the server ended the killed runner's session",
        Duration::from_secs(15),
        || sessions(&sb, &app) == 0,
    );
    assert!(
        gone < Duration::from_secs(5),
        "the killed runner's session outlived it by {gone:?}"
    );

    // The next apply of the same interval reclaims at once (no lease to wait out: the
    // lease is 15 minutes) and finishes.
    let clock = Instant::now();
    let next_app = app_name(&sb, "next");
    let mut next = Proc::spawn(
        "the apply after the kill",
        sqlrun(
            &with_app(&url, &next_app),
            &schema,
            &["apply", "--interval", &interval],
        ),
    );
    let reclaimed_after = wait_until(
        "the next apply recorded the reclaim",
        Duration::from_secs(20),
        || {
            !reclaims(&sb).is_empty() || {
                next.assert_running("it recorded a reclaim");
                false
            }
        },
    );
    let (_, next) = next.finish(Duration::from_secs(60));
    let took = clock.elapsed();
    eprintln!(
        "sigkill: session gone {gone:?} after the kill; reclaim recorded {reclaimed_after:?} \
         after the next apply started; that apply took {took:?}"
    );
    assert_eq!(next.code, 0, "the next apply: {}", next.stderr);
    assert!(
        reclaimed_after < Duration::from_secs(10),
        "the reclaim took {reclaimed_after:?}"
    );
    let me = max_run_id(&sb);
    assert_ne!(me, dead);
    let events = reclaims(&sb);
    assert_eq!(events.len(), 1, "one reclaim recorded: {events:?}");
    let (from, by, count, detail) = &events[0];
    assert_eq!(
        (*from, *by, *count),
        (dead, me, rest.len() as i64),
        "the reclaim names the dead run, the reclaiming run and the dates it held"
    );
    assert!(
        detail.contains("session"),
        "the reclaim says why (the session ended): {detail:?}"
    );
    assert!(
        next.stderr.lines().any(|l| l.contains("reclaimed")
            && l.contains(&format!("run {dead}"))
            && rest.iter().all(|d| names_date(l, d))),
        "the reclaim of {rest:?} from run {dead} is reported:\n{}",
        next.stderr
    );
    assert_eq!(status_of(&sb, dead), "interrupted");
    assert_eq!(status_of(&sb, me), "success");
    assert_eq!(done_dates(&sb, me).len(), all.len());
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    assert_eq!(sb.daily(), expected);
    assert_eq!(sb.cumulative(), running(&expected));
    assert_whole(&sb, &expected, "after the reclaim");
}

/// Runners started together after a kill all find the same dead holder: exactly one of
/// them reclaims it (one event), each of its dates goes to exactly one runner, the others
/// skip and report.
#[test]
fn runners_started_together_after_a_kill_reclaim_once() {
    let sb = Sandbox::new();
    let url = db_url(&sb);
    let schema = schema_of(&sb);
    let start = "2026-04-01";
    let orders = Orders::new(212, start, 20, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 150);
    let expected = orders.expected();
    let all: Vec<String> = expected.keys().cloned().collect();

    let app = app_name(&sb, "killed");
    let mut victim = Proc::spawn(
        "the backfill to kill",
        sqlrun(
            &with_app(&url, &app),
            &schema,
            &["apply", "--interval", &orders.interval()],
        ),
    );
    wait_until(
        "the backfill committed 2 dates",
        Duration::from_secs(60),
        || {
            victim.assert_running("it committed 2 dates");
            sb.count("SELECT count(*) FROM run_partitions") >= 2
        },
    );
    let dead = max_run_id(&sb);
    let (status, _) = victim.sigkill();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    wait_until(
        "the server ended the killed runner's session",
        Duration::from_secs(15),
        || sessions(&sb, &app) == 0,
    );
    let done = done_dates(&sb, dead);
    let held = reservations_of(&sb, dead);
    assert_eq!(held.len() + done.len(), all.len());

    let intervals = [(0, 19), (2, 12), (8, 19), (5, 15), (0, 9), (10, 19)];
    let results = start_together(
        intervals
            .iter()
            .enumerate()
            .map(|(k, (a, b))| {
                let by = format!("after-kill-{k}");
                let interval = format!("{}..{}", day(start, *a), day(start, *b));
                let cmd = sqlrun(
                    &url,
                    &schema,
                    &["apply", "--interval", &interval, "--by", &by],
                );
                (by, cmd)
            })
            .collect(),
    );
    let mut ids = BTreeSet::new();
    for (by, run) in &results {
        assert!(
            run.code == 0 || run.code == 99,
            "{by} exited {}\nstderr: {}",
            run.code,
            run.stderr
        );
        let run_id = sb.count(&format!(
            "SELECT run_id FROM runs WHERE requested_by = '{by}'"
        ));
        ids.insert(run_id);
        for skip in sb.rows(&format!(
            "SELECT ds, held_by FROM run_partitions WHERE run_id = {run_id} AND status = 'skipped'"
        )) {
            assert!(
                reports_skip(&run.stderr, &skip[0], &skip[1]),
                "{by} skipped {} held by run {}: not reported\n{}",
                skip[0],
                skip[1],
                run.stderr
            );
        }
        assert_eq!(
            run.code,
            if status_of(&sb, run_id) == "partial" {
                99
            } else {
                0
            },
            "{by}: exit and status agree"
        );
    }
    let events = reclaims(&sb);
    assert_eq!(events.len(), 1, "one reclaim of run {dead}: {events:?}");
    let (from, by, count, detail) = &events[0];
    assert_eq!((*from, *count), (dead, held.len() as i64));
    assert!(
        ids.contains(by),
        "reclaimed by one of the runners: {events:?}"
    );
    assert!(detail.contains("session"), "{detail:?}");
    let reporters: Vec<&String> = results
        .iter()
        .filter(|(_, r)| {
            r.stderr
                .lines()
                .any(|l| l.contains("reclaimed") && l.contains(&format!("run {dead}")))
        })
        .map(|(by, _)| by)
        .collect();
    assert_eq!(
        reporters.len(),
        1,
        "exactly one runner reports the reclaim: {reporters:?}"
    );
    assert_eq!(status_of(&sb, dead), "interrupted");
    assert_eq!(
        sb.count("SELECT count(*) FROM run_partitions WHERE status NOT IN ('success', 'skipped')"),
        0
    );
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    assert_eq!(
        partitions(&sb, dead).len(),
        done.len(),
        "nothing more from the dead run"
    );
    assert_eq!(sb.daily(), expected);
    assert_eq!(sb.cumulative(), running(&expected));
    assert_whole(&sb, &expected, "after the crowd");
}

// ---------------------------------------------------------------------------------------
// (2b) Seals started together with applies (the contract: seal is race-free too)

/// Seals started at the same instant as applies that recompute the same dates with
/// changed data: a seal is all or nothing (exit 0, or exit 2 with nothing sealed); a
/// sealed date keeps the values that went out, which are whole (the old numbers or the
/// new ones, never a mix) and equal to its partition; later data becomes one correction.
#[test]
fn seals_racing_applies_over_changed_data_keep_what_went_out() {
    let sb = Sandbox::new();
    let url = db_url(&sb);
    let schema = schema_of(&sb);
    let start = "2026-08-01";
    let mut orders = Orders::new(606, start, 12, false);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let old = orders.expected();
    let late: Vec<OrderRow> = (0..12)
        .map(|i| orders.add(&format!("late-{i}"), &day(start, i), 1_000 + i))
        .collect();
    sb.insert_orders(&late);
    let new = orders.expected();
    slow_dates(&sb, 60);

    let interval = |a: i64, b: i64| format!("{}..{}", day(start, a), day(start, b));
    let mut cmds: Vec<(String, Command)> = [(0, 11), (3, 8), (6, 11), (0, 4)]
        .iter()
        .enumerate()
        .map(|(k, (a, b))| {
            let by = format!("apply-{k}");
            let cmd = sqlrun(
                &url,
                &schema,
                &["apply", "--interval", &interval(*a, *b), "--by", &by],
            );
            (by, cmd)
        })
        .collect();
    let seal_intervals = [(0, 5), (4, 9), (10, 11)];
    for (k, (a, b)) in seal_intervals.iter().enumerate() {
        let by = format!("seal-{k}");
        let cmd = sqlrun(
            &url,
            &schema,
            &[
                "seal",
                "--interval",
                &interval(*a, *b),
                "--reason",
                "race",
                "--by",
                &by,
            ],
        );
        cmds.push((by, cmd));
    }
    let results = start_together(cmds);

    let mut sealed_by_ok = BTreeSet::new();
    for (by, run) in &results {
        let allowed: &[i32] = if by.starts_with("seal") {
            &[0, 2]
        } else {
            &[0, 99]
        };
        assert!(
            allowed.contains(&run.code),
            "{by} exited {}\nstderr: {}",
            run.code,
            run.stderr
        );
        if let Some(k) = by.strip_prefix("seal-") {
            let (a, b) = seal_intervals[k.parse::<usize>().unwrap()];
            let own = sb.count(&format!(
                "SELECT count(*) FROM seals WHERE sealed_by = '{by}'"
            ));
            if run.code == 0 {
                sealed_by_ok.insert(by.clone());
                let sealed = sb.count(&format!(
                    "SELECT count(*) FROM seals WHERE ds BETWEEN '{}' AND '{}'",
                    day(start, a),
                    day(start, b)
                ));
                assert_eq!(sealed, b - a + 1, "{by}: exit 0, every date sealed");
            } else {
                assert_eq!(own, 0, "{by}: refused, so nothing sealed\n{}", run.stderr);
                assert!(
                    run.stderr.contains("held by"),
                    "{by}: says which date is held\n{}",
                    run.stderr
                );
            }
        }
    }
    assert_eq!(
        sb.count("SELECT count(*) FROM run_partitions WHERE status = 'failed'"),
        0
    );
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);

    // What went out is whole and is what the partition keeps.
    let check_sent = |when: &str| {
        let daily = sb.daily();
        for r in sb.rows("SELECT ds, revenue, order_count FROM seals") {
            let sent = (r[1].parse::<i64>().unwrap(), r[2].parse::<i64>().unwrap());
            assert!(
                sent == old[&r[0]] || sent == new[&r[0]],
                "{when}: {} went out as {sent:?}: neither the old {:?} nor the new {:?}",
                r[0],
                old[&r[0]],
                new[&r[0]]
            );
            assert_eq!(
                daily[&r[0]], sent,
                "{when}: the partition of {} is as sent",
                r[0]
            );
        }
    };
    check_sent("after the race");

    // Once more, after the race: every date is now up to date; each sealed date that went
    // out with the old numbers has exactly one correction to the new ones.
    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    check_sent("after two more applies");
    assert_eq!(sb.current(), new);
    let sent: BTreeMap<String, (i64, i64)> = sb
        .rows("SELECT ds, revenue, order_count FROM seals")
        .into_iter()
        .map(|r| (r[0].clone(), (r[1].parse().unwrap(), r[2].parse().unwrap())))
        .collect();
    let corrected: BTreeMap<String, i64> = sb
        .rows("SELECT ds, count(*) FROM daily_revenue_corrections GROUP BY ds")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect();
    let want: BTreeMap<String, i64> = sent
        .iter()
        .filter(|(ds, v)| **v != new[*ds])
        .map(|(ds, _)| (ds.clone(), 1))
        .collect();
    assert_eq!(
        corrected, want,
        "one correction per date sent with old numbers"
    );
    eprintln!(
        "seal race: seals that went through {sealed_by_ok:?}; {} dates sent with the old numbers",
        want.len()
    );
    for (ds, _) in sent.iter().filter(|(ds, v)| **v == new[*ds]) {
        assert!(!corrected.contains_key(ds));
    }
}

// ---------------------------------------------------------------------------------------
// (3) A live holder on another host (own pid and UTS namespaces) is respected

#[test]
fn a_live_holder_on_another_host_keeps_its_dates() {
    let sb = Sandbox::new();
    let url = db_url(&sb);
    let schema = schema_of(&sb);
    let start = "2026-05-01";
    let orders = Orders::new(303, start, 25, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 300);
    let expected = orders.expected();
    let holder_dates = dates(start, &day(start, 19));
    let other_dates = dates(&day(start, 12), &day(start, 24));
    let overlap: BTreeSet<String> = holder_dates
        .iter()
        .filter(|d| other_dates.contains(d))
        .cloned()
        .collect();

    // The holder: another host name, and pid 1 of its own pid namespace, so neither its
    // host nor its pid means anything here; only its session says it is alive.
    let holder_interval = format!("{}..{}", holder_dates[0], holder_dates[19]);
    let mut wrapper = Command::new("unshare");
    wrapper
        .args(["--pid", "--uts", "--fork", "--kill-child", "sh", "-c"])
        .arg("hostname other-host && exec \"$0\" \"$@\"")
        .arg(BIN)
        .args(sqlrun_args(
            &url,
            &schema,
            &["apply", "--interval", &holder_interval, "--by", "elsewhere"],
        ));
    clean_env(&mut wrapper);
    let mut holder = Proc::spawn(
        "the holder (`unshare --pid --uts --fork`, as root; a failure here means this \
         machine does not allow new pid/UTS namespaces)",
        wrapper,
    );
    wait_until(
        "the holder committed its first date",
        Duration::from_secs(60),
        || {
            holder.assert_running("it committed a date");
            sb.count(
                "SELECT count(*) FROM run_partitions AS p JOIN runs AS r USING (run_id) \
                 WHERE r.requested_by = 'elsewhere' AND p.status = 'success'",
            ) >= 1
        },
    );
    let holder_id = sb.count("SELECT run_id FROM runs WHERE requested_by = 'elsewhere'");
    assert_eq!(
        sb.rows(&format!(
            "SELECT host, status FROM runs WHERE run_id = {holder_id}"
        )),
        [["other-host", "running"]],
        "the holder runs under another host name"
    );

    // Another runner, here, on an overlapping interval.
    let other = Proc::spawn(
        "the overlapping runner",
        sqlrun(
            &url,
            &schema,
            &[
                "apply",
                "--interval",
                &format!("{}..{}", other_dates[0], other_dates[other_dates.len() - 1]),
                "--by",
                "here",
            ],
        ),
    );
    let (_, other) = other.finish(Duration::from_secs(60));
    let still_held = reservations_of(&sb, holder_id);
    let holder_done = done_dates(&sb, holder_id);
    assert!(
        overlap.is_subset(&still_held) && holder_done.is_disjoint(&overlap),
        "the test is too slow for its timing: the holder reached the overlap {overlap:?} \
         before the other runner was done (holder done {holder_done:?})"
    );
    let other_id = sb.count("SELECT run_id FROM runs WHERE requested_by = 'here'");
    assert_eq!(
        other.code, 99,
        "the overlapping runner skips the held dates\nstderr: {}",
        other.stderr
    );
    let parts = partitions(&sb, other_id);
    let skipped: BTreeSet<String> = parts
        .iter()
        .filter(|(_, s)| *s == "skipped")
        .map(|(ds, _)| ds.clone())
        .collect();
    assert_eq!(skipped, overlap, "exactly the held dates are skipped");
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {other_id} AND status = 'skipped' \
             AND held_by IS DISTINCT FROM {holder_id}"
        )),
        0,
        "each skip names the holder"
    );
    let own: BTreeSet<String> = other_dates
        .iter()
        .filter(|d| !overlap.contains(*d))
        .cloned()
        .collect();
    assert_eq!(done_dates(&sb, other_id), own, "the rest is computed");
    for ds in &overlap {
        assert!(
            reports_skip(&other.stderr, ds, &holder_id.to_string()),
            "the skip of {ds} held by run {holder_id} is reported:\n{}",
            other.stderr
        );
    }
    assert_eq!(status_of(&sb, other_id), "partial");
    assert_eq!(
        reclaims(&sb),
        Vec::new(),
        "a live holder is never reclaimed"
    );
    assert_eq!(status_of(&sb, holder_id), "running");

    let (_, held) = holder.finish(Duration::from_secs(60));
    assert_eq!(held.code, 0, "the holder finishes\nstderr: {}", held.stderr);
    assert_eq!(status_of(&sb, holder_id), "success");
    assert_eq!(
        done_dates(&sb, holder_id),
        holder_dates.iter().cloned().collect::<BTreeSet<_>>(),
        "the holder computed all its dates"
    );
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    assert_eq!(sb.daily(), expected);
    assert_eq!(sb.cumulative(), running(&expected));
    assert_whole(&sb, &expected, "after both");
}

// ---------------------------------------------------------------------------------------
// (4) The server terminates a runner's session

#[test]
fn a_runner_whose_session_is_terminated_stops_and_its_dates_are_reclaimed() {
    let sb = Sandbox::new();
    let url = db_url(&sb);
    let schema = schema_of(&sb);
    let orders = Orders::new(404, "2026-06-01", 20, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 250);
    let expected = orders.expected();
    let interval = orders.interval();
    let all: Vec<String> = expected.keys().cloned().collect();

    let app = app_name(&sb, "terminated");
    let mut victim = Proc::spawn(
        "the backfill whose session is terminated",
        sqlrun(
            &with_app(&url, &app),
            &schema,
            &["apply", "--interval", &interval],
        ),
    );
    wait_until(
        "the backfill committed 2 dates",
        Duration::from_secs(60),
        || {
            victim.assert_running("it committed 2 dates");
            sb.count("SELECT count(*) FROM run_partitions") >= 2
        },
    );
    let dead = max_run_id(&sb);
    let terminated = sb.rows(&format!(
        "SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity \
         WHERE application_name = '{app}' AND datname = current_database() \
           AND pid <> pg_catalog.pg_backend_pid()"
    ));
    assert!(
        !terminated.is_empty() && terminated.iter().all(|r| r[0] == "1"),
        "the runner's session(s) terminated: {terminated:?}"
    );
    let (_, run) = victim.finish(Duration::from_secs(30));
    assert_eq!(run.code, 1, "exit 1\nstderr: {}", run.stderr);
    let (line, named) = lost_connection(&run.stderr).unwrap_or_else(|| {
        panic!(
            "stderr says it lost the connection to the database:\n{}",
            run.stderr
        )
    });

    let records = partitions(&sb, dead);
    let done = done_dates(&sb, dead);
    assert_eq!(records.len(), done.len(), "no failed record: {records:?}");
    assert!(!done.is_empty() && done.len() < all.len(), "done: {done:?}");
    assert_eq!(
        done.iter().cloned().collect::<Vec<_>>(),
        all[..done.len()].to_vec()
    );
    assert_named_date_is_the_one_in_flight(&line, &named, &all, &done);
    assert_whole(&sb, &expected, "after the termination");
    let status = status_of(&sb, dead);
    assert!(
        status == "running" || status == "failed" || status == "interrupted",
        "the terminated run is {status}"
    );
    eprintln!(
        "terminated: run {dead} is {status} after {} dates; {line}",
        done.len()
    );

    // It writes nothing more: its session is gone and it never reconnects.
    wait_until(
        "the terminated session is gone",
        Duration::from_secs(10),
        || sessions(&sb, &app) == 0,
    );
    sleep(Duration::from_millis(1500));
    assert_eq!(partitions(&sb, dead), records, "no record after its exit");
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM daily_revenue WHERE run_id = {dead}"
        )),
        done.len() as i64
    );

    // The next apply reclaims what it still held and completes the rest.
    let held = reservations_of(&sb, dead);
    let rest: BTreeSet<String> = all.iter().filter(|d| !done.contains(*d)).cloned().collect();
    let next = Proc::spawn(
        "the apply --only missing after the termination",
        sqlrun(
            &url,
            &schema,
            &["apply", "--interval", &interval, "--only", "missing"],
        ),
    );
    let (_, next) = next.finish(Duration::from_secs(60));
    assert_eq!(next.code, 0, "the next apply\nstderr: {}", next.stderr);
    let me = max_run_id(&sb);
    assert_eq!(
        done_dates(&sb, me),
        rest,
        "--only missing does exactly the rest"
    );
    if status == "running" {
        assert_eq!(held, rest, "the terminated run held what it had not done");
        let events = reclaims(&sb);
        assert_eq!(events.len(), 1, "{events:?}");
        let (from, by, count, detail) = &events[0];
        assert_eq!((*from, *by, *count), (dead, me, rest.len() as i64));
        assert!(detail.contains("session"), "{detail:?}");
        assert!(
            next.stderr
                .lines()
                .any(|l| l.contains("reclaimed") && l.contains(&format!("run {dead}"))),
            "the reclaim is reported:\n{}",
            next.stderr
        );
        assert_eq!(status_of(&sb, dead), "interrupted");
    }
    assert_eq!(partitions(&sb, dead), records, "still nothing more from it");
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    assert_eq!(sb.daily(), expected);
    assert_eq!(sb.cumulative(), running(&expected));
    assert_whole(&sb, &expected, "after the rerun");
}

// ---------------------------------------------------------------------------------------
// (5) The server restarts during a backfill: a private server, since the shared one
// serves the other tests of this binary meanwhile

/// A PostgreSQL server of one test: initdb into a temp folder (as the `postgres` user when
/// the tests run as root), a Unix socket there, no TCP. Stopped (immediate shutdown) and
/// removed when dropped; also tied to the test's thread by the parent-death signal.
struct PrivateServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    user: Option<(u32, u32)>,
    postgres: Option<Child>,
    url: String,
    schema: String,
    /// The network namespace the server runs in (listening on 127.0.0.1 there), if any;
    /// its Unix socket works from anywhere.
    netns: Option<std::fs::File>,
}

const PRIVATE_DB: &str = "faults";

impl PrivateServer {
    fn start(schema: &str) -> PrivateServer {
        PrivateServer::start_in(schema, None)
    }

    /// A server inside the network namespace `netns` (an open /proc/PID/ns/net), with TCP
    /// on 127.0.0.1:5432 there, besides its Unix socket.
    fn start_in(schema: &str, netns: Option<std::fs::File>) -> PrivateServer {
        let bin = pg_bin_dir();
        let user = pg_server_user();
        let dir = tempfile::Builder::new()
            .prefix("sqlrun-faults-pg-")
            .tempdir()
            .expect("a temp dir");
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .expect("chown the private server's folder to postgres");
        }
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(dir.path().join("data"))
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8"])
            .args(["--no-locale", "--no-sync"]);
        as_user(&mut initdb, user, dir.path());
        let out = initdb.output().expect("run initdb");
        assert!(
            out.status.success(),
            "initdb of the private server: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let url = format!(
            "postgresql:///{PRIVATE_DB}?host={}&user=postgres",
            dir.path().display()
        );
        let mut server = PrivateServer {
            dir,
            bin,
            user,
            postgres: None,
            url,
            schema: schema.to_string(),
            netns,
        };
        server.run_postgres();
        let mut admin = server.connect("postgres");
        admin
            .batch_execute(&format!("CREATE DATABASE {PRIVATE_DB}"))
            .expect("CREATE DATABASE on the private server");
        server
    }

    fn base(&self) -> &Path {
        self.dir.path()
    }

    /// Starts postgres on the data folder and waits (bounded) until it takes connections.
    fn run_postgres(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.base().join("server.log"))
            .expect("the server log");
        let mut cmd = Command::new(self.bin.join("postgres"));
        cmd.arg("-D").arg(self.base().join("data"));
        cmd.arg("-k").arg(self.base());
        let listen = if self.netns.is_some() {
            "listen_addresses=127.0.0.1"
        } else {
            "listen_addresses="
        };
        for setting in [
            listen,
            "max_connections=40",
            "fsync=off",
            "synchronous_commit=off",
            "full_page_writes=off",
            "TimeZone=UTC",
            "log_timezone=UTC",
        ] {
            cmd.args(["-c", setting]);
        }
        as_user(&mut cmd, None, self.base());
        let parent = std::process::id();
        let netns = self.netns.as_ref().map(|f| f.as_raw_fd());
        let user = self.user;
        // SAFETY: the closure calls only async-signal-safe functions (setns, setgroups,
        // setgid, setuid, prctl, getppid, _exit). It enters the network namespace (which
        // needs root) before it becomes the server's user; then SIGQUIT (immediate
        // shutdown) reaches the server when this test's thread ends, however it ends.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(fd) = netns {
                    if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                if let Some((uid, gid)) = user {
                    if libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(gid) != 0
                        || libc::setuid(uid) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGQUIT as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() as u32 != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        cmd.stdout(log.try_clone().unwrap()).stderr(log);
        self.postgres = Some(cmd.spawn().expect("start the private postgres"));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.postgres.as_mut().unwrap().try_wait().unwrap() {
                panic!(
                    "the private postgres exited at start ({status}); its log:\n{}",
                    self.log_tail()
                );
            }
            match self.config("postgres").connect(postgres::NoTls) {
                Ok(_) => return,
                Err(e) if Instant::now() > deadline => panic!(
                    "the private postgres takes no connections after 60 s: {e}; its log:\n{}",
                    self.log_tail()
                ),
                Err(_) => sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Shuts the server down with `signal` (SIGINT: fast, SIGQUIT: immediate) and waits
    /// (bounded) until it has exited.
    fn stop(&mut self, signal: libc::c_int) {
        let Some(mut child) = self.postgres.take() else {
            return;
        };
        // SAFETY: a signal to the postmaster this test started, by its pid.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if child.try_wait().unwrap().is_some() {
                return;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the private postgres did not stop within 30 s of signal {signal}; log:\n{}",
                    self.log_tail()
                );
            }
            sleep(Duration::from_millis(20));
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.base().join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    fn config(&self, db: &str) -> postgres::Config {
        let mut config = postgres::Config::new();
        config
            .host_path(self.base())
            .user("postgres")
            .dbname(db)
            .application_name("sqlrun-faults-test")
            .options(&format!(
                "-c search_path={} -c TimeZone=UTC -c DateStyle=ISO",
                self.schema
            ))
            .connect_timeout(Duration::from_secs(10));
        config
    }

    fn connect(&self, db: &str) -> postgres::Client {
        self.config(db)
            .connect(postgres::NoTls)
            .unwrap_or_else(|e| {
                panic!(
                    "connect to the private server: {e}; its log:\n{}",
                    self.log_tail()
                )
            })
    }

    fn sqlrun(&self, schema: &str, args: &[&str]) -> Command {
        sqlrun(&self.url, schema, args)
    }

    /// Runs `sqlrun` to its end (bounded) and checks the exit code.
    fn expect(&self, schema: &str, code: i32, args: &[&str]) -> Run {
        let (_, run) = Proc::spawn(
            &format!("sqlrun {}", args.join(" ")),
            self.sqlrun(schema, args),
        )
        .finish(Duration::from_secs(120));
        assert_eq!(
            run.code,
            code,
            "`sqlrun {}` on the private server, schema {schema}: exit {}\nstdout: {}\nstderr: {}",
            args.join(" "),
            run.code,
            run.stdout,
            run.stderr
        );
        run
    }

    fn insert_orders(&self, rows: &[OrderRow]) {
        let mut client = self.connect(PRIVATE_DB);
        let mut tx = client.transaction().unwrap();
        let stmt = tx
            .prepare(
                "INSERT INTO orders(order_id, order_date, amount, created_at) \
                 VALUES ($1::text, $2::text::date, $3::bigint, $4::text::timestamptz)",
            )
            .unwrap();
        for r in rows {
            tx.execute(
                &stmt,
                &[&r.order_id, &r.order_date, &r.amount, &r.created_at],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }
}

impl Query for PrivateServer {
    fn query(&self, sql: &str) -> Vec<Vec<String>> {
        let mut client = self.connect(PRIVATE_DB);
        let messages = client
            .simple_query(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        messages
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

impl Drop for PrivateServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.postgres.take() {
            // SAFETY: a signal to the postmaster this test started, by its pid.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGQUIT) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `cmd` as the server's user (initdb and postgres refuse root), in `dir`.
fn as_user(cmd: &mut Command, user: Option<(u32, u32)>, dir: &Path) {
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid);
    }
    cmd.current_dir(dir)
        .env_remove("PGDATA")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
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

/// As root: the `postgres` user's (uid, gid); otherwise None (run as ourselves).
fn pg_server_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let id = |flag: &str| -> u32 {
        let out = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .expect("run `id`");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("a `postgres` user to run the private server as (root cannot)")
    };
    Some((id("-u"), id("-g")))
}

fn restart_mid_backfill(seed: u64, signal: libc::c_int, how: &str) {
    let schema = "restarted";
    let mut server = PrivateServer::start(schema);
    server.expect(schema, 0, &["init"]);
    let orders = Orders::new(seed, "2026-07-01", 20, true);
    server.insert_orders(&orders.rows);
    let expected = orders.expected();
    let interval = orders.interval();
    let all: Vec<String> = expected.keys().cloned().collect();
    {
        let mut c = server.connect(PRIVATE_DB);
        c.batch_execute(
            "CREATE FUNCTION burn_time() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN PERFORM pg_catalog.pg_sleep(0.25); RETURN NULL; END $$; \
             CREATE TRIGGER burn_time AFTER INSERT ON daily_revenue FOR EACH ROW \
             EXECUTE FUNCTION burn_time();",
        )
        .unwrap();
    }

    let mut victim = Proc::spawn(
        "the backfill during the restart",
        server.sqlrun(schema, &["apply", "--interval", &interval]),
    );
    wait_until(
        "the backfill committed 3 dates",
        Duration::from_secs(60),
        || {
            victim.assert_running("it committed 3 dates");
            server.number("SELECT count(*) FROM run_partitions") >= 3
        },
    );
    let dead = max_run_id(&server);
    // Into the next date's sleep, so that the restart lands while a date is in flight.
    sleep(Duration::from_millis(100));
    server.stop(signal);
    let (_, run) = victim.finish(Duration::from_secs(30));
    server.run_postgres();

    assert_eq!(
        run.code, 1,
        "{how}: the runner exits 1\nstderr: {}",
        run.stderr
    );
    let (line, named) = lost_connection(&run.stderr).unwrap_or_else(|| {
        panic!(
            "{how}: stderr says it lost the connection to the database:\n{}",
            run.stderr
        )
    });
    let records = partitions(&server, dead);
    let done = done_dates(&server, dead);
    assert_eq!(records.len(), done.len(), "{how}: {records:?}");
    assert!(
        done.len() >= 3 && done.len() < all.len(),
        "{how}: done {done:?}"
    );
    assert_eq!(
        done.iter().cloned().collect::<Vec<_>>(),
        all[..done.len()].to_vec(),
        "{how}"
    );
    assert_named_date_is_the_one_in_flight(&line, &named, &all, &done);
    assert_eq!(
        daily_of(&server).into_keys().collect::<BTreeSet<_>>(),
        done,
        "{how}: exactly the dates recorded as done have rows"
    );
    assert_whole(&server, &expected, how);
    let status = status_of(&server, dead);
    assert!(
        ["running", "failed", "interrupted"].contains(&status.as_str()),
        "{how}: the run is {status}"
    );
    eprintln!(
        "{how}: run {dead} is {status} after {} dates; {line}",
        done.len()
    );
    let rest: BTreeSet<String> = all.iter().filter(|d| !done.contains(*d)).cloned().collect();
    if status == "running" {
        assert_eq!(reservations_of(&server, dead), rest, "{how}");
    }

    // A rerun (the README's advice: --only missing) completes, and the result equals a
    // clean run.
    let rerun = server.expect(
        schema,
        0,
        &["apply", "--interval", &interval, "--only", "missing"],
    );
    let me = max_run_id(&server);
    assert_eq!(
        done_dates(&server, me),
        rest,
        "{how}: the rerun does the rest"
    );
    if status == "running" {
        let events = reclaims(&server);
        assert_eq!(events.len(), 1, "{how}: {events:?}");
        assert_eq!(
            (events[0].0, events[0].1, events[0].2),
            (dead, me, rest.len() as i64),
            "{how}"
        );
        assert!(events[0].3.contains("session"), "{how}: {events:?}");
        assert!(
            rerun.stderr.contains(&format!("run {dead}")),
            "{how}: the reclaim is reported:\n{}",
            rerun.stderr
        );
    }
    assert_ne!(status_of(&server, dead), "running", "{how}");
    assert_eq!(
        server.number("SELECT count(*) FROM reservations"),
        0,
        "{how}"
    );
    assert_eq!(daily_of(&server), expected, "{how}");
    assert_whole(&server, &expected, how);

    let clean = "clean";
    server.expect(clean, 0, &["init"]);
    {
        let mut c = server.connect(PRIVATE_DB);
        c.batch_execute(&format!("SET search_path TO {clean}"))
            .unwrap();
        let mut tx = c.transaction().unwrap();
        for r in &orders.rows {
            tx.execute(
                "INSERT INTO orders(order_id, order_date, amount, created_at) \
                 VALUES ($1::text, $2::text::date, $3::bigint, $4::text::timestamptz)",
                &[&r.order_id, &r.order_date, &r.amount, &r.created_at],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }
    server.expect(clean, 0, &["apply", "--interval", &interval]);
    assert_eq!(
        server.query(&format!(
            "SELECT ds, revenue, order_count FROM {clean}.daily_revenue ORDER BY ds"
        )),
        server.query("SELECT ds, revenue, order_count FROM daily_revenue ORDER BY ds"),
        "{how}: equal to a clean run"
    );
}

#[test]
fn a_fast_server_restart_mid_backfill_stops_the_runner_and_a_rerun_finishes() {
    restart_mid_backfill(505, libc::SIGINT, "fast restart");
}

#[test]
fn an_immediate_server_restart_mid_backfill_stops_the_runner_and_a_rerun_finishes() {
    restart_mid_backfill(506, libc::SIGQUIT, "immediate restart");
}

// ---------------------------------------------------------------------------------------
// (6) The network between a runner and the server goes silent (no FIN, no RST): a
// private server in a network namespace of its own, the runner there too over TCP, and
// a `blackhole` qdisc on that namespace's loopback. The README: "a runner cut off from
// the server by the network holds its dates for about 10 seconds over TCP".

/// Makes the process `cmd` starts enter the network namespace `fd` first (as root).
fn in_netns(cmd: &mut Command, fd: RawFd) {
    // SAFETY: setns is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[test]
fn a_runner_cut_off_by_the_network_stops_and_its_dates_are_reclaimed() {
    // A network namespace with its loopback up, kept by a sleeping process.
    let mut keeper = Command::new("unshare");
    keeper
        .args(["--net", "sh", "-c"])
        .arg("ip link set lo up && exec sleep 600");
    let mut keeper = Proc::spawn(
        "the network namespace (`unshare --net`, `ip link set lo up`, as root)",
        keeper,
    );
    let pid = keeper.child.id();
    wait_until(
        "the network namespace is ready",
        Duration::from_secs(10),
        || {
            keeper.assert_running("the namespace was ready");
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
        },
    );
    let netns = std::fs::File::open(format!("/proc/{pid}/ns/net")).expect("the namespace");
    let fd = netns.as_raw_fd();

    let schema = "partitioned";
    let server = PrivateServer::start_in(schema, Some(netns.try_clone().unwrap()));
    server.expect(schema, 0, &["init"]);
    let orders = Orders::new(707, "2026-09-01", 20, true);
    server.insert_orders(&orders.rows);
    let expected = orders.expected();
    let interval = orders.interval();
    let all: Vec<String> = expected.keys().cloned().collect();
    server
        .connect(PRIVATE_DB)
        .batch_execute(
            "CREATE FUNCTION burn_time() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN PERFORM pg_catalog.pg_sleep(0.25); RETURN NULL; END $$; \
             CREATE TRIGGER burn_time AFTER INSERT ON daily_revenue FOR EACH ROW \
             EXECUTE FUNCTION burn_time();",
        )
        .unwrap();

    let app = "cut_off";
    let tcp = format!("postgresql://postgres@127.0.0.1:5432/{PRIVATE_DB}?application_name={app}");
    let mut cmd = sqlrun(&tcp, schema, &["apply", "--interval", &interval]);
    in_netns(&mut cmd, fd);
    let mut victim = Proc::spawn("the backfill over TCP", cmd);
    let sessions_of = |app: &str| {
        server.number(&format!(
            "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE application_name = '{app}'"
        ))
    };
    wait_until(
        "the backfill committed 3 dates",
        Duration::from_secs(60),
        || {
            victim.assert_running("it committed 3 dates");
            server.number("SELECT count(*) FROM run_partitions") >= 3
        },
    );
    assert_eq!(
        server.query(&format!(
            "SELECT client_addr FROM pg_catalog.pg_stat_activity WHERE application_name = '{app}'"
        )),
        [["127.0.0.1"]],
        "the runner talks TCP"
    );
    let dead = max_run_id(&server);

    // Silence: every packet on the namespace's loopback is dropped from now on.
    let mut cut = Command::new("tc");
    cut.args(["qdisc", "add", "dev", "lo", "root", "blackhole"]);
    in_netns(&mut cut, fd);
    let out = cut.output().expect("run tc");
    assert!(
        out.status.success(),
        "tc qdisc add dev lo root blackhole: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let clock = Instant::now();

    let mut runner_gone = None;
    let mut session_gone = None;
    let mut victim = Some(victim);
    let mut run = None;
    wait_until(
        "the runner has stopped and the server has ended its session",
        Duration::from_secs(60),
        || {
            if let Some(mut v) = victim.take() {
                if v.child.try_wait().unwrap().is_some() {
                    runner_gone = Some(clock.elapsed());
                    run = Some(v.finish(Duration::from_secs(1)).1);
                } else {
                    victim = Some(v);
                }
            }
            if session_gone.is_none() && sessions_of(app) == 0 {
                session_gone = Some(clock.elapsed());
            }
            runner_gone.is_some() && session_gone.is_some()
        },
    );
    let (runner_gone, session_gone, run) =
        (runner_gone.unwrap(), session_gone.unwrap(), run.unwrap());
    eprintln!(
        "network cut: the runner stopped after {runner_gone:?}, the server ended its session \
         after {session_gone:?}"
    );
    assert_eq!(run.code, 1, "the runner exits 1\nstderr: {}", run.stderr);
    let (line, named) = lost_connection(&run.stderr).unwrap_or_else(|| {
        panic!(
            "stderr says it lost the connection to the database:\n{}",
            run.stderr
        )
    });
    assert!(
        runner_gone < Duration::from_secs(25) && session_gone < Duration::from_secs(25),
        "about 10 seconds, says the README: the runner stopped after {runner_gone:?}, its \
         session ended after {session_gone:?}"
    );

    let records = partitions(&server, dead);
    let done = done_dates(&server, dead);
    assert_eq!(records.len(), done.len(), "{records:?}");
    assert!(done.len() >= 3 && done.len() < all.len(), "done {done:?}");
    assert_named_date_is_the_one_in_flight(&line, &named, &all, &done);
    assert_whole(&server, &expected, "after the cut");
    let rest: BTreeSet<String> = all.iter().filter(|d| !done.contains(*d)).cloned().collect();
    assert_eq!(status_of(&server, dead), "running");
    assert_eq!(reservations_of(&server, dead), rest);

    // The network stays cut; a runner on the Unix socket reclaims and finishes.
    let next = server.expect(
        schema,
        0,
        &["apply", "--interval", &interval, "--only", "missing"],
    );
    let me = max_run_id(&server);
    assert_eq!(done_dates(&server, me), rest);
    let events = reclaims(&server);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        (events[0].0, events[0].1, events[0].2),
        (dead, me, rest.len() as i64)
    );
    assert!(events[0].3.contains("session"), "{events:?}");
    assert!(
        next.stderr.contains(&format!("run {dead}")),
        "the reclaim is reported:\n{}",
        next.stderr
    );
    assert_eq!(status_of(&server, dead), "interrupted");
    assert_eq!(
        partitions(&server, dead),
        records,
        "nothing more from the cut-off run"
    );
    assert_eq!(server.number("SELECT count(*) FROM reservations"), 0);
    assert_eq!(daily_of(&server), expected);
    assert_whole(&server, &expected, "after the rerun");
    drop(server);
    drop(keeper);
}
