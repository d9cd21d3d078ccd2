//! Dates and intervals as the command line gives them: `YYYY-MM-DD`, `START..END`; and
//! whose clock says what day it is (clock.rs).

pub mod clock;
pub mod interval;
pub mod period;
