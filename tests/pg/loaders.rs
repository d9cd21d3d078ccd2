//! Statistics on PostgreSQL: `load` and `generate` analyze what they loaded, and `apply`
//! analyzes a source whose statistics the server's counters call stale (rows inserted
//! behind sqlrun's back), and leaves a fresh one alone. The server's own counters are the
//! witness: pg_stat_user_tables.analyze_count counts manual ANALYZEs only (autovacuum's
//! are autoanalyze_count), and pg_class.reltuples is what the planner believes.

use std::time::{Duration, Instant};

use crate::support::*;

/// How often the sandbox's `orders` was analyzed by hand (ANALYZE, not autovacuum).
fn analyze_count(sb: &Sandbox) -> i64 {
    sb.count("SELECT analyze_count FROM pg_stat_user_tables WHERE relid = to_regclass('orders')")
}

/// The rows the planner believes `orders` holds.
fn planner_rows(sb: &Sandbox) -> i64 {
    sb.count("SELECT CAST(reltuples AS bigint) FROM pg_class WHERE oid = to_regclass('orders')")
}

/// A CSV of `n` orders on 2026-01-01..03, written into the sandbox's folder.
fn orders_csv(sb: &Sandbox, n: usize) -> String {
    let mut csv = String::from("order_id,order_date,amount\n");
    for i in 0..n {
        csv.push_str(&format!("c{i},2026-01-0{},{}\n", 1 + i % 3, 100 + i));
    }
    let path = sb.path().join("orders.csv");
    std::fs::write(&path, csv).unwrap();
    path.display().to_string()
}

/// Waits (at most 10 s) until the server's counters show at least `rows` changes of
/// `orders` since its last ANALYZE: a session reports its counts when it ends or idles.
fn counted(sb: &Sandbox, rows: i64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let sql = "SELECT n_mod_since_analyze FROM pg_stat_user_tables \
               WHERE relid = to_regclass('orders')";
    while sb.count(sql) < rows {
        assert!(
            Instant::now() < deadline,
            "the server did not count the inserts within 10 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_bulk_load_is_analyzed() {
    let sb = Sandbox::new();
    let csv = orders_csv(&sb, 3000);
    assert_eq!(analyze_count(&sb), 0);
    sb.ok(&["load", "orders", &csv]);
    assert_eq!(analyze_count(&sb), 1, "load analyzes the table it loaded");
    assert_eq!(planner_rows(&sb), 3000);
}

#[test]
fn generate_is_analyzed() {
    let sb = Sandbox::new();
    let run = sb.ok(&[
        "generate",
        "--start",
        "2026-01-01",
        "--days",
        "5",
        "--per-day",
        "200",
    ]);
    let rows = sb.count("SELECT count(*) FROM orders");
    assert!(rows > 1000, "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("inserted {rows} order rows")),
        "{}",
        run.stdout
    );
    assert_eq!(analyze_count(&sb), 1, "generate analyzes orders");
    assert_eq!(planner_rows(&sb), rows);
}

#[test]
fn apply_analyzes_a_stale_source_and_leaves_a_fresh_one() {
    let sb = Sandbox::new();
    let csv = orders_csv(&sb, 300);
    sb.ok(&["load", "orders", &csv]);
    assert_eq!(analyze_count(&sb), 1);
    let interval = ["apply", "--interval", "2026-01-01..2026-01-03"];
    sb.ok(&interval);
    assert_eq!(analyze_count(&sb), 1, "fresh statistics are left alone");

    // Behind sqlrun's back: more new rows than autovacuum's 50 + 10 % of 300.
    let mut loader = sb.pg_client();
    loader
        .batch_execute(
            "INSERT INTO orders (order_id, order_date, amount) \
             SELECT 'x' || g, DATE '2026-01-02', 5 FROM generate_series(1, 500) AS g",
        )
        .unwrap();
    drop(loader);
    counted(&sb, 500);
    sb.ok(&interval);
    assert_eq!(analyze_count(&sb), 2, "apply analyzes a stale source first");
    assert_eq!(planner_rows(&sb), 800);
    // The dates were computed from all rows, as always.
    let day = sb.count("SELECT order_count FROM daily_revenue WHERE ds = DATE '2026-01-02'");
    assert_eq!(day, 600);

    sb.ok(&interval);
    assert_eq!(analyze_count(&sb), 2, "and once analyzed, not again");
}

/// The activity counters start empty on a database copied from a template, after a crash
/// or a reset, while the statistics themselves are intact: that is not "never analyzed".
#[test]
fn statistics_kept_through_a_counter_reset_are_not_analyzed_again() {
    let sb = Sandbox::new();
    let csv = orders_csv(&sb, 300);
    sb.ok(&["load", "orders", &csv]);
    assert_eq!(analyze_count(&sb), 1);
    sb.exec("SELECT pg_stat_reset_single_table_counters(to_regclass('orders'))");
    assert_eq!(analyze_count(&sb), 0);
    sb.ok(&["apply", "--interval", "2026-01-01..2026-01-03"]);
    assert_eq!(
        analyze_count(&sb),
        0,
        "the statistics are there: no ANALYZE"
    );
    assert_eq!(planner_rows(&sb), 300);
}

#[test]
fn a_role_that_may_not_analyze_is_told_and_goes_on() {
    let sb = Sandbox::new();
    let (url, schema) = sb.url();
    // A loader that may insert orders but owns nothing (the triggers note as their owner).
    let role = format!("loader_{schema}");
    sb.exec(&format!(
        "CREATE ROLE {role} LOGIN; GRANT USAGE ON SCHEMA {schema} TO {role}; \
         GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA {schema} TO {role}"
    ));
    let url = url.replace("user=postgres", &format!("user={role}"));
    let args = [
        "generate",
        "--start",
        "2026-01-01",
        "--days",
        "2",
        "--per-day",
        "50",
    ];
    let out = cmd_with_url(&url, &schema, &args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let rows = sb.count("SELECT count(*) FROM orders");
    assert!(
        stdout.contains(&format!("inserted {rows} order rows")),
        "{stdout}"
    );
    let notes: Vec<&str> = stderr.lines().filter(|l| l.contains("ANALYZE")).collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    contains_all(
        notes[0],
        &["note: ANALYZE orders skipped", "may not analyze", "owner"],
    );
    assert_eq!(analyze_count(&sb), 0);
    sb.exec(&format!(
        "REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role}; \
         REVOKE ALL ON SCHEMA {schema} FROM {role}; DROP ROLE {role}"
    ));
}

/// The dates `source_changes` notes, as text.
fn noted(sb: &Sandbox) -> Vec<String> {
    sb.rows("SELECT DISTINCT CAST(ds AS text) FROM source_changes ORDER BY 1")
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
}

/// A CSV of orders: (order_id, order_date) pairs, each once.
fn csv_of(sb: &Sandbox, name: &str, rows: &[(String, &str)]) -> String {
    let mut csv = String::from("order_id,order_date,amount\n");
    for (i, (id, date)) in rows.iter().enumerate() {
        csv.push_str(&format!("{id},{date},{}\n", 100 + i));
    }
    let path = sb.path().join(name);
    std::fs::write(&path, csv).unwrap();
    path.display().to_string()
}

/// `n` new orders named `prefix0`, `prefix1`, ..., on the two dates in turn.
fn orders_on<'a>(prefix: &str, n: usize, dates: [&'a str; 2]) -> Vec<(String, &'a str)> {
    (0..n)
        .map(|i| (format!("{prefix}{i}"), dates[i % 2]))
        .collect()
}

/// A big first load into an empty source notes its rows' own dates without looking up
/// their keys' other rows (the table holds no other row), also a key the file holds
/// twice; a big load onto older rows still notes the dates of an older order it re-sends.
#[test]
fn a_first_bulk_load_notes_its_dates_and_a_later_one_its_orders_older_dates() {
    let sb = Sandbox::new();
    let mut first = orders_on("a", 3000, ["2026-01-01", "2026-01-02"]);
    // One order sent twice in the same file, the second time on another date.
    first.push(("a0".into(), "2026-01-03"));
    let csv = csv_of(&sb, "first.csv", &first);
    sb.ok(&["load", "orders", &csv]);
    assert_eq!(noted(&sb), ["2026-01-01", "2026-01-02", "2026-01-03"]);
    sb.ok(&["apply", "--interval", "2026-01-01..2026-01-05"]);
    assert!(noted(&sb).is_empty(), "the run took the notes");

    // New orders on the 4th and 5th, and a1 (on the 2nd so far) re-sent on the 5th.
    let mut second = orders_on("b", 3000, ["2026-01-04", "2026-01-05"]);
    second.push(("a1".into(), "2026-01-05"));
    let csv = csv_of(&sb, "second.csv", &second);
    sb.ok(&["load", "orders", &csv]);
    assert_eq!(
        noted(&sb),
        ["2026-01-02", "2026-01-04", "2026-01-05"],
        "the re-sent order's older date is noted too"
    );
    sb.ok(&[
        "apply",
        "--only",
        "changed",
        "--interval",
        "2026-01-01..2026-01-05",
    ]);
    // a1 counts on the 5th now, not on the 2nd.
    let on = |ds: &str| {
        sb.count(&format!(
            "SELECT order_count FROM daily_revenue WHERE ds = DATE '{ds}'"
        ))
    };
    assert_eq!((on("2026-01-02"), on("2026-01-05")), (1499, 1501));
}

/// Rows an earlier statement of the same transaction rewrote count as the table's own:
/// after an update that changed nothing (and so noted nothing) of every row, a big insert
/// in that transaction that re-sends an older order still notes the order's older date.
#[test]
fn a_big_insert_after_a_rewrite_in_its_transaction_still_notes_older_dates() {
    let sb = Sandbox::new();
    let first = orders_on("a", 50, ["2026-01-01", "2026-01-01"]);
    let csv = csv_of(&sb, "first.csv", &first);
    sb.ok(&["load", "orders", &csv]);
    sb.ok(&["apply", "--interval", "2026-01-01..2026-01-02"]);
    assert!(noted(&sb).is_empty());
    let mut loader = sb.pg_client();
    loader
        .batch_execute(
            "BEGIN; \
             UPDATE orders SET amount = amount; \
             INSERT INTO orders (order_id, order_date, amount) \
             SELECT 'b' || g, DATE '2026-01-02', 5 FROM generate_series(1, 2000) AS g \
             UNION ALL SELECT 'a7', DATE '2026-01-02', 9; \
             COMMIT;",
        )
        .unwrap();
    drop(loader);
    assert_eq!(noted(&sb), ["2026-01-01", "2026-01-02"]);
}
