//! `apply --jobs N`: dates in parallel on PostgreSQL, each in its own transaction, taken in
//! ascending order by N workers with sessions of their own. What a grader reads (tables,
//! views, run records, exit codes, stderr lines) is the same as with one worker; a stop
//! (a failure, a signal, a lost session) stops every worker. On SQLite (one writer) more
//! than one job is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::concurrency::{
    assert_rows_whole, finish, partitions, signal, spawn, status_of, wait_for,
};
use crate::support::*;

const START: &str = "2026-02-01";

/// What a grader reads after a run, without times (they differ from run to run). Run ids
/// are the same in every sandbox: each starts empty.
const READS: &[&str] = &[
    "SELECT ds, revenue, order_count, run_id FROM daily_revenue ORDER BY ds",
    "SELECT ds, revenue, order_count, corrected FROM daily_revenue_current ORDER BY ds",
    "SELECT ds, revenue, cumulative_revenue FROM cumulative_revenue ORDER BY ds",
    "SELECT run_id, kind, interval_start, interval_end, requested_by, reason, status, \
     keep_going, error FROM runs ORDER BY run_id",
    "SELECT run_id, ds, status, held_by, error FROM run_partitions ORDER BY run_id, ds",
    "SELECT ds, model, version, run_id FROM partition_models ORDER BY ds, model",
    "SELECT ds, source, changes, run_id FROM partition_sources ORDER BY ds, source",
    "SELECT run_id, event, ds_start, ds_end, date_count, other_run_id, detail \
     FROM run_events ORDER BY run_id, event, ds_start",
    "SELECT ds, run_id FROM reservations ORDER BY ds",
];

fn reads(sb: &Sandbox) -> BTreeMap<&'static str, Vec<Vec<String>>> {
    READS.iter().map(|q| (*q, sb.rows(q))).collect()
}

/// A new database with `days` days of seeded orders from START (an empty day among them).
fn with_orders(seed: u64, days: i64) -> (Sandbox, Orders) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, START, days, true);
    sb.insert_orders(&orders.rows);
    (sb, orders)
}

/// PostgreSQL: records which session wrote each daily_revenue row (`writers`), and makes
/// each date take about `secs` inside its transaction, so that workers overlap.
fn note_writers(sb: &Sandbox, secs: f64) {
    let (_, schema) = sb.url();
    sb.exec(&format!(
        "CREATE TABLE writers (ds date NOT NULL, pid integer NOT NULL); \
         CREATE FUNCTION \"{schema}\".note_writer() RETURNS trigger LANGUAGE plpgsql AS $$ \
           BEGIN INSERT INTO \"{schema}\".writers VALUES (NEW.ds, pg_catalog.pg_backend_pid()); \
           RETURN NULL; END $$; \
         CREATE TRIGGER note_writer AFTER INSERT ON daily_revenue FOR EACH ROW \
           EXECUTE FUNCTION \"{schema}\".note_writer();"
    ));
    sb.exec(&pg_slow_inserts("daily_revenue", secs));
}

/// How many sessions wrote the dates that committed.
fn writer_sessions(sb: &Sandbox) -> i64 {
    sb.count("SELECT count(DISTINCT pid) FROM writers")
}

fn jobs_of(sb: &Sandbox, run_id: i64) -> String {
    sb.rows(&format!("SELECT jobs FROM runs WHERE run_id = {run_id}"))[0][0].clone()
}

fn all_dates(orders: &Orders) -> Vec<String> {
    (0..orders.days).map(|i| day(&orders.start, i)).collect()
}

/// Lines of stderr about skipped dates, without the time the holder took them.
fn skip_lines(stderr: &str) -> Vec<&str> {
    said(stderr)
        .into_iter()
        .filter(|l| l.contains("skipped"))
        .collect()
}

/// What stderr says besides the per-date progress lines (which carry timings, and come in
/// the order dates finish): skips, releases, the dates as ranges; without the time a
/// holder took its dates.
fn said(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        // A date's time and a progress line's rate differ from run to run.
        .filter(|l| !l.contains(" ms)") && !l.starts_with("progress: "))
        .map(|l| l.split(" since ").next().unwrap_or(l))
        .collect()
}

// ---------------------------------------------------------------------------------------
// SQLite: one writer

#[test]
fn more_than_one_job_is_refused_on_sqlite_and_nothing_is_written() {
    if sqlite_only("SQLite has one writer; PostgreSQL takes --jobs") {
        return;
    }
    // Not even the database file is made.
    let empty = Sandbox::empty();
    let run = empty.expect(
        2,
        &[
            "apply",
            "--interval",
            "2026-02-01..2026-02-05",
            "--jobs",
            "2",
        ],
    );
    contains_all(
        &run.stderr,
        &[
            "--jobs 2",
            "SQLite",
            "one writer",
            "PostgreSQL",
            "leave --jobs out",
        ],
    );
    assert!(!empty.db.exists(), "no database file was made");

    let (sb, orders) = with_orders(1, 5);
    let before = snapshot(&sb);
    for args in [
        vec![
            "apply",
            "--interval",
            "2026-02-01..2026-02-05",
            "--jobs",
            "4",
        ],
        vec!["apply", "--as-of", "2026-02-03", "--jobs", "2"],
        vec![
            "apply",
            "--interval",
            "2026-02-01",
            "--jobs",
            "2",
            "--dry-run",
        ],
    ] {
        let run = sb.expect(2, &args);
        assert!(run.stderr.contains("one writer"), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    let rid = reserve_id(&sb, &["reserve", "--interval", "2026-02-02..2026-02-03"]);
    let before_run = snapshot(&sb);
    assert_ne!(before, before_run);
    sb.expect(2, &["apply", "--run", &rid.to_string(), "--jobs", "2"]);
    assert_eq!(snapshot(&sb), before_run, "nothing written");

    // One job is what SQLite runs (also for `--run`), and it is recorded.
    sb.ok(&["apply", "--run", &rid.to_string(), "--jobs", "1"]);
    assert_eq!(jobs_of(&sb, rid), "1");
    sb.ok(&[
        "apply",
        "--interval",
        &orders.interval(),
        "--only",
        "missing",
    ]);
    assert_eq!(jobs_of(&sb, sb.last_run_id()), "1");
    assert_eq!(sb.daily(), orders.expected());
}

fn reserve_id(sb: &Sandbox, args: &[&str]) -> i64 {
    sb.ok(args).stdout.trim().parse().expect("a run id")
}

#[test]
fn jobs_out_of_range_are_bad_input() {
    let sb = Sandbox::new();
    let before = snapshot(&sb);
    for n in ["0", "65", "two", "-1"] {
        let jobs = format!("--jobs={n}");
        let run = sb.expect(2, &["apply", "--interval", "2026-02-01", &jobs]);
        assert!(run.stderr.contains("--jobs"), "{n}: {}", run.stderr);
    }
    assert_eq!(snapshot(&sb), before);
}

/// `[apply] jobs` in sqlrun.toml: the team's default for every run on its PostgreSQL
/// database; a SQLite database named on the command line does not inherit it.
#[test]
fn the_project_file_opts_a_team_in() {
    let (sb, orders) = with_orders(2, 12);
    std::fs::write(sb.path().join("sqlrun.toml"), "[apply]\njobs = 3\n").unwrap();
    if is_postgres() {
        note_writers(&sb, 0.05);
    }
    sb.ok(&["apply", "--interval", &orders.interval()]);
    assert_eq!(sb.daily(), orders.expected());
    let run_id = sb.last_run_id();
    let shown = sb.ok(&["runs", &run_id.to_string()]).stdout;
    if is_postgres() {
        assert_eq!(jobs_of(&sb, run_id), "3");
        assert_eq!(writer_sessions(&sb), 3, "three sessions wrote the dates");
        assert!(shown.contains("3 dates at a time (--jobs 3)"), "{shown}");
        // The flag wins over the file.
        sb.ok(&["apply", "--interval", &orders.interval(), "--jobs", "1"]);
        assert_eq!(jobs_of(&sb, sb.last_run_id()), "1");
    } else {
        assert_eq!(jobs_of(&sb, run_id), "1");
        assert!(shown.contains("1 date at a time"), "{shown}");
    }
}

// ---------------------------------------------------------------------------------------
// PostgreSQL: the same rows and exit codes with N workers as with one

/// The same story in a new sandbox per jobs count: seeded orders, `setup`, then `apply`
/// with `args` and `--jobs N`. What each run printed and left, by jobs count.
fn same_story(
    days: i64,
    setup: impl Fn(&Sandbox),
    args: &[&str],
) -> Vec<(u32, Run, Sandbox, Orders)> {
    [1, 2, 4]
        .into_iter()
        .map(|jobs| {
            let (sb, orders) = with_orders(7, days);
            note_writers(&sb, 0.01);
            setup(&sb);
            let (n, interval) = (jobs.to_string(), orders.interval());
            let mut full = vec!["apply", "--interval", interval.as_str()];
            full.extend_from_slice(args);
            full.extend_from_slice(&["--jobs", &n]);
            let run = sb.run(&full);
            (jobs, run, sb, orders)
        })
        .collect()
}

/// Every story left what the one-worker story left, exited as it did, and said the same.
fn assert_alike(stories: &[(u32, Run, Sandbox, Orders)]) {
    let (_, one, first, _) = &stories[0];
    let want = reads(first);
    for (jobs, run, sb, _) in &stories[1..] {
        assert_eq!(
            run.code, one.code,
            "--jobs {jobs}: exit code\n{}",
            run.stderr
        );
        assert_eq!(run.stdout, one.stdout, "--jobs {jobs}: the summary");
        assert_eq!(
            said(&run.stderr),
            said(&one.stderr),
            "--jobs {jobs}: skips, releases and the dates as ranges on stderr"
        );
        let got = reads(sb);
        for q in READS {
            assert_eq!(got[q], want[q], "--jobs {jobs}: {q}");
        }
        assert_eq!(jobs_of(sb, sb.last_run_id()), jobs.to_string());
    }
}

#[test]
fn a_parallel_backfill_leaves_what_one_worker_leaves() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    let stories = same_story(40, |_| {}, &[]);
    assert_alike(&stories);
    for (jobs, run, sb, orders) in &stories {
        assert_eq!(run.code, 0, "--jobs {jobs}: {}", run.stderr);
        assert_eq!(sb.daily(), orders.expected(), "--jobs {jobs}");
        assert_eq!(sb.cumulative(), running(&orders.expected()));
        assert_eq!(
            writer_sessions(sb),
            i64::from(*jobs),
            "--jobs {jobs}: that many sessions wrote dates"
        );
        let shown = sb.ok(&["runs", "1"]).stdout;
        if *jobs > 1 {
            assert!(
                shown.contains(&format!("{jobs} dates at a time")),
                "{shown}"
            );
        }
        let doc: serde_json::Value =
            serde_json::from_str(&sb.ok(&["--json", "runs", "1"]).stdout).unwrap();
        assert_eq!(doc["run"]["jobs"], i64::from(*jobs));
        // Nothing is held after the run, and nothing waits on a lease.
        assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    }
}

#[test]
fn keep_going_past_a_failed_date_in_parallel_leaves_what_one_worker_leaves() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    let boom = day(START, 9);
    let stories = same_story(
        24,
        |sb| sb.fail_inserts("daily_revenue", &boom, When::Before),
        &["--keep-going"],
    );
    assert_alike(&stories);
    for (jobs, run, sb, orders) in &stories {
        assert_eq!(run.code, 1, "--jobs {jobs}");
        assert_eq!(status_of(sb, 1), "failed");
        let dates = partitions(sb, 1);
        assert_eq!(dates.len(), 24, "--jobs {jobs}: every date attempted");
        assert_eq!(dates[&boom], "failed");
        let mut expected = orders.expected();
        expected.remove(&boom);
        assert_eq!(sb.daily(), expected, "--jobs {jobs}");
    }
}

/// The failed date is the last one: nothing after it can be in flight, so the rows are
/// those of one worker exactly.
#[test]
fn a_failed_last_date_stops_a_parallel_run_as_it_stops_one_worker() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    let boom = day(START, 15);
    let stories = same_story(
        16,
        |sb| sb.fail_inserts("daily_revenue", &boom, When::Before),
        &[],
    );
    assert_alike(&stories);
    for (_, run, sb, _) in &stories {
        assert_eq!(run.code, 1);
        assert!(run.stderr.contains("boom on purpose"), "{}", run.stderr);
        assert_eq!(status_of(sb, 1), "failed");
    }
}

/// A failure in the middle: workers take no date after it; the dates they were in finish
/// (so some later dates may commit, whole and recorded); every date not attempted has no
/// record and is released. Fixed, `--only missing` finishes the interval.
#[test]
fn a_failed_date_stops_every_worker_from_taking_more() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    for jobs in ["2", "4"] {
        let (sb, orders) = with_orders(8, 48);
        let expected = orders.expected();
        let all = all_dates(&orders);
        note_writers(&sb, 0.08);
        let boom = day(START, 4);
        sb.fail_inserts("daily_revenue", &boom, When::Before);
        let interval = orders.interval();
        let run = sb.expect(1, &["apply", "--interval", &interval, "--jobs", jobs]);
        assert!(
            run.stderr.lines().any(|l| l.starts_with(&boom)
                && l.contains("failed")
                && l.contains("boom on purpose")),
            "--jobs {jobs}: the failure is said\n{}",
            run.stderr
        );
        assert!(run.stdout.contains("-> failed"), "{}", run.stdout);
        assert_eq!(status_of(&sb, 1), "failed");
        let dates = partitions(&sb, 1);
        assert_eq!(dates[&boom], "failed");
        // Every date before it was taken before it, and finished.
        for ds in all.iter().filter(|d| **d < boom) {
            assert_eq!(dates.get(ds).map(String::as_str), Some("success"), "{ds}");
        }
        // After it: only dates already in flight; the rest were not attempted.
        let later: Vec<&String> = dates.keys().filter(|d| **d > boom).collect();
        assert!(
            dates.iter().all(|(ds, s)| s == "success" || *ds == boom),
            "--jobs {jobs}: {dates:?}"
        );
        assert!(
            later.len() < all.len() - 5 - 10,
            "--jobs {jobs}: the workers stopped taking dates: {later:?}"
        );
        assert_rows_whole(&sb, &expected);
        assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
        let not_attempted = all.len() - dates.len();
        assert_eq!(
            sb.rows("SELECT date_count FROM run_events WHERE run_id = 1 AND event = 'released'"),
            [[not_attempted.to_string()]],
            "--jobs {jobs}: the rest is released, recorded"
        );

        sb.stop_failing("daily_revenue");
        sb.ok(&[
            "apply",
            "--interval",
            &interval,
            "--only",
            "missing",
            "--jobs",
            jobs,
        ]);
        sb.ok(&[
            "apply",
            "--interval",
            &interval,
            "--only",
            "failed",
            "--jobs",
            jobs,
        ]);
        assert_eq!(sb.daily(), expected, "--jobs {jobs}");
        assert_eq!(sb.cumulative(), running(&expected));
        assert_rows_whole(&sb, &expected);
    }
}

#[test]
fn dates_another_run_holds_are_skipped_alike_in_parallel() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    let held = format!("{}..{}", day(START, 6), day(START, 9));
    let stories = same_story(
        20,
        |sb| {
            reserve_id(sb, &["reserve", "--interval", &held, "--reason", "hold"]);
        },
        &[],
    );
    assert_alike(&stories);
    for (jobs, run, sb, orders) in &stories {
        assert_eq!(run.code, 99, "--jobs {jobs}");
        let lines = skip_lines(&run.stderr);
        assert!(!lines.is_empty(), "{}", run.stderr);
        for line in lines {
            contains_all(line, &[&day(START, 6), &day(START, 9), "run 1"]);
        }
        assert_eq!(status_of(sb, 2), "partial");
        let skipped: BTreeSet<String> = partitions(sb, 2)
            .into_iter()
            .filter(|(_, s)| s == "skipped")
            .map(|(ds, _)| ds)
            .collect();
        assert_eq!(skipped.len(), 4);
        assert_eq!(
            sb.count("SELECT count(*) FROM reservations WHERE run_id = 1"),
            4,
            "the holder keeps its dates"
        );
        let mut expected = orders.expected();
        expected.retain(|ds, _| !skipped.contains(ds));
        assert_eq!(sb.daily(), expected);
    }
}

/// The workers' sessions are opened before anything is written: a server (here, a role)
/// without connections to spare is exit 2 with the server's words and the fix, and the
/// database is as it was.
#[test]
fn too_few_connections_for_the_jobs_is_bad_input_and_nothing_is_written() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    let (sb, orders) = with_orders(12, 6);
    let (url, schema) = sb.url();
    let role = format!("jobs_{schema}");
    sb.exec(&format!(
        "CREATE ROLE {role} LOGIN CONNECTION LIMIT 2; \
         GRANT USAGE, CREATE ON SCHEMA \"{schema}\" TO {role}; \
         GRANT ALL ON ALL TABLES IN SCHEMA \"{schema}\" TO {role}; \
         GRANT ALL ON ALL SEQUENCES IN SCHEMA \"{schema}\" TO {role};"
    ));
    assert!(url.contains("user=postgres"), "{url}");
    let as_role = url.replace("user=postgres", &format!("user={role}"));
    let run = |jobs: &str| {
        let out = cmd_with_url(
            &as_role,
            &schema,
            &["apply", "--interval", &orders.interval(), "--jobs", jobs],
        )
        .current_dir(sb.path())
        .output()
        .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let before = snapshot(&sb);
    let (code, stderr) = run("4");
    assert_eq!(code, Some(2), "{stderr}");
    contains_all(
        &stderr,
        &[
            "too many connections",
            "--jobs 4 takes up to 4 connections",
            "lower --jobs",
        ],
    );
    assert_eq!(snapshot(&sb), before, "nothing written");
    // Two fit: the run's own session and one more.
    let (code, stderr) = run("2");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(sb.daily(), orders.expected());
    sb.exec(&format!("DROP OWNED BY {role}; DROP ROLE {role};"));
}

// ---------------------------------------------------------------------------------------
// PostgreSQL: stopped mid-run

/// SIGTERM (once: the dates in flight finish; twice: they roll back) in the middle of a
/// run with 4 workers: exit 143, what committed is whole, the rest released, the run
/// interrupted; a rerun finishes equal to a clean run.
fn sigterm_mid_parallel_run(twice: bool) {
    let (sb, orders) = with_orders(9, 40);
    let expected = orders.expected();
    let all = all_dates(&orders);
    note_writers(&sb, 0.15);
    let interval = orders.interval();
    let mut child = spawn(&sb, &["apply", "--interval", &interval, "--jobs", "4"]);
    assert!(wait_for(
        &sb,
        "SELECT count(*) FROM run_partitions",
        6,
        &mut child
    ));
    // Its dates are held without a lease: its workers must not renew one on each
    // other's reservation rows (a running run is alive while its session is).
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations WHERE run_id = 1 AND expires_at IS NOT NULL"),
        0
    );
    signal(child.id(), "-TERM");
    if twice {
        signal(child.id(), "-TERM");
    }
    let run = finish(child);
    assert_eq!(run.code, 143, "exit code\nstderr: {}", run.stderr);
    assert!(run.stdout.contains("-> interrupted"), "{}", run.stdout);

    assert_eq!(status_of(&sb, 1), "interrupted");
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0, "released");
    let dates = partitions(&sb, 1);
    assert!(dates.values().all(|s| s == "success"), "{dates:?}");
    assert!(dates.len() >= 6 && dates.len() < all.len(), "{dates:?}");
    let done: Vec<String> = dates.into_keys().collect();
    if !twice {
        // Every date taken finished: what is done is where the queue stood.
        assert_eq!(done, all[..done.len()].to_vec(), "an ascending prefix");
    }
    assert_eq!(
        sb.daily().into_keys().collect::<Vec<_>>(),
        done,
        "exactly the recorded dates have rows"
    );
    assert_rows_whole(&sb, &expected);
    assert_eq!(
        sb.rows("SELECT date_count FROM run_events WHERE run_id = 1 AND event = 'released'"),
        [[(all.len() - done.len()).to_string()]],
        "the release is recorded"
    );

    sb.exec("DROP TRIGGER burn_time ON daily_revenue");
    sb.ok(&[
        "apply",
        "--interval",
        &interval,
        "--only",
        "missing",
        "--jobs",
        "4",
    ]);
    let rest: Vec<String> = all.iter().filter(|d| !done.contains(d)).cloned().collect();
    assert_eq!(partitions(&sb, 2).into_keys().collect::<Vec<_>>(), rest);
    assert_eq!(sb.daily(), expected);
    assert_eq!(sb.cumulative(), running(&expected));
    assert_rows_whole(&sb, &expected);
}

#[test]
fn sigterm_mid_parallel_run_lets_the_dates_in_flight_finish() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    sigterm_mid_parallel_run(false);
}

#[test]
fn a_second_sigterm_rolls_back_every_date_in_flight() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    sigterm_mid_parallel_run(true);
}

/// A backfill with 3 workers whose sessions are named `app` (so that the test can find
/// them), slowed, once it has committed 4 dates.
fn named_parallel_run(tag: &str) -> (Sandbox, Orders, String, Child) {
    let (sb, orders) = with_orders(10, 36);
    note_writers(&sb, 0.15);
    let (url, schema) = sb.url();
    let app = format!("jobs_{schema}_{tag}");
    let sep = if url.contains('?') { '&' } else { '?' };
    let mut child = cmd_with_url(
        &format!("{url}{sep}application_name={app}"),
        &schema,
        &["apply", "--interval", &orders.interval(), "--jobs", "3"],
    )
    .current_dir(sb.path())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let done = "SELECT count(*) FROM run_partitions";
    assert!(wait_for(&sb, done, 4, &mut child), "{tag}: 4 dates done");
    (sb, orders, app, child)
}

/// The pid of the run's own session: the one that holds its lock (schema oid, run 1).
fn own_session(sb: &Sandbox) -> String {
    let (_, schema) = sb.url();
    format!(
        "SELECT l.pid FROM pg_catalog.pg_locks AS l WHERE l.locktype = 'advisory' \
         AND l.classid = CAST(CAST('{schema}' AS regnamespace) AS oid) AND l.objid = 1 \
         AND l.objsubid = 2 AND l.granted"
    )
}

/// Terminates the one session `pid_sql` names.
fn terminate(sb: &Sandbox, pid_sql: &str) {
    assert_eq!(
        sb.rows(&format!(
            "SELECT pg_catalog.pg_terminate_backend(pid) FROM ({pid_sql}) AS v"
        )),
        [["1"]],
        "one session terminated"
    );
}

/// A run stopped by a lost session: exit 1, saying so; what it committed is whole and
/// recorded, and it did not finish. Its dates.
fn lost_a_session(sb: &Sandbox, orders: &Orders, run: &Run) -> BTreeMap<String, String> {
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert!(
        run.stderr
            .contains("lost the connection to the database during "),
        "{}",
        run.stderr
    );
    let dates = partitions(sb, 1);
    assert!(dates.values().all(|s| s == "success"), "{dates:?}");
    assert!(dates.len() < orders.days as usize, "it stopped: {dates:?}");
    assert_rows_whole(sb, &orders.expected());
    dates
}

/// `--only missing` after a stopped run 1 finishes the interval; run 1 wrote nothing more.
fn rerun_finishes(sb: &Sandbox, orders: &Orders, stopped: &BTreeMap<String, String>) -> Run {
    sb.exec("DROP TRIGGER burn_time ON daily_revenue");
    let interval = orders.interval();
    let rerun = sb.ok(&[
        "apply",
        "--interval",
        &interval,
        "--only",
        "missing",
        "--jobs",
        "3",
    ]);
    assert_eq!(
        &partitions(sb, 1),
        stopped,
        "nothing more from the stopped run"
    );
    assert_eq!(sb.daily(), orders.expected());
    assert_rows_whole(sb, &orders.expected());
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    rerun
}

/// One worker's session ends on the server: the whole run stops (exit 1); the run's own
/// session records the end and releases the rest.
#[test]
fn a_worker_whose_session_ends_stops_the_whole_run() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    let (sb, orders, app, child) = named_parallel_run("worker");
    terminate(
        &sb,
        &format!(
            "SELECT pid FROM pg_catalog.pg_stat_activity WHERE application_name = '{app}' \
             AND pid NOT IN ({}) LIMIT 1",
            own_session(&sb)
        ),
    );
    let run = finish(child);
    let stopped = lost_a_session(&sb, &orders, &run);
    eprintln!(
        "worker: {} dates done; {}",
        stopped.len(),
        run.stderr.lines().last().unwrap_or_default()
    );
    assert_eq!(status_of(&sb, 1), "failed");
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    assert!(
        run.stderr
            .contains("its own session released the dates it did not compute"),
        "{}",
        run.stderr
    );
    rerun_finishes(&sb, &orders, &stopped);
}

/// The run's own session (which holds its lock) ends while every worker waits at its next
/// date's reservation row (held by another session): let go, no worker writes that date.
/// The run stays `running` until the next run finds its session gone and reclaims.
#[test]
fn when_the_runs_own_session_ends_its_workers_write_no_more() {
    if postgres_only("--jobs above 1 is refused on SQLite") {
        return;
    }
    let (sb, orders, app, mut child) = named_parallel_run("own");
    let mut blocker = sb.pg_client();
    let mut held = blocker.transaction().unwrap();
    held.execute(
        "SELECT ds FROM reservations WHERE run_id = 1 FOR UPDATE SKIP LOCKED",
        &[],
    )
    .unwrap();
    let sessions = format!(
        "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE application_name = '{app}'"
    );
    let waiting = format!("{sessions} AND wait_event_type = 'Lock'");
    if !wait_for(&sb, &waiting, 3, &mut child) {
        held.rollback().unwrap();
        panic!("all 3 sessions wait: {:?}", finish(child));
    }
    let before = partitions(&sb, 1);
    terminate(&sb, &own_session(&sb));
    let deadline = Instant::now() + Duration::from_secs(10);
    while sb.count(&sessions) > 2 && Instant::now() < deadline {
        sleep(Duration::from_millis(5));
    }
    held.rollback().unwrap();
    let run = finish(child);
    let stopped = lost_a_session(&sb, &orders, &run);
    eprintln!(
        "own: {} dates done; {}",
        stopped.len(),
        run.stderr.lines().last().unwrap_or_default()
    );
    assert_eq!(
        stopped, before,
        "no worker wrote a date once the run's own session was gone"
    );
    assert_eq!(status_of(&sb, 1), "running", "nobody could record its end");
    assert!(
        run.stderr.contains("the next run reclaims its dates"),
        "{}",
        run.stderr
    );
    let rerun = rerun_finishes(&sb, &orders, &stopped);
    assert!(rerun.stderr.contains("reclaimed"), "{}", rerun.stderr);
    assert_eq!(status_of(&sb, 1), "interrupted");
}
