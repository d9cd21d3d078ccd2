//! The state at a glance, for `sqlrun status`: each date's state in a word and an ASCII
//! glyph, a span's summary (counts per state, the notable dates as contiguous ranges) and
//! its calendar (a heading per year, a row per month, a cell per day). Plain values in,
//! text out; the glyphs are ASCII so that the picture survives plain logs and terminals
//! that are not UTF-8, and colour is only ever added on top of them.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use anstyle::{AnsiColor, Style};
use chrono::{Datelike, NaiveDate};

use crate::dates::{DateState, ModelState};
use crate::interval::{contiguous, fmt_date, parse_date, Date, Interval};

/// A date's state as the calendar shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Glance {
    /// Computed by the models' current versions, nothing else to say.
    Computed,
    /// Computed and sealed (its numbers went out).
    Sealed,
    /// Sealed, and a later run found other numbers: corrections were written.
    Corrected,
    /// A source row of the date changed after it was computed (late data).
    Changed,
    /// Computed by another version of a model in scope.
    Stale,
    /// Never computed, or a model in scope has no rows on it.
    Missing,
    /// Its latest attempt failed (rows from an earlier build, if any, stay).
    Failed,
    /// A run holds it now (reserved or running).
    Held,
}

impl Glance {
    /// In the order the summary and the legend list them.
    pub const ALL: [Glance; 8] = [
        Glance::Computed,
        Glance::Sealed,
        Glance::Corrected,
        Glance::Changed,
        Glance::Stale,
        Glance::Missing,
        Glance::Failed,
        Glance::Held,
    ];

    /// Which state a date in several of them shows, the first that applies: who is on
    /// it now, then what went wrong, then what is behind, then what went out.
    pub const PRECEDENCE: [Glance; 8] = [
        Glance::Held,
        Glance::Failed,
        Glance::Missing,
        Glance::Changed,
        Glance::Stale,
        Glance::Corrected,
        Glance::Sealed,
        Glance::Computed,
    ];

    /// The states a summary lists as ranges, in its order.
    pub const NOTABLE: [Glance; 7] = [
        Glance::Missing,
        Glance::Failed,
        Glance::Changed,
        Glance::Stale,
        Glance::Held,
        Glance::Sealed,
        Glance::Corrected,
    ];

    /// The state a date shows: the first of `PRECEDENCE` that applies. `scope` lists the
    /// models in scope (`Pipeline::signature`).
    pub fn of(state: &DateState, scope: &str) -> Glance {
        Glance::PRECEDENCE
            .into_iter()
            .find(|g| g.applies(state, scope))
            .unwrap_or(Glance::Missing)
    }

    /// Whether a date is in this state, whatever other states it is in too.
    pub fn applies(self, s: &DateState, scope: &str) -> bool {
        match self {
            Glance::Held => s.held_by.is_some(),
            Glance::Failed => s.failed(),
            Glance::Missing => s.missing(scope),
            Glance::Changed => s.changed(),
            // Built by another version; a model with no rows at all is missing instead.
            Glance::Stale => {
                s.computed()
                    && s.model_states(scope)
                        .iter()
                        .any(|(_, m)| *m == ModelState::Stale)
            }
            Glance::Corrected => s.corrections > 0,
            Glance::Sealed => s.sealed(),
            Glance::Computed => s.computed(),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Glance::Computed => "computed",
            Glance::Sealed => "sealed",
            Glance::Corrected => "corrected",
            Glance::Changed => "changed",
            Glance::Stale => "stale",
            Glance::Missing => "missing",
            Glance::Failed => "failed",
            Glance::Held => "held",
        }
    }

    pub fn glyph(self) -> char {
        match self {
            Glance::Computed => '#',
            Glance::Sealed => 'S',
            Glance::Corrected => 'C',
            Glance::Changed => '!',
            Glance::Stale => '~',
            Glance::Missing => '.',
            Glance::Failed => 'X',
            Glance::Held => 'H',
        }
    }

    fn style(self) -> Style {
        match self {
            Glance::Computed => AnsiColor::Green.on_default(),
            Glance::Sealed => AnsiColor::Blue.on_default(),
            Glance::Corrected => AnsiColor::Blue.on_default().bold(),
            Glance::Changed => AnsiColor::Magenta.on_default().bold(),
            Glance::Stale => AnsiColor::Yellow.on_default(),
            // A gap stays plain: the dot says it, and a dim one would vanish.
            Glance::Missing => Style::new(),
            Glance::Failed => AnsiColor::Red.on_default().bold(),
            Glance::Held => AnsiColor::Cyan.on_default().bold(),
        }
    }

    /// The glyph, in its colour when `colour`.
    fn cell(self, colour: bool) -> String {
        paint(&self.glyph().to_string(), self.style(), colour)
    }
}

impl std::fmt::Display for Glance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether output may be coloured: only on a terminal, and never when `NO_COLOR` is set
/// to anything but the empty string (https://no-color.org).
pub fn colour_allowed(terminal: bool, no_color: Option<&OsStr>) -> bool {
    terminal && no_color.is_none_or(OsStr::is_empty)
}

fn paint(text: &str, style: Style, colour: bool) -> String {
    if colour && style != Style::new() {
        format!("{}{text}{}", style.render(), style.render_reset())
    } else {
        text.to_string()
    }
}

/// Dates one run holds, and who that run is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    pub run_id: i64,
    pub kind: Option<String>,
    pub by: Option<String>,
    pub status: Option<String>,
    /// Why the holder counts as gone (the next apply, reserve or seal reclaims its dates).
    pub gone: Option<String>,
    pub ranges: Vec<Interval>,
}

/// A span at a glance: how many dates show each state, and the notable dates as ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub span: Interval,
    /// Each date once, in the state the calendar shows; every state, zeros included.
    pub counts: BTreeMap<Glance, usize>,
    /// The dates whose cell shows each notable state, as contiguous ranges (a sealed date
    /// that was corrected is under `corrected`; a held date never computed, under `held`).
    pub ranges: BTreeMap<Glance, Vec<Interval>>,
    /// The held dates per holder, in date order.
    pub holders: Vec<Holding>,
    /// The state each date of the span shows (a date the state store has no row for is
    /// missing).
    pub cells: BTreeMap<Date, Glance>,
}

impl Summary {
    /// `states` are the dates of `span` (a date without one is missing); `dead` the
    /// holders that are gone, with why.
    pub fn of(span: Interval, states: &[DateState], scope: &str, dead: &[(i64, String)]) -> Self {
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
        let cells: BTreeMap<Date, Glance> = known
            .iter()
            .map(|(d, s)| (*d, s.map_or(Glance::Missing, |s| Glance::of(s, scope))))
            .collect();
        let mut counts: BTreeMap<Glance, usize> = Glance::ALL.iter().map(|g| (*g, 0)).collect();
        for g in cells.values() {
            *counts.entry(*g).or_default() += 1;
        }
        // The ranges are the cells' too, so that counts, ranges and the calendar agree.
        let ranges = Glance::NOTABLE
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
        let held: Vec<(Date, &DateState)> = known
            .iter()
            .filter_map(|(d, s)| s.filter(|s| s.held_by.is_some()).map(|s| (*d, s)))
            .collect();
        Summary {
            span,
            counts,
            ranges,
            holders: holdings(&held, dead),
            cells,
        }
    }

    /// Nothing but computed dates.
    pub fn all_computed(&self) -> bool {
        self.ranges.values().all(Vec::is_empty)
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
                kind: s.holder_kind.clone(),
                by: s.holder_by.clone(),
                status: s.holder_status.clone(),
                gone: dead
                    .iter()
                    .find(|(run, _)| *run == run_id)
                    .map(|(_, why)| why.clone()),
                ranges: contiguous(&dates),
            }
        })
        .collect()
}

/// Where the cells of a calendar row start, after the month's label (`2026-02`).
const LABEL: usize = 9;
/// The widest a line of the summary gets before it wraps.
const WIDTH: usize = 80;
/// The days the ruler over each year's months numbers.
const RULER_DAYS: [u32; 7] = [1, 5, 10, 15, 20, 25, 30];

/// The summary as text: the span, the count of each state beside its glyph (the legend),
/// and a line per notable state with its dates as ranges, wrapped at 80 columns.
pub fn summary_text(summary: &Summary, known_span: bool, colour: bool) -> String {
    let n = summary.span.len();
    let mut text = format!(
        "{}: {} date{}{}\n\n",
        summary.span,
        crate::report::thousands(n as i64),
        if n == 1 { "" } else { "s" },
        // Known from runs, holds and seals, and from the source rows.
        if known_span {
            ", from the first to the last date known"
        } else {
            ""
        }
    );
    text.push_str(&counts_grid(&summary.counts, colour));
    text.push('\n');
    if summary.all_computed() {
        text.push_str("every date computed and current\n");
    }
    for g in Glance::NOTABLE {
        let ranges = &summary.ranges[&g];
        if ranges.is_empty() {
            continue;
        }
        let lines = if g == Glance::Held {
            summary.holders.iter().flat_map(held_lines).collect()
        } else {
            range_lines(ranges)
        };
        for (i, line) in lines.iter().enumerate() {
            let label = if i == 0 { g.as_str() } else { "" };
            text.push_str(&format!("{label:<11}{line}\n"));
        }
    }
    text
}

/// The counts of the states beside their glyphs, four to a line: the legend too.
fn counts_grid(counts: &BTreeMap<Glance, usize>, colour: bool) -> String {
    let width = counts.values().max().unwrap_or(&0).to_string().len();
    let cells: Vec<String> = Glance::ALL
        .iter()
        .map(|g| {
            let n = counts.get(g).copied().unwrap_or(0);
            format!("{} {:<9} {n:>width$}", g.cell(colour), g.as_str())
        })
        .collect();
    cells
        .chunks(4)
        .map(|row| format!("  {}\n", row.join("    ")))
        .collect()
}

/// One holder's dates: the ranges, who holds them, and whether it is gone.
fn held_lines(h: &Holding) -> Vec<String> {
    let text = format!(
        "{} by run {} ({} by {}, {})",
        h.ranges
            .iter()
            .map(Interval::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        h.run_id,
        h.kind.as_deref().unwrap_or("?"),
        h.by.as_deref().unwrap_or("?"),
        h.status.as_deref().unwrap_or("?")
    );
    let mut lines = wrapped(text.split(' ').map(str::to_string).collect());
    if let Some(why) = &h.gone {
        let gone = format!(
            "run {} is gone: {why}; the next apply, reserve or seal reclaims its dates",
            h.run_id
        );
        lines.extend(wrapped(gone.split(' ').map(str::to_string).collect()));
    }
    lines
}

/// Ranges joined by `, ` in lines that fit beside the 11-column label.
fn range_lines(ranges: &[Interval]) -> Vec<String> {
    let count = ranges.len();
    let words = ranges.iter().enumerate().map(|(i, r)| match i + 1 < count {
        true => format!("{r},"),
        false => r.to_string(),
    });
    wrapped(words.collect())
}

/// Words joined by spaces in lines that fit beside the 11-column label (a word longer
/// than a line gets a line of its own).
fn wrapped(words: Vec<String>) -> Vec<String> {
    let room = WIDTH - 11;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in words {
        if !line.is_empty() && line.len() + 1 + word.len() > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    lines.push(line);
    lines
}

/// The calendar of a span: for each year a heading (the year and a ruler of days), then
/// a row per month of the span (`2026-02`) with a cell per day, its glyph two columns
/// apart. Days outside the span, or past the month's end, are blank. 70 columns at most;
/// a year takes 13 lines (and a blank line before the next).
pub fn calendar(summary: &Summary, colour: bool) -> String {
    let (first, last) = (summary.span.start.year(), summary.span.end.year());
    let mut blocks = Vec::new();
    let mut year = first;
    while year <= last {
        // Whole years with nothing in them (a mistyped source date far away, say) are one
        // line, not a screen each.
        let empty = (year..=last)
            .take_while(|y| all_missing(summary, *y))
            .count() as i32;
        if empty >= 2 {
            blocks.push(empty_years(summary, year, year + empty - 1));
            year += empty;
        } else {
            blocks.push(year_block(summary, year, colour));
            year += 1;
        }
    }
    blocks.join("\n")
}

/// The dates of `year` within the span.
fn year_in_span(span: Interval, year: i32) -> Option<(Date, Date)> {
    let start = NaiveDate::from_ymd_opt(year, 1, 1)?.max(span.start);
    let end = NaiveDate::from_ymd_opt(year, 12, 31)?.min(span.end);
    (start <= end).then_some((start, end))
}

fn all_missing(summary: &Summary, year: i32) -> bool {
    year_in_span(summary.span, year).is_some_and(|(start, end)| {
        summary
            .cells
            .range(start..=end)
            .all(|(_, g)| *g == Glance::Missing)
    })
}

fn empty_years(summary: &Summary, first: i32, last: i32) -> String {
    let dates: usize = (first..=last)
        .filter_map(|y| year_in_span(summary.span, y))
        .map(|(start, end)| Interval { start, end }.len())
        .sum();
    format!(
        "{first}..{last}  nothing but missing dates ({})\n",
        crate::report::thousands(dates as i64)
    )
}

/// A year's heading and a row per month of it within the span.
fn year_block(summary: &Summary, year: i32, colour: bool) -> String {
    let mut text = ruler(year);
    if let Some((start, end)) = year_in_span(summary.span, year) {
        let mut month = first_of_month(start);
        while month <= end {
            text.push_str(&month_row(month, summary, colour));
            month = next_month(month);
        }
    }
    text
}

/// A year's heading: the year, then each of `RULER_DAYS` over its column.
fn ruler(year: i32) -> String {
    let mut line: Vec<char> = format!("{year:<LABEL$}").chars().collect();
    for day in RULER_DAYS {
        let at = column(day);
        line.resize(at, ' ');
        line.extend(day.to_string().chars());
    }
    line.into_iter().collect::<String>() + "\n"
}

fn month_row(first: Date, summary: &Summary, colour: bool) -> String {
    let span = summary.span;
    let mut line = format!("{:<LABEL$}", &fmt_date(first)[..7]);
    let days = first.iter_days().take_while(|d| d.month() == first.month());
    for (i, day) in days.enumerate() {
        if i > 0 {
            line.push(' ');
        }
        if day < span.start || day > span.end {
            line.push(' ');
            continue;
        }
        let glance = summary.cells.get(&day).copied().unwrap_or(Glance::Missing);
        line.push_str(&glance.cell(colour));
    }
    line.trim_end().to_string() + "\n"
}

/// The column of a day's cell in a month's row.
fn column(day: u32) -> usize {
    LABEL + 2 * (day as usize - 1)
}

fn first_of_month(d: Date) -> Date {
    d.with_day(1).expect("every month has a first day")
}

fn next_month(first: Date) -> Date {
    let (y, m) = match first.month() {
        12 => (first.year() + 1, 1),
        m => (first.year(), m + 1),
    };
    // Past 9999-12 there is no next month sqlrun shows: the loop ends there.
    NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(NaiveDate::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        parse_date(s, "test").unwrap()
    }

    const SCOPE: &str = "models/daily_revenue@2";

    /// A date computed by run 1 with the current model, nothing else.
    fn computed(ds: &str) -> DateState {
        DateState {
            ds: ds.into(),
            built_run: Some(1),
            built_models: Some(SCOPE.into()),
            last_run: Some(1),
            last_status: Some("success".into()),
            ..DateState::default()
        }
    }

    fn never(ds: &str) -> DateState {
        DateState {
            ds: ds.into(),
            ..DateState::default()
        }
    }

    fn held(mut s: DateState, run: i64) -> DateState {
        s.held_by = Some(run);
        s.holder_kind = Some("backfill".into());
        s.holder_by = Some("planner".into());
        s.holder_status = Some("reserved".into());
        s
    }

    fn failed(mut s: DateState) -> DateState {
        s.last_run = Some(9);
        s.last_status = Some("failed".into());
        s
    }

    fn sealed(mut s: DateState, corrections: i64) -> DateState {
        s.sealed_at = Some("2026-02-08 00:00:00".into());
        s.corrections = corrections;
        s
    }

    #[test]
    fn precedence_held_failed_missing_changed_stale_corrected_sealed_computed() {
        let g = |s: &DateState| Glance::of(s, SCOPE);
        assert_eq!(g(&computed("2026-02-01")), Glance::Computed);
        assert_eq!(g(&never("2026-02-01")), Glance::Missing);
        assert_eq!(g(&sealed(computed("2026-02-01"), 0)), Glance::Sealed);
        assert_eq!(g(&sealed(computed("2026-02-01"), 2)), Glance::Corrected);
        let mut stale = sealed(computed("2026-02-01"), 2);
        stale.built_models = Some("models/daily_revenue@1".into());
        assert_eq!(g(&stale), Glance::Stale);
        let mut changed = stale.clone();
        changed.source_changed = true;
        assert_eq!(g(&changed), Glance::Changed);
        // Never computed: a source change does not make it changed, it is missing.
        let mut gap = never("2026-02-01");
        gap.source_changed = true;
        assert_eq!(g(&gap), Glance::Missing);
        assert_eq!(g(&failed(changed.clone())), Glance::Failed);
        assert_eq!(g(&failed(never("2026-02-01"))), Glance::Failed);
        assert_eq!(g(&held(failed(changed), 3)), Glance::Held);
        assert_eq!(g(&held(never("2026-02-01"), 3)), Glance::Held);
        // A model added later has no rows on an old date: missing, not stale.
        let mut partial = computed("2026-02-01");
        partial.built_models = Some("models/daily_revenue@2".into());
        let two = "models/daily_revenue@2,models/signs@1";
        assert_eq!(Glance::of(&partial, two), Glance::Missing);
        assert!(!Glance::Stale.applies(&partial, two));
    }

    #[test]
    fn every_state_has_its_own_ascii_glyph() {
        let glyphs: std::collections::BTreeSet<char> =
            Glance::ALL.iter().map(|g| g.glyph()).collect();
        assert_eq!(glyphs.len(), Glance::ALL.len());
        assert!(glyphs.iter().all(|c| c.is_ascii_graphic()));
        let mut by_precedence = Glance::PRECEDENCE.to_vec();
        by_precedence.sort();
        assert_eq!(by_precedence, Glance::ALL);
    }

    fn history() -> Summary {
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
        Summary::of(span, &states, SCOPE, &[(8, "its process is gone".into())])
    }

    #[test]
    fn summary_counts_each_date_once_and_lists_ranges_per_state() {
        let s = history();
        let count = |g| s.counts[&g];
        assert_eq!(count(Glance::Computed), 3);
        assert_eq!(count(Glance::Sealed), 1);
        assert_eq!(count(Glance::Corrected), 1);
        assert_eq!(count(Glance::Missing), 3);
        assert_eq!(count(Glance::Failed), 1);
        assert_eq!(count(Glance::Held), 3);
        assert_eq!(count(Glance::Stale), 0);
        assert_eq!(s.counts.values().sum::<usize>(), s.span.len());
        let ranges = |g| -> Vec<String> { s.ranges[&g].iter().map(|i| i.to_string()).collect() };
        // The ranges are the cells: a gap under a hold is held, a failed gap failed.
        assert_eq!(
            ranges(Glance::Missing),
            ["2026-02-03..2026-02-04", "2026-02-10"]
        );
        assert_eq!(ranges(Glance::Failed), ["2026-02-05"]);
        assert_eq!(ranges(Glance::Sealed), ["2026-02-01"]);
        assert_eq!(ranges(Glance::Corrected), ["2026-02-02"]);
        assert_eq!(ranges(Glance::Held), ["2026-02-07..2026-02-09"]);
        assert_eq!(s.holders.len(), 2);
        assert_eq!(s.holders[0].run_id, 7);
        assert_eq!(s.holders[0].gone, None);
        assert_eq!(s.holders[1].gone.as_deref(), Some("its process is gone"));
        assert_eq!(s.cells[&d("2026-02-10")], Glance::Missing);
    }

    #[test]
    fn summary_text_says_counts_and_ranges() {
        let text = summary_text(&history(), true, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "2026-01-30..2026-02-10: 12 dates, from the first to the last date known"
        );
        assert_eq!(
            lines[2],
            "  # computed  3    S sealed    1    C corrected 1    ! changed   0"
        );
        assert_eq!(
            lines[3],
            "  ~ stale     0    . missing   3    X failed    1    H held      3"
        );
        assert!(
            text.contains("\nmissing    2026-02-03..2026-02-04, 2026-02-10\n"),
            "{text}"
        );
        assert!(text.contains("\nfailed     2026-02-05\n"));
        assert!(
            text.contains(
                "\nheld       2026-02-07..2026-02-08 by run 7 (backfill by planner, reserved)\n\
             \x20          2026-02-09 by run 8 (backfill by planner, reserved)\n\
             \x20          run 8 is gone: its process is gone; the next apply, reserve or seal\n\
             \x20          reclaims its dates\n"
            ),
            "{text}"
        );
        assert!(text.contains("\nsealed     2026-02-01\n"), "{text}");
        assert!(text.contains("\ncorrected  2026-02-02\n"));
        assert!(!text.contains("\nstale"), "{text}");
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn whole_years_of_nothing_are_one_line() {
        let span = Interval::parse("2025-12-30..2206-02-01").unwrap();
        let states = [computed("2025-12-30"), computed("2206-02-01")];
        let summary = Summary::of(span, &states, SCOPE, &[]);
        let cal = calendar(&summary, false);
        let lines: Vec<&str> = cal.lines().collect();
        assert_eq!(lines[1], format!("2025-12{}# .", " ".repeat(60)));
        assert_eq!(lines[3], "2026..2205  nothing but missing dates (65,743)");
        assert!(lines[5].starts_with("2206     1"), "{cal}");
        assert_eq!(
            lines[6],
            "2206-01  . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . ."
        );
        assert_eq!(lines[7], "2206-02  #");
        assert_eq!(lines.len(), 8, "{cal}");
    }

    #[test]
    fn calendar_rows_have_a_cell_per_day_of_the_span() {
        let cal = calendar(&history(), false);
        let lines: Vec<&str> = cal.lines().collect();
        assert_eq!(
            lines[0],
            "2026     1       5         10        15        20        25        30"
        );
        // Each day's number stands over its cell.
        assert_eq!(lines[0].find("30"), Some(column(30)));
        assert_eq!(lines[0].find("15"), Some(column(15)));
        assert_eq!(
            lines[1],
            format!("2026-01{}# #", " ".repeat(column(30) - 7))
        );
        assert_eq!(lines[2], "2026-02  S C . . X # H H H .");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn a_year_heading_per_year_and_short_months_end_early() {
        let span = Interval::parse("2027-12-31..2028-03-01").unwrap();
        let states: Vec<DateState> = span.dates().map(|x| computed(&fmt_date(x))).collect();
        let cal = calendar(&Summary::of(span, &states, SCOPE, &[]), false);
        let lines: Vec<&str> = cal.lines().collect();
        assert!(lines[0].starts_with("2027     1"));
        assert_eq!(lines[1], format!("2027-12{}#", " ".repeat(62)));
        assert_eq!(lines[2], "");
        assert!(lines[3].starts_with("2028     1"));
        assert_eq!(lines[4], format!("2028-01  {}", vec!["#"; 31].join(" ")));
        assert_eq!(lines[5], format!("2028-02  {}", vec!["#"; 29].join(" ")));
        assert_eq!(lines[6], "2028-03  #");
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn ten_years_fit_in_80_columns_and_14_lines_a_year() {
        let span = Interval::parse("2016-01-01..2025-12-31").unwrap();
        let states: Vec<DateState> = span.dates().map(|x| computed(&fmt_date(x))).collect();
        let summary = Summary::of(span, &states, SCOPE, &[]);
        assert_eq!(summary.counts[&Glance::Computed], 3653);
        let cal = calendar(&summary, false);
        assert_eq!(cal.lines().count(), 10 * 13 + 9);
        assert!(cal.lines().all(|l| l.len() <= 70), "{cal}");
        let text = summary_text(&summary, false, false);
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
    }

    #[test]
    fn long_range_lists_wrap_under_their_label() {
        let span = Interval::parse("2026-01-01..2026-03-31").unwrap();
        // Every other day computed: 45 gaps of one day each.
        let states: Vec<DateState> = span
            .dates()
            .enumerate()
            .map(|(i, x)| match i % 2 {
                0 => computed(&fmt_date(x)),
                _ => never(&fmt_date(x)),
            })
            .collect();
        let text = summary_text(&Summary::of(span, &states, SCOPE, &[]), false, false);
        let missing: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("missing"))
            .take_while(|l| l.starts_with("missing") || l.starts_with("    "))
            .collect();
        assert!(missing.len() > 5, "{text}");
        assert!(missing.iter().all(|l| l.len() <= WIDTH), "{text}");
        let listed: Vec<&str> = missing
            .iter()
            .flat_map(|l| l[11..].split(", "))
            .map(|x| x.trim_end_matches(','))
            .collect();
        assert_eq!(listed.len(), 45);
        assert_eq!(listed[0], "2026-01-02");
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour_allowed(true, None));
        assert!(colour_allowed(true, Some(OsStr::new(""))));
        assert!(!colour_allowed(true, Some(OsStr::new("1"))));
        assert!(!colour_allowed(true, Some(OsStr::new("0"))));
        assert!(!colour_allowed(false, None));
        let s = history();
        let plain = calendar(&s, false);
        let coloured = calendar(&s, true);
        assert!(coloured.contains("\x1b[31m") || coloured.contains("\x1b[1m"));
        assert_ne!(plain, coloured);
        // Without the escapes, the same picture.
        let stripped = strip_escapes(&coloured);
        assert_eq!(stripped, plain);
    }

    fn strip_escapes(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
