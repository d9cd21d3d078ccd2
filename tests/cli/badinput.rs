//! Bad input: exit 2, a message that says what was wrong (and what would be right), and
//! nothing written.

use crate::support::*;

/// A database with some of everything: computed dates, a seal, a correction, a reserved
/// run holding dates, so that "nothing written" has rows to compare.
fn busy_sandbox() -> Sandbox {
    let mut orders = Orders::new(41, "2026-02-01", 4, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-01",
        "--reason",
        "weekly report",
    ]);
    let n = orders.rows.len();
    orders.add("late", "2026-02-01", 5_000);
    sb.insert_orders(&orders.rows[n..]);
    sb.ok(&["apply", "--interval", "2026-02-01"]);
    sb.ok(&[
        "reserve",
        "--interval",
        "2026-02-10..2026-02-11",
        "--reason",
        "planned",
    ]);
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue_corrections"),
        1
    );
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 2);
    sb
}

/// Runs `args`, wants exit 2, every `needles` in stderr, and no change to any table.
fn refused(sb: &Sandbox, args: &[&str], needles: &[&str]) -> Run {
    let before = snapshot(sb);
    let run = sb.expect(2, args);
    for needle in needles {
        assert!(
            run.stderr.contains(needle),
            "`sqlrun {}`: stderr should mention {needle:?}:\n{}",
            args.join(" "),
            run.stderr
        );
    }
    assert_eq!(
        snapshot(sb),
        before,
        "`sqlrun {}` wrote something",
        args.join(" ")
    );
    run
}

#[test]
fn bad_intervals_and_dates_are_refused() {
    let sb = busy_sandbox();
    let shape = "2026-02-09..2026-02-11";
    refused(
        &sb,
        &["apply", "--interval", "2026-02-30"],
        &["2026-02-30", "not a date on the calendar", shape],
    );
    refused(
        &sb,
        &["apply", "--interval", "2026-02-11..2026-02-09"],
        &["ends before it starts", "2026-02-09..2026-02-11"],
    );
    refused(
        &sb,
        &["apply", "--interval", "last week"],
        &["last week", "YYYY-MM-DD", shape],
    );
    refused(
        &sb,
        &["apply", "--interval", "2026-13-01"],
        &["2026-13-01", "not a date on the calendar"],
    );
    refused(
        &sb,
        &["apply", "--interval", "2026-12-01..2026-13-01"],
        &["2026-13-01"],
    );
    refused(&sb, &["apply", "--interval", "2026-2-9"], &["YYYY-MM-DD"]);
    refused(
        &sb,
        &["apply", "--as-of", "2026-02-30"],
        &["--as-of", "2026-02-30"],
    );
    refused(
        &sb,
        &["apply", "--as-of", "yesterday"],
        &["--as-of", "YYYY-MM-DD"],
    );
    refused(
        &sb,
        &["status", "--interval", "2026-02-05..2026-02-01"],
        &["2026-02-01..2026-02-05"],
    );
    refused(
        &sb,
        &["seal", "--interval", "2026-02-31", "--reason", "x"],
        &["2026-02-31"],
    );
    refused(
        &sb,
        &["reserve", "--interval", "2026-02-20..2026-02-15"],
        &["ends before it starts", "2026-02-15..2026-02-20"],
    );
    refused(
        &sb,
        &["render", "--date", "2026-02-30"],
        &["--date", "2026-02-30", "not a date on the calendar"],
    );
    refused(&sb, &["render", "--date", "tomorrow"], &["YYYY-MM-DD"]);
}

#[test]
fn bad_flags_are_refused() {
    let sb = busy_sandbox();
    refused(
        &sb,
        &["apply", "--interval", "2026-02-01", "--frobnicate"],
        &["--frobnicate"],
    );
    refused(
        &sb,
        &["apply", "--interval", "2026-02-01", "--only", "bogus"],
        &["bogus", "missing", "failed", "stale"],
    );
    refused(
        &sb,
        &["apply", "--interval", "2026-02-01", "--kind", "adhoc"],
        &["adhoc", "regular", "backfill"],
    );
    refused(
        &sb,
        &["apply", "--interval", "2026-02-01", "--run", "7"],
        &["--interval", "--run", "cannot be used with"],
    );
    // The regular run's today is the database's, known once it is open; a look back
    // that reaches before the year 1 from any today is refused all the same.
    refused(
        &sb,
        &["apply", "--lookback", "4000000000"],
        &["--lookback 4000000000", "reaches before 0001-01-01"],
    );
    refused(&sb, &["seal", "--interval", "2026-02-02"], &["--reason"]);
    refused(
        &sb,
        &["seal", "--interval", "2026-02-02", "--reason", ""],
        &["--reason", "empty"],
    );
    refused(
        &sb,
        &["seal", "--interval", "2026-02-02", "--reason", "   "],
        &["--reason", "empty"],
    );
    refused(
        &sb,
        &["reserve", "--interval", "2026-02-20", "--for", "a while"],
        &["--for", "a while", "90m"],
    );
    refused(&sb, &["frobnicate"], &["frobnicate"]);
}

#[test]
fn unknown_runs_are_refused() {
    let sb = busy_sandbox();
    let missing = "no run 999";
    refused(&sb, &["runs", "999"], &[missing, "sqlrun runs"]);
    refused(&sb, &["release", "999"], &[missing]);
    refused(&sb, &["apply", "--run", "999"], &[missing]);
    refused(&sb, &["runs", "abc"], &["abc"]);
    // A finished run cannot be released or carried out.
    refused(&sb, &["release", "1"], &["run 1 is success"]);
    refused(
        &sb,
        &["apply", "--run", "1"],
        &["run 1 is success", "not reserved"],
    );
}

/// The binary on another `--db`, with the sandbox's environment.
fn with_db(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(BIN);
    for (key, _) in std::env::vars() {
        if key.starts_with("SQLRUN_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("USER", "tester").env("NO_COLOR", "1");
    cmd.arg("--db").arg(db).args(args).output().unwrap()
}

#[test]
fn bad_paths_are_refused() {
    let sb = busy_sandbox();
    let missing = sb.path().join("no-such-templates");
    refused(
        &sb,
        &[
            "--templates",
            missing.to_str().unwrap(),
            "apply",
            "--interval",
            "2026-02-02",
        ],
        &["no-such-templates", "no such folder"],
    );
    assert!(!missing.exists());

    if sqlite_only("--db as a file path: missing folders, a folder, a file not created yet") {
        return;
    }
    // A database inside a folder that does not exist: refused, and nothing created.
    let nowhere = sb.path().join("no-such-folder");
    let db = nowhere.join("x.db");
    let out = with_db(&db, &["apply", "--interval", "2026-02-02"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot open database"), "{stderr}");
    assert!(stderr.contains("no-such-folder"), "{stderr}");
    assert!(stderr.contains("folder that exists"), "{stderr}");
    assert!(!nowhere.exists(), "the missing folder must not be created");

    // --db pointing at a folder.
    let folder = sb.path().join("a-folder");
    std::fs::create_dir(&folder).unwrap();
    let out = with_db(&folder, &["init"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is a folder"), "{stderr}");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);

    // Bad arguments on a database that does not exist yet: it is not created.
    let fresh = sb.path().join("fresh.db");
    for args in [
        &["apply", "--interval", "2026-02-30"][..],
        &["seal", "--interval", "2026-02-01", "--reason", ""],
        &["reserve", "--interval", "2026-02-02..2026-02-01"],
        &["render", "--date", "2026-02-30"],
    ] {
        let out = with_db(&fresh, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(!fresh.exists(), "{args:?} created the database");
    }
}

#[test]
fn render_of_an_unknown_model_is_refused() {
    let sb = busy_sandbox();
    refused(
        &sb,
        &["render", "--date", "2026-02-02", "no_such_model"],
        &["no model named no_such_model", "daily_revenue"],
    );
}

#[test]
fn names_and_reasons_are_stored_exactly_as_given() {
    let sb = Sandbox::new();
    let orders = Orders::new(42, "2026-02-01", 2, false);
    sb.insert_orders(&orders.rows);
    let nasty = "x'); DROP TABLE orders; --";
    let korean = "주간 \"보고서\"; it's";
    for (by, reason) in [(nasty, korean), (korean, nasty)] {
        sb.ok(&[
            "apply",
            "--interval",
            &orders.interval(),
            "--by",
            by,
            "--reason",
            reason,
        ]);
        let got = sb.rows(&format!(
            "SELECT requested_by, reason FROM runs WHERE run_id = {}",
            sb.last_run_id()
        ));
        assert_eq!(got, [[by, reason]]);
    }
    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-01",
        "--by",
        nasty,
        "--reason",
        korean,
    ]);
    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-02",
        "--by",
        korean,
        "--reason",
        nasty,
    ]);
    assert_eq!(
        sb.rows("SELECT ds, sealed_by, reason FROM seals ORDER BY ds"),
        [["2026-02-01", nasty, korean], ["2026-02-02", korean, nasty]]
    );
    sb.ok(&[
        "reserve",
        "--interval",
        "2026-03-01",
        "--by",
        korean,
        "--reason",
        nasty,
    ]);
    assert_eq!(
        sb.rows(&format!(
            "SELECT requested_by, reason, status FROM runs WHERE run_id = {}",
            sb.last_run_id()
        )),
        [[korean, nasty, "reserved"]]
    );
    // The orders table is still there and whole.
    assert_eq!(
        sb.count("SELECT count(*) FROM orders"),
        orders.rows.len() as i64
    );
    assert_eq!(sb.daily(), orders.expected());
    // And the audit trail shows them back as given.
    let out = sb.ok(&["runs", "1"]).stdout;
    assert!(out.contains(nasty) && out.contains(korean), "{out}");
}
