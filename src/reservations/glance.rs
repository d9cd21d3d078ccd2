//! The state at a glance, for `sqlrun status`: each date's state (as
//! `system/date_states.sql` judged it), a span's summary (counts per state, the notable
//! dates as contiguous ranges) and the cells of its calendar. Plain values; the text
//! (glyphs, colour, the calendar's rows) is output/calendar.rs's.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use crate::dates::interval::{contiguous, parse_date, Date, Interval};
use crate::reservations::state::DateState;
use crate::text::words::{CheckMark, RunKind, RunStatus, SealMark, State};

/// The states a summary lists as ranges, in its order.
pub const NOTABLE: [State; 8] = [
    State::Missing,
    State::Failed,
    State::Changed,
    State::Upstream,
    State::Stale,
    State::Held,
    State::Sealed,
    State::Corrected,
];

/// Whether output may be coloured: only on a terminal, and never when `NO_COLOR` is set
/// to anything but the empty string (https://no-color.org).
pub fn colour_allowed(terminal: bool, no_color: Option<&OsStr>) -> bool {
    terminal && no_color.is_none_or(OsStr::is_empty)
}

/// Dates one run holds, and who that run is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    pub run_id: i64,
    pub kind: Option<RunKind>,
    pub by: Option<String>,
    pub status: Option<RunStatus>,
    /// Why the holder counts as gone (the next apply, reserve or seal reclaims its dates).
    pub gone: Option<String>,
    pub ranges: Vec<Interval>,
}

/// A span at a glance: how many dates show each state, and the notable dates as ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub span: Interval,
    /// Each date once, in the state the calendar shows; every state, zeros included.
    pub counts: BTreeMap<State, usize>,
    /// The dates whose cell shows each notable state, as contiguous ranges (a sealed date
    /// that was corrected is under `corrected`; a held date never computed, under `held`).
    pub ranges: BTreeMap<State, Vec<Interval>>,
    /// The held dates per holder, in date order.
    pub holders: Vec<Holding>,
    /// The dates whose checks failed (latest attempt) or warned (latest build), as ranges.
    pub checks: BTreeMap<CheckMark, Vec<Interval>>,
    /// The dates reissued (sealed, a later version went out) or unsealed, as ranges.
    pub seals: BTreeMap<SealMark, Vec<Interval>>,
    /// The state each date of the span shows (a date the state store has no row for is
    /// missing).
    pub cells: BTreeMap<Date, State>,
}

impl Summary {
    /// `states` are the dates of `span` (a date without one is missing); `dead` the
    /// holders that are gone, with why.
    pub fn of(span: Interval, states: &[DateState], dead: &[(i64, String)]) -> Self {
        let mut known: BTreeMap<Date, Option<&DateState>> =
            span.dates().map(|d| (d, None)).collect();
        for s in states {
            if let Some(slot) = parse_date(&s.ds, "date")
                .ok()
                .and_then(|d| known.get_mut(&d))
            {
                *slot = Some(s);
            }
        }
        let cells: BTreeMap<Date, State> = known
            .iter()
            .map(|(d, s)| (*d, s.map_or(State::Missing, |s| s.judged.state)))
            .collect();
        let mut counts: BTreeMap<State, usize> = State::ALL.iter().map(|g| (*g, 0)).collect();
        for g in cells.values() {
            *counts.entry(*g).or_default() += 1;
        }
        // The ranges are the cells' too, so that counts, ranges and the calendar agree.
        let ranges = NOTABLE
            .into_iter()
            .map(|g| {
                let dates: Vec<Date> = cells
                    .iter()
                    .filter(|(_, c)| **c == g)
                    .map(|(d, _)| *d)
                    .collect();
                (g, contiguous(&dates))
            })
            .collect();
        let checks = CheckMark::ALL
            .iter()
            .map(|mark| {
                let dates: Vec<Date> = known
                    .iter()
                    .filter(|(_, s)| s.is_some_and(|s| s.checks == Some(*mark)))
                    .map(|(d, _)| *d)
                    .collect();
                (*mark, contiguous(&dates))
            })
            .collect();
        let seals = SealMark::ALL
            .iter()
            .map(|mark| {
                let dates: Vec<Date> = known
                    .iter()
                    .filter(|(_, s)| s.is_some_and(|s| s.seal_mark() == Some(*mark)))
                    .map(|(d, _)| *d)
                    .collect();
                (*mark, contiguous(&dates))
            })
            .collect();
        let held: Vec<(Date, &DateState)> = known
            .iter()
            .filter_map(|(d, s)| s.filter(|s| s.held_by.is_some()).map(|s| (*d, s)))
            .collect();
        Summary {
            span,
            counts,
            ranges,
            holders: holdings(&held, dead),
            checks,
            seals,
            cells,
        }
    }

    /// Nothing but computed dates, and no check said anything.
    pub fn all_computed(&self) -> bool {
        self.ranges.values().all(Vec::is_empty)
            && self.checks.values().all(Vec::is_empty)
            && self.seals.values().all(Vec::is_empty)
    }
}

/// Held dates grouped by holder, holders in the order of their first date.
fn holdings(held: &[(Date, &DateState)], dead: &[(i64, String)]) -> Vec<Holding> {
    let mut by_run: Vec<(&DateState, Vec<Date>)> = Vec::new();
    for (d, s) in held {
        match by_run.iter_mut().find(|(h, _)| h.held_by == s.held_by) {
            Some((_, dates)) => dates.push(*d),
            None => by_run.push((s, vec![*d])),
        }
    }
    by_run
        .into_iter()
        .map(|(s, dates)| {
            let run_id = s.held_by.unwrap_or_default();
            Holding {
                run_id,
                kind: s.holder_kind,
                by: s.holder_by.clone(),
                status: s.holder_status,
                gone: dead
                    .iter()
                    .find(|(run, _)| *run == run_id)
                    .map(|(_, why)| why.clone()),
                ranges: contiguous(&dates),
            }
        })
        .collect()
}

#[cfg(test)]
pub mod testing {
    //! Dates in each state, as the template would judge them, for the tests of the
    //! summary here and of its text (output/calendar.rs).
    use super::*;
    use crate::dates::interval::fmt_date;
    use crate::reservations::state::Judged;

    /// A date computed by run 1 with the current models, nothing else.
    pub fn computed(ds: &str) -> DateState {
        DateState {
            ds: ds.into(),
            built_run: Some(1),
            last_run: Some(1),
            judged: Judged {
                computed: true,
                missing: false,
                state: State::Computed,
                ..Judged::default()
            },
            ..DateState::default()
        }
    }

    pub fn never(ds: &str) -> DateState {
        DateState {
            ds: ds.into(),
            ..DateState::default()
        }
    }

    pub fn held(mut s: DateState, run: i64) -> DateState {
        s.held_by = Some(run);
        s.holder_kind = Some(RunKind::Backfill);
        s.holder_by = Some("planner".into());
        s.holder_status = Some(RunStatus::Reserved);
        s.judged.state = State::Held;
        s
    }

    pub fn failed(mut s: DateState) -> DateState {
        s.last_run = Some(9);
        s.judged.state = State::Failed;
        s
    }

    pub fn sealed(mut s: DateState, corrections: i64) -> DateState {
        s.sealed_at = Some("2026-02-08 00:00:00".into());
        s.corrections = corrections;
        s.judged.state = if corrections > 0 {
            State::Corrected
        } else {
            State::Sealed
        };
        s
    }

    pub fn history() -> Summary {
        let span = Interval::parse("2026-01-30..2026-02-10").unwrap();
        let mut states: Vec<DateState> = span.dates().map(|x| computed(&fmt_date(x))).collect();
        states[2] = sealed(computed("2026-02-01"), 0);
        states[3] = sealed(computed("2026-02-02"), 1);
        states[4] = never("2026-02-03");
        states[5] = never("2026-02-04");
        states[6] = failed(never("2026-02-05"));
        states[8] = held(computed("2026-02-07"), 7);
        states[9] = held(never("2026-02-08"), 7);
        states[10] = held(never("2026-02-09"), 8);
        // 2026-02-10 has no row at all.
        states.pop();
        Summary::of(span, &states, &[(8, "its process is gone".into())])
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    fn d(s: &str) -> Date {
        parse_date(s, "test").unwrap()
    }

    #[test]
    fn summary_counts_each_date_once_and_lists_ranges_per_state() {
        let s = history();
        let count = |g| s.counts[&g];
        assert_eq!(count(State::Computed), 3);
        assert_eq!(count(State::Sealed), 1);
        assert_eq!(count(State::Corrected), 1);
        assert_eq!(count(State::Missing), 3);
        assert_eq!(count(State::Failed), 1);
        assert_eq!(count(State::Held), 3);
        assert_eq!(count(State::Stale), 0);
        assert_eq!(s.counts.values().sum::<usize>(), s.span.len());
        let ranges = |g| -> Vec<String> { s.ranges[&g].iter().map(|i| i.to_string()).collect() };
        // The ranges are the cells: a gap under a hold is held, a failed gap failed.
        assert_eq!(
            ranges(State::Missing),
            ["2026-02-03..2026-02-04", "2026-02-10"]
        );
        assert_eq!(ranges(State::Failed), ["2026-02-05"]);
        assert_eq!(ranges(State::Sealed), ["2026-02-01"]);
        assert_eq!(ranges(State::Corrected), ["2026-02-02"]);
        assert_eq!(ranges(State::Held), ["2026-02-07..2026-02-09"]);
        assert_eq!(s.holders.len(), 2);
        assert_eq!(s.holders[0].run_id, 7);
        assert_eq!(s.holders[0].gone, None);
        assert_eq!(s.holders[1].gone.as_deref(), Some("its process is gone"));
        assert_eq!(s.cells[&d("2026-02-10")], State::Missing);
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour_allowed(true, None));
        assert!(colour_allowed(true, Some(OsStr::new(""))));
        assert!(!colour_allowed(true, Some(OsStr::new("1"))));
        assert!(!colour_allowed(true, Some(OsStr::new("0"))));
        assert!(!colour_allowed(false, None));
    }
}
