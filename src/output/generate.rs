//! `sqlrun generate`.

use crate::error::Result;
use crate::output::Output;
use crate::sources::generate::Generated;

pub fn generated(g: &Generated, out: &Output) -> Result<()> {
    out.json(&serde_json::json!({"rows": g.rows, "resent": g.resent, "start": g.start, "end": g.end, "seed": g.seed}))?;
    out.text(&format!(
        "inserted {} order rows ({} re-sent) for {}..{} (seed {})",
        g.rows, g.resent, g.start, g.end, g.seed
    ))
}
