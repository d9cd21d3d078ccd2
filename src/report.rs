//! What the commands print: human tables by default, one JSON document with `--json`.
//! Results go to stdout; notes (skips, reclaims, per-date progress) go to stderr.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};

use serde::Serialize;

use crate::calendar::{self, Glance, Summary};
use crate::dates::{DateState, DateStatus, ModelState, Reclaim};
use crate::error::Result;
use crate::interval::Interval;

pub struct Output {
    pub json: bool,
    pub verbose: u8,
    stderr_tty: bool,
    /// JSON is pretty on a terminal, one line otherwise (a scheduler keeps the last line
    /// of a task's output as its result: Airflow's BashOperator does).
    stdout_tty: bool,
    /// The one JSON document was printed (an error after it must not print another).
    printed: std::cell::Cell<bool>,
    /// Prints nothing (the demo drives commands and tells the story itself).
    quiet: bool,
}

impl Output {
    pub fn new(json: bool, verbose: u8) -> Self {
        Output {
            json,
            verbose,
            stderr_tty: std::io::stderr().is_terminal(),
            stdout_tty: std::io::stdout().is_terminal(),
            printed: std::cell::Cell::new(false),
            quiet: false,
        }
    }

    pub fn quiet() -> Self {
        Output {
            json: false,
            verbose: 0,
            stderr_tty: false,
            stdout_tty: false,
            printed: std::cell::Cell::new(false),
            quiet: true,
        }
    }

    /// A line on stderr that must be seen (a skip, a reclaim, a failure).
    pub fn note(&self, line: &str) {
        if !self.quiet {
            // A closed stderr must not stop a run halfway: the line is lost, the run goes on.
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }

    /// A per-date line on stderr, when no progress bar is drawn.
    pub fn progress(&self, line: &str) {
        if !self.quiet {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }

    pub fn progress_bar(&self) -> bool {
        self.stderr_tty && self.verbose == 0 && !self.quiet
    }

    /// Text on stdout (ignored in --json mode, where `json` prints the one document).
    pub fn text(&self, text: &str) -> Result<()> {
        if !self.json && !self.quiet {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            if !text.ends_with('\n') {
                stdout.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    pub fn json<T: Serialize>(&self, value: &T) -> Result<()> {
        if self.json && !self.quiet {
            let mut stdout = std::io::stdout().lock();
            let written = if self.stdout_tty {
                serde_json::to_writer_pretty(&mut stdout, value)
            } else {
                serde_json::to_writer(&mut stdout, value)
            };
            written.map_err(std::io::Error::from)?;
            stdout.write_all(b"\n")?;
            self.printed.set(true);
        }
        Ok(())
    }

    /// With `--json`, an error is a document too (`{"error": {...}}`), unless the
    /// command's own document is already out.
    pub fn json_error(&self, error: &crate::error::Error) -> Result<()> {
        if self.printed.get() {
            return Ok(());
        }
        self.json(&error.to_json())
    }

    /// Whether text on stdout may be coloured: stdout is a terminal and `NO_COLOR` is
    /// not set (https://no-color.org).
    pub fn colour(&self) -> bool {
        let no_color = std::env::var_os("NO_COLOR");
        calendar::colour_allowed(self.stdout_tty, no_color.as_deref())
    }
}

/// A scheduler's ids for a run, on one line: `airflow: dag revenue, task apply, run
/// scheduled__2026-02-16T00:00:00+00:00, try 2`.
pub fn scheduler_line(s: &crate::requester::Scheduler) -> String {
    let parts: Vec<String> = [
        s.job.as_ref().map(|j| format!("dag {j}")),
        s.task.as_ref().map(|t| format!("task {t}")),
        s.run.as_ref().map(|r| format!("run {r}")),
        s.attempt.map(|n| format!("try {n}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    format!("{}: {}", s.name, parts.join(", "))
}

/// Left-aligned columns, two spaces apart.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(headers.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// An amount in won, as the demo and the reports print it: `51820000` -> `51,820,000`.
pub fn won(amount: i64) -> String {
    thousands(amount)
}

/// Any whole number with thousands separators: `51820000` -> `51,820,000`, `-1,000`.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|x| x.to_string())
        .unwrap_or_else(|| "-".into())
}

/// How one date ended in this run.
#[derive(Debug, Clone, Serialize)]
pub struct DateOutcome {
    pub ds: String,
    pub status: DateStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub millis: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct ApplyReport {
    pub run_id: i64,
    pub kind: String,
    pub interval: String,
    pub status: String,
    pub exit_code: u8,
    pub dates: Vec<DateOutcome>,
    pub reclaimed: Vec<Reclaim>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

pub fn apply_summary(report: &ApplyReport, out: &Output) -> Result<()> {
    out.json(report)?;
    let count = |s: DateStatus| report.dates.iter().filter(|d| d.status == s).count();
    let mut parts = Vec::new();
    for s in DateStatus::ALL {
        let n = count(s);
        if n > 0 {
            parts.push(format!("{n} {s}"));
        }
    }
    if parts.is_empty() {
        parts.push("no dates to compute".into());
    }
    out.text(&format!(
        "run {} ({} {}): {} -> {}",
        report.run_id,
        report.kind,
        report.interval,
        parts.join(", "),
        report.status
    ))?;
    for d in report
        .dates
        .iter()
        .filter(|d| d.status == DateStatus::Failed)
    {
        out.note(&format!(
            "failed {}: {}",
            d.ds,
            d.error.as_deref().unwrap_or("")
        ));
    }
    Ok(())
}

#[derive(Serialize)]
struct PlanEntry<'a> {
    ds: &'a str,
    action: &'a str,
}

#[derive(Serialize)]
struct DryRun<'a> {
    run_id: i64,
    interval: String,
    plan: Vec<PlanEntry<'a>>,
    sql: Vec<SqlEntry<'a>>,
}

#[derive(Serialize)]
struct SqlEntry<'a> {
    ds: &'a str,
    sql: String,
}

pub fn dry_run(
    begin: &str,
    run_id: i64,
    interval: Interval,
    plan: &[(&DateState, String)],
    sql: &[(String, String)],
    out: &Output,
) -> Result<()> {
    let doc = DryRun {
        run_id,
        interval: interval.to_string(),
        plan: plan
            .iter()
            .map(|(s, a)| PlanEntry {
                ds: &s.ds,
                action: a,
            })
            .collect(),
        sql: sql
            .iter()
            .map(|(ds, body)| SqlEntry {
                ds,
                sql: transaction(begin, body),
            })
            .collect(),
    };
    out.json(&doc)?;
    let rows: Vec<Vec<String>> = plan
        .iter()
        .map(|(s, a)| vec![s.ds.clone(), a.clone()])
        .collect();
    let mut text = format!("dry run of {interval} (as run {run_id}; nothing is written)\n\n");
    text.push_str(&table(&["date", "would"], &rows));
    for (ds, body) in sql {
        text.push_str(&format!(
            "\n-- ===== {ds} =====\n{}",
            transaction(begin, body)
        ));
    }
    out.text(&text)
}

/// A date's body as the transaction sqlrun runs it in; `begin` is the backend's.
pub fn transaction(begin: &str, body: &str) -> String {
    format!("{begin};\n{}\nCOMMIT;\n", body.trim_end())
}

/// How `status` shows a span.
pub struct StatusView {
    pub span: Interval,
    /// The span is the database's first to last date (no --interval).
    pub known_span: bool,
    /// A line per date instead of the summary and the calendar.
    pub list: bool,
}

/// `status --json`: the summary's fields beside the per-date rows.
#[derive(Serialize)]
struct StatusDoc<'a> {
    interval: Option<String>,
    /// Where the interval came from: `interval` (--interval), `known` (the first to the
    /// last date the database knows) or `empty` (it knows no date).
    span: &'static str,
    /// Each date once, in the state the calendar shows.
    counts: BTreeMap<Glance, usize>,
    /// Every date in each notable state, as contiguous ranges.
    ranges: BTreeMap<Glance, Vec<String>>,
    holders: Vec<HolderDoc>,
    dates: Vec<StatusRow<'a>>,
}

#[derive(Serialize)]
struct HolderDoc {
    run_id: i64,
    kind: Option<String>,
    by: Option<String>,
    status: Option<String>,
    gone: Option<String>,
    ranges: Vec<String>,
}

/// One date of `status --json` (and of `--list`).
#[derive(Serialize)]
struct StatusRow<'a> {
    #[serde(flatten)]
    state: &'a DateState,
    state_name: &'static str,
    /// The state the calendar shows (see `Glance::PRECEDENCE`).
    calendar: Glance,
    stale: bool,
    /// Each model in scope and where it stands (current, stale, missing).
    models: BTreeMap<&'a str, ModelState>,
    /// A source it reads changed since it was built (`apply --only changed`).
    changed: bool,
    sealed: bool,
    /// Why the holder counts as gone (the next apply, reserve or seal reclaims it).
    holder_gone: Option<&'a str>,
}

fn ranges_text(ranges: &[Interval]) -> Vec<String> {
    ranges.iter().map(Interval::to_string).collect()
}

pub fn status(
    view: &StatusView,
    states: &[DateState],
    signature: &str,
    dead: &[(i64, String)],
    out: &Output,
) -> Result<()> {
    let summary = Summary::of(view.span, states, signature, dead);
    let rows: Vec<StatusRow> = states
        .iter()
        .map(|s| StatusRow {
            state: s,
            state_name: state_name(s),
            calendar: Glance::of(s, signature),
            stale: s.stale(signature),
            models: s.model_states(signature).into_iter().collect(),
            changed: s.changed(),
            sealed: s.sealed(),
            holder_gone: s
                .held_by
                .and_then(|h| dead.iter().find(|(run, _)| *run == h))
                .map(|(_, why)| why.as_str()),
        })
        .collect();
    let holders = summary
        .holders
        .iter()
        .map(|h| HolderDoc {
            run_id: h.run_id,
            kind: h.kind.clone(),
            by: h.by.clone(),
            status: h.status.clone(),
            gone: h.gone.clone(),
            ranges: ranges_text(&h.ranges),
        })
        .collect();
    let ranges = summary.ranges.iter().map(|(g, r)| (*g, ranges_text(r)));
    out.json(&StatusDoc {
        interval: Some(view.span.to_string()),
        span: if view.known_span { "known" } else { "interval" },
        counts: summary.counts.clone(),
        ranges: ranges.collect(),
        holders,
        dates: rows,
    })?;
    if out.json {
        return Ok(());
    }
    if view.list {
        return out.text(&status_table(states, signature, dead));
    }
    let colour = out.colour();
    out.text(&format!(
        "{}\n{}",
        calendar::summary_text(&summary, view.known_span, colour),
        calendar::calendar(&summary, colour)
    ))
}

/// `status` when the database knows no date at all: a message, or an empty document.
pub fn status_empty(out: &Output) -> Result<()> {
    out.json(&StatusDoc {
        interval: None,
        span: "empty",
        counts: Glance::ALL.iter().map(|g| (*g, 0)).collect(),
        ranges: Glance::NOTABLE.iter().map(|g| (*g, Vec::new())).collect(),
        holders: Vec::new(),
        dates: Vec::new(),
    })?;
    out.text(
        "the database knows no dates yet: nothing computed, held or sealed, and no source rows; \
         load source rows (e.g. `sqlrun generate --start 2026-02-01`), then run \
         `sqlrun apply --interval START..END`",
    )
}

/// `status --list`: a line per date.
fn status_table(states: &[DateState], signature: &str, dead: &[(i64, String)]) -> String {
    let table_rows: Vec<Vec<String>> = states
        .iter()
        .map(|s| {
            let models: BTreeMap<&str, ModelState> =
                s.model_states(signature).into_iter().collect();
            let gone = s
                .held_by
                .and_then(|h| dead.iter().find(|(run, _)| *run == h))
                .map(|(_, why)| why.as_str());
            vec![
                s.ds.clone(),
                state_name(s).to_string(),
                opt(&s.built_run),
                opt(&s.built_kind),
                opt(&s.built_at),
                version_cell(s, &models),
                if s.sealed() {
                    "sealed".into()
                } else {
                    "-".into()
                },
                if s.corrections > 0 {
                    s.corrections.to_string()
                } else {
                    "-".into()
                },
                match (s.held_by, gone) {
                    (Some(h), None) => format!(
                        "run {h} ({}, {})",
                        s.holder_kind.as_deref().unwrap_or("?"),
                        s.holder_by.as_deref().unwrap_or("?")
                    ),
                    (Some(h), Some(why)) => format!("run {h}, gone: {why}"),
                    (None, _) => "-".into(),
                },
                if s.failed() {
                    s.last_error.clone().unwrap_or_default()
                } else {
                    "-".into()
                },
            ]
        })
        .collect();
    table(
        &[
            "date",
            "state",
            "run",
            "kind",
            "computed at",
            "version",
            "sealed",
            "corrections",
            "held by",
            "last failure",
        ],
        &table_rows,
    )
}

/// The `version` column: current or stale, and when the models of a date differ, which
/// model is stale or missing.
fn version_cell(state: &DateState, models: &BTreeMap<&str, ModelState>) -> String {
    if !state.computed() {
        return "-".into();
    }
    let behind: Vec<String> = models
        .iter()
        .filter(|(_, m)| **m != ModelState::Current)
        .map(|(name, m)| match m {
            ModelState::Missing => format!("{name} missing"),
            ModelState::Failed => format!("{name} failed"),
            _ => format!("{name} stale"),
        })
        .collect();
    match behind.len() {
        0 => "current".into(),
        n if n == models.len() && models.values().all(|m| *m == ModelState::Stale) => {
            "stale".into()
        }
        _ => behind.join(", "),
    }
}

/// What a regular run with `--lookback` found before yesterday: the dates it computes
/// too, and why, and those it leaves to the run that holds them.
pub fn lookback_lines(
    days: u32,
    interval: Interval,
    looked_back: &[DateState],
    signature: &str,
) -> Vec<String> {
    let taken = reason_ranges(
        looked_back.iter().filter(|s| s.held_by.is_none()),
        signature,
    );
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
    for s in looked_back.iter().filter(|s| s.held_by.is_some()) {
        lines.push(format!(
            "{} is {} but held by run {} ({}, requested by {}): left to it",
            s.ds,
            s.reason(signature),
            s.held_by.unwrap_or_default(),
            s.holder_kind.as_deref().unwrap_or("?"),
            s.holder_by.as_deref().unwrap_or("?")
        ));
    }
    lines
}

/// Dates as contiguous ranges per reason, in date order: `2026-01-21..2026-01-31
/// (missing), 2026-02-03 (changed)`.
fn reason_ranges<'a>(states: impl Iterator<Item = &'a DateState>, signature: &str) -> Vec<String> {
    let mut by_reason: Vec<(&str, Vec<crate::interval::Date>)> = Vec::new();
    for s in states {
        let Ok(date) = crate::interval::parse_date(&s.ds, "date") else {
            continue;
        };
        let reason = s.reason(signature);
        match by_reason.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, dates)) => dates.push(date),
            None => by_reason.push((reason, vec![date])),
        }
    }
    let mut ranges: Vec<(Interval, &str)> = by_reason
        .iter()
        .flat_map(|(reason, dates)| {
            crate::interval::contiguous(dates)
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

/// A date's state in a word: failed (its latest attempt), changed (its source since its
/// build), computed, or missing.
fn state_name(s: &DateState) -> &'static str {
    if s.failed() {
        "failed"
    } else if s.changed() {
        "changed"
    } else if s.computed() {
        "computed"
    } else {
        "missing"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn won_groups_thousands() {
        assert_eq!(won(51_820_000), "51,820,000");
        assert_eq!(won(-1_000), "-1,000");
        assert_eq!(won(999), "999");
        assert_eq!(won(0), "0");
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(&["a", "bb"], &[vec!["xxx".into(), "y".into()]]);
        assert_eq!(t, "a    bb\nxxx  y\n");
    }
}
