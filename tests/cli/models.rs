//! More than one model: a second partitioned model with a header-declared table, a third
//! that depends on the others, one transaction per date for all of them.

use std::collections::BTreeMap;

use crate::support::*;
use crate::templates::copy_templates;

pub(crate) const BANDS: &str = "\
-- name: daily_amount_bands
-- version: 1
-- key: ds, band
-- values: order_count, revenue
-- create: CREATE TABLE daily_amount_bands (ds DATE NOT NULL, band TEXT NOT NULL,
--     order_count BIGINT NOT NULL, revenue BIGINT NOT NULL, run_id BIGINT NOT NULL,
--     PRIMARY KEY (ds, band))
--
-- The winning orders of a date (the shared rule: orders_latest), grouped by amount band.
SELECT {{ ds }} AS ds,
       w.band,
       count(*) AS order_count,
       sum(w.amount) AS revenue
FROM (
    SELECT o.amount,
           CASE WHEN o.amount < 0 THEN 'refund'
                WHEN o.amount < 100000 THEN 'small'
                WHEN o.amount < 300000 THEN 'medium'
                ELSE 'large' END AS band
    FROM orders_latest AS o
    WHERE o.order_date = {{ ds }}
) AS w
GROUP BY w.band
";

/// Named to sort first: only `depends_on` can make it run after the models it reads.
const SHARE: &str = "\
-- name: a_band_share
-- version: 1
-- key: ds, band
-- values: band_revenue, day_revenue
-- depends_on: daily_amount_bands, daily_revenue
-- create: CREATE TABLE a_band_share (ds DATE NOT NULL, band TEXT NOT NULL,
--     band_revenue BIGINT NOT NULL, day_revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds, band))
SELECT b.ds, b.band, b.revenue AS band_revenue, d.revenue AS day_revenue
FROM daily_amount_bands AS b
JOIN daily_revenue AS d ON d.ds = b.ds
WHERE b.ds = {{ ds }}
";

fn band(amount: i64) -> &'static str {
    match amount {
        a if a < 0 => "refund",
        a if a < 100_000 => "small",
        a if a < 300_000 => "medium",
        _ => "large",
    }
}

/// (ds, band) -> (order_count, revenue), from the winning orders, independently.
pub(crate) fn expected_bands(orders: &Orders) -> BTreeMap<(String, String), (i64, i64)> {
    let mut out = BTreeMap::new();
    for r in orders.latest().values() {
        let e = out
            .entry((r.order_date.clone(), band(r.amount).to_string()))
            .or_insert((0, 0));
        e.0 += 1;
        e.1 += r.amount;
    }
    out
}

/// (ds, band) -> (order_count, revenue) from the table, or from its `_current` view.
pub(crate) fn band_rows(sb: &Sandbox, from: &str) -> BTreeMap<(String, String), (i64, i64)> {
    sb.rows(&format!(
        "SELECT ds, band, order_count, revenue FROM {from}"
    ))
    .into_iter()
    .map(|r| {
        (
            (r[0].clone(), r[1].clone()),
            (r[2].parse().unwrap(), r[3].parse().unwrap()),
        )
    })
    .collect()
}

fn bands(sb: &Sandbox) -> BTreeMap<(String, String), (i64, i64)> {
    band_rows(sb, "daily_amount_bands")
}

fn pipeline_with(sb: &Sandbox, extra: &[(&str, &str)]) -> String {
    let dir = copy_templates(sb);
    for (name, text) in extra {
        std::fs::write(dir.join("models").join(format!("{name}.sql")), text).unwrap();
    }
    dir.to_str().unwrap().to_string()
}

fn exists(sb: &Sandbox, table: &str) -> bool {
    sb.table_exists(table)
}

#[test]
fn a_second_model_fills_its_table_for_each_date() {
    for seed in [61, 62] {
        let orders = Orders::new(seed, "2026-02-01", 5, true);
        let sb = Sandbox::new();
        sb.insert_orders(&orders.rows);
        let tpl = pipeline_with(&sb, &[("daily_amount_bands", BANDS)]);
        sb.ok(&[
            "--templates",
            &tpl,
            "apply",
            "--interval",
            &orders.interval(),
        ]);

        assert!(exists(&sb, "daily_amount_bands_corrections"));
        assert!(exists(&sb, "daily_amount_bands_current"));
        assert_eq!(bands(&sb), expected_bands(&orders), "seed {seed}");
        assert_eq!(sb.daily(), orders.expected(), "seed {seed}");
        // The bands add up to the day.
        assert_eq!(
            sb.count(
                "SELECT count(*) FROM daily_revenue d WHERE d.revenue <> \
                 (SELECT coalesce(sum(revenue), 0) FROM daily_amount_bands b WHERE b.ds = d.ds)"
            ),
            0
        );
        // One record per date (not per model), both tables built by the same run.
        let run = sb.last_run_id();
        assert_eq!(
            sb.count(&format!(
                "SELECT count(*) FROM run_partitions WHERE run_id = {run} AND status = 'success'"
            )),
            orders.days
        );
        assert_eq!(
            sb.count(&format!(
                "SELECT count(*) FROM daily_amount_bands WHERE run_id <> {run}"
            )),
            0
        );
        assert_eq!(
            sb.rows(&format!(
                "SELECT name, version FROM run_templates WHERE run_id = {run} AND kind = 'model' ORDER BY name"
            )),
            [["models/daily_amount_bands", "1"], ["models/daily_revenue", "2"]]
        );
        // The current view of the new model equals its table (nothing sealed).
        assert_eq!(
            sb.count("SELECT count(*) FROM daily_amount_bands_current"),
            sb.count("SELECT count(*) FROM daily_amount_bands")
        );
    }
}

/// A failure in either model's insert rolls back the whole date: both tables keep their
/// old rows for that date.
#[test]
fn all_models_of_a_date_commit_together() {
    for failing_table in ["daily_amount_bands", "daily_revenue"] {
        let mut orders = Orders::new(63, "2026-03-01", 3, false);
        let sb = Sandbox::new();
        sb.insert_orders(&orders.rows);
        let tpl = pipeline_with(&sb, &[("daily_amount_bands", BANDS)]);
        sb.ok(&[
            "--templates",
            &tpl,
            "apply",
            "--interval",
            &orders.interval(),
        ]);
        let old_daily = sb.rows("SELECT * FROM daily_revenue ORDER BY ds");
        let old_bands = sb.rows("SELECT * FROM daily_amount_bands ORDER BY ds, band");

        // New orders on the middle date, in every band, so both models would change it.
        let n = orders.rows.len();
        for (i, amount) in [-10, 50_000, 200_000, 400_000].iter().enumerate() {
            orders.add(&format!("new{i}"), "2026-03-02", *amount);
        }
        sb.insert_orders(&orders.rows[n..]);
        sb.fail_inserts(failing_table, "2026-03-02", When::Before);
        let run = sb.expect(
            1,
            &[
                "--templates",
                &tpl,
                "apply",
                "--interval",
                &orders.interval(),
                "--keep-going",
            ],
        );
        assert!(run.stderr.contains("boom on purpose"), "{}", run.stderr);
        let run_id = sb.last_run_id();

        // 03-01 and 03-03 recomputed (same numbers, new run id); 03-02 untouched in both.
        let keep = |rows: Vec<Vec<String>>| -> Vec<Vec<String>> {
            rows.into_iter().filter(|r| r[0] == "2026-03-02").collect()
        };
        assert_eq!(
            keep(sb.rows("SELECT * FROM daily_revenue ORDER BY ds")),
            keep(old_daily.clone()),
            "{failing_table} failed: daily_revenue for the date must be untouched"
        );
        assert_eq!(
            keep(sb.rows("SELECT * FROM daily_amount_bands ORDER BY ds, band")),
            keep(old_bands.clone()),
            "{failing_table} failed: daily_amount_bands for the date must be untouched"
        );
        assert_eq!(
            sb.rows(&format!(
                "SELECT ds, status FROM run_partitions WHERE run_id = {run_id} ORDER BY ds"
            )),
            [
                ["2026-03-01", "success"],
                ["2026-03-02", "failed"],
                ["2026-03-03", "success"]
            ]
        );
        assert_eq!(
            sb.count(&format!(
                "SELECT count(*) FROM daily_amount_bands WHERE ds = '2026-03-03' AND run_id = {run_id}"
            )),
            sb.count("SELECT count(*) FROM daily_amount_bands WHERE ds = '2026-03-03'")
        );

        sb.stop_failing(failing_table);
        sb.ok(&[
            "--templates",
            &tpl,
            "apply",
            "--interval",
            &orders.interval(),
            "--only",
            "failed",
        ]);
        assert_eq!(bands(&sb), expected_bands(&orders), "{failing_table}");
        assert_eq!(sb.daily(), orders.expected(), "{failing_table}");
    }
}

#[test]
fn a_model_that_depends_on_others_runs_after_them() {
    let mut orders = Orders::new(64, "2026-04-01", 3, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let tpl = pipeline_with(
        &sb,
        &[("daily_amount_bands", BANDS), ("a_band_share", SHARE)],
    );

    let check = |sb: &Sandbox, orders: &Orders| {
        let want: Vec<Vec<String>> = expected_bands(orders)
            .into_iter()
            .map(|((ds, band), (_, rev))| {
                vec![
                    ds.clone(),
                    band,
                    rev.to_string(),
                    orders.expected()[&ds].0.to_string(),
                ]
            })
            .collect();
        assert_eq!(
            sb.rows(
                "SELECT ds, band, band_revenue, day_revenue FROM a_band_share ORDER BY ds, band"
            ),
            want
        );
    };
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        &orders.interval(),
    ]);
    check(&sb, &orders);

    // New data: the dependent model must see this run's numbers, not the previous ones.
    let n = orders.rows.len();
    orders.add("extra", "2026-04-02", 999_999);
    let moved = orders
        .latest()
        .values()
        .find(|r| r.order_date == "2026-04-01")
        .unwrap()
        .clone();
    orders.add(&moved.order_id, "2026-04-03", -5);
    sb.insert_orders(&orders.rows[n..]);
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        &orders.interval(),
    ]);
    check(&sb, &orders);

    // The dry run shows the models in dependency order within a date.
    let sql = sb
        .ok(&["--templates", &tpl, "render", "--date", "2026-04-02"])
        .stdout;
    let pos = |t: &str| {
        sql.find(&format!("INSERT INTO \"{t}\""))
            .unwrap_or_else(|| panic!("no insert into {t}:\n{sql}"))
    };
    assert!(pos("a_band_share") > pos("daily_amount_bands"), "{sql}");
    assert!(pos("a_band_share") > pos("daily_revenue"), "{sql}");
}

#[test]
fn reapplying_replaces_whole_partitions() {
    let sb = Sandbox::new();
    let mut orders = Orders::new(65, "2026-05-01", 2, false);
    orders.rows.clear();
    for (i, amount) in [20_000, 30_000, 150_000, 450_000, 600_000]
        .iter()
        .enumerate()
    {
        orders.add(&format!("p{i}"), "2026-05-01", *amount);
    }
    orders.add("q0", "2026-05-02", 700_000);
    sb.insert_orders(&orders.rows);
    let tpl = pipeline_with(&sb, &[("daily_amount_bands", BANDS)]);
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        "2026-05-01..2026-05-02",
    ]);
    let got = bands(&sb);
    let of = |ds: &str, got: &BTreeMap<(String, String), (i64, i64)>| -> Vec<String> {
        got.keys()
            .filter(|k| k.0 == ds)
            .map(|k| k.1.clone())
            .collect()
    };
    assert_eq!(of("2026-05-01", &got), ["large", "medium", "small"]);

    // The large orders are amended to small amounts; the medium one moves away.
    let n = orders.rows.len();
    orders.add("p3", "2026-05-01", 10_000);
    orders.add("p4", "2026-05-01", 11_000);
    orders.add("p2", "2026-05-02", 150_000);
    sb.insert_orders(&orders.rows[n..]);
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        "2026-05-01..2026-05-02",
    ]);
    let got = bands(&sb);
    assert_eq!(
        of("2026-05-01", &got),
        ["small"],
        "the vanished bands are gone"
    );
    assert_eq!(of("2026-05-02", &got), ["large", "medium"]);
    assert_eq!(got, expected_bands(&orders));
    assert_eq!(
        got[&("2026-05-01".to_string(), "small".to_string())],
        (4, 71_000)
    );

    // Everything moves away from 05-01: no band rows left for it, daily_revenue has zeros.
    let n = orders.rows.len();
    for id in ["p0", "p1", "p3", "p4"] {
        orders.add(id, "2026-05-02", 1_000);
    }
    sb.insert_orders(&orders.rows[n..]);
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        "2026-05-01..2026-05-02",
    ]);
    let got = bands(&sb);
    assert!(of("2026-05-01", &got).is_empty(), "{got:?}");
    assert_eq!(got, expected_bands(&orders));
    assert_eq!(sb.daily()["2026-05-01"], (0, 0));
    assert_eq!(sb.daily(), orders.expected());
}

/// `daily_amount_bands_current` as (ds, band) -> (order_count, revenue).
fn current_bands(sb: &Sandbox) -> BTreeMap<(String, String), (i64, i64)> {
    band_rows(sb, "daily_amount_bands_current")
}

#[test]
fn a_second_model_gets_corrections_on_a_sealed_date() {
    let sb = Sandbox::new();
    let mut orders = Orders::new(77, "2026-05-01", 4, false);
    // No refunds on the sealed date, so that a late refund is a key the seal never saw.
    orders
        .rows
        .retain(|r| !(r.order_date == "2026-05-02" && r.amount < 0));
    sb.insert_orders(&orders.rows);
    let tpl = pipeline_with(&sb, &[("daily_amount_bands", BANDS)]);
    let interval = orders.interval();
    sb.ok(&["--templates", &tpl, "apply", "--interval", &interval]);
    sb.ok(&[
        "--templates",
        &tpl,
        "seal",
        "--interval",
        "2026-05-02",
        "--reason",
        "sent",
    ]);
    let sent = bands(&sb);
    let on = |m: &BTreeMap<(String, String), (i64, i64)>| -> BTreeMap<String, (i64, i64)> {
        m.iter()
            .filter(|((ds, _), _)| ds == "2026-05-02")
            .map(|((_, band), v)| (band.clone(), *v))
            .collect()
    };

    // A late order in an existing band and a late refund in a band the date did not have.
    let late = vec![
        orders.add("late-small", "2026-05-02", 50_000),
        orders.add("late-refund", "2026-05-02", -5_000),
    ];
    sb.insert_orders(&late);
    sb.ok(&["--templates", &tpl, "apply", "--interval", &interval]);
    assert_eq!(bands(&sb), sent, "a sealed date's rows were replaced");
    assert_eq!(on(&current_bands(&sb)), on(&expected_bands(&orders)));
    let refund = sb.rows(
        "SELECT order_count, revenue, previous_order_count, previous_revenue, removed \
         FROM daily_amount_bands_corrections WHERE ds = '2026-05-02' AND band = 'refund'",
    );
    assert_eq!(refund, vec![vec!["1", "-5000", "NULL", "NULL", "0"]]);
    let run = sb.last_run_id();
    let status = sb.rows(&format!(
        "SELECT status FROM run_partitions WHERE run_id = {run} AND ds = '2026-05-02'"
    ));
    assert_eq!(status, vec![vec!["corrected"]]);
    let daily = sb.count("SELECT count(*) FROM daily_revenue_corrections WHERE ds = '2026-05-02'");
    assert_eq!(
        daily, 1,
        "daily_revenue is corrected in the same date's transaction"
    );

    // The same data again: nothing new.
    let before = sb.count("SELECT count(*) FROM daily_amount_bands_corrections");
    sb.ok(&["--templates", &tpl, "apply", "--interval", "2026-05-02"]);
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_amount_bands_corrections"),
        before
    );

    // The refund is amended into a sale: the refund band is gone from what is true now.
    sb.insert_orders(&[orders.add("late-refund", "2026-05-02", 7_000)]);
    sb.ok(&["--templates", &tpl, "apply", "--interval", "2026-05-02"]);
    let removed = sb.rows(
        "SELECT previous_order_count, previous_revenue, removed FROM daily_amount_bands_corrections \
         WHERE ds = '2026-05-02' AND band = 'refund' ORDER BY correction_id DESC LIMIT 1",
    );
    assert_eq!(removed, vec![vec!["1", "-5000", "1"]]);
    assert_eq!(on(&current_bands(&sb)), on(&expected_bands(&orders)));
    assert_eq!(bands(&sb), sent);
    // Unsealed dates were replaced as usual and are their own current values.
    let unsealed =
        |m: BTreeMap<(String, String), (i64, i64)>| -> BTreeMap<(String, String), (i64, i64)> {
            m.into_iter()
                .filter(|((ds, _), _)| ds != "2026-05-02")
                .collect()
        };
    assert_eq!(
        unsealed(current_bands(&sb)),
        unsealed(expected_bands(&orders))
    );
}
