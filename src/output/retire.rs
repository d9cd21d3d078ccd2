//! `sqlrun retire`.

use crate::error::Result;
use crate::output::Output;
use crate::pipeline::models::{CheckedRetire, Known};

pub fn retired(r: &CheckedRetire, model: &Known, out: &Output) -> Result<()> {
    out.json(&serde_json::json!({
        "model": model.name, "table": model.table, "retired_by": r.by, "reason": r.reason,
    }))?;
    out.text(&format!(
        "retired model {}: its table {} and its rows stay; templates without it are accepted \
         from now on",
        model.name, model.table
    ))
}
