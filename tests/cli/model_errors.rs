//! A model the database refuses is said in the model's own lines: its file, the line and
//! column there, the date asked for, the line with a caret; `render` still shows its SQL;
//! a SELECT whose columns are not the header's lists both; a date column that is not a
//! date on PostgreSQL is refused naming it. Nothing is written in any of these.

use std::path::{Path, PathBuf};

use crate::support::*;
use crate::templates::copy_templates;

/// A second model, as README's "Adding a model" has it. Line 10 is its revenue line.
const BANDS: &str = "\
-- name: orders_by_band
-- version: 1
-- key: ds, band
-- values: order_count, revenue
-- create: CREATE TABLE orders_by_band (ds DATE NOT NULL, band TEXT NOT NULL,
--     order_count BIGINT NOT NULL, revenue BIGINT NOT NULL, PRIMARY KEY (ds, band))
SELECT {{ ds }} AS ds,
       CASE WHEN o.amount >= 50 THEN 'large' ELSE 'small' END AS band,
       count(*) AS order_count,
       sum(o.amount) AS revenue
FROM orders_latest AS o
WHERE o.order_date = {{ ds }}
GROUP BY 2
";

const ORDERS: &str = "INSERT INTO orders VALUES \
    ('a', '2026-03-01', 100, '2026-03-01 10:00:00'), \
    ('b', '2026-03-01', 40, '2026-03-01 11:00:00'), \
    ('c', '2026-03-02', 7, '2026-03-02 12:00:00')";

/// A database with a day computed by the built-in pipeline, and templates that add
/// `model` as models/orders_by_band.sql.
fn with_band_model(model: &str) -> (Sandbox, PathBuf) {
    let sb = Sandbox::new();
    sb.exec(ORDERS);
    sb.ok(&["apply", "--interval", "2026-03-01"]);
    let dir = copy_templates(&sb);
    std::fs::write(dir.join("models/orders_by_band.sql"), model).unwrap();
    (sb, dir)
}

/// Runs `args` with the templates, wanting exit 2, the message parts on stderr, and no
/// row nor the model's table written.
fn refused(sb: &Sandbox, dir: &Path, args: &[&str], says: &[&str]) -> Run {
    let rows = snapshot(sb);
    let mut all = vec!["--templates", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let run = sb.expect(2, &all);
    for part in says {
        assert!(
            run.stderr.contains(part),
            "{args:?} should say {part:?}:\n{}",
            run.stderr
        );
    }
    assert_eq!(snapshot(sb), rows, "{args:?} wrote rows");
    assert!(
        !sb.table_exists("orders_by_band"),
        "{args:?} made the table"
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM models WHERE name = 'orders_by_band'"),
        0
    );
    run
}

#[test]
fn a_misspelt_column_names_the_file_line_column_and_the_date_asked_for() {
    let (sb, dir) = with_band_model(&BANDS.replace("sum(o.amount)", "sum(o.ammount)"));
    let file = dir.join("models/orders_by_band.sql");
    let place = format!("{}, line 10, column 12", file.display());
    for (args, ds) in [
        (&["apply", "--interval", "2026-03-02"][..], "2026-03-02"),
        (
            &["render", "--date", "2026-02-20", "orders_by_band"],
            "2026-02-20",
        ),
        (&["render", "--date", "2026-02-21"], "2026-02-21"),
    ] {
        let run = refused(
            &sb,
            &dir,
            args,
            &[
                &place,
                &format!("(model orders_by_band, as rendered for {ds})"),
                "o.ammount",
                "  10 |        sum(o.ammount) AS revenue\n     |            ^\n",
                &format!("`sqlrun render --date {ds} orders_by_band`"),
            ],
        );
        assert!(!run.stderr.contains("near:"), "{}", run.stderr);
    }
}

#[test]
fn render_prints_a_broken_models_sql_then_says_what_does_not_prepare() {
    let (sb, dir) = with_band_model(&BANDS.replace("sum(o.amount)", "sum(o.ammount)"));
    let run = refused(
        &sb,
        &dir,
        &["render", "--date", "2026-03-02", "orders_by_band"],
        &["line 10, column 12"],
    );
    let date = match is_postgres() {
        true => "DATE '2026-03-02'",
        false => "'2026-03-02'",
    };
    for part in [
        "sum(o.ammount) AS revenue".to_string(),
        format!("WHERE o.order_date = {date}"),
    ] {
        assert!(run.stdout.contains(&part), "{part}: {}", run.stdout);
    }
    // The whole date: its transaction, the broken model in it.
    let run = refused(&sb, &dir, &["render", "--date", "2026-03-02"], &["line 10"]);
    assert!(run.stdout.contains("COMMIT;"), "{}", run.stdout);
    assert!(run.stdout.contains("sum(o.ammount)"), "{}", run.stdout);
    // --json: the SQL and the error in one document.
    let run = refused(
        &sb,
        &dir,
        &["--json", "render", "--date", "2026-03-02", "orders_by_band"],
        &["line 10"],
    );
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(doc["sql"].as_str().unwrap().contains("sum(o.ammount)"));
    assert_eq!(doc["error"]["exit_code"], 2);
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("line 10, column 12"));
}

/// A column the header does not name is refused too, also when every named one is there
/// (the date's SQL would prepare: it inserts the named columns and drops the rest).
#[test]
fn a_select_with_a_column_the_header_does_not_name_is_refused() {
    let (sb, dir) = with_band_model(&BANDS.replace(
        "sum(o.amount) AS revenue",
        "sum(o.amount) AS revenue,\n       max(o.amount) AS largest",
    ));
    refused(
        &sb,
        &dir,
        &["apply", "--interval", "2026-03-02"],
        &[
            "orders_by_band.sql (model orders_by_band, as rendered for 2026-03-02)",
            "the SELECT returns: ds, band, order_count, revenue, largest\n",
            "not in the header: largest\n",
        ],
    );
}

#[test]
fn a_select_whose_columns_differ_from_the_header_lists_both() {
    let (sb, dir) = with_band_model(&BANDS.replace("AS revenue", "AS revenu"));
    for args in [
        &["apply", "--interval", "2026-03-02"][..],
        &["render", "--date", "2026-03-02", "orders_by_band"],
    ] {
        refused(
            &sb,
            &dir,
            args,
            &[
                "orders_by_band.sql (model orders_by_band, as rendered for 2026-03-02)",
                "the SELECT returns: ds, band, order_count, revenu\n",
                "the header names:   ds, band (`-- key:`), order_count, revenue (`-- values:`)",
                "missing from the SELECT: revenue\n",
                "not in the header: revenu\n",
            ],
        );
    }
    // Fixed, the same command computes it.
    std::fs::write(dir.join("models/orders_by_band.sql"), BANDS).unwrap();
    let tpl = dir.to_str().unwrap();
    sb.ok(&[
        "--templates",
        tpl,
        "apply",
        "--interval",
        "2026-03-01..2026-03-02",
    ]);
    assert_eq!(
        sb.rows(
            "SELECT CAST(ds AS TEXT), band, order_count, revenue FROM orders_by_band ORDER BY 1, 2"
        ),
        [
            ["2026-03-01", "large", "1", "100"],
            ["2026-03-01", "small", "1", "40"],
            ["2026-03-02", "small", "1", "7"],
        ]
    );
}

/// A `TEXT` date column: SQLite takes it; PostgreSQL, where sqlrun compares the column
/// with dates, refuses it naming the model, the column and the type, not sqlrun's own
/// DDL. `DATE` works on both.
#[test]
fn a_date_column_that_is_not_a_date_is_refused_on_postgres_by_name() {
    let text_ds = BANDS.replace("(ds DATE NOT NULL", "(ds TEXT NOT NULL");
    let (sb, dir) = with_band_model(&text_ds);
    let tpl = dir.to_str().unwrap().to_string();
    let apply = ["--templates", &tpl, "apply", "--interval", "2026-03-02"];
    if is_sqlite() {
        sb.ok(&apply);
        assert_eq!(sb.count("SELECT count(*) FROM orders_by_band"), 1);
        return;
    }
    let run = refused(
        &sb,
        &dir,
        &apply[2..],
        &[
            "orders_by_band.sql",
            "column ds of table orders_by_band holds text",
            "must be of type date",
            "`ds DATE NOT NULL`",
        ],
    );
    for internal in ["sent_table", "-- name:", "operator does not exist"] {
        assert!(!run.stderr.contains(internal), "{internal}: {}", run.stderr);
    }
}

#[test]
fn an_unfinished_select_is_the_models_own_error() {
    // The SELECT ends in the middle of its GROUP BY: the error is at the end of the model,
    // not in the SQL sqlrun wraps around it.
    let (sb, dir) = with_band_model(&BANDS.replace("GROUP BY 2\n", "GROUP BY\n"));
    let file = dir.join("models/orders_by_band.sql");
    let run = refused(
        &sb,
        &dir,
        &["apply", "--interval", "2026-03-02"],
        &[&file.display().to_string(), "as rendered for 2026-03-02"],
    );
    assert!(
        !run.stderr.contains("around its SELECT") && !run.stderr.contains("replace.sql"),
        "{}",
        run.stderr
    );
    if is_postgres() {
        // PostgreSQL says where: the end of the last line with text, the model's line 13.
        assert!(run.stderr.contains(", line 13"), "{}", run.stderr);
    }
}
