//! `apply` as a watcher sees it: notes and a line per date on stderr while the run goes
//! (`Watch`, the run's `Progress`), then its end: a line on stdout (or the JSON document)
//! and on stderr how its dates ended, as ranges.

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use serde::Serialize;

use std::time::Instant;

use super::holds::{left_to_holder_lines, reclaim_lines, skip_lines};
use super::pace::{Cadence, Pace};
use super::Output;
use crate::dates::interval::{contiguous, contiguous_by, fmt_date, parse_date, Date, Interval};
use crate::db::Target;
use crate::error::Result;
use crate::exit::Exit;
use crate::pipeline::Pipeline;
use crate::reservations::beyond::BeyondWindow;
use crate::reservations::state::{DateState, Reclaim, Skip};
use crate::run::{DateOutcome, Progress, RunOutcome};
use crate::text::numbers::thousands;
use crate::text::table::aligned;
use crate::text::words::{DateStatus, RunKind, RunStatus, Severity};

/// The run's watcher: notes on stderr, and a line per date (or, on a terminal, one
/// progress bar for the run, drawn from the calling thread).
pub struct Watch<'a> {
    out: &'a Output,
    bar: Option<ProgressBar>,
    /// Without a bar: when the next `progress:` line is due.
    pace: Option<Pace>,
}

impl<'a> Watch<'a> {
    pub fn new(out: &'a Output) -> Self {
        Watch {
            out,
            bar: None,
            pace: None,
        }
    }
}

impl Progress for Watch<'_> {
    fn note(&mut self, line: &str) {
        self.out.note(line);
    }

    fn ready(&mut self, target: &Target, pipeline: &Pipeline) {
        if self.out.verbose > 0 {
            self.out.note(&format!(
                "database {}; templates {} ({})",
                target,
                pipeline.templates.origin,
                pipeline.signature()
            ));
        }
    }

    fn reclaimed(&mut self, reclaimed: &[Reclaim]) {
        self.out.notes(&reclaim_lines(reclaimed));
    }

    fn looked_back(
        &mut self,
        days: u32,
        interval: Interval,
        dates: &[DateState],
        beyond: &BeyondWindow,
    ) {
        self.out.notes(&lookback_lines(days, interval, dates));
        if let Some(line) = beyond_line(beyond) {
            self.out.note(&line);
        }
    }

    fn skipped(&mut self, skips: &[Skip]) {
        self.out.notes(&skip_lines(skips));
    }

    fn dates(&mut self, count: usize) {
        if !self.out.progress_bar() {
            let mut notes = Vec::new();
            let cadence = Cadence::from_env(count, &mut notes);
            self.out.notes(&notes);
            self.pace = Some(Pace::new(count, cadence, Instant::now()));
        }
        self.bar = (self.out.progress_bar() && count > 1).then(|| {
            let bar = ProgressBar::new(count as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {pos}/{len} dates [{bar:30}] {rate} {elapsed} eta {eta} {msg}",
                )
                .expect("static template")
                .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.1} dates/s", s.per_sec());
                })
                .progress_chars("=> "),
            );
            bar
        });
    }

    /// A date as it ends: a line on stderr, or a step of the progress bar (a failure is
    /// still said on its own line).
    fn date_done(&mut self, date: &DateOutcome) {
        let millis = date.millis.unwrap_or_default();
        let line = match &date.error {
            Some(e) => format!("{}  {}  ({millis} ms): {e}", date.ds, date.status),
            None => format!("{}  {}  ({millis} ms)", date.ds, date.status),
        };
        let warnings = warn_lines(date);
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                if date.error.is_some() || !warnings.is_empty() {
                    bar.suspend(|| {
                        self.out.note(&line);
                        self.out.notes(&warnings);
                    });
                }
            }
            None => {
                self.out.progress(&line);
                self.out.notes(&warnings);
                let pace = self.pace.as_mut().and_then(|p| p.step(Instant::now()));
                if let Some(pace) = pace {
                    self.out.progress(&pace);
                }
            }
        }
    }

    fn dates_done(&mut self) {
        self.pace = None;
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// A date that committed with `warn` checks finding rows: a line each, with its first row.
fn warn_lines(date: &DateOutcome) -> Vec<String> {
    date.checks
        .iter()
        .filter(|c| c.severity == Severity::Warn && date.status != DateStatus::Failed)
        .map(|c| {
            let first = c
                .rows
                .first()
                .map(|r| format!(": {}", serde_json::Value::Object(r.clone())))
                .unwrap_or_default();
            format!("warn: {}: {}{first}", date.ds, c.summary())
        })
        .collect()
}

/// `apply --json`: the run's document.
#[derive(Debug, Serialize)]
struct ApplyReport<'a> {
    run_id: i64,
    kind: RunKind,
    interval: String,
    status: RunStatus,
    exit_code: u8,
    dates: &'a [DateOutcome],
    /// The dates again, as ranges of consecutive days that ended alike.
    ranges: Vec<OutcomeRange>,
    reclaimed: &'a [Reclaim],
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: Option<&'a str>,
    /// With `--lookback`: what needs work before the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    beyond_window: Option<BeyondReport<'a>>,
}

/// `beyond_window` in `apply --json`: the counts, first and last, how many in all, and
/// the command that reaches them (none when nothing needs work there).
#[derive(Debug, Serialize)]
struct BeyondReport<'a> {
    #[serde(flatten)]
    counts: &'a BeyondWindow,
    dates: i64,
    reach: Option<String>,
}

impl<'a> BeyondReport<'a> {
    fn new(counts: &'a BeyondWindow) -> Self {
        BeyondReport {
            counts,
            dates: counts.dates(),
            reach: reach(counts),
        }
    }
}

/// How a run ended: what it released, its line on stdout (or the JSON document), how its
/// dates ended on stderr; a run that stopped short says its dates, then its error.
pub fn finished(run: RunOutcome, out: &Output) -> Result<Exit> {
    if let Some(error) = run.error {
        if let Ok(ranges) = outcome_ranges(&run.dates) {
            outcome_notes(&ranges, &run.skips, out);
        }
        return Err(error);
    }
    let stopped = run.stopped.as_deref();
    if run.released > 0 {
        out.note(&format!(
            "released {} date{} not computed: {}",
            run.released,
            if run.released == 1 { "" } else { "s" },
            stopped.unwrap_or("run ended")
        ));
    } else if let (true, Some(why)) = (run.taken_over(), stopped) {
        // Its dates were taken from it (released by hand, reclaimed): nothing left to
        // release, but why it stopped is still said.
        out.note(&format!("stopped: {why}"));
    }
    let report = ApplyReport {
        run_id: run.run_id,
        kind: run.kind,
        interval: run.interval.to_string(),
        status: run.status,
        exit_code: run.exit.code(),
        ranges: outcome_ranges(&run.dates)?,
        dates: &run.dates,
        reclaimed: &run.reclaimed,
        stopped,
        beyond_window: run.beyond_window.as_ref().map(BeyondReport::new),
    };
    apply_summary(&report, &run.skips, out)?;
    Ok(run.exit)
}

/// The end of `apply`: its line on stdout (or the JSON document), then on stderr how
/// its dates ended, as ranges (`skips` name the holders of skipped dates).
fn apply_summary(report: &ApplyReport, skips: &[Skip], out: &Output) -> Result<()> {
    out.json(report)?;
    let mut parts = status_counts(report.dates);
    if parts.is_empty() {
        parts.push("no dates to compute".into());
    }
    let warned = report
        .dates
        .iter()
        .filter(|d| !warn_lines(d).is_empty())
        .count();
    if warned > 0 {
        parts.push(format!("{} with warnings", thousands(warned as i64)));
    }
    out.text(&format!(
        "run {} ({} {}): {} -> {}",
        report.run_id,
        report.kind,
        report.interval,
        parts.join(", "),
        report.status
    ))?;
    outcome_notes(&report.ranges, skips, out);
    Ok(())
}

/// `90 success, 1 failed`: how many dates ended each way, in the order of
/// `DateStatus::ALL`, leaving out the statuses no date has.
pub fn status_counts(dates: &[DateOutcome]) -> Vec<String> {
    DateStatus::ALL
        .iter()
        .copied()
        .filter_map(|s| {
            let n = dates.iter().filter(|d| d.status == s).count();
            (n > 0).then(|| format!("{} {s}", thousands(n as i64)))
        })
        .collect()
}

/// How a run's dates ended, as ranges on stderr, one line each. The skipped ones name
/// their holder as the contract asks of every skip (CONTRACT §2); `apply` has said them
/// when it reserved too (a run killed before its end must not keep a skip unsaid).
fn outcome_notes(ranges: &[OutcomeRange], skips: &[Skip], out: &Output) {
    let holder = |run: i64| match skips.iter().find(|s| s.held_by == Some(run)) {
        Some(s) => format!(
            "held by run {run} ({}, requested by {}, {} since {})",
            s.holder_kind.as_deref().unwrap_or("?"),
            s.holder_by.as_deref().unwrap_or("?"),
            s.holder_status.as_deref().unwrap_or("?"),
            s.held_since.as_deref().unwrap_or("?"),
        ),
        None => format!("held by run {run}"),
    };
    for line in outcome_lines(ranges, &holder).lines() {
        out.note(line);
    }
}

/// Consecutive days of one run that ended alike: the same status, holder and error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutcomeRange {
    pub start: String,
    pub end: String,
    pub count: usize,
    pub status: DateStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A run's dates as ranges, in date order: a failed date keeps its error (dates that
/// failed alike in a row share a range), skipped dates split by holder.
pub fn outcome_ranges(dates: &[DateOutcome]) -> Result<Vec<OutcomeRange>> {
    let keyed = dates
        .iter()
        .map(|d| {
            let key = (d.status, d.held_by, d.error.as_deref());
            Ok((parse_date(&d.ds, "date")?, key))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(contiguous_by(keyed)
        .into_iter()
        .map(|(range, (status, held_by, error))| OutcomeRange {
            start: fmt_date(range.start),
            end: fmt_date(range.end),
            count: range.len(),
            status,
            held_by,
            error: error.map(str::to_string),
        })
        .collect())
}

/// Ranges as aligned lines: `2026-01-01..2026-03-31  success  90 dates`, then what a
/// range needs said: `holder` names a skipped range's holder, a failed one its error.
pub fn outcome_lines(ranges: &[OutcomeRange], holder: &dyn Fn(i64) -> String) -> String {
    let rows: Vec<Vec<String>> = ranges
        .iter()
        .map(|r| {
            let detail = match (r.status, r.held_by, &r.error) {
                (DateStatus::Skipped, Some(run), _) => holder(run),
                (_, _, Some(error)) => error.clone(),
                _ => String::new(),
            };
            vec![
                range_text(&r.start, &r.end),
                r.status.to_string(),
                date_count(r.count),
                detail,
            ]
        })
        .collect();
    aligned(&rows)
}

/// `2026-02-09..2026-02-11`, or one date alone.
pub fn range_text(start: &str, end: &str) -> String {
    if start == end {
        start.to_string()
    } else {
        format!("{start}..{end}")
    }
}

/// `1 date`, `1,095 dates`.
pub fn date_count(n: usize) -> String {
    format!(
        "{} date{}",
        thousands(n as i64),
        if n == 1 { "" } else { "s" }
    )
}

/// What a regular run with `--lookback` found before yesterday: the dates it computes
/// too, and why, and those it leaves to the run that holds them.
fn lookback_lines(days: u32, interval: Interval, looked_back: &[DateState]) -> Vec<String> {
    let taken = reason_ranges(looked_back.iter().filter(|s| s.held_by.is_none()));
    let mut lines = vec![format!(
        "looked back {days} day{} ({interval}): {}",
        if days == 1 { "" } else { "s" },
        if taken.is_empty() && looked_back.is_empty() {
            "nothing missing, failed or changed".to_string()
        } else if taken.is_empty() {
            "nothing else to compute".to_string()
        } else {
            format!("also computing {}", taken.join(", "))
        }
    )];
    lines.extend(left_to_holder_lines(looked_back));
    lines
}

/// What a look back leaves before its window, in one line (none: nothing needs work
/// there): `note: 3 dates before the look-back window need work: 2 changed, 1 failed
/// (2026-01-03..2026-01-20); `sqlrun apply ...` reaches them`.
fn beyond_line(beyond: &BeyondWindow) -> Option<String> {
    let (first, last) = (beyond.first.as_deref()?, beyond.last.as_deref()?);
    let kinds: Vec<String> = beyond_kinds(beyond)
        .iter()
        .map(|(n, kind)| format!("{} {kind}", thousands(*n)))
        .collect();
    Some(format!(
        "note: {} before the look-back window need{} work: {} ({}); `{}` reaches {}",
        date_count(beyond.dates() as usize),
        if beyond.dates() == 1 { "s" } else { "" },
        kinds.join(", "),
        range_text(first, last),
        reach(beyond)?,
        if beyond.dates() == 1 { "it" } else { "them" },
    ))
}

/// The kinds of dates beyond a window that it has, with their counts, in the note's order.
fn beyond_kinds(beyond: &BeyondWindow) -> Vec<(i64, &'static str)> {
    [
        (beyond.changed, "changed"),
        (beyond.failed, "failed"),
        (beyond.missing, "missing"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .collect()
}

/// The one command that computes exactly the dates beyond a window: one kind is
/// `--only KIND` over their span (`--only` takes one word); several are a look back
/// from the last of them over the days back to the first, which takes the last and
/// every older date that needs work, and no other.
fn reach(beyond: &BeyondWindow) -> Option<String> {
    let (first, last) = (beyond.first.as_deref()?, beyond.last.as_deref()?);
    Some(match beyond_kinds(beyond).as_slice() {
        [(_, kind)] => format!(
            "sqlrun apply --interval {} --only {kind}",
            range_text(first, last)
        ),
        _ => {
            let days =
                (parse_date(last, "date").ok()? - parse_date(first, "date").ok()?).num_days();
            format!("sqlrun apply --interval {last} --lookback {days}")
        }
    })
}

/// Dates as contiguous ranges per reason, in date order: `2026-01-21..2026-01-31
/// (missing), 2026-02-03 (changed)`.
fn reason_ranges<'a>(states: impl Iterator<Item = &'a DateState>) -> Vec<String> {
    let mut by_reason: Vec<(&str, Vec<Date>)> = Vec::new();
    for s in states {
        let Ok(date) = parse_date(&s.ds, "date") else {
            continue;
        };
        let reason = s.reason();
        match by_reason.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, dates)) => dates.push(date),
            None => by_reason.push((reason, vec![date])),
        }
    }
    let mut ranges: Vec<(Interval, &str)> = by_reason
        .iter()
        .flat_map(|(reason, dates)| {
            contiguous(dates)
                .into_iter()
                .map(move |range| (range, *reason))
        })
        .collect();
    ranges.sort_by_key(|(range, _)| range.start);
    ranges
        .into_iter()
        .map(|(range, reason)| format!("{range} ({reason})"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(
        ds: &str,
        status: DateStatus,
        held_by: Option<i64>,
        error: Option<&str>,
    ) -> DateOutcome {
        DateOutcome {
            ds: ds.into(),
            status,
            error: error.map(str::to_string),
            held_by,
            millis: None,
            checks: Vec::new(),
        }
    }

    #[test]
    fn outcomes_group_by_status_holder_and_error_over_consecutive_days() {
        use DateStatus::*;
        let dates = [
            outcome("2026-01-03", Success, None, None),
            outcome("2026-01-01", Success, None, None),
            outcome("2026-01-02", Success, None, None),
            // Not the next day: a new range, though the status is the same.
            outcome("2026-01-05", Success, None, None),
            outcome("2026-01-06", Failed, None, Some("boom")),
            outcome("2026-01-07", Failed, None, Some("boom")),
            outcome("2026-01-08", Failed, None, Some("other")),
            outcome("2026-01-09", Skipped, Some(7), None),
            outcome("2026-01-10", Skipped, Some(8), None),
        ];
        let ranges = outcome_ranges(&dates).unwrap();
        let text = outcome_lines(&ranges, &|run| format!("held by run {run}"));
        assert_eq!(
            text,
            "2026-01-01..2026-01-03  success  3 dates\n\
             2026-01-05              success  1 date\n\
             2026-01-06..2026-01-07  failed   2 dates  boom\n\
             2026-01-08              failed   1 date   other\n\
             2026-01-09              skipped  1 date   held by run 7\n\
             2026-01-10              skipped  1 date   held by run 8\n"
        );
        assert_eq!(ranges[2].count, 2);
        assert_eq!(
            status_counts(&dates),
            ["4 success", "2 skipped", "3 failed"]
        );
    }

    #[test]
    fn ranges_cross_months_and_years() {
        let d = |s: &str| parse_date(s, "test").unwrap();
        let dates = vec![
            (d("2027-01-01"), 'a'),
            (d("2026-12-31"), 'a'),
            (d("2028-02-29"), 'a'),
            (d("2028-03-01"), 'b'),
        ];
        let ranges: Vec<String> = contiguous_by(dates)
            .iter()
            .map(|(range, key)| format!("{range} {key}"))
            .collect();
        assert_eq!(
            ranges,
            ["2026-12-31..2027-01-01 a", "2028-02-29 a", "2028-03-01 b"]
        );
        assert_eq!(date_count(1_095), "1,095 dates");
    }
}
