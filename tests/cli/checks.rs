//! Data checks that gate a date, and readiness (issue 20): a check is a SELECT of the rows
//! that violate it; a failing error check rolls its date back and fails it, a warn check
//! lets it commit; both leave rows in `check_results`. A model's `-- ready:` condition
//! skips a date whose input is not there yet, until a later run looks back for it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;
use crate::templates::edit;

const START: &str = "2026-02-01";

/// No generated day comes near it (at most ~20 orders under 500,000 each, a few moved in).
const LIMIT: i64 = 100_000_000;

/// A late order that puts any day over LIMIT.
const HUGE: i64 = 200_000_000;

/// The text of a check file on daily_revenue.
fn check(name: &str, severity: &str, body: &str) -> String {
    format!(
        "-- name: {name}\n-- version: 1\n-- model: daily_revenue\n-- severity: {severity}\n{body}\n"
    )
}

/// An error check failing on every date whose revenue (as it stands now) is over LIMIT.
fn too_big() -> (&'static str, String) {
    too_big_named("too_big")
}

/// The same check under another name.
fn too_big_named(name: &'static str) -> (&'static str, String) {
    let body =
        format!("SELECT * FROM {{{{ this }}}} WHERE ds = {{{{ ds }}}} AND revenue > {LIMIT}");
    (name, check(name, "error", &body))
}

/// A project folder `folder` in the sandbox: the repo's models and views, and in checks/
/// only the given checks (name, text), so that no built-in check adds results.
fn project(sb: &Sandbox, folder: &str, checks: &[(&str, String)]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let dst = sb.path().join(folder);
    for f in ["models", "views", "sources"] {
        std::fs::create_dir_all(dst.join(f)).unwrap();
        for entry in std::fs::read_dir(src.join(f)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dst.join(f).join(path.file_name().unwrap())).unwrap();
        }
    }
    std::fs::create_dir_all(dst.join("checks")).unwrap();
    for (name, text) in checks {
        std::fs::write(dst.join("checks").join(format!("{name}.sql")), text).unwrap();
    }
    dst
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `sqlrun --templates TPL ARGS...`, expecting `code`.
fn with(sb: &Sandbox, code: i32, tpl: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--templates", s(tpl)];
    all.extend_from_slice(args);
    sb.expect(code, &all)
}

/// A sandbox with `days` days of generated orders from START (none computed yet).
fn with_orders(seed: u64, days: i64) -> (Sandbox, Orders) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, START, days, false);
    sb.insert_orders(&orders.rows);
    for (ds, (rev, _)) in orders.expected() {
        assert!(rev.abs() < LIMIT / 2, "{ds}: {rev} is too close to LIMIT");
    }
    (sb, orders)
}

/// A late order on `ds` of `amount`, inserted.
fn late(sb: &Sandbox, orders: &mut Orders, id: &str, ds: &str, amount: i64) {
    let row = orders.add(id, ds, amount);
    sb.insert_orders(&[row]);
}

/// `snapshot` plus check_results: every row a command may write.
fn everything(sb: &Sandbox) -> BTreeMap<String, Vec<Vec<String>>> {
    let mut all = snapshot(sb);
    all.insert(
        "check_results".into(),
        sb.rows(
            "SELECT run_id, ds, check_name, model, severity, version, failing_rows, \
             CAST(sample AS TEXT), checked_at FROM check_results ORDER BY 1, 2, 3",
        ),
    );
    all
}

fn partitions(sb: &Sandbox, run: i64) -> Vec<Vec<String>> {
    sb.rows(&format!(
        "SELECT ds, status FROM run_partitions WHERE run_id = {run} ORDER BY ds"
    ))
}

fn partition(sb: &Sandbox, run: i64, ds: &str) -> Vec<String> {
    let rows = sb.rows(&format!(
        "SELECT status, held_by, error FROM run_partitions WHERE run_id = {run} AND ds = '{ds}'"
    ));
    assert_eq!(
        rows.len(),
        1,
        "one run_partitions row of run {run} for {ds}"
    );
    rows.into_iter().next().unwrap()
}

fn run_status(sb: &Sandbox, run: i64) -> String {
    sb.rows(&format!("SELECT status FROM runs WHERE run_id = {run}"))[0][0].clone()
}

/// One row of check_results, without its time.
#[derive(Debug, Clone, PartialEq)]
struct CheckResult {
    run_id: i64,
    ds: String,
    check_name: String,
    model: String,
    severity: String,
    version: String,
    failing_rows: i64,
    sample: Value,
}

fn results(sb: &Sandbox, filter: &str) -> Vec<CheckResult> {
    sb.rows(&format!(
        "SELECT run_id, ds, check_name, model, severity, version, failing_rows, \
         CAST(sample AS TEXT) FROM check_results WHERE {filter} ORDER BY run_id, ds, check_name"
    ))
    .into_iter()
    .map(|r| CheckResult {
        run_id: r[0].parse().unwrap(),
        ds: r[1].clone(),
        check_name: r[2].clone(),
        model: r[3].clone(),
        severity: r[4].clone(),
        version: r[5].clone(),
        failing_rows: r[6].parse().unwrap(),
        sample: serde_json::from_str(&r[7])
            .unwrap_or_else(|e| panic!("sample is JSON ({e}): {}", r[7])),
    })
    .collect()
}

fn results_of(sb: &Sandbox, name: &str) -> Vec<CheckResult> {
    results(sb, &format!("check_name = 'checks/{name}'"))
}

/// A JSON value as a whole number (a number, or a string of one).
fn int_of(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_str()?.parse().ok())
}

/// The sample of a result holds exactly one failing row: `ds` with this revenue.
fn sample_is_one_row(r: &CheckResult, ds: &str, revenue: i64, order_count: i64) {
    let rows = r.sample.as_array().expect("sample is a JSON array");
    assert_eq!(rows.len(), 1, "{}", r.sample);
    let row = &rows[0];
    assert_eq!(int_of(&row["revenue"]), Some(revenue), "{}", r.sample);
    assert_eq!(
        int_of(&row["order_count"]),
        Some(order_count),
        "{}",
        r.sample
    );
    assert!(
        row["ds"].as_str().is_some_and(|d| d.starts_with(ds)),
        "{}",
        r.sample
    );
}

/// The rows of `table` (which has a `ds` column) on the date `ds`.
fn on(sb: &Sandbox, table: &str, ds: &str) -> Vec<Vec<String>> {
    sb.rows(&format!(
        "SELECT * FROM {table} WHERE ds = '{ds}' ORDER BY 1, 2"
    ))
}

/// Everything a date's transaction writes about `ds`, to compare before and after.
fn date_state(sb: &Sandbox, ds: &str) -> BTreeMap<&'static str, Vec<Vec<String>>> {
    [
        "daily_revenue",
        "daily_revenue_corrections",
        "source_changes",
        "partition_sources",
        "partition_models",
        "seals",
    ]
    .into_iter()
    .map(|t| (t, on(sb, t, ds)))
    .collect()
}

/// `status --json` per date, by ds.
fn status_json(sb: &Sandbox, tpl: &Path, interval: &str) -> BTreeMap<String, Value> {
    let out = with(sb, 0, tpl, &["--json", "status", "--interval", interval]);
    let doc: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("status --json is JSON ({e}): {}", out.stdout));
    doc["dates"]
        .as_array()
        .expect("an array of dates")
        .iter()
        .map(|d| (d["ds"].as_str().unwrap().to_string(), d.clone()))
        .collect()
}

/// The value of the `checks` column of `status --list` for `ds` (`-` when none).
fn checks_column(sb: &Sandbox, tpl: &Path, interval: &str, ds: &str) -> String {
    let out = with(sb, 0, tpl, &["status", "--list", "--interval", interval]).stdout;
    let header = out
        .lines()
        .find(|l| l.starts_with("date"))
        .unwrap_or_else(|| panic!("a header line:\n{out}"));
    let at = header
        .find(" checks ")
        .unwrap_or_else(|| panic!("a checks column:\n{out}"))
        + 1;
    let line = out
        .lines()
        .find(|l| l.starts_with(ds))
        .unwrap_or_else(|| panic!("a line for {ds}:\n{out}"));
    line.get(at..)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("a checks value for {ds}:\n{out}"))
        .to_string()
}

/// Every value under the key `key`, anywhere in a JSON document.
fn find_key<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == key {
                    out.push(x);
                }
                find_key(x, key, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| find_key(x, key, out)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------
// apply: error checks

/// The setup of the failing-check tests: five dates computed (the check passes on all), then
/// a late order that puts 2026-02-03 over LIMIT.
fn computed_then_too_big(seed: u64) -> (Sandbox, Orders, PathBuf, i64) {
    let (sb, mut orders) = with_orders(seed, 5);
    let tpl = project(&sb, "pipeline", &[too_big()]);
    with(&sb, 0, &tpl, &["apply", "--interval", &orders.interval()]);
    let first = sb.last_run_id();
    assert!(
        results_of(&sb, "too_big").is_empty(),
        "it passed everywhere"
    );
    late(&sb, &mut orders, "late-huge", "2026-02-03", HUGE);
    (sb, orders, tpl, first)
}

#[test]
fn an_error_check_failing_on_a_date_rolls_that_date_back_and_stops_the_run() {
    let (sb, orders, tpl, first) = computed_then_too_big(401);
    let before_rows = sb.daily();
    let failing = date_state(&sb, "2026-02-03");
    assert!(
        !failing["source_changes"].is_empty(),
        "the late order left a change note on 2026-02-03"
    );
    let later: Vec<_> = ["2026-02-04", "2026-02-05"]
        .iter()
        .map(|d| date_state(&sb, d))
        .collect();
    let old_records = sb.rows(&format!(
        "SELECT * FROM run_partitions WHERE run_id = {first} ORDER BY ds"
    ));

    let run = with(&sb, 1, &tpl, &["apply", "--interval", &orders.interval()]);
    let id = sb.last_run_id();
    assert!(id > first);

    // The failed date: everything as before the run, byte for byte.
    assert_eq!(date_state(&sb, "2026-02-03"), failing);
    assert_eq!(sb.daily()["2026-02-03"], before_rows["2026-02-03"]);
    assert_eq!(
        sb.count("SELECT run_id FROM daily_revenue WHERE ds = '2026-02-03'"),
        first
    );
    // The later dates were not attempted: untouched, and no record.
    for (d, state) in ["2026-02-04", "2026-02-05"].iter().zip(&later) {
        assert_eq!(&date_state(&sb, d), state, "{d}");
    }
    assert_eq!(
        partitions(&sb, id),
        [
            ["2026-02-01", "success"],
            ["2026-02-02", "success"],
            ["2026-02-03", "failed"]
        ]
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT * FROM run_partitions WHERE run_id = {first} ORDER BY ds"
        )),
        old_records,
        "the older run's records are untouched"
    );
    // The earlier dates committed with this run's id.
    for d in ["2026-02-01", "2026-02-02"] {
        assert_eq!(
            sb.count(&format!(
                "SELECT run_id FROM daily_revenue WHERE ds = '{d}'"
            )),
            id
        );
    }
    assert_eq!(run_status(&sb, id), "failed");
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);

    // The failure says which check, which model and how many rows.
    let error = &partition(&sb, id, "2026-02-03")[2];
    contains_all(
        error,
        &["check", "too_big", "model daily_revenue", "1 failing row"],
    );
    contains_all(&run.stderr, &["2026-02-03", "too_big"]);

    // check_results: the failing values, kept although the date rolled back.
    let now = orders.expected()["2026-02-03"];
    assert!(now.0 > LIMIT);
    let got = results_of(&sb, "too_big");
    assert_eq!(got.len(), 1, "{got:?}");
    let r = &got[0];
    assert_eq!(
        (
            r.run_id,
            r.ds.as_str(),
            r.model.as_str(),
            r.severity.as_str(),
            r.version.as_str(),
            r.failing_rows
        ),
        (id, "2026-02-03", "daily_revenue", "error", "1", 1)
    );
    sample_is_one_row(r, "2026-02-03", now.0, now.1);
}

#[test]
fn with_keep_going_the_dates_after_a_failed_check_are_computed() {
    let (sb, orders, tpl, first) = computed_then_too_big(402);
    let failing = date_state(&sb, "2026-02-03");

    with(
        &sb,
        1,
        &tpl,
        &["apply", "--interval", &orders.interval(), "--keep-going"],
    );
    let id = sb.last_run_id();
    assert_eq!(
        partitions(&sb, id),
        [
            ["2026-02-01", "success"],
            ["2026-02-02", "success"],
            ["2026-02-03", "failed"],
            ["2026-02-04", "success"],
            ["2026-02-05", "success"]
        ]
    );
    assert_eq!(date_state(&sb, "2026-02-03"), failing);
    assert_eq!(
        sb.count("SELECT run_id FROM daily_revenue WHERE ds = '2026-02-03'"),
        first
    );
    let want = orders.expected();
    for d in ["2026-02-01", "2026-02-02", "2026-02-04", "2026-02-05"] {
        assert_eq!(sb.daily()[d], want[d], "{d}");
        assert_eq!(
            sb.count(&format!(
                "SELECT run_id FROM daily_revenue WHERE ds = '{d}'"
            )),
            id,
            "{d}"
        );
    }
    assert_eq!(run_status(&sb, id), "failed");
    let got = results_of(&sb, "too_big");
    assert_eq!(
        got.iter()
            .map(|r| (r.run_id, r.ds.as_str()))
            .collect::<Vec<_>>(),
        [(id, "2026-02-03")]
    );
}

// ---------------------------------------------------------------------------------------
// apply: warn checks

#[test]
fn a_warn_check_lets_the_date_commit_and_records_the_warning() {
    let (sb, mut orders) = with_orders(403, 5);
    late(&sb, &mut orders, "late-huge", "2026-02-03", HUGE);
    let body =
        format!("SELECT * FROM {{{{ this }}}} WHERE ds = {{{{ ds }}}} AND revenue > {LIMIT}");
    let tpl = project(
        &sb,
        "pipeline",
        &[("big_day", check("big_day", "warn", &body))],
    );

    let run = with(&sb, 0, &tpl, &["apply", "--interval", &orders.interval()]);
    let id = sb.last_run_id();
    assert_eq!(sb.daily(), orders.expected(), "every date committed");
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {id} AND status = 'success'"
        )),
        5
    );
    assert_eq!(run_status(&sb, id), "success");
    assert!(
        run.stderr.lines().any(|l| l.to_lowercase().contains("warn")
            && l.contains("2026-02-03")
            && l.contains("big_day")),
        "a warning line names the date and the check:\n{}",
        run.stderr
    );

    let got = results_of(&sb, "big_day");
    assert_eq!(got.len(), 1, "{got:?}");
    let r = &got[0];
    assert_eq!(
        (
            r.run_id,
            r.ds.as_str(),
            r.model.as_str(),
            r.severity.as_str(),
            r.failing_rows
        ),
        (id, "2026-02-03", "daily_revenue", "warn", 1)
    );
    let now = orders.expected()["2026-02-03"];
    sample_is_one_row(r, "2026-02-03", now.0, now.1);

    // --json has each date's checks that found rows, with their severity.
    let out = with(
        &sb,
        0,
        &tpl,
        &["--json", "apply", "--interval", "2026-02-03"],
    );
    assert_eq!(
        results_of(&sb, "big_day").len(),
        2,
        "one more, for the new run"
    );
    let doc: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("apply --json is JSON ({e}): {}", out.stdout));
    let mut checks = Vec::new();
    find_key(&doc, "checks", &mut checks);
    assert!(
        checks.iter().any(|c| c.as_array().is_some_and(|a| {
            a.iter()
                .any(|f| f["check"] == "big_day" && f["severity"] == "warn")
        })),
        "a date's \"checks\" with big_day as warn: {doc}"
    );
}

// ---------------------------------------------------------------------------------------
// sealed dates

#[test]
fn a_check_on_a_sealed_date_sees_the_corrected_values() {
    let (sb, mut orders) = with_orders(404, 7);
    let tpl = project(&sb, "pipeline", &[too_big()]);
    let week = orders.interval();
    with(&sb, 0, &tpl, &["apply", "--interval", &week]);
    with(
        &sb,
        0,
        &tpl,
        &["seal", "--interval", &week, "--reason", "week 1"],
    );
    let sent = sb.daily();
    let seals = sb.rows("SELECT * FROM seals ORDER BY ds");
    assert_eq!(seals.len(), 7);

    // Late data: the recomputed 2026-02-03 would be a correction over LIMIT; the value as
    // sent (what daily_revenue keeps) is well under it.
    late(&sb, &mut orders, "late-huge", "2026-02-03", HUGE);
    let now = orders.expected()["2026-02-03"];
    assert!(sent["2026-02-03"].0 < LIMIT && now.0 > LIMIT);
    let failing = date_state(&sb, "2026-02-03");

    let run = with(&sb, 1, &tpl, &["apply", "--interval", &week]);
    let id = sb.last_run_id();
    assert!(run.stderr.contains("too_big"), "{}", run.stderr);
    assert_eq!(
        partitions(&sb, id),
        [
            ["2026-02-01", "unchanged"],
            ["2026-02-02", "unchanged"],
            ["2026-02-03", "failed"]
        ]
    );
    let error = &partition(&sb, id, "2026-02-03")[2];
    contains_all(error, &["too_big", "1 failing row"]);
    // The correction rolled back with the date.
    assert_eq!(date_state(&sb, "2026-02-03"), failing);
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue_corrections"),
        0
    );
    assert_eq!(sb.daily(), sent);
    assert_eq!(sb.current(), sent, "nothing corrected");
    assert_eq!(sb.rows("SELECT * FROM seals ORDER BY ds"), seals);

    // What the check saw: the corrected value, not the sealed one.
    let got = results_of(&sb, "too_big");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].run_id, got[0].severity.as_str()), (id, "error"));
    sample_is_one_row(&got[0], "2026-02-03", now.0, now.1);
}

// ---------------------------------------------------------------------------------------
// readiness

#[test]
fn a_date_not_ready_is_skipped_and_built_by_a_later_lookback_once_ready() {
    let (sb, orders) = with_orders(405, 5);
    let kind = if is_postgres() { "DATE" } else { "TEXT" };
    sb.exec(&format!(
        "CREATE TABLE loads (loaded_through {kind} NOT NULL); \
         INSERT INTO loads VALUES ('2026-02-03');"
    ));
    let tpl = with_ready(
        &sb,
        "pipeline",
        "EXISTS (SELECT 1 FROM loads WHERE loaded_through >= {{ ds }})",
    );
    let want = orders.expected();

    let run = with(&sb, 99, &tpl, &["apply", "--interval", &orders.interval()]);
    let id = sb.last_run_id();
    assert_eq!(
        partitions(&sb, id),
        [
            ["2026-02-01", "success"],
            ["2026-02-02", "success"],
            ["2026-02-03", "success"],
            ["2026-02-04", "skipped"],
            ["2026-02-05", "skipped"]
        ]
    );
    for d in ["2026-02-04", "2026-02-05"] {
        let p = partition(&sb, id, d);
        assert_eq!(p[1], "NULL", "held by no run: {p:?}");
        contains_all(&p[2], &["not ready", "daily_revenue"]);
        assert!(
            run.stderr.lines().any(|l| l.contains("not ready")
                && (l.contains(d) || l.contains("2026-02-04..2026-02-05"))),
            "stderr says {d} is not ready:\n{}",
            run.stderr
        );
    }
    assert_eq!(run_status(&sb, id), "partial");
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    let daily = sb.daily();
    assert_eq!(
        daily.keys().collect::<Vec<_>>(),
        ["2026-02-01", "2026-02-02", "2026-02-03"]
    );
    for (d, v) in &daily {
        assert_eq!(*v, want[d], "{d}");
    }

    // The load completes: the next regular run looks back and builds the skipped dates.
    sb.exec("UPDATE loads SET loaded_through = '2026-02-05'");
    with(
        &sb,
        0,
        &tpl,
        &["apply", "--as-of", "2026-02-06", "--lookback", "3"],
    );
    let healed = sb.last_run_id();
    assert_eq!(
        partitions(&sb, healed),
        [["2026-02-04", "success"], ["2026-02-05", "success"]]
    );
    assert_eq!(run_status(&sb, healed), "success");
    assert_eq!(sb.daily(), want);
    for d in ["2026-02-04", "2026-02-05"] {
        assert_eq!(
            sb.count(&format!(
                "SELECT run_id FROM daily_revenue WHERE ds = '{d}'"
            )),
            healed
        );
    }

    // A date already built and then not ready (its load is being redone) keeps its rows.
    sb.exec("UPDATE loads SET loaded_through = '2026-02-01'");
    let before = date_state(&sb, "2026-02-03");
    with(&sb, 99, &tpl, &["apply", "--interval", "2026-02-03"]);
    assert_eq!(
        partitions(&sb, sb.last_run_id()),
        [["2026-02-03", "skipped"]]
    );
    assert_eq!(date_state(&sb, "2026-02-03"), before);

    // A date not ready is skipped, not failed: no stderr line calls it failed.
    for d in ["2026-02-04", "2026-02-05"] {
        assert!(
            !run.stderr
                .lines()
                .any(|l| l.contains(d) && l.contains("failed")),
            "{d} was skipped, not failed:\n{}",
            run.stderr
        );
    }
}

// ---------------------------------------------------------------------------------------
// sqlrun check

/// The dates of the largest order_count (a check on `order_count >= max` fails there).
fn busiest(sb: &Sandbox) -> (i64, Vec<String>) {
    let daily = sb.daily();
    let max = daily.values().map(|v| v.1).max().unwrap();
    let dates = daily
        .iter()
        .filter(|(_, v)| v.1 == max)
        .map(|(d, _)| d.clone())
        .collect();
    (max, dates)
}

fn busy_check<'a>(name: &'a str, severity: &str, max: i64) -> (&'a str, String) {
    let body =
        format!("SELECT * FROM {{{{ this }}}} WHERE ds = {{{{ ds }}}} AND order_count >= {max}");
    (name, check(name, severity, &body))
}

#[test]
fn check_reads_existing_partitions_writes_nothing_and_exits_1_on_an_error() {
    let (sb, orders) = with_orders(406, 6);
    let plain = project(&sb, "plain", &[]);
    with(&sb, 0, &plain, &["apply", "--interval", &orders.interval()]);
    let (max, busy) = busiest(&sb);
    let quiet = orders
        .expected()
        .keys()
        .find(|d| !busy.contains(d))
        .cloned()
        .unwrap();

    // A check added after the dates were computed: it fails on the busiest dates.
    let strict = project(&sb, "strict", &[busy_check("busy", "error", max)]);
    let before = everything(&sb);
    let run = with(
        &sb,
        1,
        &strict,
        &["check", "--interval", &orders.interval()],
    );
    assert_eq!(everything(&sb), before, "check writes nothing");
    let said = format!("{}{}", run.stdout, run.stderr);
    for d in &busy {
        assert!(
            said.lines()
                .any(|l| l.contains(d.as_str()) && l.contains("busy")),
            "names the failing check on {d}:\n{said}"
        );
    }
    assert!(
        !said
            .lines()
            .any(|l| l.contains(&quiet) && l.contains("busy")),
        "{quiet} passes:\n{said}"
    );
    let run = with(
        &sb,
        1,
        &strict,
        &["--json", "check", "--interval", &orders.interval()],
    );
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("check --json is JSON ({e}): {}", run.stdout));
    assert!(doc.to_string().contains("busy"), "{doc}");
    // A date that passes: exit 0.
    with(&sb, 0, &strict, &["check", "--interval", &quiet]);
    assert_eq!(everything(&sb), before, "check writes nothing");

    // The same failure as a warning: printed, exit 0, still nothing written; a date never
    // computed is not checked.
    let lenient = project(&sb, "lenient", &[busy_check("busy_warn", "warn", max)]);
    let wider = format!("{START}..{}", day(START, 6));
    let run = with(&sb, 0, &lenient, &["check", "--interval", &wider]);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.lines()
            .any(|l| l.contains(busy[0].as_str()) && l.contains("busy_warn")),
        "{said}"
    );
    assert!(
        said.contains(&day(START, 6)),
        "says the uncomputed date:\n{said}"
    );
    assert_eq!(everything(&sb), before, "check writes nothing");
}

// ---------------------------------------------------------------------------------------
// --jobs

#[test]
fn two_jobs_give_the_same_rows_records_and_check_results_as_one() {
    if postgres_only("SQLite has one writer: more than one job is refused") {
        return;
    }
    let read = |jobs: &str| {
        let (sb, mut orders) = with_orders(407, 10);
        late(&sb, &mut orders, "late-huge", "2026-02-04", HUGE);
        let body = "SELECT * FROM {{ this }} WHERE ds = {{ ds }} AND order_count >= 10";
        let tpl = project(
            &sb,
            "pipeline",
            &[too_big(), ("many", check("many", "warn", body))],
        );
        with(
            &sb,
            1,
            &tpl,
            &[
                "apply",
                "--interval",
                &orders.interval(),
                "--keep-going",
                "--jobs",
                jobs,
            ],
        );
        [
            "SELECT ds, revenue, order_count FROM daily_revenue ORDER BY ds",
            "SELECT ds, status, held_by, error FROM run_partitions ORDER BY ds",
            "SELECT ds, check_name, model, severity, version, failing_rows, \
             CAST(sample AS TEXT) FROM check_results ORDER BY ds, check_name",
            "SELECT status FROM runs",
        ]
        .map(|q| {
            // Messages that name a file name it in this sandbox's folder.
            let here = sb.path().to_str().unwrap().to_string();
            let rows = sb.rows(q);
            rows.into_iter()
                .map(|r| r.into_iter().map(|v| v.replace(&here, "SANDBOX")).collect())
                .collect::<Vec<Vec<String>>>()
        })
    };
    let one = read("1");
    let two = read("2");
    assert_eq!(one, two);
    // Not vacuous: a failed date, warnings and errors among the results.
    assert!(one[1].iter().any(|r| r[1] == "failed"), "{:?}", one[1]);
    assert!(one[2].iter().any(|r| r[3] == "warn"), "{:?}", one[2]);
    assert!(one[2].iter().any(|r| r[3] == "error"), "{:?}", one[2]);
}

// ---------------------------------------------------------------------------------------
// bad checks

#[test]
fn a_bad_check_is_refused_before_anything_is_written() {
    let (sb, orders) = with_orders(408, 3);
    let good = project(&sb, "good", &[]);
    with(&sb, 0, &good, &["apply", "--interval", "2026-02-01"]);
    let this = "SELECT * FROM {{ this }} WHERE ds = {{ ds }}";
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "jinja_syntax",
            check("jinja_syntax", "error", &format!("{this} AND {{% if %}}")),
            "",
        ),
        (
            "undefined_variable",
            check(
                "undefined_variable",
                "error",
                &format!("{this} AND revenue > {{{{ no_such_limit }}}}"),
            ),
            "no_such_limit",
        ),
        (
            "sql_syntax",
            check(
                "sql_syntax",
                "error",
                "SELEC * FRM {{ this }} WHERE ds = {{ ds }}",
            ),
            "",
        ),
        (
            "unknown_column",
            check(
                "unknown_column",
                "error",
                &format!("{this} AND no_such_column > 0"),
            ),
            "no_such_column",
        ),
        (
            "unknown_model",
            "-- name: unknown_model\n-- version: 1\n-- model: no_such_model\n\
             -- severity: error\nSELECT 1 WHERE 1 = 0\n"
                .to_string(),
            "no_such_model",
        ),
        (
            "bad_severity",
            check("bad_severity", "fatal", this),
            "fatal",
        ),
        (
            "unknown_key",
            format!(
                "-- name: unknown_key\n-- version: 1\n-- model: daily_revenue\n\
                 -- colour: red\n{this}\n"
            ),
            "colour",
        ),
    ];
    let before = everything(&sb);
    for (i, (name, text, says)) in cases.iter().enumerate() {
        let tpl = project(&sb, &format!("bad{i}"), &[(name, text.clone())]);
        let run = with(&sb, 2, &tpl, &["apply", "--interval", &orders.interval()]);
        contains_all(&run.stderr, &[&format!("checks/{name}.sql"), says]);
        assert_eq!(everything(&sb), before, "{name}: nothing written");
    }
}

// ---------------------------------------------------------------------------------------
// built-in checks

#[test]
fn the_built_in_checks_run_and_pass_on_normal_data() {
    let sb = Sandbox::new();
    let mut orders = Orders::new(409, START, 10, true);
    sb.insert_orders(&orders.rows);
    // A day with only a refund: a net negative day is legitimate, a warning at most.
    late(&sb, &mut orders, "refund-1", "2026-02-11", -5_000);
    let interval = "2026-02-01..2026-02-11";

    let render = sb.ok(&["render", "--date", "2026-02-01"]).stdout;
    for name in [
        "daily_revenue_one_row",
        "daily_revenue_not_null",
        "daily_revenue_order_count_not_negative",
        "daily_revenue_revenue_not_negative",
        "daily_revenue_change",
    ] {
        assert!(render.contains(name), "render shows the check {name}");
    }

    sb.ok(&["apply", "--interval", interval]);
    let mut want = orders.expected();
    want.insert("2026-02-11".into(), (-5_000, 1));
    assert_eq!(sb.daily(), want);
    assert!(results(&sb, "severity = 'error'").is_empty());
    let negative = results_of(&sb, "daily_revenue_revenue_not_negative");
    assert_eq!(
        negative
            .iter()
            .map(|r| (r.ds.as_str(), r.severity.as_str(), r.failing_rows))
            .collect::<Vec<_>>(),
        [("2026-02-11", "warn", 1)],
        "the built-in checks ran"
    );
    let out = sb.ok(&["--json", "status", "--interval", interval]);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    for d in doc["dates"].as_array().unwrap() {
        assert_ne!(d["checks"], "failed", "{d}");
    }
}

// ---------------------------------------------------------------------------------------
// seal

#[test]
fn seal_refuses_a_date_whose_rows_fail_an_error_check() {
    let (sb, orders) = with_orders(410, 7);
    let plain = project(&sb, "plain", &[]);
    let week = orders.interval();
    with(&sb, 0, &plain, &["apply", "--interval", &week]);
    let (max, busy) = busiest(&sb);

    let strict = project(&sb, "strict", &[busy_check("busy", "error", max)]);
    let before = everything(&sb);
    let run = with(
        &sb,
        2,
        &strict,
        &["seal", "--interval", &week, "--reason", "week 1"],
    );
    contains_all(&run.stderr, &["busy", &busy[0]]);
    assert_eq!(everything(&sb), before, "nothing sealed, nothing written");
    assert_eq!(sb.count("SELECT count(*) FROM seals"), 0);

    // Not the seal itself: without that check the same seal goes through.
    with(
        &sb,
        0,
        &plain,
        &["seal", "--interval", &week, "--reason", "week 1"],
    );
    assert_eq!(sb.count("SELECT count(*) FROM seals"), 7);
}

// ---------------------------------------------------------------------------------------
// status

#[test]
fn status_marks_a_check_failed_date_and_a_warned_date() {
    let (sb, mut orders) = with_orders(411, 5);
    late(&sb, &mut orders, "late-huge", "2026-02-02", HUGE);
    late(&sb, &mut orders, "late-big", "2026-02-04", LIMIT / 2);
    let warn_body = format!(
        "SELECT * FROM {{{{ this }}}} WHERE ds = {{{{ ds }}}} AND revenue BETWEEN {} AND {LIMIT}",
        LIMIT / 2
    );
    // Only these two checks, so that no other date warns.
    let tpl = project(
        &sb,
        "pipeline",
        &[too_big(), ("big_ish", check("big_ish", "warn", &warn_body))],
    );
    let interval = orders.interval();
    with(
        &sb,
        1,
        &tpl,
        &["apply", "--interval", &interval, "--keep-going"],
    );
    assert_eq!(
        results(&sb, "1 = 1")
            .iter()
            .map(|r| (r.ds.as_str(), r.severity.as_str()))
            .collect::<Vec<_>>(),
        [("2026-02-02", "error"), ("2026-02-04", "warn")]
    );

    let dates = status_json(&sb, &tpl, &interval);
    assert_eq!(dates.len(), 5);
    for (d, v) in &dates {
        let want = match d.as_str() {
            "2026-02-02" => Value::from("failed"),
            "2026-02-04" => Value::from("warned"),
            _ => Value::Null,
        };
        assert_eq!(v["checks"], want, "{d}: {v}");
    }
    for (d, want) in [
        ("2026-02-01", "-"),
        ("2026-02-02", "failed"),
        ("2026-02-04", "warned"),
    ] {
        assert_eq!(checks_column(&sb, &tpl, &interval, d), want, "{d}");
    }
}

// ---------------------------------------------------------------------------------------
// the generic macros

#[test]
fn the_generic_macros_find_the_violating_rows() {
    let (sb, mut orders) = with_orders(412, 4);
    late(&sb, &mut orders, "late-huge", "2026-02-02", HUGE);
    let macro_check = |name: &'static str, call: &str| {
        let body = format!("{{% import \"system/checks.sql\" as check %}}\n{{{{ {call} }}}}");
        (name, check(name, "warn", &body))
    };
    let tpl = project(
        &sb,
        "pipeline",
        &[
            macro_check(
                "m_not_null",
                r#"check.not_null(["revenue", "order_count"])"#,
            ),
            macro_check("m_unique", "check.unique_key()"),
            macro_check(
                "m_range",
                &format!(r#"check.accepted_range("revenue", min=0, max={LIMIT})"#),
            ),
            macro_check("m_rows", "check.row_count(min=1, max=1)"),
            macro_check(
                "m_change",
                r#"check.change_against_recent("revenue", ratio=0.9, days=7)"#,
            ),
        ],
    );
    with(&sb, 0, &tpl, &["apply", "--interval", &orders.interval()]);
    let want = orders.expected();
    assert_eq!(sb.daily(), want, "warnings: every date committed");

    let dates =
        |name: &str| -> Vec<String> { results_of(&sb, name).into_iter().map(|r| r.ds).collect() };
    for name in ["m_not_null", "m_unique", "m_rows"] {
        assert!(
            dates(name).is_empty(),
            "{name}: {:?}",
            results_of(&sb, name)
        );
    }
    let outside: Vec<String> = want
        .iter()
        .filter(|(_, v)| v.0 < 0 || v.0 > LIMIT)
        .map(|(d, _)| d.clone())
        .collect();
    assert!(outside.contains(&"2026-02-02".to_string()));
    assert_eq!(dates("m_range"), outside);
    // change_against_recent compares with the dates before that the run does not compute
    // itself: in one backfill from scratch, nothing. Run date by date, each date is
    // compared with the average of the dates before it (up to 7, all here).
    assert!(
        dates("m_change").is_empty(),
        "{:?}",
        results_of(&sb, "m_change")
    );
    for ds in want.keys() {
        with(&sb, 0, &tpl, &["apply", "--interval", ds]);
    }
    let days: Vec<(&String, i64)> = want.iter().map(|(d, v)| (d, v.0)).collect();
    let changed: Vec<String> = (1..days.len())
        .filter(|&i| {
            let before: Vec<i64> = days[..i].iter().map(|x| x.1).collect();
            let avg = before.iter().sum::<i64>() as f64 / before.len() as f64;
            (days[i].1 as f64 - avg).abs() > 0.9 * avg.abs()
        })
        .map(|i| days[i].0.clone())
        .collect();
    assert!(changed.contains(&"2026-02-02".to_string()));
    assert_eq!(dates("m_change"), changed);
}

// ---------------------------------------------------------------------------------------
// found by review: NULL readiness, a bad readiness condition, a long check name

/// A project whose daily_revenue declares `-- ready: CONDITION`.
fn with_ready(sb: &Sandbox, folder: &str, condition: &str) -> PathBuf {
    let tpl = project(sb, folder, &[]);
    let model = tpl.join("models/daily_revenue.sql");
    let text = std::fs::read_to_string(&model).unwrap();
    let version = text
        .lines()
        .find(|l| l.starts_with("-- version:"))
        .expect("a version line")
        .to_string();
    edit(
        &model,
        &version,
        &format!("{version}\n-- ready: {condition}"),
    );
    tpl
}

#[test]
fn a_ready_condition_that_is_null_counts_as_not_ready() {
    let (sb, orders) = with_orders(413, 2);
    let kind = if is_postgres() { "DATE" } else { "TEXT" };
    // The loader has not written its watermark row yet: the condition is NULL.
    sb.exec(&format!(
        "CREATE TABLE loads (source TEXT NOT NULL, loaded_through {kind} NOT NULL)"
    ));
    let tpl = with_ready(
        &sb,
        "pipeline",
        "(SELECT loaded_through FROM loads WHERE source = 'orders') >= {{ ds }}",
    );
    with(&sb, 99, &tpl, &["apply", "--interval", &orders.interval()]);
    let id = sb.last_run_id();
    assert_eq!(
        partitions(&sb, id),
        [["2026-02-01", "skipped"], ["2026-02-02", "skipped"]]
    );
    assert!(sb.daily().is_empty(), "nothing built from partial data");
    sb.exec("INSERT INTO loads VALUES ('orders', '2026-02-02')");
    with(&sb, 0, &tpl, &["apply", "--interval", &orders.interval()]);
    assert_eq!(sb.daily(), orders.expected());
}

#[test]
fn a_bad_ready_condition_is_refused_before_anything_is_written() {
    let (sb, orders) = with_orders(414, 2);
    let before = everything(&sb);
    for (i, (condition, says)) in [
        ("{{ no_such_day }} IS NOT NULL", "no_such_day"),
        (
            "EXISTS (SELECT 1 FROM no_such_loads WHERE d >= {{ ds }})",
            "no_such_loads",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let tpl = with_ready(&sb, &format!("bad{i}"), condition);
        let run = with(&sb, 2, &tpl, &["apply", "--interval", &orders.interval()]);
        contains_all(&run.stderr, &["models/daily_revenue.sql", says]);
        assert_eq!(everything(&sb), before, "{condition}: nothing written");
    }
}

#[test]
fn a_check_whose_name_passes_63_bytes_still_gates_its_date() {
    let (sb, mut orders) = with_orders(415, 3);
    late(&sb, &mut orders, "late-huge", "2026-02-02", HUGE);
    // PostgreSQL cuts identifiers at 63 bytes: the check must not be lost by its name.
    let name = "too_big_a_name_that_passes_the_sixty_three_bytes_postgresql_keeps_of_a_name";
    assert!(name.len() > 63);
    let tpl = project(&sb, "pipeline", &[too_big_named(name)]);
    with(
        &sb,
        1,
        &tpl,
        &["apply", "--interval", &orders.interval(), "--keep-going"],
    );
    let id = sb.last_run_id();
    assert_eq!(
        partitions(&sb, id),
        [
            ["2026-02-01", "success"],
            ["2026-02-02", "failed"],
            ["2026-02-03", "success"]
        ]
    );
    assert!(
        !sb.daily().contains_key("2026-02-02"),
        "the failing date did not land"
    );
    assert_eq!(results_of(&sb, name).len(), 1);
}

#[test]
fn a_check_whose_types_fail_only_as_it_runs_is_refused_before_anything_is_written() {
    if postgres_only("SQLite has no operator types: the date minus a number is valid there") {
        return;
    }
    // As literals this prepares (`DATE '...' - 1`); as it runs, with parameters, the number
    // is a bigint and PostgreSQL has no date - bigint: the preflight prepares it that way.
    let (sb, orders) = with_orders(416, 2);
    let body = "SELECT * FROM {{ this }} WHERE ds = {{ ds }} AND ds > {{ prev_ds }} - {{ 1 }}";
    let tpl = project(&sb, "pipeline", &[("typed", check("typed", "error", body))]);
    let before = everything(&sb);
    let run = with(&sb, 2, &tpl, &["apply", "--interval", &orders.interval()]);
    contains_all(&run.stderr, &["checks/typed.sql", "date - bigint"]);
    assert_eq!(everything(&sb), before, "nothing written");
}

// ---------------------------------------------------------------------------------------
// a check's results belong to its version

/// The class of `ds`'s cell in the page of `report --html` (its first model's calendar).
fn report_cell(sb: &Sandbox, tpl: &Path, ds: &str) -> String {
    let file = sb.path().join("report.html");
    with(sb, 0, tpl, &["report", "--html", s(&file)]);
    let page = std::fs::read_to_string(&file).unwrap();
    let at = page
        .find(&format!("title=\"{ds}"))
        .unwrap_or_else(|| panic!("a cell for {ds}"));
    let open = page[..at].rfind("<i class=").expect("the cell's tag");
    page[open..at].to_string()
}

#[test]
fn a_removed_or_re_versioned_check_marks_no_date_and_its_results_stay() {
    let (sb, mut orders) = with_orders(413, 5);
    late(&sb, &mut orders, "late-huge", "2026-02-02", HUGE);
    late(&sb, &mut orders, "late-big", "2026-02-04", LIMIT / 2);
    let warn_body = format!(
        "SELECT * FROM {{{{ this }}}} WHERE ds = {{{{ ds }}}} AND revenue BETWEEN {} AND {LIMIT}",
        LIMIT / 2
    );
    let big_ish = check("big_ish", "warn", &warn_body);
    let tpl = project(&sb, "pipeline", &[too_big(), ("big_ish", big_ish.clone())]);
    let interval = orders.interval();
    with(
        &sb,
        1,
        &tpl,
        &["apply", "--interval", &interval, "--keep-going"],
    );
    let recorded = "SELECT ds, check_name, severity, version FROM check_results ORDER BY ds";
    let before = sb.rows(recorded);
    assert_eq!(before.len(), 2, "{before:?}");
    assert_eq!(checks_column(&sb, &tpl, &interval, "2026-02-04"), "warned");
    assert!(report_cell(&sb, &tpl, "2026-02-04").contains(" w\""));

    // big_ish re-versioned (a new version, a stricter bound): its version 1 results are
    // history; nothing has run it since, so nothing marks 2026-02-04.
    let v2 = big_ish.replace("-- version: 1", "-- version: 2").replace(
        &format!("BETWEEN {} AND", LIMIT / 2),
        &format!("BETWEEN {} AND", LIMIT / 4),
    );
    std::fs::write(tpl.join("checks/big_ish.sql"), v2).unwrap();
    let dates = status_json(&sb, &tpl, &interval);
    assert_eq!(dates["2026-02-04"]["checks"], Value::Null);
    assert_eq!(dates["2026-02-02"]["checks"], Value::from("failed"));
    assert_eq!(checks_column(&sb, &tpl, &interval, "2026-02-04"), "-");
    let cell = report_cell(&sb, &tpl, "2026-02-04");
    assert!(!cell.contains(" w\"") && !cell.contains(" k\""), "{cell}");

    // too_big removed: 2026-02-02 is still failed (its latest attempt failed), but no
    // check of the pipeline says so any more.
    std::fs::remove_file(tpl.join("checks/too_big.sql")).unwrap();
    let dates = status_json(&sb, &tpl, &interval);
    assert_eq!(dates["2026-02-02"]["checks"], Value::Null);
    assert_eq!(dates["2026-02-02"]["state_name"], Value::from("failed"));
    assert_eq!(checks_column(&sb, &tpl, &interval, "2026-02-02"), "-");
    // The audit trail keeps every result.
    assert_eq!(sb.rows(recorded), before);

    // A run with the new version records and marks by it again.
    with(&sb, 0, &tpl, &["apply", "--interval", "2026-02-04"]);
    let v2_rows = sb.count(
        "SELECT count(*) FROM check_results WHERE check_name = 'checks/big_ish' AND version = 2",
    );
    assert_eq!(v2_rows, 1);
    assert_eq!(checks_column(&sb, &tpl, &interval, "2026-02-04"), "warned");
}
