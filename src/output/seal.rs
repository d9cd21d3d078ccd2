//! `sqlrun seal` / `seal --reissue` / `unseal`: what the event did (or, dry, would do),
//! what was sealed already, and what blocks it.

use crate::error::Result;
use crate::output::holds;
use crate::output::Output;
use crate::seals::{ranges, CheckedSeal, Sealing};
use crate::text::words::SealAction;

pub fn sealed(r: &CheckedSeal, s: &Sealing, out: &Output) -> Result<()> {
    for line in holds::reclaim_lines(&s.reclaimed) {
        out.note(&line);
    }
    out.json(&serde_json::json!({
        "action": r.action, "dry_run": r.dry_run, "interval": r.interval.to_string(),
        "seal_id": s.seal_id,
        // seal: sealed now; reissue: reissued; unseal: unsealed
        "dates": s.dates,
        "sealed": if r.action == SealAction::Seal { s.dates.clone() } else { Vec::new() },
        "already_sealed": s.already,
        "models": s.cover, "models_added": s.added, "models_left_out": s.left_out,
        "settled_corrections": s.settled,
        "blockers": s.blockers,
        "sealed_by": r.by, "reason": r.reason,
    }))?;
    let mut lines = vec![headline(r, s)];
    for c in &s.added {
        lines.push(format!(
            "{}: first sealed on {} (computed there after the date's seal)",
            c.model,
            ranges(&c.dates)
        ));
    }
    for c in &s.left_out {
        lines.push(format!(
            "{}: never computed on {}, so not sealed there (apply it, then seal again)",
            c.model,
            ranges(&c.dates)
        ));
    }
    if s.settled > 0 {
        lines.push(format!(
            "{} open correction{} {} settled by it (folded into the tables; the correction rows stay)",
            s.settled,
            if s.settled == 1 { "" } else { "s" },
            match (r.dry_run, s.settled == 1) {
                (true, _) => "would be",
                (false, true) => "is",
                (false, false) => "are",
            }
        ));
    }
    if r.dry_run {
        match s.blockers.is_empty() {
            true => lines.push("dry run: nothing was written".into()),
            false => lines.push(format!(
                "dry run, nothing was written; it would be refused: {}",
                s.blockers.join("; ")
            )),
        }
    }
    out.text(&lines.join("\n"))
}

/// The first line: what the event sent (or unsealed), with its id.
fn headline(r: &CheckedSeal, s: &Sealing) -> String {
    let id = s
        .seal_id
        .map(|id| format!(" (seal {id})"))
        .unwrap_or_default();
    let count = |dates: &[String]| {
        format!(
            "{} ({} date{})",
            ranges(dates),
            dates.len(),
            if dates.len() == 1 { "" } else { "s" }
        )
    };
    let verb = |done: &str, dry: &str| {
        if r.dry_run {
            dry.to_string()
        } else {
            done.to_string()
        }
    };
    let mut text = match r.action {
        SealAction::Seal if s.dates.is_empty() && s.added.is_empty() => {
            "nothing new to seal".to_string()
        }
        SealAction::Seal if s.dates.is_empty() => {
            format!(
                "{} models computed since on sealed dates{id}",
                verb("sealed", "would seal")
            )
        }
        SealAction::Seal => format!("{} {}{id}", verb("sealed", "would seal"), count(&s.dates)),
        SealAction::Reissue | SealAction::Unseal if s.dates.is_empty() => {
            format!(
                "nothing to {}: no date of {} is sealed",
                r.action, r.interval
            )
        }
        SealAction::Reissue => format!(
            "{} {}{id}: their current values {} out again, a new version",
            verb("reissued", "would reissue"),
            count(&s.dates),
            verb("went", "would go")
        ),
        SealAction::Unseal => format!(
            "{} {}{id}: ordinary dates again, the next apply replaces them whole",
            verb("unsealed", "would unseal"),
            count(&s.dates)
        ),
    };
    if !s.already.is_empty() {
        text.push_str(&format!(
            "; already sealed, left as they were: {}",
            ranges(&s.already)
        ));
    }
    text
}
