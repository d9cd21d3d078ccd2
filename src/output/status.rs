//! `sqlrun status` as text and JSON: the summary and the calendar of a span, or a line
//! per date (`--list`), or one document (`--json`). Every word of a date's state is the
//! one system/date_states.sql chose; this only lays it out.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dates::interval::Interval;
use crate::error::Result;
use crate::output::calendar;
use crate::output::Output;
use crate::reservations::glance::{Summary, NOTABLE};
use crate::reservations::partitions::{ModelPartitions, PartitionRange};
use crate::reservations::state::DateState;
use crate::sources::freshness::Freshness;
use crate::text::table::table;
use crate::text::words::{CheckMark, ModelState, RunKind, RunStatus, SealMark, State};

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|x| x.to_string())
        .unwrap_or_else(|| "-".into())
}

/// Each model in scope and where it stands on the date, by name.
fn models(s: &DateState) -> BTreeMap<&str, ModelState> {
    s.judged
        .models
        .iter()
        .map(|(name, m)| (name.as_str(), *m))
        .collect()
}

/// Why the date's holder counts as gone, if it does.
fn gone<'a>(s: &DateState, dead: &'a [(i64, String)]) -> Option<&'a str> {
    s.held_by
        .and_then(|h| dead.iter().find(|(run, _)| *run == h))
        .map(|(_, why)| why.as_str())
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
    counts: BTreeMap<State, usize>,
    /// The dates of each notable state (as their cells show it), as contiguous ranges.
    ranges: BTreeMap<State, Vec<String>>,
    /// The dates whose checks failed (latest attempt) or warned (latest build), as ranges.
    checks: BTreeMap<CheckMark, Vec<String>>,
    /// The dates reissued (a later version went out) or unsealed, as ranges.
    seals: BTreeMap<SealMark, Vec<String>>,
    holders: Vec<HolderDoc>,
    /// The sources that declare `-- fresh_within:`, and whether each is fresh now.
    #[serde(skip_serializing_if = "<[Freshness]>::is_empty")]
    sources: &'a [Freshness],
    /// The partitions of the models coarser than the day (weeks, months, ...) that start
    /// in the span, as ranges by state.
    #[serde(skip_serializing_if = "<[PartitionRange]>::is_empty")]
    partitions: &'a [PartitionRange],
    dates: Vec<StatusRow<'a>>,
}

#[derive(Serialize)]
struct HolderDoc {
    run_id: i64,
    kind: Option<RunKind>,
    by: Option<String>,
    status: Option<RunStatus>,
    gone: Option<String>,
    ranges: Vec<String>,
}

/// One date of `status --json` (and of `--list`).
#[derive(Serialize)]
struct StatusRow<'a> {
    #[serde(flatten)]
    state: &'a DateState,
    state_name: &'static str,
    /// The state the calendar shows (the same word as `state_name`, from the same column
    /// of system/date_states.sql).
    calendar: State,
    stale: bool,
    /// Each model in scope and where it stands (current, stale, missing).
    models: BTreeMap<&'a str, ModelState>,
    /// A source it reads changed since it was built (`apply --only changed`).
    changed: bool,
    sealed: bool,
    /// reissued or unsealed (none: neither).
    seal_mark: Option<SealMark>,
    /// Why the holder counts as gone (the next apply, reserve or seal reclaims it).
    holder_gone: Option<&'a str>,
}

fn ranges_text(ranges: &[Interval]) -> Vec<String> {
    ranges.iter().map(Interval::to_string).collect()
}

/// What `status` found: the span, each of its dates, and the holders that are gone (with
/// why).
pub struct Status<'a> {
    pub view: StatusView,
    pub states: &'a [DateState],
    pub dead: &'a [(i64, String)],
    pub sources: &'a [Freshness],
    /// The partitions of the models coarser than the day, as ranges by state.
    pub partitions: &'a [PartitionRange],
    /// The same partitions, each in its place (a calendar row per model and year).
    pub cells: &'a [ModelPartitions],
}

pub fn status(found: &Status, out: &Output) -> Result<()> {
    let (view, states, dead) = (&found.view, found.states, found.dead);
    let summary = Summary::of(view.span, states, dead);
    let rows: Vec<StatusRow> = states
        .iter()
        .map(|s| StatusRow {
            state: s,
            state_name: s.judged.state.as_str(),
            calendar: s.judged.state,
            stale: s.judged.stale,
            models: models(s),
            changed: s.judged.changed,
            sealed: s.judged.sealed,
            seal_mark: s.seal_mark(),
            holder_gone: gone(s, dead),
        })
        .collect();
    let holders = summary
        .holders
        .iter()
        .map(|h| HolderDoc {
            run_id: h.run_id,
            kind: h.kind,
            by: h.by.clone(),
            status: h.status,
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
        checks: summary
            .checks
            .iter()
            .map(|(mark, r)| (*mark, ranges_text(r)))
            .collect(),
        seals: summary
            .seals
            .iter()
            .map(|(mark, r)| (*mark, ranges_text(r)))
            .collect(),
        holders,
        sources: found.sources,
        partitions: found.partitions,
        dates: rows,
    })?;
    if out.json {
        return Ok(());
    }
    if view.list {
        out.text(&status_table(states, dead))?;
    } else {
        let colour = out.colour();
        out.text(&format!(
            "{}\n{}",
            calendar::summary_text(&summary, view.known_span, colour),
            calendar::calendar(&summary, colour)
        ))?;
    }
    if !found.partitions.is_empty() {
        if !view.list {
            out.text(&crate::output::grains::rows_text(found.cells))?;
        }
        out.text(&partitions_text(found.partitions))?;
    }
    match found.sources.is_empty() {
        true => Ok(()),
        false => out.text(&freshness_text(found.sources)),
    }
}

/// The weeks, months, quarters and years: a line per model and run of one state.
fn partitions_text(partitions: &[PartitionRange]) -> String {
    let rows: Vec<Vec<String>> = partitions
        .iter()
        .map(|r| {
            vec![
                r.model.clone(),
                crate::output::apply::range_text(&r.first, &r.last),
                r.state.to_string(),
                r.grain.count(r.count),
            ]
        })
        .collect();
    format!(
        "\npartitions of other grains (by their first day in the span):\n{}",
        crate::text::table::aligned(&rows)
    )
}

/// `7200` as `2 hours`, in the largest unit that divides it.
fn spelt_seconds(seconds: i64) -> String {
    let units = [
        (86_400, "day"),
        (3_600, "hour"),
        (60, "minute"),
        (1, "second"),
    ];
    let (size, unit) = units
        .into_iter()
        .find(|(size, _)| seconds % size == 0)
        .unwrap_or((1, "second"));
    let n = seconds / size;
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// A line per source that declares `-- fresh_within:`: its last change, and fresh or late.
fn freshness_text(sources: &[Freshness]) -> String {
    let width = sources.iter().map(|s| s.source.len()).max().unwrap_or(0);
    let lines: Vec<String> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let within = spelt_seconds(s.fresh_within_seconds);
            let verdict = if s.fresh { "fresh" } else { "LATE" };
            let last = match &s.last_change_at {
                Some(at) => format!("last change {at}"),
                None => "no change seen".to_string(),
            };
            format!(
                "{:<10} {:<width$}  {verdict}: {last} (by its {}), expected within {within}",
                if i == 0 { "sources" } else { "" },
                s.source,
                s.measured_by,
            )
        })
        .collect();
    format!("\n{}", lines.join("\n"))
}

/// `status` when the database knows no date at all: a message, or an empty document.
pub fn status_empty(out: &Output) -> Result<()> {
    out.json(&StatusDoc {
        interval: None,
        span: "empty",
        counts: State::ALL.iter().map(|g| (*g, 0)).collect(),
        ranges: NOTABLE.iter().map(|g| (*g, Vec::new())).collect(),
        checks: CheckMark::ALL.iter().map(|m| (*m, Vec::new())).collect(),
        seals: SealMark::ALL.iter().map(|m| (*m, Vec::new())).collect(),
        holders: Vec::new(),
        sources: &[],
        partitions: &[],
        dates: Vec::new(),
    })?;
    out.text(
        "the database knows no dates yet: nothing computed, held or sealed, and no source rows; \
         load source rows (e.g. `sqlrun generate --start 2026-02-01`), then run \
         `sqlrun apply --interval START..END`",
    )
}

/// The columns of `status --list`, in order.
pub const LIST_COLUMNS: [&str; 11] = [
    "date",
    "state",
    "run",
    "kind",
    "computed at",
    "version",
    "sealed",
    "corrections",
    "checks",
    "held by",
    "last failure",
];

/// `status --list`: a line per date.
fn status_table(states: &[DateState], dead: &[(i64, String)]) -> String {
    let table_rows: Vec<Vec<String>> = states.iter().map(|s| list_row(s, dead)).collect();
    table(&LIST_COLUMNS, &table_rows)
}

/// What `status --list` says of a date, a value per column of `LIST_COLUMNS` (`-`: nothing).
pub fn list_row(s: &DateState, dead: &[(i64, String)]) -> Vec<String> {
    let models = models(s);
    let gone = gone(s, dead);
    vec![
        s.ds.clone(),
        s.judged.state.to_string(),
        opt(&s.built_run),
        opt(&s.built_kind),
        opt(&s.built_at),
        version_cell(s, &models),
        seal_cell(s),
        if s.corrections > 0 {
            s.corrections.to_string()
        } else {
            "-".into()
        },
        opt(&s.checks),
        match (s.held_by, gone) {
            (Some(h), None) => format!(
                "run {h} ({}, {})",
                s.holder_kind.map_or("?", |k| k.as_str()),
                s.holder_by.as_deref().unwrap_or("?")
            ),
            (Some(h), Some(why)) => format!("run {h}, gone: {why}"),
            (None, _) => "-".into(),
        },
        if s.judged.failed {
            s.last_error.clone().unwrap_or_default()
        } else {
            "-".into()
        },
    ]
}

/// The `sealed` column: sealed (with its version once reissued), unsealed, or -.
fn seal_cell(s: &DateState) -> String {
    match (s.judged.sealed, s.seal_mark()) {
        (true, Some(SealMark::Reissued)) => format!(
            "reissued v{} (seal {})",
            opt(&s.seal_version),
            opt(&s.seal_id)
        ),
        (true, _) => format!("sealed (seal {})", opt(&s.seal_id)),
        (false, Some(SealMark::Unsealed)) => "unsealed".into(),
        (false, _) => "-".into(),
    }
}

/// The `version` column: current or stale, and when the models of a date differ, which
/// model is stale or missing.
fn version_cell(state: &DateState, models: &BTreeMap<&str, ModelState>) -> String {
    if !state.judged.computed {
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
