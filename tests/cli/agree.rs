//! The date rule is one SQL template (system/date_states.sql): on a story with a date in
//! each state, `status --json`, the calendar of `status` and `apply --dry-run --json` say
//! the same of every date, and what they say is what the story made.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::golden::{order, orders, BANDS, TINY};
use crate::support::*;
use crate::templates::copy_templates;

/// What the story makes of each date: (date, calendar state, plan action, plan reason).
const EXPECTED: &[(&str, &str, &str, Option<&str>)] = &[
    ("2026-01-01", "computed", "recompute", Some("current")),
    (
        "2026-01-02",
        "sealed",
        "correct_if_changed",
        Some("current"),
    ),
    (
        "2026-01-03",
        "corrected",
        "correct_if_changed",
        Some("current"),
    ),
    ("2026-01-04", "changed", "recompute", Some("changed")),
    ("2026-01-05", "failed", "recompute", Some("failed")),
    ("2026-01-06", "stale", "recompute", Some("stale")),
    ("2026-01-07", "stale", "recompute", Some("stale")),
    ("2026-01-08", "held", "skip_held", None),
    ("2026-01-09", "stale", "recompute", Some("stale")),
    ("2026-01-10", "stale", "recompute", Some("stale")),
    ("2026-01-11", "missing", "compute", Some("missing")),
    ("2026-01-12", "missing", "compute", Some("missing")),
];

const SPAN: &str = "2026-01-01..2026-01-12";

/// Computed (both models), sealed, corrected, changed (late data not applied), failed,
/// stale for one model only (daily_amount_bands v2 rebuilt on 01-01..01-04 alone), held,
/// missing; order_signs built every computed date and was retired.
fn story(sb: &Sandbox) -> String {
    let tpl = copy_templates(sb);
    std::fs::write(tpl.join("models/daily_amount_bands.sql"), BANDS).unwrap();
    std::fs::write(tpl.join("models/order_signs.sql"), TINY).unwrap();
    let t = tpl.to_str().unwrap().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["--templates", t.as_str()];
        all.extend_from_slice(args);
        all.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let ok = |args: &[&str]| {
        let all = run(args);
        sb.ok(&all.iter().map(String::as_str).collect::<Vec<_>>())
    };
    sb.insert_orders(&orders("o", "2026-01-01", 12));
    ok(&["apply", "--interval", "2026-01-01..2026-01-10"]);
    std::fs::remove_file(tpl.join("models/order_signs.sql")).unwrap();
    ok(&["retire", "order_signs", "--reason", "unused", "--by", "dba"]);
    let v2 = BANDS
        .replace("version: 1", "version: 2")
        .replace("< 1500", "< 1600");
    std::fs::write(tpl.join("models/daily_amount_bands.sql"), v2).unwrap();
    ok(&[
        "apply",
        "--interval",
        "2026-01-01..2026-01-04",
        "--select",
        "daily_amount_bands",
    ]);
    ok(&[
        "seal",
        "--interval",
        "2026-01-02..2026-01-03",
        "--reason",
        "sent",
    ]);
    sb.insert_orders(&[order("late-3", "2026-01-03", 900)]);
    ok(&["apply", "--interval", "2026-01-03"]);
    sb.insert_orders(&[order("late-4", "2026-01-04", 800)]);
    sb.fail_inserts("daily_revenue", "2026-01-05", When::Before);
    let failed = run(&["apply", "--interval", "2026-01-05"]);
    sb.expect(1, &failed.iter().map(String::as_str).collect::<Vec<_>>());
    sb.stop_failing("daily_revenue");
    ok(&["reserve", "--interval", "2026-01-08", "--by", "planner"]);
    t
}

fn json(sb: &Sandbox, t: &str, args: &[&str]) -> Value {
    let mut all = vec!["--templates", t, "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&sb.ok(&all).stdout).unwrap()
}

/// The calendar's cell of each date of January 2026, by its glyph.
fn calendar_cells(text: &str) -> BTreeMap<String, &'static str> {
    let row = text
        .lines()
        .find(|l| l.starts_with("2026-01  "))
        .unwrap_or_else(|| panic!("no calendar row in:\n{text}"));
    row[9..]
        .split(' ')
        .enumerate()
        .map(|(i, glyph)| {
            let state = match glyph {
                "#" => "computed",
                "S" => "sealed",
                "C" => "corrected",
                "!" => "changed",
                "~" => "stale",
                "." => "missing",
                "X" => "failed",
                "H" => "held",
                other => panic!("unknown glyph {other:?} in {row:?}"),
            };
            (format!("2026-01-{:02}", i + 1), state)
        })
        .collect()
}

#[test]
fn status_calendar_and_plan_agree_on_every_date() {
    let sb = Sandbox::new();
    let t = story(&sb);
    let status = json(&sb, &t, &["status", "--interval", SPAN]);
    let plan = json(&sb, &t, &["apply", "--dry-run", "--interval", SPAN]);
    let text = sb
        .ok(&["--templates", &t, "status", "--interval", SPAN])
        .stdout;
    let cells = calendar_cells(&text);
    let dates = status["dates"].as_array().unwrap();
    let steps = plan["plan"].as_array().unwrap();
    assert_eq!(dates.len(), EXPECTED.len());
    assert_eq!(steps.len(), EXPECTED.len());
    for (i, (ds, state, action, reason)) in EXPECTED.iter().enumerate() {
        let (d, s) = (&dates[i], &steps[i]);
        assert_eq!(d["ds"], *ds);
        assert_eq!(s["ds"], *ds);
        assert_eq!(d["calendar"], *state, "status --json calendar of {ds}");
        assert_eq!(d["state_name"], *state, "status --json state_name of {ds}");
        assert_eq!(cells[*ds], *state, "the calendar's cell of {ds}:\n{text}");
        assert_eq!(s["action"], *action, "dry-run action of {ds}");
        assert_eq!(s["reason"].as_str(), *reason, "dry-run reason of {ds}");
        // The retired model counts on no date.
        let models = d["models"].as_object().unwrap();
        assert!(!models.contains_key("order_signs"), "{ds}: {models:?}");
    }
    // Stale for one model only: the bands, rebuilt on 01-01..01-04 alone.
    let models = |i: usize| dates[i]["models"].clone();
    assert_eq!(
        models(5),
        serde_json::json!({"daily_amount_bands": "stale", "daily_revenue": "current"})
    );
    assert_eq!(
        models(0),
        serde_json::json!({"daily_amount_bands": "current", "daily_revenue": "current"})
    );
    assert_eq!(models(4)["daily_revenue"], "failed");
    assert!(dates[7]["held_by"].as_i64().is_some());
    // The summary counts the cells.
    for (state, n) in [("stale", 4), ("missing", 2), ("held", 1), ("sealed", 1)] {
        assert_eq!(status["counts"][state], n, "{state}: {}", status["counts"]);
    }
}

#[test]
fn only_selects_what_status_says() {
    let sb = Sandbox::new();
    let t = story(&sb);
    let selected = |only: &str| -> Vec<String> {
        let plan = json(
            &sb,
            &t,
            &["apply", "--dry-run", "--interval", SPAN, "--only", only],
        );
        plan["plan"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["action"] != "not_selected")
            .map(|s| s["ds"].as_str().unwrap()[8..].to_string())
            .collect()
    };
    assert_eq!(selected("missing"), ["11", "12"]);
    assert_eq!(selected("failed"), ["05"]);
    assert_eq!(selected("changed"), ["04"]);
    // Stale: a model in scope built by another version (the held date too: it is skipped).
    assert_eq!(selected("stale"), ["05", "06", "07", "08", "09", "10"]);
    let status = json(&sb, &t, &["status", "--interval", SPAN]);
    let stale: Vec<String> = status["dates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["stale"] == true)
        .map(|d| d["ds"].as_str().unwrap()[8..].to_string())
        .collect();
    assert_eq!(stale, selected("stale"));
}
