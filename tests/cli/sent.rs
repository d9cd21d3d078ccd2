//! What went out, per model and key: at a seal every model's rows are copied into its
//! `<table>_sent`; late data then makes corrections per key (changed, new, removed), the
//! `_current` views say what is true now, `<table>_sent_vs_now` reads both side by side,
//! and `sqlrun corrections` shows each value as its kind.

use crate::support::*;
use crate::templates::copy_templates;

/// Keyed by (date, bucket), with a text value beside two integers.
const BUCKETS: &str = "\
-- name: daily_buckets
-- version: 1
-- key: ds, bucket
-- values: order_count, revenue, top_order
-- create: CREATE TABLE daily_buckets (ds DATE NOT NULL, bucket TEXT NOT NULL,
--     order_count BIGINT NOT NULL, revenue BIGINT NOT NULL, top_order TEXT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds, bucket))
SELECT {{ ds }} AS ds,
       w.bucket,
       count(*) AS order_count,
       sum(w.amount) AS revenue,
       max(w.order_id) AS top_order
FROM (
    SELECT o.order_id, o.amount,
           CASE WHEN o.amount < 0 THEN 'refund'
                WHEN o.amount < 100000 THEN 'small'
                ELSE 'large' END AS bucket
    FROM orders_latest AS o
    WHERE o.order_date = {{ ds }}
) AS w
GROUP BY w.bucket
";

/// Keyed by the date alone, with a number that has a fraction; a date without orders
/// has no row (so a date can lose its key).
const MEAN: &str = "\
-- name: daily_mean
-- version: 1
-- values: mean_amount, orders
-- create: CREATE TABLE daily_mean (ds DATE NOT NULL PRIMARY KEY,
--     mean_amount DOUBLE PRECISION NOT NULL, orders BIGINT NOT NULL, run_id BIGINT NOT NULL)
SELECT m.ds, m.mean_amount, m.orders
FROM (
    SELECT {{ ds }} AS ds,
           CAST(sum(o.amount) AS DOUBLE PRECISION) / count(*) AS mean_amount,
           count(*) AS orders
    FROM orders_latest AS o
    WHERE o.order_date = {{ ds }}
) AS m
WHERE m.orders > 0
";

const ALL: &str = "2026-06-01..2026-06-04";

/// A sandbox with the two models beside the default one, four computed dates, the
/// first two sealed. Returns the sandbox, its templates folder and the orders.
fn sealed_pair() -> (Sandbox, String, Orders) {
    let sb = Sandbox::new();
    let dir = copy_templates(&sb);
    for (name, text) in [("daily_buckets", BUCKETS), ("daily_mean", MEAN)] {
        std::fs::write(dir.join("models").join(format!("{name}.sql")), text).unwrap();
    }
    let tpl = dir.to_str().unwrap().to_string();
    let mut orders = Orders::new(1, "2026-06-01", 4, false);
    orders.rows.clear();
    for (id, date, amount) in [
        ("b1", "2026-06-01", 150_000),
        ("a1", "2026-06-02", 50_000),
        ("a2", "2026-06-02", 70_000),
        ("a3", "2026-06-02", 200_000),
        ("c1", "2026-06-03", 20_000),
        ("d1", "2026-06-04", -1_000),
    ] {
        orders.add(id, date, amount);
    }
    sb.insert_orders(&orders.rows);
    sb.ok(&["--templates", &tpl, "apply", "--interval", ALL]);
    sb.ok(&[
        "--templates",
        &tpl,
        "seal",
        "--interval",
        "2026-06-01..2026-06-02",
        "--reason",
        "June report",
    ]);
    (sb, tpl, orders)
}

fn strings(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

fn buckets_sent(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows(
        "SELECT ds, bucket, order_count, revenue, top_order, run_id FROM daily_buckets_sent \
         ORDER BY ds, bucket",
    )
}

fn mean_sent(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows("SELECT ds, mean_amount, orders, run_id FROM daily_mean_sent ORDER BY ds")
}

fn mean(sum: i64, n: i64) -> String {
    (sum as f64 / n as f64).to_string()
}

#[test]
fn every_models_sent_values_are_kept_per_key_and_corrected_per_key() {
    let (sb, tpl, mut orders) = sealed_pair();
    let run = sb.last_run_id().to_string(); // the apply (a seal is not a run)

    // At the seal: every model's rows of the sealed dates, every key, every value.
    let sent_buckets = strings(&[
        &["2026-06-01", "large", "1", "150000", "b1", &run],
        &["2026-06-02", "large", "1", "200000", "a3", &run],
        &["2026-06-02", "small", "2", "120000", "a2", &run],
    ]);
    assert_eq!(buckets_sent(&sb), sent_buckets);
    let sent_mean = strings(&[
        &["2026-06-01", "150000", "1", &run],
        &["2026-06-02", &mean(320_000, 3), "3", &run],
    ]);
    assert_eq!(mean_sent(&sb), sent_mean);
    assert_eq!(
        sb.rows("SELECT ds, revenue, order_count FROM daily_revenue_sent ORDER BY ds"),
        strings(&[
            &["2026-06-01", "150000", "1"],
            &["2026-06-02", "320000", "3"]
        ])
    );
    // The contract's seals keep their two columns for the default model.
    assert_eq!(
        sb.rows("SELECT ds, revenue, order_count FROM seals ORDER BY ds"),
        strings(&[
            &["2026-06-01", "150000", "1"],
            &["2026-06-02", "320000", "3"]
        ])
    );
    // Read back per key: nothing changed yet.
    assert_eq!(
        sb.rows("SELECT ds, bucket, state FROM daily_buckets_sent_vs_now ORDER BY ds, bucket"),
        strings(&[
            &["2026-06-01", "large", "unchanged"],
            &["2026-06-02", "large", "unchanged"],
            &["2026-06-02", "small", "unchanged"]
        ])
    );

    // Late data on the sealed dates: on 06-02 a changed key (small), a new key (refund)
    // and a removed key (large: its order moved to 06-03); on 06-01 every order moved
    // away, so both models lose their keys there.
    let late = vec![
        orders.add("a4", "2026-06-02", 30_000),
        orders.add("r1", "2026-06-02", -5_000),
        orders.add("a3", "2026-06-03", 200_000),
        orders.add("b1", "2026-06-04", 150_000),
    ];
    sb.insert_orders(&late);
    sb.ok(&["--templates", &tpl, "apply", "--interval", ALL]);
    let late_run = sb.last_run_id().to_string();

    assert_eq!(
        sb.rows(
            "SELECT ds, bucket, order_count, revenue, top_order, previous_order_count, \
             previous_revenue, previous_top_order, removed, run_id \
             FROM daily_buckets_corrections ORDER BY correction_id"
        ),
        strings(&[
            &[
                "2026-06-01",
                "large",
                "NULL",
                "NULL",
                "NULL",
                "1",
                "150000",
                "b1",
                "1",
                &late_run
            ],
            &[
                "2026-06-02",
                "large",
                "NULL",
                "NULL",
                "NULL",
                "1",
                "200000",
                "a3",
                "1",
                &late_run
            ],
            &[
                "2026-06-02",
                "refund",
                "1",
                "-5000",
                "r1",
                "NULL",
                "NULL",
                "NULL",
                "0",
                &late_run
            ],
            &[
                "2026-06-02",
                "small",
                "3",
                "150000",
                "a4",
                "2",
                "120000",
                "a2",
                "0",
                &late_run
            ],
        ]),
        "changed, new and removed keys each make one correction"
    );
    assert_eq!(
        sb.rows(
            "SELECT ds, mean_amount, orders, previous_mean_amount, previous_orders, removed \
             FROM daily_mean_corrections ORDER BY correction_id"
        ),
        strings(&[
            &["2026-06-01", "NULL", "NULL", "150000", "1", "1"],
            &[
                "2026-06-02",
                &mean(145_000, 4),
                "4",
                &mean(320_000, 3),
                "3",
                "0"
            ],
        ])
    );
    assert_eq!(
        sb.rows(
            "SELECT ds, revenue, order_count, previous_revenue, previous_order_count \
             FROM daily_revenue_corrections ORDER BY correction_id"
        ),
        strings(&[
            &["2026-06-01", "0", "0", "150000", "1"],
            &["2026-06-02", "145000", "4", "320000", "3"],
        ])
    );

    // What is true now: sealed dates corrected, the others replaced as usual.
    assert_eq!(
        sb.rows(
            "SELECT ds, bucket, order_count, revenue, top_order, corrected \
             FROM daily_buckets_current ORDER BY ds, bucket"
        ),
        strings(&[
            &["2026-06-02", "refund", "1", "-5000", "r1", "1"],
            &["2026-06-02", "small", "3", "150000", "a4", "1"],
            &["2026-06-03", "large", "1", "200000", "a3", "0"],
            &["2026-06-03", "small", "1", "20000", "c1", "0"],
            &["2026-06-04", "large", "1", "150000", "b1", "0"],
            &["2026-06-04", "refund", "1", "-1000", "d1", "0"],
        ])
    );
    assert_eq!(
        sb.rows("SELECT ds, mean_amount, orders, corrected FROM daily_mean_current ORDER BY ds"),
        strings(&[
            &["2026-06-02", &mean(145_000, 4), "4", "1"],
            &["2026-06-03", &mean(220_000, 2), "2", "0"],
            &["2026-06-04", &mean(149_000, 2), "2", "0"],
        ])
    );
    assert_eq!(sb.current(), orders.expected());

    // What went out is still what went out.
    assert_eq!(buckets_sent(&sb), sent_buckets);
    assert_eq!(mean_sent(&sb), sent_mean);

    // Read back per key: sent beside now, and how each key differs.
    assert_eq!(
        sb.rows(
            "SELECT ds, bucket, sent_order_count, now_order_count, sent_revenue, now_revenue, \
             sent_top_order, now_top_order, state \
             FROM daily_buckets_sent_vs_now ORDER BY ds, bucket"
        ),
        strings(&[
            &[
                "2026-06-01",
                "large",
                "1",
                "NULL",
                "150000",
                "NULL",
                "b1",
                "NULL",
                "removed"
            ],
            &[
                "2026-06-02",
                "large",
                "1",
                "NULL",
                "200000",
                "NULL",
                "a3",
                "NULL",
                "removed"
            ],
            &[
                "2026-06-02",
                "refund",
                "NULL",
                "1",
                "NULL",
                "-5000",
                "NULL",
                "r1",
                "new"
            ],
            &[
                "2026-06-02",
                "small",
                "2",
                "3",
                "120000",
                "150000",
                "a2",
                "a4",
                "changed"
            ],
        ])
    );
    assert_eq!(
        sb.rows(
            "SELECT ds, sent_orders, now_orders, state FROM daily_mean_sent_vs_now ORDER BY ds"
        ),
        strings(&[
            &["2026-06-01", "1", "NULL", "removed"],
            &["2026-06-02", "3", "4", "changed"],
        ])
    );
    assert_eq!(
        sb.rows("SELECT ds, sent_revenue, now_revenue, state FROM daily_revenue_sent_vs_now ORDER BY ds"),
        strings(&[
            &["2026-06-01", "150000", "0", "changed"],
            &["2026-06-02", "320000", "145000", "changed"],
        ])
    );

    // `status` counts every model's corrections per date.
    let json = sb.ok(&["--templates", &tpl, "--json", "status", "--interval", ALL]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let counts: Vec<(String, i64)> = v["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["ds"].as_str().unwrap().to_string(),
                d["corrections"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        [
            ("2026-06-01".to_string(), 3),
            ("2026-06-02".to_string(), 5),
            ("2026-06-03".to_string(), 0),
            ("2026-06-04".to_string(), 0)
        ]
    );

    // The same late data again corrects nothing more.
    let before = sb.count("SELECT count(*) FROM daily_buckets_corrections");
    sb.ok(&["--templates", &tpl, "apply", "--interval", ALL]);
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_buckets_corrections"),
        before
    );

    // Sealing again: a date sealed before keeps what it sent; a new one is recorded.
    sb.ok(&[
        "--templates",
        &tpl,
        "seal",
        "--interval",
        "2026-06-02..2026-06-03",
        "--reason",
        "June report, again",
    ]);
    let mut more = sent_buckets.clone();
    let last = sb.count("SELECT max(run_id) FROM daily_buckets WHERE ds = '2026-06-03'");
    more.push(
        [
            "2026-06-03",
            "large",
            "1",
            "200000",
            "a3",
            &last.to_string(),
        ]
        .map(String::from)
        .to_vec(),
    );
    more.push(
        ["2026-06-03", "small", "1", "20000", "c1", &last.to_string()]
            .map(String::from)
            .to_vec(),
    );
    assert_eq!(buckets_sent(&sb), more);
}

#[test]
fn corrections_show_each_value_as_its_kind() {
    let (sb, tpl, mut orders) = sealed_pair();
    let late = vec![
        orders.add("a4", "2026-06-02", 30_000),
        orders.add("r1", "2026-06-02", -5_000),
        orders.add("a3", "2026-06-03", 200_000),
    ];
    sb.insert_orders(&late);
    sb.ok(&["--templates", &tpl, "apply", "--interval", ALL]);

    let json = sb.ok(&["--templates", &tpl, "--json", "corrections"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let buckets = v["daily_buckets"].as_array().expect("per model");
    assert_eq!(buckets.len(), 3, "{v}");
    let by_bucket = |b: &str| {
        buckets
            .iter()
            .find(|r| r["key"][1]["value"] == b)
            .unwrap_or_else(|| panic!("a correction of {b}: {v}"))
    };
    let small = by_bucket("small");
    assert_eq!(
        small["key"],
        serde_json::json!([
            {"column": "ds", "type": "date", "value": "2026-06-02"},
            {"column": "bucket", "type": "text", "value": "small"}
        ])
    );
    assert_eq!(
        small["values"],
        serde_json::json!([
            {"column": "order_count", "type": "integer", "sent": 2, "previous": 2, "now": 3, "delta": 1},
            {"column": "revenue", "type": "integer", "sent": 120000, "previous": 120000, "now": 150000, "delta": 30000},
            {"column": "top_order", "type": "text", "sent": "a2", "previous": "a2", "now": "a4", "delta": null}
        ])
    );
    let refund = by_bucket("refund");
    assert_eq!(
        refund["values"][1],
        serde_json::json!({"column": "revenue", "type": "integer", "sent": null, "previous": null, "now": -5000, "delta": null})
    );
    let large = by_bucket("large");
    assert_eq!(large["removed"], 1);
    assert_eq!(
        large["values"][2],
        serde_json::json!({"column": "top_order", "type": "text", "sent": "a3", "previous": "a3", "now": null, "delta": null})
    );
    // The flat columns stay as they were.
    assert_eq!(small["sent_revenue"], 120000);
    assert_eq!(small["now_top_order"], "a4");

    let mean = &v["daily_mean"].as_array().expect("per model")[0];
    let m = &mean["values"][0];
    assert_eq!(m["column"], "mean_amount");
    assert_eq!(m["type"], "number");
    // (serde_json reads a float back to within a unit in the last place)
    let near = |x: &serde_json::Value, want: f64| (x.as_f64().unwrap() - want).abs() < 1e-6;
    assert!(near(&m["sent"], 320_000.0 / 3.0), "{m}");
    assert!(near(&m["now"], 145_000.0 / 4.0), "{m}");
    assert!(near(&m["delta"], 145_000.0 / 4.0 - 320_000.0 / 3.0), "{m}");
    assert_eq!(mean["values"][1]["type"], "integer");
    assert_eq!(v["daily_revenue"][0]["values"][0]["type"], "integer");

    // The table: a count is a count, text is text, only numbers have a difference.
    let text = sb.ok(&["--templates", &tpl, "corrections"]).stdout;
    let line = |column: &str, key: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
            .find(|c| c.len() > 4 && c[2] == key && c[3] == column)
            .unwrap_or_else(|| panic!("a line for {key} {column}:\n{text}"))
    };
    assert_eq!(
        line("top_order", "small")[4..9],
        ["text", "a2", "a2", "a4", "-"]
    );
    assert_eq!(
        line("revenue", "small")[4..9],
        ["integer", "120,000", "120,000", "150,000", "+30,000"]
    );
    assert_eq!(
        line("revenue", "refund")[4..9],
        ["integer", "-", "-", "-5,000", "-"]
    );
    assert_eq!(
        line("top_order", "large")[4..9],
        ["text", "a3", "a3", "(removed)", "-"]
    );
}

/// The column types of `<table>_sent` are the model table's: the same types on
/// PostgreSQL, the same affinity on SQLite.
#[test]
fn sent_tables_are_typed_as_their_models() {
    let (sb, _tpl, _orders) = sealed_pair();
    let types = |table: &str| -> Vec<Vec<String>> {
        match &sb.schema {
            Some(schema) => sb.rows(&format!(
                "SELECT column_name, data_type FROM information_schema.columns \
                 WHERE table_schema = '{schema}' AND table_name = '{table}' ORDER BY ordinal_position"
            )),
            None => sb.rows(&format!(
                "SELECT name, CASE WHEN upper(type) LIKE '%INT%' THEN 'integer' \
                 WHEN upper(type) LIKE '%TEXT%' THEN 'text' \
                 WHEN upper(type) LIKE '%DOUB%' OR upper(type) = 'REAL' THEN 'real' \
                 ELSE 'numeric' END FROM pragma_table_info('{table}') ORDER BY cid"
            )),
        }
    };
    for model in ["daily_buckets", "daily_mean", "daily_revenue"] {
        // Then the seal version that sent each row.
        let mut want = types(model);
        let integer = if sb.schema.is_some() {
            "bigint"
        } else {
            "integer"
        };
        want.push(vec!["seal_id".to_string(), integer.to_string()]);
        assert_eq!(
            types(&format!("{model}_sent")),
            want,
            "{model}_sent has the columns and types of {model}, and seal_id"
        );
    }
    if is_postgres() {
        assert_eq!(
            types("daily_buckets_sent"),
            strings(&[
                &["ds", "date"],
                &["bucket", "text"],
                &["order_count", "bigint"],
                &["revenue", "bigint"],
                &["top_order", "text"],
                &["run_id", "bigint"],
                &["seal_id", "bigint"]
            ])
        );
    }
}

/// A database whose dates were sealed before `<table>_sent` existed gets it filled from
/// the sealed rows, which are what went out.
#[test]
fn a_sent_table_made_later_starts_with_the_dates_already_sealed() {
    let sb = Sandbox::new();
    let orders = Orders::new(111, "2026-06-01", 3, false);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&["seal", "--interval", "2026-06-02", "--reason", "sent"]);
    let sent = sb
        .rows("SELECT ds, revenue, order_count, run_id FROM daily_revenue WHERE ds = '2026-06-02'");
    assert_eq!(
        sb.rows("SELECT ds, revenue, order_count, run_id FROM daily_revenue_sent"),
        sent
    );
    // As an older sqlrun left it: no sent table (nor the view over it).
    sb.exec(
        "DROP VIEW daily_revenue_sent_vs_now; DROP VIEW daily_revenue_sent_history; \
         DROP VIEW daily_revenue_corrections_feed; DROP TABLE daily_revenue_sent;",
    );
    sb.ok(&["init"]);
    assert_eq!(
        sb.rows("SELECT ds, revenue, order_count, run_id FROM daily_revenue_sent"),
        sent
    );
    assert_eq!(
        sb.rows("SELECT ds, state FROM daily_revenue_sent_vs_now"),
        strings(&[&["2026-06-02", "unchanged"]])
    );
}
