//! Gate on the change (issue 36 point 5): a check reads `previous`, the rows the run's
//! replace just took out of the date (in the date's own transaction), and the generic
//! `change_against_previous` refuses a date whose total moves by more than a ratio of
//! the version it replaces. An error check of that kind rolls its date back as any failed
//! check does; the other dates commit. And `report --html` shows what each run changed
//! (issue 36 point 6), read from the same history.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::*;

const START: &str = "2026-04-01";
const GATE: &str = "revenue_gate";

/// The gate's check file: revenue may not move by more than 20% against the version it
/// replaces.
fn gate_check() -> String {
    format!(
        "-- name: {GATE}\n-- version: 1\n-- model: daily_revenue\n-- severity: error\n--\n\
         -- Revenue may not move by more than 20% against the version it replaces.\n\
         {{% import \"system/checks.sql\" as check %}}\n\
         {{{{ check.change_against_previous(\"revenue\", ratio=0.2) }}}}\n"
    )
}

/// A project folder in the sandbox: the repo's models and views, and in checks/ only the
/// gate (so that no built-in check adds results).
fn project(sb: &Sandbox) -> PathBuf {
    let dst = ungated(sb);
    std::fs::write(dst.join("checks").join(format!("{GATE}.sql")), gate_check()).unwrap();
    dst
}

/// The same with no check at all.
fn ungated(sb: &Sandbox) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let dst = sb.path().join("gated");
    for f in ["models", "views", "sources"] {
        std::fs::create_dir_all(dst.join(f)).unwrap();
        for entry in std::fs::read_dir(src.join(f)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dst.join(f).join(path.file_name().unwrap())).unwrap();
        }
    }
    std::fs::create_dir_all(dst.join("checks")).unwrap();
    dst
}

/// `sqlrun --templates TPL ARGS...`, expecting `code`.
fn with(sb: &Sandbox, code: i32, tpl: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--templates", tpl.to_str().unwrap()];
    all.extend_from_slice(args);
    sb.expect(code, &all)
}

/// Five dates of orders with positive revenue, built once through the gate (run 1).
fn built(seed: u64) -> (Sandbox, Orders, PathBuf) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, START, 5, false);
    sb.insert_orders(&orders.rows);
    for (ds, (rev, _)) in orders.expected() {
        assert!(
            rev > 1_000,
            "{ds}: revenue {rev} is too small to move by a ratio"
        );
    }
    let tpl = project(&sb);
    with(&sb, 0, &tpl, &["apply", "--interval", &orders.interval()]);
    (sb, orders, tpl)
}

/// Late orders that move the 2nd date's revenue by +50% and the 4th's by +5%.
fn move_revenue(sb: &Sandbox, orders: &mut Orders) -> (String, String) {
    let (big, small) = (day(START, 1), day(START, 3));
    let now = orders.expected();
    let rows = [
        orders.add("late-big", &big, now[&big].0 / 2),
        orders.add("late-small", &small, now[&small].0 / 20),
    ];
    sb.insert_orders(&rows);
    (big, small)
}

fn table(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows("SELECT CAST(ds AS TEXT), revenue, order_count, run_id FROM daily_revenue ORDER BY ds")
}

/// `(ds, status, error)` of a run's records.
fn records(sb: &Sandbox, run: i64) -> Vec<Vec<String>> {
    sb.rows(&format!(
        "SELECT CAST(ds AS TEXT), status, coalesce(error, '-') FROM run_partitions \
         WHERE run_id = {run} ORDER BY ds"
    ))
}

/// What a gated run leaves behind, times and sessions aside: the model's rows, its
/// history, the replace records, each run's records and the check results.
fn outcome(sb: &Sandbox) -> BTreeMap<&'static str, Vec<Vec<String>>> {
    BTreeMap::from([
        ("daily_revenue", table(sb)),
        (
            "daily_revenue_history",
            sb.rows(
                "SELECT CAST(ds AS TEXT), revenue, order_count, run_id, replaced_by \
                 FROM daily_revenue_history ORDER BY replaced_by, ds",
            ),
        ),
        (
            "replaced_partitions",
            sb.rows(
                "SELECT replaced_by, CAST(ds AS TEXT), coalesce(CAST(run_id AS TEXT), '-'), \
                 row_count FROM replaced_partitions ORDER BY replaced_by, ds",
            ),
        ),
        (
            "run_partitions",
            sb.rows(
                "SELECT run_id, CAST(ds AS TEXT), status, coalesce(error, '-') \
                 FROM run_partitions ORDER BY run_id, ds",
            ),
        ),
        (
            "runs",
            sb.rows("SELECT run_id, kind, status FROM runs ORDER BY run_id"),
        ),
        (
            "check_results",
            sb.rows(
                "SELECT run_id, CAST(ds AS TEXT), check_name, severity, failing_rows, \
                 CAST(sample AS TEXT) FROM check_results ORDER BY run_id, ds, check_name",
            ),
        ),
    ])
}

#[test]
fn a_change_gate_refuses_the_date_that_moved_too_much_and_commits_the_others() {
    let (sb, mut orders, tpl) = built(3601);
    let first = sb.last_run_id();
    // The first build has no previous version: the gate passed on every date.
    let interval = orders.interval();
    assert!(records(&sb, first).iter().all(|r| r[1] == "success"));
    assert_eq!(sb.count("SELECT count(*) FROM check_results"), 0);
    let before = table(&sb);

    let (big, small) = move_revenue(&sb, &mut orders);
    let run = with(
        &sb,
        1,
        &tpl,
        &["apply", "--interval", &interval, "--keep-going"],
    );
    let second = sb.last_run_id();
    assert!(second > first);

    // The date that moved by 50% rolled back: its row as before, built by the first run,
    // and nothing of this run's replace kept in its history.
    let expected = orders.expected();
    let now = table(&sb);
    let row = |rows: &[Vec<String>], ds: &str| rows.iter().find(|r| r[0] == ds).unwrap().clone();
    assert_eq!(row(&now, &big), row(&before, &big));
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM daily_revenue_history WHERE ds = '{big}' AND replaced_by = {second}"
        )),
        0
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM replaced_partitions WHERE ds = '{big}' AND replaced_by = {second}"
        )),
        0
    );
    // The others committed with this run's numbers (the 5% move among them), and their
    // previous version is in the history.
    for i in 0..5 {
        let ds = day(START, i);
        if ds == big {
            continue;
        }
        let (revenue, order_count) = expected[&ds];
        assert_eq!(
            row(&now, &ds),
            [
                ds.clone(),
                revenue.to_string(),
                order_count.to_string(),
                second.to_string()
            ],
            "{ds}"
        );
        let mut old = row(&before, &ds);
        old.push(second.to_string());
        assert_eq!(
            sb.rows(&format!(
                "SELECT CAST(ds AS TEXT), revenue, order_count, run_id, replaced_by \
                 FROM daily_revenue_history WHERE ds = '{ds}' AND replaced_by = {second}"
            )),
            [old],
            "{ds}"
        );
    }
    let small_before: i64 = row(&before, &small)[1].parse().unwrap();
    assert!(expected[&small].0 > small_before, "the 5% move is in");

    // Recorded: the refused date failed, with the check's name; the run failed.
    let recs = records(&sb, second);
    assert_eq!(recs.len(), 5, "{recs:?}");
    for r in &recs {
        if r[0] == big {
            assert_eq!(r[1], "failed", "{r:?}");
            contains_all(&r[2], &["check", GATE, "model daily_revenue"]);
        } else {
            assert_eq!(r[1..2], ["success"], "{r:?}");
        }
    }
    contains_all(&run.stderr, &[&big, GATE]);
    assert_eq!(
        sb.rows(&format!("SELECT status FROM runs WHERE run_id = {second}")),
        [["failed"]]
    );
    // The check's result says the totals it compared: now and before.
    let results = sb.rows(&format!(
        "SELECT CAST(ds AS TEXT), check_name, severity, failing_rows, CAST(sample AS TEXT) \
         FROM check_results WHERE run_id = {second}"
    ));
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(
        results[0][..4],
        [
            big.clone(),
            format!("checks/{GATE}"),
            "error".into(),
            "1".into()
        ]
    );
    let sample: serde_json::Value = serde_json::from_str(&results[0][4]).unwrap();
    let first_row = &sample.as_array().expect("sample rows")[0];
    let number = |v: &serde_json::Value| -> f64 {
        v.as_f64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .unwrap_or_else(|| panic!("a number: {v}"))
    };
    assert_eq!(number(&first_row["total"]), expected[&big].0 as f64);
    assert_eq!(
        number(&first_row["previous_total"]),
        row(&before, &big)[1].parse::<f64>().unwrap()
    );
}

#[test]
fn the_gate_passes_a_first_build_and_a_move_within_the_ratio() {
    let (sb, mut orders, tpl) = built(3602);
    let first = sb.last_run_id();
    assert_eq!(records(&sb, first).len(), 5);
    assert!(records(&sb, first).iter().all(|r| r[1] == "success"));
    // A rebuild with nothing new moves nothing: it passes, and so does a 5% move.
    let small = day(START, 2);
    let rev = orders.expected()[&small].0;
    let late = orders.add("late-5", &small, rev / 20);
    sb.insert_orders(&[late]);
    with(&sb, 0, &tpl, &["apply", "--interval", &orders.interval()]);
    let second = sb.last_run_id();
    assert!(records(&sb, second).iter().all(|r| r[1] == "success"));
    let now: BTreeMap<String, (i64, i64)> = sb.daily();
    assert_eq!(now, orders.expected());
    // Outside a run there is no previous version: `sqlrun check` passes.
    with(&sb, 0, &tpl, &["check", "--interval", &orders.interval()]);
}

#[test]
fn on_a_sealed_date_the_gate_compares_with_the_values_before_the_correction() {
    let (sb, mut orders, tpl) = built(3603);
    let sealed = day(START, 1);
    with(
        &sb,
        0,
        &tpl,
        &[
            "seal",
            "--interval",
            &format!("{sealed}..{sealed}"),
            "--reason",
            "sent",
        ],
    );
    // +50% on the sealed date: the correction would move it past the gate; refused.
    let rev = orders.expected()[&sealed].0;
    let late = orders.add("late-sealed", &sealed, rev / 2);
    sb.insert_orders(&[late]);
    let interval = format!("{sealed}..{sealed}");
    with(&sb, 1, &tpl, &["apply", "--interval", &interval]);
    let run = sb.last_run_id();
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue_corrections"),
        0,
        "the correction rolled back"
    );
    assert_eq!(records(&sb, run)[0][1], "failed");
    contains_all(&records(&sb, run)[0][2], &[GATE]);
    // A re-send of that late order with a twentieth of the amount moves the date by 5%
    // against the values as sent: within the gate, corrected.
    let undo = orders.add("late-sealed", &sealed, rev / 20);
    sb.insert_orders(&[undo]);
    with(&sb, 0, &tpl, &["apply", "--interval", &interval]);
    let run = sb.last_run_id();
    assert_eq!(records(&sb, run)[0][1], "corrected");
    assert_eq!(sb.current()[&sealed], orders.expected()[&sealed]);
}

#[test]
fn jobs_2_gives_the_same_rows_and_records_as_jobs_1() {
    if postgres_only("--jobs is refused on SQLite") {
        return;
    }
    let mut outcomes = Vec::new();
    for jobs in ["1", "2"] {
        let (sb, mut orders, tpl) = built(3604);
        move_revenue(&sb, &mut orders);
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
        let got = outcome(&sb);
        assert_eq!(
            got["run_partitions"]
                .iter()
                .filter(|r| r[2] == "failed")
                .count(),
            1,
            "--jobs {jobs}: {:?}",
            got["run_partitions"]
        );
        outcomes.push(got);
    }
    assert_eq!(outcomes[0], outcomes[1]);
}

// ---------------------------------------------------------------------------------------
// report --html: what a run changed

/// The value cells (`data-col` -> `data-v`) of run `run`'s row in the changes table of
/// `model` on the page.
fn changed(page: &str, model: &str, run: i64) -> BTreeMap<String, String> {
    let start = format!("id=\"changes-{model}\"");
    let from = page
        .find(&start)
        .unwrap_or_else(|| panic!("no {start} in the page"));
    let table = &page[from..];
    let table = &table[..table.find("</table>").unwrap()];
    let row = format!("<tr data-run={run}>");
    let at = table
        .find(&row)
        .unwrap_or_else(|| panic!("no {row} in {table}"));
    let line = table[at..].split("</tr>").next().unwrap();
    let re = regex::Regex::new(r#"data-col=(\w+) data-v=([^ >]*)>"#).unwrap();
    re.captures_iter(line)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// What the page must say of a run, computed from the orders: `(partitions, built_before,
/// rows_before, rows_after, revenue before, after, order_count before, after)`.
fn want(
    dates: &[String],
    built_before: usize,
    before: &BTreeMap<String, (i64, i64)>,
    after: &BTreeMap<String, (i64, i64)>,
) -> BTreeMap<String, String> {
    let sum = |m: &BTreeMap<String, (i64, i64)>, f: fn(&(i64, i64)) -> i64| -> i64 {
        dates.iter().filter_map(|d| m.get(d)).map(f).sum()
    };
    let rows =
        |m: &BTreeMap<String, (i64, i64)>| dates.iter().filter(|d| m.contains_key(*d)).count();
    let (rb, ra) = (sum(before, |x| x.0), sum(after, |x| x.0));
    let (cb, ca) = (sum(before, |x| x.1), sum(after, |x| x.1));
    [
        ("partitions", dates.len() as i64),
        ("built_before", built_before as i64),
        ("rows_before", rows(before) as i64),
        ("rows_after", rows(after) as i64),
        ("before_revenue", rb),
        ("after_revenue", ra),
        ("delta_revenue", ra - rb),
        ("before_order_count", cb),
        ("after_order_count", ca),
        ("delta_order_count", ca - cb),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

#[test]
fn report_html_shows_what_each_run_changed_from_history() {
    let sb = Sandbox::new();
    let mut orders = Orders::new(3605, START, 5, false);
    sb.insert_orders(&orders.rows);
    let tpl = ungated(&sb);
    let all: Vec<String> = (0..5).map(|i| day(START, i)).collect();
    // Run 1 builds five dates for the first time.
    with(&sb, 0, &tpl, &["apply", "--interval", &orders.interval()]);
    let first = sb.last_run_id();
    let v1 = orders.expected();
    // Late orders on the 1st and the 3rd; run 2 rebuilds the 1st..3rd.
    let late = [
        orders.add("late-r1", &all[0], 250_000),
        orders.add("late-r2", &all[2], -40_000),
    ];
    sb.insert_orders(&late);
    let three = format!("{}..{}", all[0], all[2]);
    with(&sb, 0, &tpl, &["apply", "--interval", &three]);
    let second = sb.last_run_id();
    let v2 = orders.expected();
    // Another late order on the 2nd; run 3 rebuilds it alone, so what run 2 wrote there
    // is now in the history (run_id = run 2).
    let late = orders.add("late-r3", &all[1], 99_000);
    sb.insert_orders(&[late]);
    with(&sb, 0, &tpl, &["apply", "--interval", &all[1]]);
    let third = sb.last_run_id();
    let v3 = orders.expected();

    let file = sb.path().join("changes.html");
    let mut args = vec!["--templates", tpl.to_str().unwrap(), "report", "--html"];
    args.push(file.to_str().unwrap());
    sb.ok(&args);
    let page = std::fs::read_to_string(&file).unwrap();

    let none = BTreeMap::new();
    let only = |m: &BTreeMap<String, (i64, i64)>, ds: &[String]| -> BTreeMap<String, (i64, i64)> {
        ds.iter().map(|d| (d.clone(), m[d])).collect()
    };
    assert_eq!(
        changed(&page, "daily_revenue", first),
        want(&all, 0, &none, &v1)
    );
    let d3 = all[..3].to_vec();
    assert_eq!(
        changed(&page, "daily_revenue", second),
        want(&d3, 3, &only(&v1, &d3), &only(&v2, &d3))
    );
    let d1 = vec![all[1].clone()];
    assert_eq!(
        changed(&page, "daily_revenue", third),
        want(&d1, 1, &only(&v2, &d1), &only(&v3, &d1))
    );
    // The deltas are the late orders: +250,000 - 40,000 in run 2, +99,000 in run 3.
    assert_eq!(
        changed(&page, "daily_revenue", second)["delta_revenue"],
        "210000"
    );
    assert_eq!(
        changed(&page, "daily_revenue", third)["delta_revenue"],
        "99000"
    );
    // Newest first.
    let at = |run: i64| page.find(&format!("<tr data-run={run}>")).unwrap();
    assert!(at(third) < at(second) && at(second) < at(first));

    // --interval narrows it to the partitions of those dates.
    let file = sb.path().join("narrow.html");
    let mut args = vec!["--templates", tpl.to_str().unwrap(), "report", "--html"];
    args.extend([file.to_str().unwrap(), "--interval", &all[2]]);
    sb.ok(&args);
    let page = std::fs::read_to_string(&file).unwrap();
    let d = vec![all[2].clone()];
    assert_eq!(
        changed(&page, "daily_revenue", second),
        want(&d, 1, &only(&v1, &d), &only(&v2, &d))
    );
    assert!(!page.contains(&format!("<tr data-run={third}>")));
}
