//! What sqlrun loads into a pipeline's sources: `sqlrun load` (CSV, all or nothing),
//! `sqlrun generate` (synthetic orders), and the planner's statistics after either.

pub mod freshness;
pub mod generate;
pub mod load;
pub mod statistics;

use crate::db::{Dialect, RowShape};

/// The rows this module reads, for the test that prepares each statement against a real
/// schema (each file keeps its own list beside its row structs).
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    let mut shapes = load::row_shapes(dialect);
    shapes.extend(statistics::row_shapes(dialect));
    shapes.extend(freshness::row_shapes(dialect));
    shapes
}
