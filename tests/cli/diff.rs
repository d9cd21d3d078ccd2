//! `apply --diff`: each date computed as the run would, in a transaction that is rolled
//! back, and what would change per model and partition. Writes nothing at all (every
//! table and every object of the database the same after it), makes no other run wait,
//! and says what the run then does. `sqlrun diff RUN`: what a run changed, from history.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::concurrency::{finish, spawn};
use crate::support::*;
use crate::templates::copy_templates;

const START: &str = "2026-02-01";

/// Every table of the sandbox's database, every row, and the text of every object (tables,
/// views, indexes, triggers), to compare before and after: on SQLite from sqlite_schema,
/// on PostgreSQL from the catalog of the sandbox's schema (each row as PostgreSQL writes
/// it as text: every digit and microsecond).
fn dump(sb: &Sandbox) -> BTreeMap<String, Vec<Vec<String>>> {
    let (objects, tables, row_text) = match &sb.schema {
        None => (
            "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema".to_string(),
            "SELECT name FROM sqlite_schema WHERE type = 'table'".to_string(),
            None,
        ),
        Some(schema) => (
            format!(
                "SELECT c.relname, c.relkind::text, \
                        coalesce(pg_catalog.pg_get_viewdef(c.oid, true), '') \
                 FROM pg_catalog.pg_class AS c \
                 JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace \
                 WHERE n.nspname = '{schema}'"
            ),
            format!("SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = '{schema}'"),
            Some(()),
        ),
    };
    let mut out = BTreeMap::new();
    let mut listed = sb.rows(&objects);
    listed.sort();
    out.insert("(objects)".to_string(), listed);
    for table in sb.rows(&tables).into_iter().map(|r| r[0].clone()) {
        let sql = match row_text {
            None => format!("SELECT * FROM \"{table}\""),
            Some(()) => format!("SELECT CAST(t AS text) FROM \"{table}\" AS t"),
        };
        let mut rows = sb.rows(&sql);
        rows.sort();
        out.insert(table, rows);
    }
    assert!(out.contains_key("runs") && out.contains_key("daily_revenue"));
    out
}

/// Asserts that two dumps are the same, naming the first table that differs.
fn same_dump(
    before: &BTreeMap<String, Vec<Vec<String>>>,
    after: &BTreeMap<String, Vec<Vec<String>>>,
) {
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "the same tables"
    );
    for (table, rows) in before {
        assert_eq!(rows, &after[table], "{table}: the same rows");
    }
}

fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: not JSON:\n{}\nstderr: {}", run.stdout, run.stderr))
}

/// A model's partitions in a preview's (or a diff's) JSON: ds -> partition.
fn partitions<'a>(doc: &'a Value, model: &str) -> BTreeMap<String, &'a Value> {
    let m = doc["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == model)
        .unwrap_or_else(|| panic!("no model {model} in {doc}"));
    m["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["ds"].as_str().unwrap().to_string(), p))
        .collect()
}

/// A measure's (before, after, delta) in a partition (or a total).
fn total(p: &Value, column: &str) -> (i64, i64, i64) {
    let t = p["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["column"] == column)
        .unwrap_or_else(|| panic!("no total of {column} in {p}"));
    let n = |k: &str| t[k].as_i64().unwrap_or_else(|| panic!("{k} of {t}"));
    (n("before"), n("after"), n("delta"))
}

fn counts(p: &Value) -> (i64, i64, i64) {
    let n = |k: &str| p[k].as_i64().unwrap();
    (n("added"), n("removed"), n("changed"))
}

/// Fourteen days of orders, computed; then late orders on some of them (a new order, an
/// amended one that moves to another date, a refund): the preview's before, after and
/// delta per date are what summing the orders says, and every table stays as it was.
#[test]
fn a_preview_of_14_dates_shows_what_the_late_orders_change_and_writes_nothing() {
    let mut orders = Orders::new(36, START, 14, true);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let interval = orders.interval();
    sb.ok(&["apply", "--interval", &interval]);
    let before = orders.expected();
    let first = orders.rows.len();
    let moved = orders.latest().values().next().unwrap().clone();
    orders.add("late-1", &day(START, 2), 120_000);
    orders.add("late-2", &day(START, 9), -35_000);
    orders.add(&moved.order_id, &day(START, 11), 7_000);
    orders.add("late-3", &day(START, 11), 410_000);
    sb.insert_orders(&orders.rows[first..]);
    let after = orders.expected();
    assert_ne!(before, after);

    let dumped = dump(&sb);
    let run = sb.ok(&["--json", "apply", "--interval", &interval, "--diff"]);
    same_dump(&dumped, &dump(&sb));
    let doc = json(&run);
    assert_eq!(doc["run_id"], Value::Null);
    assert_eq!(doc["written"], "nothing");
    assert_eq!(doc["outcomes"]["computed"], 14, "{doc}");
    let parts = partitions(&doc, "daily_revenue");
    assert_eq!(parts.len(), 14);
    let mut sum = (0, 0);
    for (ds, (revenue, count)) in &after {
        let p = parts[ds];
        let (b, a) = (before[ds], (*revenue, *count));
        assert_eq!(total(p, "revenue"), (b.0, a.0, a.0 - b.0), "{ds}");
        assert_eq!(total(p, "order_count"), (b.1, a.1, a.1 - b.1), "{ds}");
        let changed = i64::from(b != a);
        assert_eq!(counts(p), (0, 0, changed), "{ds}");
        assert_eq!(p["before_from"], "daily_revenue");
        sum = (sum.0 + a.0 - b.0, sum.1 + a.1 - b.1);
    }
    let m = &doc["models"][0];
    assert_eq!(total(&m["total"], "revenue").2, sum.0);
    assert_eq!(total(&m["total"], "order_count").2, sum.1);
    assert_eq!(
        counts(&m["total"]).2,
        after.iter().filter(|(ds, v)| before[*ds] != **v).count() as i64
    );

    // The text says the same, with the unchanged dates as ranges.
    let text = sb.ok(&["apply", "--interval", &interval, "--diff"]);
    contains_all(
        &text.stdout,
        &[
            "preview of 2026-02-01..2026-02-14 (14 dates): 14 dates computed and rolled back, nothing written",
            "daily_revenue: 3 of 14 dates would change (key: ds)",
            "2026-02-03  0      0        1",
            "+120,000",
            "-35,000",
            "unchanged (11 dates): ",
        ],
    );
    same_dump(&dumped, &dump(&sb));

    // What the run then writes is what the preview said it would.
    sb.ok(&["apply", "--interval", &interval]);
    assert_eq!(sb.daily(), after);
}

/// Seal a week, then late data on it: the preview compares a sealed date with what is true
/// now (its `_current` view, corrections applied) and says the run would correct it; the
/// run then records exactly that correction.
#[test]
fn a_sealed_date_is_compared_with_what_is_true_now_and_would_get_a_correction() {
    let mut orders = Orders::new(37, START, 7, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&["seal", "--interval", &orders.interval(), "--reason", "W05"]);
    let first = orders.rows.len();
    orders.add("late-1", &day(START, 3), 50_000);
    sb.insert_orders(&orders.rows[first..]);
    sb.ok(&["apply", "--interval", &day(START, 3)]);
    let corrected = sb.current()[&day(START, 3)];
    let first = orders.rows.len();
    orders.add("late-2", &day(START, 3), 9_000);
    sb.insert_orders(&orders.rows[first..]);

    let dumped = dump(&sb);
    let run = sb.ok(&[
        "--json",
        "apply",
        "--interval",
        &orders.interval(),
        "--diff",
    ]);
    same_dump(&dumped, &dump(&sb));
    let doc = json(&run);
    let p = partitions(&doc, "daily_revenue")[&day(START, 3)];
    assert_eq!(p["sealed"], true);
    assert_eq!(p["before_from"], "daily_revenue_current");
    // Before: the correction of the first late order, not the value as sent.
    assert_eq!(
        total(p, "revenue"),
        (corrected.0, corrected.0 + 9_000, 9_000)
    );
    let text = sb.ok(&["apply", "--interval", &orders.interval(), "--diff"]);
    contains_all(
        &text.stdout,
        &[
            "2026-02-04 (sealed)",
            "sealed: 2026-02-04 compared with daily_revenue_current (what is true now); the run \
             would record corrections there, never overwrite what went out",
        ],
    );
    sb.ok(&["apply", "--interval", &orders.interval()]);
    assert_eq!(sb.current()[&day(START, 3)].0, corrected.0 + 9_000);
}

// bands and share (downstream of it, read by name within the date): select.rs's.
use crate::select::{BANDS, SHARE};

/// A running total that reads its own table's day before (as computed by this run, in
/// ascending order) and daily_revenue's day.
const RUNNING: &str = "\
-- name: running
-- version: 1
-- key: ds
-- values: revenue_to_date
-- additive: revenue_to_date
-- depends_on: daily_revenue
-- create: CREATE TABLE running (ds DATE NOT NULL PRIMARY KEY, revenue_to_date BIGINT NOT NULL,
--     run_id BIGINT NOT NULL)
SELECT d.ds,
       d.revenue + coalesce((SELECT r.revenue_to_date FROM running AS r WHERE r.ds = {{ prev_ds }}), 0)
         AS revenue_to_date
FROM daily_revenue AS d
WHERE d.ds = {{ ds }}
";

/// Per model and date, the totals of the rows in its table now, as the preview's `after`
/// would have them.
fn table_totals(sb: &Sandbox, table: &str, columns: &[&str]) -> BTreeMap<String, Vec<i64>> {
    let sums: Vec<String> = columns
        .iter()
        .map(|c| format!("coalesce(sum({c}), 0)"))
        .collect();
    sb.rows(&format!(
        "SELECT ds, {} FROM {table} GROUP BY ds",
        sums.join(", ")
    ))
    .into_iter()
    .map(|r| {
        let values = r[1..].iter().map(|v| v.parse().unwrap()).collect();
        (r[0].clone(), values)
    })
    .collect()
}

/// Four models, one reading another by name within the date (share reads bands) and one
/// reading its own table's day before (a running total): the preview's `after` is, model by
/// model and date by date, what the run then writes, and its `before` what was there.
#[test]
fn a_preview_computes_downstream_models_and_later_dates_as_the_run_does() {
    let mut orders = Orders::new(38, START, 10, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let tpl = copy_templates(&sb);
    std::fs::write(tpl.join("models/bands.sql"), BANDS).unwrap();
    std::fs::write(tpl.join("models/share.sql"), SHARE).unwrap();
    std::fs::write(tpl.join("models/running.sql"), RUNNING).unwrap();
    let tpl = tpl.to_str().unwrap();
    let interval = orders.interval();
    sb.ok(&["--templates", tpl, "apply", "--interval", &interval]);
    let first = orders.rows.len();
    orders.add("late-1", &day(START, 1), 20_000);
    orders.add("late-2", &day(START, 4), 330_000);
    orders.add("late-3", &day(START, 4), 1_000);
    sb.insert_orders(&orders.rows[first..]);

    let models: [(&str, &[&str]); 4] = [
        ("daily_revenue", &["revenue", "order_count"]),
        ("bands", &["n"]),
        ("share", &["n", "total"]),
        ("running", &["revenue_to_date"]),
    ];
    let was: Vec<_> = models
        .iter()
        .map(|(m, c)| table_totals(&sb, m, c))
        .collect();
    let dumped = dump(&sb);
    let run = sb.ok(&[
        "--templates",
        tpl,
        "--json",
        "apply",
        "--interval",
        &interval,
        "--diff",
    ]);
    same_dump(&dumped, &dump(&sb));
    let doc = json(&run);
    sb.ok(&["--templates", tpl, "apply", "--interval", &interval]);
    for ((model, columns), was) in models.iter().zip(was) {
        let now = table_totals(&sb, model, columns);
        let parts = partitions(&doc, model);
        for (ds, values) in &now {
            for (i, column) in columns.iter().enumerate() {
                let (b, a, _) = total(parts[ds], column);
                assert_eq!((b, a), (was[ds][i], values[i]), "{model}.{column} on {ds}");
            }
        }
    }
    // The running total moves on every date from the first late order on.
    let running = partitions(&doc, "running");
    let moved: Vec<&String> = running
        .iter()
        .filter(|(_, p)| counts(p).2 == 1)
        .map(|(ds, _)| ds)
        .collect();
    assert_eq!(moved.len(), 9, "{running:?}");
}

/// A date held by another run, a date not selected, and a date whose error check fails are
/// listed as such; the preview exits as the run would (99 for the held date), and its
/// rows are those of the dates it computed.
#[test]
fn dates_the_run_would_not_compute_are_said_and_not_computed() {
    let orders = Orders::new(39, START, 6, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &day(START, 0)]);
    let reserved = sb.ok(&["reserve", "--interval", &day(START, 2), "--reason", "mine"]);
    let holder = reserved.stdout.trim().to_string();
    let dumped = dump(&sb);
    let run = sb.expect(
        99,
        &[
            "--json",
            "apply",
            "--interval",
            &orders.interval(),
            "--only",
            "missing",
            "--diff",
        ],
    );
    same_dump(&dumped, &dump(&sb));
    let doc = json(&run);
    assert_eq!(doc["exit"], 99);
    let outcome = |ds: &str| {
        doc["dates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["ds"] == ds)
            .map(|d| d["outcome"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(outcome(&day(START, 0)), "not_selected");
    assert_eq!(outcome(&day(START, 1)), "computed");
    assert_eq!(outcome(&day(START, 2)), "held");
    let parts = partitions(&doc, "daily_revenue");
    assert!(!parts.contains_key(&day(START, 0)) && !parts.contains_key(&day(START, 2)));
    let p = parts[&day(START, 1)];
    assert_eq!(
        counts(p),
        (1, 0, 0),
        "a date never computed: its key is added"
    );
    assert_eq!(total(p, "order_count").0, 0);
    let text = sb.expect(
        99,
        &[
            "apply",
            "--interval",
            &orders.interval(),
            "--only",
            "missing",
            "--diff",
        ],
    );
    contains_all(
        &text.stdout,
        &[
            &format!("2026-02-03: held by run {holder} ("),
            "2026-02-01: not selected",
        ],
    );
    // A warn check that finds rows: said, and the date counts.
    sb.exec(
        "INSERT INTO orders (order_id, order_date, amount, created_at) \
         VALUES ('x', '2026-02-05', -900000000, '2030-06-01 00:00:00')",
    );
    let text = sb.ok(&["apply", "--interval", &day(START, 4), "--diff"]);
    contains_all(
        &text.stdout,
        &["2026-02-05: warn: check daily_revenue_revenue_not_negative (model daily_revenue) found 1 failing row"],
    );
    // An error check that finds rows: the run would roll the date back, and the dates after
    // it read its rows as they were.
    let tpl = copy_templates(&sb);
    std::fs::create_dir_all(tpl.join("checks")).unwrap();
    std::fs::write(
        tpl.join("checks/revenue_floor.sql"),
        "-- name: revenue_floor\n-- version: 1\n-- model: daily_revenue\n-- severity: error\n\
         {% import \"system/checks.sql\" as check %}\n{{ check.accepted_range(\"revenue\", min=0) }}\n",
    )
    .unwrap();
    let tpl = tpl.to_str().unwrap();
    let dumped = dump(&sb);
    let run = sb.expect(
        1,
        &[
            "--templates",
            tpl,
            "--json",
            "apply",
            "--interval",
            &day(START, 4),
            "--diff",
        ],
    );
    same_dump(&dumped, &dump(&sb));
    let doc = json(&run);
    assert_eq!(doc["exit"], 1);
    assert_eq!(doc["dates"][0]["outcome"], "failed", "{doc}");
    assert!(
        doc["dates"][0]["message"]
            .as_str()
            .unwrap()
            .contains("check revenue_floor (model daily_revenue) found 1 failing row"),
        "{doc}"
    );
    let m = &doc["models"][0];
    assert_eq!(counts(&m["partitions"][0]).0, 1, "its diff is shown");
    assert_eq!(counts(&m["total"]), (0, 0, 0), "and counts in no total");
}

/// `--diff` beside what cannot go with it is refused (exit 2) with what would work, and
/// writes nothing; so is a preview of a pipeline whose objects are not all there yet.
#[test]
fn bad_combinations_are_refused_and_write_nothing() {
    let orders = Orders::new(40, START, 3, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let reserved = sb.ok(&["reserve", "--interval", "2026-03-01"]);
    let run_id = reserved.stdout.trim().to_string();
    let dumped = dump(&sb);
    let interval = orders.interval();
    let cases: [(&[&str], &str); 3] = [
        (&["--dry-run"], "--diff with --dry-run"),
        (&["--jobs", "2"], "--diff with --jobs 2"),
        (&["--create"], "--diff with --create"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["apply", "--interval", interval.as_str(), "--diff"];
        args.extend_from_slice(extra);
        let run = sb.expect(2, &args);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    let run = sb.expect(2, &["apply", "--run", &run_id, "--diff"]);
    assert!(
        run.stderr.contains(&format!("--diff with --run {run_id}"))
            && run
                .stderr
                .contains("sqlrun apply --interval START..END --diff"),
        "{}",
        run.stderr
    );
    same_dump(&dumped, &dump(&sb));

    // A model the database has no table for yet: `sqlrun init` makes it; the preview does not.
    let tpl = copy_templates(&sb);
    std::fs::write(tpl.join("models/bands.sql"), BANDS).unwrap();
    let tpl = tpl.to_str().unwrap();
    let run = sb.expect(
        2,
        &[
            "--templates",
            tpl,
            "apply",
            "--interval",
            &interval,
            "--diff",
        ],
    );
    assert!(
        run.stderr.contains("writes nothing") && run.stderr.contains("sqlrun init"),
        "{}",
        run.stderr
    );
    same_dump(&dumped, &dump(&sb));
    sb.ok(&["--templates", tpl, "init"]);
    let run = sb.ok(&[
        "--templates",
        tpl,
        "--json",
        "apply",
        "--interval",
        &interval,
        "--diff",
    ]);
    let doc = json(&run);
    let bands = partitions(&doc, "bands");
    assert!(bands
        .values()
        .all(|p| counts(p).0 > 0 && p["rows_before"] == 0));
}

/// A model whose every date takes a while to compute (about `secs` seconds): SQLite counts
/// rows of a recursive CTE, PostgreSQL sleeps.
fn slow_model(secs: f64) -> String {
    let burn = match is_sqlite() {
        true => format!(
            "(SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
             WHERE x < {}) SELECT x FROM c) AS burn)",
            (secs / 0.3e-6) as u64
        ),
        false => format!("(SELECT count(*) FROM pg_catalog.pg_sleep({secs}) AS burn)"),
    };
    format!(
        "-- name: slow\n-- version: 1\n-- key: ds\n-- values: n\n\
         -- create: CREATE TABLE slow (ds DATE NOT NULL PRIMARY KEY, n BIGINT NOT NULL, run_id BIGINT NOT NULL)\n\
         SELECT {{{{ ds }}}} AS ds, {burn} AS n\n"
    )
}

/// A long preview (a slow model over a month) holds nothing anyone waits for: a regular
/// run started while it is under way, for a date inside its interval, reserves and computes
/// that date at once and exits 0; the preview then ends as it would have.
#[test]
fn a_regular_run_started_during_a_long_preview_computes_its_date_at_once() {
    let orders = Orders::new(41, START, 30, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let tpl = copy_templates(&sb);
    std::fs::write(tpl.join("models/slow.sql"), slow_model(0.5)).unwrap();
    let tpl = tpl.to_str().unwrap().to_string();
    let interval = orders.interval();
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        &interval,
        "--select",
        "daily_revenue",
    ]);
    let started = Instant::now();
    let mut preview = spawn(
        &sb,
        &[
            "--templates",
            &tpl,
            "apply",
            "--interval",
            &interval,
            "--diff",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        preview.try_wait().unwrap().is_none(),
        "the preview is under way"
    );
    let asked = Instant::now();
    let regular = sb.run(&[
        "--templates",
        &tpl,
        "apply",
        "--as-of",
        &day(START, 21),
        "--select",
        "daily_revenue",
    ]);
    let took = asked.elapsed();
    assert_eq!(regular.code, 0, "{}", regular.stderr);
    assert!(
        preview.try_wait().unwrap().is_none(),
        "the regular run ended while the preview was still under way ({:?} in)",
        started.elapsed()
    );
    assert!(
        took < Duration::from_secs(10),
        "the regular run took {took:?}"
    );
    let ds = day(START, 20);
    let run_id = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT status FROM run_partitions WHERE run_id = {run_id} AND ds = '{ds}'"
        )),
        [["success"]]
    );
    let preview = finish(preview);
    assert_eq!(preview.code, 0, "{}", preview.stderr);
    assert!(
        started.elapsed() > Duration::from_secs(3),
        "the preview was long: {:?}",
        started.elapsed()
    );
    contains_all(&preview.stdout, &["slow: 30 of 30 dates would change"]);
    assert_eq!(sb.count("SELECT count(*) FROM slow"), 0, "nothing written");
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
}

/// Fourteen days built by run 1; late orders; the first week backfilled by run 2: `sqlrun
/// diff 2` says, date by date, what summing the orders says before and after, and run 1's
/// diff says what it built. Once a later run replaces a date again, run 2's diff still
/// says the same (its rows read from history); and it writes nothing.
#[test]
fn what_a_backfill_changed_is_what_summing_the_orders_says() {
    let mut orders = Orders::new(42, START, 14, true);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let before = orders.expected();
    let first = orders.rows.len();
    orders.add("late-1", &day(START, 2), 120_000);
    orders.add("late-2", &day(START, 5), -40_000);
    orders.add("late-3", &day(START, 12), 5_000);
    sb.insert_orders(&orders.rows[first..]);
    let after = orders.expected();
    let week = format!("{START}..{}", day(START, 6));
    sb.ok(&["apply", "--interval", &week]);
    let backfill = sb.last_run_id();

    let check = |doc: &Value| {
        assert_eq!(doc["run"]["run_id"], backfill);
        let parts = partitions(doc, "daily_revenue");
        assert_eq!(parts.len(), 7, "the week it replaced, not the 13th");
        for (ds, p) in &parts {
            let (b, a) = (before[ds], after[ds]);
            assert_eq!(total(p, "revenue"), (b.0, a.0, a.0 - b.0), "{ds}");
            assert_eq!(total(p, "order_count"), (b.1, a.1, a.1 - b.1), "{ds}");
            assert_eq!(counts(p), (0, 0, i64::from(a != b)), "{ds}");
            assert_eq!(p["replaced_run"], backfill - 1);
            assert_eq!(p["before_from"], "daily_revenue_history");
        }
        let m = &doc["models"][0];
        let moved: i64 = parts.keys().map(|ds| after[ds].0 - before[ds].0).sum();
        assert_eq!(total(&m["total"], "revenue").2, moved);
        assert_eq!(moved, 80_000);
    };
    let dumped = dump(&sb);
    let doc = json(&sb.ok(&["--json", "diff", &backfill.to_string()]));
    same_dump(&dumped, &dump(&sb));
    check(&doc);
    assert!(partitions(&doc, "daily_revenue")
        .values()
        .all(|p| p["replaced_since"].is_null()));
    let text = sb.ok(&["diff", &backfill.to_string()]).stdout;
    contains_all(
        &text,
        &[
            &format!("run {backfill} (backfill 2026-02-01..2026-02-07, success, by tester)"),
            "daily_revenue: 2 of 7 dates changed (key: ds)",
            "+120,000",
            "-40,000",
            "unchanged (5 dates): 2026-02-01..2026-02-02, 2026-02-04..2026-02-05, 2026-02-07",
        ],
    );

    // Run 1 built what was never there: every key added.
    let doc = json(&sb.ok(&["--json", "diff", &(backfill - 1).to_string()]));
    let parts = partitions(&doc, "daily_revenue");
    assert_eq!(parts.len(), 14);
    for (ds, p) in &parts {
        assert_eq!(counts(p), (1, 0, 0), "{ds}");
        assert_eq!(total(p, "revenue"), (0, before[ds].0, before[ds].0));
        assert!(p["replaced_run"].is_null());
        let since = if ds.as_str() <= day(START, 6).as_str() {
            Value::from(backfill)
        } else {
            Value::Null
        };
        assert_eq!(p["replaced_since"], since, "{ds}");
    }

    // Replaced again since: the backfill's rows are read from history.
    sb.ok(&["apply", "--interval", &day(START, 2)]);
    let doc = json(&sb.ok(&["--json", "diff", &backfill.to_string()]));
    check(&doc);
    assert_eq!(
        partitions(&doc, "daily_revenue")[&day(START, 2)]["replaced_since"],
        backfill + 1
    );
    let narrow = json(&sb.ok(&[
        "--json",
        "diff",
        &backfill.to_string(),
        "--interval",
        &day(START, 2),
    ]));
    assert_eq!(partitions(&narrow, "daily_revenue").len(), 1);

    // One model between two points: as it stood once run 1 was done, against once the
    // backfill was: the same as what the backfill changed, on the dates it replaced, and
    // nothing elsewhere; and back again the other way.
    let from_to = |from: i64, to: i64| {
        json(&sb.ok(&[
            "--json",
            "diff",
            "--model",
            "daily_revenue",
            "--from",
            &from.to_string(),
            "--to",
            &to.to_string(),
        ]))
    };
    let doc = from_to(backfill - 1, backfill);
    assert_eq!(doc["from"], backfill - 1);
    let parts: BTreeMap<String, &Value> = doc["model"]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["ds"].as_str().unwrap().to_string(), p))
        .collect();
    assert_eq!(parts.len(), 14);
    for (ds, p) in &parts {
        let (b, a) = match ds.as_str() <= day(START, 6).as_str() {
            true => (before[ds], after[ds]),
            false => (before[ds], before[ds]),
        };
        assert_eq!(total(p, "revenue"), (b.0, a.0, a.0 - b.0), "{ds}");
        assert!(p.get("pruned").is_none());
    }
    let back = from_to(backfill, backfill - 1);
    assert_eq!(
        total(&back["model"]["total"], "revenue").2,
        -total(&doc["model"]["total"], "revenue").2
    );
    let text = sb.ok(&[
        "diff",
        "--model",
        "daily_revenue",
        "--from",
        "1",
        "--to",
        "2",
    ]);
    contains_all(
        &text.stdout,
        &[
            "run 1 (backfill 2026-02-01..2026-02-14, success) against run 2 (backfill \
             2026-02-01..2026-02-07, success): the rows as they stood once each was done",
            "daily_revenue: 2 of 14 dates differ (key: ds)",
        ],
    );
    let bad = sb.expect(2, &["diff", "--model", "nope", "--from", "1", "--to", "2"]);
    contains_all(
        &bad.stderr,
        &["--model nope: no such model", "daily_revenue"],
    );
    let bad = sb.expect(2, &["diff", "--model", "daily_revenue", "--from", "1"]);
    contains_all(&bad.stderr, &["--to"]);
}

/// An unknown run, a run that replaced nothing (released before it computed, or whose
/// dates were all sealed), and a run whose history the retention pruned: exit 2, saying
/// what would work, and nothing written.
#[test]
fn a_diff_of_nothing_is_refused_with_what_would_work() {
    let orders = Orders::new(43, START, 4, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&["seal", "--interval", &orders.interval(), "--reason", "sent"]);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let sealed_run = sb.last_run_id();
    let reserved = sb.ok(&["reserve", "--interval", "2026-03-01"]);
    let released = reserved.stdout.trim().to_string();
    sb.ok(&["release", &released]);
    let dumped = dump(&sb);
    let unknown = sb.expect(2, &["diff", "99"]);
    contains_all(&unknown.stderr, &["no run 99", "sqlrun runs"]);
    let nothing = sb.expect(2, &["diff", &released]);
    contains_all(
        &nothing.stderr,
        &[
            &format!("run {released} ("),
            "replaced no partition",
            &format!("sqlrun runs {released}"),
        ],
    );
    let sealed = sb.expect(2, &["diff", &sealed_run.to_string()]);
    contains_all(
        &sealed.stderr,
        &[
            "replaced no partition",
            "4 sealed date(s) get corrections",
            "sqlrun corrections",
        ],
    );
    let json_error = sb.expect(2, &["--json", "diff", "99"]);
    assert!(
        json(&json_error)["error"].is_object(),
        "{}",
        json_error.stdout
    );
    same_dump(&dumped, &dump(&sb));

    // Pruned: with one version kept, the first run's replaces are gone by the third.
    let pruned = Sandbox::new();
    pruned.insert_orders(&orders.rows);
    std::fs::write(
        pruned.path().join("sqlrun.toml"),
        "[history]\nkeep = \"1 versions\"\n",
    )
    .unwrap();
    for _ in 0..3 {
        pruned.ok(&["apply", "--interval", &orders.interval()]);
    }
    let gone = pruned.expect(2, &["diff", "1"]);
    contains_all(&gone.stderr, &["replaced no partition", "[history] keep"]);
    pruned.ok(&["diff", "3"]);
    // Between two points, the one history no longer knows whole is said.
    let doc = json(&pruned.ok(&[
        "--json",
        "diff",
        "--model",
        "daily_revenue",
        "--from",
        "1",
        "--to",
        "3",
    ]));
    let parts = doc["model"]["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 4);
    assert!(
        parts
            .iter()
            .all(|p| p["pruned"] == serde_json::json!(["before"])),
        "{doc}"
    );
    let text = pruned.ok(&[
        "diff",
        "--model",
        "daily_revenue",
        "--from",
        "1",
        "--to",
        "3",
    ]);
    contains_all(
        &text.stdout,
        &["2026-02-01..2026-02-04: history pruned ([history] keep): the before rows are not all known"],
    );
    let known = json(&pruned.ok(&[
        "--json",
        "diff",
        "--model",
        "daily_revenue",
        "--from",
        "2",
        "--to",
        "3",
    ]));
    assert!(
        known["model"]["partitions"][0].get("pruned").is_none(),
        "{known}"
    );
}

/// A gate on the change (`change_against_previous`: revenue may not move by more than 20%
/// against the version the run replaces) reads, in a preview, what the run would replace:
/// the date whose revenue would move more is said to fail, as the run then fails it; the
/// date that moves less would commit; and on a sealed date the gate reads what is true now.
#[test]
fn a_gate_on_the_change_gates_the_preview_as_it_gates_the_run() {
    let mut orders = Orders::new(44, START, 4, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let tpl = copy_templates(&sb);
    std::fs::create_dir_all(tpl.join("checks")).unwrap();
    std::fs::write(
        tpl.join("checks/revenue_gate.sql"),
        "-- name: revenue_gate\n-- version: 1\n-- model: daily_revenue\n-- severity: error\n\
         {% import \"system/checks.sql\" as check %}\n\
         {{ check.change_against_previous(\"revenue\", ratio=0.2) }}\n",
    )
    .unwrap();
    let tpl = tpl.to_str().unwrap();
    let interval = orders.interval();
    sb.ok(&["--templates", tpl, "apply", "--interval", &interval]);
    sb.ok(&[
        "--templates",
        tpl,
        "seal",
        "--interval",
        &day(START, 3),
        "--reason",
        "sent",
    ]);
    let daily = orders.expected();
    let first = orders.rows.len();
    // Half again on the 2nd (gated), a tenth on the 3rd (passes), half again on the 4th,
    // which is sealed (gated against its current values).
    orders.add("big", &day(START, 1), daily[&day(START, 1)].0 / 2);
    orders.add("small", &day(START, 2), daily[&day(START, 2)].0 / 10);
    orders.add("sealed", &day(START, 3), daily[&day(START, 3)].0 / 2);
    sb.insert_orders(&orders.rows[first..]);

    let dumped = dump(&sb);
    let run = sb.expect(
        1,
        &[
            "--templates",
            tpl,
            "--json",
            "apply",
            "--interval",
            &interval,
            "--diff",
        ],
    );
    same_dump(&dumped, &dump(&sb));
    let doc = json(&run);
    let outcome: BTreeMap<String, String> = doc["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let ds = d["ds"].as_str().unwrap().to_string();
            (ds, d["outcome"].as_str().unwrap().to_string())
        })
        .collect();
    let want: BTreeMap<String, String> = [
        (day(START, 0), "computed"),
        (day(START, 1), "failed"),
        (day(START, 2), "computed"),
        (day(START, 3), "failed"),
    ]
    .into_iter()
    .map(|(d, o)| (d, o.to_string()))
    .collect();
    assert_eq!(outcome, want, "{doc}");
    let failed = &doc["dates"][1]["message"];
    assert!(failed.as_str().unwrap().contains("revenue_gate"), "{doc}");

    // The run does what the preview said.
    sb.expect(
        1,
        &[
            "--templates",
            tpl,
            "apply",
            "--interval",
            &interval,
            "--keep-going",
        ],
    );
    let run_id = sb.last_run_id();
    let statuses: Vec<Vec<String>> = sb.rows(&format!(
        "SELECT ds, status FROM run_partitions WHERE run_id = {run_id} ORDER BY ds"
    ));
    let statuses: BTreeMap<String, String> = statuses
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    assert_eq!(statuses[&day(START, 1)], "failed");
    assert_eq!(statuses[&day(START, 2)], "success");
    assert_eq!(statuses[&day(START, 3)], "failed");
}
