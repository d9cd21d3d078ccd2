//! Periods: a model's partitions at its grain (an hour, a day, an ISO week, a month, a
//! quarter, a year), each a half-open span [start, end) of the project's calendar. A
//! period is a typed key from the command line to the template boundary: parsed once,
//! compared, shifted and mapped here, printed only where SQL or a message needs it.
//!
//! Days and coarser periods are calendar dates (no zone needed to shift or compare them).
//! An hour is an instant (UTC), and belongs to the day of its zone it starts in: a day of
//! a daylight-saving change has 23 or 25 of them.

use std::fmt;

use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use super::interval::{fmt_date, Date};

/// How long a model's partitions are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Grain {
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Grain {
    pub const ALL: [Grain; 6] = [
        Grain::Hour,
        Grain::Day,
        Grain::Week,
        Grain::Month,
        Grain::Quarter,
        Grain::Year,
    ];

    pub fn parse(text: &str) -> Option<Grain> {
        Grain::ALL.into_iter().find(|g| g.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Grain::Hour => "hour",
            Grain::Day => "day",
            Grain::Week => "week",
            Grain::Month => "month",
            Grain::Quarter => "quarter",
            Grain::Year => "year",
        }
    }

    /// Whether every period of `self` lies in one period of `coarser` (days in weeks, months
    /// in years; not weeks in months: a week can straddle two).
    /// `1 week`, `3 weeks`.
    pub fn count(self, n: usize) -> String {
        match n {
            1 => format!("1 {self}"),
            n => format!("{n} {self}s"),
        }
    }

    pub fn nests_in(self, coarser: Grain) -> bool {
        match (self, coarser) {
            (a, b) if a >= b => a == b,
            (Grain::Week, _) => false,
            (_, Grain::Week) => matches!(self, Grain::Hour | Grain::Day),
            _ => true,
        }
    }
}

impl fmt::Display for Grain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One partition's period. For an hour, `start` is its first instant; for a day or a
/// coarser period, its first day (at midnight in the project's zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Period {
    Hour(DateTime<Utc>),
    Days(Grain, Date),
}

impl Period {
    /// The period of `grain` that holds the date `day` (for hours: its first hour).
    pub fn of_date(grain: Grain, day: Date, tz: Tz) -> Period {
        match grain {
            Grain::Hour => Period::Hour(midnight(day, tz)),
            Grain::Day => Period::Days(grain, day),
            Grain::Week => Period::Days(
                grain,
                day - Duration::days(i64::from(day.weekday().num_days_from_monday())),
            ),
            Grain::Month => Period::Days(grain, first_of(day.year(), day.month())),
            Grain::Quarter => Period::Days(grain, first_of(day.year(), (day.month0() / 3) * 3 + 1)),
            Grain::Year => Period::Days(grain, first_of(day.year(), 1)),
        }
    }

    /// The period of `grain` that holds the instant `at`.
    pub fn of_instant(grain: Grain, at: DateTime<Utc>, tz: Tz) -> Period {
        let day = at.with_timezone(&tz).date_naive();
        match grain {
            Grain::Hour => {
                let from = midnight(day, tz);
                let hours = (at - from).num_seconds().div_euclid(3600);
                Period::Hour(from + Duration::hours(hours))
            }
            _ => Period::of_date(grain, day, tz),
        }
    }

    pub fn grain(&self) -> Grain {
        match self {
            Period::Hour(_) => Grain::Hour,
            Period::Days(g, _) => *g,
        }
    }

    /// The period `n` periods later (earlier when negative), None past the calendar.
    pub fn shift(&self, n: i64) -> Option<Period> {
        match *self {
            Period::Hour(at) => at.checked_add_signed(Duration::hours(n)).map(Period::Hour),
            Period::Days(grain, day) => {
                let moved = match grain {
                    Grain::Day => day.checked_add_signed(Duration::days(n)),
                    Grain::Week => day.checked_add_signed(Duration::days(7 * n)),
                    Grain::Month => add_months(day, n),
                    Grain::Quarter => add_months(day, 3 * n),
                    Grain::Year => add_months(day, 12 * n),
                    Grain::Hour => unreachable!("hours are instants"),
                };
                moved
                    .filter(|d| (1..=9999).contains(&d.year()))
                    .map(|d| Period::Days(grain, d))
            }
        }
    }

    /// The next period (the end of this one).
    pub fn next(&self) -> Period {
        self.shift(1).unwrap_or(*self)
    }

    /// The first instant, in `tz`.
    pub fn begins(&self, tz: Tz) -> DateTime<Utc> {
        match *self {
            Period::Hour(at) => at,
            Period::Days(_, day) => midnight(day, tz),
        }
    }

    /// The first instant after it (its half-open end), in `tz`.
    pub fn ends(&self, tz: Tz) -> DateTime<Utc> {
        match *self {
            Period::Hour(at) => at + Duration::hours(1),
            Period::Days(..) => self.next().begins(tz),
        }
    }

    /// The first day (for an hour: the day it is on, in `tz`).
    pub fn first_day(&self, tz: Tz) -> Date {
        match *self {
            Period::Hour(at) => at.with_timezone(&tz).date_naive(),
            Period::Days(_, day) => day,
        }
    }

    /// The last day it covers (for an hour: the day it is on).
    pub fn last_day(&self, tz: Tz) -> Date {
        match *self {
            Period::Hour(_) => self.first_day(tz),
            Period::Days(..) => self
                .next()
                .first_day(tz)
                .pred_opt()
                .unwrap_or(self.first_day(tz)),
        }
    }

    /// Every period of `grain` that overlaps [from, to).
    pub fn overlapping(
        grain: Grain,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        tz: Tz,
    ) -> Vec<Period> {
        let mut out = Vec::new();
        let mut p = Period::of_instant(grain, from, tz);
        while p.begins(tz) < to {
            out.push(p);
            match p.shift(1) {
                Some(next) => p = next,
                None => break,
            }
        }
        out
    }

    /// The partition column's value: a date (`2026-02-09`), or for an hour its first
    /// instant in UTC (`2026-02-09 05:00:00`).
    pub fn key(&self) -> String {
        match self {
            Period::Hour(at) => at.format("%Y-%m-%d %H:%M:%S").to_string(),
            Period::Days(_, day) => fmt_date(*day),
        }
    }

    /// How a person reads it: `2026-02-09`, `2026-W07`, `2026-02`, `2026-Q1`, `2026`, or an
    /// hour in the project's zone (`2026-03-29T03:00+02:00`).
    pub fn label(&self, tz: Tz) -> String {
        match *self {
            Period::Hour(at) => at
                .with_timezone(&tz)
                .format("%Y-%m-%dT%H:%M%:z")
                .to_string(),
            Period::Days(Grain::Week, day) => {
                let w = day.iso_week();
                format!("{}-W{:02}", w.year(), w.week())
            }
            Period::Days(Grain::Month, day) => day.format("%Y-%m").to_string(),
            Period::Days(Grain::Quarter, day) => {
                format!("{}-Q{}", day.year(), day.month0() / 3 + 1)
            }
            Period::Days(Grain::Year, day) => day.year().to_string(),
            Period::Days(_, day) => fmt_date(day),
        }
    }
}

fn first_of(year: i32, month: u32) -> Date {
    NaiveDate::from_ymd_opt(year, month, 1).expect("a month's first day")
}

fn add_months(day: Date, n: i64) -> Option<Date> {
    let months = Months::new(u32::try_from(n.unsigned_abs()).ok()?);
    if n >= 0 {
        day.checked_add_months(months)
    } else {
        day.checked_sub_months(months)
    }
}

/// Consecutive periods with the same key, as runs: first, last, how many, the key.
pub fn runs<K: PartialEq>(
    periods: impl IntoIterator<Item = (Period, K)>,
) -> Vec<(Period, Period, usize, K)> {
    let mut out: Vec<(Period, Period, usize, K)> = Vec::new();
    for (p, key) in periods {
        match out.last_mut() {
            Some(last) if last.1.next() == p && last.3 == key => {
                last.1 = p;
                last.2 += 1;
            }
            _ => out.push((p, p, 1, key)),
        }
    }
    out
}

/// The first instant of `day` in `tz` (where midnight is skipped, the first that exists).
pub fn midnight(day: Date, tz: Tz) -> DateTime<Utc> {
    local(day.and_hms_opt(0, 0, 0).expect("midnight"), tz)
}

/// The instant of local time `naive` in `tz` (the earlier of a repeated hour; for one the
/// clocks skip, the first that exists after it).
pub fn local(naive: chrono::NaiveDateTime, tz: Tz) -> DateTime<Utc> {
    for hour in 0..3 {
        let local = naive + Duration::hours(hour);
        if let Some(at) = tz.from_local_datetime(&local).earliest() {
            return at.with_timezone(&Utc);
        }
    }
    Utc.from_utc_datetime(&naive)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn each_grain_holds_its_days() {
        let tz = Tz::UTC;
        let p = |g| Period::of_date(g, d("2026-02-11"), tz);
        assert_eq!(p(Grain::Week), Period::Days(Grain::Week, d("2026-02-09")));
        assert_eq!(p(Grain::Month), Period::Days(Grain::Month, d("2026-02-01")));
        assert_eq!(
            p(Grain::Quarter),
            Period::Days(Grain::Quarter, d("2026-01-01"))
        );
        assert_eq!(p(Grain::Year).last_day(tz), d("2026-12-31"));
        assert_eq!(p(Grain::Week).last_day(tz), d("2026-02-15"));
        assert_eq!(p(Grain::Month).last_day(tz), d("2026-02-28"));
        assert_eq!(p(Grain::Week).label(tz), "2026-W07");
        assert_eq!(p(Grain::Quarter).label(tz), "2026-Q1");
        assert_eq!(p(Grain::Month).shift(-2).unwrap().label(tz), "2025-12");
    }

    #[test]
    fn a_day_of_a_daylight_saving_change_has_23_or_25_hours() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let hours = |day: &str| {
            let day = Period::of_date(Grain::Day, d(day), tz);
            Period::overlapping(Grain::Hour, day.begins(tz), day.ends(tz), tz).len()
        };
        assert_eq!(hours("2026-03-29"), 23);
        assert_eq!(hours("2026-10-25"), 25);
        assert_eq!(hours("2026-06-01"), 24);
        let first = Period::of_date(Grain::Hour, d("2026-03-29"), tz);
        assert_eq!(first.key(), "2026-03-28 23:00:00");
        assert_eq!(first.label(tz), "2026-03-29T00:00+01:00");
        assert_eq!(first.shift(2).unwrap().label(tz), "2026-03-29T03:00+02:00");
    }

    #[test]
    fn weeks_do_not_nest_in_months_but_days_nest_in_everything() {
        assert!(Grain::Day.nests_in(Grain::Week));
        assert!(Grain::Day.nests_in(Grain::Year));
        assert!(Grain::Month.nests_in(Grain::Quarter));
        assert!(!Grain::Week.nests_in(Grain::Month));
        assert!(!Grain::Month.nests_in(Grain::Week));
        assert!(Grain::Week.nests_in(Grain::Week));
    }
}
