//! `apply --jobs N` over a cascade (weekly, monthly and 7-day rolling models over
//! daily_revenue): dates go side by side, each once the earlier dates whose partitions it
//! reads have ended. The rows are those of `--jobs 1`, and the state store shows that each
//! roll-up's date began after every day it reads had ended. On SQLite (one writer: more
//! than one job is refused) the same tests run with one job, and hold as well.

use std::collections::BTreeMap;

use chrono::{Duration, Months};

use crate::grains::{date, iso, Grains, AS_OF, FULL};
use crate::support::*;

/// `n` jobs on PostgreSQL, one on SQLite.
fn jobs(n: &'static str) -> &'static str {
    if is_sqlite() {
        "1"
    } else {
        n
    }
}

/// Model -> how many partitions partition_models holds of it.
fn per_model(g: &Grains) -> Vec<Vec<String>> {
    g.sb.rows("SELECT model, count(*) FROM partition_models GROUP BY model ORDER BY model")
}

/// How each date of run `run` ended.
fn statuses(g: &Grains, run: i64) -> Vec<Vec<String>> {
    g.sb.rows(&format!(
        "SELECT CAST(ds AS TEXT), status FROM run_partitions WHERE run_id = {run} ORDER BY ds"
    ))
}

/// The same rows in every table, the same partition_models per model, and the same
/// dates' ends in runs `a` (of `one`) and `b` (of `other`).
fn assert_same(one: &Grains, a: i64, other: &Grains, b: i64) {
    assert_eq!(other.tables(), one.tables(), "the tables (on {BACKEND})");
    assert_eq!(
        per_model(other),
        per_model(one),
        "partition_models per model"
    );
    assert_eq!(other.built_by(b), one.built_by(a), "what each run built");
    assert_eq!(statuses(other, b), statuses(one, a), "how each date ended");
}

/// The `--jobs` run `run` recorded.
fn jobs_of(g: &Grains, run: i64) -> String {
    let rows =
        g.sb.rows(&format!("SELECT jobs FROM runs WHERE run_id = {run}"));
    rows[0][0].clone()
}

/// Late orders for a few days of February, the same in each sandbox.
fn late_orders(g: &Grains) {
    g.sb.exec(
        "INSERT INTO orders (order_id, order_date, amount) VALUES \
         ('late-1', '2026-02-03', 120000), ('late-2', '2026-02-09', 45000), \
         ('late-3', '2026-02-12', -3000), ('late-4', '2026-02-14', 77000)",
    );
}

#[test]
fn jobs_3_over_weeks_a_month_and_rolling_days_leaves_the_rows_of_jobs_1() {
    let one = Grains::with_orders(3451);
    let three = Grains::with_orders(3451);
    let full = ["--interval", FULL, "--as-of", AS_OF, "--jobs"];
    let (_, a) = one.apply(0, &[&full[..], &["1"]].concat());
    let (_, b) = three.apply(0, &[&full[..], &[jobs("3")]].concat());
    assert_eq!(jobs_of(&three, b), jobs("3"));
    assert_same(&one, a, &three, b);
    three.assert_roll_ups_add_up();

    // A backfill after late orders: the days, and the weeks, month and rolling days
    // they feed, rebuilt from what the days are now.
    late_orders(&one);
    late_orders(&three);
    let back = ["--interval", "2026-02-02..2026-02-15", "--as-of", AS_OF];
    let (_, a) = one.apply(0, &[&back[..], &["--jobs", "1"]].concat());
    let (_, b) = three.apply(0, &[&back[..], &["--jobs", jobs("3")]].concat());
    assert_same(&one, a, &three, b);
    assert_eq!(three.written_by(b), one.written_by(a));
    three.assert_roll_ups_add_up();
}

/// The days a roll-up's partition starting on `ds` reads, and the date it is built on.
fn reads_of(table: &str, ds: &str) -> (Vec<String>, String) {
    let d = date(ds);
    let (from, until) = match table {
        "weekly_revenue" => (d, d + Duration::days(7)),
        "monthly_revenue" => (d, d.checked_add_months(Months::new(1)).unwrap()),
        _ => (d - Duration::days(6), d + Duration::days(1)),
    };
    let days = from
        .iter_days()
        .take_while(|x| *x < until)
        .map(iso)
        .collect();
    let anchor = match table {
        "rolling7" => d,
        _ => until.pred_opt().unwrap(),
    };
    (days, iso(anchor))
}

/// Per date of run `run`: when its transaction began and when its work ended, as text
/// that sorts as the times do (microseconds on PostgreSQL, seconds on SQLite).
fn times(g: &Grains, run: i64) -> BTreeMap<String, (String, String)> {
    let at = |col: &str| match BACKEND {
        Backend::Sqlite => col.to_string(),
        Backend::Postgres => {
            format!("to_char({col} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')")
        }
    };
    let sql = format!(
        "SELECT CAST(ds AS TEXT), {}, {} FROM run_partitions WHERE run_id = {run}",
        at("started_at"),
        at("finished_at")
    );
    let rows = g.sb.rows(&sql);
    rows.into_iter()
        .map(|r| (r[0].clone(), (r[1].clone(), r[2].clone())))
        .collect()
}

/// Every roll-up partition run `run` built: its date began after each day it reads that
/// the run built had ended. How many such reads there were.
fn assert_built_after_what_they_read(g: &Grains, run: i64) -> usize {
    let times = times(g, run);
    let mut checked = 0;
    for (table, partitions) in g.built_by(run) {
        if table == "daily_revenue" {
            continue;
        }
        for ds in &partitions {
            let (days, anchor) = reads_of(&table, ds);
            let began = &times[&anchor].0;
            for day in days.iter().filter(|d| **d != anchor) {
                let Some((_, ended)) = times.get(day) else {
                    continue; // before the run's first date
                };
                assert!(
                    began >= ended,
                    "{table} {ds} (built on {anchor}, began {began}) reads {day} (ended {ended})"
                );
                checked += 1;
            }
        }
    }
    checked
}

/// The full build with `jobs` jobs, each day slowed down on PostgreSQL (workers that did
/// not wait would overlap the days a roll-up reads): its run.
fn slow_full_build(g: &Grains, jobs: &str) -> i64 {
    if is_postgres() {
        g.sb.exec(&pg_slow_inserts("daily_revenue", 0.02));
    }
    let (_, run) = g.apply(0, &["--interval", FULL, "--as-of", AS_OF, "--jobs", jobs]);
    run
}

#[test]
fn each_roll_up_s_date_begins_after_every_day_it_reads_has_ended() {
    let g = Grains::with_orders(3452);
    let run = slow_full_build(&g, jobs("3"));
    // The days read of 8 weeks (the first holds 3 of the run's days before its Sunday),
    // 2 months and 59 rolling days (less the 21 before the run's first date).
    let checked = assert_built_after_what_they_read(&g, run);
    assert_eq!(checked, 3 + 7 * 6 + 30 + 27 + 59 * 6 - 21);
    g.assert_roll_ups_add_up();
}

#[test]
fn days_go_side_by_side_and_each_week_and_month_waits_for_its_own() {
    let models: Vec<_> = crate::grains::four_models()
        .into_iter()
        .filter(|(name, _)| *name != "rolling7")
        .collect();
    let sandbox = || {
        let g = Grains::new(&models);
        g.sb.insert_orders(&Orders::new(3454, "2026-01-01", 59, false).rows);
        g
    };
    let (one, g) = (sandbox(), sandbox());
    let (_, a) = one.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let run = slow_full_build(&g, jobs("3"));
    // The days of 8 weeks and 2 months, as in the test above.
    assert_eq!(
        assert_built_after_what_they_read(&g, run),
        3 + 7 * 6 + 30 + 27
    );
    assert_same(&one, a, &g, run);
    let daily: i64 = g.revenue("daily_revenue").values().sum();
    let monthly: i64 = g.revenue("monthly_revenue").values().sum();
    assert_eq!(monthly, daily, "the months add up to the days");
    if is_postgres() {
        // Some two days were in flight at once: the run did go side by side.
        let times = times(&g, run);
        let overlap = times.iter().zip(times.iter().skip(1));
        let overlapping = overlap.filter(|((_, (_, end)), (_, (began, _)))| began < end);
        assert!(
            overlapping.count() > 0,
            "no two dates overlapped: {times:?}"
        );
    }
}

/// Two sandboxes whose day 2026-02-11 fails (its insert into daily_revenue raises), the
/// full build run in each with `args`, with one job and with `n`: both runs.
fn with_a_failing_day(n: &'static str, args: &[&str]) -> ((Grains, i64), (Grains, i64)) {
    let run = |jobs: &str| {
        let g = Grains::with_orders(3453);
        g.sb.fail_inserts("daily_revenue", "2026-02-11", When::Before);
        let all = [
            &["--interval", FULL, "--as-of", AS_OF, "--jobs", jobs][..],
            args,
        ]
        .concat();
        let (_, id) = g.apply(1, &all);
        (g, id)
    };
    (run("1"), run(jobs(n)))
}

#[test]
fn jobs_2_with_keep_going_and_a_failing_day_leaves_the_rows_of_jobs_1() {
    let ((one, a), (two, b)) = with_a_failing_day("2", &["--keep-going"]);
    assert_same(&one, a, &two, b);
    let ended = statuses(&two, b);
    let failed: Vec<&Vec<String>> = ended.iter().filter(|r| r[1] != "success").collect();
    assert_eq!(
        failed,
        [&vec!["2026-02-11".to_string(), "failed".to_string()]]
    );
    assert_eq!(ended.len(), 59, "every date of the run ended: {ended:?}");
    // The failed day's rolling days, week and month were built without it.
    assert!(!two.revenue("daily_revenue").contains_key("2026-02-11"));
    two.assert_roll_ups_add_up();
}

#[test]
fn jobs_2_stopped_by_a_failing_day_leaves_the_rows_of_jobs_1() {
    // Every date after the failed one reads it (a rolling day) or waits for one that
    // does: none is taken, as with one job.
    let ((one, a), (two, b)) = with_a_failing_day("2", &[]);
    assert_same(&one, a, &two, b);
    let last = statuses(&two, b).pop().unwrap();
    assert_eq!(last, ["2026-02-11", "failed"]);
    assert_eq!(two.sb.count("SELECT count(*) FROM reservations"), 0);
    let months: Vec<String> = two.revenue("monthly_revenue").into_keys().collect();
    assert_eq!(months, ["2026-01-01"], "February ends after the stop");
}
