//! Dates and intervals as the command line gives them: `YYYY-MM-DD`, `START..END`.

pub mod interval;
