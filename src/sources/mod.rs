//! What sqlrun loads into a pipeline's sources: `sqlrun load` (CSV, all or nothing),
//! `sqlrun generate` (synthetic orders), and the planner's statistics after either.

pub mod generate;
pub mod load;
pub mod statistics;
