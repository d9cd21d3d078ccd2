//! Versioned templates: an edit without a new version is refused, a new version makes
//! the dates built by the old one stale, template errors are bad input.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::support::*;

/// A copy of the repo's templates/models and templates/views in the sandbox.
pub(crate) fn copy_templates(sb: &Sandbox) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let dst = sb.path().join("pipeline");
    for folder in ["models", "views", "sources"] {
        std::fs::create_dir_all(dst.join(folder)).unwrap();
        for entry in std::fs::read_dir(src.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dst.join(folder).join(path.file_name().unwrap())).unwrap();
        }
    }
    dst
}

fn model_file(dir: &Path) -> PathBuf {
    dir.join("models/daily_revenue.sql")
}

/// Rewrites a file: `from` (which must be there) becomes `to`.
pub(crate) fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// `apply` with the pipeline in `tpl` is refused as bad input (exit 2) naming `says`, and
/// writes nothing.
fn apply_refused(sb: &Sandbox, tpl: &Path, interval: &str, says: &str) -> Run {
    let before = snapshot(sb);
    let run = sb.expect(
        2,
        &[
            "--templates",
            tpl.to_str().unwrap(),
            "apply",
            "--interval",
            interval,
        ],
    );
    assert!(run.stderr.contains(says), "{}", run.stderr);
    assert_eq!(snapshot(sb), before, "a refused apply wrote nothing");
    run
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn status_json(sb: &Sandbox, tpl: &str, interval: &str) -> Vec<serde_json::Value> {
    let out = sb.ok(&[
        "--templates",
        tpl,
        "--json",
        "status",
        "--interval",
        interval,
    ]);
    serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap()["dates"]
        .as_array()
        .unwrap()
        .clone()
}

fn stale_dates(sb: &Sandbox, tpl: &str, interval: &str) -> Vec<String> {
    status_json(sb, tpl, interval)
        .iter()
        .filter(|r| r["stale"] == true)
        .map(|r| r["ds"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_edit_without_a_version_bump_is_refused() {
    let orders = Orders::new(51, "2026-02-01", 3, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let dir = copy_templates(&sb);
    let tpl = dir.to_str().unwrap();
    sb.ok(&[
        "--templates",
        tpl,
        "apply",
        "--interval",
        &orders.interval(),
    ]);

    let file = model_file(&dir);
    edit(
        &file,
        "count(*) AS order_count",
        "count(o.order_id) AS order_count",
    );
    let before = snapshot(&sb);
    let run = sb.expect(
        2,
        &[
            "--templates",
            tpl,
            "apply",
            "--interval",
            &orders.interval(),
        ],
    );
    assert_eq!(snapshot(&sb), before, "nothing written");
    let err = &run.stderr;
    assert!(
        err.contains(file.to_str().unwrap()),
        "names the file: {err}"
    );
    assert!(err.contains("version"), "{err}");
    assert!(
        err.contains("Raise `-- version:`") && err.contains("to 3"),
        "{err}"
    );
    // The same for the other commands that read with the templates.
    let run = sb.expect(2, &["--templates", tpl, "status"]);
    assert!(run.stderr.contains("to 3"), "{}", run.stderr);
    let run = sb.expect(2, &["--templates", tpl, "render", "--date", "2026-02-01"]);
    assert!(run.stderr.contains("to 3"), "{}", run.stderr);
    assert_eq!(snapshot(&sb), before, "nothing written");

    // The built-in templates still work on the same database.
    sb.ok(&["apply", "--interval", "2026-02-01"]);
}

/// Declaring a model's sources (`-- sources:`) says which changes to track, not what a date
/// computes: a database whose version was recorded before the line existed keeps
/// working, and its dates do not turn stale. Any other edit is still refused.
#[test]
fn declaring_sources_needs_no_new_version() {
    let orders = Orders::new(52, "2026-02-01", 3, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let dir = copy_templates(&sb);
    let tpl = dir.to_str().unwrap();
    let file = model_file(&dir);
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("-- sources:"))
        .expect("the built-in model declares its sources");
    // As an older sqlrun recorded version 2: without the line.
    let without = text.replace(&format!("{line}\n"), "");
    sb.exec(&format!(
        "UPDATE template_versions SET checksum = '{}', body = '{}' \
         WHERE name = 'models/daily_revenue' AND version = 2",
        sha256(&without),
        without.replace('\'', "''")
    ));
    sb.ok(&["--templates", tpl, "apply", "--interval", "2026-02-01"]);
    assert!(stale_dates(&sb, tpl, &orders.interval()).is_empty());
    assert_eq!(sb.daily(), orders.expected());

    edit(&file, line, "-- sources: orders(order_date)");
    sb.ok(&["--templates", tpl, "apply", "--interval", "2026-02-02"]);
    edit(
        &file,
        "count(*) AS order_count",
        "count(o.order_id) AS order_count",
    );
    let run = sb.expect(
        2,
        &["--templates", tpl, "apply", "--interval", "2026-02-02"],
    );
    assert!(run.stderr.contains("to 3"), "{}", run.stderr);
}

#[test]
fn a_new_version_makes_old_dates_stale_and_only_stale_recomputes_them() {
    let orders = Orders::new(52, "2026-02-01", 6, true);
    let expected = orders.expected();
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let dir = copy_templates(&sb);
    let tpl = dir.to_str().unwrap();
    let file = model_file(&dir);
    let v1_text = std::fs::read_to_string(&file).unwrap();

    sb.ok(&[
        "--templates",
        tpl,
        "apply",
        "--interval",
        "2026-02-01..2026-02-04",
    ]);
    let v1_run = sb.last_run_id();
    assert!(stale_dates(&sb, tpl, "2026-02-01..2026-02-06").is_empty());

    // Version 2 counts revenue ten times (visible in the rows).
    edit(&file, "-- version: 2", "-- version: 3");
    edit(
        &file,
        "coalesce(sum(o.amount), 0) AS revenue",
        "coalesce(sum(o.amount), 0) * 10 AS revenue",
    );
    let v2_text = std::fs::read_to_string(&file).unwrap();

    assert_eq!(
        stale_dates(&sb, tpl, "2026-02-01..2026-02-06"),
        ["2026-02-01", "2026-02-02", "2026-02-03", "2026-02-04"]
    );
    let text = sb
        .ok(&[
            "--templates",
            tpl,
            "status",
            "--list",
            "--interval",
            "2026-02-01..2026-02-06",
        ])
        .stdout;
    let line = text.lines().find(|l| l.starts_with("2026-02-02")).unwrap();
    assert!(line.contains("stale"), "{text}");

    // One date rebuilt with version 2: no longer stale.
    sb.ok(&["--templates", tpl, "apply", "--interval", "2026-02-03"]);
    let v2_run = sb.last_run_id();
    assert_eq!(
        stale_dates(&sb, tpl, "2026-02-01..2026-02-06"),
        ["2026-02-01", "2026-02-02", "2026-02-04"]
    );
    let daily = sb.daily();
    assert_eq!(daily["2026-02-03"].0, expected["2026-02-03"].0 * 10);
    assert_eq!(daily["2026-02-02"].0, expected["2026-02-02"].0);

    // --only stale: exactly the stale dates (not the missing 05, 06).
    sb.ok(&[
        "--templates",
        tpl,
        "apply",
        "--interval",
        "2026-02-01..2026-02-06",
        "--only",
        "stale",
    ]);
    let run = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT ds, status FROM run_partitions WHERE run_id = {run} ORDER BY ds"
        )),
        [
            ["2026-02-01", "success"],
            ["2026-02-02", "success"],
            ["2026-02-04", "success"]
        ]
    );
    assert!(stale_dates(&sb, tpl, "2026-02-01..2026-02-06").is_empty());
    let daily = sb.daily();
    assert_eq!(daily.len(), 4);
    for (ds, (rev, cnt)) in &daily {
        assert_eq!((*rev, *cnt), (expected[ds].0 * 10, expected[ds].1), "{ds}");
    }

    // The state store keeps each version's text, and which versions each run used.
    assert_eq!(
        sb.rows(
            "SELECT version, kind, checksum, body FROM template_versions \
             WHERE name = 'models/daily_revenue' ORDER BY version"
        ),
        [
            ["2", "model", &sha256(&v1_text), &v1_text],
            ["3", "model", &sha256(&v2_text), &v2_text]
        ]
    );
    let used = |run: i64| {
        sb.rows(&format!(
            "SELECT version FROM run_templates WHERE run_id = {run} AND name = 'models/daily_revenue'"
        ))
    };
    assert_eq!(used(v1_run), [["2"]]);
    assert_eq!(used(v2_run), [["3"]]);
    assert_eq!(used(run), [["3"]]);
    // The views are recorded too.
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_templates WHERE run_id = {run} AND name = 'views/cumulative_revenue'"
        )),
        1
    );
    let shown = sb
        .ok(&[
            "--templates",
            tpl,
            "templates",
            "--show",
            "models/daily_revenue@2",
        ])
        .stdout;
    assert!(shown.starts_with(&v1_text), "{shown}");
}

/// A pipeline whose model uses `{{ dss }}`; the file and the line it is on.
fn undefined_variable_pipeline(sb: &Sandbox) -> (PathBuf, PathBuf, usize) {
    let dir = copy_templates(sb);
    let file = model_file(&dir);
    edit(
        &file,
        "WHERE o.order_date = {{ ds }}",
        "WHERE o.order_date = {{ dss }}",
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text.lines().position(|l| l.contains("{{ dss }}")).unwrap() + 1;
    (dir, file, line)
}

fn refused_naming(sb: &Sandbox, args: &[&str], file: &Path, line: usize) {
    let before = snapshot(sb);
    let run = sb.expect(2, args);
    assert_eq!(snapshot(sb), before, "{args:?} wrote something");
    let err = &run.stderr;
    assert!(
        err.contains(file.to_str().unwrap()),
        "{args:?} should name the file: {err}"
    );
    assert!(
        err.contains(&format!("line {line}")),
        "{args:?} should name line {line}: {err}"
    );
    assert!(err.contains("dss") && err.contains("undefined"), "{err}");
}

#[test]
fn an_undefined_variable_in_a_models_select_names_file_and_line() {
    let sb = Sandbox::new();
    let (dir, file, line) = undefined_variable_pipeline(&sb);
    let tpl = dir.to_str().unwrap();
    refused_naming(
        &sb,
        &[
            "--templates",
            tpl,
            "render",
            "--date",
            "2026-02-01",
            "daily_revenue",
        ],
        &file,
        line,
    );
}

/// The model is rendered inside system/date.sql (via replace.sql); the message must still
/// name the model's file and line, not the system template that includes it.
#[test]
fn an_undefined_variable_during_apply_names_the_model_file_and_line() {
    let sb = Sandbox::new();
    let (dir, file, line) = undefined_variable_pipeline(&sb);
    let tpl = dir.to_str().unwrap();
    refused_naming(
        &sb,
        &[
            "--templates",
            tpl,
            "apply",
            "--interval",
            "2026-02-01..2026-02-02",
        ],
        &file,
        line,
    );
    refused_naming(
        &sb,
        &["--templates", tpl, "render", "--date", "2026-02-01"],
        &file,
        line,
    );
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 0);
}

#[test]
fn a_syntax_error_is_bad_input() {
    let sb = Sandbox::new();
    let dir = copy_templates(&sb);
    let tpl = dir.to_str().unwrap();
    let file = model_file(&dir);
    edit(
        &file,
        "WHERE o.order_date = {{ ds }}",
        "WHERE o.order_date = {{ ds }",
    );
    let before = snapshot(&sb);
    let run = sb.expect(
        2,
        &["--templates", tpl, "apply", "--interval", "2026-02-01"],
    );
    assert_eq!(snapshot(&sb), before);
    assert!(
        run.stderr.contains(file.to_str().unwrap()),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("syntax error"), "{}", run.stderr);

    // A header without a version is bad input too.
    let dir2 = sb.path().join("pipeline2");
    std::fs::create_dir_all(dir2.join("models")).unwrap();
    std::fs::write(
        dir2.join("models/daily_revenue.sql"),
        "-- name: daily_revenue\n-- values: revenue, order_count\nSELECT {{ ds }} AS ds, 0 AS revenue, 0 AS order_count\n",
    )
    .unwrap();
    let run = sb.expect(
        2,
        &[
            "--templates",
            dir2.to_str().unwrap(),
            "apply",
            "--interval",
            "2026-02-01",
        ],
    );
    assert!(run.stderr.contains("-- version:"), "{}", run.stderr);
    assert_eq!(snapshot(&sb), before);
}

#[test]
fn an_edited_view_is_refused_before_the_view_changes() {
    let sb = Sandbox::new();
    let tpl = copy_templates(&sb);
    let dir = tpl.to_str().unwrap();
    sb.ok(&["--templates", dir, "apply", "--interval", "2026-03-01"]);
    let view = || sb.view_sql("cumulative_revenue").expect("the view exists");
    let before = view();
    edit(
        &tpl.join("views/cumulative_revenue.sql"),
        "CURRENT ROW) AS BIGINT) AS cumulative_revenue",
        "CURRENT ROW) AS BIGINT) * 2 AS cumulative_revenue",
    );
    let run = sb.expect(
        2,
        &["--templates", dir, "apply", "--interval", "2026-03-01"],
    );
    assert!(
        run.stderr.contains("cumulative_revenue.sql"),
        "{}",
        run.stderr
    );
    assert_eq!(
        view(),
        before,
        "the edited view was installed before the refusal"
    );
    // With a new version the view is recreated from the new text.
    edit(
        &tpl.join("views/cumulative_revenue.sql"),
        "-- version: 2",
        "-- version: 3",
    );
    sb.ok(&["--templates", dir, "apply", "--interval", "2026-03-01"]);
    assert!(view().contains("* 2"), "{}", view());
}

#[test]
fn a_model_ending_in_a_semicolon_and_a_comment_works() {
    let sb = Sandbox::new();
    let tpl = copy_templates(&sb);
    let model = "-- name: order_buckets\n-- version: 1\n-- key: ds, bucket\n-- values: n\n\
        -- create: CREATE TABLE order_buckets (ds DATE, bucket TEXT, n BIGINT, run_id BIGINT)\n\
        SELECT {{ ds }} AS ds, CASE WHEN amount > 0 THEN 'sale' ELSE 'refund' END AS bucket,\n\
        count(*) AS n FROM orders WHERE order_date = {{ ds }} GROUP BY 2;\n-- the end, no newline";
    std::fs::write(tpl.join("models/order_buckets.sql"), model).unwrap();
    sb.exec(
        "INSERT INTO orders VALUES ('a', '2026-03-01', 100, '2026-03-01 10:00:00'), \
         ('b', '2026-03-01', -40, '2026-03-01 11:00:00'), ('c', '2026-03-01', 7, '2026-03-01 12:00:00')",
    );
    sb.ok(&[
        "--templates",
        tpl.to_str().unwrap(),
        "apply",
        "--interval",
        "2026-03-01",
    ]);
    assert_eq!(
        sb.rows("SELECT ds, bucket, n FROM order_buckets ORDER BY bucket"),
        vec![
            vec!["2026-03-01", "refund", "1"],
            vec!["2026-03-01", "sale", "2"]
        ]
    );
}

#[test]
fn a_model_with_an_unknown_column_is_bad_input_and_writes_nothing() {
    let sb = Sandbox::new();
    let tpl = copy_templates(&sb);
    let model = "-- name: broken\n-- version: 1\n-- values: n\n\
        -- create: CREATE TABLE broken (ds DATE, n BIGINT, run_id BIGINT)\n\
        SELECT {{ ds }} AS ds, count(no_such_column) AS n FROM orders WHERE order_date = {{ ds }}\n";
    std::fs::write(tpl.join("models/broken.sql"), model).unwrap();
    let run = apply_refused(&sb, &tpl, "2026-03-01..2026-03-03", "no_such_column");
    assert!(
        run.stderr.contains("sqlrun render --date 2026-03-01"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_misspelt_column_in_double_quotes_is_an_error_not_a_string() {
    // A DBA reads "ammount" as a column. SQLite's default would read it as the string
    // 'ammount' (sum = 0 for every date, exit 0); sqlrun turns that off.
    let sb = Sandbox::new();
    sb.exec("INSERT INTO orders VALUES ('a', '2026-03-01', 1000, '2026-03-01 10:00:00')");
    let tpl = copy_templates(&sb);
    edit(
        &model_file(&tpl),
        "coalesce(sum(o.amount), 0) AS revenue",
        "coalesce(sum(\"ammount\"), 0) AS revenue",
    );
    apply_refused(&sb, &tpl, "2026-03-01..2026-03-02", "ammount");
}

#[test]
fn values_cannot_be_printed_unquoted() {
    let sb = Sandbox::new();
    for (from, to) in [
        ("o.order_date = {{ ds }}", "o.order_date = {{ ds|safe }}"),
        ("o.order_date = {{ ds }}", "o.order_date = {{ ds|tojson }}"),
    ] {
        let tpl = copy_templates(&sb);
        edit(&model_file(&tpl), from, to);
        let run = sb.expect(
            2,
            &[
                "--templates",
                tpl.to_str().unwrap(),
                "render",
                "--date",
                "2026-03-01",
            ],
        );
        assert!(run.stderr.contains("unquoted"), "{to}: {}", run.stderr);
    }
    // A negative number after a minus stays a number, not the start of a comment.
    let tpl = copy_templates(&sb);
    edit(
        &model_file(&tpl),
        "count(*) AS order_count",
        "count(*) - {{ -1 }} AS order_count",
    );
    edit(&model_file(&tpl), "-- version: 2", "-- version: 3");
    sb.exec("INSERT INTO orders VALUES ('a', '2026-03-01', 1000, '2026-03-01 10:00:00')");
    sb.ok(&[
        "--templates",
        tpl.to_str().unwrap(),
        "apply",
        "--interval",
        "2026-03-01",
    ]);
    assert_eq!(sb.daily()["2026-03-01"], (1000, 2));
}

#[test]
fn template_logic_on_a_date_behaves_alike_on_every_backend() {
    // `ds` is text to the template on both backends (on PostgreSQL it prints as a date):
    // a model whose rule changes from a date on must see the comparison work.
    let sb = Sandbox::new();
    let tpl = copy_templates(&sb);
    edit(
        &model_file(&tpl),
        "count(*) AS order_count",
        "count(*) + {% if ds >= '2026-03-02' %}100{% else %}0{% endif %} AS order_count",
    );
    edit(&model_file(&tpl), "-- version: 2", "-- version: 3");
    sb.ok(&[
        "--templates",
        tpl.to_str().unwrap(),
        "apply",
        "--interval",
        "2026-03-01..2026-03-02",
    ]);
    let daily = sb.daily();
    assert_eq!(daily["2026-03-01"], (0, 0));
    assert_eq!(daily["2026-03-02"], (0, 100));
}

#[test]
fn reverting_to_a_recorded_versions_text_is_that_version_again() {
    let orders = Orders::new(53, "2026-02-01", 4, true);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let dir = copy_templates(&sb);
    let tpl = dir.to_str().unwrap();
    let file = model_file(&dir);
    let v2_text = std::fs::read_to_string(&file).unwrap();
    let apply = |interval: &str| sb.ok(&["--templates", tpl, "apply", "--interval", interval]);
    apply("2026-02-01..2026-02-02");
    // A buggy version 3 builds 03 and 04, then the file goes back to version 2's text.
    edit(&file, "-- version: 2", "-- version: 3");
    edit(&file, "AS revenue", "* 10 AS revenue");
    apply("2026-02-03..2026-02-04");
    std::fs::write(&file, &v2_text).unwrap();
    // Version 2 again: its dates current, version 3's stale; the model's version is 2.
    assert_eq!(
        stale_dates(&sb, tpl, "2026-02-01..2026-02-04"),
        ["2026-02-03", "2026-02-04"]
    );
    apply("2026-02-04");
    assert_eq!(
        sb.rows("SELECT version FROM models WHERE name = 'daily_revenue'"),
        [["2"]]
    );
    assert_eq!(
        stale_dates(&sb, tpl, "2026-02-01..2026-02-04"),
        ["2026-02-03"]
    );
    assert_eq!(
        sb.rows("SELECT count(*) FROM template_versions WHERE name = 'models/daily_revenue'"),
        [["2"]],
        "no new version recorded"
    );
    // Version 2 with another text is an edit, refused as ever.
    edit(&file, "AS order_count", "+ 0 AS order_count");
    apply_refused(
        &sb,
        &dir,
        "2026-02-01",
        "changed but its version is still 2",
    );
}

#[test]
fn a_sealed_stale_date_shows_its_seal_and_templates_lists_the_projects_first() {
    let orders = Orders::new(54, "2026-02-01", 2, true);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let dir = copy_templates(&sb);
    let tpl = dir.to_str().unwrap();
    sb.ok(&[
        "--templates",
        tpl,
        "apply",
        "--interval",
        "2026-02-01..2026-02-02",
    ]);
    sb.ok(&["seal", "--interval", "2026-02-01", "--reason", "sent"]);
    edit(&model_file(&dir), "-- version: 2", "-- version: 3");
    let dates = status_json(&sb, tpl, "2026-02-01..2026-02-02");
    let states: Vec<&str> = dates
        .iter()
        .map(|d| d["state_name"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["sealed", "stale"]);
    let out = sb
        .ok(&[
            "--templates",
            tpl,
            "status",
            "--interval",
            "2026-02-01..2026-02-02",
        ])
        .stdout;
    assert!(out.contains("2026-02  S ~"), "{out}");
    // `--only stale` still takes the sealed date.
    assert_eq!(stale_dates(&sb, tpl, "2026-02-01..2026-02-02").len(), 2);

    let listed = sb.ok(&["--templates", tpl, "templates"]).stdout;
    let names: Vec<&str> = listed
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let first_system = names.iter().position(|n| n.starts_with("system/")).unwrap();
    assert!(first_system > 0, "{names:?}");
    assert!(
        names[first_system..]
            .iter()
            .all(|n| n.starts_with("system/")),
        "{names:?}"
    );
}

#[test]
fn header_and_incomplete_sql_errors_name_the_line() {
    let sb = Sandbox::new();
    let dir = copy_templates(&sb);
    let file = model_file(&dir);
    let original = std::fs::read_to_string(&file).unwrap();
    edit(&file, "-- key: ds", "-- keys: ds");
    let line = original
        .lines()
        .position(|l| l.starts_with("-- key:"))
        .unwrap()
        + 1;
    let run = apply_refused(&sb, &dir, "2026-02-01", "unknown header key `keys`");
    let at = format!("daily_revenue.sql:{line}: unknown header key `keys`");
    assert!(run.stderr.contains(&at), "{}", run.stderr);

    std::fs::write(&file, format!("{}\nAND (1 = 1\n", original.trim_end())).unwrap();
    let last = original.trim_end().lines().count() + 1;
    let run = sb.expect(
        2,
        &[
            "--templates",
            dir.to_str().unwrap(),
            "apply",
            "--interval",
            "2026-02-01",
        ],
    );
    assert!(
        run.stderr
            .contains(&format!("daily_revenue.sql, line {last}")),
        "{}",
        run.stderr
    );
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 0);
}
