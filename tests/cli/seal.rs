//! Seals and corrections: a sealed date keeps its numbers as sent; late data becomes
//! correction rows; the views show what is true now and what went out.

use std::collections::BTreeMap;

use crate::support::*;

const START: &str = "2026-02-01";

type Daily = BTreeMap<String, (i64, i64)>;

/// Two weeks of orders (2026-02-01..2026-02-14), all computed.
fn computed_fortnight(seed: u64) -> (Sandbox, Orders) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, START, 14, true);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    assert_eq!(sb.daily(), orders.expected());
    (sb, orders)
}

fn seals(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows("SELECT ds, sealed_at, sealed_by, reason, revenue, order_count FROM seals ORDER BY ds")
}

fn corrections(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows(
        "SELECT correction_id, ds, revenue, order_count, previous_revenue, previous_order_count, run_id \
         FROM daily_revenue_corrections ORDER BY correction_id",
    )
}

fn run_statuses(sb: &Sandbox, run_id: i64) -> BTreeMap<String, String> {
    sb.rows(&format!(
        "SELECT ds, status FROM run_partitions WHERE run_id = {run_id}"
    ))
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

fn in_first_week(ds: &str) -> bool {
    ds <= "2026-02-07"
}

/// 1234567 -> "1,234,567", -1234 -> "-1,234".
fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

#[test]
fn late_orders_on_a_sealed_week_become_corrections() {
    let (sb, mut orders) = computed_fortnight(201);
    let sent: Daily = orders.expected();

    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-01..2026-02-07",
        "--reason",
        "weekly report to finance",
        "--by",
        "alice",
    ]);
    let sealed = seals(&sb);
    assert_eq!(sealed.len(), 7);
    for row in &sealed {
        let (rev, cnt) = sent[&row[0]];
        assert!(in_first_week(&row[0]), "{row:?}");
        assert_ne!(row[1], "NULL", "sealed_at is set");
        assert_eq!(
            row[2..].to_vec(),
            vec![
                "alice".to_string(),
                "weekly report to finance".into(),
                rev.to_string(),
                cnt.to_string()
            ],
            "the seal copies the values as sent"
        );
    }
    let daily_at_seal = sb.daily();

    // A late order on a sealed date.
    let late = orders.add("late-1", "2026-02-03", 77_777);
    sb.insert_orders(&[late]);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let first_run = sb.last_run_id();
    assert_eq!(
        sb.daily(),
        daily_at_seal,
        "daily_revenue keeps the values as sent"
    );
    assert_eq!(seals(&sb), sealed, "seals are unchanged");
    let (rev0, cnt0) = sent["2026-02-03"];
    let (rev1, cnt1) = orders.expected()["2026-02-03"];
    assert_eq!((rev1, cnt1), (rev0 + 77_777, cnt0 + 1));
    assert_eq!(
        corrections(&sb),
        vec![vec![
            "1".to_string(),
            "2026-02-03".into(),
            rev1.to_string(),
            cnt1.to_string(),
            rev0.to_string(),
            cnt0.to_string(),
            first_run.to_string()
        ]],
        "exactly one correction, superseding the sealed values"
    );
    for (ds, status) in run_statuses(&sb, first_run) {
        let want = match ds.as_str() {
            "2026-02-03" => "corrected",
            d if in_first_week(d) => "unchanged",
            _ => "success",
        };
        assert_eq!(status, want, "{ds}");
    }
    assert_eq!(run_statuses(&sb, first_run).len(), 14);

    // The same late data again: no new correction.
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let again = sb.last_run_id();
    assert_eq!(
        corrections(&sb).len(),
        1,
        "re-applying writes no new correction"
    );
    assert_eq!(run_statuses(&sb, again)["2026-02-03"], "unchanged");
    sb.ok(&["apply", "--interval", "2026-02-03"]);
    assert_eq!(corrections(&sb).len(), 1);

    // A second late change on that date (the late order amended) supersedes the first.
    let amended = orders.add("late-1", "2026-02-03", 100_000);
    sb.insert_orders(&[amended]);
    sb.ok(&["apply", "--interval", "2026-02-01..2026-02-07"]);
    let second_run = sb.last_run_id();
    let (rev2, cnt2) = orders.expected()["2026-02-03"];
    assert_eq!((rev2, cnt2), (rev0 + 100_000, cnt0 + 1));
    let all = corrections(&sb);
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[1][1..].to_vec(),
        vec![
            "2026-02-03".to_string(),
            rev2.to_string(),
            cnt2.to_string(),
            rev1.to_string(),
            cnt1.to_string(),
            second_run.to_string()
        ],
        "previous_* are the first correction's values"
    );
    assert_eq!(sb.daily(), daily_at_seal, "still as sent");
    assert_eq!(seals(&sb), sealed);

    // The views: what is true now, and what went out.
    let now = orders.expected();
    assert_eq!(
        sb.current(),
        now,
        "daily_revenue_current applies the corrections"
    );
    let flags = sb.rows("SELECT ds, corrected FROM daily_revenue_current ORDER BY ds");
    for f in &flags {
        let want = if f[0] == "2026-02-03" { "1" } else { "0" };
        assert_eq!(f[1], want, "corrected flag of {}", f[0]);
    }
    assert_eq!(
        sb.cumulative(),
        running(&now),
        "cumulative_revenue runs over _current"
    );
    let as_sent: Vec<(String, i64, i64)> = sb
        .rows("SELECT ds, revenue, cumulative_revenue FROM cumulative_revenue_as_sent ORDER BY ds")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap(), r[2].parse().unwrap()))
        .collect();
    assert_eq!(
        as_sent,
        running(&sb.daily()),
        "cumulative_revenue_as_sent runs over daily_revenue"
    );
    assert_ne!(as_sent, sb.cumulative());

    // `corrections`: sent, current and the difference.
    let json = sb.ok(&["--json", "corrections"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let list = v["daily_revenue"].as_array().expect("per model");
    assert_eq!(list.len(), 2);
    let latest = &list[1];
    assert_eq!(latest["sent_revenue"].as_i64(), Some(rev0), "{latest}");
    assert_eq!(latest["sent_order_count"].as_i64(), Some(cnt0), "{latest}");
    assert_eq!(latest["previous_revenue"].as_i64(), Some(rev1), "{latest}");
    assert_eq!(latest["now_revenue"].as_i64(), Some(rev2), "{latest}");
    assert_eq!(latest["now_order_count"].as_i64(), Some(cnt2), "{latest}");
    let text = sb.ok(&["corrections"]);
    let line = text
        .stdout
        .lines()
        .find(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.len() > 2 && cols[0] == "2" && cols[1] == "2026-02-03" && cols[2] == "revenue"
        })
        .unwrap_or_else(|| panic!("a line for correction 2's revenue:\n{}", text.stdout));
    for want in [
        thousands(rev0),
        thousands(rev2),
        format!("+{}", thousands(rev2 - rev0)),
    ] {
        assert!(line.contains(&want), "{want} in {line:?}");
    }

    // `status --json`: sealed dates and correction counts.
    let json = sb.ok(&["--json", "status", "--interval", "2026-02-01..2026-02-14"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    // The ranges are the calendar's cells: the corrected date is under `corrected`.
    assert_eq!(
        v["ranges"]["sealed"],
        serde_json::json!(["2026-02-01..2026-02-02", "2026-02-04..2026-02-07"])
    );
    assert_eq!(v["ranges"]["corrected"], serde_json::json!(["2026-02-03"]));
    let dates = v["dates"].as_array().expect("per date");
    assert_eq!(dates.len(), 14);
    for d in dates {
        let ds = d["ds"].as_str().unwrap();
        assert_eq!(d["sealed"].as_bool(), Some(in_first_week(ds)), "{d}");
        assert_eq!(d["sealed_by"].as_str().is_some(), in_first_week(ds), "{d}");
        let n = if ds == "2026-02-03" { 2 } else { 0 };
        assert_eq!(d["corrections"].as_i64(), Some(n), "{d}");
    }
}

#[test]
fn an_order_moved_off_a_sealed_date_corrects_both_ways() {
    let (sb, mut orders) = computed_fortnight(202);
    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-01..2026-02-07",
        "--reason",
        "week 1",
    ]);
    let sent = sb.daily();
    // Move the winning version of some order from a sealed date to an unsealed one.
    let (id, from) = orders
        .latest()
        .into_iter()
        .find(|(_, r)| r.order_date.as_str() == "2026-02-02")
        .map(|(id, r)| (id, r.order_date))
        .expect("an order on 2026-02-02");
    let moved = orders.add(&id, "2026-02-10", 5_000);
    sb.insert_orders(&[moved]);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let now = orders.expected();
    assert_eq!(sb.current(), now);
    assert_eq!(
        sb.daily()[&from],
        sent[&from],
        "the sealed date keeps its row as sent"
    );
    assert_eq!(
        sb.daily()["2026-02-10"],
        now["2026-02-10"],
        "an unsealed date is replaced"
    );
    assert_eq!(
        sb.rows("SELECT ds, order_count, previous_order_count FROM daily_revenue_corrections"),
        vec![vec![
            from.clone(),
            now[&from].1.to_string(),
            sent[&from].1.to_string()
        ]]
    );
    assert_eq!(sb.cumulative(), running(&now));
}

#[test]
fn a_seal_over_uncomputed_dates_seals_nothing() {
    let sb = Sandbox::new();
    let orders = Orders::new(203, START, 14, true);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", "2026-02-01..2026-02-05"]);
    let before = snapshot(&sb);
    let run = sb.expect(
        2,
        &[
            "seal",
            "--interval",
            "2026-02-01..2026-02-07",
            "--reason",
            "week 1",
        ],
    );
    assert!(
        run.stderr.contains("2026-02-06"),
        "the refusal names the uncomputed dates:\n{}",
        run.stderr
    );
    assert_eq!(snapshot(&sb), before, "nothing sealed, nothing written");
    assert_eq!(sb.count("SELECT count(*) FROM seals"), 0);
}

#[test]
fn a_seal_over_a_held_date_seals_nothing_until_it_is_free() {
    let (sb, _orders) = computed_fortnight(204);
    let rid: i64 = sb
        .ok(&["reserve", "--interval", "2026-02-05"])
        .stdout
        .trim()
        .parse()
        .unwrap();
    let before = snapshot(&sb);
    let run = sb.expect(
        2,
        &[
            "seal",
            "--interval",
            "2026-02-01..2026-02-07",
            "--reason",
            "week 1",
        ],
    );
    assert!(
        run.stderr.contains("2026-02-05") && run.stderr.contains(&format!("run {rid}")),
        "the refusal names the held date and its holder:\n{}",
        run.stderr
    );
    assert_eq!(snapshot(&sb), before, "nothing sealed, nothing written");

    sb.ok(&["release", &rid.to_string()]);
    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-01..2026-02-07",
        "--reason",
        "week 1",
    ]);
    assert_eq!(sb.count("SELECT count(*) FROM seals"), 7);
}

#[test]
fn sealing_sealed_dates_again_changes_nothing() {
    let (sb, _orders) = computed_fortnight(205);
    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-01..2026-02-03",
        "--reason",
        "first",
        "--by",
        "alice",
    ]);
    let first = seals(&sb);
    assert_eq!(first.len(), 3);
    // A later second would show if sealed_at were rewritten.
    std::thread::sleep(std::time::Duration::from_millis(1100));

    let same = sb.ok(&[
        "seal",
        "--interval",
        "2026-02-01..2026-02-03",
        "--reason",
        "again",
        "--by",
        "bob",
    ]);
    assert_eq!(seals(&sb), first, "sealed dates stay as they were");
    assert!(
        same.stdout.contains("already sealed") || same.stderr.contains("already sealed"),
        "it says so:\n{}{}",
        same.stdout,
        same.stderr
    );

    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-01..2026-02-05",
        "--reason",
        "wider",
        "--by",
        "bob",
    ]);
    let after = seals(&sb);
    assert_eq!(after.len(), 5);
    assert_eq!(after[..3].to_vec(), first, "the first three untouched");
    for row in &after[3..] {
        assert_eq!(
            (row[2].as_str(), row[3].as_str()),
            ("bob", "wider"),
            "{row:?}"
        );
    }
}

#[test]
fn odd_names_and_reasons_are_stored_exactly() {
    let (sb, _orders) = computed_fortnight(206);
    let by = "O'Brien \"ob\"; 김철수";
    let reason = "x'); DROP TABLE orders; -- 주간 보고서 '재무팀' \"final\"; 2월";
    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-01..2026-02-02",
        "--reason",
        reason,
        "--by",
        by,
    ]);
    assert_eq!(
        sb.rows("SELECT DISTINCT sealed_by, reason FROM seals"),
        vec![vec![by, reason]]
    );
    assert!(
        sb.count("SELECT count(*) FROM orders") > 0,
        "orders still exists"
    );

    sb.ok(&[
        "apply",
        "--interval",
        "2026-02-03",
        "--by",
        by,
        "--reason",
        reason,
    ]);
    let run = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT requested_by, reason FROM runs WHERE run_id = {run}"
        )),
        vec![vec![by, reason]]
    );

    let json = sb.ok(&["--json", "status", "--interval", "2026-02-01"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(v["dates"][0]["sealed_by"].as_str(), Some(by));
}

#[test]
fn an_empty_reason_is_refused() {
    let (sb, _orders) = computed_fortnight(207);
    let before = snapshot(&sb);
    sb.expect(2, &["seal", "--interval", "2026-02-01", "--reason", "  "]);
    sb.expect(2, &["seal", "--interval", "2026-02-01"]);
    sb.expect(2, &["seal", "--interval", "2026-02-30", "--reason", "x"]);
    assert_eq!(snapshot(&sb), before);
}
