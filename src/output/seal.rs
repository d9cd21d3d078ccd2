//! `sqlrun seal`: what it sealed, and what was sealed already.

use crate::error::Result;
use crate::output::holds;
use crate::output::Output;
use crate::seal::{ranges, CheckedSeal, Sealing};

pub fn sealed(r: &CheckedSeal, s: &Sealing, out: &Output) -> Result<()> {
    for line in holds::reclaim_lines(&s.reclaimed) {
        out.note(&line);
    }
    out.json(&serde_json::json!({
        "interval": r.interval.to_string(), "sealed": s.new, "already_sealed": s.already,
        "sealed_by": r.by, "reason": r.reason,
    }))?;
    let mut text = if s.new.is_empty() {
        "nothing new to seal".to_string()
    } else {
        format!(
            "sealed {} ({} date{})",
            ranges(&s.new),
            s.new.len(),
            if s.new.len() == 1 { "" } else { "s" }
        )
    };
    if !s.already.is_empty() {
        text.push_str(&format!(
            "; already sealed, left as they were: {}",
            ranges(&s.already)
        ));
    }
    out.text(&text)
}
