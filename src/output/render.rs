//! `sqlrun render`: the SQL, as it would run.

use crate::error::{Error, Result};
use crate::output::plan;
use crate::output::Output;
use crate::run::render::Rendered;

/// The SQL; with `--json`, its backend, and what the database refused of it (`refused`,
/// said on stderr too), in the same document (`run_id` null where no database was asked).
pub fn rendered(r: &Rendered, refused: Option<&Error>, out: &Output) -> Result<()> {
    let sql = match r.begin {
        Some(begin) => plan::transaction(begin, &r.body),
        None => format!("{}\n", r.body),
    };
    let mut doc = serde_json::json!({
        "ds": r.ds,
        "run_id": r.run_id,
        "model": r.model,
        "dialect": r.dialect.as_str(),
        "sql": sql,
    });
    if let Some(e) = refused {
        doc["error"] = e.to_json()["error"].take();
    }
    out.json(&doc)?;
    out.text(&sql)
}
