//! The dates' states and who holds them: each date's state as `system/date_states.sql`
//! judges it (judge, its values in state), reservations taken, given back and reclaimed
//! (take), a planned backfill's (`sqlrun reserve` and `release`: planned), the holders and
//! whether they live (holders), and the span at a glance that `status` shows (glance).

pub mod glance;
pub mod holders;
pub mod judge;
pub mod planned;
pub mod state;
pub mod take;
