//! Dates and intervals: `YYYY-MM-DD`, `START..END` inclusive at both ends, UTC calendar days.

use std::fmt;

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

use crate::error::{Error, Result};

/// One partition's date.
pub type Date = NaiveDate;

const DATE_FORMAT: &str = "%Y-%m-%d";

/// An inclusive range of dates; `start <= end` by construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub start: Date,
    pub end: Date,
}

impl Interval {
    pub fn single(date: Date) -> Self {
        Interval {
            start: date,
            end: date,
        }
    }

    pub fn new(start: Date, end: Date) -> Result<Self> {
        if start > end {
            return Err(Error::BadInput(format!(
                "interval {}..{} ends before it starts; write the earlier date first: {}..{}",
                fmt_date(start),
                fmt_date(end),
                fmt_date(end),
                fmt_date(start)
            )));
        }
        Ok(Interval { start, end })
    }

    /// Parses `START..END` or one period, each end a day (`2026-02-09`), a month
    /// (`2026-02`: from its first day, to its last) or a year (`2026`).
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        match text.split_once("..") {
            Some((a, b)) => Interval::new(
                parse_period(a, "interval start")?.start,
                parse_period(b, "interval end")?.end,
            ),
            None => parse_period(text, "interval"),
        }
    }

    /// Whether `day` is one of its dates.
    pub fn contains(&self, day: Date) -> bool {
        self.start <= day && day <= self.end
    }

    /// A regular run's interval with `--lookback days`: the `days` days before its own.
    pub fn looking_back(self, days: u32) -> Result<Self> {
        self.start
            .checked_sub_days(chrono::Days::new(u64::from(days)))
            .filter(|d| in_range(*d))
            .map(|start| Interval { start, ..self })
            .ok_or_else(|| {
                Error::BadInput(format!(
                    "--lookback {days} from {} reaches before 0001-01-01; look back fewer days",
                    fmt_date(self.start)
                ))
            })
    }

    /// The regular run's interval: the day before `as_of`.
    pub fn yesterday_of(as_of: Date) -> Result<Self> {
        as_of
            .pred_opt()
            .filter(|d| in_range(*d))
            .map(Interval::single)
            .ok_or_else(|| {
                Error::BadInput(format!(
                    "--as-of {} has no day before it that sqlrun can compute (years 0001..9999)",
                    fmt_date(as_of)
                ))
            })
    }

    pub fn dates(&self) -> impl Iterator<Item = Date> + '_ {
        self.start.iter_days().take_while(move |d| *d <= self.end)
    }

    pub fn len(&self) -> usize {
        (self.end - self.start).num_days() as usize + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", fmt_date(self.start))
        } else {
            write!(f, "{}..{}", fmt_date(self.start), fmt_date(self.end))
        }
    }
}

/// Parses one `YYYY-MM-DD` date; `what` names the argument in the error.
pub fn parse_date(text: &str, what: &str) -> Result<Date> {
    let text = text.trim();
    let shaped = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    let parsed = if shaped {
        NaiveDate::parse_from_str(text, DATE_FORMAT).ok()
    } else {
        None
    };
    // SQLite's date functions cover the years 0001..9999, and so does sqlrun.
    let parsed = parsed.filter(|d| in_range(*d));
    parsed.ok_or_else(|| {
        let why = if text.starts_with("0000") {
            "is before the year 0001"
        } else if shaped {
            "is not a date on the calendar"
        } else {
            "is not written YYYY-MM-DD"
        };
        Error::BadInput(format!(
            "{what} `{text}` {why}; write a date like 2026-02-09, or an interval like 2026-02-09..2026-02-11 (both ends included; a week 2026-W06, a month 2026-02, a quarter 2026-Q1 or a year 2026 also)"
        ))
    })
}

/// One day, ISO week (`YYYY-Www`), month (`YYYY-MM`), quarter (`YYYY-Qn`) or year
/// (`YYYY`) as the interval of its days; `what` names the argument in the error.
fn parse_period(text: &str, what: &str) -> Result<Interval> {
    let text = text.trim();
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let bad = || {
        Error::BadInput(format!(
            "{what} `{text}` is not a period on the calendar; write a date like 2026-02-09, \
             an ISO week like 2026-W06 (01..53), a month like 2026-02 (01..12), a quarter \
             like 2026-Q1 (1..4), a year like 2026, or an interval like \
             2026-02-09..2026-02-11 (both ends included)"
        ))
    };
    if let Some(hour) = parse_hour(text, what)? {
        return Ok(Interval::single(hour.date()));
    }
    let (year, rest) = match text.split_once('-') {
        None if digits(text, 4) => (text, None),
        Some((y, r)) if digits(y, 4) => (y, Some(r)),
        _ => return parse_date(text, what).map(Interval::single),
    };
    let year: i32 = year.parse().map_err(|_| bad())?;
    let (start, months) = match rest {
        None => (NaiveDate::from_ymd_opt(year, 1, 1), 12),
        Some(r) if digits(r, 2) => (NaiveDate::from_ymd_opt(year, r.parse().unwrap_or(0), 1), 1),
        Some(r) if r.len() == 2 && r.starts_with(['Q', 'q']) => {
            let q: u32 = r[1..].parse().map_err(|_| bad())?;
            let first = (1..=4)
                .contains(&q)
                .then(|| NaiveDate::from_ymd_opt(year, q * 3 - 2, 1));
            (first.flatten(), 3)
        }
        Some(r) if r.len() == 3 && r.starts_with(['W', 'w']) => {
            let w: u32 = r[1..].parse().map_err(|_| bad())?;
            let monday = NaiveDate::from_isoywd_opt(year, w, chrono::Weekday::Mon);
            let start = monday.filter(|d| in_range(*d)).ok_or_else(bad)?;
            return Ok(Interval {
                start,
                end: start + chrono::Days::new(6),
            });
        }
        Some(_) => return parse_date(text, what).map(Interval::single),
    };
    let start = start.filter(|d| in_range(*d)).ok_or_else(bad)?;
    let end = start
        .checked_add_months(chrono::Months::new(months))
        .and_then(|d| d.pred_opt())
        .filter(|d| in_range(*d));
    Ok(Interval {
        start,
        end: end.unwrap_or(NaiveDate::from_ymd_opt(9999, 12, 31).expect("a date")),
    })
}

/// One hour, `YYYY-MM-DDTHH` (its local start), or None for text without a `T`.
pub fn parse_hour(text: &str, what: &str) -> Result<Option<chrono::NaiveDateTime>> {
    // Only `YYYY-MM-DDT...` is an hour: other text with a T ("last week") is no hour.
    let text = text.trim();
    let shaped = text.len() > 10 && matches!(text.as_bytes()[10], b'T' | b't');
    let Some((day, hour)) = text.split_once(['T', 't']).filter(|_| shaped) else {
        return Ok(None);
    };
    let day = parse_date(day, what)?;
    let hour = (hour.len() == 2)
        .then(|| hour.parse::<u32>().ok())
        .flatten()
        .and_then(|h| day.and_hms_opt(h, 0, 0))
        .ok_or_else(|| {
            Error::BadInput(format!(
                "{what} `{}` is not an hour; write the day and the hour of its start, 00..23: \
                 2026-02-09T05 (the hour from 05:00 to 06:00 in the project's time zone)",
                text.trim()
            ))
        })?;
    Ok(Some(hour))
}

/// The instants an interval names when an end of it is an hour, in `zone`: [start, end),
/// an hour end taking its whole hour (the instant an hour after its start: a skipped hour
/// is the next that exists, a repeated one the first) and a day end its whole day. None:
/// an interval of days.
pub fn hour_span(text: &str, zone: Tz) -> Result<Option<(DateTime<Utc>, DateTime<Utc>)>> {
    use crate::dates::period::{local, midnight};
    let (a, b) = text.trim().split_once("..").unwrap_or((text, text));
    let (from, to) = (
        parse_hour(a, "interval start")?,
        parse_hour(b, "interval end")?,
    );
    if from.is_none() && to.is_none() {
        return Ok(None);
    }
    let days = Interval::parse(text)?;
    let start = match from {
        Some(h) => local(h, zone),
        None => midnight(days.start, zone),
    };
    let end = match to {
        Some(h) => local(h, zone) + chrono::Duration::hours(1),
        None => midnight(days.end.succ_opt().unwrap_or(days.end), zone),
    };
    match start < end {
        true => Ok(Some((start, end))),
        false => Err(Error::BadInput(format!(
            "interval `{}` ends before it starts; write the earlier hour first",
            text.trim()
        ))),
    }
}

fn in_range(date: Date) -> bool {
    (1..=9999).contains(&date.year())
}

pub fn fmt_date(date: Date) -> String {
    date.format(DATE_FORMAT).to_string()
}

/// The first date of `interval` that has not ended yet at `now` in `zone`, and the
/// instant it ends (midnight after it, there).
pub fn first_unfinished(
    interval: Interval,
    now: DateTime<Utc>,
    zone: Tz,
) -> Option<(Date, DateTime<Utc>)> {
    let today = now.with_timezone(&zone).date_naive();
    let first = interval.start.max(today);
    if first > interval.end {
        return None;
    }
    let next_midnight = first.succ_opt()?.and_hms_opt(0, 0, 0)?;
    // A zone whose clocks skip midnight (a DST change, e.g. America/Santiago) ends the
    // day at the first instant of the next one: the first local time after the gap.
    let ends = (0..=24 * 4)
        .map(|quarter| next_midnight + chrono::Duration::minutes(15 * quarter))
        .find_map(|local| zone.from_local_datetime(&local).earliest())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| Utc.from_utc_datetime(&next_midnight));
    Some((first, ends))
}

/// Groups dates into contiguous runs, for reports ("2026-02-09..2026-02-11").
pub fn contiguous(dates: &[Date]) -> Vec<Interval> {
    let keyed = dates.iter().map(|d| (*d, ())).collect();
    contiguous_by(keyed)
        .into_iter()
        .map(|(range, _)| range)
        .collect()
}

/// Groups dates into contiguous runs of consecutive days with the same key, in date order.
pub fn contiguous_by<K: PartialEq>(mut dates: Vec<(Date, K)>) -> Vec<(Interval, K)> {
    dates.sort_by_key(|(date, _)| *date);
    let mut out: Vec<(Interval, K)> = Vec::new();
    for (date, key) in dates {
        match out.last_mut() {
            Some((range, k)) if *k == key && range.end.succ_opt() == Some(date) => range.end = date,
            _ => out.push((Interval::single(date), key)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_has_ended_at_midnight_after_it_in_its_zone() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let feb = Interval::parse("2026-02-14..2026-02-16").unwrap();
        let d = |s: &str| parse_date(s, "d").unwrap();
        // 2026-02-15 23:59 UTC: the 15th has not ended in UTC; the 16th neither.
        let (first, ends) = first_unfinished(feb, at("2026-02-15T23:59:00Z"), Tz::UTC).unwrap();
        assert_eq!((first, ends), (d("2026-02-15"), at("2026-02-16T00:00:00Z")));
        // The same instant is 08:59 on the 16th in Seoul: the 15th has ended there.
        let (first, ends) =
            first_unfinished(feb, at("2026-02-15T23:59:00Z"), Tz::Asia__Seoul).unwrap();
        assert_eq!((first, ends), (d("2026-02-16"), at("2026-02-16T15:00:00Z")));
        // Everything ended.
        assert_eq!(
            first_unfinished(feb, at("2026-02-17T00:00:00Z"), Tz::UTC),
            None
        );
        // America/Santiago skips 2026-09-06 00:00..01:00: the 5th ends at 01:00 there.
        let gap = Interval::parse("2026-09-05").unwrap();
        let santiago: Tz = "America/Santiago".parse().unwrap();
        let (_, ends) = first_unfinished(gap, at("2026-09-05T12:00:00Z"), santiago).unwrap();
        assert_eq!(ends, at("2026-09-06T04:00:00Z"));
        // Exactly at midnight the day before has ended.
        let one = Interval::parse("2026-02-16").unwrap();
        assert_eq!(
            first_unfinished(one, at("2026-02-17T00:00:00Z"), Tz::UTC),
            None
        );
        assert!(first_unfinished(one, at("2026-02-16T23:59:59Z"), Tz::UTC).is_some());
    }

    fn d(s: &str) -> Date {
        parse_date(s, "test").unwrap()
    }

    #[test]
    fn parses_single_dates_and_ranges() {
        assert_eq!(
            Interval::parse("2026-02-09").unwrap(),
            Interval::single(d("2026-02-09"))
        );
        let i = Interval::parse("2026-02-09..2026-02-11").unwrap();
        assert_eq!(i.len(), 3);
        let all: Vec<String> = i.dates().map(fmt_date).collect();
        assert_eq!(all, ["2026-02-09", "2026-02-10", "2026-02-11"]);
        assert_eq!(i.to_string(), "2026-02-09..2026-02-11");
    }

    #[test]
    fn crosses_month_and_leap_day() {
        let i = Interval::parse("2028-02-28..2028-03-01").unwrap();
        let all: Vec<String> = i.dates().map(fmt_date).collect();
        assert_eq!(all, ["2028-02-28", "2028-02-29", "2028-03-01"]);
    }

    #[test]
    fn refuses_impossible_reversed_and_misspelt() {
        for bad in [
            "2026-02-30",
            "2026-13-01..2026-13-02",
            "2026-02-11..2026-02-09",
            "last week",
            "2026-2-9",
            "20260209",
            "2026-02-09..",
            "..2026-02-09",
            "2026-02-09...2026-02-10",
            "",
        ] {
            let err = Interval::parse(bad).unwrap_err();
            assert!(matches!(err, Error::BadInput(_)), "{bad}: {err}");
        }
        let msg = Interval::parse("2026-02-11..2026-02-09")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("2026-02-09..2026-02-11"), "{msg}");
        let msg = Interval::parse("2026-02-30").unwrap_err().to_string();
        assert!(msg.contains("not a date on the calendar"), "{msg}");
    }

    #[test]
    fn months_and_years_are_their_days() {
        let at = |s: &str| Interval::parse(s).unwrap().to_string();
        assert_eq!(at("2026-11"), "2026-11-01..2026-11-30");
        assert_eq!(at("2028-02"), "2028-02-01..2028-02-29");
        assert_eq!(at("2026"), "2026-01-01..2026-12-31");
        assert_eq!(at("2026-11..2027-01"), "2026-11-01..2027-01-31");
        assert_eq!(at("2026-11-15..2026-12"), "2026-11-15..2026-12-31");
        assert_eq!(at("2025..2026-02-03"), "2025-01-01..2026-02-03");
        assert_eq!(at("9999-12"), "9999-12-01..9999-12-31");
        // ISO weeks start on Monday; week 1 holds the year's first Thursday.
        assert_eq!(at("2026-W06"), "2026-02-02..2026-02-08");
        assert_eq!(at("2026-W01"), "2025-12-29..2026-01-04");
        assert_eq!(at("2026-W53"), "2026-12-28..2027-01-03");
        assert_eq!(at("2026-Q1"), "2026-01-01..2026-03-31");
        assert_eq!(at("2026-Q4"), "2026-10-01..2026-12-31");
        assert_eq!(at("2026-W06..2026-Q1"), "2026-02-02..2026-03-31");
        assert_eq!(at("2026-02-09T05..2026-02-10T01"), "2026-02-09..2026-02-10");
        let in_zone = |t, zone: Tz| {
            let (a, b) = hour_span(t, zone).unwrap().unwrap();
            format!(
                "{}..{}",
                a.format("%Y-%m-%d %H:%M"),
                b.format("%Y-%m-%d %H:%M")
            )
        };
        let span = |t| in_zone(t, Tz::UTC);
        assert_eq!(span("2026-02-09T05"), "2026-02-09 05:00..2026-02-09 06:00");
        assert_eq!(
            span("2026-02-09T22..2026-02-10"),
            "2026-02-09 22:00..2026-02-11 00:00"
        );
        assert_eq!(hour_span("2026-02-09..2026-02-10", Tz::UTC).unwrap(), None);
        // Berlin, in UTC: the skipped 02:00 is the 03:00 that follows; the repeated 02:00
        // its first time.
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        assert_eq!(
            in_zone("2026-03-29T02", berlin),
            "2026-03-29 01:00..2026-03-29 02:00"
        );
        assert_eq!(
            in_zone("2026-03-29T01..2026-03-29T03", berlin),
            "2026-03-29 00:00..2026-03-29 02:00"
        );
        assert_eq!(
            in_zone("2026-10-25T02", berlin),
            "2026-10-25 00:00..2026-10-25 01:00"
        );
        for bad in [
            "2026-02-09T24",
            "2026-02-09T5",
            "2026-02-09T05..2026-02-09T04",
        ] {
            assert!(hour_span(bad, Tz::UTC).is_err(), "{bad}");
        }
        for bad in [
            "2027-W53",
            "2026-W00",
            "2026-Q5",
            "2026-Q0",
            "2026-13",
            "2026-00",
            "0000",
            "2026-1",
            "202",
            "2026-11..2026-10",
        ] {
            let err = Interval::parse(bad).unwrap_err();
            assert!(matches!(err, Error::BadInput(_)), "{bad}: {err}");
        }
        let msg = Interval::parse("2026-13").unwrap_err().to_string();
        assert!(msg.contains("not a period on the calendar"), "{msg}");
        // --as-of and --date stay one day.
        assert!(parse_date("2026-11", "--as-of").is_err());
    }

    #[test]
    fn years_outside_sqlite_are_refused() {
        assert!(Interval::parse("0000-12-31").is_err());
        assert!(Interval::yesterday_of(d("0001-01-01")).is_err());
        assert!(Interval::parse("9999-12-31").is_ok());
    }

    #[test]
    fn looking_back_widens_to_earlier_days() {
        let y = Interval::single(d("2026-03-01"));
        let back = y.looking_back(14).unwrap();
        assert_eq!(back.to_string(), "2026-02-15..2026-03-01");
        assert_eq!(y.looking_back(0).unwrap(), y);
        assert!(Interval::single(d("0001-01-05")).looking_back(5).is_err());
    }

    #[test]
    fn regular_run_is_yesterday() {
        assert_eq!(
            Interval::yesterday_of(d("2026-03-01")).unwrap(),
            Interval::single(d("2026-02-28"))
        );
    }

    #[test]
    fn groups_contiguous_dates() {
        let dates = [d("2026-02-01"), d("2026-02-02"), d("2026-02-04")];
        let groups: Vec<String> = contiguous(&dates).iter().map(|i| i.to_string()).collect();
        assert_eq!(groups, ["2026-02-01..2026-02-02", "2026-02-04"]);
    }
}
