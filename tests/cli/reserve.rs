//! Reservations: `sqlrun reserve`, skips of held dates, `apply --run`, `release`, lease
//! expiry and reclaim, `--dry-run` and `status` naming the holder.

use crate::support::*;

const START: &str = "2026-03-01";

/// A database with ten days of orders (2026-03-01..2026-03-10), nothing computed yet.
fn ten_days(seed: u64) -> (Sandbox, Orders) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, START, 10, true);
    sb.insert_orders(&orders.rows);
    (sb, orders)
}

/// `sqlrun reserve ...`: asserts the exit code and that stdout is the new run id alone.
fn reserve(sb: &Sandbox, code: i32, args: &[&str]) -> i64 {
    let mut full = vec!["reserve"];
    full.extend_from_slice(args);
    let run = sb.expect(code, &full);
    let id: i64 = run
        .stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("reserve printed {:?}, not a run id alone", run.stdout));
    assert_eq!(
        run.stdout.trim_end_matches('\n'),
        id.to_string(),
        "stdout is the id alone"
    );
    assert_eq!(id, sb.last_run_id());
    id
}

fn status_of(sb: &Sandbox, run_id: i64) -> String {
    sb.rows(&format!("SELECT status FROM runs WHERE run_id = {run_id}"))[0][0].clone()
}

/// run_partitions of a run as (ds, status, held_by), by date.
fn partitions(sb: &Sandbox, run_id: i64) -> Vec<(String, String, String)> {
    sb.rows(&format!(
        "SELECT ds, status, held_by FROM run_partitions WHERE run_id = {run_id} ORDER BY ds"
    ))
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
    .collect()
}

fn held(sb: &Sandbox) -> Vec<(String, i64)> {
    sb.rows("SELECT ds, run_id FROM reservations ORDER BY ds")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect()
}

/// The expected numbers of some dates only.
fn only(
    expected: &std::collections::BTreeMap<String, (i64, i64)>,
    keep: impl Fn(&str) -> bool,
) -> std::collections::BTreeMap<String, (i64, i64)> {
    expected
        .iter()
        .filter(|(ds, _)| keep(ds))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

#[test]
fn a_reserved_interval_is_skipped_then_carried_out_by_apply_run() {
    let (sb, orders) = ten_days(101);
    let expected = orders.expected();

    let rid = reserve(
        &sb,
        0,
        &[
            "--interval",
            "2026-03-04..2026-03-05",
            "--by",
            "planner",
            "--reason",
            "re-run after the currency fix",
        ],
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, interval_start, interval_end, requested_by, reason, status FROM runs WHERE run_id = {rid}"
        )),
        vec![vec![
            "backfill",
            "2026-03-04",
            "2026-03-05",
            "planner",
            "re-run after the currency fix",
            "reserved"
        ]]
    );
    assert_eq!(
        sb.rows("SELECT ds, run_id, expires_at FROM reservations ORDER BY ds"),
        vec![
            vec!["2026-03-04".to_string(), rid.to_string(), "NULL".into()],
            vec!["2026-03-05".to_string(), rid.to_string(), "NULL".into()],
        ],
        "reserve without --for holds with no expiry"
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue"),
        0,
        "reserve computes nothing"
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {rid}"
        )),
        0
    );

    // The regular run for 2026-03-04 finds it held: skipped, exit 99, nothing written.
    let regular = sb.expect(99, &["apply", "--as-of", "2026-03-05"]);
    let reg = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, status FROM runs WHERE run_id = {reg}"
        )),
        vec![vec!["regular", "partial"]]
    );
    assert_eq!(
        partitions(&sb, reg),
        vec![("2026-03-04".into(), "skipped".into(), rid.to_string())]
    );
    assert!(
        regular
            .stderr
            .lines()
            .any(|l| l.contains("2026-03-04") && l.contains(&format!("run {rid}"))),
        "a stderr line names the skipped date and its holder:\n{}",
        regular.stderr
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue WHERE ds = '2026-03-04'"),
        0
    );

    // A wider backfill computes only the free dates.
    let wide = sb.expect(99, &["apply", "--interval", "2026-03-01..2026-03-10"]);
    let bf = sb.last_run_id();
    assert_eq!(status_of(&sb, bf), "partial");
    let parts = partitions(&sb, bf);
    assert_eq!(
        parts.len(),
        10,
        "one run_partitions row per requested date: {parts:?}"
    );
    for (ds, status, held_by) in &parts {
        if ds == "2026-03-04" || ds == "2026-03-05" {
            assert_eq!(
                (status.as_str(), held_by.clone()),
                ("skipped", rid.to_string()),
                "{ds}"
            );
        } else {
            assert_eq!(
                (status.as_str(), held_by.as_str()),
                ("success", "NULL"),
                "{ds}"
            );
        }
    }
    // Said when the dates are reserved, one line for the contiguous range (the summary at
    // the end says it again, as a range of the run's outcomes).
    let skip_lines: Vec<&str> = wide
        .stderr
        .lines()
        .filter(|l| l.starts_with("skipped ") && l.contains(&format!("run {rid}")))
        .collect();
    assert_eq!(
        skip_lines.len(),
        1,
        "one line for the contiguous skipped range:\n{}",
        wide.stderr
    );
    assert!(
        skip_lines[0].contains("2026-03-04") && skip_lines[0].contains("2026-03-05"),
        "{}",
        skip_lines[0]
    );
    assert_eq!(
        sb.daily(),
        only(&expected, |ds| ds != "2026-03-04" && ds != "2026-03-05"),
        "the held dates are not written, the free ones are right"
    );
    assert_eq!(
        held(&sb),
        vec![("2026-03-04".into(), rid), ("2026-03-05".into(), rid)],
        "the reservation is untouched"
    );

    // apply --run carries it out.
    sb.ok(&["apply", "--run", &rid.to_string()]);
    assert_eq!(status_of(&sb, rid), "success");
    assert_eq!(
        partitions(&sb, rid),
        vec![
            ("2026-03-04".into(), "success".into(), "NULL".into()),
            ("2026-03-05".into(), "success".into(), "NULL".into()),
        ]
    );
    assert!(held(&sb).is_empty(), "no reservation left");
    assert_eq!(sb.daily(), expected);
    assert_eq!(
        sb.rows(
            "SELECT run_id FROM daily_revenue WHERE ds IN ('2026-03-04', '2026-03-05') ORDER BY ds"
        ),
        vec![vec![rid.to_string()], vec![rid.to_string()]]
    );
    assert_eq!(sb.cumulative(), running(&expected));

    // A finished run can be neither carried out again nor released.
    let before = snapshot(&sb);
    let again = sb.expect(2, &["apply", "--run", &rid.to_string()]);
    assert!(again.stderr.contains(&rid.to_string()), "{}", again.stderr);
    sb.expect(2, &["release", &rid.to_string()]);
    assert_eq!(snapshot(&sb), before, "refused commands write nothing");
}

#[test]
fn release_frees_the_dates_and_marks_the_run_released() {
    let (sb, orders) = ten_days(102);
    let rid = reserve(
        &sb,
        0,
        &[
            "--interval",
            "2026-03-02..2026-03-04",
            "--reason",
            "planned",
        ],
    );
    assert_eq!(held(&sb).len(), 3);

    let out = sb.ok(&["release", &rid.to_string(), "--by", "ops"]);
    assert!(out.stdout.contains(&rid.to_string()), "{}", out.stdout);
    assert_eq!(status_of(&sb, rid), "released");
    assert!(held(&sb).is_empty(), "release frees every date");
    assert_eq!(
        sb.rows(&format!(
            "SELECT event, ds_start, ds_end, date_count FROM run_events WHERE run_id = {rid} AND event = 'released'"
        )),
        vec![vec!["released", "2026-03-02", "2026-03-04", "3"]],
        "the release is recorded"
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {rid}"
        )),
        0
    );

    // A released run can be neither carried out nor released again; an unknown run is exit 2.
    let before = snapshot(&sb);
    sb.expect(2, &["apply", "--run", &rid.to_string()]);
    sb.expect(2, &["release", &rid.to_string()]);
    sb.expect(2, &["release", "999"]);
    sb.expect(2, &["apply", "--run", "999"]);
    assert_eq!(snapshot(&sb), before, "refused commands write nothing");

    // The freed dates are free for anyone.
    sb.ok(&["apply", "--interval", "2026-03-01..2026-03-10"]);
    assert_eq!(sb.daily(), orders.expected());
    assert_eq!(status_of(&sb, rid), "released");
}

#[test]
fn a_reservation_overlapping_another_skips_the_held_dates() {
    let (sb, orders) = ten_days(103);
    let a = reserve(&sb, 0, &["--interval", "2026-03-01..2026-03-03"]);
    let run = sb.expect(99, &["reserve", "--interval", "2026-03-03..2026-03-05"]);
    let b: i64 = run
        .stdout
        .trim()
        .parse()
        .expect("the id alone on stdout, also with skips");
    assert_eq!(b, sb.last_run_id());
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("2026-03-03") && l.contains(&format!("run {a}"))),
        "{}",
        run.stderr
    );
    assert_eq!(
        partitions(&sb, b),
        vec![("2026-03-03".into(), "skipped".into(), a.to_string())]
    );
    assert_eq!(
        held(&sb),
        vec![
            ("2026-03-01".into(), a),
            ("2026-03-02".into(), a),
            ("2026-03-03".into(), a),
            ("2026-03-04".into(), b),
            ("2026-03-05".into(), b),
        ]
    );

    // b computes what it holds; the skip at reserve time makes it partial.
    sb.expect(99, &["apply", "--run", &b.to_string()]);
    assert_eq!(status_of(&sb, b), "partial");
    assert_eq!(
        partitions(&sb, b),
        vec![
            ("2026-03-03".into(), "skipped".into(), a.to_string()),
            ("2026-03-04".into(), "success".into(), "NULL".into()),
            ("2026-03-05".into(), "success".into(), "NULL".into()),
        ]
    );
    sb.ok(&["apply", "--run", &a.to_string()]);
    assert_eq!(status_of(&sb, a), "success");
    assert!(held(&sb).is_empty());
    let expected = orders.expected();
    assert_eq!(sb.daily(), only(&expected, |ds| ds <= "2026-03-05"));
}

#[test]
fn an_expired_reservation_is_reclaimed_by_the_next_apply() {
    let (sb, orders) = ten_days(104);
    let rid = reserve(
        &sb,
        0,
        &["--interval", "2026-03-03..2026-03-04", "--for", "1s"],
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM reservations WHERE run_id = {rid} AND expires_at IS NOT NULL"
        )),
        2,
        "--for sets expires_at"
    );
    std::thread::sleep(std::time::Duration::from_millis(2500));

    let run = sb.ok(&["apply", "--interval", "2026-03-01..2026-03-10"]);
    let me = sb.last_run_id();
    assert_eq!(status_of(&sb, me), "success");
    assert_eq!(
        status_of(&sb, rid),
        "interrupted",
        "the lapsed run is interrupted"
    );
    let events = sb.rows(
        "SELECT run_id, other_run_id, ds_start, ds_end, date_count, detail IS NOT NULL AND detail <> '' \
         FROM run_events WHERE event = 'reclaimed'",
    );
    assert_eq!(
        events,
        vec![vec![
            rid.to_string(),
            me.to_string(),
            "2026-03-03".into(),
            "2026-03-04".into(),
            "2".into(),
            "1".into()
        ]],
        "one reclaim, from the lapsed run, by the new one, with why"
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("reclaim") && l.contains(&format!("run {rid}"))),
        "the reclaim is reported:\n{}",
        run.stderr
    );
    assert_eq!(partitions(&sb, me).len(), 10);
    assert!(partitions(&sb, me).iter().all(|(_, s, _)| s == "success"));
    assert!(held(&sb).is_empty());
    assert_eq!(sb.daily(), orders.expected());
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {rid}"
        )),
        0
    );
}

#[test]
fn a_reservation_without_expiry_is_not_reclaimed() {
    let (sb, _orders) = ten_days(105);
    let rid = reserve(&sb, 0, &["--interval", "2026-03-03"]);
    std::thread::sleep(std::time::Duration::from_millis(1200));
    sb.expect(99, &["apply", "--interval", "2026-03-01..2026-03-05"]);
    assert_eq!(
        status_of(&sb, rid),
        "reserved",
        "no --for: held until apply --run or release"
    );
    assert_eq!(held(&sb), vec![("2026-03-03".into(), rid)]);
    assert_eq!(
        sb.count("SELECT count(*) FROM run_events WHERE event = 'reclaimed'"),
        0
    );
}

#[test]
fn dry_run_names_the_holder_of_skipped_dates_and_writes_nothing() {
    let (sb, _orders) = ten_days(106);
    sb.ok(&["apply", "--interval", "2026-03-01..2026-03-02"]);
    let rid = reserve(
        &sb,
        0,
        &["--interval", "2026-03-04..2026-03-05", "--by", "planner"],
    );
    let before = snapshot(&sb);

    let text = sb.ok(&["apply", "--interval", "2026-03-01..2026-03-06", "--dry-run"]);
    let line = |start: &str| {
        text.stdout
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no range starts at {start}:\n{}", text.stdout))
    };
    let skipped = line("2026-03-04..2026-03-05");
    assert!(
        skipped.contains("skip_held")
            && skipped.contains(&format!(
                "held by run {rid} (backfill, requested by planner"
            )),
        "2026-03-04..05 would be skipped, held by run {rid}:\n{}",
        text.stdout
    );
    for (start, action) in [
        ("2026-03-01..2026-03-02", "recompute"),
        ("2026-03-03 ", "compute"),
        ("2026-03-06 ", "compute"),
    ] {
        assert!(
            line(start).contains(&format!(" {action} ")),
            "{start} would {action}:\n{}",
            text.stdout
        );
    }

    let json = sb.ok(&[
        "--json",
        "apply",
        "--interval",
        "2026-03-01..2026-03-06",
        "--dry-run",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("--json prints JSON");
    let plan = v["plan"].as_array().expect("a plan");
    assert_eq!(plan.len(), 6);
    for step in plan {
        let ds = step["ds"].as_str().unwrap();
        let action = step["action"].as_str().unwrap();
        if ds == "2026-03-04" || ds == "2026-03-05" {
            assert_eq!(action, "skip_held", "{ds}");
            assert_eq!(step["held_by"], rid, "{ds}");
        } else {
            assert_ne!(action, "skip_held", "{ds}");
            assert!(step["held_by"].is_null(), "{ds}: {step}");
        }
    }

    // And for a reserved run: its own dates are computed, not skipped, and the plan may
    // name the run, which exists.
    let own = sb.ok(&["apply", "--run", &rid.to_string(), "--dry-run"]);
    assert!(
        own.stdout
            .starts_with(&format!("dry run of run {rid} (2026-03-04..2026-03-05)"))
            && own
                .stdout
                .lines()
                .any(|l| l.starts_with("2026-03-04..2026-03-05  compute ")),
        "{}",
        own.stdout
    );
    assert_eq!(snapshot(&sb), before, "--dry-run writes nothing");
}

#[test]
fn status_shows_who_holds_a_date() {
    let (sb, _orders) = ten_days(107);
    sb.ok(&["apply", "--interval", "2026-03-01..2026-03-10"]);
    let rid = reserve(
        &sb,
        0,
        &[
            "--interval",
            "2026-03-04..2026-03-05",
            "--by",
            "planner",
            "--reason",
            "fix",
        ],
    );

    let text = sb.ok(&["status", "--list", "--interval", "2026-03-03..2026-03-06"]);
    let line = |ds: &str| {
        text.stdout
            .lines()
            .find(|l| l.starts_with(ds))
            .unwrap_or_else(|| panic!("no line for {ds}:\n{}", text.stdout))
            .to_string()
    };
    for ds in ["2026-03-04", "2026-03-05"] {
        let l = line(ds);
        assert!(
            l.contains(&format!("run {rid}")) && l.contains("planner"),
            "{l}"
        );
    }
    for ds in ["2026-03-03", "2026-03-06"] {
        assert!(!line(ds).contains(&format!("run {rid}")), "{}", line(ds));
    }

    let json = sb.ok(&["--json", "status", "--interval", "2026-03-03..2026-03-06"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(
        v["ranges"]["held"],
        serde_json::json!(["2026-03-04..2026-03-05"])
    );
    assert_eq!(v["holders"][0]["run_id"], rid);
    let dates = v["dates"].as_array().expect("one entry per date");
    assert_eq!(dates.len(), 4);
    for d in dates {
        let ds = d["ds"].as_str().unwrap();
        if ds == "2026-03-04" || ds == "2026-03-05" {
            assert_eq!(d["held_by"].as_i64(), Some(rid), "{d}");
            assert_eq!(d["holder_status"].as_str(), Some("reserved"), "{d}");
            assert_eq!(d["holder_by"].as_str(), Some("planner"), "{d}");
        } else {
            assert!(d["held_by"].is_null(), "{d}");
        }
    }
}

#[test]
fn reserve_with_a_bad_duration_writes_nothing() {
    let sb = Sandbox::new();
    let before = snapshot(&sb);
    let run = sb.expect(
        2,
        &[
            "reserve",
            "--interval",
            "2026-03-01..2026-03-02",
            "--for",
            "soon",
        ],
    );
    assert!(run.stderr.contains("soon"), "{}", run.stderr);
    sb.expect(2, &["reserve", "--interval", "2026-03-02..2026-03-01"]);
    assert_eq!(snapshot(&sb), before);
}

#[test]
fn names_and_reasons_of_a_reservation_are_stored_exactly() {
    let sb = Sandbox::new();
    let by = "O'Brien \"ob\"; 김철수";
    let reason = "x'); DROP TABLE orders; -- 재계산";
    let rid = reserve(
        &sb,
        0,
        &["--interval", "2026-03-01", "--by", by, "--reason", reason],
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT requested_by, reason FROM runs WHERE run_id = {rid}"
        )),
        vec![vec![by, reason]]
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM orders"),
        0,
        "orders still exists"
    );
    sb.ok(&["release", &rid.to_string(), "--by", by]);
    assert_eq!(status_of(&sb, rid), "released");
}
