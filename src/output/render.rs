//! `sqlrun render`: the SQL, as it would run.

use crate::error::Result;
use crate::output::Output;
use crate::render::Rendered;
use crate::report;

pub fn rendered(r: &Rendered, out: &Output) -> Result<()> {
    let sql = match r.begin {
        Some(begin) => report::transaction(begin, &r.body),
        None => format!("{}\n", r.body),
    };
    out.json(&serde_json::json!({"ds": r.ds, "run_id": r.run_id, "model": r.model, "sql": sql}))?;
    out.text(&sql)
}
