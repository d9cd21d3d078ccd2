//! `sqlrun report --html`: one page whose every date, run and correction is what
//! `status`, `runs` and `corrections` say (read back from the page's markup), the same
//! bytes for the same database, narrowed by --interval and --select, refused on bad input;
//! and on SQLite, opened in headless Chromium: no console error, no network, a screenshot.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;
use serde_json::Value;

use crate::models::BANDS;
use crate::support::*;
use crate::templates::copy_templates;

const MODELS: [&str; 2] = ["daily_amount_bands", "daily_revenue"];

fn order(id: &str, date: &str, amount: i64) -> OrderRow {
    OrderRow {
        order_id: id.into(),
        order_date: date.into(),
        amount,
        created_at: "2026-01-01 00:00:00".into(),
    }
}

/// A story with every state, over 2026-01-01..2026-01-20 (source rows on each date):
/// stale 01-01 and 01-09 (built by the model's older version), computed 01-05..01-07,
/// sealed 01-02 and 01-04, corrected 01-03, changed 01-08 (a late order), failed 01-10,
/// held 01-11..01-12 (reserved by `planner`), missing 01-13..01-20. Returns the templates.
fn story(sb: &Sandbox) -> String {
    let rows: Vec<OrderRow> = (0..20)
        .map(|i| order(&format!("o{i}"), &day("2026-01-01", i), 1000 + i))
        .collect();
    sb.insert_orders(&rows);
    let dir = copy_templates(sb);
    std::fs::write(dir.join("models/daily_amount_bands.sql"), BANDS).unwrap();
    let tpl = dir.to_str().unwrap().to_string();
    let with = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["--templates".to_string(), tpl.clone()];
        all.extend(args.iter().map(|a| a.to_string()));
        all
    };
    let run = |code: i32, args: &[&str]| {
        let all = with(args);
        sb.expect(code, &all.iter().map(String::as_str).collect::<Vec<_>>());
    };
    sb.fail_inserts("daily_revenue", "2026-01-10", When::Before);
    run(
        1,
        &[
            "apply",
            "--interval",
            "2026-01-01..2026-01-12",
            "--keep-going",
        ],
    );
    sb.stop_failing("daily_revenue");
    let model = dir.join("models/daily_revenue.sql");
    let text = std::fs::read_to_string(&model).unwrap();
    std::fs::write(&model, text.replace("-- version: 2", "-- version: 3")).unwrap();
    run(0, &["apply", "--interval", "2026-01-02..2026-01-07"]);
    run(
        0,
        &[
            "seal",
            "--interval",
            "2026-01-02..2026-01-04",
            "--reason",
            "weekly <report> & \"more\"",
        ],
    );
    sb.insert_orders(&[order("late-a", "2026-01-03", 500)]);
    run(0, &["apply", "--interval", "2026-01-02..2026-01-04"]);
    sb.insert_orders(&[order("late-b", "2026-01-08", 700)]);
    run(
        0,
        &[
            "reserve",
            "--interval",
            "2026-01-11..2026-01-12",
            "--by",
            "planner",
        ],
    );
    tpl
}

fn report(sb: &Sandbox, tpl: &str, file: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "--templates",
        tpl,
        "report",
        "--html",
        file.to_str().unwrap(),
    ];
    args.extend(extra);
    sb.ok(&args);
    std::fs::read_to_string(file).unwrap()
}

fn json(sb: &Sandbox, tpl: &str, args: &[&str]) -> Value {
    let mut all = vec!["--json", "--templates", tpl];
    all.extend(args);
    serde_json::from_str(&sb.ok(&all).stdout).expect("one JSON document")
}

/// The part of the page from `start` to the end of its table.
fn table<'a>(page: &'a str, start: &str) -> &'a str {
    let from = page
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in the page"));
    let rest = &page[from..];
    &rest[..rest.find("</table>").unwrap()]
}

/// Each day cell of a model's calendar: its date and state, as its title starts.
fn cells(page: &str, model: &str) -> BTreeMap<String, String> {
    let cal = table(page, &format!("data-model=\"{model}\""));
    let re = Regex::new(r#"<i class="?(\w)[^>]*? tabindex=0 title="(\S+) (\w+)"#).unwrap();
    re.captures_iter(cal)
        .map(|c| {
            assert_eq!(
                &c[1],
                class_of(&c[3]),
                "the class of {} says its state",
                &c[2]
            );
            (c[2].to_string(), c[3].to_string())
        })
        .collect()
}

/// The class the page gives a state's cells.
fn class_of(state: &str) -> &str {
    match state {
        "corrected" => "r",
        "changed" => "g",
        "stale" => "t",
        other => &other[..1],
    }
}

fn status_states(sb: &Sandbox, tpl: &str, extra: &[&str]) -> BTreeMap<String, String> {
    let mut args = vec!["status", "--list"];
    args.extend(extra);
    json(sb, tpl, &args)["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["ds"].as_str().unwrap().to_string(),
                d["state_name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The `data-NAME=ID` of each row of a table, in order, each once.
fn ids(table: &str, name: &str) -> Vec<i64> {
    let re = Regex::new(&format!(r"<tr data-{name}=(\d+)")).unwrap();
    let mut ids: Vec<i64> = re
        .captures_iter(table)
        .map(|c| c[1].parse().unwrap())
        .collect();
    ids.dedup();
    ids
}

#[test]
fn the_page_says_what_status_runs_and_corrections_say() {
    let sb = Sandbox::new();
    let tpl = story(&sb);
    let file = sb.path().join("report.html");
    let page = report(&sb, &tpl, &file, &[]);
    for model in MODELS {
        let shown = cells(&page, model);
        assert_eq!(
            shown,
            status_states(&sb, &tpl, &["--select", model]),
            "{model}"
        );
        assert_eq!(shown.len(), 20, "every date of the span: {shown:?}");
    }
    let states: std::collections::BTreeSet<String> =
        cells(&page, "daily_revenue").into_values().collect();
    for state in [
        "computed",
        "stale",
        "missing",
        "failed",
        "changed",
        "held",
        "sealed",
        "corrected",
    ] {
        assert!(states.contains(state), "{state} in {states:?}");
    }
    let runs = json(&sb, &tpl, &["runs"]);
    let run_ids: Vec<i64> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_i64().unwrap())
        .collect();
    let listed = table(&page, "id=run-list");
    assert_eq!(ids(listed, "run"), run_ids);
    for r in runs.as_array().unwrap() {
        let row = format!("<tr data-run={}>", r["run_id"]);
        let at = listed.find(&row).unwrap();
        let status = format!("data-status=\"{}\"", r["status"].as_str().unwrap());
        assert!(
            listed[at..]
                .split("</tr>")
                .next()
                .unwrap()
                .contains(&status),
            "{r}"
        );
    }
    let corrections = json(&sb, &tpl, &["corrections"]);
    let mut any = 0;
    for model in MODELS {
        let want: Vec<i64> = corrections[model]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["correction_id"].as_i64().unwrap())
            .collect();
        any += want.len();
        match want.is_empty() {
            true => assert!(
                page.contains(&format!("<p>{model}: no corrections.</p>")),
                "{model}"
            ),
            false => assert_eq!(
                ids(
                    table(&page, &format!("id=\"corrections-{model}\"")),
                    "correction"
                ),
                want,
                "{model}"
            ),
        }
    }
    assert!(any > 0, "the story corrected a date");
    for model in MODELS {
        for c in corrections[model].as_array().unwrap() {
            for v in c["values"].as_array().unwrap() {
                let row = format!(
                    "<tr data-correction={} data-column=\"{}\" data-sent=\"{}\" data-now=\"{}\">",
                    c["correction_id"],
                    v["column"].as_str().unwrap(),
                    v["sent"].to_string().replace('"', "&quot;"),
                    v["now"].to_string().replace('"', "&quot;"),
                );
                assert!(page.contains(&row), "{model}: {row}");
            }
        }
    }
    assert!(
        page.contains("weekly &lt;report&gt; &amp; &quot;more&quot;"),
        "the reason, escaped"
    );
    assert!(
        table(&page, "id=held").contains("planner"),
        "held dates by whom"
    );
    assert!(!page.contains("<script") && !page.contains("http://") && !page.contains("https://"));
}

#[test]
fn the_same_database_gives_the_same_bytes() {
    let sb = Sandbox::new();
    let tpl = story(&sb);
    let (a, b) = (sb.path().join("a.html"), sb.path().join("b.html"));
    let first = report(&sb, &tpl, &a, &[]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(first, report(&sb, &tpl, &b, &[]), "no clock in the page");
    let latest = sb.rows("SELECT max(finished_at) FROM runs")[0][0].clone();
    assert!(
        first.contains(&latest[..19]),
        "the heading names the latest change {latest}"
    );
}

#[test]
fn interval_and_select_narrow_the_page() {
    let sb = Sandbox::new();
    let tpl = story(&sb);
    let file = sb.path().join("narrow.html");
    let page = report(
        &sb,
        &tpl,
        &file,
        &[
            "--interval",
            "2026-01-05..2026-01-07",
            "--select",
            "daily_amount_bands",
        ],
    );
    assert!(
        !page.contains("data-model=\"daily_revenue\""),
        "--select leaves the other model out"
    );
    let shown = cells(&page, "daily_amount_bands");
    let keys: Vec<&String> = shown.keys().collect();
    assert_eq!(keys, ["2026-01-05", "2026-01-06", "2026-01-07"]);
    assert_eq!(
        shown,
        status_states(
            &sb,
            &tpl,
            &[
                "--select",
                "daily_amount_bands",
                "--interval",
                "2026-01-05..2026-01-07"
            ]
        )
    );
    // The reserve (01-11..01-12) does not meet the interval; the run that built it does.
    let listed = ids(table(&page, "id=run-list"), "run");
    let reserve = sb.last_run_id();
    assert!(
        !listed.contains(&reserve) && !listed.is_empty(),
        "{listed:?}"
    );
}

#[test]
fn bad_input_writes_nothing() {
    let sb = Sandbox::new();
    let tpl = story(&sb);
    let nowhere = sb.path().join("no-such-folder/report.html");
    let run = sb.expect(
        2,
        &[
            "--templates",
            &tpl,
            "report",
            "--html",
            nowhere.to_str().unwrap(),
        ],
    );
    assert!(run.stderr.contains("no-such-folder"), "{}", run.stderr);
    let file = sb.path().join("report.html");
    let run = sb.expect(
        2,
        &[
            "--templates",
            &tpl,
            "report",
            "--html",
            file.to_str().unwrap(),
            "--interval",
            "2026-01-09..2026-01-02",
        ],
    );
    assert!(
        run.stderr.contains("--interval") || run.stderr.contains("2026-01-09"),
        "{}",
        run.stderr
    );
    let run = sb.expect(
        2,
        &[
            "--templates",
            &tpl,
            "report",
            "--html",
            file.to_str().unwrap(),
            "--select",
            "nope",
        ],
    );
    assert!(run.stderr.contains("nope"), "{}", run.stderr);
    let folder = sb.path().to_str().unwrap();
    sb.expect(2, &["--templates", &tpl, "report", "--html", folder]);
    assert!(!file.exists() && !nowhere.exists());
    let left: Vec<PathBuf> = std::fs::read_dir(sb.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".html"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

const CHROMIUM: &str = "/usr/bin/chromium";

/// Runs headless Chromium on the page with `extra` flags, a new profile, no network
/// services; returns its stdout and stderr.
fn chromium(page: &Path, profile: &Path, extra: &[&str]) -> (String, String) {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`); \
         .ci/run installs it when missing"
    );
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The console messages in Chromium's log (a blocked load is one: the page's
/// Content-Security-Policy allows nothing but its inline style).
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("CONSOLE")).collect()
}

#[test]
fn chromium_opens_the_page_offline_without_a_console_error() {
    if sqlite_only("one browser check is enough; the page is the same markup") {
        return;
    }
    let sb = Sandbox::new();
    let tpl = story(&sb);
    let file = sb.path().join("report.html");
    let page = report(&sb, &tpl, &file, &[]);
    let (dom, log) = chromium(&file, &sb.path().join("profile-dom"), &["--dump-dom"]);
    assert!(
        console_lines(&log).is_empty(),
        "console: {:?}",
        console_lines(&log)
    );
    assert!(
        dom.contains("data-model=\"daily_revenue\"") && dom.contains("id=\"run-list\""),
        "rendered: {}",
        &dom[..dom.len().min(500)]
    );
    let shot = sb.path().join("report.png");
    let (_, log) = chromium(
        &file,
        &sb.path().join("profile-shot"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,900",
        ],
    );
    assert!(
        console_lines(&log).is_empty(),
        "console: {:?}",
        console_lines(&log)
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.len() > 1000 && png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} bytes",
        png.len()
    );
    // The check can fail: the same page with one external image logs the blocked load.
    let bad = sb.path().join("bad.html");
    std::fs::write(
        &bad,
        page.replace(
            "</body>",
            "<img src=\"http://127.0.0.1:9/x.png\" alt=x></body>",
        ),
    )
    .unwrap();
    let (_, log) = chromium(&bad, &sb.path().join("profile-bad"), &["--dump-dom"]);
    assert!(
        !console_lines(&log).is_empty(),
        "a blocked load is a console message:\n{log}"
    );
}

/// A model with a running total and a count of days beside a day's revenue: only revenue
/// adds up (pipeline/measures.rs decides by name, the header having no `-- additive:`).
const RUNNING: &str = "\
-- name: running_revenue
-- version: 1
-- key: ds
-- values: revenue, cumulative_revenue, days_with_orders
-- create: CREATE TABLE running_revenue (ds DATE NOT NULL PRIMARY KEY, revenue BIGINT NOT NULL,
--     cumulative_revenue BIGINT NOT NULL, days_with_orders BIGINT NOT NULL,
--     run_id BIGINT NOT NULL)
--
-- A day's revenue, the running total up to it, and how many days had orders so far.
SELECT {{ ds }} AS ds,
       (SELECT coalesce(sum(o.amount), 0) FROM orders_latest AS o
        WHERE o.order_date = {{ ds }}) AS revenue,
       (SELECT coalesce(sum(o.amount), 0) FROM orders_latest AS o
        WHERE o.order_date <= {{ ds }}) AS cumulative_revenue,
       (SELECT count(DISTINCT o.order_date) FROM orders_latest AS o
        WHERE o.order_date <= {{ ds }}) AS days_with_orders
";

/// The value cells of the row that starts with `row` in `table`: column -> raw value.
fn row_values(table: &str, row: &str) -> BTreeMap<String, String> {
    let at = table
        .find(row)
        .unwrap_or_else(|| panic!("no {row} in {table}"));
    let line = table[at..].split("</tr>").next().unwrap();
    let re = Regex::new(r#"data-col=(\w+) data-v=([^ >]*)>"#).unwrap();
    re.captures_iter(line)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// The Monday of a date's ISO week.
fn monday(ds: &str) -> String {
    use chrono::Datelike;
    let d = chrono::NaiveDate::parse_from_str(ds, "%Y-%m-%d").unwrap();
    (d - chrono::Duration::days(i64::from(d.weekday().num_days_from_monday())))
        .format("%Y-%m-%d")
        .to_string()
}

/// 2026-01-01..2026-01-20 with orders on most dates (refunds among them) over three
/// models; 01-05..01-07 sealed, then a late order on 01-06 applied. Returns the templates
/// and every order, late one included.
fn numbers_story(sb: &Sandbox) -> (String, Vec<OrderRow>) {
    let mut rows: Vec<OrderRow> = (0..45i64)
        .filter(|i| i % 7 != 3)
        .map(|i| {
            let amount = (i * 7919 % 400_000) - if i % 9 == 0 { 450_000 } else { 0 };
            order(&format!("n{i}"), &day("2026-01-01", i * 13 % 20), amount)
        })
        .collect();
    sb.insert_orders(&rows);
    let dir = copy_templates(sb);
    std::fs::write(dir.join("models/daily_amount_bands.sql"), BANDS).unwrap();
    std::fs::write(dir.join("models/running_revenue.sql"), RUNNING).unwrap();
    let tpl = dir.to_str().unwrap().to_string();
    let t = tpl.as_str();
    sb.ok(&[
        "--templates",
        t,
        "apply",
        "--interval",
        "2026-01-01..2026-01-20",
    ]);
    let seal = [
        "seal",
        "--interval",
        "2026-01-05..2026-01-07",
        "--reason",
        "week 2",
    ];
    sb.ok(&[&["--templates", t][..], &seal[..]].concat());
    let late = OrderRow {
        created_at: "2026-02-01 00:00:00".into(),
        ..order("late-1", "2026-01-06", 777)
    };
    sb.insert_orders(std::slice::from_ref(&late));
    sb.ok(&["--templates", t, "apply", "--interval", "2026-01-06"]);
    rows.push(late);
    (tpl, rows)
}

#[test]
fn the_page_shows_numbers_per_date_and_week_and_sent_vs_now() {
    let sb = Sandbox::new();
    let (tpl, orders) = numbers_story(&sb);
    let page = report(&sb, &tpl, &sb.path().join("numbers.html"), &[]);
    // An independent computation: revenue and order count per date and per ISO week.
    let mut per_date: BTreeMap<String, (i64, i64)> =
        (0..20).map(|i| (day("2026-01-01", i), (0, 0))).collect();
    for o in &orders {
        let e = per_date.get_mut(&o.order_date).unwrap();
        *e = (e.0 + o.amount, e.1 + 1);
    }
    let mut per_week: BTreeMap<String, (i64, i64, i64)> = BTreeMap::new();
    for (ds, (revenue, count)) in &per_date {
        let e = per_week.entry(monday(ds)).or_default();
        *e = (e.0 + revenue, e.1 + count, e.2 + 1);
    }
    for model in ["daily_revenue", "daily_amount_bands"] {
        let dates = table(&page, &format!("id=\"dates-{model}\""));
        for (ds, (revenue, count)) in &per_date {
            let row = row_values(dates, &format!("<tr data-ds={ds}>"));
            assert_eq!(row["now_revenue"], revenue.to_string(), "{model} {ds}");
            assert_eq!(row["now_order_count"], count.to_string(), "{model} {ds}");
        }
        let weeks = table(&page, &format!("id=\"weeks-{model}\""));
        assert_eq!(
            ids_of_weeks(weeks),
            per_week.keys().cloned().collect::<Vec<_>>()
        );
        for (week, (revenue, count, days)) in &per_week {
            let row = row_values(weeks, &format!("<tr data-week={week}>"));
            assert_eq!(row["now_revenue"], revenue.to_string(), "{model} {week}");
            assert_eq!(row["now_order_count"], count.to_string(), "{model} {week}");
            let line = &weeks[weeks.find(&format!("data-week={week}>")).unwrap()..];
            assert!(
                line.contains(&format!("<td>{days}</td>")),
                "{week}: {days} dates"
            );
        }
        assert!(
            page.contains(&format!("<svg id=\"trend-{model}\" data-points=20 "))
                && table(&page, &format!("id=\"numbers-{model}\"")).contains("<polyline"),
            "{model}: a trend of 20 dates"
        );
    }
    // Sent vs now on the sealed date that got a late order; the other sealed dates stand.
    let dates = table(&page, "id=\"dates-daily_revenue\"");
    let (revenue, count) = per_date["2026-01-06"];
    let sealed = row_values(dates, "<tr data-ds=2026-01-06>");
    assert_eq!(sealed["sent_revenue"], (revenue - 777).to_string());
    assert_eq!(sealed["sent_order_count"], (count - 1).to_string());
    assert_eq!(sealed["now_revenue"], revenue.to_string());
    let line = &dates[dates.find("<tr data-ds=2026-01-06>").unwrap()..];
    assert!(
        line.split("</tr>")
            .next()
            .unwrap()
            .contains("changed: revenue +777, order_count +1"),
        "{line}"
    );
    for ds in ["2026-01-05", "2026-01-07"] {
        let line = &dates[dates.find(&format!("<tr data-ds={ds}>")).unwrap()..];
        assert!(
            line.split("</tr>")
                .next()
                .unwrap()
                .contains("<td>unchanged</td>"),
            "{ds}"
        );
    }
    let not_sealed = row_values(dates, "<tr data-ds=2026-01-10>");
    assert_eq!(not_sealed["sent_revenue"], "null");
}

/// The `data-week` of each row of a weeks table, in order.
fn ids_of_weeks(table: &str) -> Vec<String> {
    let re = Regex::new(r"<tr data-week=([\d-]+)>").unwrap();
    re.captures_iter(table).map(|c| c[1].to_string()).collect()
}

#[test]
fn a_running_total_or_a_count_of_days_is_never_summed() {
    let sb = Sandbox::new();
    let (tpl, orders) = numbers_story(&sb);
    let page = report(&sb, &tpl, &sb.path().join("running.html"), &[]);
    let weeks = table(&page, "id=\"weeks-running_revenue\"");
    assert!(
        weeks.contains("Not summed, they do not add up: cumulative_revenue, days_with_orders"),
        "{weeks}"
    );
    assert!(weeks.contains("data-col=now_revenue "));
    assert!(!weeks.contains("now_cumulative_revenue") && !weeks.contains("now_days_with_orders"));
    // Per date, each its own value: the running total as the model computed it.
    let dates = table(&page, "id=\"dates-running_revenue\"");
    // The late order was applied to 01-06 only: the later dates keep their running total.
    let (on_time, late): (Vec<&OrderRow>, Vec<&OrderRow>) =
        orders.iter().partition(|o| o.order_id != "late-1");
    let mut running = 0;
    for i in 0..20 {
        let ds = day("2026-01-01", i);
        running += on_time
            .iter()
            .filter(|o| o.order_date == ds)
            .map(|o| o.amount)
            .sum::<i64>();
        let with_late = if ds == "2026-01-06" {
            late[0].amount
        } else {
            0
        };
        let row = row_values(dates, &format!("<tr data-ds={ds}>"));
        assert_eq!(
            row["now_cumulative_revenue"],
            (running + with_late).to_string(),
            "{ds}"
        );
    }
    // The corrections' totals: revenue adds up, the running total and the day count do not.
    let corrections = table(&page, "id=\"corrections-running_revenue\"");
    let foot = &corrections[corrections.find("<tfoot>").unwrap()..];
    assert!(foot.contains("Total</th><td>revenue</td>"), "{foot}");
    for column in ["cumulative_revenue", "days_with_orders"] {
        assert!(
            !foot.contains(&format!("<td>{column}</td>")),
            "{column}: {foot}"
        );
    }
    for model in ["daily_revenue", "daily_amount_bands"] {
        let c = table(&page, &format!("id=\"corrections-{model}\""));
        assert!(c.contains("Total</th><td>revenue</td>"), "{model}");
    }
}

#[test]
fn took_reads_to_the_millisecond() {
    let sb = Sandbox::new();
    let (tpl, _) = numbers_story(&sb);
    let page = report(&sb, &tpl, &sb.path().join("took.html"), &[]);
    let listed = table(&page, "id=run-list");
    let took = Regex::new(r"^(\d{1,3} ms|\d+\.\d{3} s)$").unwrap();
    let runs = sb.rows("SELECT run_id, took_ms FROM runs ORDER BY run_id");
    assert_eq!(runs.len(), 2);
    for r in runs {
        let ms: i64 = r[1].parse().expect("took_ms recorded");
        let row = &listed[listed.find(&format!("<tr data-run={}>", r[0])).unwrap()..];
        let cells: Vec<&str> = row.split("</tr>").next().unwrap().split("<td>").collect();
        let shown = cells[8].split("</td>").next().unwrap();
        assert!(took.is_match(shown), "run {}: {shown}", r[0]);
        let want = match ms {
            ms if ms < 1000 => format!("{ms} ms"),
            ms => format!("{}.{:03} s", ms / 1000, ms % 1000),
        };
        assert_eq!(shown, want, "run {}", r[0]);
    }
}
