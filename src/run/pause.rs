//! A test aid for fault tests: with `SQLRUN_STOP_AT=POINT` the process stops itself
//! (SIGSTOP) the first time a run reaches that point, so that a test can hold a runner
//! exactly there (a paused VM, a debugger, a GC pause in a wrapper) and check that no
//! other runner waits for it; SIGCONT lets it go on. Unset (always, outside tests), it
//! costs one look at the environment per process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The points of a run's life a test can stop it at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Inside the bookkeeping transaction that reserves its dates, before its COMMIT.
    Reserving,
    /// Its dates are reserved (committed), before its first date's transaction.
    Reserved,
    /// Inside a date's transaction, its reservation row locked, before its writes.
    InDate,
    /// Right after a date's COMMIT was acknowledged.
    Committed,
}

impl Point {
    fn parse(text: &str) -> Option<Point> {
        match text {
            "reserving" => Some(Point::Reserving),
            "reserved" => Some(Point::Reserved),
            "in-date" => Some(Point::InDate),
            "committed" => Some(Point::Committed),
            _ => None,
        }
    }
}

fn asked() -> Option<Point> {
    static ASKED: OnceLock<Option<Point>> = OnceLock::new();
    *ASKED.get_or_init(|| {
        std::env::var("SQLRUN_STOP_AT")
            .ok()
            .and_then(|v| Point::parse(&v))
    })
}

/// Stops the process here if the test asked for this point and it is the first time.
pub fn reached(point: Point) {
    static STOPPED: AtomicBool = AtomicBool::new(false);
    if asked() == Some(point) && !STOPPED.swap(true, Ordering::SeqCst) {
        let _ = signal_hook::low_level::raise(signal_hook::consts::SIGSTOP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_by_their_names() {
        assert_eq!(Point::parse("reserving"), Some(Point::Reserving));
        assert_eq!(Point::parse("reserved"), Some(Point::Reserved));
        assert_eq!(Point::parse("in-date"), Some(Point::InDate));
        assert_eq!(Point::parse("committed"), Some(Point::Committed));
        assert_eq!(Point::parse("after-commit"), None);
    }
}
