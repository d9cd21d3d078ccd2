//! A date that fails: what stays committed, what is recorded, and how to finish the job.

use crate::support::*;

fn boom_before_insert(sb: &Sandbox, ds: &str) {
    sb.fail_inserts("daily_revenue", ds, When::Before);
}

fn partitions(sb: &Sandbox, run: i64) -> Vec<Vec<String>> {
    sb.rows(&format!(
        "SELECT ds, status FROM run_partitions WHERE run_id = {run} ORDER BY ds"
    ))
}

#[test]
fn a_failed_date_stops_the_run_and_earlier_dates_stay() {
    let orders = Orders::new(31, "2026-02-01", 5, true);
    let expected = orders.expected();
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let interval = orders.interval();
    boom_before_insert(&sb, "2026-02-03");

    let run = sb.expect(1, &["apply", "--interval", &interval]);
    assert!(run.stderr.contains("2026-02-03"), "{}", run.stderr);
    assert!(run.stderr.contains("boom on purpose"), "{}", run.stderr);
    let run_id = sb.last_run_id();

    // Earlier dates committed and correct; the failed and later dates have no row.
    let daily = sb.daily();
    assert_eq!(
        daily.keys().collect::<Vec<_>>(),
        ["2026-02-01", "2026-02-02"]
    );
    for (ds, v) in &daily {
        assert_eq!(*v, expected[ds], "{ds}");
    }
    assert_eq!(
        partitions(&sb, run_id),
        [
            ["2026-02-01", "success"],
            ["2026-02-02", "success"],
            ["2026-02-03", "failed"]
        ],
        "later dates are not attempted"
    );
    let failed = &sb.rows(&format!(
        "SELECT error, started_at, finished_at FROM run_partitions \
         WHERE run_id = {run_id} AND ds = '2026-02-03'"
    ))[0];
    assert!(failed[0].contains("boom on purpose"), "{failed:?}");
    assert!(crate::core::is_timestamp(&failed[1]) && crate::core::is_timestamp(&failed[2]));
    assert_eq!(
        sb.rows(&format!("SELECT status FROM runs WHERE run_id = {run_id}")),
        [["failed"]]
    );
    assert!(crate::core::is_timestamp(
        &sb.rows(&format!(
            "SELECT finished_at FROM runs WHERE run_id = {run_id}"
        ))[0][0]
    ));
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);

    // status names the failure.
    let status = sb.ok(&["status", "--list", "--interval", &interval]).stdout;
    let line = status
        .lines()
        .find(|l| l.starts_with("2026-02-03"))
        .unwrap();
    assert!(
        line.contains("failed") && line.contains("boom on purpose"),
        "{status}"
    );

    // --only failed: exactly the failed date (still failing: exit 1, one row).
    sb.expect(1, &["apply", "--interval", &interval, "--only", "failed"]);
    assert_eq!(
        partitions(&sb, sb.last_run_id()),
        [["2026-02-03", "failed"]]
    );

    sb.stop_failing("daily_revenue");
    sb.ok(&["apply", "--interval", &interval, "--only", "failed"]);
    assert_eq!(
        partitions(&sb, sb.last_run_id()),
        [["2026-02-03", "success"]]
    );
    assert_eq!(sb.daily()["2026-02-03"], expected["2026-02-03"]);

    // Nothing failed any more: --only failed selects nothing.
    sb.ok(&["apply", "--interval", &interval, "--only", "failed"]);
    assert!(partitions(&sb, sb.last_run_id()).is_empty());

    // --only missing completes the interval, and only the missing dates.
    sb.ok(&["apply", "--interval", &interval, "--only", "missing"]);
    assert_eq!(
        partitions(&sb, sb.last_run_id()),
        [["2026-02-04", "success"], ["2026-02-05", "success"]]
    );
    assert_eq!(sb.daily(), expected);
    assert_eq!(sb.cumulative(), running(&expected));
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
}

#[test]
fn keep_going_computes_the_other_dates_and_still_exits_1() {
    let orders = Orders::new(32, "2026-03-01", 4, false);
    let expected = orders.expected();
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    boom_before_insert(&sb, "2026-03-02");

    sb.expect(
        1,
        &["apply", "--interval", &orders.interval(), "--keep-going"],
    );
    let run_id = sb.last_run_id();
    assert_eq!(
        partitions(&sb, run_id),
        [
            ["2026-03-01", "success"],
            ["2026-03-02", "failed"],
            ["2026-03-03", "success"],
            ["2026-03-04", "success"]
        ]
    );
    let daily = sb.daily();
    assert!(!daily.contains_key("2026-03-02"));
    for ds in ["2026-03-01", "2026-03-03", "2026-03-04"] {
        assert_eq!(daily[ds], expected[ds], "{ds}");
    }
    assert_eq!(
        sb.rows(&format!("SELECT status FROM runs WHERE run_id = {run_id}")),
        [["failed"]]
    );
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    // cumulative_revenue is derived from what exists: no row for the failed date.
    assert_eq!(sb.cumulative(), running(&daily));
}

#[test]
fn a_failed_recompute_leaves_the_old_partition_whole() {
    let mut orders = Orders::new(33, "2026-04-01", 3, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let interval = orders.interval();
    sb.ok(&["apply", "--interval", &interval]);
    let old = sb.rows("SELECT * FROM daily_revenue ORDER BY ds");
    let old_run = sb.last_run_id();

    // New data for the middle date, and a failure after its new row is inserted (so
    // after its old row was deleted).
    let before_len = orders.rows.len();
    orders.add("late-1", "2026-04-02", 123_456);
    sb.insert_orders(&orders.rows[before_len..]);
    sb.fail_inserts("daily_revenue", "2026-04-02", When::After);
    sb.expect(1, &["apply", "--interval", "2026-04-02"]);
    assert_eq!(
        sb.rows("SELECT * FROM daily_revenue ORDER BY ds"),
        old,
        "the failed date's old row must still be there, unchanged"
    );
    assert_eq!(
        sb.count("SELECT run_id FROM daily_revenue WHERE ds = '2026-04-02'"),
        old_run
    );
    let run_id = sb.last_run_id();
    assert_eq!(partitions(&sb, run_id), [["2026-04-02", "failed"]]);
    // status still says the date was built by the earlier run, and that the last attempt failed.
    let doc: serde_json::Value = serde_json::from_str(
        &sb.ok(&["--json", "status", "--interval", "2026-04-02"])
            .stdout,
    )
    .unwrap();
    assert_eq!(doc["dates"][0]["built_run"], old_run);
    assert_eq!(doc["dates"][0]["last_status"], "failed");
    assert_eq!(doc["dates"][0]["calendar"], "failed");
    assert_eq!(doc["ranges"]["failed"], serde_json::json!(["2026-04-02"]));
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);

    sb.stop_failing("daily_revenue");
    sb.ok(&["apply", "--interval", &interval, "--only", "failed"]);
    assert_eq!(sb.daily(), orders.expected());
}
