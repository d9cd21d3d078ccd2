//! What a look back leaves behind (issue 37, point 2): a run with `--lookback N` says how
//! many dates before its window are changed, failed or missing, their span and the one
//! command that reaches them, on stderr and in `--json` (`beyond_window`), and that
//! command computes exactly those dates.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::support::*;

const START: &str = "2026-01-01";

/// The `note: ... before the look-back window ...` line of a run's stderr, if any.
fn beyond_line(run: &Run) -> Option<String> {
    run.stderr
        .lines()
        .find(|l| l.contains("before the look-back window"))
        .map(str::to_string)
}

/// `sqlrun --json apply ARGS`: the document's `beyond_window`.
fn beyond_json(sb: &Sandbox, args: &[&str]) -> Value {
    let mut all = vec!["--json", "apply"];
    all.extend_from_slice(args);
    let out = sb.ok(&all);
    let doc: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("apply --json is JSON ({e}): {}", out.stdout));
    doc["beyond_window"].clone()
}

/// The dates a run wrote a run_partitions row for, with their status.
fn partitions(sb: &Sandbox, run: i64) -> BTreeMap<String, String> {
    sb.rows(&format!(
        "SELECT CAST(ds AS TEXT), status FROM run_partitions WHERE run_id = {run} ORDER BY ds"
    ))
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

/// 40 days of orders from START; 01-01..01-30 computed but for 01-10 and 01-11 (never
/// computed) and 01-05 (failed); late orders on 01-03 and 01-07 (changed) and on 01-20,
/// which a planned backfill holds.
fn history() -> (Sandbox, Orders) {
    let sb = Sandbox::new();
    let mut orders = Orders::new(3701, START, 40, false);
    sb.insert_orders(&orders.rows);
    sb.fail_inserts("daily_revenue", "2026-01-05", When::Before);
    sb.expect(
        1,
        &[
            "apply",
            "--interval",
            "2026-01-01..2026-01-09",
            "--keep-going",
        ],
    );
    sb.stop_failing("daily_revenue");
    sb.ok(&["apply", "--interval", "2026-01-12..2026-01-30"]);
    for (id, ds) in [
        ("late-3", "2026-01-03"),
        ("late-7", "2026-01-07"),
        ("late-20", "2026-01-20"),
    ] {
        let row = orders.add(id, ds, 70_000);
        sb.insert_orders(&[row]);
    }
    sb.ok(&["reserve", "--interval", "2026-01-20", "--by", "bob"]);
    (sb, orders)
}

#[test]
fn a_look_back_says_what_needs_work_before_its_window_and_how_to_reach_it() {
    let (sb, orders) = history();
    // The regular run for 01-31 looks back 3 days: 01-28..01-31.
    let run = sb.ok(&["apply", "--as-of", "2026-02-01", "--lookback", "3"]);
    assert_eq!(
        beyond_line(&run).as_deref(),
        Some(
            "note: 5 dates before the look-back window need work: 2 changed, 1 failed, \
             2 missing (2026-01-03..2026-01-11); `sqlrun apply --interval 2026-01-11 \
             --lookback 8` reaches them"
        ),
        "{}",
        run.stderr
    );
    // Saying so writes nothing about them: the run computed only its window's dates.
    assert_eq!(
        partitions(&sb, sb.last_run_id()),
        BTreeMap::from([("2026-01-31".to_string(), "success".to_string())])
    );

    let beyond = beyond_json(&sb, &["--as-of", "2026-02-01", "--lookback", "3"]);
    assert_eq!(
        beyond,
        json!({"changed": 2, "failed": 1, "missing": 2, "first": "2026-01-03",
               "last": "2026-01-11", "dates": 5,
               "reach": "sqlrun apply --interval 2026-01-11 --lookback 8"})
    );

    // The command it names computes exactly those dates (01-20 stays with its holder).
    sb.ok(&["apply", "--interval", "2026-01-11", "--lookback", "8"]);
    let healed = partitions(&sb, sb.last_run_id());
    let five = [
        "2026-01-03",
        "2026-01-05",
        "2026-01-07",
        "2026-01-10",
        "2026-01-11",
    ];
    assert_eq!(healed.keys().collect::<Vec<_>>(), five);
    assert!(healed.values().all(|s| s == "success"), "{healed:?}");
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations WHERE CAST(ds AS TEXT) = '2026-01-20'"),
        1
    );
    let want = orders.expected();
    let daily = sb.daily();
    for ds in five {
        assert_eq!(daily[ds], want[ds], "{ds}");
    }

    // Nothing left: no note, and zeros in --json.
    let run = sb.ok(&["apply", "--as-of", "2026-02-01", "--lookback", "3"]);
    assert_eq!(beyond_line(&run), None, "{}", run.stderr);
    assert_eq!(
        beyond_json(&sb, &["--as-of", "2026-02-01", "--lookback", "3"]),
        json!({"changed": 0, "failed": 0, "missing": 0, "first": null, "last": null,
               "dates": 0, "reach": null})
    );
}

#[test]
fn one_kind_beyond_the_window_is_reached_with_only_and_a_run_without_look_back_says_nothing() {
    let sb = Sandbox::new();
    let mut orders = Orders::new(3702, START, 20, false);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", "2026-01-01..2026-01-19"]);
    for (id, ds) in [("late-2", "2026-01-02"), ("late-4", "2026-01-04")] {
        let row = orders.add(id, ds, 5_000);
        sb.insert_orders(&[row]);
    }
    // Dates before the first one ever computed are not missing: never asked for.
    let run = sb.ok(&["apply", "--as-of", "2026-01-21", "--lookback", "2"]);
    assert_eq!(
        beyond_line(&run).as_deref(),
        Some(
            "note: 2 dates before the look-back window need work: 2 changed \
             (2026-01-02..2026-01-04); `sqlrun apply --interval 2026-01-02..2026-01-04 \
             --only changed` reaches them"
        ),
        "{}",
        run.stderr
    );
    // Without a look back (a backfill, a regular run with --lookback 0 aside) nothing is
    // said and --json has no beyond_window.
    let run = sb.ok(&["apply", "--interval", "2026-01-19"]);
    assert_eq!(beyond_line(&run), None);
    assert_eq!(beyond_json(&sb, &["--interval", "2026-01-19"]), Value::Null);

    sb.ok(&[
        "apply",
        "--interval",
        "2026-01-02..2026-01-04",
        "--only",
        "changed",
    ]);
    assert_eq!(
        partitions(&sb, sb.last_run_id())
            .into_keys()
            .collect::<Vec<_>>(),
        ["2026-01-02", "2026-01-04"]
    );
    let daily = sb.daily();
    assert_eq!(daily["2026-01-02"], orders.expected()["2026-01-02"]);
}
