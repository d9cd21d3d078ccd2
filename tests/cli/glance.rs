//! `sqlrun status` at a glance: the summary and the calendar of a known history (gaps, a
//! failed date, held ranges, sealed and corrected dates, late data, source dates past the
//! last computed one), `--list`, `--json`, and colour only on a terminal without NO_COLOR.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

use crate::support::*;

/// One order on each date of `interval`, ids prefixed with `prefix`.
fn one_order_a_day(sb: &Sandbox, prefix: &str, start: &str, days: i64) {
    let rows: Vec<OrderRow> = (0..days)
        .map(|i| OrderRow {
            order_id: format!("{prefix}{i}"),
            order_date: day(start, i),
            amount: 1000 + i,
            created_at: "2026-01-01 00:00:00".into(),
        })
        .collect();
    sb.insert_orders(&rows);
}

/// A history over 2026-01-01..2026-03-08, known cell by cell:
/// - source rows (orders) on every date 2026-01-01..2026-03-05;
/// - computed 2026-01-01..2026-01-09 and 2026-01-14..2026-02-20: a gap of four days;
/// - 2026-02-03 failed (never computed);
/// - sealed 2026-01-05..2026-01-08; a late order corrected 2026-01-06;
/// - a late order on 2026-01-20 not applied yet: changed;
/// - held by `planner` 2026-02-18..2026-02-22 (computed and not), and by `ghost`
///   2026-03-07..2026-03-08 (past the source rows) with a lease that ran out: gone.
///
/// Returns the two holders' run ids.
fn known_history(sb: &Sandbox) -> (i64, i64) {
    one_order_a_day(sb, "o", "2026-01-01", 64);
    sb.ok(&["apply", "--interval", "2026-01-01..2026-01-09"]);
    sb.fail_inserts("daily_revenue", "2026-02-03", When::Before);
    sb.expect(
        1,
        &[
            "apply",
            "--interval",
            "2026-01-14..2026-02-20",
            "--keep-going",
        ],
    );
    sb.stop_failing("daily_revenue");
    sb.ok(&[
        "seal",
        "--interval",
        "2026-01-05..2026-01-08",
        "--reason",
        "weekly report",
    ]);
    one_order_a_day(sb, "late-a", "2026-01-06", 1);
    sb.ok(&["apply", "--interval", "2026-01-05..2026-01-08"]);
    one_order_a_day(sb, "late-b", "2026-01-20", 1);
    let planner = reserve(
        sb,
        &["--interval", "2026-02-18..2026-02-22", "--by", "planner"],
    );
    let ghost = reserve(
        sb,
        &[
            "--interval",
            "2026-03-07..2026-03-08",
            "--by",
            "ghost",
            "--for",
            "1s",
        ],
    );
    // The lease is whole seconds, by the database's clock.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    (planner, ghost)
}

fn reserve(sb: &Sandbox, args: &[&str]) -> i64 {
    let mut all = vec!["reserve"];
    all.extend(args);
    let run = sb.ok(&all);
    run.stdout
        .trim()
        .parse()
        .expect("reserve prints the run id")
}

/// The cells of a month's row of the calendar (`2026-01` -> `# # . ...`).
fn month<'a>(out: &'a str, label: &str) -> &'a str {
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{label}  ")))
        .unwrap_or_else(|| panic!("no calendar row for {label}:\n{out}"));
    &line[9..]
}

/// The line of the summary that lists a state's ranges, without its label.
fn ranges_line(out: &str, state: &str) -> Option<String> {
    out.lines()
        .find(|l| l.starts_with(&format!("{state:<11}")))
        .map(|l| l[11..].to_string())
}

const JAN: &str = "# # # # S C S S # . . . . # # # # # # ! # # # # # # # # # # #";
const FEB: &str = "# # X # # # # # # # # # # # # # # H H H H H . . . . . .";
const MAR: &str = ". . . . . . H H";

#[test]
fn status_starts_with_the_summary_and_the_calendar() {
    let sb = Sandbox::new();
    let (planner, ghost) = known_history(&sb);
    let out = sb.ok(&["status"]).stdout;
    let lines: Vec<&str> = out.lines().collect();

    // The span: from the first to the last date known, source rows and holds included.
    assert_eq!(
        lines[0], "2026-01-01..2026-03-08: 67 dates, from the first to the last date known",
        "{out}"
    );
    // Each date counted once, in the state its cell shows; the counts are the legend.
    assert_eq!(
        lines[2],
        "  # computed  38    S sealed     3    C corrected  1    ! changed    1"
    );
    assert_eq!(
        lines[3],
        "  ~ stale      0    . missing   16    X failed     1    H held       7"
    );
    // Then the dates of each notable state, as ranges: the same dates as the cells.
    assert_eq!(
        ranges_line(&out, "missing").as_deref(),
        Some("2026-01-10..2026-01-13, 2026-02-23..2026-03-06")
    );
    assert_eq!(ranges_line(&out, "failed").as_deref(), Some("2026-02-03"));
    assert_eq!(ranges_line(&out, "changed").as_deref(), Some("2026-01-20"));
    assert_eq!(ranges_line(&out, "stale"), None, "{out}");
    assert_eq!(
        ranges_line(&out, "held"),
        Some(format!(
            "2026-02-18..2026-02-22 by run {planner} (backfill by planner, reserved)"
        ))
    );
    let held = lines.iter().position(|l| l.starts_with("held ")).unwrap();
    assert_eq!(
        lines[held + 1],
        format!("           2026-03-07..2026-03-08 by run {ghost} (backfill by ghost, reserved)")
    );
    assert!(
        lines[held + 2].starts_with(&format!(
            "           run {ghost} is gone: its lease expired at "
        )),
        "{out}"
    );
    assert!(lines[held + 3].ends_with("reclaims its dates"), "{out}");
    assert_eq!(
        ranges_line(&out, "sealed").as_deref(),
        Some("2026-01-05, 2026-01-07..2026-01-08")
    );
    assert_eq!(
        ranges_line(&out, "corrected").as_deref(),
        Some("2026-01-06")
    );

    // The calendar: a heading for the year, a row per month, a glyph per day.
    let heading = lines
        .iter()
        .position(|l| l.starts_with("2026     1"))
        .unwrap();
    assert_eq!(
        lines[heading],
        "2026     1       5         10        15        20        25        30"
    );
    assert_eq!(month(&out, "2026-01"), JAN);
    assert_eq!(month(&out, "2026-02"), FEB);
    assert_eq!(month(&out, "2026-03"), MAR);
    assert_eq!(lines.len(), heading + 4, "{out}");
    assert!(lines.iter().all(|l| l.len() <= 80), "{out}");
    assert!(out.is_ascii(), "{out}");

    // status writes nothing: the gone holder still holds its dates.
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM reservations WHERE run_id = {ghost}"
        )),
        2
    );
}

#[test]
fn status_json_has_the_summary_beside_the_dates() {
    let sb = Sandbox::new();
    let (planner, ghost) = known_history(&sb);
    let out = sb.ok(&["--json", "status"]).stdout;
    let doc: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(doc["interval"], "2026-01-01..2026-03-08");
    assert_eq!(doc["span"], "known");
    let counts: Vec<(String, i64)> = doc["counts"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
        .filter(|(_, v)| *v > 0)
        .collect();
    let mut want = vec![
        ("computed", 38),
        ("sealed", 3),
        ("corrected", 1),
        ("changed", 1),
        ("missing", 16),
        ("failed", 1),
        ("held", 7),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect::<Vec<_>>();
    let mut got = counts;
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(doc["counts"]["stale"], 0);
    let ranges = &doc["ranges"];
    assert_eq!(
        ranges["missing"],
        serde_json::json!(["2026-01-10..2026-01-13", "2026-02-23..2026-03-06"])
    );
    assert_eq!(ranges["failed"], serde_json::json!(["2026-02-03"]));
    assert_eq!(ranges["changed"], serde_json::json!(["2026-01-20"]));
    assert_eq!(ranges["stale"], serde_json::json!([]));
    assert_eq!(
        ranges["held"],
        serde_json::json!(["2026-02-18..2026-02-22", "2026-03-07..2026-03-08"])
    );
    assert_eq!(
        ranges["sealed"],
        serde_json::json!(["2026-01-05", "2026-01-07..2026-01-08"])
    );
    assert_eq!(ranges["corrected"], serde_json::json!(["2026-01-06"]));
    let holders = doc["holders"].as_array().unwrap();
    assert_eq!(holders.len(), 2);
    assert_eq!(holders[0]["run_id"], planner);
    assert_eq!(holders[0]["by"], "planner");
    assert_eq!(holders[0]["status"], "reserved");
    assert!(holders[0]["gone"].is_null());
    assert_eq!(holders[1]["run_id"], ghost);
    assert!(
        holders[1]["gone"]
            .as_str()
            .unwrap()
            .contains("lease expired"),
        "{}",
        holders[1]
    );

    // Every date of the span, gaps included, each with the state its cell shows.
    let dates = doc["dates"].as_array().unwrap();
    assert_eq!(dates.len(), 67);
    let glyph = |state: &str| match state {
        "computed" => '#',
        "sealed" => 'S',
        "corrected" => 'C',
        "changed" => '!',
        "stale" => '~',
        "missing" => '.',
        "failed" => 'X',
        "held" => 'H',
        other => panic!("unknown calendar state {other}"),
    };
    let cells: String = dates
        .iter()
        .map(|d| glyph(d["calendar"].as_str().unwrap()))
        .collect();
    let picture: String = [JAN, FEB, MAR].concat().replace(' ', "");
    assert_eq!(cells, picture);
    let gap = dates.iter().find(|d| d["ds"] == "2026-01-11").unwrap();
    assert_eq!(gap["state_name"], "missing");
    assert!(gap["built_run"].is_null());
    let failed = dates.iter().find(|d| d["ds"] == "2026-02-03").unwrap();
    assert!(
        failed["last_error"]
            .as_str()
            .unwrap()
            .contains("boom on purpose"),
        "{failed}"
    );
}

#[test]
fn an_interval_shows_exactly_its_dates() {
    let sb = Sandbox::new();
    known_history(&sb);
    let out = sb
        .ok(&["status", "--interval", "2026-01-08..2026-01-15"])
        .stdout;
    assert!(
        out.starts_with("2026-01-08..2026-01-15: 8 dates\n"),
        "{out}"
    );
    assert_eq!(
        ranges_line(&out, "missing").as_deref(),
        Some("2026-01-10..2026-01-13")
    );
    assert_eq!(ranges_line(&out, "sealed").as_deref(), Some("2026-01-08"));
    assert_eq!(ranges_line(&out, "corrected"), None, "{out}");
    // Days of the month outside the interval are blank.
    assert_eq!(
        month(&out, "2026-01"),
        format!("{}S # . . . . # #", " ".repeat(14))
    );
    assert!(!out.contains("2026-02"), "{out}");

    // An interval past everything known: every date a gap.
    let out = sb
        .ok(&["status", "--interval", "2027-02-27..2027-03-02"])
        .stdout;
    assert_eq!(
        ranges_line(&out, "missing").as_deref(),
        Some("2027-02-27..2027-03-02")
    );
    assert_eq!(month(&out, "2027-02"), format!("{}. .", " ".repeat(52)));
    assert_eq!(month(&out, "2027-03"), ". .");
}

#[test]
fn list_prints_a_line_per_date_gaps_included() {
    let sb = Sandbox::new();
    known_history(&sb);
    let out = sb.ok(&["status", "--list"]).stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("date        state"), "{out}");
    assert_eq!(lines.len(), 1 + 67);
    let line = |ds: &str| {
        *lines
            .iter()
            .find(|l| l.starts_with(ds))
            .unwrap_or_else(|| panic!("no line for {ds}:\n{out}"))
    };
    assert!(line("2026-01-11").contains("missing"), "{out}");
    assert!(line("2026-03-01").contains("missing"), "{out}");
    assert!(line("2026-02-03").contains("boom on purpose"), "{out}");
    assert!(line("2026-01-06").contains("sealed"), "{out}");
    assert!(line("2026-02-19").contains("planner"), "{out}");
    assert!(line("2026-03-08").contains("gone"), "{out}");
}

#[test]
fn source_rows_alone_make_the_span() {
    let sb = Sandbox::new();
    one_order_a_day(&sb, "o", "2026-05-30", 3);
    let out = sb.ok(&["status"]).stdout;
    assert!(
        out.starts_with("2026-05-30..2026-06-01: 3 dates, from the first to the last date known"),
        "{out}"
    );
    assert_eq!(month(&out, "2026-05"), format!("{}. .", " ".repeat(58)));
    assert_eq!(month(&out, "2026-06"), ".");
    // The gap between computed dates shows, and so do the source dates not computed yet.
    sb.ok(&["apply", "--interval", "2026-05-30"]);
    let out = sb.ok(&["status"]).stdout;
    assert_eq!(month(&out, "2026-05"), format!("{}# .", " ".repeat(58)));
}

#[test]
fn an_empty_database_says_so() {
    let sb = Sandbox::new();
    let run = sb.ok(&["status"]);
    assert!(
        run.stdout.contains("knows no dates yet") && run.stdout.contains("sqlrun apply"),
        "{}",
        run.stdout
    );
    let doc: serde_json::Value =
        serde_json::from_str(&sb.ok(&["--json", "status"]).stdout).expect("a JSON document");
    assert_eq!(doc["span"], "empty");
    assert!(doc["interval"].is_null());
    assert_eq!(doc["dates"], serde_json::json!([]));
    assert_eq!(doc["counts"]["missing"], 0);
    assert_eq!(doc["ranges"]["missing"], serde_json::json!([]));
    // With an interval there is something to show, even in an empty database.
    let out = sb
        .ok(&["status", "--interval", "2026-02-01..2026-02-02"])
        .stdout;
    assert_eq!(month(&out, "2026-02"), ". .");
}

#[test]
fn select_judges_dates_by_the_models_named() {
    let sb = Sandbox::new();
    one_order_a_day(&sb, "o", "2026-04-01", 3);
    sb.ok(&["apply", "--interval", "2026-04-01..2026-04-02"]);
    let out = sb.ok(&["status", "--select", "daily_revenue"]).stdout;
    assert_eq!(month(&out, "2026-04"), "# # .");
    let run = sb.expect(2, &["status", "--select", "nope"]);
    assert!(run.stderr.contains("nope"), "{}", run.stderr);
}

/// Runs `cmd` with its stdout on a new pseudo-terminal and returns what it wrote there.
fn on_a_terminal(mut cmd: Command) -> String {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors it opened; nothing else is passed.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are open and ours alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    cmd.stdout(Stdio::from(slave)).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start sqlrun");
    // The terminal's last writer is the child now: reading ends when it exits.
    drop(cmd);
    let mut out = Vec::new();
    let mut terminal = std::fs::File::from(master);
    let mut buf = [0u8; 4096];
    loop {
        match terminal.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            // Linux says EIO once the other side is closed.
            Err(e) if e.raw_os_error() == Some(libc::EIO) => break,
            Err(e) => panic!("reading the terminal: {e}"),
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "sqlrun on a terminal exited {status}");
    String::from_utf8_lossy(&out).replace("\r\n", "\n")
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let sb = Sandbox::new();
    known_history(&sb);
    let escape = '\x1b';

    // Not a terminal (a pipe), NO_COLOR unset: plain.
    let mut cmd = sb.cmd(&["status"]);
    cmd.env_remove("NO_COLOR");
    let piped = cmd.output().unwrap();
    let piped = String::from_utf8(piped.stdout).unwrap();
    assert!(!piped.contains(escape), "{piped}");
    assert_eq!(month(&piped, "2026-01"), JAN);

    // A terminal, NO_COLOR unset or empty: coloured, the same picture underneath.
    for no_color in [None, Some("")] {
        let mut cmd = sb.cmd(&["status"]);
        match no_color {
            None => cmd.env_remove("NO_COLOR"),
            Some(v) => cmd.env("NO_COLOR", v),
        };
        let coloured = on_a_terminal(cmd);
        assert!(coloured.contains("\x1b[31m"), "failed in red: {coloured:?}");
        assert!(
            coloured.contains("\x1b[32m#"),
            "computed in green: {coloured:?}"
        );
        assert_eq!(strip_escapes(&coloured), piped, "NO_COLOR={no_color:?}");
    }

    // A terminal with NO_COLOR set (to anything): plain.
    for value in ["1", "0", "no"] {
        let mut cmd = sb.cmd(&["status"]);
        cmd.env("NO_COLOR", value);
        let plain = on_a_terminal(cmd);
        assert!(!plain.contains(escape), "NO_COLOR={value}: {plain:?}");
        assert_eq!(plain, piped);
    }

    // --list and --json are never coloured.
    for args in [&["status", "--list"][..], &["--json", "status"]] {
        let mut cmd = sb.cmd(args);
        cmd.env_remove("NO_COLOR");
        let out = on_a_terminal(cmd);
        assert!(!out.contains(escape), "{args:?}: {out:?}");
    }
}

fn strip_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            chars.by_ref().find(|c| *c == 'm');
        } else {
            out.push(c);
        }
    }
    out
}
