//! `sqlrun load`.

use crate::dates::interval::{contiguous, Date, Interval};
use crate::error::Result;
use crate::output::Output;
use crate::pipeline::Pipeline;

/// `loaded N rows into TABLE` (JSON: table, rows, and the computed dates that show as
/// changed now); for a source, which dates those are and how to recompute them.
pub fn loaded(
    pipeline: &Pipeline,
    table: &str,
    loaded: u64,
    changed: &[Date],
    out: &Output,
) -> Result<()> {
    let changed_text: Vec<String> = contiguous(changed).iter().map(|i| i.to_string()).collect();
    out.json(&serde_json::json!({"table": table, "rows": loaded, "changed": changed_text}))?;
    let noun = if loaded == 1 { "row" } else { "rows" };
    out.text(&format!("loaded {loaded} {noun} into {table}"))?;
    let readers: Vec<&str> = pipeline
        .models
        .iter()
        .filter(|m| {
            m.sources.iter().any(|s| s.table == table) || m.lookups.iter().any(|l| l.table == table)
        })
        .map(|m| m.name.as_str())
        .collect();
    if loaded == 0 || readers.is_empty() {
        return Ok(());
    }
    let (Some(first), Some(last)) = (changed.first(), changed.last()) else {
        out.note(&format!(
            "{table} is a source of {}: no computed date shows as changed (the rows are on \
             dates not computed yet, or equal what was there); `sqlrun status` shows them",
            readers.join(", ")
        ));
        return Ok(());
    };
    let (noun, verb, them) = match changed.len() {
        1 => ("date", "shows", "it"),
        _ => ("dates", "show", "them"),
    };
    out.note(&format!(
        "{table} is a source of {}: {} computed {noun} now {verb} as changed: {}; \
         `sqlrun apply --only changed --interval {}` recomputes {them} (or the next regular \
         run's look back)",
        readers.join(", "),
        changed.len(),
        changed_text.join(", "),
        Interval::new(*first, *last)?
    ));
    Ok(())
}
