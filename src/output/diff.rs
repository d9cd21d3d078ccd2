//! The diff table, as text or JSON: `apply --diff` (what a run would change) and `sqlrun
//! diff RUN` (what a run changed, from history). Per model, a row per partition that changes (keys
//! added, removed and changed; each measure's total before, after and the delta), the
//! total over them, and the partitions that do not change as ranges, so that every
//! partition is accounted for and a year of unchanged dates stays one line.

use serde::Serialize;

use super::apply::{date_count, range_text};
use super::Output;
use crate::dates::interval::{contiguous, contiguous_by, fmt_date, parse_date, Date};
use crate::error::Result;
use crate::run::changed::{Between, RunChanges};
use crate::run::diff::{Change, ModelDiff, Partition};
use crate::run::preview::{Outcome, Preview, PreviewDate};
use crate::text::table::table;
use crate::text::words::DateStatus;

/// `apply --diff` as `--json` prints it.
#[derive(Serialize)]
struct PreviewDoc<'a> {
    /// Always null: a preview claims no run id.
    run_id: Option<i64>,
    interval: String,
    /// Always `"nothing"`: what the preview wrote.
    written: &'static str,
    /// What the run would exit with.
    exit: u8,
    /// How many dates had each outcome (only those that occur).
    outcomes: serde_json::Map<String, serde_json::Value>,
    models: &'a [ModelDiff],
    dates: &'a [PreviewDate],
}

const OUTCOMES: [(Outcome, &str); 5] = [
    (Outcome::Computed, "computed"),
    (Outcome::Failed, "failed"),
    (Outcome::NotReady, "not_ready"),
    (Outcome::Held, "held"),
    (Outcome::NotSelected, "not_selected"),
];

/// `apply --diff`: the JSON document, or the text.
pub fn preview(p: &Preview, out: &Output) -> Result<()> {
    let count = |o: Outcome| p.dates.iter().filter(|d| d.outcome == o).count();
    out.json(&PreviewDoc {
        run_id: None,
        interval: p.interval.to_string(),
        written: "nothing",
        exit: p.exit().code(),
        outcomes: OUTCOMES
            .iter()
            .filter(|(o, _)| count(*o) > 0)
            .map(|(o, name)| (name.to_string(), count(*o).into()))
            .collect(),
        models: &p.models,
        dates: &p.dates,
    })?;
    if out.json {
        return Ok(());
    }
    let computed = count(Outcome::Computed) + count(Outcome::Failed);
    let mut text = format!(
        "preview of {} ({}): {} computed and rolled back, nothing written\n",
        p.interval,
        date_count(p.interval.len()),
        date_count(computed),
    );
    for model in &p.models {
        text.push('\n');
        text.push_str(&model_text(model, "would change"));
    }
    let notes = date_notes(p);
    if !notes.is_empty() {
        text.push('\n');
        for line in notes {
            text.push_str(&line);
            text.push('\n');
        }
    }
    out.text(&text)
}

/// One model's table: its partitions that change, their total, and the rest as ranges.
pub fn model_text(m: &ModelDiff, verb: &str) -> String {
    let changed: Vec<&Partition> = m.changed().collect();
    let mut text = format!(
        "{}: {} of {} {verb} (key: {})\n",
        m.model,
        changed.len(),
        date_count(m.partitions.len()),
        m.key.join(", ")
    );
    if !changed.is_empty() {
        let mut headers = vec!["date".to_string(), "added".into(), "removed".into()];
        headers.push("changed".into());
        // Each measure's three columns, named once: `revenue before  after  delta`.
        for measure in &m.measures {
            headers.push(format!("{} before", measure.column));
            headers.push("after".into());
            headers.push("delta".into());
        }
        let mut rows: Vec<Vec<String>> = changed
            .iter()
            .map(|p| {
                let date = match p.sealed {
                    true => format!("{} (sealed)", p.ds),
                    false => p.ds.clone(),
                };
                row(m, date, &p.change)
            })
            .collect();
        rows.push(row(m, "total".into(), &m.total));
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        text.push_str(&table(&headers, &rows));
    }
    let same: Vec<Date> = m
        .partitions
        .iter()
        .filter(|p| !p.change.changes())
        .filter_map(|p| parse_date(&p.ds, "date").ok())
        .collect();
    if !same.is_empty() {
        let ranges: Vec<String> = contiguous(&same)
            .iter()
            .map(|r| range_text(&fmt_date(r.start), &fmt_date(r.end)))
            .collect();
        text.push_str(&format!(
            "unchanged ({}): {}\n",
            date_count(same.len()),
            ranges.join(", ")
        ));
    }
    if !m.not_totalled.is_empty() && !changed.is_empty() {
        text.push_str(&format!(
            "not totalled (they do not add up; a change in them counts in `changed`): {}\n",
            m.not_totalled.join(", ")
        ));
    }
    let sealed: Vec<Date> = changed
        .iter()
        .filter(|p| p.sealed)
        .filter_map(|p| parse_date(&p.ds, "date").ok())
        .collect();
    if !sealed.is_empty() {
        let ranges: Vec<String> = contiguous(&sealed)
            .iter()
            .map(|r| range_text(&fmt_date(r.start), &fmt_date(r.end)))
            .collect();
        text.push_str(&format!(
            "sealed: {} compared with {}_current (what is true now); the run would record \
             corrections there, never overwrite what went out\n",
            ranges.join(", "),
            m.table
        ));
    }
    text
}

fn row(m: &ModelDiff, date: String, c: &Change) -> Vec<String> {
    let mut cells = vec![
        date,
        c.added.to_string(),
        c.removed.to_string(),
        c.changed.to_string(),
    ];
    for (measure, total) in m.measures.iter().zip(&c.totals) {
        cells.push(measure.kind.show(&total.before));
        cells.push(measure.kind.show(&total.after));
        let delta = (!total.delta.is_null()).then_some(&total.delta);
        cells.push(measure.kind.show_delta(delta));
    }
    cells
}

/// What is said of a date not computed: why, and who holds it.
type NotComputed<'a> = (Outcome, Option<i64>, Option<&'a str>);

/// The dates not computed, or computed and failed, and the checks that warned, as
/// ranges where they share what is said of them.
fn date_notes(p: &Preview) -> Vec<String> {
    let mut lines = Vec::new();
    let keyed: Vec<(Date, NotComputed)> = p
        .dates
        .iter()
        .filter(|d| matches!(d.outcome, Outcome::Held | Outcome::NotSelected))
        .filter_map(|d| {
            let date = parse_date(&d.ds, "date").ok()?;
            Some((date, (d.outcome, d.held_by, d.holder.as_deref())))
        })
        .collect();
    for (range, (outcome, held_by, holder)) in contiguous_by(keyed) {
        let dates = range_text(&fmt_date(range.start), &fmt_date(range.end));
        lines.push(match (outcome, held_by) {
            (Outcome::Held, Some(run)) => format!(
                "{dates}: held by run {run} ({}): not computed; the run would skip {} and say so \
                 (exit 99)",
                holder.unwrap_or("?"),
                match range.len() {
                    1 => "it",
                    _ => "them",
                }
            ),
            _ => {
                format!("{dates}: not selected (--only or --lookback leaves it out): not computed")
            }
        });
    }
    for d in &p.dates {
        let message = d.message.as_deref().unwrap_or("?");
        match d.outcome {
            Outcome::NotReady => lines.push(format!(
                "{}: not ready ({message}): not computed; the run would skip it (exit 99)",
                d.ds
            )),
            Outcome::Failed => lines.push(format!(
                "{}: would fail: {message}; the run would roll it back (and stop there, without \
                 --keep-going); its rows above count in no total",
                d.ds
            )),
            _ => {}
        }
        for check in d.checks.iter().filter(|_| d.outcome == Outcome::Computed) {
            lines.push(format!(
                "{}: warn: {} (the run would record it and commit the date)",
                d.ds,
                check.summary()
            ));
        }
    }
    lines
}

/// `sqlrun diff RUN` as `--json` prints it.
#[derive(Serialize)]
struct RunChangesDoc<'a> {
    run: RunBrief<'a>,
    models: &'a [ModelDiff],
    /// Models it replaced partitions of that these templates do not have: not compared.
    other_models: &'a [String],
    /// The sealed dates it compared: corrected or unchanged (no history: see `sqlrun
    /// corrections`).
    sealed: Vec<SealedDate<'a>>,
}

#[derive(Serialize)]
struct RunBrief<'a> {
    run_id: i64,
    kind: &'a str,
    interval: String,
    status: String,
    requested_by: &'a str,
    reason: Option<&'a str>,
}

#[derive(Serialize)]
struct SealedDate<'a> {
    ds: &'a str,
    status: DateStatus,
}

/// `sqlrun diff RUN`: the JSON document, or the text.
pub fn run_changes(c: &RunChanges, out: &Output) -> Result<()> {
    let run = &c.run;
    let interval = range_text(&run.interval_start, &run.interval_end);
    out.json(&RunChangesDoc {
        run: RunBrief {
            run_id: run.run_id,
            kind: &run.kind,
            interval: interval.clone(),
            status: run.status.to_string(),
            requested_by: &run.requested_by,
            reason: run.reason.as_deref(),
        },
        models: &c.models,
        other_models: &c.other_models,
        sealed: c
            .sealed
            .iter()
            .map(|(ds, status)| SealedDate {
                ds,
                status: *status,
            })
            .collect(),
    })?;
    if out.json {
        return Ok(());
    }
    let mut text = format!(
        "run {} ({} {interval}, {}, by {}{}): what it changed; before: the rows it replaced \
         (<table>_history), after: the rows it wrote\n",
        run.run_id,
        run.kind,
        run.status,
        run.requested_by,
        run.reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default()
    );
    for model in &c.models {
        text.push('\n');
        text.push_str(&model_text(model, "changed"));
        text.push_str(&history_notes(model).join(""));
    }
    if !c.sealed.is_empty() || !c.other_models.is_empty() {
        text.push('\n');
    }
    if !c.sealed.is_empty() {
        let dates: Vec<Date> = c
            .sealed
            .iter()
            .filter_map(|(ds, _)| parse_date(ds, "date").ok())
            .collect();
        let ranges: Vec<String> = contiguous(&dates)
            .iter()
            .map(|r| range_text(&fmt_date(r.start), &fmt_date(r.end)))
            .collect();
        let corrected = c
            .sealed
            .iter()
            .filter(|(_, s)| *s == DateStatus::Corrected)
            .count();
        text.push_str(&format!(
            "sealed, so compared and not replaced: {} ({corrected} corrected); `sqlrun \
             corrections` shows what it corrected\n",
            ranges.join(", ")
        ));
    }
    if !c.other_models.is_empty() {
        text.push_str(&format!(
            "not compared: {} (not in these templates; run `sqlrun diff {}` with the templates \
             it ran with)\n",
            c.other_models.join(", "),
            run.run_id
        ));
    }
    out.text(&text)
}

/// What history says of a model's partitions where it matters: replaced since, pruned.
fn history_notes(m: &ModelDiff) -> Vec<String> {
    let mut lines = Vec::new();
    let since: Vec<(Date, i64)> = m
        .partitions
        .iter()
        .filter_map(|p| {
            let by = p.history.as_ref()?.replaced_since?;
            Some((parse_date(&p.ds, "date").ok()?, by))
        })
        .collect();
    for (range, by) in contiguous_by(since) {
        lines.push(format!(
            "{}: replaced since by run {by} (what this run wrote is read from history)\n",
            range_text(&fmt_date(range.start), &fmt_date(range.end))
        ));
    }
    lines.extend(pruned_notes(m));
    lines
}

/// The partitions whose history the retention pruned on a side, as ranges.
fn pruned_notes(m: &ModelDiff) -> Vec<String> {
    let pruned: Vec<(Date, String)> = m
        .partitions
        .iter()
        .filter(|p| !p.pruned.is_empty())
        .filter_map(|p| Some((parse_date(&p.ds, "date").ok()?, p.pruned.join(" and "))))
        .collect();
    contiguous_by(pruned)
        .into_iter()
        .map(|(range, sides)| {
            format!(
                "{}: history pruned ([history] keep): the {sides} rows are not all known, so this \
                 diff is not whole there\n",
                range_text(&fmt_date(range.start), &fmt_date(range.end))
            )
        })
        .collect()
}

/// `sqlrun diff --model M --from A --to B` as `--json` prints it.
#[derive(Serialize)]
struct BetweenDoc<'a> {
    from: i64,
    to: i64,
    model: &'a ModelDiff,
}

/// `sqlrun diff --model M --from A --to B`: the JSON document, or the text.
pub fn between(b: &Between, out: &Output) -> Result<()> {
    out.json(&BetweenDoc {
        from: b.from.run_id,
        to: b.to.run_id,
        model: &b.model,
    })?;
    if out.json {
        return Ok(());
    }
    let run = |r: &crate::store::RunRow| {
        format!(
            "run {} ({} {}, {})",
            r.run_id,
            r.kind,
            range_text(&r.interval_start, &r.interval_end),
            r.status
        )
    };
    let mut text = format!(
        "{} against {}: the rows as they stood once each was done\n\n",
        run(&b.from),
        run(&b.to)
    );
    text.push_str(&model_text(&b.model, "differ"));
    text.push_str(&pruned_notes(&b.model).join(""));
    out.text(&text)
}
