//! Whose clock says what day it is. On PostgreSQL the server's: leases already follow it,
//! and runners on several machines must agree on "today" (a runner a day ahead would
//! otherwise record the server's unfinished today as done). On SQLite there is no server:
//! the runner's clock is the clock. The server's clock is read once per run; its offset
//! from the runner's is kept, so that later instants follow the server's too.

use chrono::{DateTime, TimeDelta, Utc};
use chrono_tz::Tz;

use super::interval::Date;
use crate::db::Db;
use crate::error::Result;

/// How far a runner's clock may be from the server's before it is warned about: well
/// above a round trip and a synced clock's error (milliseconds), and well below a
/// day's boundary being decided by the wrong clock (the server's decides anyway).
pub const SKEW_BOUND: TimeDelta = TimeDelta::seconds(60);

/// The clock that decides: the server's time and this runner's, read at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    server: DateTime<Utc>,
    runner: DateTime<Utc>,
}

impl Clock {
    /// The database's clock: its server's on PostgreSQL (one query, halfway through which
    /// the runner's own is taken), the runner's on SQLite.
    pub fn read(db: &mut Db) -> Result<Clock> {
        let before = Utc::now();
        let server = db.server_clock()?;
        let runner = before + (Utc::now() - before) / 2;
        Ok(Clock::of(server, runner))
    }

    /// This runner's own clock, where no database is open yet.
    pub fn runner() -> Clock {
        Clock::of(None, Utc::now())
    }

    /// The server's time and the runner's at the same instant; without a server, the
    /// runner's is the clock.
    pub fn of(server: Option<DateTime<Utc>>, runner: DateTime<Utc>) -> Clock {
        Clock {
            server: server.unwrap_or(runner),
            runner,
        }
    }

    /// Now by the clock that decides: the runner's clock moved by the offset measured.
    pub fn now(&self) -> DateTime<Utc> {
        self.at(Utc::now())
    }

    /// What the clock that decides says when the runner's says `runner`.
    pub fn at(&self, runner: DateTime<Utc>) -> DateTime<Utc> {
        runner + (self.server - self.runner)
    }

    /// The runner's clock minus the server's, when it is off by more than `SKEW_BOUND`.
    pub fn skew(&self) -> Option<TimeDelta> {
        let ahead = self.runner - self.server;
        (ahead.abs() > SKEW_BOUND).then_some(ahead)
    }

    /// The warning for a runner whose clock is off by more than `SKEW_BOUND`: both
    /// times, the difference, and the fix.
    pub fn skew_warning(&self) -> Option<String> {
        let ahead = self.skew()?;
        let utc = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M:%S UTC");
        Some(format!(
            "warning: this runner's clock is {} {} the database server's (runner {}, server \
             {}); sqlrun goes by the server's clock for today, the regular run's yesterday \
             and the days that have not ended. Sync this runner's clock (NTP: chrony, \
             systemd-timesyncd), so that its logs and its scheduler agree with the server",
            span(ahead.abs()),
            if ahead > TimeDelta::zero() {
                "ahead of"
            } else {
                "behind"
            },
            utc(self.runner),
            utc(self.server),
        ))
    }
}

/// The calendar day `now` falls on in `zone`: "today", for the clock that decides.
pub fn today(now: DateTime<Utc>, zone: Tz) -> Date {
    now.with_timezone(&zone).date_naive()
}

/// A difference as a person reads it, to the nearest second: seconds, minutes, hours or
/// days, and the unit below.
fn span(d: TimeDelta) -> String {
    let s = (d.num_milliseconds() + 500) / 1000;
    match s {
        s if s < 120 => format!("{s} s"),
        s if s < 2 * 3600 => format!("{} min {} s", s / 60, s % 60),
        s if s < 2 * 86400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        s => format!("{} days {} h", s / 86400, s % 86400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_servers_clock_decides_today_whatever_the_runners_says() {
        let server = at("2026-12-03T13:00:00Z");
        let ahead = Clock::of(Some(server), at("2026-12-04T13:00:02Z"));
        assert_eq!(ahead.at(at("2026-12-04T13:00:02Z")), server);
        // Later instants follow the server's clock too.
        assert_eq!(
            ahead.at(at("2026-12-04T14:00:02Z")),
            at("2026-12-03T14:00:00Z")
        );
        let d = |s: &str| super::super::interval::parse_date(s, "test").unwrap();
        let now = ahead.at(at("2026-12-04T13:00:02Z"));
        assert_eq!(today(now, Tz::UTC), d("2026-12-03"));
        // The project's zone applies to the server's now: 22:00 in Seoul.
        assert_eq!(today(now, Tz::Asia__Seoul), d("2026-12-03"));
        assert_eq!(
            today(at("2026-12-03T15:00:00Z"), Tz::Asia__Seoul),
            d("2026-12-04")
        );
        // Without a server the runner's clock is the clock, and nothing is off.
        let alone = Clock::of(None, at("2056-11-25T13:00:00Z"));
        assert_eq!(
            alone.at(at("2056-11-25T13:00:00Z")),
            at("2056-11-25T13:00:00Z")
        );
        assert_eq!((alone.skew(), alone.skew_warning()), (None, None));
    }

    #[test]
    fn a_runner_off_by_more_than_the_bound_is_warned_with_both_times_and_the_fix() {
        let server = at("2026-12-03T13:00:00Z");
        let off = |runner: &str| Clock::of(Some(server), at(runner));
        // Within the bound, either way: nothing to say.
        assert_eq!(off("2026-12-03T13:01:00Z").skew(), None);
        assert_eq!(off("2026-12-03T12:59:00Z").skew(), None);
        assert_eq!(
            off("2026-12-03T13:01:01Z").skew(),
            Some(TimeDelta::seconds(61))
        );
        let day = off("2026-12-04T13:00:03Z").skew_warning().unwrap();
        for part in [
            "warning: this runner's clock is 24 h 0 min ahead of the database server's",
            "runner 2026-12-04 13:00:03 UTC, server 2026-12-03 13:00:00 UTC",
            "Sync this runner's clock (NTP: chrony",
        ] {
            assert!(day.contains(part), "{part}\n{day}");
        }
        let behind = off("2026-12-03T12:55:30Z").skew_warning().unwrap();
        assert!(
            behind.contains("is 4 min 30 s behind the database"),
            "{behind}"
        );
        let years = off("2056-11-25T13:00:00Z").skew_warning().unwrap();
        assert!(years.contains("is 10950 days 0 h ahead"), "{years}");
    }
}
