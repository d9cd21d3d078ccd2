//! What a look back leaves behind: the dates before its window that need work
//! (`system/beyond_window.sql`, by the look back's own rule), so that a regular run that
//! looks back a week still says what lies three weeks back.

use minijinja::context;
use serde::{Deserialize, Serialize};

use crate::dates::interval::{fmt_date, Date};
use crate::db::{Db, RowShape};
use crate::error::Result;
use crate::pipeline::Pipeline;

/// The dates before a look back's window that need work, by the word `status` shows
/// them with, and the first and last of them (none: nothing needs work there).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeyondWindow {
    pub changed: i64,
    pub failed: i64,
    pub missing: i64,
    pub first: Option<String>,
    pub last: Option<String>,
}

impl BeyondWindow {
    /// How many dates in all.
    pub fn dates(&self) -> i64 {
        self.changed + self.failed + self.missing
    }
}

/// The dates before `before` (a look back's first date) that need work, in one query.
pub fn beyond_window(db: &mut Db, pipeline: &Pipeline, before: Date) -> Result<BeyondWindow> {
    let sql = beyond_window_sql(pipeline, before)?;
    Ok(db.one_as(sql.as_str(), &[])?)
}

fn beyond_window_sql(pipeline: &Pipeline, before: Date) -> Result<String> {
    pipeline.render_system(
        "beyond_window",
        context! { before => fmt_date(before), sources => pipeline.noted_value() },
    )
}

/// Its statement's row, for the test that prepares it against a real schema.
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let before = crate::dates::interval::parse_date("2026-02-01", "date")?;
    let sql = beyond_window_sql(pipeline, before)?;
    Ok(vec![RowShape::of::<BeyondWindow, _>(
        sql.as_str(),
        pipeline.dialect,
    )])
}
