//! What the commands print: human tables by default, one JSON document with `--json`.
//! Results go to stdout; notes (skips, reclaims, per-date progress) go to stderr.

use serde::Serialize;

use crate::dates::{DateState, Reclaim, Skip};
use crate::error::Result;
use crate::interval::{fmt_date, parse_date, Interval};
use crate::pipeline::RUN_ID_PLACEHOLDER;
use crate::plan::{Action, Reason, Step};
use crate::vocabulary::DateStatus;

pub use crate::output::numbers::{thousands, won};
pub use crate::output::table::{aligned, table};
pub use crate::output::{scheduler_line, Output};

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
    /// The dates again, as ranges of consecutive days that ended alike.
    pub ranges: Vec<OutcomeRange>,
    pub reclaimed: Vec<Reclaim>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The end of `apply`: its line on stdout (or the JSON document), then on stderr how
/// its dates ended, as ranges (`skips` name the holders of skipped dates).
pub fn apply_summary(report: &ApplyReport, skips: &[Skip], out: &Output) -> Result<()> {
    out.json(report)?;
    let mut parts = status_counts(&report.dates);
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
pub fn outcome_notes(ranges: &[OutcomeRange], skips: &[Skip], out: &Output) {
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
    Ok(crate::interval::contiguous_by(keyed)
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

/// Consecutive days with the same step of a dry-run plan.
#[derive(Debug, Serialize)]
struct PlanRange<'a> {
    start: String,
    end: String,
    count: usize,
    action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<Reason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    held_by: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    holder: Option<&'a str>,
}

fn plan_ranges(plan: &[Step]) -> Result<Vec<PlanRange<'_>>> {
    let keyed = plan
        .iter()
        .map(|s| {
            let key = (s.action, s.reason, s.held_by, s.holder.as_deref());
            Ok((parse_date(&s.ds, "date")?, key))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(crate::interval::contiguous_by(keyed)
        .into_iter()
        .map(|(range, (action, reason, held_by, holder))| PlanRange {
            start: fmt_date(range.start),
            end: fmt_date(range.end),
            count: range.len(),
            action,
            reason,
            held_by,
            holder,
        })
        .collect())
}

/// What a plan range needs said beside its action: why, or who holds it.
fn plan_detail(r: &PlanRange) -> String {
    let holder = r.holder.unwrap_or("?");
    match (r.action, r.held_by) {
        (Action::SkipHeld, Some(run)) => format!("held by run {run} ({holder})"),
        (Action::ReclaimAndCompute | Action::ReclaimAndCorrect, Some(run)) => format!(
            "{}; from run {run}, gone: {holder}",
            r.reason.map_or("", Reason::as_str)
        ),
        _ => r.reason.map_or("", Reason::as_str).to_string(),
    }
}

/// A dry run's plan, and the SQL of each date it would compute when `--sql` asks.
pub struct Plan<'a> {
    pub interval: Interval,
    /// `apply --run N`: the reserved run, whose id the plan may name. None: a new run,
    /// whose id does not exist yet.
    pub run_id: Option<i64>,
    pub steps: &'a [Step],
    /// Each computed date and its SQL (None without `--sql`).
    pub sql: Option<Vec<(String, String)>>,
    /// The backend's BEGIN, for the SQL.
    pub begin: &'a str,
}

#[derive(Serialize)]
struct DryRun<'a> {
    /// Null: a dry run claims no run id (the next real run gets the next free one).
    run_id: Option<i64>,
    interval: String,
    /// How many dates each action takes (a JSON object: its keys print alphabetically).
    counts: serde_json::Map<String, serde_json::Value>,
    plan: &'a [Step],
    ranges: &'a [PlanRange<'a>],
    #[serde(skip_serializing_if = "Option::is_none")]
    sql: Option<&'a [SqlEntry<'a>]>,
    /// What `run_id` prints as in `sql`, when no run owns the plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    run_id_placeholder: Option<&'static str>,
}

#[derive(Serialize)]
struct SqlEntry<'a> {
    ds: &'a str,
    sql: String,
}

pub fn dry_run(plan: &Plan, out: &Output) -> Result<()> {
    let ranges = plan_ranges(plan.steps)?;
    let counts: Vec<(Action, usize)> = Action::ALL
        .into_iter()
        .map(|a| (a, plan.steps.iter().filter(|s| s.action == a).count()))
        .filter(|(_, n)| *n > 0)
        .collect();
    let sql: Option<Vec<SqlEntry>> = plan.sql.as_ref().map(|sql| {
        sql.iter()
            .map(|(ds, body)| SqlEntry {
                ds,
                sql: transaction(plan.begin, body),
            })
            .collect()
    });
    out.json(&DryRun {
        run_id: plan.run_id,
        interval: plan.interval.to_string(),
        counts: counts
            .iter()
            .map(|(a, n)| (a.to_string(), (*n).into()))
            .collect(),
        plan: plan.steps,
        ranges: &ranges,
        sql: sql.as_deref(),
        run_id_placeholder: (plan.run_id.is_none() && sql.is_some()).then_some(RUN_ID_PLACEHOLDER),
    })?;
    out.text(&dry_run_text(plan, &counts, &ranges, sql.as_deref()))
}

/// The plan for a reader: what it would do per action, the ranges, then the SQL if asked.
fn dry_run_text(
    plan: &Plan,
    counts: &[(Action, usize)],
    ranges: &[PlanRange],
    sql: Option<&[SqlEntry]>,
) -> String {
    let mut text = match plan.run_id {
        Some(run) => format!(
            "dry run of run {run} ({}); nothing is written\n",
            plan.interval
        ),
        None => format!(
            "dry run of {}; nothing is written and no run id is claimed\n",
            plan.interval
        ),
    };
    let counts: Vec<String> = counts
        .iter()
        .map(|(action, n)| format!("{} {action}", thousands(*n as i64)))
        .collect();
    text.push_str(&format!("would: {}\n\n", counts.join(", ")));
    let rows: Vec<Vec<String>> = ranges
        .iter()
        .map(|r| {
            vec![
                range_text(&r.start, &r.end),
                r.action.to_string(),
                date_count(r.count),
                plan_detail(r),
            ]
        })
        .collect();
    text.push_str(&aligned(&rows));
    match sql {
        None if plan.steps.iter().any(|s| s.action.computes()) => {
            text.push_str("\n(--sql adds the SQL of each date it would compute)\n");
        }
        None => {}
        Some(entries) => {
            text.push('\n');
            text.push_str(&sql_preface(plan.run_id));
            for e in entries {
                text.push_str(&format!("\n-- ===== {} =====\n{}", e.ds, e.sql));
            }
        }
    }
    text
}

/// What the SQL of a dry run says about its run id before the first date.
fn sql_preface(run_id: Option<i64>) -> String {
    match run_id {
        Some(run) => format!("-- The SQL of each date it would compute, as run {run}.\n"),
        None => format!(
            "-- The SQL of each date it would compute. A dry run claims no run id, so run_id\n\
             -- is the placeholder {RUN_ID_PLACEHOLDER}: the run that applies it gets the next free id.\n\
             -- To run a date by hand, bind it first (sqlite3: .parameter set {RUN_ID_PLACEHOLDER} N;\n\
             -- psql: \\set run_id N).\n"
        ),
    }
}

/// A date's body as the transaction sqlrun runs it in; `begin` is the backend's.
pub fn transaction(begin: &str, body: &str) -> String {
    format!("{begin};\n{}\nCOMMIT;\n", body.trim_end())
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
            s.holder_kind.map_or("?", |k| k.as_str()),
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
        let ranges: Vec<String> = crate::interval::contiguous_by(dates)
            .iter()
            .map(|(range, key)| format!("{range} {key}"))
            .collect();
        assert_eq!(
            ranges,
            ["2026-12-31..2027-01-01 a", "2028-02-29 a", "2028-03-01 b"]
        );
        assert_eq!(date_count(1_095), "1,095 dates");
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(&["a", "bb"], &[vec!["xxx".into(), "y".into()]]);
        assert_eq!(t, "a    bb\nxxx  y\n");
    }
}
