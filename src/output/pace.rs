//! How far a run has got, when no progress bar is drawn (stderr is a log file, Airflow's
//! task log, cron's mail): between the per-date lines, now and then a line
//! `progress: 120/396 dates (30%), 4.1 dates/s, about 1 min 07 s left`.
//!
//! The cadence: every tenth of the run's dates (but 25 dates apart at least) or every 30
//! seconds, whichever comes first, and never after the last date (the run's summary
//! follows). `SQLRUN_PROGRESS_DATES=N` and `SQLRUN_PROGRESS_SECONDS=S` change either
//! (0 turns it off); tests use them to be deterministic.

use std::time::{Duration, Instant};

use crate::text::numbers::thousands;

/// By count, never more often than this: a short run's lines are its dates (a slow one
/// still gets the line every 30 s).
const MIN_DATES: usize = 25;
const SECONDS: u64 = 30;

/// When a progress line is due: after so many dates, or so long since the last line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cadence {
    pub dates: Option<usize>,
    pub every: Option<Duration>,
}

impl Cadence {
    /// The default for a run of `total` dates, changed by the environment; a value that
    /// is not a whole number is said and the default kept (a display setting must not
    /// fail a scheduled run).
    pub fn from_env(total: usize, notes: &mut Vec<String>) -> Self {
        let mut read = |key: &str, default: u64| match std::env::var(key) {
            Ok(v) if !v.trim().is_empty() => v.trim().parse::<u64>().unwrap_or_else(|_| {
                notes.push(format!(
                    "{key}={v} is not a whole number (0 turns it off): using {default}"
                ));
                default
            }),
            _ => default,
        };
        let dates = read(
            "SQLRUN_PROGRESS_DATES",
            total.div_ceil(10).max(MIN_DATES) as u64,
        );
        let seconds = read("SQLRUN_PROGRESS_SECONDS", SECONDS);
        Cadence {
            dates: (dates > 0).then_some(dates as usize),
            every: (seconds > 0).then(|| Duration::from_secs(seconds)),
        }
    }
}

/// A run's dates as they end, and when its progress line was last said.
#[derive(Debug)]
pub struct Pace {
    total: usize,
    done: usize,
    started: Instant,
    said_at: (usize, Instant),
    cadence: Cadence,
}

impl Pace {
    pub fn new(total: usize, cadence: Cadence, now: Instant) -> Self {
        Pace {
            total,
            done: 0,
            started: now,
            said_at: (0, now),
            cadence,
        }
    }

    /// A date ended at `now`: the progress line, if one is due.
    pub fn step(&mut self, now: Instant) -> Option<String> {
        self.done += 1;
        let (last, at) = self.said_at;
        let by_count = self.cadence.dates.is_some_and(|n| self.done - last >= n);
        let by_time = self.cadence.every.is_some_and(|e| now - at >= e);
        if self.done >= self.total || !(by_count || by_time) {
            return None;
        }
        self.said_at = (self.done, now);
        Some(line(self.done, self.total, now - self.started))
    }
}

/// `progress: 120/396 dates (30%), 4.1 dates/s, about 1 min 07 s left`.
fn line(done: usize, total: usize, elapsed: Duration) -> String {
    // The rate over the whole run so far: steadier than the last stretch's. The time
    // left rounds up: never "0 s left" while a date is still to come.
    let rate = done as f64 / elapsed.as_secs_f64().max(0.001);
    let left = (total - done) as f64 / rate;
    format!(
        "progress: {}/{} dates ({}%), {}, about {} left",
        thousands(done as i64),
        thousands(total as i64),
        done * 100 / total,
        rate_text(rate),
        span(left.ceil().max(1.0) as u64)
    )
}

/// Dates a second, or seconds a date when a date takes longer than a second.
fn rate_text(per_second: f64) -> String {
    if per_second >= 1.0 {
        format!("{per_second:.1} dates/s")
    } else {
        format!("{:.1} s/date", 1.0 / per_second)
    }
}

/// `42 s`, `1 min 07 s`, `2 h 05 min`.
fn span(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {:02} s", s / 60, s % 60),
        s => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(pace: &mut Pace, start: Instant, every: Duration, n: usize) -> Vec<(usize, String)> {
        (1..=n)
            .filter_map(|i| pace.step(start + every * i as u32).map(|l| (i, l)))
            .collect()
    }

    #[test]
    fn a_line_every_tenth_of_the_run_but_not_after_the_last_date() {
        let start = Instant::now();
        let cadence = Cadence {
            dates: Some(40),
            every: None,
        };
        let mut pace = Pace::new(396, cadence, start);
        let said = lines(&mut pace, start, Duration::from_millis(250), 396);
        let at: Vec<usize> = said.iter().map(|(i, _)| *i).collect();
        assert_eq!(at, [40, 80, 120, 160, 200, 240, 280, 320, 360]);
        assert_eq!(
            said[2].1,
            "progress: 120/396 dates (30%), 4.0 dates/s, about 1 min 09 s left"
        );
    }

    #[test]
    fn a_line_every_so_many_seconds_when_dates_are_slow() {
        let start = Instant::now();
        let cadence = Cadence {
            dates: Some(100),
            every: Some(Duration::from_secs(30)),
        };
        let mut pace = Pace::new(1_000, cadence, start);
        let said = lines(&mut pace, start, Duration::from_secs(12), 10);
        let at: Vec<usize> = said.iter().map(|(i, _)| *i).collect();
        // 36 s, then 72 s (36 s after), then 108 s.
        assert_eq!(at, [3, 6, 9]);
        assert_eq!(
            said[0].1,
            "progress: 3/1,000 dates (0%), 12.0 s/date, about 3 h 19 min left"
        );
    }

    #[test]
    fn the_default_is_a_tenth_of_the_run_but_at_least_25_dates_or_thirty_seconds() {
        // (No SQLRUN_PROGRESS_* in the unit tests' environment.)
        let mut notes = Vec::new();
        assert_eq!(
            Cadence::from_env(396, &mut notes),
            Cadence {
                dates: Some(40),
                every: Some(Duration::from_secs(30))
            }
        );
        assert_eq!(Cadence::from_env(60, &mut notes).dates, Some(25));
        assert!(notes.is_empty());
        assert_eq!(span(42), "42 s");
        assert_eq!(span(67), "1 min 07 s");
        assert_eq!(span(7_500), "2 h 05 min");
    }
}
