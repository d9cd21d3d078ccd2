//! The core behaviour: whole-partition replacement, idempotence, the regular run, the audit
//! trail, dry runs, JSON output, render and the read commands.

use crate::support::*;

/// A timestamp as the contract writes them: UTC text `YYYY-MM-DD HH:MM:SS`.
pub(crate) fn is_timestamp(s: &str) -> bool {
    s.len() == 19 && chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").is_ok()
}

/// A sandbox with `orders` inserted.
fn with_orders(orders: &Orders) -> Sandbox {
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb
}

fn dates_of(orders: &Orders) -> Vec<String> {
    (0..orders.days).map(|i| day(&orders.start, i)).collect()
}

#[test]
fn at_once_and_date_by_date_agree_and_match_expected() {
    for seed in [1, 2, 3, 4] {
        let orders = Orders::new(seed, "2026-02-01", 7, true);
        let expected = orders.expected();
        assert!(
            expected.values().any(|v| *v == (0, 0)),
            "seed {seed}: the data has an empty day"
        );

        let at_once = with_orders(&orders);
        at_once.ok(&["apply", "--interval", &orders.interval()]);

        let by_date = with_orders(&orders);
        for ds in dates_of(&orders) {
            by_date.ok(&["apply", "--interval", &ds]);
        }

        assert_eq!(
            at_once.daily(),
            by_date.daily(),
            "seed {seed}: daily_revenue"
        );
        assert_eq!(
            at_once.current(),
            by_date.current(),
            "seed {seed}: daily_revenue_current"
        );
        assert_eq!(
            at_once.cumulative(),
            by_date.cumulative(),
            "seed {seed}: cumulative_revenue"
        );

        assert_eq!(at_once.daily(), expected, "seed {seed}: numbers");
        assert_eq!(at_once.current(), expected, "seed {seed}: current numbers");
        assert_eq!(
            at_once.cumulative(),
            running(&expected),
            "seed {seed}: cumulative"
        );
        // The empty day has a row of zeros.
        let empty = orders.empty_day.clone().unwrap();
        assert_eq!(at_once.daily()[&empty], (0, 0), "seed {seed}: empty day");
        // One run for the interval, one per date the other way.
        assert_eq!(at_once.count("SELECT count(*) FROM runs"), 1);
        assert_eq!(by_date.count("SELECT count(*) FROM runs"), orders.days);
    }
}

#[test]
fn applying_twice_changes_no_number_and_records_a_second_run() {
    let orders = Orders::new(11, "2026-03-01", 5, true);
    let sb = with_orders(&orders);
    let interval = orders.interval();
    sb.ok(&["apply", "--interval", &interval]);
    let first_daily = sb.daily();
    let first_cum = sb.cumulative();
    let first_run = sb.last_run_id();

    sb.ok(&["apply", "--interval", &interval]);
    assert_eq!(sb.daily(), first_daily);
    assert_eq!(sb.current(), first_daily);
    assert_eq!(sb.cumulative(), first_cum);
    assert_eq!(sb.daily(), orders.expected());

    let second_run = sb.last_run_id();
    assert_eq!(second_run, first_run + 1);
    assert_eq!(
        sb.count("SELECT count(*) FROM runs WHERE status = 'success'"),
        2
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {second_run} AND status = 'success'"
        )),
        orders.days
    );
    // Every partition now says the second run built it; still one row per date.
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM daily_revenue WHERE run_id = {second_run}"
        )),
        orders.days
    );
    assert_eq!(sb.count("SELECT count(*) FROM daily_revenue"), orders.days);
}

#[test]
fn backfill_after_amended_orders_is_reflected_without_double_counting() {
    for seed in [21, 22] {
        let mut orders = Orders::new(seed, "2026-02-01", 6, true);
        let sb = with_orders(&orders);
        let interval = orders.interval();
        sb.ok(&["apply", "--interval", &interval]);
        assert_eq!(sb.daily(), orders.expected());
        let before = orders.expected();

        // Amend every fifth winning order: a new amount, and every other one moves to
        // another date (sometimes into the empty day).
        let before_len = orders.rows.len();
        let latest: Vec<_> = orders.latest().into_values().collect();
        for (i, row) in latest.iter().enumerate().step_by(5) {
            let date = if i % 2 == 0 {
                day(&orders.start, (i as i64) % orders.days)
            } else {
                row.order_date.clone()
            };
            orders.add(&row.order_id, &date, 7_000 + i as i64);
        }
        sb.insert_orders(&orders.rows[before_len..]);
        let after = orders.expected();
        assert_ne!(
            before, after,
            "seed {seed}: the amendments change some dates"
        );

        sb.ok(&["apply", "--interval", &interval]);
        assert_eq!(
            sb.daily(),
            after,
            "seed {seed}: daily_revenue after backfill"
        );
        assert_eq!(sb.current(), after, "seed {seed}: daily_revenue_current");
        assert_eq!(sb.cumulative(), running(&after), "seed {seed}: cumulative");
        let total: i64 = after.values().map(|v| v.0).sum();
        assert_eq!(sb.cumulative().last().unwrap().2, total, "seed {seed}");
        assert_eq!(sb.count("SELECT count(*) FROM daily_revenue"), orders.days);
        let orders_counted: i64 = sb.count("SELECT sum(order_count) FROM daily_revenue");
        assert_eq!(orders_counted, orders.latest().len() as i64, "seed {seed}");

        // And again: the derived total does not grow.
        sb.ok(&["apply", "--interval", &interval]);
        assert_eq!(sb.cumulative(), running(&after), "seed {seed}: third apply");
    }
}

#[test]
fn regular_run_computes_the_day_before_as_of() {
    let orders = Orders::new(5, "2026-02-27", 4, false);
    let sb = with_orders(&orders);
    let expected = orders.expected();

    sb.ok(&["apply", "--as-of", "2026-03-01"]);
    let run = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, interval_start, interval_end, status FROM runs WHERE run_id = {run}"
        )),
        [["regular", "2026-02-28", "2026-02-28", "success"]]
    );
    assert_eq!(
        sb.rows("SELECT ds FROM daily_revenue"),
        [["2026-02-28"]],
        "only the day before --as-of"
    );
    assert_eq!(sb.daily()["2026-02-28"], expected["2026-02-28"]);

    sb.ok(&["apply", "--as-of", "2026-03-02", "--kind", "backfill"]);
    let run = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, interval_start, interval_end FROM runs WHERE run_id = {run}"
        )),
        [["backfill", "2026-03-01", "2026-03-01"]]
    );

    // --interval is a backfill by default; --kind regular overrides.
    sb.ok(&["apply", "--interval", "2026-02-27"]);
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind FROM runs WHERE run_id = {}",
            sb.last_run_id()
        )),
        [["backfill"]]
    );
    sb.ok(&["apply", "--interval", "2026-03-02", "--kind", "regular"]);
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind FROM runs WHERE run_id = {}",
            sb.last_run_id()
        )),
        [["regular"]]
    );
    assert_eq!(sb.daily(), expected);
}

#[test]
fn runs_and_run_partitions_record_who_what_and_when() {
    let orders = Orders::new(8, "2026-04-01", 3, false);
    let sb = with_orders(&orders);
    let interval = orders.interval();

    sb.ok(&[
        "apply",
        "--interval",
        &interval,
        "--by",
        "alice",
        "--reason",
        "late data",
    ]);
    let run = sb.last_run_id();
    let row = &sb.rows(&format!(
        "SELECT kind, interval_start, interval_end, requested_by, reason, status, \
                created_at, started_at, finished_at FROM runs WHERE run_id = {run}"
    ))[0];
    assert_eq!(
        &row[..6],
        [
            "backfill",
            "2026-04-01",
            "2026-04-03",
            "alice",
            "late data",
            "success"
        ]
    );
    for ts in &row[6..] {
        assert!(is_timestamp(ts), "runs timestamp {ts:?}");
    }
    assert!(row[6] <= row[7] && row[7] <= row[8], "{row:?}");

    let parts = sb.rows(&format!(
        "SELECT ds, status, held_by, error, started_at, finished_at FROM run_partitions \
         WHERE run_id = {run} ORDER BY ds"
    ));
    assert_eq!(parts.len(), 3);
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p[0], day("2026-04-01", i as i64));
        assert_eq!(&p[1..4], ["success", "NULL", "NULL"]);
        assert!(is_timestamp(&p[4]) && is_timestamp(&p[5]), "{p:?}");
        assert!(p[4] <= p[5], "{p:?}");
    }
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);

    // --by defaults to $USER.
    sb.ok(&["apply", "--interval", "2026-04-02"]);
    assert_eq!(
        sb.rows(&format!(
            "SELECT requested_by, reason FROM runs WHERE run_id = {}",
            sb.last_run_id()
        )),
        [["tester", "NULL"]]
    );
    // ... else the account it runs as: see scripting.rs.
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    assert_eq!(sb.daily(), orders.expected());
}

#[test]
fn dry_run_writes_nothing_and_prints_the_plan_and_the_sql() {
    let orders = Orders::new(9, "2026-05-01", 3, false);
    let sb = with_orders(&orders);
    sb.ok(&["apply", "--interval", "2026-05-01"]);
    let before = snapshot(&sb);

    let run = sb.ok(&[
        "apply",
        "--interval",
        "2026-05-01..2026-05-03",
        "--dry-run",
        "--sql",
    ]);
    assert_eq!(snapshot(&sb), before, "--dry-run wrote something");
    assert!(
        run.stdout
            .contains("\n2026-05-01              recompute  1 date   current\n")
            && run
                .stdout
                .contains("2026-05-02..2026-05-03  compute    2 dates  missing\n"),
        "the plan in ranges:\n{}",
        run.stdout
    );
    // The date as a literal: '2026-05-02' (SQLite), or DATE '2026-05-02' (PostgreSQL).
    assert!(
        run.stdout.lines().any(
            |l| l.starts_with("DELETE FROM \"daily_revenue\" WHERE \"ds\" = ")
                && l.contains("'2026-05-02'")
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("INSERT INTO \"daily_revenue\""),
        "{}",
        run.stdout
    );
    // Each date's transaction: BEGIN IMMEDIATE on SQLite; on PostgreSQL a BEGIN it has.
    let begins: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("BEGIN"))
        .collect();
    assert_eq!(begins.len(), 3, "one BEGIN per date:\n{}", run.stdout);
    for begin in begins {
        if is_sqlite() {
            assert!(begin.starts_with("BEGIN IMMEDIATE"), "{}", run.stdout);
        } else {
            assert!(
                !begin.contains("IMMEDIATE"),
                "BEGIN IMMEDIATE is SQLite's, PostgreSQL has no such statement:\n{}",
                run.stdout
            );
        }
    }

    let run = sb.ok(&[
        "--json",
        "apply",
        "--interval",
        "2026-05-01..2026-05-03",
        "--only",
        "missing",
        "--dry-run",
        "--sql",
    ]);
    assert_eq!(snapshot(&sb), before, "--dry-run --json wrote something");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("dry run JSON");
    let plan = doc["plan"].as_array().unwrap();
    assert_eq!(plan.len(), 3);
    assert_eq!(plan[0]["action"], "not_selected");
    let sql = doc["sql"].as_array().unwrap();
    let sql_dates: Vec<&str> = sql.iter().map(|s| s["ds"].as_str().unwrap()).collect();
    assert_eq!(sql_dates, ["2026-05-02", "2026-05-03"]);
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 1);
}

#[test]
fn json_output_of_apply_status_and_runs_parses() {
    let orders = Orders::new(10, "2026-06-01", 3, true);
    let sb = with_orders(&orders);
    let run = sb.ok(&["--json", "apply", "--interval", &orders.interval()]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("apply --json");
    let run_id = sb.last_run_id();
    assert_eq!(doc["run_id"], run_id);
    assert_eq!(doc["status"], "success");
    assert_eq!(doc["kind"], "backfill");
    let dates = doc["dates"].as_array().unwrap();
    assert_eq!(dates.len(), 3);
    assert!(dates.iter().all(|d| d["status"] == "success"), "{doc}");

    let run = sb.ok(&["--json", "status", "--interval", "2026-06-01..2026-06-04"]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("status --json");
    assert_eq!(doc["interval"], "2026-06-01..2026-06-04");
    assert_eq!(doc["counts"]["computed"], 3);
    assert_eq!(doc["ranges"]["missing"], serde_json::json!(["2026-06-04"]));
    let rows = doc["dates"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in &rows[..3] {
        assert_eq!(r["built_run"], run_id, "{r}");
        assert_eq!(r["state_name"], "computed", "{r}");
        assert_eq!(r["stale"], false, "{r}");
    }
    assert_eq!(rows[3]["ds"], "2026-06-04");
    assert_eq!(rows[3]["state_name"], "missing");
    assert!(rows[3]["built_run"].is_null());

    let run = sb.ok(&["--json", "runs"]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("runs --json");
    let runs = doc.as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["run_id"], run_id);
    assert_eq!(runs[0]["status"], "success");
    assert_eq!(runs[0]["done"], 3);

    let run = sb.ok(&["--json", "runs", &run_id.to_string()]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("runs ID --json");
    assert_eq!(doc["run"]["run_id"], run_id);
    assert_eq!(doc["run"]["status"], "success");
    let ds: Vec<&str> = doc["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["ds"].as_str().unwrap())
        .collect();
    assert_eq!(ds, ["2026-06-01", "2026-06-02", "2026-06-03"]);
}

#[test]
fn rendered_sql_builds_the_same_row_as_apply() {
    let orders = Orders::new(12, "2026-07-01", 3, false);
    let sb = with_orders(&orders);
    sb.ok(&["apply", "--interval", "2026-07-01"]);

    let rendered = sb.ok(&["render", "--date", "2026-07-02"]).stdout;
    assert!(rendered.contains("'2026-07-02'"), "{rendered}");
    // The rendered SQL, run on the database as it is before the apply (a copy of it).
    let query =
        "SELECT ds, revenue, order_count, run_id FROM daily_revenue WHERE ds = '2026-07-02'";
    let from_render = sb.rows_after_script(&rendered, query);

    sb.ok(&["apply", "--interval", "2026-07-02"]);
    let applied = sb.rows(query);
    assert_eq!(from_render, applied);
    let (rev, cnt) = orders.expected()["2026-07-02"];
    assert_eq!(applied[0][1..3], [rev.to_string(), cnt.to_string()]);

    // One model's SELECT alone.
    let select = sb
        .ok(&["render", "--date", "2026-07-03", "daily_revenue"])
        .stdout;
    let (rev, cnt) = orders.expected()["2026-07-03"];
    assert_eq!(
        sb.rows(&select),
        [["2026-07-03".to_string(), rev.to_string(), cnt.to_string()]]
    );
}

#[test]
fn status_shows_computed_and_missing_dates() {
    let orders = Orders::new(13, "2026-08-01", 4, false);
    let sb = with_orders(&orders);
    sb.ok(&["apply", "--interval", "2026-08-01..2026-08-02"]);
    let out = sb
        .ok(&["status", "--list", "--interval", "2026-08-01..2026-08-04"])
        .stdout;
    let line = |ds: &str| {
        out.lines()
            .find(|l| l.starts_with(ds))
            .unwrap_or_else(|| panic!("no line for {ds}:\n{out}"))
            .to_string()
    };
    for ds in ["2026-08-01", "2026-08-02"] {
        assert!(line(ds).contains("computed"), "{out}");
    }
    for ds in ["2026-08-03", "2026-08-04"] {
        assert!(line(ds).contains("missing"), "{out}");
    }
    // Without --interval: the first to the last date the database knows, source rows
    // included.
    let out = sb.ok(&["status"]).stdout;
    let (first, last) = (orders.start.clone(), day(&orders.start, orders.days - 1));
    assert!(out.starts_with(&format!("{first}..{last}: ")), "{out}");
}

#[test]
fn runs_shows_one_runs_dates() {
    let orders = Orders::new(14, "2026-09-01", 3, false);
    let sb = with_orders(&orders);
    sb.ok(&[
        "apply",
        "--interval",
        "2026-09-01..2026-09-03",
        "--by",
        "bob",
    ]);
    sb.ok(&["apply", "--interval", "2026-09-02"]);
    let first = sb.last_run_id() - 1;
    let out = sb.ok(&["runs", &first.to_string()]).stdout;
    assert!(
        out.contains("\n2026-09-01..2026-09-03  success  3 dates\n"),
        "{out}"
    );
    assert!(out.contains("bob"), "{out}");
    let out = sb.ok(&["runs", &first.to_string(), "--dates"]).stdout;
    for ds in ["2026-09-01", "2026-09-02", "2026-09-03"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(ds))
            .unwrap_or_else(|| panic!("no line for {ds}:\n{out}"));
        assert!(line.contains("success"), "{out}");
    }
    assert!(out.contains("bob"), "{out}");
    let list = sb.ok(&["runs"]).stdout;
    assert!(list.contains("bob") && list.contains("tester"), "{list}");
}

#[test]
fn status_without_an_interval_spans_the_dates_the_store_knows() {
    let sb = Sandbox::new();
    sb.ok(&["apply", "--interval", "2024-02-28..2024-03-01"]);
    sb.ok(&["apply", "--interval", "2025-12-31..2026-01-01"]);
    let out = sb.ok(&["--json", "status"]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["interval"], "2024-02-28..2026-01-01");
    let rows = doc["dates"].as_array().unwrap();
    // Every date between, the leap day and the turn of the year included.
    assert_eq!(rows.len(), 674);
    let computed: Vec<&str> = rows
        .iter()
        .filter(|r| r["calendar"] == "computed")
        .map(|r| r["ds"].as_str().unwrap())
        .collect();
    assert_eq!(
        computed,
        [
            "2024-02-28",
            "2024-02-29",
            "2024-03-01",
            "2025-12-31",
            "2026-01-01"
        ]
    );
    assert_eq!(
        doc["ranges"]["missing"],
        serde_json::json!(["2024-03-02..2025-12-30"])
    );
    assert_eq!(
        sb.rows("SELECT ds, revenue, order_count FROM daily_revenue WHERE ds = '2024-02-29'"),
        vec![vec!["2024-02-29", "0", "0"]]
    );
}
