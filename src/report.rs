//! What the commands print: human tables by default, one JSON document with `--json`.
//! Results go to stdout; notes (skips, reclaims, per-date progress) go to stderr.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::calendar::{self, Glance, Summary};
use crate::dates::{DateState, ModelState};
use crate::error::Result;
use crate::interval::Interval;

pub use crate::numbers::{thousands, won};
pub use crate::output::{scheduler_line, Output};
pub use crate::table::{aligned, table};
// For `runs` and `render` (inspect.rs) until they move.
pub use crate::output::apply::{outcome_lines, outcome_ranges, range_text, status_counts};
pub use crate::output::plan::transaction;
pub use crate::run::DateOutcome;

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|x| x.to_string())
        .unwrap_or_else(|| "-".into())
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
    /// The dates of each notable state (as their cells show it), as contiguous ranges.
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
