//! Faults on PostgreSQL: real `sqlrun` processes against a real server, with the faults a
//! shared database sees in production: many runners started at the same instant, a runner
//! killed while it holds dates, a live holder on another machine, a session terminated by
//! the server, a server restart. The assertions read the rows in the database, not only
//! exit codes: who computed what, what is still held, what was reclaimed and why, and that
//! the numbers equal those of a clean run.
//!
//! Every wait has a deadline. Data stays small (tens of dates); dates are made slow with
//! the harness's `slow_inserts` (a `pg_sleep` inside each date's transaction), so that a
//! fault lands while a date is in flight. Processes, waits and the private servers are
//! procs.rs's.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::procs::*;
use crate::support::*;

pub type Daily = BTreeMap<String, (i64, i64)>;

/// How long a slow backfill may take to record its first dates.
const MINUTE: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------
// The binary, and what it says

/// The URL with `application_name` set, so the test can find (and terminate) exactly
/// the sessions of one runner.
pub fn with_app(url: &str, app: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}application_name={app}")
}

/// An application_name unique to this sandbox (at most 63 characters).
pub fn app_name(sb: &Sandbox, tag: &str) -> String {
    let (_, schema) = sb.url();
    let mut name = format!("faults_{schema}_{tag}");
    name.truncate(63);
    name
}

/// The binary on the sandbox, its sessions named `app`.
fn sqlrun_as(sb: &Sandbox, app: &str, args: &[&str]) -> Command {
    let (url, schema) = sb.url();
    cmd_with_url(&with_app(&url, app), &schema, args)
}

/// `cmd` started by `wrapper` (`wrapper ARGS... PROGRAM ARGS...`), with `cmd`'s environment.
pub fn wrapped(mut wrapper: Command, cmd: &Command) -> Command {
    wrapper.arg(cmd.get_program()).args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapper.env(key, value),
            None => wrapper.env_remove(key),
        };
    }
    wrapper
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
pub fn reports_skip(stderr: &str, ds: &str, holder: &str) -> bool {
    stderr.lines().any(|l| {
        l.contains("skipped") && names_date(l, ds) && l.contains(&format!("run {holder} "))
    })
}

pub fn dates(start: &str, end: &str) -> Vec<String> {
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
pub fn slow_dates(sb: &Sandbox, ms: u32) {
    // slow_inserts sleeps 0.3 µs a row
    sb.slow_inserts("daily_revenue", ms * 10_000 / 3);
}

/// Counts the sessions on the server with this application_name.
fn sessions(db: &impl Query, app: &str) -> i64 {
    db.number(&format!(
        "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE application_name = '{app}'"
    ))
}

/// The run stopped because it lost its connection: it exits 1 and its stderr says so.
/// The line that does, and the date it names.
fn lost_connection(run: &Run, how: &str) -> (String, String) {
    const SAYS: &str = "lost the connection to the database during ";
    assert_eq!(
        run.code, 1,
        "{how}: the runner exits 1\nstderr: {}",
        run.stderr
    );
    let line = run
        .stderr
        .lines()
        .find(|l| l.strip_prefix("sqlrun: ").unwrap_or(l).starts_with(SAYS));
    let named = line.and_then(|l| {
        let at = l.find(SAYS)? + SAYS.len();
        l.get(at..at + 10)
    });
    match (line, named) {
        (Some(line), Some(named)) => (line.to_string(), named.to_string()),
        _ => panic!(
            "{how}: stderr says it lost the connection to the database:\n{}",
            run.stderr
        ),
    }
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
// Reading the state store (procs::Query: the shared server or a private one)

fn daily_of(db: &impl Query) -> Daily {
    db.query("SELECT ds, revenue, order_count FROM daily_revenue")
        .into_iter()
        .map(|r| (r[0].clone(), (r[1].parse().unwrap(), r[2].parse().unwrap())))
        .collect()
}

/// A run's dates (its run_partitions rows) and the status each got.
pub fn partitions(db: &impl Query, run_id: i64) -> BTreeMap<String, String> {
    db.query(&format!(
        "SELECT ds, status FROM run_partitions WHERE run_id = {run_id}"
    ))
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

pub fn done_dates(db: &impl Query, run_id: i64) -> BTreeSet<String> {
    partitions(db, run_id)
        .into_iter()
        .filter(|(_, s)| s == "success")
        .map(|(ds, _)| ds)
        .collect()
}

/// A date is whole: every daily_revenue row equals the expected numbers and was built by a
/// run that recorded that date as done; every date recorded as done has its row.
pub fn assert_whole(db: &impl Query, expected: &Daily, what: &str) {
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

/// What a backfill of the dates `all` left when a fault stopped it mid-way, before any
/// other run: see `stopped`.
struct Stopped {
    run_id: i64,
    status: String,
    records: BTreeMap<String, String>,
    done: BTreeSet<String>,
    /// The dates it did not finish.
    rest: BTreeSet<String>,
}

/// Checks what the stopped backfill `run_id` left: at least `at_least` dates done, in
/// ascending order, no other record; exactly those dates have rows, and they are whole;
/// the run is `running` (nobody has found out yet), `failed` or `interrupted`, and while
/// `running` it still holds the rest.
fn stopped(
    db: &impl Query,
    run_id: i64,
    all: &[String],
    at_least: usize,
    expected: &Daily,
    how: &str,
) -> Stopped {
    let records = partitions(db, run_id);
    let done = done_dates(db, run_id);
    assert_eq!(
        records.len(),
        done.len(),
        "{how}: no record but the dates done: {records:?}"
    );
    assert!(
        done.len() >= at_least && done.len() < all.len(),
        "{how}: done {done:?}"
    );
    assert_eq!(
        done.iter().cloned().collect::<Vec<_>>(),
        all[..done.len()].to_vec(),
        "{how}: dates are computed in ascending order"
    );
    assert_eq!(
        daily_of(db).into_keys().collect::<BTreeSet<_>>(),
        done,
        "{how}: exactly the dates recorded as done have rows"
    );
    assert_whole(db, expected, how);
    let status = status_of(db, run_id);
    assert!(
        ["running", "failed", "interrupted"].contains(&status.as_str()),
        "{how}: the stopped run is {status}"
    );
    let rest: BTreeSet<String> = all.iter().filter(|d| !done.contains(*d)).cloned().collect();
    if status == "running" {
        assert_eq!(
            reservations_of(db, run_id),
            rest,
            "{how}: the stopped run still holds what it did not finish"
        );
    }
    Stopped {
        run_id,
        status,
        records,
        done,
        rest,
    }
}

/// Exactly one reclaim is recorded: of the `rest` of run `dead`, by run `by`, because the
/// session of `dead` ended; and `stderr` (of `by`) reports it with those dates.
fn assert_reclaimed(
    db: &impl Query,
    dead: i64,
    by: i64,
    rest: &BTreeSet<String>,
    stderr: &str,
    how: &str,
) {
    let events = reclaims(db);
    assert_eq!(events.len(), 1, "{how}: one reclaim recorded: {events:?}");
    let (from, reclaimer, count, detail) = &events[0];
    assert_eq!(
        (*from, *reclaimer, *count),
        (dead, by, rest.len() as i64),
        "{how}: the reclaim names the dead run, the reclaiming run and the dates it held"
    );
    assert!(
        detail.contains("session"),
        "{how}: the reclaim says why (the session ended): {detail:?}"
    );
    assert!(
        stderr.lines().any(|l| l.contains("reclaimed")
            && l.contains(&format!("run {dead}"))
            && rest.iter().all(|d| names_date(l, d))),
        "{how}: the reclaim of {rest:?} from run {dead} is reported:\n{stderr}"
    );
}

/// After `rerun` (`apply --only missing` over the stopped backfill's interval, exit 0): it
/// did exactly the rest, reclaiming it if the stopped run was still `running`; the stopped
/// run wrote nothing more and is over; nothing is held; daily_revenue is `expected`, whole.
fn assert_rerun_finished(
    db: &impl Query,
    stopped: &Stopped,
    rerun: &Run,
    expected: &Daily,
    how: &str,
) {
    let (dead, me) = (stopped.run_id, max_run_id(db));
    assert_eq!(
        done_dates(db, me),
        stopped.rest,
        "{how}: the rerun (--only missing) does exactly the rest"
    );
    if stopped.status == "running" {
        assert_reclaimed(db, dead, me, &stopped.rest, &rerun.stderr, how);
        assert_eq!(status_of(db, dead), "interrupted", "{how}");
    }
    assert_ne!(status_of(db, dead), "running", "{how}");
    assert_eq!(
        partitions(db, dead),
        stopped.records,
        "{how}: nothing more from the stopped run"
    );
    assert_eq!(db.number("SELECT count(*) FROM reservations"), 0, "{how}");
    assert_eq!(daily_of(db), *expected, "{how}");
    assert_whole(db, expected, &format!("{how}, after the rerun"));
}

// ---------------------------------------------------------------------------------------
// (1) A crowd: 8 runners started together on overlapping intervals, 3 rounds

/// Logs every committed write to daily_revenue (a row per date's INSERT), with the run
/// that wrote it: a rolled-back date leaves no log row either.
pub fn audit_writes(sb: &Sandbox) {
    let (_, schema) = sb.url();
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
                    let cmd = sb.cmd(&args);
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
    let orders = Orders::new(202, "2026-04-01", 20, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 250);
    let expected = orders.expected();
    let interval = orders.interval();
    let all: Vec<String> = expected.keys().cloned().collect();

    let app = app_name(&sb, "killed");
    let mut victim = Proc::spawn(
        "the backfill to kill",
        sqlrun_as(&sb, &app, &["apply", "--interval", &interval]),
    );
    let dead = wait_for_dates(&sb, &mut victim, 3, MINUTE);
    let status = victim.sigkill();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "killed, not finished");

    // Right after the kill: the committed prefix is whole, the rest is still held.
    let killed = stopped(&sb, dead, &all, 3, &expected, "after SIGKILL");
    assert_eq!(killed.status, "running", "nobody has found out yet");

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
    let mut next = Proc::spawn(
        "the apply after the kill",
        sqlrun_as(
            &sb,
            &app_name(&sb, "next"),
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
    let next = next.finish(MINUTE);
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
    assert_reclaimed(&sb, dead, me, &killed.rest, &next.stderr, "after SIGKILL");
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
    let start = "2026-04-01";
    let orders = Orders::new(212, start, 20, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 150);
    let expected = orders.expected();
    let all: Vec<String> = expected.keys().cloned().collect();

    let app = app_name(&sb, "killed");
    let mut victim = Proc::spawn(
        "the backfill to kill",
        sqlrun_as(&sb, &app, &["apply", "--interval", &orders.interval()]),
    );
    let dead = wait_for_dates(&sb, &mut victim, 2, MINUTE);
    assert_eq!(victim.sigkill().signal(), Some(libc::SIGKILL));
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
                let cmd = sb.cmd(&["apply", "--interval", &interval, "--by", &by]);
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
            let cmd = sb.cmd(&["apply", "--interval", &interval(*a, *b), "--by", &by]);
            (by, cmd)
        })
        .collect();
    let seal_intervals = [(0, 5), (4, 9), (10, 11)];
    for (k, (a, b)) in seal_intervals.iter().enumerate() {
        let by = format!("seal-{k}");
        let cmd = sb.cmd(&[
            "seal",
            "--interval",
            &interval(*a, *b),
            "--reason",
            "race",
            "--by",
            &by,
        ]);
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

/// Reissues, unseals and seals started at the same instant as applies over sealed dates
/// with changed data: each seal event is all or nothing (exit 0 with every date of its
/// interval covered, or exit 2 with no event of its own); each date sealed after the race
/// is whole (its table, its latest version sent and `seals` agree, old numbers or new,
/// never a mix); each unsealed date left `seals`; and afterwards each date sealed with
/// old numbers has exactly one open correction to the new ones.
#[test]
fn reissues_and_unseals_racing_applies_stay_all_or_nothing() {
    let sb = Sandbox::new();
    let start = "2026-09-01";
    let mut orders = Orders::new(707, start, 12, false);
    sb.insert_orders(&orders.rows);
    let interval = |a: i64, b: i64| format!("{}..{}", day(start, a), day(start, b));
    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&["seal", "--interval", &interval(0, 11), "--reason", "first"]);
    let old = orders.expected();
    let late: Vec<OrderRow> = (0..12)
        .map(|i| orders.add(&format!("late-{i}"), &day(start, i), 2_000 + i))
        .collect();
    sb.insert_orders(&late);
    let new = orders.expected();
    slow_dates(&sb, 60);

    let mut cmds: Vec<(String, Command)> = [(0, 11), (2, 9)]
        .iter()
        .enumerate()
        .map(|(k, (a, b))| {
            let by = format!("apply-{k}");
            let cmd = sb.cmd(&["apply", "--interval", &interval(*a, *b), "--by", &by]);
            (by, cmd)
        })
        .collect();
    let events: [(&str, &str, (i64, i64)); 4] = [
        ("reissue-0", "--reissue", (0, 5)),
        ("reissue-1", "--reissue", (6, 11)),
        ("unseal-0", "unseal", (4, 7)),
        ("seal-0", "seal", (0, 11)),
    ];
    for (by, how, (a, b)) in events {
        let i = interval(a, b);
        let args: Vec<&str> = match how {
            "--reissue" => vec!["seal", "--reissue", "--interval", &i],
            "unseal" => vec!["unseal", "--interval", &i],
            _ => vec!["seal", "--interval", &i],
        };
        let mut all = args.clone();
        all.extend(["--reason", "race", "--by", by]);
        let mut cmd = sb.cmd(&all);
        if by == "reissue-1" {
            // Later, when the applies may have corrected its dates: it sends new numbers.
            let mut sh = Command::new("sh");
            sh.args(["-c", "sleep 1.5 && exec \"$0\" \"$@\""]);
            cmd = wrapped(sh, &cmd);
        }
        cmds.push((by.to_string(), cmd));
    }
    let results = start_together(cmds);

    for (by, run) in &results {
        let allowed: &[i32] = if by.starts_with("apply") {
            &[0, 99]
        } else {
            &[0, 2]
        };
        assert!(
            allowed.contains(&run.code),
            "{by} exited {}\nstderr: {}",
            run.code,
            run.stderr
        );
        let Some((_, how, (a, b))) = events.iter().find(|e| e.0 == by) else {
            continue;
        };
        let own = sb.rows(&format!(
            "SELECT seal_id FROM seal_events WHERE made_by = '{by}'"
        ));
        match (run.code, *how) {
            (0, "seal") => assert!(own.len() <= 1, "{by}: {own:?}"),
            (0, _) => {
                assert_eq!(own.len(), 1, "{by}: exit 0, one event\n{}", run.stderr);
                let covered = sb.count(&format!(
                    "SELECT count(DISTINCT ds) FROM seal_coverage WHERE seal_id = {}",
                    own[0][0]
                ));
                assert_eq!(covered, b - a + 1, "{by}: every date of its interval");
            }
            _ => {
                assert!(own.is_empty(), "{by}: refused, so no event\n{}", run.stderr);
                assert!(
                    run.stderr.contains("held by") || run.stderr.contains("not sealed"),
                    "{by}: says why\n{}",
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

    // Each sealed date is whole: its table, its latest version sent and seals agree.
    let check_whole = |when: &str| {
        let daily = sb.daily();
        let sent: BTreeMap<String, (i64, i64)> = sb
            .rows(
                "SELECT x.ds, x.revenue, x.order_count FROM daily_revenue_sent AS x \
                 JOIN sealed_models AS m ON m.ds = x.ds AND m.model = 'daily_revenue' \
                 AND m.seal_id = x.seal_id",
            )
            .into_iter()
            .map(|r| (r[0].clone(), (r[1].parse().unwrap(), r[2].parse().unwrap())))
            .collect();
        let seals: BTreeMap<String, (i64, i64)> = sb
            .rows("SELECT ds, revenue, order_count FROM seals")
            .into_iter()
            .map(|r| (r[0].clone(), (r[1].parse().unwrap(), r[2].parse().unwrap())))
            .collect();
        assert_eq!(sent, seals, "{when}: seals is each date's latest version");
        for (ds, v) in &seals {
            assert!(
                *v == old[ds] || *v == new[ds],
                "{when}: {ds} went out as {v:?}"
            );
            assert_eq!(daily[ds], *v, "{when}: the partition of {ds} is as sent");
        }
        seals
    };
    check_whole("after the race");

    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let seals = check_whole("after two more applies");
    assert_eq!(sb.current(), new, "what is true now");
    assert_eq!(sb.daily().len(), 12);
    let open: BTreeMap<String, i64> = sb
        .rows(
            "SELECT ds, count(*) FROM daily_revenue_corrections \
             WHERE settled_by IS NULL GROUP BY ds",
        )
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect();
    let want: BTreeMap<String, i64> = seals
        .iter()
        .filter(|(ds, v)| **v != new[*ds])
        .map(|(ds, _)| (ds.clone(), 1))
        .collect();
    assert_eq!(
        open, want,
        "one open correction per date sent with old numbers"
    );
    for ds in new.keys().filter(|ds| !seals.contains_key(*ds)) {
        assert_eq!(sb.daily()[ds], new[ds], "{ds}: unsealed, replaced whole");
    }
    eprintln!(
        "reissue race: exits {:?}; {} sealed dates, {} sent with old numbers",
        results
            .iter()
            .map(|(b, r)| (b.as_str(), r.code))
            .collect::<Vec<_>>(),
        seals.len(),
        want.len()
    );
}

// ---------------------------------------------------------------------------------------
// (3) A live holder on another host (own pid and UTS namespaces) is respected

#[test]
fn a_live_holder_on_another_host_keeps_its_dates() {
    let sb = Sandbox::new();
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
    let mut unshare = Command::new("unshare");
    unshare
        .args(["--pid", "--uts", "--fork", "--kill-child", "sh", "-c"])
        .arg("hostname other-host && exec \"$0\" \"$@\"");
    let mut holder = Proc::spawn(
        "the holder (`unshare --pid --uts --fork`, as root; a failure here means this \
         machine does not allow new pid/UTS namespaces)",
        wrapped(
            unshare,
            &sb.cmd(&["apply", "--interval", &holder_interval, "--by", "elsewhere"]),
        ),
    );
    wait_until("the holder committed its first date", MINUTE, || {
        holder.assert_running("it committed a date");
        sb.count(
            "SELECT count(*) FROM run_partitions AS p JOIN runs AS r USING (run_id) \
                 WHERE r.requested_by = 'elsewhere' AND p.status = 'success'",
        ) >= 1
    });
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
        sb.cmd(&[
            "apply",
            "--interval",
            &format!("{}..{}", other_dates[0], other_dates[other_dates.len() - 1]),
            "--by",
            "here",
        ]),
    );
    let other = other.finish(MINUTE);
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

    let held = holder.finish(MINUTE);
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
    let how = "after the termination";
    let sb = Sandbox::new();
    let orders = Orders::new(404, "2026-06-01", 20, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 250);
    let expected = orders.expected();
    let interval = orders.interval();
    let all: Vec<String> = expected.keys().cloned().collect();

    let app = app_name(&sb, "terminated");
    let mut victim = Proc::spawn(
        "the backfill whose session is terminated",
        sqlrun_as(&sb, &app, &["apply", "--interval", &interval]),
    );
    let dead = wait_for_dates(&sb, &mut victim, 2, MINUTE);
    let terminated = sb.rows(&format!(
        "SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity \
         WHERE application_name = '{app}' AND datname = current_database() \
           AND pid <> pg_catalog.pg_backend_pid()"
    ));
    assert!(
        !terminated.is_empty() && terminated.iter().all(|r| r[0] == "1"),
        "the runner's session(s) terminated: {terminated:?}"
    );
    let run = victim.finish(Duration::from_secs(30));
    let (line, named) = lost_connection(&run, how);
    let stop = stopped(&sb, dead, &all, 1, &expected, how);
    assert_named_date_is_the_one_in_flight(&line, &named, &all, &stop.done);
    eprintln!(
        "terminated: run {dead} is {} after {} dates; {line}",
        stop.status,
        stop.done.len()
    );

    // It writes nothing more: its session is gone and it never reconnects.
    wait_until(
        "the terminated session is gone",
        Duration::from_secs(10),
        || sessions(&sb, &app) == 0,
    );
    sleep(Duration::from_millis(1500));
    assert_eq!(
        partitions(&sb, dead),
        stop.records,
        "no record after its exit"
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM daily_revenue WHERE run_id = {dead}"
        )),
        stop.done.len() as i64
    );

    // The next apply reclaims what it still held and completes the rest.
    let next = Proc::spawn(
        "the apply --only missing after the termination",
        sb.cmd(&["apply", "--interval", &interval, "--only", "missing"]),
    )
    .expect(0, MINUTE);
    assert_rerun_finished(&sb, &stop, &next, &expected, how);
    assert_eq!(sb.cumulative(), running(&expected));
}

// ---------------------------------------------------------------------------------------
// (5) The server restarts during a backfill: a private server, since the shared one
// serves the other tests of this binary meanwhile

fn restart_mid_backfill(seed: u64, signal: libc::c_int, how: &str) {
    let schema = "restarted";
    let mut server = PrivateServer::start("faults", schema);
    server.expect(schema, 0, &["init"]);
    let orders = Orders::new(seed, "2026-07-01", 20, true);
    server.insert_orders(schema, &orders.rows);
    server.slow_inserts("daily_revenue", 0.25);
    let expected = orders.expected();
    let interval = orders.interval();
    let all: Vec<String> = expected.keys().cloned().collect();

    let mut victim = Proc::spawn(
        "the backfill during the restart",
        server.sqlrun(schema, &["apply", "--interval", &interval]),
    );
    let dead = wait_for_dates(&server, &mut victim, 3, MINUTE);
    // Into the next date's sleep, so that the restart lands while a date is in flight.
    sleep(Duration::from_millis(100));
    server.stop(signal);
    let run = victim.finish(Duration::from_secs(30));
    server.run();

    let (line, named) = lost_connection(&run, how);
    let stop = stopped(&server, dead, &all, 3, &expected, how);
    assert_named_date_is_the_one_in_flight(&line, &named, &all, &stop.done);
    eprintln!(
        "{how}: run {dead} is {} after {} dates; {line}",
        stop.status,
        stop.done.len()
    );

    // A rerun (the README's advice: --only missing) completes, and the result equals a
    // clean run.
    let rerun = server.expect(
        schema,
        0,
        &["apply", "--interval", &interval, "--only", "missing"],
    );
    assert_rerun_finished(&server, &stop, &rerun, &expected, how);

    let clean = "clean";
    server.expect(clean, 0, &["init"]);
    server.insert_orders(clean, &orders.rows);
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

#[test]
fn a_runner_cut_off_by_the_network_stops_and_its_dates_are_reclaimed() {
    let how = "after the cut";
    let netns = Netns::new("faults-cut");
    let schema = "partitioned";
    let server = PrivateServer::start_in("faults", schema, &netns, "127.0.0.1");
    server.expect(schema, 0, &["init"]);
    let orders = Orders::new(707, "2026-09-01", 20, true);
    server.insert_orders(schema, &orders.rows);
    server.slow_inserts("daily_revenue", 0.25);
    let expected = orders.expected();
    let interval = orders.interval();
    let all: Vec<String> = expected.keys().cloned().collect();

    let app = "cut_off";
    let tcp = with_app(&PrivateServer::tcp_url("127.0.0.1"), app);
    let mut cmd = cmd_with_url(&tcp, schema, &["apply", "--interval", &interval]);
    enter(&mut cmd, Some(netns.file()), None);
    let mut victim = Proc::spawn("the backfill over TCP", cmd);
    let dead = wait_for_dates(&server, &mut victim, 3, MINUTE);
    assert_eq!(
        server.query(&format!(
            "SELECT client_addr FROM pg_catalog.pg_stat_activity WHERE application_name = '{app}'"
        )),
        [["127.0.0.1"]],
        "the runner talks TCP"
    );

    // Silence: every packet on the namespace's loopback is dropped from now on.
    let mut cut = Command::new("tc");
    cut.args(["qdisc", "add", "dev", "lo", "root", "blackhole"]);
    enter(&mut cut, Some(netns.file()), None);
    let out = cut.output().expect("run tc");
    assert!(
        out.status.success(),
        "tc qdisc add dev lo root blackhole: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let clock = Instant::now();

    let mut runner_gone = None;
    let mut session_gone = None;
    let mut run = None;
    wait_until(
        "the runner has stopped and the server has ended its session",
        MINUTE,
        || {
            if run.is_none() {
                run = victim.try_finish();
                if run.is_some() {
                    runner_gone = Some(clock.elapsed());
                }
            }
            if session_gone.is_none() && sessions(&server, app) == 0 {
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
    let (line, named) = lost_connection(&run, how);
    assert!(
        runner_gone < Duration::from_secs(25) && session_gone < Duration::from_secs(25),
        "about 10 seconds, says the README: the runner stopped after {runner_gone:?}, its \
         session ended after {session_gone:?}"
    );

    let stop = stopped(&server, dead, &all, 3, &expected, how);
    assert_named_date_is_the_one_in_flight(&line, &named, &all, &stop.done);
    assert_eq!(stop.status, "running", "{how}: nobody has reclaimed it yet");

    // The network stays cut; a runner on the Unix socket reclaims and finishes.
    let next = server.expect(
        schema,
        0,
        &["apply", "--interval", &interval, "--only", "missing"],
    );
    assert_rerun_finished(&server, &stop, &next, &expected, how);
}
