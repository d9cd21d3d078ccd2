//! `sqlrun load`.

use crate::error::Result;
use crate::output::Output;
use crate::pipeline::Pipeline;

/// `loaded N rows into TABLE` (JSON: table and rows); for a source, what follows.
pub fn loaded(pipeline: &Pipeline, table: &str, loaded: u64, out: &Output) -> Result<()> {
    out.json(&serde_json::json!({"table": table, "rows": loaded}))?;
    let noun = if loaded == 1 { "row" } else { "rows" };
    out.text(&format!("loaded {loaded} {noun} into {table}"))?;
    let readers: Vec<&str> = pipeline
        .models
        .iter()
        .filter(|m| m.sources.iter().any(|s| s.table == table))
        .map(|m| m.name.as_str())
        .collect();
    if loaded > 0 && !readers.is_empty() {
        out.note(&format!(
            "{table} is a source of {}: computed dates these rows touch now show as changed \
             (`sqlrun status`); `sqlrun apply --only changed --interval START..END` recomputes them",
            readers.join(", ")
        ));
    }
    Ok(())
}
