//! `sqlrun undo RUN`: its plan (with `--dry-run`, or when nothing is left to undo), and
//! the partitions it skips, each with why. The run itself ends as `apply`'s does
//! (output::apply::finished).

use crate::error::Result;
use crate::output::Output;
use crate::pipeline::cascade::Reach;
use crate::run::undo::{Partition, Skipped, UndoPlan, Why};

/// The plan: on stdout what goes back (or that nothing is left to undo), on stderr what
/// is skipped; with `--json` one document.
pub fn plan(plan: &UndoPlan, downstream: &[Reach], dry_run: bool, out: &Output) -> Result<()> {
    let mut json = serde_json::json!({
        "undo_of": plan.run_id, "interval": plan.interval, "dry_run": dry_run,
        "restore": plan.restore, "skipped": plan.skipped,
    });
    if !plan.rebuild.is_empty() {
        json["rebuild"] = serde_json::json!(plan.rebuild);
    }
    if !downstream.is_empty() {
        json["downstream"] = serde_json::json!(downstream);
    }
    out.json(&json)?;
    let mut text = String::new();
    if plan.is_empty() {
        text.push_str(&format!(
            "nothing left to undo of run {} ({}): every partition it replaced was replaced \
             since or its history pruned; nothing written",
            plan.run_id, plan.interval
        ));
    } else {
        text.push_str(&format!(
            "undo of run {} would put back {} partition{}{}:",
            plan.run_id,
            plan.restore.len(),
            if plan.restore.len() == 1 { "" } else { "s" },
            // Said only when there are some: a pipeline of days shows what it always did.
            match plan.rebuild.len() {
                0 => String::new(),
                n => format!(" and rebuild {n} by their own SQL"),
            }
        ));
        for p in &plan.restore {
            text.push_str(&format!("\n  {}", restored_line(plan.run_id, p)));
        }
        for p in &plan.rebuild {
            text.push_str(&format!("\n  {}", rebuilt_line(plan.run_id, p)));
        }
        text.push_str(&downstream_text(downstream));
    }
    out.text(&text)?;
    skipped(plan, out);
    Ok(())
}

/// Each partition not put back, on stderr, with why.
pub fn skipped(plan: &UndoPlan, out: &Output) {
    for s in &plan.skipped {
        out.note(&skipped_line(plan.run_id, s));
    }
}

/// Each partition rebuilt by its SQL instead of put back, on stderr, as the run starts.
pub fn rebuilt(plan: &UndoPlan, out: &Output) {
    for p in &plan.rebuild {
        out.note(&rebuilt_line(plan.run_id, p));
    }
}

fn restored_line(run_id: i64, p: &Partition) -> String {
    let rows = p.rows.unwrap_or(0);
    format!(
        "{} {}: back to the {} row{} run {run_id} replaced",
        p.period.as_deref().unwrap_or(&p.ds),
        p.model.as_deref().unwrap_or("-"),
        rows,
        if rows == 1 { "" } else { "s" }
    )
}

/// A partition RUN built that is rebuilt by its SQL instead (it reads one that stays).
fn rebuilt_line(run_id: i64, p: &Partition) -> String {
    format!(
        "{} {}: rebuilt by its own SQL, not put back: it reads a partition of run {run_id} \
         that stays as it is (replaced since, or corrected on a date sealed then)",
        p.period.as_deref().unwrap_or(&p.ds),
        p.model.as_deref().unwrap_or("-"),
    )
}

fn skipped_line(run_id: i64, s: &Skipped) -> String {
    let what = match &s.partition.model {
        Some(model) => format!(
            "{} {model}",
            s.partition.period.as_deref().unwrap_or(&s.partition.ds)
        ),
        None => s.partition.ds.clone(),
    };
    let why = match s.why {
        Why::ReplacedSince(other) => {
            format!("replaced since by run {other}; undo run {other} first if its rows must go too")
        }
        Why::Unknown => "no record says which run's rows it holds now".to_string(),
        Why::NotInPipeline => "its model is not in this pipeline any more".to_string(),
        Why::Pruned => format!(
            "the history run {run_id} replaced there was pruned (`[history] keep` in sqlrun.toml)"
        ),
        Why::Corrected => format!(
            "sealed when run {run_id} ran: it wrote corrections, not a replacement; they stand \
             (`sqlrun corrections` lists them)"
        ),
    };
    format!("skipped {what}: {why}")
}

/// What reads a partition put back, rebuilt by its own SQL in the same run (the cascade).
fn downstream_text(downstream: &[Reach]) -> String {
    if downstream.is_empty() {
        return String::new();
    }
    let table = crate::output::plan::reaches_table(downstream);
    let lines: String = table.lines().map(|l| format!("\n  {l}")).collect();
    format!("\nthen rebuild by their own SQL what reads them (the cascade):{lines}")
}
