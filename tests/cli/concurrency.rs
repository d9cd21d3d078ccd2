//! Several processes on one database, and processes that die or are stopped mid-run.
//! The assertions are invariants that hold however the processes interleave and wherever
//! a kill lands.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::support::*;

const START: &str = "2026-01-01";

/// Makes every date cost time inside its transaction (a trigger that counts `rows` rows of
/// a recursive CTE, or on PostgreSQL sleeps about as long), so that runs overlap and a
/// signal lands mid-run.
fn slow_dates(sb: &Sandbox, rows: u32) {
    sb.slow_inserts("daily_revenue", rows);
}

pub(crate) fn spawn(sb: &Sandbox, args: &[&str]) -> Child {
    sb.cmd(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sqlrun")
}

pub(crate) fn finish(child: Child) -> Run {
    let out = child.wait_with_output().expect("wait");
    Run::from(out)
}

fn dates(start: &str, end: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let d = day(start, i);
        if d.as_str() > end {
            break;
        }
        out.push(d);
        i += 1;
    }
    out
}

/// Waits (bounded) until `sql` counts at least `n`; false if it never did.
pub(crate) fn wait_for(sb: &Sandbox, sql: &str, n: i64, child: &mut Child) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if sb.count(sql) >= n {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return sb.count(sql) >= n;
        }
        sleep(Duration::from_millis(5));
    }
    false
}

pub(crate) fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill {sig} {pid}");
}

/// Whether a stderr line names `ds`, alone or inside a `START..END` range.
fn names_date(line: &str, ds: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || c == ',' || c == ':' || c == '(' || c == ')')
        .any(|token| match token.split_once("..") {
            Some((a, b)) => a <= ds && ds <= b && a.len() == 10 && b.len() == 10,
            None => token == ds,
        })
}

/// The dates (with run_partitions rows of this run) and the status they got.
pub(crate) fn partitions(sb: &Sandbox, run_id: i64) -> BTreeMap<String, String> {
    sb.rows(&format!(
        "SELECT ds, status FROM run_partitions WHERE run_id = {run_id}"
    ))
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

fn reservations_of(sb: &Sandbox, run_id: i64) -> BTreeSet<String> {
    sb.rows(&format!(
        "SELECT ds FROM reservations WHERE run_id = {run_id}"
    ))
    .into_iter()
    .map(|r| r[0].clone())
    .collect()
}

pub(crate) fn status_of(sb: &Sandbox, run_id: i64) -> String {
    sb.rows(&format!("SELECT status FROM runs WHERE run_id = {run_id}"))[0][0].clone()
}

/// Dates whose row and record disagree: `daily_revenue` rows without their run's
/// `success` record, and `success` records without a row. Empty when every date is whole.
pub(crate) fn half_written(sb: &Sandbox) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let orphans = sb.rows(
        "SELECT d.ds, d.run_id FROM daily_revenue AS d \
         WHERE NOT EXISTS (SELECT 1 FROM run_partitions AS p \
                           WHERE p.run_id = d.run_id AND p.ds = d.ds AND p.status = 'success')",
    );
    let unrecorded = sb.rows(
        "SELECT p.run_id, p.ds FROM run_partitions AS p \
         WHERE p.status = 'success' AND NOT EXISTS (SELECT 1 FROM daily_revenue AS d WHERE d.ds = p.ds)",
    );
    (orphans, unrecorded)
}

/// Every daily_revenue row is whole: equal to the expected numbers of its date, built by a
/// run that recorded the date as done, and only dates some run recorded have a row.
pub(crate) fn assert_rows_whole(sb: &Sandbox, expected: &BTreeMap<String, (i64, i64)>) {
    for (ds, numbers) in sb.daily() {
        assert_eq!(
            Some(&numbers),
            expected.get(&ds),
            "daily_revenue {ds} is whole"
        );
    }
    let (orphans, unrecorded) = half_written(sb);
    assert!(
        orphans.is_empty(),
        "rows without their run_partitions record: {orphans:?}"
    );
    assert!(
        unrecorded.is_empty(),
        "recorded dates without a row: {unrecorded:?}"
    );
}

// ---------------------------------------------------------------------------------------
// (1) processes started together

fn concurrent_runs(seed: u64) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, START, 60, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 20_000);
    let expected = orders.expected();

    // (arguments, the interval each one asks for)
    let jobs: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            vec![
                "apply",
                "--interval",
                "2026-01-01..2026-02-10",
                "--by",
                "bf1",
            ],
            "2026-01-01",
            "2026-02-10",
        ),
        (
            vec![
                "apply",
                "--interval",
                "2026-01-20..2026-02-27",
                "--by",
                "bf2",
            ],
            "2026-01-20",
            "2026-02-27",
        ),
        (
            vec![
                "apply",
                "--interval",
                "2026-01-10..2026-01-31",
                "--by",
                "bf3",
            ],
            "2026-01-10",
            "2026-01-31",
        ),
        (
            vec!["apply", "--as-of", "2026-01-15"],
            "2026-01-14",
            "2026-01-14",
        ),
        (
            vec!["apply", "--as-of", "2026-01-25"],
            "2026-01-24",
            "2026-01-24",
        ),
        (
            vec!["apply", "--as-of", "2026-02-05"],
            "2026-02-04",
            "2026-02-04",
        ),
        (
            vec!["apply", "--as-of", "2026-02-21"],
            "2026-02-20",
            "2026-02-20",
        ),
    ];
    let children: Vec<Child> = jobs.iter().map(|(a, _, _)| spawn(&sb, a)).collect();
    let runs: Vec<Run> = children.into_iter().map(finish).collect();

    for ((args, _, _), run) in jobs.iter().zip(&runs) {
        assert!(
            run.code == 0 || run.code == 99,
            "seed {seed}: `sqlrun {}` exited {}\nstderr: {}",
            args.join(" "),
            run.code,
            run.stderr
        );
        assert!(
            !run.stderr.contains("database is locked"),
            "seed {seed}: {}",
            run.stderr
        );
    }
    assert_eq!(sb.count("SELECT count(*) FROM runs"), jobs.len() as i64);
    assert_eq!(
        sb.count("SELECT count(*) FROM run_partitions WHERE status NOT IN ('success', 'skipped')"),
        0,
        "seed {seed}: nothing failed"
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations"),
        0,
        "seed {seed}: nothing left held"
    );

    // Every run: exactly one row per requested date; skipped ones name another run;
    // status and exit agree.
    let all_runs =
        sb.rows("SELECT run_id, interval_start, interval_end, status FROM runs ORDER BY run_id");
    for r in &all_runs {
        let run_id: i64 = r[0].parse().unwrap();
        let parts = partitions(&sb, run_id);
        let want: Vec<String> = dates(&r[1], &r[2]);
        assert_eq!(
            parts.keys().cloned().collect::<Vec<_>>(),
            want,
            "seed {seed}: run {run_id} has one row per requested date"
        );
        let skipped = parts.values().filter(|s| *s == "skipped").count();
        let want_status = if skipped > 0 { "partial" } else { "success" };
        assert_eq!(r[3], want_status, "seed {seed}: run {run_id} {parts:?}");
    }
    let bad_skips = sb.rows(
        "SELECT run_id, ds, held_by FROM run_partitions WHERE status = 'skipped' \
         AND (held_by IS NULL OR held_by = run_id OR held_by NOT IN (SELECT run_id FROM runs))",
    );
    assert!(
        bad_skips.is_empty(),
        "seed {seed}: skips must name another run: {bad_skips:?}"
    );
    // A skip names a holder that really computed that date.
    let hollow = sb.rows(
        "SELECT s.run_id, s.ds, s.held_by FROM run_partitions AS s WHERE s.status = 'skipped' \
         AND NOT EXISTS (SELECT 1 FROM run_partitions AS h \
                         WHERE h.run_id = s.held_by AND h.ds = s.ds AND h.status = 'success')",
    );
    assert!(
        hollow.is_empty(),
        "seed {seed}: the holder computed the date: {hollow:?}"
    );
    // The skips of each run are reported on its stderr, naming the date and the holder.
    for ((args, start, end), run) in jobs.iter().zip(&runs) {
        let run_id = sb.count(&format!(
            "SELECT run_id FROM runs WHERE interval_start = '{start}' AND interval_end = '{end}'"
        ));
        let skips = sb.rows(&format!(
            "SELECT ds, held_by FROM run_partitions WHERE run_id = {run_id} AND status = 'skipped'"
        ));
        assert_eq!(
            run.code,
            if skips.is_empty() { 0 } else { 99 },
            "seed {seed}: {args:?}"
        );
        for s in &skips {
            assert!(
                run.stderr
                    .lines()
                    .any(|l| names_date(l, &s[0]) && l.contains(&format!("run {}", s[1]))),
                "seed {seed}: run {run_id} skipped {} held by {}: not reported\n{}",
                s[0],
                s[1],
                run.stderr
            );
        }
    }
    assert_rows_whole(&sb, &expected);

    // Whatever no run asked for is filled in; then every number is right.
    let rest = sb.ok(&[
        "apply",
        "--interval",
        &orders.interval(),
        "--only",
        "missing",
    ]);
    assert!(!rest.stderr.contains("database is locked"));
    let last = sb.last_run_id();
    let filled: BTreeSet<String> = partitions(&sb, last).into_keys().collect();
    let asked: BTreeSet<String> = jobs.iter().flat_map(|(_, a, b)| dates(a, b)).collect();
    let never_asked: BTreeSet<String> = expected
        .keys()
        .filter(|d| !asked.contains(*d))
        .cloned()
        .collect();
    assert!(!never_asked.is_empty());
    assert_eq!(
        filled, never_asked,
        "seed {seed}: --only missing computes only the dates no run asked for"
    );
    assert_eq!(sb.daily(), expected, "seed {seed}");
    assert_eq!(sb.current(), expected, "seed {seed}");
    assert_eq!(sb.cumulative(), running(&expected), "seed {seed}");
    assert_rows_whole(&sb, &expected);
}

#[test]
fn overlapping_backfills_and_regular_runs_at_once_agree() {
    for seed in [7, 8] {
        concurrent_runs(seed);
    }
}

// ---------------------------------------------------------------------------------------
// (2) SIGKILL mid-backfill, (3) SIGTERM / SIGINT

/// 30 days of orders and slow dates.
pub(crate) fn slow_month(seed: u64) -> (Sandbox, Orders) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, START, 30, true);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 100_000);
    (sb, orders)
}

#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// After this long, wherever the run is.
    After(Duration),
    /// Once the run holds its reservations and has committed this many dates.
    Dates(i64),
}

fn kill_mid_backfill(seed: u64, at: KillAt) {
    let (sb, orders) = slow_month(seed);
    let expected = orders.expected();
    let interval = orders.interval();
    let mut child = spawn(&sb, &["apply", "--interval", &interval]);
    match at {
        KillAt::After(d) => sleep(d),
        KillAt::Dates(n) => {
            assert!(
                wait_for(&sb, "SELECT count(*) FROM reservations", 1, &mut child),
                "{at:?}: the run reserved"
            );
            assert!(
                wait_for(&sb, "SELECT count(*) FROM run_partitions", n, &mut child),
                "{at:?}: the run committed {n} dates"
            );
        }
    }
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("reap");
    if let KillAt::Dates(_) = at {
        assert_eq!(
            status.code(),
            None,
            "{at:?}: killed by the signal, not finished"
        );
    }

    // Right after the kill: every recorded date is whole, nothing else is written.
    assert_rows_whole(&sb, &expected);
    let dead: Option<i64> = sb
        .rows("SELECT run_id FROM runs")
        .first()
        .map(|r| r[0].parse().unwrap());
    let done: BTreeSet<String> = match dead {
        Some(d) => partitions(&sb, d).into_keys().collect(),
        None => BTreeSet::new(),
    };
    assert_eq!(
        sb.daily().into_keys().collect::<BTreeSet<_>>(),
        done,
        "{at:?}: exactly the recorded dates have rows"
    );
    // Dates are computed in ascending order: the done ones are a prefix.
    let all = dates(&orders.start, &day(&orders.start, orders.days - 1));
    assert_eq!(
        done.iter().cloned().collect::<Vec<_>>(),
        all[..done.len()].to_vec(),
        "{at:?}: ascending order"
    );
    let dead_was_running = match dead {
        Some(d) if status.code().is_none() => {
            let s = status_of(&sb, d);
            let mut holds_dates = s == "running";
            if let KillAt::Dates(_) = at {
                assert_eq!(s, "running", "{at:?}: nobody has found out yet");
            }
            if s == "running" {
                let held = reservations_of(&sb, d);
                let rest: BTreeSet<String> =
                    all.iter().filter(|x| !done.contains(*x)).cloned().collect();
                assert_eq!(
                    held, rest,
                    "{at:?}: the dead run still holds exactly the dates it did not finish"
                );
                // Killed after its last date but before it wrote its end: it holds nothing,
                // and there is nothing to reclaim.
                if held.is_empty() {
                    holds_dates = false;
                }
                // `status` (which writes nothing) says the holder is gone.
                let out = sb.ok(&["--json", "status", "--interval", &interval]);
                let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
                for row in doc["dates"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| held.contains(r["ds"].as_str().unwrap()))
                {
                    let why = row["holder_gone"].as_str().unwrap_or_default();
                    assert!(
                        why.contains("is gone"),
                        "{at:?}: status of a dead holder: {row}"
                    );
                }
                assert_eq!(status_of(&sb, d), "running", "status reclaimed something");
            }
            holds_dates
        }
        _ => false,
    };
    if dead.is_none() {
        assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    }

    // A dry run says the dead run's dates would be reclaimed, and writes nothing.
    if dead_was_running {
        let d = dead.unwrap();
        let before = sb.rows("SELECT run_id, status FROM runs");
        let plan = sb.ok(&[
            "apply",
            "--interval",
            &interval,
            "--only",
            "missing",
            "--dry-run",
        ]);
        let first_missing = all.iter().find(|x| !done.contains(*x)).unwrap();
        assert!(
            plan.stdout
                .lines()
                .any(|l| l.starts_with(first_missing.as_str())
                    && l.contains("reclaim")
                    && l.contains(&format!("run {d}"))),
            "{at:?}: the dry run names the reclaim:\n{}",
            plan.stdout
        );
        assert_eq!(sb.rows("SELECT run_id, status FROM runs"), before);
        assert_eq!(reservations_of(&sb, d).len(), all.len() - done.len());
    }

    // The next apply reclaims and completes only what is missing.
    let next = sb.ok(&["apply", "--interval", &interval, "--only", "missing"]);
    let me = sb.last_run_id();
    assert_eq!(status_of(&sb, me), "success", "{at:?}");
    let computed: BTreeSet<String> = partitions(&sb, me).into_keys().collect();
    let missing: BTreeSet<String> = all.iter().filter(|x| !done.contains(*x)).cloned().collect();
    assert_eq!(
        computed, missing,
        "{at:?}: --only missing picks up exactly the rest"
    );
    if dead_was_running {
        let d = dead.unwrap();
        let events = sb.rows(
            "SELECT run_id, other_run_id, date_count, detail IS NOT NULL FROM run_events WHERE event = 'reclaimed'",
        );
        assert_eq!(
            events,
            vec![vec![
                d.to_string(),
                me.to_string(),
                missing.len().to_string(),
                "1".into()
            ]],
            "{at:?}: the reclaim is recorded"
        );
        assert!(
            next.stderr
                .lines()
                .any(|l| l.contains("reclaim") && l.contains(&format!("run {d}"))),
            "{at:?}: the reclaim is reported:\n{}",
            next.stderr
        );
        assert_eq!(status_of(&sb, d), "interrupted", "{at:?}");
    } else {
        assert_eq!(
            sb.count("SELECT count(*) FROM run_events WHERE event = 'reclaimed'"),
            0
        );
    }
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    assert_eq!(sb.daily(), expected, "{at:?}");
    assert_eq!(sb.cumulative(), running(&expected), "{at:?}");
    assert_rows_whole(&sb, &expected);
}

#[test]
fn sigkill_once_the_dates_are_reserved() {
    kill_mid_backfill(21, KillAt::Dates(0));
}

#[test]
fn sigkill_after_the_first_date() {
    kill_mid_backfill(22, KillAt::Dates(1));
}

#[test]
fn sigkill_midway() {
    kill_mid_backfill(23, KillAt::Dates(12));
}

#[test]
fn sigkill_at_fixed_times() {
    for (seed, ms) in [(24, 300), (25, 1000)] {
        kill_mid_backfill(seed, KillAt::After(Duration::from_millis(ms)));
    }
}

/// A stop signal once `dates` dates are committed; `twice` sends it again at once (the
/// second one interrupts the date in flight, which rolls back).
fn stop_mid_backfill(seed: u64, sig: &str, code: i32, twice: bool) {
    let (sb, orders) = slow_month(seed);
    let expected = orders.expected();
    let interval = orders.interval();
    let mut child = spawn(&sb, &["apply", "--interval", &interval]);
    // The handler is in place once the first date is committed.
    assert!(wait_for(
        &sb,
        "SELECT count(*) FROM run_partitions",
        2,
        &mut child
    ));
    signal(child.id(), sig);
    if twice {
        signal(child.id(), sig);
    }
    let run = finish(child);
    assert_eq!(run.code, code, "{sig}: exit code\nstderr: {}", run.stderr);

    let run_id = sb.last_run_id();
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 1);
    assert_eq!(status_of(&sb, run_id), "interrupted", "{sig}");
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations"),
        0,
        "{sig}: released what it held"
    );
    let done: BTreeSet<String> = partitions(&sb, run_id).into_keys().collect();
    let all = dates(&orders.start, &day(&orders.start, orders.days - 1));
    assert!(done.len() < all.len(), "{sig}: stopped before the end");
    assert!(
        partitions(&sb, run_id).values().all(|s| s == "success"),
        "{sig}: no failed or half date"
    );
    assert_eq!(
        done.iter().cloned().collect::<Vec<_>>(),
        all[..done.len()].to_vec(),
        "{sig}: ascending prefix"
    );
    assert_eq!(
        sb.daily().into_keys().collect::<BTreeSet<_>>(),
        done,
        "{sig}"
    );
    assert_rows_whole(&sb, &expected);
    assert_eq!(
        sb.rows(&format!(
            "SELECT date_count FROM run_events WHERE run_id = {run_id} AND event = 'released'"
        )),
        vec![vec![(all.len() - done.len()).to_string()]],
        "{sig}: the release is recorded"
    );

    sb.ok(&["apply", "--interval", &interval, "--only", "missing"]);
    let me = sb.last_run_id();
    let rest: BTreeSet<String> = all.iter().filter(|x| !done.contains(*x)).cloned().collect();
    assert_eq!(
        partitions(&sb, me).into_keys().collect::<BTreeSet<_>>(),
        rest,
        "{sig}"
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM run_events WHERE event = 'reclaimed'"),
        0
    );
    assert_eq!(sb.daily(), expected, "{sig}");
    assert_eq!(sb.cumulative(), running(&expected), "{sig}");
}

#[test]
fn sigterm_stops_after_the_current_date() {
    stop_mid_backfill(31, "-TERM", 143, false);
}

#[test]
fn sigint_stops_after_the_current_date() {
    stop_mid_backfill(32, "-INT", 130, false);
}

#[test]
fn a_second_sigint_rolls_back_the_date_in_flight() {
    stop_mid_backfill(33, "-INT", 130, true);
}

/// "Dates held by another live run are skipped and reported, never waited for": a regular
/// run for a date the backfill does not touch must not have to wait for the whole
/// backfill. It needs one short write transaction to reserve and one to compute; the
/// backfill gives the write lock up after every date.
#[test]
fn a_regular_run_is_not_held_up_until_a_long_backfill_ends() {
    let sb = Sandbox::new();
    let orders = Orders::new(41, START, 60, false);
    sb.insert_orders(&orders.rows);
    slow_dates(&sb, 100_000);
    let mut backfill = spawn(&sb, &["apply", "--interval", "2026-01-01..2026-02-27"]);
    assert!(wait_for(
        &sb,
        "SELECT count(*) FROM run_partitions",
        2,
        &mut backfill
    ));
    let bf = sb.last_run_id();

    // The regular run for 2026-02-28 (not in the backfill) runs to the end meanwhile.
    sb.ok(&["apply", "--as-of", "2026-03-01"]);
    let regular = sb.last_run_id();
    assert_ne!(regular, bf);
    let backfill_done_then = sb.count(&format!(
        "SELECT count(*) FROM run_partitions WHERE run_id = {bf}"
    ));
    let backfill_status_then = status_of(&sb, bf);
    let backfill_run = finish(backfill);
    assert_eq!(backfill_run.code, 0, "{}", backfill_run.stderr);
    let mut expected = orders.expected();
    expected.remove("2026-03-01");
    assert_eq!(sb.daily(), expected);
    assert_eq!(
        (backfill_status_then.as_str(), backfill_done_then < 58),
        ("running", true),
        "the regular run for 2026-02-28 finished only after the backfill of 58 other dates \
         had finished ({backfill_done_then} of 58 dates done when it returned): it queued \
         for the write lock behind every date of the backfill"
    );
}

/// Processes started together on a database file that does not exist yet all migrate it:
/// one wins, the others find the work done.
#[test]
fn processes_started_together_on_a_new_file_all_work() {
    for attempt in 0..3 {
        let sb = Sandbox::empty();
        let children: Vec<_> = (1..=6)
            .map(|i| {
                let interval = format!("2026-01-0{i}..2026-01-09");
                sb.cmd(&["apply", "--interval", &interval])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            let code = out.status.code().unwrap_or(-1);
            assert!(
                code == 0 || code == 99,
                "attempt {attempt}: exit {code}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(
            sb.count("SELECT count(*) FROM run_partitions WHERE status = 'failed'"),
            0
        );
        assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
        assert_eq!(sb.count("SELECT count(*) FROM runs"), 6);
    }
}
