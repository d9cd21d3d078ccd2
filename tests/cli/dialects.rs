//! One template, two backends: the date macros of `system/dialect.sql` (days_before,
//! days_after, month_start, iso_week_start, year_start) give the same dates on SQLite and
//! PostgreSQL, read back from the rows `apply` wrote; and `render --dialect` shows either
//! backend's SQL whatever the database is, the other one's without connecting.

use std::path::Path;
use std::process::Command;

use chrono::{Datelike, Days, NaiveDate};

use crate::support::*;
use crate::templates::copy_templates;

/// A model whose columns are each macro applied to its date (a value), to another
/// macro's output, and to a column.
const DATE_PARTS: &str = r#"-- name: date_parts
-- version: 1
-- key: ds
-- values: day_before, day_after, month_after, week_before, month_start, week_start,
--   year_start, next_day_month, column_week, column_year
-- create: CREATE TABLE date_parts (ds DATE NOT NULL PRIMARY KEY, day_before DATE NOT NULL,
--   day_after DATE NOT NULL, month_after DATE NOT NULL, week_before DATE NOT NULL,
--   month_start DATE NOT NULL, week_start DATE NOT NULL, year_start DATE NOT NULL,
--   next_day_month DATE NOT NULL, column_week DATE NOT NULL, column_year DATE NOT NULL)
{% import "system/dialect.sql" as d %}
SELECT {{ ds }} AS ds,
       {{ d.days_before(ds, 1) }} AS day_before,
       {{ d.days_after(ds, 1) }} AS day_after,
       {{ d.days_after(ds, 30) }} AS month_after,
       {{ d.days_after(ds, -7) }} AS week_before,
       {{ d.month_start(ds) }} AS month_start,
       {{ d.iso_week_start(ds) }} AS week_start,
       {{ d.year_start(ds) }} AS year_start,
       {{ d.month_start(d.days_after(ds, 1)) }} AS next_day_month,
       {{ d.iso_week_start("on_day"|ident) }} AS column_week,
       {{ d.year_start("on_day"|ident) }} AS column_year
FROM (SELECT {{ ds }} AS on_day) AS t
"#;

/// A model over the seven days that end on its date (as the guide's weekly_orders).
const WEEKLY: &str = r#"-- name: weekly_orders
-- version: 1
-- key: ds
-- values: order_count
-- sources: orders(order_date, key order_id)
-- create: CREATE TABLE weekly_orders (ds DATE NOT NULL PRIMARY KEY, order_count BIGINT NOT NULL)
{% import "system/dialect.sql" as d %}
SELECT {{ ds }} AS ds, count(*) AS order_count
FROM orders_latest AS o
WHERE o.order_date > {{ d.days_before(ds, 7) }} AND o.order_date <= {{ ds }}
"#;

/// The built-in pipeline and one more model, in the sandbox's folder.
fn pipeline_with(sb: &Sandbox, name: &str, text: &str) -> String {
    let dir = copy_templates(sb);
    std::fs::write(dir.join("models").join(format!("{name}.sql")), text).unwrap();
    dir.display().to_string()
}

fn day(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

/// What each column of date_parts must hold for date `ds`, by chrono's calendar.
fn expected(ds: NaiveDate) -> Vec<String> {
    let plus = |d: NaiveDate, n: i64| match n >= 0 {
        true => d.checked_add_days(Days::new(n as u64)).unwrap(),
        false => d.checked_sub_days(Days::new(n.unsigned_abs())).unwrap(),
    };
    let month = |d: NaiveDate| d.with_day(1).unwrap();
    let monday = |d: NaiveDate| plus(d, -i64::from(d.weekday().num_days_from_monday()));
    let year = |d: NaiveDate| d.with_ordinal(1).unwrap();
    [
        ds,
        plus(ds, -1),
        plus(ds, 1),
        plus(ds, 30),
        plus(ds, -7),
        month(ds),
        monday(ds),
        year(ds),
        month(plus(ds, 1)),
        monday(ds),
        year(ds),
    ]
    .iter()
    .map(|d| d.format("%Y-%m-%d").to_string())
    .collect()
}

#[test]
fn the_date_macros_give_the_same_dates_on_every_backend() {
    let sb = Sandbox::new();
    let tpl = pipeline_with(&sb, "date_parts", DATE_PARTS);
    // A leap year's February into March (2024-02-29 a Thursday, 2024-03-03 a Sunday);
    // a year's end (2025-12-28 a Sunday, 2026-01-01 a Thursday whose ISO week began in
    // 2025); a February of 28 days; and the leap day of 2028, which has not come yet.
    let intervals = [
        "2024-02-26..2024-03-04",
        "2025-12-27..2026-01-05",
        "2026-02-27..2026-03-01",
    ];
    for interval in intervals {
        sb.ok(&["--templates", &tpl, "apply", "--interval", interval]);
    }
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        "2028-02-28..2028-03-01",
        "--allow-partial-day",
    ]);
    let rows = sb.rows(
        "SELECT ds, day_before, day_after, month_after, week_before, month_start, week_start, \
         year_start, next_day_month, column_week, column_year FROM date_parts ORDER BY ds",
    );
    let dates: Vec<NaiveDate> = intervals
        .iter()
        .chain(&["2028-02-28..2028-03-01"])
        .flat_map(|i| {
            let (start, end) = i.split_once("..").unwrap();
            day(start).iter_days().take_while(move |d| *d <= day(end))
        })
        .collect();
    assert_eq!(rows.len(), dates.len(), "a row per date: {rows:?}");
    for (row, ds) in rows.iter().zip(&dates) {
        assert_eq!(*row, expected(*ds), "date_parts on {ds}");
    }

    // The dates that tell a wrong spelling apart, written out (not only by chrono).
    let of = |ds: &str| {
        rows.iter()
            .find(|r| r[0] == ds)
            .unwrap_or_else(|| panic!("no row for {ds}"))
            .clone()
    };
    let leap = of("2024-02-29");
    assert_eq!(
        leap[1..8],
        [
            "2024-02-28",
            "2024-03-01",
            "2024-03-30",
            "2024-02-22",
            "2024-02-01",
            "2024-02-26",
            "2024-01-01"
        ]
    );
    assert_eq!(of("2024-02-28")[2], "2024-02-29", "the day after");
    assert_eq!(of("2024-03-01")[1], "2024-02-29", "the day before");
    assert_eq!(of("2024-02-29")[8], "2024-03-01", "month of the day after");
    // A Sunday belongs to the ISO week that began six days before it.
    assert_eq!(of("2024-03-03")[6], "2024-02-26");
    assert_eq!(
        of("2024-03-04")[6],
        "2024-03-04",
        "a Monday is its own week's start"
    );
    assert_eq!(of("2025-12-28")[6], "2025-12-22");
    // 1 January 2026 is in the ISO week of 29 December 2025, and in the year 2026.
    assert_eq!(of("2026-01-01")[6..8], ["2025-12-29", "2026-01-01"]);
    assert_eq!(of("2025-12-31")[2], "2026-01-01");
    assert_eq!(of("2026-02-28")[2..4], ["2026-03-01", "2026-03-30"]);
    assert_eq!(of("2026-03-01")[6], "2026-02-23", "Sunday 1 March 2026");
    assert_eq!(of("2028-02-29")[1..3], ["2028-02-28", "2028-03-01"]);
    assert_eq!(of("2028-03-01")[1], "2028-02-29");
    // The column forms agree with the value forms.
    for row in &rows {
        assert_eq!(row[9], row[6], "{row:?}");
        assert_eq!(row[10], row[7], "{row:?}");
    }
}

/// The binary on a database given by `db` alone (a file or a URL), in `dir`, with no
/// SQLRUN_* from outside: for the renders that must not connect to it.
fn unconnected(dir: &Path, db: &str, args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars() {
        if key.starts_with("SQLRUN_") || key.starts_with("PG") {
            cmd.env_remove(key);
        }
    }
    cmd.env("USER", "tester").env("NO_COLOR", "1");
    let out = cmd
        .current_dir(dir)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    Run::from(out)
}

#[test]
fn render_dialect_shows_either_backend_s_sql() {
    let sb = Sandbox::new();
    let tpl = pipeline_with(&sb, "weekly_orders", WEEKLY);
    let render = |dialect: &str| {
        sb.ok(&[
            "--templates",
            &tpl,
            "render",
            "--date",
            "2026-02-10",
            "weekly_orders",
            "--dialect",
            dialect,
        ])
        .stdout
    };
    let sqlite = render("sqlite");
    contains_all(
        &sqlite,
        &[
            "SELECT '2026-02-10' AS ds",
            "o.order_date > date('2026-02-10', '-7 days') AND o.order_date <= '2026-02-10'",
        ],
    );
    let postgres = render("postgres");
    contains_all(
        &postgres,
        &[
            "SELECT DATE '2026-02-10' AS ds",
            "o.order_date > (CAST(DATE '2026-02-10' AS date) - CAST(7 AS integer)) AND \
             o.order_date <= DATE '2026-02-10'",
        ],
    );
    assert!(!postgres.contains("date('"), "{postgres}");
    // The database's own dialect is what render shows without the flag.
    let own = sb
        .ok(&[
            "--templates",
            &tpl,
            "render",
            "--date",
            "2026-02-10",
            "weekly_orders",
        ])
        .stdout;
    assert_eq!(&own, if is_sqlite() { &sqlite } else { &postgres });

    // The other macros, as each backend spells them.
    let tpl = pipeline_with(&sb, "date_parts", DATE_PARTS);
    let parts = |dialect: &str| {
        sb.ok(&[
            "--templates",
            &tpl,
            "render",
            "--date",
            "2028-02-29",
            "date_parts",
            "--dialect",
            dialect,
        ])
        .stdout
    };
    contains_all(
        &parts("sqlite"),
        &[
            "date('2028-02-29', '+1 days') AS day_after",
            "date('2028-02-29', '-7 days') AS week_before",
            "date('2028-02-29', 'start of month') AS month_start",
            "date('2028-02-29', 'weekday 0', '-6 days') AS week_start",
            "date('2028-02-29', 'start of year') AS year_start",
            "date(date('2028-02-29', '+1 days'), 'start of month') AS next_day_month",
            "date(\"on_day\", 'weekday 0', '-6 days') AS column_week",
        ],
    );
    contains_all(
        &parts("postgres"),
        &[
            "(CAST(DATE '2028-02-29' AS date) + CAST(1 AS integer)) AS day_after",
            "(CAST(DATE '2028-02-29' AS date) + CAST((-7) AS integer)) AS week_before",
            "CAST(date_trunc('month', CAST(DATE '2028-02-29' AS timestamp)) AS date) AS month_start",
            "CAST(date_trunc('week', CAST(DATE '2028-02-29' AS timestamp)) AS date) AS week_start",
            "CAST(date_trunc('year', CAST(DATE '2028-02-29' AS timestamp)) AS date) AS year_start",
            "CAST(date_trunc('week', CAST(\"on_day\" AS timestamp)) AS date) AS column_week",
        ],
    );

    // A whole date: the other backend's transaction, its run the placeholder :run_id.
    let other = if is_sqlite() { "postgres" } else { "sqlite" };
    let date = sb.ok(&[
        "--templates",
        &tpl,
        "render",
        "--date",
        "2026-02-10",
        "--dialect",
        other,
    ]);
    let (begin, days_before) = match other {
        "postgres" => (
            "BEGIN ISOLATION LEVEL REPEATABLE READ;",
            "DATE '2026-02-10'",
        ),
        _ => ("BEGIN IMMEDIATE;", "'2026-02-10'"),
    };
    assert!(date.stdout.starts_with(begin), "{}", date.stdout);
    contains_all(&date.stdout, &[":run_id", days_before, "COMMIT;"]);
    let json = sb.ok(&[
        "--templates",
        &tpl,
        "--json",
        "render",
        "--date",
        "2026-02-10",
        "daily_revenue",
        "--dialect",
        other,
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("one JSON document");
    assert_eq!(doc["dialect"], other, "{doc}");
    assert_eq!(
        doc["run_id"],
        serde_json::Value::Null,
        "no run asked: {doc}"
    );
    let own = sb.ok(&[
        "--templates",
        &tpl,
        "--json",
        "render",
        "--date",
        "2026-02-10",
        "daily_revenue",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&own.stdout).unwrap();
    assert_eq!(
        doc["dialect"],
        if is_sqlite() { "sqlite" } else { "postgres" }
    );
    assert!(doc["run_id"].is_i64(), "{doc}");
    // Nothing was run: no run recorded, no model table made by the renders of other SQL.
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 0);

    // A dialect sqlrun does not know: exit 2, the two that work named, nothing rendered.
    let bad = sb.expect(2, &["render", "--date", "2026-02-10", "--dialect", "mysql"]);
    contains_all(&bad.stderr, &["mysql", "sqlite", "postgres"]);
    assert!(bad.stdout.is_empty(), "{bad:?}");
}

/// Another backend's SQL needs no database: a SQLite file that does not exist is not
/// made, and a server that is not there is not asked.
#[test]
fn render_dialect_of_the_other_backend_does_not_connect() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("absent.db");
    let run = unconnected(
        dir.path(),
        file.to_str().unwrap(),
        &[
            "render",
            "--date",
            "2026-02-10",
            "daily_revenue",
            "--dialect",
            "postgres",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("WHERE o.order_date = DATE '2026-02-10'"),
        "{}",
        run.stdout
    );
    assert!(!file.exists(), "the SQLite file was not made");

    // Port 1 of this machine: nothing listens there.
    let url = "postgres://nobody@127.0.0.1:1/nowhere";
    let run = unconnected(
        dir.path(),
        url,
        &["render", "--date", "2026-02-10", "--dialect", "sqlite"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    contains_all(
        &run.stdout,
        &[
            "BEGIN IMMEDIATE;",
            "WHERE o.order_date = '2026-02-10'",
            ":run_id",
        ],
    );
    // The same server asked for its own dialect is asked, and is not there.
    let run = unconnected(
        dir.path(),
        url,
        &["render", "--date", "2026-02-10", "--dialect", "postgres"],
    );
    assert_ne!(run.code, 0, "{run:?}");
}
