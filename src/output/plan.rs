//! `apply --dry-run`: the plan as ranges per action, and with `--sql` each date's SQL as
//! the transaction sqlrun runs it in.

use serde::Serialize;

use crate::pipeline::cascade::Reach;
use crate::pipeline::checks::Check;

use super::apply::{date_count, range_text};
use super::Output;
use crate::dates::interval::{contiguous_by, fmt_date, parse_date};
use crate::error::Result;
use crate::pipeline::RUN_ID_PLACEHOLDER;
use crate::run::plan::{Action, Reason, Step};
use crate::run::Plan;
use crate::text::numbers::thousands;
use crate::text::table::aligned;

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
    Ok(contiguous_by(keyed)
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
    /// The checks each date it computes would run.
    checks: &'a [Check],
    /// The dates it would compute whose sources are not ready: skipped.
    not_ready: Vec<NotReady<'a>>,
    /// The partitions per model (a pipeline of other grains or windows), with why.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    cascade: &'a [Reach],
}

#[derive(Serialize)]
struct NotReady<'a> {
    ds: &'a str,
    reason: &'a str,
}

#[derive(Serialize)]
struct SqlEntry<'a> {
    ds: &'a str,
    sql: String,
}

/// The plan: the JSON document, or the text.
pub fn dry_run(plan: &Plan, out: &Output) -> Result<()> {
    let ranges = plan_ranges(&plan.steps)?;
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
        plan: &plan.steps,
        ranges: &ranges,
        sql: sql.as_deref(),
        run_id_placeholder: (plan.run_id.is_none() && sql.is_some()).then_some(RUN_ID_PLACEHOLDER),
        checks: &plan.checks,
        not_ready: plan
            .not_ready
            .iter()
            .map(|(ds, reason)| NotReady { ds, reason })
            .collect(),
        cascade: &plan.cascade,
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
    text.push_str(&cascade_text(&plan.cascade));
    text.push_str(&checks_text(plan));
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

/// The partitions per model, ranges with why (models in dependency order).
fn cascade_text(cascade: &[Reach]) -> String {
    if cascade.is_empty() {
        return String::new();
    }
    format!(
        "\npartitions, per model (the cascade):\n{}",
        reaches_table(cascade)
    )
}

/// A cascade's reaches as aligned rows: model, range, how many, why (`--dry-run`, and
/// what `undo --dry-run` rebuilds).
pub fn reaches_table(cascade: &[Reach]) -> String {
    let rows: Vec<Vec<String>> = cascade
        .iter()
        .map(|r| {
            vec![
                r.model.clone(),
                range_text(&r.first, &r.last),
                r.grain.count(r.count),
                r.why.clone(),
            ]
        })
        .collect();
    aligned(&rows)
}

/// The dates whose sources are not ready (they would be skipped), and the checks each
/// computed date would run.
fn checks_text(plan: &Plan) -> String {
    let mut text = String::new();
    for (ds, reason) in &plan.not_ready {
        text.push_str(&format!("{ds}  would be skipped: {reason}\n"));
    }
    if plan.steps.iter().any(|s| s.action.computes()) {
        let rows: Vec<Vec<String>> = plan
            .checks
            .iter()
            .map(|c| {
                vec![
                    format!("  {}", c.name),
                    c.severity.to_string(),
                    c.file.clone(),
                ]
            })
            .collect();
        text.push_str(&match rows.is_empty() {
            true => "\nno checks run on the dates it computes\n".to_string(),
            false => format!(
                "\nchecks on each date it computes, before its COMMIT (an error check that finds rows rolls the date back):\n{}",
                aligned(&rows)
            ),
        });
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
