//! The dates' states and who holds them: each date's state as `system/date_states.sql`
//! judges it (judge, its values in state), reservations taken, given back and reclaimed
//! (take), a planned backfill's (`sqlrun reserve` and `release`: planned), the holders and
//! whether they live (holders), the span at a glance that `status` shows (glance), and
//! what a look back leaves before its window (beyond).

pub mod beyond;
pub mod glance;
pub mod holders;
pub mod judge;
pub mod partitions;
pub mod planned;
pub mod state;
pub mod take;

use crate::db::RowShape;
use crate::error::Result;
use crate::pipeline::Pipeline;

/// The rows this module reads, rendered for `pipeline`, for the test that prepares each
/// statement against a real schema (each file keeps its own list beside its row structs).
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let mut shapes = take::row_shapes(pipeline.dialect);
    shapes.extend(judge::row_shapes(pipeline)?);
    shapes.extend(beyond::row_shapes(pipeline)?);
    shapes.extend(partitions::row_shapes(pipeline)?);
    Ok(shapes)
}
