//! What a long run says when stderr is a log (no terminal, no progress bar): its per-date
//! lines as ever, and between them a `progress:` line with the count, the rate and the
//! time left, every `SQLRUN_PROGRESS_DATES` dates (the tests set the cadence: by time it
//! is off, see `support::bin_cmd`); and held dates said as ranges, never a line each.

use crate::support::*;

/// `apply ARGS` with `SQLRUN_PROGRESS_DATES` set (None: the default cadence).
fn apply_every(sb: &Sandbox, every: Option<&str>, args: &[&str]) -> Run {
    let mut cmd = sb.cmd(&[&["apply"], args].concat());
    if let Some(n) = every {
        cmd.env("SQLRUN_PROGRESS_DATES", n);
    }
    let run = Run::from(cmd.output().expect("run sqlrun"));
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    run
}

/// Stderr's per-date and progress lines, in order: `D` for a date's line, the progress
/// line's count otherwise (`3/10`).
fn beats(run: &Run) -> Vec<String> {
    run.stderr
        .lines()
        .filter_map(|l| {
            if let Some(rest) = l.strip_prefix("progress: ") {
                Some(rest.split(' ').next().unwrap().to_string())
            } else {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w.len() == 4 && w[1] == "success" && w[3] == "ms)").then(|| "D".into())
            }
        })
        .collect()
}

fn progress_lines(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect()
}

#[test]
fn a_backfill_in_a_log_says_count_rate_and_time_left_every_n_dates() {
    let sb = Sandbox::new();
    let run = apply_every(&sb, Some("3"), &["--interval", "2026-01-01..2026-01-10"]);
    let d = || "D".to_string();
    let p = |s: &str| s.to_string();
    assert_eq!(
        beats(&run),
        [
            d(),
            d(),
            d(),
            p("3/10"),
            d(),
            d(),
            d(),
            p("6/10"),
            d(),
            d(),
            d(),
            p("9/10"),
            d()
        ],
        "every date's line stays; a progress line after every third, none after the \
         last:\n{}",
        run.stderr
    );
    for (line, percent) in progress_lines(&run).iter().zip(["30%", "60%", "90%"]) {
        // The rate and the time left depend on the machine: their shape only.
        let rest = line
            .strip_prefix("progress: ")
            .and_then(|l| l.split_once(&format!(" dates ({percent}), ")))
            .unwrap_or_else(|| panic!("count and percent: {line}"))
            .1;
        let (rate, left) = rest.split_once(", about ").expect("rate, time left");
        let (number, unit) = rate.split_once(' ').expect("rate and unit");
        assert!(number.parse::<f64>().is_ok(), "{line}");
        assert!(unit == "dates/s" || unit == "s/date", "{line}");
        assert!(
            left.ends_with(" s left") || left.ends_with(" min left"),
            "{line}"
        );
    }
    assert!(
        run.stdout
            .starts_with("run 1 (backfill 2026-01-01..2026-01-10): 10 success"),
        "stdout is the summary alone: {}",
        run.stdout
    );
}

#[test]
fn the_default_says_progress_every_tenth_of_a_run_but_25_dates_apart_at_least() {
    let sb = Sandbox::new();
    // 60 dates: a tenth is 6 dates, less than 25: every 25 dates.
    let run = apply_every(&sb, None, &["--interval", "2026-01-01..2026-03-01"]);
    let counts: Vec<String> = beats(&run).into_iter().filter(|b| b != "D").collect();
    assert_eq!(counts, ["25/60", "50/60"], "{}", run.stderr);
    // 25 dates or fewer: no line by count (by time, one every 30 s).
    let run = apply_every(&sb, None, &["--interval", "2026-01-01..2026-01-25"]);
    assert!(progress_lines(&run).is_empty(), "{}", run.stderr);
    // 0 turns it off; --json keeps stdout one document, the progress on stderr.
    let run = apply_every(
        &sb,
        Some("0"),
        &["--interval", "2026-01-01..2026-01-25", "--json"],
    );
    assert!(progress_lines(&run).is_empty(), "{}", run.stderr);
    let json = apply_every(
        &sb,
        Some("5"),
        &["--interval", "2026-01-01..2026-01-12", "--json"],
    );
    assert_eq!(progress_lines(&json).len(), 2, "{}", json.stderr);
    let doc: serde_json::Value = serde_json::from_str(json.stdout.trim()).unwrap();
    assert_eq!(doc["dates"].as_array().unwrap().len(), 12);
    assert!(doc.get("progress").is_none());
}

#[test]
fn a_bad_cadence_is_said_and_the_default_kept() {
    let sb = Sandbox::new();
    let run = apply_every(
        &sb,
        Some("often"),
        &["--interval", "2026-01-01..2026-01-30"],
    );
    contains_all(
        &run.stderr,
        &[
            "SQLRUN_PROGRESS_DATES=often is not a whole number (0 turns it off): using 25",
            "progress: 25/30 dates (83%), ",
        ],
    );
}

/// Seven consecutive dates held by one run: one line each time they are said (the
/// skip as the run reserves, its summary, a look back leaving them, a seal refused),
/// naming the holder.
#[test]
fn seven_held_dates_in_a_row_are_one_range_naming_their_holder() {
    let sb = Sandbox::new();
    sb.ok(&["apply", "--interval", "2026-01-01"]);
    let holder = sb
        .ok(&[
            "reserve",
            "--interval",
            "2026-01-02..2026-01-08",
            "--by",
            "bob",
        ])
        .stdout
        .trim()
        .to_string();
    let held_lines = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains(&format!("run {holder}")))
            .map(str::to_string)
            .collect()
    };

    let backfill = sb.expect(99, &["apply", "--interval", "2026-01-01..2026-01-10"]);
    let lines = held_lines(&backfill.stderr);
    assert_eq!(lines.len(), 2, "{}", backfill.stderr);
    assert!(
        lines[0].starts_with(&format!(
            "skipped 2026-01-02..2026-01-08 (7 dates): held by run {holder} (backfill, \
             requested by bob, reserved since "
        )),
        "{}",
        lines[0]
    );
    let summary: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        summary[..5],
        ["2026-01-02..2026-01-08", "skipped", "7", "dates", "held"],
        "{}",
        lines[1]
    );

    let lookback = sb.ok(&["apply", "--as-of", "2026-01-11", "--lookback", "10"]);
    assert_eq!(
        held_lines(&lookback.stderr),
        [format!(
            "2026-01-02..2026-01-08 (7 dates) are missing but held by run {holder} \
             (backfill, requested by bob): left to it"
        )],
        "{}",
        lookback.stderr
    );

    let seal = sb.expect(
        2,
        &[
            "seal",
            "--interval",
            "2026-01-01..2026-01-10",
            "--reason",
            "x",
        ],
    );
    assert!(
        seal.stderr.contains(&format!(
            "held by another run: 2026-01-02..2026-01-08 (run {holder}); try again"
        )),
        "{}",
        seal.stderr
    );
}
