//! `sqlrun render`: the SQL, as it would run.

use crate::error::Result;
use crate::output::plan;
use crate::output::Output;
use crate::render::Rendered;

pub fn rendered(r: &Rendered, out: &Output) -> Result<()> {
    let sql = match r.begin {
        Some(begin) => plan::transaction(begin, &r.body),
        None => format!("{}\n", r.body),
    };
    out.json(&serde_json::json!({"ds": r.ds, "run_id": r.run_id, "model": r.model, "sql": sql}))?;
    out.text(&sql)
}
