//! How fresh each source is: when it last changed (its `-- loaded_at:` column, else its
//! change notes) against how late its data may be (`-- fresh_within:`), as the view
//! `source_freshness` says (templates/system/source_freshness.sql). `sqlrun status`
//! shows the sources that declare `-- fresh_within:`.

use serde::Serialize;

use crate::db::{Db, Dialect, RowShape};
use crate::error::Result;
use crate::pipeline::Pipeline;
use crate::store::queries;

/// One source's freshness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Freshness {
    pub source: String,
    /// `loaded_at column` or `change notes`.
    pub measured_by: String,
    /// None: it never changed (as far as sqlrun can tell).
    pub last_change_at: Option<String>,
    pub fresh_within_seconds: i64,
    pub fresh: bool,
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![RowShape::of::<Freshness, _>(
        &queries::SOURCE_FRESHNESS,
        dialect,
    )]
}

/// The sources that declare `-- fresh_within:`, and how they stand (none declared: no read).
pub fn freshness(db: &mut Db, pipeline: &Pipeline) -> Result<Vec<Freshness>> {
    if !pipeline
        .declared
        .iter()
        .any(|d| d.fresh_within_seconds.is_some())
    {
        return Ok(Vec::new());
    }
    Ok(db.rows_as(&queries::SOURCE_FRESHNESS, &[])?)
}
