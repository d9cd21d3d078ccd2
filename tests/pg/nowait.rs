//! Rule 3 on PostgreSQL: a run that meets a date held by another skips it and says so,
//! never waits. Each test holds one runner, a, at one point of its life, and has other
//! runners reserve, compute, seal and release meanwhile:
//!
//! - a date of a's that lasts as long as the test wants (a gate: the date's insert waits,
//!   polling, while the test's own session holds an advisory lock);
//! - a's process stopped (SIGSTOP, as a paused VM or a debugger would) before its first
//!   date, inside a date's transaction, right after a COMMIT (`SQLRUN_STOP_AT`,
//!   src/pause.rs).
//!
//! The others run with `lock_timeout` at 1 s, so any wait for a would end in exit 2; and
//! each must finish while a is still held, so its time cannot grow with a's date. The
//! assertions read the rows: who computed what, what was skipped and by whose hold, what
//! is still held, and that the numbers equal a clean run's.
//!
//! And the audit trail keeps the server's clock: a runner whose clock is two hours ahead
//! (libfaketime) records the server's times.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::faults::*;
use crate::procs::*;
use crate::support::*;

const LIMIT: Duration = Duration::from_secs(60);

/// A runner on the sandbox whose sessions are named `app` and wait at most 1 s for any
/// lock (lock_timeout): a wait for another runner's date would end in exit 2.
fn impatient(sb: &Sandbox, app: &str, args: &[&str]) -> Command {
    let (url, schema) = sb.url();
    let url = format!("{}&options=-c%20lock_timeout%3D1s", with_app(&url, app));
    cmd_with_url(&url, &schema, args)
}

/// The newest run requested by `by`.
fn run_of(sb: &Sandbox, by: &str) -> i64 {
    sb.count(&format!(
        "SELECT max(run_id) FROM runs WHERE requested_by = '{by}'"
    ))
}

fn set(dates: &[String]) -> BTreeSet<String> {
    dates.iter().cloned().collect()
}

fn one(ds: &str) -> BTreeSet<String> {
    BTreeSet::from([ds.to_string()])
}

/// A sandbox with `days` days of orders from `start`: the sandbox, the orders, the dates.
fn story(seed: u64, start: &str, days: i64) -> (Sandbox, Orders, Vec<String>) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, start, days, days > 10);
    sb.insert_orders(&orders.rows);
    let all = dates(start, &day(start, days - 1));
    (sb, orders, all)
}

/// Runner a (sessions named `app`) applying `interval`, once it has stopped itself at
/// `point` (SQLRUN_STOP_AT).
fn stopped_at(sb: &Sandbox, app: &str, interval: &str, point: &str) -> Proc {
    let mut cmd = impatient(sb, app, &["apply", "--interval", interval, "--by", "a"]);
    cmd.env("SQLRUN_STOP_AT", point);
    let mut a = Proc::spawn(&format!("runner a (stopped at {point})"), cmd);
    wait_until(&format!("a stopped itself at {point}"), LIMIT, || {
        a.assert_running("it stopped");
        a.is_stopped()
    });
    a
}

/// `args` run to their end (bounded) by an impatient runner whose sessions are named
/// after `name`.
fn finished(sb: &Sandbox, name: &str, args: &[&str]) -> Run {
    Proc::spawn(
        &format!("runner {name}"),
        impatient(sb, &app_name(sb, name), args),
    )
    .finish(LIMIT)
}

fn expect_exit(code: i32, run: Run) -> Run {
    assert_eq!(
        run.code, code,
        "exit {}, wanted {code}\nstdout: {}\nstderr: {}",
        run.code, run.stdout, run.stderr
    );
    run
}

/// The dates `run_id` holds whose reservation row a transaction has locked this instant.
fn locked_reservations(sb: &Sandbox, run_id: i64) -> BTreeSet<String> {
    let mut client = sb.pg_client();
    let mut probe = client.transaction().expect("a transaction");
    let free: BTreeSet<String> = probe
        .query(
            "SELECT CAST(ds AS text) FROM reservations WHERE run_id = $1 FOR UPDATE SKIP LOCKED",
            &[&run_id],
        )
        .expect("the unlocked reservations")
        .iter()
        .map(|r| r.get(0))
        .collect();
    probe.rollback().expect("rollback");
    reservations_of(sb, run_id)
        .difference(&free)
        .cloned()
        .collect()
}

/// Waits until the server has no session named `app`.
fn wait_sessions_gone(sb: &Sandbox, app: &str) {
    wait_until(&format!("{app}'s sessions are gone"), LIMIT, || {
        sb.count(&format!(
            "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE application_name = '{app}'"
        )) == 0
    });
}

/// A run's dates with this status.
fn with_status(sb: &Sandbox, run_id: i64, status: &str) -> BTreeSet<String> {
    partitions(sb, run_id)
        .into_iter()
        .filter(|(_, s)| s == status)
        .map(|(ds, _)| ds)
        .collect()
}

/// Runner `other` skipped exactly `held`, each held by `holder`, said so on stderr, and
/// computed every other date of `all`; it ended partial, exit 99.
fn assert_skipped_exactly(
    sb: &Sandbox,
    other: &Run,
    all: &[String],
    held: &BTreeSet<String>,
    holder: i64,
) {
    assert_eq!(
        other.code, 99,
        "b skips a's dates and computes the rest, without waiting\nstderr: {}",
        other.stderr
    );
    let other_id = run_of(sb, "b");
    assert_eq!(
        &with_status(sb, other_id, "skipped"),
        held,
        "b skips exactly a's dates"
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {other_id} \
             AND status = 'skipped' AND held_by IS DISTINCT FROM {holder}"
        )),
        0,
        "each skip names a"
    );
    for ds in held {
        assert!(
            reports_skip(&other.stderr, ds, &holder.to_string()),
            "b reports {ds} as held by run {holder}:\n{}",
            other.stderr
        );
    }
    let rest: BTreeSet<String> = set(all).difference(held).cloned().collect();
    assert_eq!(
        with_status(sb, other_id, "success"),
        rest,
        "b computes every free date"
    );
    assert_eq!(status_of(sb, other_id), "partial");
}

// ---------------------------------------------------------------------------------------
// A date that lasts as long as the test wants

/// The date `ds` of daily_revenue lasts until the gate opens: its insert polls an advisory
/// lock that the test's own session holds (polling, so no lock_timeout ends the wait). A
/// test may close several gates, one per date.
struct Gate {
    client: postgres::Client,
    key: String,
}

impl Gate {
    fn close(sb: &Sandbox, ds: &str) -> Gate {
        let name = format!("gate_{}", ds.replace('-', ""));
        let key = format!("hashtext('{name} ' || current_schema())");
        sb.exec(&format!(
            "CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
               IF NEW.ds = DATE '{ds}' THEN \
                 WHILE NOT pg_catalog.pg_try_advisory_xact_lock_shared({key}) LOOP \
                   PERFORM pg_catalog.pg_sleep(0.02); \
                 END LOOP; \
               END IF; \
               RETURN NULL; END $$; \
             CREATE TRIGGER {name} AFTER INSERT ON daily_revenue FOR EACH ROW \
             EXECUTE FUNCTION {name}();"
        ));
        let mut client = sb.pg_client();
        client
            .batch_execute(&format!("SELECT pg_advisory_lock({key})"))
            .expect("the test holds the gate's lock");
        Gate { client, key }
    }

    /// Opens the gate; the server's time just before.
    fn open(mut self) -> String {
        let at = self
            .client
            .query_one("SELECT CAST(clock_timestamp() AS text)", &[])
            .expect("the server's time")
            .get(0);
        self.client
            .batch_execute(&format!("SELECT pg_advisory_unlock({})", self.key))
            .expect("the gate opens");
        at
    }
}

/// Waits until a session named `app` is inside the gate.
fn wait_at_gate(sb: &Sandbox, runner: &mut Proc, app: &str) {
    wait_in_gates(sb, runner, app, 1);
}

/// Waits until `n` sessions named `app` are inside gates.
fn wait_in_gates(sb: &Sandbox, runner: &mut Proc, app: &str, n: i64) {
    wait_until(
        &format!("{n} session(s) of {app} inside long dates"),
        LIMIT,
        || {
            runner.assert_running("it reached its long date");
            sb.count(&format!(
                "SELECT count(*) FROM pg_catalog.pg_stat_activity \
             WHERE application_name = '{app}' AND wait_event = 'PgSleep'"
            )) >= n
        },
    );
}

/// A runner (sessions named `app`) running `args`, once it is inside a gate.
fn at_gate(sb: &Sandbox, app: &str, args: &[&str]) -> Proc {
    let mut runner = Proc::spawn(&format!("runner {app}"), impatient(sb, app, args));
    wait_at_gate(sb, &mut runner, app);
    runner
}

/// After every runner has ended: nothing is held, and the numbers are a clean run's.
fn assert_ends_clean(sb: &Sandbox, expected: &Daily, what: &str) {
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations"),
        0,
        "{what}: nothing is left held"
    );
    assert_eq!(sb.daily(), *expected, "{what}");
    assert_whole(sb, expected, what);
}

/// a is still inside its long date `ds`: running, holding it, nothing recorded for it.
fn assert_still_in_long_date(sb: &Sandbox, a: &mut Proc, a_id: i64, ds: &str, after: &str) {
    a.assert_running(after);
    assert!(
        reservations_of(sb, a_id).contains(ds) && !partitions(sb, a_id).contains_key(ds),
        "{after}: a is still inside its long date {ds}"
    );
}

#[test]
fn a_long_date_makes_no_other_runner_wait_and_seals_beside_it_do_not_wait() {
    let start = "2026-03-01";
    let (sb, orders, all) = story(808, start, 40);
    let long = day(start, 17);
    let gate = Gate::close(&sb, &long);

    let a_app = app_name(&sb, "a");
    let mut a = at_gate(&sb, &a_app, &["apply", "--interval", &long, "--by", "a"]);
    let a_id = run_of(&sb, "a");

    // b over 40 dates, 39 of them free.
    let clock = Instant::now();
    let interval = format!("{start}..{}", all[39]);
    let b = finished(&sb, "b", &["apply", "--interval", &interval, "--by", "b"]);
    let b_took = clock.elapsed();
    assert_still_in_long_date(&sb, &mut a, a_id, &long, "after b");
    assert_skipped_exactly(&sb, &b, &all, &one(&long), a_id);

    // A seal of dates b computed does not wait for a's date; one that takes in a's date is
    // refused at once, whole.
    let clock = Instant::now();
    let first_week = format!("{start}..{}", all[6]);
    let sealed = finished(
        &sb,
        "s",
        &[
            "seal",
            "--interval",
            &first_week,
            "--reason",
            "sent beside a long date",
        ],
    );
    let seal_took = clock.elapsed();
    assert_eq!(
        sealed.code, 0,
        "the seal beside a long date\nstderr: {}",
        sealed.stderr
    );
    assert_eq!(sb.count("SELECT count(*) FROM seals"), 7);
    let around = format!("{}..{}", all[15], all[19]);
    let refused = finished(
        &sb,
        "s",
        &[
            "seal",
            "--interval",
            &around,
            "--reason",
            "takes in a held date",
        ],
    );
    assert_eq!(
        refused.code, 2,
        "a seal over a held date is refused\nstderr: {}",
        refused.stderr
    );
    contains_all(&refused.stderr, &[&long, &format!("run {a_id}")]);
    assert_eq!(
        sb.count("SELECT count(*) FROM seals"),
        7,
        "nothing more is sealed"
    );
    // Readers never wait either.
    let status = finished(&sb, "r", &["status", "--interval", &long]);
    assert_eq!(
        status.code, 0,
        "status beside a long date\nstderr: {}",
        status.stderr
    );
    assert!(
        status.stdout.contains(&format!("run {a_id}")),
        "status says who holds {long}:\n{}",
        status.stdout
    );
    assert_still_in_long_date(&sb, &mut a, a_id, &long, "after the seals");
    eprintln!(
        "nowait: b computed 39 dates and skipped a's long date in {:.2} s; a seal of 7 dates \
         beside it took {:.2} s",
        b_took.as_secs_f64(),
        seal_took.as_secs_f64()
    );

    let opened_at = gate.open();
    let a = a.expect(0, LIMIT);
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {a_id} \
             AND finished_at > CAST('{opened_at}' AS timestamptz) \
             AND started_at <= CAST('{opened_at}' AS timestamptz)"
        )),
        1,
        "a's long date records when it started and when its work ended (not when its \
         transaction began)"
    );
    assert_eq!(
        with_status(&sb, a_id, "success"),
        one(&long),
        "a computed its date\n{}",
        a.stderr
    );
    assert_ends_clean(&sb, &orders.expected(), "after a and b");
}

/// `sqlrun release` of a run whose date is in flight: it frees the rest at once and says
/// which date it leaves to the date's own transaction; `then_killed`: a is killed in that
/// date, so its reservation outlives the released run until the next writer reclaims it.
fn release_beside_a_long_date(then_killed: bool) {
    let start = "2026-04-01";
    let (sb, orders, all) = story(if then_killed { 818 } else { 828 }, start, 8);
    let mine = all[3..7].to_vec();
    let long = mine[0].clone();
    let gate = Gate::close(&sb, &long);
    let a_app = app_name(&sb, "a");
    let interval = format!("{}..{}", mine[0], mine[3]);
    let mut a = at_gate(
        &sb,
        &a_app,
        &["apply", "--interval", &interval, "--by", "a"],
    );
    let a_id = run_of(&sb, "a");

    let clock = Instant::now();
    let released = finished(&sb, "rel", &["release", &a_id.to_string()]);
    let took = clock.elapsed();
    assert_eq!(
        released.code, 0,
        "release beside a long date\nstderr: {}",
        released.stderr
    );
    assert!(
        released.stdout.contains("3 dates freed"),
        "{}",
        released.stdout
    );
    contains_all(&released.stderr, &[&long, "this instant"]);
    assert_still_in_long_date(&sb, &mut a, a_id, &long, "after the release");
    assert_eq!(
        reservations_of(&sb, a_id),
        one(&long),
        "the date in flight stays a's"
    );
    assert_eq!(status_of(&sb, a_id), "released");
    assert_eq!(
        sb.rows(&format!(
            "SELECT ds_start, ds_end, date_count FROM run_events \
             WHERE run_id = {a_id} AND event = 'released'"
        )),
        [[mine[1].clone(), mine[3].clone(), "3".into()]],
        "the release is recorded with the dates it freed"
    );
    eprintln!(
        "nowait: release beside a long date took {:.2} s",
        took.as_secs_f64()
    );

    if then_killed {
        a.sigkill();
        wait_sessions_gone(&sb, &a_app);
        assert_eq!(
            reservations_of(&sb, a_id),
            one(&long),
            "a's long date rolled back, still reserved"
        );
        drop(gate);
        // The next writer finds the released run's session gone and reclaims the date.
        let b = expect_exit(
            0,
            finished(&sb, "b", &["apply", "--interval", &interval, "--by", "b"]),
        );
        let b_id = run_of(&sb, "b");
        assert_eq!(
            with_status(&sb, b_id, "success"),
            set(&mine),
            "b computes all four\n{}",
            b.stderr
        );
        assert_eq!(
            reclaims(&sb)
                .iter()
                .map(|r| (r.0, r.1, r.2))
                .collect::<Vec<_>>(),
            [(a_id, b_id, 1)],
            "b reclaims the one date a still held"
        );
        assert_eq!(status_of(&sb, a_id), "released", "a stays released");
    } else {
        gate.open();
        let a = a.finish(LIMIT);
        assert_eq!(
            a.code, 1,
            "a stops once its next date is gone\nstdout: {}\nstderr: {}",
            a.stdout, a.stderr
        );
        assert!(
            a.stderr.contains("no longer held by this run"),
            "{}",
            a.stderr
        );
        assert_eq!(
            with_status(&sb, a_id, "success"),
            one(&long),
            "a commits its date in flight, and nothing else"
        );
        assert_eq!(status_of(&sb, a_id), "released");
        let rest = format!("{}..{}", mine[1], mine[3]);
        expect_exit(
            0,
            finished(&sb, "b", &["apply", "--interval", &rest, "--by", "b"]),
        );
    }
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations"),
        0,
        "nothing is left held"
    );
    let expected = orders.expected();
    let computed = sb.daily();
    for ds in &mine {
        assert_eq!(computed.get(ds), expected.get(ds), "{ds} is right");
    }
    assert_whole(&sb, &expected, "after the release");
}

#[test]
fn release_beside_a_long_date_frees_the_rest_and_the_date_in_flight_commits() {
    release_beside_a_long_date(false);
}

#[test]
fn release_beside_a_long_date_then_the_runner_killed_leaves_that_date_to_be_reclaimed() {
    release_beside_a_long_date(true);
}

// ---------------------------------------------------------------------------------------
// A runner stopped (SIGSTOP) at a point of its life

/// a over 10 dates stops itself at `point`; b over 20 dates computes the 10 (or 11) it
/// does not hold and skips a's, with no wait; a seal of b's dates does not wait either;
/// a goes on when continued and finishes its dates.
fn stopped_runner(point: &str, seed: u64) {
    let start = "2026-05-01";
    let (sb, orders, all) = story(seed, start, 20);
    let a_app = app_name(&sb, "a");
    let a_interval = format!("{start}..{}", all[9]);
    let a = stopped_at(&sb, &a_app, &a_interval, point);
    let a_id = run_of(&sb, "a");
    let done_by_a = with_status(&sb, a_id, "success");
    let held = reservations_of(&sb, a_id);
    let in_transaction = sb.count(&format!(
        "SELECT count(*) FROM pg_catalog.pg_stat_activity \
         WHERE application_name = '{a_app}' AND state = 'idle in transaction'"
    ));
    match point {
        "committed" => assert_eq!(done_by_a, set(&all[..1]), "a committed its first date"),
        _ => assert!(done_by_a.is_empty(), "a has committed nothing yet"),
    }
    let expected_held = match point {
        "committed" => set(&all[1..10]),
        _ => set(&all[..10]),
    };
    assert_eq!(held, expected_held, "a holds the rest of its dates");
    assert_eq!(
        in_transaction,
        i64::from(point == "in-date"),
        "a's session is idle inside a transaction exactly when it stopped inside a date"
    );

    let clock = Instant::now();
    let b = finished(
        &sb,
        "b",
        &[
            "apply",
            "--interval",
            &format!("{start}..{}", all[19]),
            "--by",
            "b",
        ],
    );
    let b_took = clock.elapsed();
    assert!(a.is_stopped(), "a is still stopped after b");
    assert_skipped_exactly(&sb, &b, &all, &held, a_id);
    let sealed = finished(
        &sb,
        "s",
        &[
            "seal",
            "--interval",
            &format!("{}..{}", all[10], all[12]),
            "--reason",
            "beside a stopped runner",
        ],
    );
    assert_eq!(
        sealed.code, 0,
        "a seal beside a stopped runner\nstderr: {}",
        sealed.stderr
    );
    assert!(a.is_stopped(), "a is still stopped after the seal");
    eprintln!(
        "nowait: a stopped at {point}: b computed {} dates and skipped a's {} in {:.2} s",
        20 - held.len(),
        held.len(),
        b_took.as_secs_f64()
    );

    a.signal(libc::SIGCONT);
    let a = a.expect(0, LIMIT);
    assert_eq!(
        with_status(&sb, a_id, "success"),
        set(&all[..10]),
        "a finishes its dates\n{}",
        a.stderr
    );
    assert_eq!(status_of(&sb, a_id), "success");
    assert_eq!(
        reclaims(&sb),
        Vec::new(),
        "a live runner, stopped, is never reclaimed"
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations"),
        0,
        "nothing is left held"
    );
    let expected = orders.expected();
    assert_eq!(sb.daily(), expected);
    assert_whole(&sb, &expected, &format!("after a stopped at {point}"));
}

#[test]
fn a_runner_stopped_before_its_first_date_makes_nobody_wait() {
    stopped_runner("reserved", 838);
}

#[test]
fn a_runner_stopped_inside_a_date_makes_nobody_wait() {
    stopped_runner("in-date", 848);
}

#[test]
fn a_runner_stopped_right_after_a_commit_makes_nobody_wait() {
    stopped_runner("committed", 858);
}

// ---------------------------------------------------------------------------------------
// The server's clock

/// `faketime`, or a panic that says how to get it.
fn faketime() -> Command {
    let found = Command::new("faketime").arg("--version").output().is_ok();
    assert!(
        found,
        "this test needs libfaketime's `faketime` command: apt-get install faketime (.ci/run does)"
    );
    let mut cmd = Command::new("faketime");
    cmd.args(["-f", "+2h"]);
    cmd
}

#[test]
fn a_runner_whose_clock_is_two_hours_ahead_records_the_servers_time() {
    let start = "2026-06-01";
    let (sb, _, _) = story(868, start, 5);
    let failing = day(start, 3);
    sb.fail_inserts("daily_revenue", &failing, When::Before);

    // The wrapper does move the runner's clock.
    let fake = faketime()
        .args(["date", "+%s"])
        .output()
        .expect("faketime date");
    let fake: i64 = String::from_utf8_lossy(&fake.stdout)
        .trim()
        .parse()
        .expect("a time");
    let real = chrono::Utc::now().timestamp();
    assert!(
        (fake - real - 7200).abs() < 60,
        "faketime moves the clock 2 h: {fake} vs {real}"
    );

    let interval = format!("{start}..{}", day(start, 4));
    let run = Proc::spawn(
        "sqlrun under faketime",
        wrapped(
            faketime(),
            &sb.cmd(&[
                "apply",
                "--interval",
                &interval,
                "--keep-going",
                "--by",
                "ahead",
            ]),
        ),
    )
    .finish(LIMIT);
    assert_eq!(
        run.code, 1,
        "one date fails on purpose\nstderr: {}",
        run.stderr
    );
    let run_id = run_of(&sb, "ahead");
    let far = |table: &str, column: &str| {
        sb.count(&format!(
            "SELECT count(*) FROM {table} WHERE run_id = {run_id} \
             AND ({column} IS NULL OR abs(extract(epoch FROM now() - {column})) > 120)"
        ))
    };
    for column in ["created_at", "started_at", "finished_at"] {
        assert_eq!(far("runs", column), 0, "runs.{column} is the server's time");
    }
    for column in ["started_at", "finished_at"] {
        assert_eq!(
            far("run_partitions", column),
            0,
            "run_partitions.{column} is the server's time"
        );
    }
    assert_eq!(
        far("run_events", "at"),
        0,
        "run_events.at is the server's time"
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {run_id} AND finished_at < started_at"
        )),
        0,
        "no date ends before it starts"
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT status, count(*) FROM run_partitions WHERE run_id = {run_id} \
             GROUP BY status ORDER BY status"
        )),
        [["failed", "1"], ["success", "4"]]
    );
}

// ---------------------------------------------------------------------------------------
// The count after a broken connection

/// a's session ends right after a date's COMMIT was acknowledged (a stopped there, then its
/// session terminated): that date is counted as committed, the next one as rolled back,
/// and nothing is said to be unknown.
#[test]
fn an_acknowledged_commit_is_counted_when_the_connection_breaks_right_after() {
    let start = "2026-07-01";
    let (sb, orders, all) = story(878, start, 5);
    let a_app = app_name(&sb, "a");
    let interval = format!("{start}..{}", all[4]);
    let a = stopped_at(&sb, &a_app, &interval, "committed");
    let a_id = run_of(&sb, "a");
    sb.exec(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity \
         WHERE application_name = '{a_app}'"
    ));
    wait_sessions_gone(&sb, &a_app);
    a.signal(libc::SIGCONT);
    let a = a.finish(LIMIT);
    assert_eq!(a.code, 1, "a lost its connection\nstderr: {}", a.stderr);
    contains_all(
        &a.stderr,
        &[
            &format!("during {}", all[1]),
            &format!("{} rolled back", all[1]),
            "the 1 date it committed stay committed",
        ],
    );
    assert!(!a.stderr.contains("may or may not"), "{}", a.stderr);
    assert_eq!(with_status(&sb, a_id, "success"), one(&all[0]));

    let b = expect_exit(
        0,
        finished(
            &sb,
            "b",
            &[
                "apply",
                "--interval",
                &interval,
                "--only",
                "missing",
                "--by",
                "b",
            ],
        ),
    );
    assert_eq!(
        with_status(&sb, run_of(&sb, "b"), "success"),
        set(&all[1..]),
        "{}",
        b.stderr
    );
    let expected = orders.expected();
    assert_eq!(sb.daily(), expected);
    assert_whole(&sb, &expected, "after the rerun");
}

// ---------------------------------------------------------------------------------------
// A runner stopped inside a bookkeeping step

/// a stops inside the transaction that reserves its dates, holding the pipeline's turn:
/// b waits for it, but only until the server ends a's idle session (10 s, sqlrun's own
/// bound), then gets every date (a's reservations never committed); a, continued, finds
/// its connection gone and has written nothing.
#[test]
fn a_runner_stopped_inside_its_reserve_holds_others_up_only_until_the_server_ends_it() {
    let start = "2026-08-01";
    let (sb, orders, all) = story(888, start, 6);
    let a_app = app_name(&sb, "a");
    let interval = format!("{start}..{}", all[5]);
    let a = stopped_at(&sb, &a_app, &interval, "reserving");

    let clock = Instant::now();
    let b = expect_exit(
        0,
        finished(&sb, "b", &["apply", "--interval", &interval, "--by", "b"]),
    );
    let b_took = clock.elapsed();
    let b_id = run_of(&sb, "b");
    assert_eq!(
        with_status(&sb, b_id, "success"),
        set(&all),
        "b computes every date\n{}",
        b.stderr
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM runs WHERE requested_by = 'a'"),
        0,
        "a's reserve never committed: no run row of a's"
    );
    eprintln!(
        "nowait: a stopped inside its reserve: b waited for its turn and finished after {:.1} s",
        b_took.as_secs_f64()
    );

    a.signal(libc::SIGCONT);
    let a = a.finish(LIMIT);
    assert_eq!(
        a.code, 1,
        "a's session was ended while it was stopped, before it wrote anything: not bad \
         input, a retry is right\nstderr: {}",
        a.stderr
    );
    // The server's reason comes with the end of the connection, unless the socket closed
    // before the client read it.
    assert!(
        a.stderr.contains("nothing of that transaction was written")
            || a.stderr.contains("connection"),
        "a says its connection ended: {}",
        a.stderr
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM runs WHERE requested_by = 'a'"),
        0,
        "a wrote nothing\n{}",
        a.stderr
    );
    eprintln!("nowait: a, continued: exit {}: {}", a.code, a.stderr.trim());
    assert_ends_clean(&sb, &orders.expected(), "after b");
}

// ---------------------------------------------------------------------------------------
// Dates that meet another run's date in flight

/// a, released during its long date, goes on to its next date, which b now holds and is
/// computing: a does not wait for b's date (its fencing never locks another run's row);
/// it stops at once, records nothing for that date, and b's date commits.
#[test]
fn a_released_runs_next_date_held_by_a_date_in_flight_stops_it_without_waiting() {
    let start = "2026-09-01";
    let (sb, orders, all) = story(898, start, 4);
    let (first, second) = (all[1].clone(), all[2].clone());
    let gate_a = Gate::close(&sb, &first);
    let gate_b = Gate::close(&sb, &second);
    let a_app = app_name(&sb, "a");
    let a = at_gate(
        &sb,
        &a_app,
        &[
            "apply",
            "--interval",
            &format!("{first}..{second}"),
            "--by",
            "a",
        ],
    );
    let a_id = run_of(&sb, "a");
    expect_exit(0, finished(&sb, "rel", &["release", &a_id.to_string()]));
    let b_app = app_name(&sb, "b");
    let mut b = at_gate(&sb, &b_app, &["apply", "--interval", &second, "--by", "b"]);
    let b_id = run_of(&sb, "b");

    gate_a.open();
    let a = a.finish(LIMIT);
    b.assert_running("a stopped");
    assert_eq!(
        a.code, 1,
        "a stops at the date b holds\nstderr: {}",
        a.stderr
    );
    contains_all(
        &a.stderr,
        &[&format!(
            "{second} is no longer held by this run (run {b_id} holds it now)"
        )],
    );
    assert_eq!(
        partitions(&sb, a_id).len(),
        1,
        "a records only the date it computed: {:?}",
        partitions(&sb, a_id)
    );
    assert_eq!(with_status(&sb, a_id, "success"), one(&first));

    gate_b.open();
    expect_exit(0, b.finish(LIMIT));
    assert_eq!(with_status(&sb, b_id, "success"), one(&second));
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations"),
        0,
        "nothing is left held"
    );
    let (expected, daily) = (orders.expected(), sb.daily());
    for ds in [&first, &second] {
        assert_eq!(daily.get(ds), expected.get(ds), "{ds} is right");
    }
    assert_whole(&sb, &expected, "after a and b");
}

/// `apply --jobs 2` whose own session is terminated while both its sessions are inside
/// long dates: the next runner reclaims what it can without waiting for the worker's date
/// in flight (left held, skipped); the worker, once its date's work is done, finds its run
/// gone and rolls back instead of committing; a later run reclaims and computes that date.
#[test]
fn a_worker_of_a_dead_run_never_commits_and_the_reclaim_does_not_wait_for_it() {
    let start = "2026-10-01";
    let (sb, orders, all) = story(908, start, 4);
    let gates = [Gate::close(&sb, &all[0]), Gate::close(&sb, &all[1])];
    let a_app = app_name(&sb, "a");
    let interval = format!("{start}..{}", all[3]);
    let mut a = Proc::spawn(
        "runner a (--jobs 2)",
        impatient(
            &sb,
            &a_app,
            &["apply", "--interval", &interval, "--jobs", "2", "--by", "a"],
        ),
    );
    wait_in_gates(&sb, &mut a, &a_app, 2);
    let a_id = run_of(&sb, "a");
    // The run's own session holds the run's lock (hold_run.sql).
    let own = format!(
        "SELECT l.pid FROM pg_catalog.pg_locks AS l WHERE l.locktype = 'advisory' \
         AND l.objid = {a_id} AND l.objsubid = 2 AND l.granted \
         AND l.classid = CAST(CAST(current_schema() AS regnamespace) AS oid)"
    );
    let own_pid = sb.count(&own);
    assert!(
        reservations_of(&sb, a_id).is_superset(&set(&all[..2])),
        "a holds both dates in flight"
    );
    sb.exec(&format!("SELECT pg_terminate_backend({own_pid})"));
    wait_until("a's own session is gone", LIMIT, || {
        sb.count(&own.replace("l.pid", "count(*)")) == 0
    });

    // The worker's date in flight is the one whose reservation row is still locked; the
    // other gated date's transaction ended with the session, so its gate can open.
    let in_flight = locked_reservations(&sb, a_id);
    assert_eq!(in_flight.len(), 1, "one date is in flight: {in_flight:?}");
    let in_flight = in_flight.into_iter().next().unwrap();
    let [gate_0, gate_1] = gates;
    let worker_gate = if in_flight == all[0] {
        gate_1.open();
        gate_0
    } else {
        gate_0.open();
        gate_1
    };

    let b = finished(&sb, "b", &["apply", "--interval", &interval, "--by", "b"]);
    let b_id = run_of(&sb, "b");
    assert_eq!(
        b.code, 99,
        "b skips the worker's date in flight, computes the rest\nstderr: {}",
        b.stderr
    );
    assert_eq!(with_status(&sb, b_id, "skipped"), one(&in_flight));
    assert_eq!(
        reservations_of(&sb, a_id),
        one(&in_flight),
        "the date in flight stays a's"
    );
    let rest: BTreeSet<String> = set(&all).difference(&one(&in_flight)).cloned().collect();
    assert_eq!(with_status(&sb, b_id, "success"), rest);

    worker_gate.open();
    let a = a.finish(LIMIT);
    assert_eq!(a.code, 1, "a lost its own session\nstderr: {}", a.stderr);
    assert!(
        !with_status(&sb, a_id, "success").contains(&in_flight),
        "the worker of a dead run does not commit its date"
    );
    let c = expect_exit(
        0,
        finished(&sb, "c", &["apply", "--interval", &in_flight, "--by", "c"]),
    );
    assert_eq!(
        with_status(&sb, run_of(&sb, "c"), "success"),
        one(&in_flight),
        "{}",
        c.stderr
    );
    assert_ends_clean(&sb, &orders.expected(), "after the reclaims");
}

/// A view that must be replaced (its text drifted) while a date of another run reads it:
/// the sync waits at most 2 s for that date, then refuses (exit 2, nothing written) and
/// says why, instead of holding the pipeline's turn and making every date that reads the
/// view queue behind it; once the date is done, the same command replaces the view.
#[test]
fn replacing_a_view_a_date_in_flight_reads_is_refused_at_once_and_said() {
    let start = "2026-11-01";
    let (sb, orders, all) = story(918, start, 4);
    let gate = Gate::close(&sb, &all[0]);
    let a_app = app_name(&sb, "a");
    let mut a = at_gate(&sb, &a_app, &["apply", "--interval", &all[0], "--by", "a"]);
    sb.exec("UPDATE sqlrun_views SET create_sql = 'drifted' WHERE name = 'orders_latest'");

    let rest = format!("{}..{}", all[1], all[3]);
    let b = expect_exit(
        2,
        finished(&sb, "b", &["apply", "--interval", &rest, "--by", "b"]),
    );
    contains_all(
        &b.stderr,
        &[
            "waits for the dates of other runs that read them",
            "nothing was changed",
        ],
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM runs WHERE requested_by = 'b'"),
        0,
        "b wrote nothing"
    );
    a.assert_running("b was refused");

    gate.open();
    expect_exit(0, a.finish(LIMIT));
    expect_exit(
        0,
        finished(&sb, "b", &["apply", "--interval", &rest, "--by", "b"]),
    );
    assert_eq!(
        sb.count(
            "SELECT count(*) FROM sqlrun_views \
             WHERE name = 'orders_latest' AND create_sql <> 'drifted'"
        ),
        1,
        "the view was replaced"
    );
    let expected = orders.expected();
    assert_eq!(sb.daily(), expected);
    assert_whole(&sb, &expected, "after the view was replaced");
}

// ---------------------------------------------------------------------------------------
// A campaign: a crowd whose runners are stopped, continued and released at random

/// Rounds of five runners over random overlapping intervals (dates made slow, every write
/// logged) while a controller stops (SIGSTOP) random runners for random moments, anywhere
/// in their lives, releases a random running run, and seals a random interval. Every
/// rule must hold: no runner waits past a bound (no exit 2, no lock timeout anywhere), no
/// date fails, a skip names a run that held the date, no run writes a date it does not
/// record as done (never overwrites), nothing is left held, the numbers equal a clean run.
#[test]
fn a_crowd_stopped_continued_and_released_at_random_keeps_every_rule() {
    use rand::{Rng, SeedableRng};
    // A fixed seed, so that a failure can be replayed; NOWAIT_SEED=N tries another.
    let seed = std::env::var("NOWAIT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(9_2026);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let start = "2025-12-01";
    let (sb, orders, all) = story(928, start, 24);
    slow_dates(&sb, 100);
    audit_writes(&sb);
    let expected = orders.expected();
    let (mut stops, mut releases, mut seals) = (0, 0, 0);
    for round in 1..=4 {
        let first_write = sb.count("SELECT coalesce(max(id), 0) FROM faults_writes");
        let first_run = max_run_id(&sb) + 1;
        let mut runners: Vec<(String, Proc)> = (0..5)
            .map(|k| {
                let a = rng.random_range(0..20);
                let b = rng.random_range(a..24);
                let by = format!("crowd{k}r{round}");
                let interval = format!("{}..{}", all[a], all[b]);
                let args = [
                    "apply",
                    "--interval",
                    interval.as_str(),
                    "--by",
                    by.as_str(),
                ];
                let proc = Proc::spawn(&by, impatient(&sb, &app_name(&sb, &by), &args));
                (by, proc)
            })
            .collect();
        // The controller: stops and continues, one release, one seal.
        let mut others: Vec<Run> = Vec::new();
        let (release_at, seal_at) = (rng.random_range(0..10), rng.random_range(0..10));
        for step in 0..10 {
            let k = rng.random_range(0..runners.len());
            let (_, victim) = &mut runners[k];
            if !victim.has_exited() {
                victim.signal(libc::SIGSTOP);
                std::thread::sleep(Duration::from_millis(rng.random_range(50..800)));
                victim.signal(libc::SIGCONT);
                stops += 1;
            }
            if step == release_at {
                let running = sb.rows(&format!(
                    "SELECT run_id FROM runs WHERE status = 'running' AND run_id >= {first_run} \
                     ORDER BY run_id LIMIT 1"
                ));
                if let Some(row) = running.first() {
                    let released = finished(&sb, "rel", &["release", &row[0]]);
                    assert!(
                        released.code == 0 || released.code == 2,
                        "{}",
                        released.stderr
                    );
                    releases += i32::from(released.code == 0);
                    others.push(released);
                }
            }
            if step == seal_at {
                let a = rng.random_range(0..21);
                let interval = format!("{}..{}", all[a], all[a + 2]);
                let why = format!("round {round}");
                let sealed = finished(
                    &sb,
                    "seal",
                    &["seal", "--interval", &interval, "--reason", &why],
                );
                assert!(sealed.code == 0 || sealed.code == 2, "{}", sealed.stderr);
                seals += i32::from(sealed.code == 0);
                others.push(sealed);
            }
            std::thread::sleep(Duration::from_millis(rng.random_range(0..150)));
        }
        let results: Vec<(String, Run)> = runners
            .into_iter()
            .map(|(by, proc)| (by, proc.finish(LIMIT)))
            .collect();
        assert_campaign_round(&sb, round, &results, &others, first_write);
    }
    eprintln!(
        "nowait: campaign (seed {seed}): 4 rounds of 5 runners, {stops} stops, {releases} \
         releases, {seals} seals"
    );
    expect_exit(
        0,
        finished(
            &sb,
            "final",
            &["apply", "--interval", &format!("{start}..{}", all[23])],
        ),
    );
    assert_eq!(sb.daily(), expected);
    assert_eq!(sb.current(), expected, "no value changed, so no correction");
    assert_whole(&sb, &expected, "after the campaign");
}

/// What every round of the campaign must leave.
fn assert_campaign_round(
    sb: &Sandbox,
    round: i32,
    results: &[(String, Run)],
    others: &[Run],
    first_write: i64,
) {
    for run in results.iter().map(|(_, r)| r).chain(others) {
        assert!(
            !run.stderr.contains("ran past its bound") && !run.stderr.contains("lock timeout"),
            "round {round}: nobody waits past a bound:\n{}",
            run.stderr
        );
    }
    for (by, run) in results {
        let run_id = run_of(sb, by);
        let status = status_of(sb, run_id);
        let allowed = match status.as_str() {
            "success" => run.code == 0,
            "partial" => run.code == 99,
            // Released by the controller: it stops at the next date it no longer holds.
            "released" => run.code == 0 || run.code == 1 || run.code == 99,
            _ => false,
        };
        assert!(
            allowed,
            "round {round}: {by} (run {run_id}) ended {status}, exit {}\nstderr: {}",
            run.code, run.stderr
        );
    }
    assert_eq!(
        sb.count("SELECT count(*) FROM run_partitions WHERE status = 'failed'"),
        0,
        "round {round}: no date failed"
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations"),
        0,
        "round {round}: nothing left held"
    );
    let bad_skips = sb.rows(
        "SELECT s.run_id, s.ds, s.held_by FROM run_partitions AS s \
         WHERE s.status = 'skipped' AND (s.held_by IS NULL OR s.held_by = s.run_id)",
    );
    assert!(
        bad_skips.is_empty(),
        "round {round}: every skip names another run: {bad_skips:?}"
    );
    let unrecorded = sb.rows(&format!(
        "SELECT w.run_id, w.ds FROM faults_writes AS w WHERE w.id > {first_write} \
         AND NOT EXISTS (SELECT 1 FROM run_partitions AS p WHERE p.run_id = w.run_id \
                         AND p.ds = w.ds AND p.status = 'success')"
    ));
    assert!(
        unrecorded.is_empty(),
        "round {round}: writes a run does not record as done: {unrecorded:?}"
    );
}

/// `sqlrun release` of a run whose only date is in flight frees nothing, and still records
/// who released it; the run commits that date and ends as the database has it: released.
#[test]
fn releasing_a_run_whose_only_date_is_in_flight_is_recorded_and_the_run_ends_released() {
    let start = "2026-02-01";
    let (sb, orders, all) = story(938, start, 3);
    let gate = Gate::close(&sb, &all[1]);
    let a_app = app_name(&sb, "a");
    let a = at_gate(
        &sb,
        &a_app,
        &["--json", "apply", "--interval", &all[1], "--by", "a"],
    );
    let a_id = run_of(&sb, "a");
    let released = expect_exit(
        0,
        finished(
            &sb,
            "rel",
            &["--json", "release", &a_id.to_string(), "--by", "alice"],
        ),
    );
    let json: serde_json::Value = serde_json::from_str(&released.stdout).expect("JSON");
    assert_eq!(json["released_dates"], 0, "{json}");
    assert_eq!(json["in_flight"], serde_json::json!([all[1]]), "{json}");
    assert_eq!(
        sb.rows(&format!(
            "SELECT date_count, detail FROM run_events WHERE run_id = {a_id} AND event = 'released'"
        )),
        [[
            "0".to_string(),
            "released by alice (sqlrun release)".to_string()
        ]],
        "who released the run is recorded"
    );
    gate.open();
    let a = expect_exit(0, a.finish(LIMIT));
    let report: serde_json::Value = serde_json::from_str(&a.stdout).expect("JSON");
    assert_eq!(report["status"], "released", "{report}");
    assert_eq!(status_of(&sb, a_id), "released");
    assert_eq!(with_status(&sb, a_id, "success"), one(&all[1]));
    assert_eq!(sb.daily().get(&all[1]), orders.expected().get(&all[1]));
}

/// A dead run whose key someone holds shared for a moment (as a worker's liveness check
/// does) is still dead: only the run's own exclusive lock says it is alive.
#[test]
fn a_shared_hold_on_a_dead_runs_key_does_not_make_it_look_alive() {
    let start = "2026-03-01";
    let (sb, orders, all) = story(948, start, 4);
    slow_dates(&sb, 300);
    let a_app = app_name(&sb, "a");
    let interval = format!("{start}..{}", all[3]);
    let mut a = Proc::spawn(
        "runner a",
        impatient(
            &sb,
            &a_app,
            &["apply", "--interval", &interval, "--by", "a"],
        ),
    );
    let a_id = wait_for_dates(&sb, &mut a, 1, LIMIT);
    a.sigkill();
    wait_sessions_gone(&sb, &a_app);
    let mut holder = sb.pg_client();
    holder
        .batch_execute(&format!(
            "SELECT pg_advisory_lock_shared(\
               CAST(CAST(CAST(current_schema() AS regnamespace) AS oid) AS integer), {a_id})"
        ))
        .expect("a shared hold on the run's key");
    sb.exec("DROP TRIGGER burn_time ON daily_revenue");
    let b = expect_exit(
        0,
        finished(&sb, "b", &["apply", "--interval", &interval, "--by", "b"]),
    );
    assert_eq!(
        reclaims(&sb).len(),
        1,
        "b reclaims the dead run\n{}",
        b.stderr
    );
    assert_eq!(status_of(&sb, a_id), "interrupted");
    let expected = orders.expected();
    assert_eq!(sb.daily(), expected);
    assert_whole(&sb, &expected, "after the reclaim");
}
