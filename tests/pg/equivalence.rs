//! The same story on both backends gives the same numbers and the same records: seeded
//! orders with re-sent, moved and tied records and an empty day; a backfill; a seal; late
//! data that corrects a sealed date; a rerun. Every table and view a grader reads is
//! compared row by row (times aside).

use std::path::Path;
use std::process::{Command, Stdio};

use rusqlite::Connection;

use crate::support::{day, sqlite_rows, Orders, Sandbox, BIN};

/// A SQLite database driven by the same binary, beside the PostgreSQL sandbox.
struct Sqlite<'a> {
    db: &'a Path,
}

impl Sqlite<'_> {
    fn ok(&self, args: &[&str]) {
        let out = Command::new(BIN)
            .env("USER", "tester")
            .env_remove("SQLRUN_DB")
            .env_remove("SQLRUN_SCHEMA")
            .arg("--db")
            .arg(self.db)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "SQLite: `sqlrun {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn exec(&self, sql: &str) {
        Connection::open(self.db)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }

    fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        sqlite_rows(&Connection::open(self.db).unwrap(), sql)
    }
}

/// What a grader reads, without the times of day (they differ between the two runs).
const READS: &[&str] = &[
    "SELECT ds, revenue, order_count, run_id FROM daily_revenue ORDER BY ds",
    "SELECT ds, revenue, order_count, corrected FROM daily_revenue_current ORDER BY ds",
    "SELECT ds, revenue, cumulative_revenue FROM cumulative_revenue ORDER BY ds",
    "SELECT ds, revenue, cumulative_revenue, sealed FROM cumulative_revenue_as_sent ORDER BY ds",
    "SELECT correction_id, ds, revenue, order_count, previous_revenue, previous_order_count, removed, run_id \
     FROM daily_revenue_corrections ORDER BY correction_id",
    "SELECT run_id, kind, interval_start, interval_end, requested_by, reason, status FROM runs ORDER BY run_id",
    "SELECT run_id, ds, status, held_by, error FROM run_partitions ORDER BY run_id, ds",
    "SELECT ds, sealed_by, reason, revenue, order_count FROM seals ORDER BY ds",
    "SELECT count(*) FROM reservations",
];

#[test]
fn the_same_story_gives_the_same_rows_on_sqlite_and_postgres() {
    let pg = Sandbox::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("same.db");
    let lite = Sqlite { db: &file };
    lite.ok(&["init"]);

    let mut orders = Orders::new(11, "2026-03-01", 21, true);
    let interval = orders.interval();
    pg.insert_orders(&orders.rows);
    for r in &orders.rows {
        lite.exec(&format!(
            "INSERT INTO orders VALUES ('{}', '{}', {}, '{}')",
            r.order_id, r.order_date, r.amount, r.created_at
        ));
    }

    let story: Vec<Vec<&str>> = vec![
        vec!["apply", "--interval", &interval, "--reason", "first build"],
        vec!["apply", "--as-of", "2026-03-22"],
        vec![
            "seal",
            "--interval",
            "2026-03-01..2026-03-07",
            "--reason",
            "week 1 report",
        ],
    ];
    for args in &story {
        pg.ok(args);
        lite.ok(args);
    }

    // Late data: a voucher on a sealed date, an amendment that moves a sealed date's order
    // to an open date, and a tie on created_at (the row inserted last wins).
    let moved = orders
        .latest()
        .values()
        .find(|o| o.order_date == day("2026-03-01", 2))
        .cloned();
    let mut late = vec![orders.add("late-voucher", &day("2026-03-01", 3), 350_000)];
    if let Some(o) = moved {
        late.push(orders.add(&o.order_id, &day("2026-03-01", 10), o.amount + 1_000));
    }
    let tie = crate::support::OrderRow {
        amount: 360_000,
        ..late[0].clone()
    };
    orders.rows.push(tie.clone());
    late.push(tie);
    pg.insert_orders(&late);
    for r in &late {
        lite.exec(&format!(
            "INSERT INTO orders VALUES ('{}', '{}', {}, '{}')",
            r.order_id, r.order_date, r.amount, r.created_at
        ));
    }
    for args in [
        vec!["apply", "--interval", &interval, "--reason", "late data"],
        vec![
            "apply",
            "--interval",
            &interval,
            "--reason",
            "late data, again",
        ],
    ] {
        pg.ok(&args);
        lite.ok(&args);
    }

    for sql in READS {
        assert_eq!(
            pg.rows(sql),
            lite.rows(sql),
            "PostgreSQL and SQLite differ on: {sql}"
        );
    }
    // And both agree with the orders themselves, independently of sqlrun.
    let current: Vec<(String, i64, i64)> = pg
        .rows("SELECT ds, revenue, order_count FROM daily_revenue_current ORDER BY ds")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap(), r[2].parse().unwrap()))
        .collect();
    let expected: Vec<(String, i64, i64)> = orders
        .expected()
        .into_iter()
        .map(|(ds, (rev, n))| (ds, rev, n))
        .collect();
    assert_eq!(current, expected);
    assert!(
        pg.count("SELECT count(*) FROM daily_revenue_corrections") >= 1,
        "the late voucher on a sealed date corrects it"
    );
}

/// CONTRACT §6: natural PostgreSQL types. Dates are `date`, times `timestamptz`, amounts
/// and ids `bigint`, flags `boolean`, in the tables and in the views.
#[test]
fn tables_and_views_have_natural_postgresql_types() {
    let sb = Sandbox::new();
    let schema = sb.schema.clone().unwrap();
    let expected = [
        ("orders", "order_date", "date"),
        ("orders", "amount", "bigint"),
        ("orders", "created_at", "timestamp with time zone"),
        ("daily_revenue", "ds", "date"),
        ("daily_revenue", "revenue", "bigint"),
        ("daily_revenue", "order_count", "bigint"),
        ("daily_revenue", "run_id", "bigint"),
        ("daily_revenue_current", "ds", "date"),
        ("daily_revenue_current", "revenue", "bigint"),
        ("daily_revenue_current", "order_count", "bigint"),
        ("daily_revenue_current", "corrected", "boolean"),
        ("cumulative_revenue", "ds", "date"),
        ("cumulative_revenue", "revenue", "bigint"),
        ("cumulative_revenue", "cumulative_revenue", "bigint"),
        ("cumulative_revenue_as_sent", "cumulative_revenue", "bigint"),
        ("runs", "run_id", "bigint"),
        ("runs", "interval_start", "date"),
        ("runs", "created_at", "timestamp with time zone"),
        ("runs", "finished_at", "timestamp with time zone"),
        ("run_partitions", "ds", "date"),
        ("run_partitions", "held_by", "bigint"),
        ("reservations", "ds", "date"),
        ("reservations", "expires_at", "timestamp with time zone"),
        ("seals", "ds", "date"),
        ("seals", "sealed_at", "timestamp with time zone"),
        ("seals", "revenue", "bigint"),
        ("daily_revenue_corrections", "correction_id", "bigint"),
        ("daily_revenue_corrections", "previous_revenue", "bigint"),
        ("daily_revenue_corrections", "removed", "boolean"),
        (
            "daily_revenue_corrections",
            "corrected_at",
            "timestamp with time zone",
        ),
    ];
    for (table, column, want) in expected {
        let got = sb.rows(&format!(
            "SELECT data_type FROM information_schema.columns \
             WHERE table_schema = '{schema}' AND table_name = '{table}' AND column_name = '{column}'"
        ));
        assert_eq!(got, vec![vec![want.to_string()]], "{table}.{column}");
    }
}

/// CONTRACT §6: two pipelines share one database in two schemas, each with its own state
/// store: a date held in one is free in the other, and run ids are their own.
#[test]
fn two_pipelines_share_a_database_in_two_schemas() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    for sb in [&a, &b] {
        sb.exec("INSERT INTO orders VALUES ('x', '2026-05-02', 700, '2026-05-02 10:00:00')");
    }
    let held = a.ok(&["reserve", "--interval", "2026-05-01..2026-05-03"]);
    assert_eq!(held.stdout.trim(), "1");
    b.ok(&["apply", "--interval", "2026-05-01..2026-05-03"]);
    assert_eq!(
        b.count("SELECT count(*) FROM run_partitions WHERE status = 'success'"),
        3
    );
    assert_eq!(b.last_run_id(), 1, "run ids are per schema");
    assert_eq!(b.daily()["2026-05-02"], (700, 1));
    assert_eq!(
        a.count("SELECT count(*) FROM reservations WHERE run_id = 1"),
        3
    );
    assert_eq!(a.count("SELECT count(*) FROM daily_revenue"), 0);
    // The other schema's run is alive to its own schema only: a's reserved run is untouched.
    assert_eq!(
        a.rows("SELECT status FROM runs WHERE run_id = 1"),
        vec![vec!["reserved".to_string()]]
    );
}

/// A password in `--db` never reaches the audit trail (runs.command) or a message.
#[test]
fn a_password_in_the_url_is_not_recorded() {
    let sb = Sandbox::new();
    let (url, schema) = sb.url();
    let with_password = url.replacen("postgresql://", "postgresql://postgres:s3cret@", 1);
    assert_ne!(with_password, url, "the test server's URL is {url}");
    let out = crate::support::cmd_with_url(
        &with_password,
        &schema,
        &["apply", "--interval", "2026-06-01"],
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let command = sb.rows("SELECT command FROM runs")[0][0].clone();
    assert!(command.contains("postgresql://postgres:***@"), "{command}");
    assert!(!command.contains("s3cret"), "{command}");
    let bad = crate::support::cmd_with_url(
        &with_password.replacen("sqlrun_test", "no_such_database", 1),
        &schema,
        &["status"],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
}
