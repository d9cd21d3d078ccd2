//! One model at a time (`--select`): a selected model is recomputed with every model
//! downstream of it, inside each date's transaction; the others keep their rows and run
//! ids. Each date records which version of each model built it, so `status` tells per
//! model, and an error from a date names the model and its file.

use std::path::Path;

use crate::support::*;
use crate::templates::{copy_templates, edit};

pub(crate) const BANDS: &str = "\
-- name: bands
-- version: 1
-- key: ds, band
-- values: n
-- create: CREATE TABLE bands (ds DATE NOT NULL, band TEXT NOT NULL, n BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds, band))
SELECT {{ ds }} AS ds,
       CASE WHEN o.amount < 100000 THEN 'small' ELSE 'large' END AS band,
       count(*) AS n
FROM orders_latest AS o
WHERE o.order_date = {{ ds }}
GROUP BY CASE WHEN o.amount < 100000 THEN 'small' ELSE 'large' END
";

/// Downstream of bands: recomputed whenever bands is.
pub(crate) const SHARE: &str = "\
-- name: share
-- version: 1
-- key: ds, band
-- values: n, total
-- depends_on: bands
-- create: CREATE TABLE share (ds DATE NOT NULL, band TEXT NOT NULL, n BIGINT NOT NULL,
--     total BIGINT NOT NULL, run_id BIGINT NOT NULL, PRIMARY KEY (ds, band))
SELECT b.ds, b.band, b.n, (SELECT sum(t.n) FROM bands AS t WHERE t.ds = b.ds) AS total
FROM bands AS b
WHERE b.ds = {{ ds }}
";

/// A sandbox with orders on six dates and a pipeline of three models (daily_revenue,
/// bands, share), all computed by run 1.
fn three_models() -> (Sandbox, std::path::PathBuf, Orders) {
    let orders = Orders::new(61, "2026-04-01", 6, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let tpl = copy_templates(&sb);
    std::fs::write(tpl.join("models/bands.sql"), BANDS).unwrap();
    std::fs::write(tpl.join("models/share.sql"), SHARE).unwrap();
    sb.ok(&[
        "--templates",
        tpl.to_str().unwrap(),
        "apply",
        "--interval",
        &orders.interval(),
    ]);
    (sb, tpl, orders)
}

/// ds -> run_id of a model's rows (one run per date: whole partitions).
fn run_ids(sb: &Sandbox, table: &str) -> Vec<(String, String)> {
    sb.rows(&format!(
        "SELECT DISTINCT ds, run_id FROM {table} ORDER BY ds"
    ))
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

fn status_models(
    sb: &Sandbox,
    tpl: &Path,
    interval: &str,
    select: &[&str],
) -> Vec<serde_json::Value> {
    let mut args = vec![
        "--templates",
        tpl.to_str().unwrap(),
        "--json",
        "status",
        "--interval",
        interval,
    ];
    let joined = select.join(",");
    if !select.is_empty() {
        args.extend(["--select", &joined]);
    }
    let out = sb.ok(&args);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    doc["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["models"].clone())
        .collect()
}

#[test]
fn select_recomputes_the_model_and_what_is_downstream_and_nothing_else() {
    let (sb, tpl, orders) = three_models();
    let dir = tpl.to_str().unwrap();
    let before_revenue = run_ids(&sb, "daily_revenue");
    // bands version 2 counts ten times: visible in the rows.
    let bands = tpl.join("models/bands.sql");
    edit(&bands, "-- version: 1", "-- version: 2");
    edit(&bands, "count(*) AS n", "count(*) * 10 AS n");
    let models = status_models(&sb, &tpl, &orders.interval(), &[]);
    assert!(models.iter().all(|m| m["bands"] == "stale"
        && m["share"] == "current"
        && m["daily_revenue"] == "current"));

    let part = "2026-04-02..2026-04-03";
    sb.ok(&[
        "--templates",
        dir,
        "apply",
        "--interval",
        part,
        "--select",
        "bands",
    ]);
    let run = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT selected_models FROM runs WHERE run_id = {run}"
        )),
        [["bands"]]
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {run} AND status = 'success'"
        )),
        2
    );
    // daily_revenue was not selected: same rows, same run ids everywhere.
    assert_eq!(run_ids(&sb, "daily_revenue"), before_revenue);
    // bands and share (downstream) were recomputed on exactly those dates.
    for table in ["bands", "share"] {
        for (ds, run_id) in run_ids(&sb, table) {
            let in_part = ds == "2026-04-02" || ds == "2026-04-03";
            assert_eq!(run_id == run.to_string(), in_part, "{table} {ds}");
        }
    }
    assert_eq!(
        sb.count(
            "SELECT count(*) FROM bands AS b JOIN share AS s ON s.ds = b.ds AND s.band = b.band \
             WHERE b.ds IN ('2026-04-02', '2026-04-03') AND (s.n <> b.n OR b.n % 10 <> 0)"
        ),
        0,
        "share read the new bands in the same transaction"
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT model, version FROM partition_models WHERE run_id = {run} ORDER BY ds, model"
        )),
        [
            ["models/bands", "2"],
            ["models/share", "1"],
            ["models/bands", "2"],
            ["models/share", "1"]
        ]
    );

    // Per model: bands is current where it was recomputed, stale elsewhere.
    let models = status_models(&sb, &tpl, &orders.interval(), &[]);
    let states: Vec<&str> = models
        .iter()
        .map(|m| m["bands"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["stale", "current", "current", "stale", "stale", "stale"]
    );
    assert!(models.iter().all(|m| m["daily_revenue"] == "current"));

    // --only stale with --select: exactly the dates where bands is stale.
    sb.ok(&[
        "--templates",
        dir,
        "apply",
        "--interval",
        &orders.interval(),
        "--select",
        "bands",
        "--only",
        "stale",
    ]);
    let run = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT ds FROM run_partitions WHERE run_id = {run} ORDER BY ds"
        )),
        [
            ["2026-04-01"],
            ["2026-04-04"],
            ["2026-04-05"],
            ["2026-04-06"]
        ]
    );
    assert_eq!(run_ids(&sb, "daily_revenue"), before_revenue);
    assert_eq!(sb.daily(), orders.expected());
}

#[test]
fn an_error_in_a_date_names_the_model_and_its_file() {
    let (sb, tpl, _) = three_models();
    let dir = tpl.to_str().unwrap();
    sb.fail_inserts("share", "2026-04-03", When::Before);
    let run = sb.expect(
        1,
        &[
            "--templates",
            dir,
            "apply",
            "--interval",
            "2026-04-03",
            "--select",
            "share",
        ],
    );
    let file = tpl.join("models/share.sql");
    let named = format!("model share ({})", file.display());
    assert!(run.stderr.contains(&named), "{}", run.stderr);
    let id = sb.last_run_id();
    let rows = sb.rows(&format!(
        "SELECT status, failed_model, error FROM run_partitions WHERE run_id = {id}"
    ));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][..2], ["failed", "models/share"]);
    assert!(rows[0][2].contains(&named), "{:?}", rows[0]);
    assert!(rows[0][2].contains("boom on purpose"), "{:?}", rows[0]);
    let models = status_models(&sb, &tpl, "2026-04-03", &[]);
    assert_eq!(models[0]["share"], "failed");
    assert_eq!(models[0]["bands"], "current");
}

#[test]
fn an_unknown_model_is_bad_input_and_writes_nothing() {
    let (sb, tpl, orders) = three_models();
    let dir = tpl.to_str().unwrap();
    let before = snapshot(&sb);
    let run = sb.expect(
        2,
        &[
            "--templates",
            dir,
            "apply",
            "--interval",
            &orders.interval(),
            "--select",
            "bandz",
        ],
    );
    assert!(
        run.stderr.contains("bandz") && run.stderr.contains("bands, daily_revenue, share"),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot(&sb), before);
    let run = sb.expect(2, &["--templates", dir, "status", "--select", "bandz"]);
    assert!(run.stderr.contains("bandz"), "{}", run.stderr);
}

#[test]
fn render_with_select_shows_only_those_models() {
    let (sb, tpl, _) = three_models();
    let dir = tpl.to_str().unwrap();
    let out = sb
        .ok(&[
            "--templates",
            dir,
            "render",
            "--date",
            "2026-04-02",
            "--select",
            "share",
        ])
        .stdout;
    assert!(out.contains("INSERT INTO \"share\""), "{out}");
    assert!(!out.contains("INSERT INTO \"bands\""), "{out}");
    assert!(!out.contains("INSERT INTO \"daily_revenue\""), "{out}");
}

/// A model added after its dates were computed is missing on them until it runs there:
/// a `--select` run of another model does not make it look built, and `--only missing
/// --select` then fills exactly those dates.
#[test]
fn a_model_added_later_stays_missing_until_it_runs() {
    let orders = Orders::new(62, "2026-04-01", 4, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let tpl = copy_templates(&sb);
    let dir = tpl.to_str().unwrap();
    sb.ok(&[
        "--templates",
        dir,
        "apply",
        "--interval",
        &orders.interval(),
    ]);
    std::fs::write(tpl.join("models/bands.sql"), BANDS).unwrap();
    sb.ok(&[
        "--templates",
        dir,
        "apply",
        "--interval",
        "2026-04-02",
        "--select",
        "daily_revenue",
    ]);
    let models = status_models(&sb, &tpl, &orders.interval(), &[]);
    let bands: Vec<&str> = models
        .iter()
        .map(|m| m["bands"].as_str().unwrap())
        .collect();
    assert_eq!(bands, ["missing", "missing", "missing", "missing"]);
    sb.ok(&[
        "--templates",
        dir,
        "apply",
        "--interval",
        &orders.interval(),
        "--select",
        "bands",
        "--only",
        "missing",
    ]);
    let run = sb.last_run_id();
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {run} AND status = 'success'"
        )),
        4
    );
    let models = status_models(&sb, &tpl, &orders.interval(), &[]);
    assert!(models.iter().all(|m| m["bands"] == "current"), "{models:?}");
}

/// `apply --dry-run` writes nothing, also when the templates bring a new model whose
/// objects the plan reads.
#[test]
fn a_dry_run_with_a_new_model_writes_nothing() {
    let orders = Orders::new(63, "2026-04-01", 3, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let tpl = copy_templates(&sb);
    let dir = tpl.to_str().unwrap();
    sb.ok(&[
        "--templates",
        dir,
        "apply",
        "--interval",
        &orders.interval(),
    ]);
    std::fs::write(tpl.join("models/bands.sql"), BANDS).unwrap();
    let before = snapshot(&sb);
    let out = sb
        .ok(&[
            "--templates",
            dir,
            "apply",
            "--interval",
            &orders.interval(),
            "--dry-run",
            "--sql",
        ])
        .stdout;
    assert!(out.contains("INSERT INTO \"bands\""), "{out}");
    assert_eq!(snapshot(&sb), before);
    assert!(
        !sb.table_exists("bands"),
        "the new model's table was rolled back"
    );
    assert!(!sb.table_exists("bands_corrections"));
    assert_eq!(
        sb.count("SELECT count(*) FROM models WHERE name = 'bands'"),
        0
    );
}
