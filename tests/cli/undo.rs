//! `sqlrun undo RUN`: what RUN replaced, put back from `<table>_history` as a new run of
//! kind undo (reserved, one transaction per date, recorded, checked; a sealed date gets
//! corrections), skipping and naming the partitions replaced since.

use crate::support::*;
use crate::templates::copy_templates;

const ALL: &str = "2026-03-01..2026-03-05";

/// The model's columns of daily_revenue (not run_id, which says which run wrote them).
fn table(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows("SELECT CAST(ds AS TEXT), revenue, order_count FROM daily_revenue ORDER BY ds")
}

/// `ds -> run_id` of daily_revenue's rows.
fn writers(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows("SELECT CAST(ds AS TEXT), run_id FROM daily_revenue ORDER BY ds")
}

/// Five dates built (run `good`), then late orders on the 2nd..4th and the interval
/// again: the run to undo (`bad`).
fn with_a_bad_run(seed: u64) -> (Sandbox, Orders, Vec<Vec<String>>, i64) {
    let sb = Sandbox::new();
    let mut orders = Orders::new(seed, "2026-03-01", 5, false);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", ALL]);
    let good = table(&sb);
    let late: Vec<OrderRow> = ["2026-03-02", "2026-03-03", "2026-03-04"]
        .iter()
        .enumerate()
        .map(|(i, d)| orders.add(&format!("late-{i}"), d, 100_000 + i as i64))
        .collect();
    sb.insert_orders(&late);
    sb.ok(&["apply", "--interval", ALL, "--reason", "the bad fix"]);
    let bad = sb.last_run_id();
    assert_ne!(table(&sb), good, "the bad run changed the numbers");
    (sb, orders, good, bad)
}

#[test]
fn undo_puts_back_what_the_run_replaced_and_skips_what_was_replaced_since() {
    let (sb, _, good, bad) = with_a_bad_run(361);
    // The 4th is computed again after the bad run: it is not the bad run's any more.
    sb.ok(&["apply", "--interval", "2026-03-04"]);
    let since = sb.last_run_id();
    let fourth_since = table(&sb)[3].clone();

    let run = sb.ok(&[
        "undo",
        &bad.to_string(),
        "--reason",
        "the fix was wrong",
        "--by",
        "carol",
    ]);
    let undo = sb.last_run_id();
    contains_all(
        &run.stderr,
        &[&format!(
            "skipped 2026-03-04 daily_revenue: replaced since by run {since}"
        )],
    );
    contains_all(&run.stdout, &[&format!("run {undo} (undo ")]);

    // Byte-equal to before the bad run, but the 4th, which keeps the later run's rows.
    let mut want = good.clone();
    want[3] = fourth_since;
    assert_eq!(table(&sb), want);
    // The rows are the undo's now (so "which partitions did run U write" is a query).
    let by: Vec<Vec<String>> = [
        "2026-03-01",
        "2026-03-02",
        "2026-03-03",
        "2026-03-04",
        "2026-03-05",
    ]
    .iter()
    .map(|d| {
        let run = if *d == "2026-03-04" { since } else { undo };
        vec![d.to_string(), run.to_string()]
    })
    .collect();
    assert_eq!(writers(&sb), by);

    // A run of kind undo, with its reason and who, and a record per date it put back.
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, requested_by, reason, status, CAST(interval_start AS TEXT), \
             CAST(interval_end AS TEXT) FROM runs WHERE run_id = {undo}"
        )),
        vec![vec![
            "undo".to_string(),
            "carol".into(),
            "the fix was wrong".into(),
            "success".into(),
            "2026-03-01".into(),
            "2026-03-05".into(),
        ]]
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT CAST(ds AS TEXT), status FROM run_partitions WHERE run_id = {undo} ORDER BY ds"
        )),
        ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-05"]
            .iter()
            .map(|d| vec![d.to_string(), "success".to_string()])
            .collect::<Vec<_>>()
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM partition_models WHERE run_id = {undo}"
        )),
        4
    );
    // The undo kept history too: the bad run's rows, replaced by the undo.
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM daily_revenue_history \
             WHERE replaced_by = {undo} AND run_id = {bad}"
        )),
        4
    );
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);

    // Twice: nothing is left (the first undo replaced every partition), nothing written.
    let before = snapshot(&sb);
    let again = sb.ok(&["undo", &bad.to_string()]);
    contains_all(&again.stdout, &["nothing left to undo"]);
    contains_all(&again.stderr, &[&format!("replaced since by run {undo}")]);
    assert_eq!(snapshot(&sb), before);

    // The undo is itself undone (it is the latest): the bad run's numbers come back.
    sb.ok(&["undo", &undo.to_string()]);
    let redo = table(&sb);
    sb.ok(&["apply", "--interval", ALL]);
    assert_eq!(
        redo,
        table(&sb),
        "the bad run's numbers were the late data's"
    );
}

#[test]
fn a_dry_run_says_the_plan_and_writes_nothing() {
    let (sb, _, _, bad) = with_a_bad_run(362);
    let before = snapshot(&sb);
    let plan = sb.ok(&[
        "undo",
        &bad.to_string(),
        "--dry-run",
        "--interval",
        "2026-03-02..2026-03-03",
    ]);
    contains_all(
        &plan.stdout,
        &[
            &format!("undo of run {bad} would put back 2 partitions"),
            "2026-03-02 daily_revenue",
            "2026-03-03 daily_revenue",
        ],
    );
    let json = sb.ok(&["--json", "undo", &bad.to_string(), "--dry-run"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["undo_of"], bad);
    assert_eq!(doc["restore"].as_array().unwrap().len(), 5);
    assert_eq!(snapshot(&sb), before);
}

#[test]
fn an_interval_undoes_only_its_dates() {
    let (sb, _, good, bad) = with_a_bad_run(363);
    let after_bad = table(&sb);
    sb.ok(&[
        "undo",
        &bad.to_string(),
        "--interval",
        "2026-03-02..2026-03-03",
    ]);
    let now = table(&sb);
    assert_eq!(now[1..3], good[1..3]);
    assert_eq!(now[3..], after_bad[3..]);
    assert_eq!(now[0], after_bad[0]);
}

#[test]
fn undo_on_a_sealed_date_records_corrections_and_leaves_the_sent_rows() {
    let (sb, _, good, bad) = with_a_bad_run(364);
    let sent = table(&sb);
    sb.ok(&[
        "seal",
        "--interval",
        "2026-03-03",
        "--reason",
        "sent to finance",
    ]);
    sb.ok(&["undo", &bad.to_string(), "--reason", "wrong fix"]);
    let undo = sb.last_run_id();
    // The sealed 3rd keeps the rows that went out; its current value is the one before
    // the bad run, by a correction of the undo.
    let now = table(&sb);
    assert_eq!(now[2], sent[2], "a sealed date is never overwritten");
    assert_eq!(now[..2], good[..2]);
    assert_eq!(now[3..], good[3..]);
    assert_eq!(
        sb.rows(&format!(
            "SELECT revenue, order_count, previous_revenue, previous_order_count \
             FROM daily_revenue_corrections WHERE run_id = {undo}"
        )),
        vec![vec![
            good[2][1].clone(),
            good[2][2].clone(),
            sent[2][1].clone(),
            sent[2][2].clone()
        ]]
    );
    let current = sb.current();
    assert_eq!(current["2026-03-03"].0.to_string(), good[2][1]);
    assert_eq!(
        sb.rows(&format!(
            "SELECT status FROM run_partitions WHERE run_id = {undo} AND ds = '2026-03-03'"
        )),
        vec![vec!["corrected".to_string()]]
    );
}

const DOUBLED: &str = "\
-- name: doubled
-- version: 1
-- key: ds
-- values: twice
-- depends_on: daily_revenue
-- create: CREATE TABLE doubled (ds DATE NOT NULL, twice BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
SELECT d.ds, 2 * d.revenue AS twice
FROM daily_revenue AS d
WHERE d.ds = {{ ds }}
";

#[test]
fn undo_recomputes_the_models_downstream_of_what_it_puts_back() {
    let sb = Sandbox::new();
    let dir = copy_templates(&sb);
    std::fs::write(dir.join("models/doubled.sql"), DOUBLED).unwrap();
    let tpl = dir.to_str().unwrap().to_string();
    let mut orders = Orders::new(365, "2026-03-01", 3, false);
    sb.insert_orders(&orders.rows);
    let all = "2026-03-01..2026-03-03";
    sb.ok(&["--templates", &tpl, "apply", "--interval", all]);
    let good = table(&sb);
    let late = orders.add("late", "2026-03-02", 77_000);
    sb.insert_orders(&[late]);
    sb.ok(&["--templates", &tpl, "apply", "--interval", all]);
    let bad = sb.last_run_id();
    // The downstream model alone again on the 2nd: replaced since the bad run there.
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        "2026-03-02",
        "--select",
        "doubled",
    ]);
    let since = sb.last_run_id();

    let run = sb.ok(&["--templates", &tpl, "undo", &bad.to_string()]);
    let undo = sb.last_run_id();
    contains_all(
        &run.stderr,
        &[&format!(
            "skipped 2026-03-02 doubled: replaced since by run {since}"
        )],
    );
    assert_eq!(table(&sb), good);
    // Every date's doubled agrees with the daily_revenue put back: from history where
    // the bad run's rows were there, recomputed on the 2nd (the cascade).
    assert_eq!(
        sb.count(
            "SELECT count(*) FROM doubled AS x JOIN daily_revenue AS d ON d.ds = x.ds \
             WHERE x.twice = 2 * d.revenue"
        ),
        3
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT CAST(ds AS TEXT), model FROM partition_models WHERE run_id = {undo} \
             ORDER BY ds, model"
        )),
        [
            ("2026-03-01", "daily_revenue"),
            ("2026-03-01", "doubled"),
            ("2026-03-02", "daily_revenue"),
            ("2026-03-02", "doubled"),
            ("2026-03-03", "daily_revenue"),
            ("2026-03-03", "doubled"),
        ]
        .iter()
        .map(|(d, m)| vec![d.to_string(), format!("models/{m}")])
        .collect::<Vec<_>>()
    );
}

#[test]
fn bad_input_exits_2_says_what_works_and_writes_nothing() {
    let (sb, _, _, bad) = with_a_bad_run(366);
    // A run that failed at its first date replaced nothing.
    sb.fail_inserts("daily_revenue", "2026-03-01", When::Before);
    sb.expect(1, &["apply", "--interval", ALL]);
    let failed = sb.last_run_id();
    sb.stop_failing("daily_revenue");
    // A reservation given up replaced nothing either.
    sb.ok(&["reserve", "--interval", "2026-03-10"]);
    let reserved = sb.last_run_id();
    sb.ok(&["release", &reserved.to_string()]);
    // Two undos: the first is not the latest.
    sb.ok(&["undo", &bad.to_string(), "--interval", "2026-03-01"]);
    let first_undo = sb.last_run_id();
    sb.ok(&["undo", &bad.to_string(), "--interval", "2026-03-02"]);

    let before = snapshot(&sb);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["undo".into(), "999".into()],
            "`sqlrun runs` lists the runs",
        ),
        (
            vec!["undo".into(), failed.to_string()],
            "replaced no partition",
        ),
        (
            vec!["undo".into(), reserved.to_string()],
            "replaced no partition",
        ),
        (
            vec!["undo".into(), first_undo.to_string()],
            "only the latest undo can be undone",
        ),
        (
            vec![
                "undo".into(),
                bad.to_string(),
                "--interval".into(),
                "2026-04-01..2026-04-03".into(),
            ],
            "give dates within 2026-03-01..2026-03-05",
        ),
    ];
    for (args, says) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = sb.expect(2, &args);
        contains_all(&run.stderr, &[says]);
        assert_eq!(snapshot(&sb), before, "{args:?} wrote nothing");
    }
}

/// The plan is read before the dates are reserved. A run that replaces a partition in
/// between (here: its record and rows, written while the undo stands stopped right after
/// reserving) is not overwritten: that date fails, naming the run, and writes nothing.
#[test]
fn a_partition_replaced_between_the_plan_and_the_reservation_is_not_overwritten() {
    let (sb, _, _, bad) = with_a_bad_run(367);
    let child = stopped_at(
        sb.cmd(&["undo", &bad.to_string(), "--interval", "2026-03-03"]),
        "reserved",
    );
    // What another run's replace of the 3rd leaves: its rows and its record.
    sb.exec(
        "UPDATE daily_revenue SET revenue = 7, run_id = 4242 WHERE ds = '2026-03-03'; \
         UPDATE partition_models SET run_id = 4242 WHERE ds = '2026-03-03'",
    );
    let run = resume(child);
    assert_eq!(run.code, 1, "{run:?}");
    contains_all(
        &run.stderr,
        &["2026-03-03", "run 4242", "nothing of 2026-03-03"],
    );
    assert_eq!(
        sb.rows("SELECT revenue, run_id FROM daily_revenue WHERE ds = '2026-03-03'"),
        vec![vec!["7".to_string(), "4242".into()]],
        "the other run's rows stand"
    );
    let undo = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT status FROM run_partitions WHERE run_id = {undo} AND ds = '2026-03-03'"
        )),
        vec![vec!["failed".to_string()]]
    );
}

/// A run of a new model version, undone: the dates go back to the old version's rows and
/// say so (`partition_models.version`), so they show as stale again, not as current.
#[test]
fn an_undone_new_version_leaves_its_dates_stale() {
    let sb = Sandbox::new();
    let orders = Orders::new(373, "2026-03-01", 3, false);
    sb.insert_orders(&orders.rows);
    let dir = copy_templates(&sb);
    let tpl = dir.to_str().unwrap().to_string();
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        "2026-03-01..2026-03-03",
    ]);
    let before = table(&sb);
    let file = dir.join("models/daily_revenue.sql");
    crate::templates::edit(
        &file,
        "count(*) AS order_count",
        "count(*) + 1 AS order_count",
    );
    crate::templates::edit(&file, "-- version: 2", "-- version: 3");
    sb.ok(&[
        "--templates",
        &tpl,
        "apply",
        "--interval",
        "2026-03-02..2026-03-03",
    ]);
    let v3 = sb.last_run_id();
    let stale = |sb: &Sandbox| {
        sb.rows(
            "SELECT CAST(ds AS TEXT), version FROM partition_models \
             WHERE model = 'models/daily_revenue' ORDER BY ds",
        )
    };
    assert_eq!(
        stale(&sb),
        vec![
            vec!["2026-03-01".to_string(), "2".into()],
            vec!["2026-03-02".to_string(), "3".into()],
            vec!["2026-03-03".to_string(), "3".into()],
        ]
    );
    sb.ok(&["--templates", &tpl, "undo", &v3.to_string()]);
    assert_eq!(table(&sb), before, "the version 2 rows are back");
    assert_eq!(
        stale(&sb),
        vec![
            vec!["2026-03-01".to_string(), "2".into()],
            vec!["2026-03-02".to_string(), "2".into()],
            vec!["2026-03-03".to_string(), "2".into()],
        ],
        "built by version 2's rows again"
    );
    let out = sb.ok(&[
        "--templates",
        &tpl,
        "status",
        "--list",
        "--interval",
        "2026-03-01..2026-03-03",
    ]);
    let stale_lines = out.stdout.lines().filter(|l| l.contains("stale")).count();
    assert_eq!(
        stale_lines, 3,
        "every date is stale against version 3:\n{}",
        out.stdout
    );
}
