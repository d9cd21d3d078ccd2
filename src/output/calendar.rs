//! The calendar of `sqlrun status` as text: each state's ASCII glyph and colour, the
//! summary (the span, the counts beside the glyphs, the notable dates as ranges) and the
//! calendar (a heading per year, a row per month, a cell per day). The glyphs are ASCII so
//! that the picture survives plain logs and terminals that are not UTF-8; colour is only
//! ever added on top of them.

use std::collections::BTreeMap;

use anstyle::{AnsiColor, Style};
use chrono::{Datelike, NaiveDate};

use crate::dates::interval::{fmt_date, Date, Interval};
use crate::reservations::glance::{Holding, Summary, NOTABLE};
use crate::text::numbers::thousands;
use crate::text::words::State;

/// A state's glyph in a calendar cell.
pub fn glyph(state: State) -> char {
    match state {
        State::Computed => '#',
        State::Sealed => 'S',
        State::Corrected => 'C',
        State::Changed => '!',
        State::Upstream => '^',
        State::Stale => '~',
        State::Missing => '.',
        State::Failed => 'X',
        State::Held => 'H',
    }
}

fn style(state: State) -> Style {
    match state {
        State::Computed => AnsiColor::Green.on_default(),
        State::Sealed => AnsiColor::Blue.on_default(),
        State::Corrected => AnsiColor::Blue.on_default().bold(),
        State::Changed => AnsiColor::Magenta.on_default().bold(),
        State::Upstream => AnsiColor::Magenta.on_default(),
        State::Stale => AnsiColor::Yellow.on_default(),
        // A gap stays plain: the dot says it, and a dim one would vanish.
        State::Missing => Style::new(),
        State::Failed => AnsiColor::Red.on_default().bold(),
        State::Held => AnsiColor::Cyan.on_default().bold(),
    }
}

/// The glyph, in its colour when `colour`.
fn cell(state: State, colour: bool) -> String {
    paint(&glyph(state).to_string(), style(state), colour)
}

fn paint(text: &str, style: Style, colour: bool) -> String {
    if colour && style != Style::new() {
        format!("{}{text}{}", style.render(), style.render_reset())
    } else {
        text.to_string()
    }
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
        thousands(n as i64),
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
    for g in NOTABLE {
        let ranges = &summary.ranges[&g];
        if ranges.is_empty() {
            continue;
        }
        let lines = if g == State::Held {
            summary.holders.iter().flat_map(held_lines).collect()
        } else {
            range_lines(ranges)
        };
        for (i, line) in lines.iter().enumerate() {
            let label = if i == 0 { g.as_str() } else { "" };
            text.push_str(&format!("{label:<11}{line}\n"));
        }
    }
    text.push_str(&mark_lines("checks", &summary.checks));
    text.push_str(&mark_lines("seals", &summary.seals));
    text
}

/// The dates of each mark, under one label: `checks     failed: 2026-01-03`, `seals
/// reissued: 2026-02-01..2026-02-07`.
fn mark_lines<M: std::fmt::Display>(label: &str, marks: &BTreeMap<M, Vec<Interval>>) -> String {
    let mut text = String::new();
    let mut label = label;
    for (mark, ranges) in marks.iter().filter(|(_, r)| !r.is_empty()) {
        let count = ranges.len();
        let mut words = vec![format!("{mark}:")];
        words.extend(ranges.iter().enumerate().map(|(i, r)| match i + 1 < count {
            true => format!("{r},"),
            false => r.to_string(),
        }));
        for line in wrapped(words) {
            text.push_str(&format!("{label:<11}{line}\n"));
            label = "";
        }
    }
    text
}

/// The counts of the states beside their glyphs, four to a line: the legend too.
fn counts_grid(counts: &BTreeMap<State, usize>, colour: bool) -> String {
    let width = counts.values().max().unwrap_or(&0).to_string().len();
    // `upstream` arises only in a pipeline of other grains or windows: counted where a
    // date is, so that the summary of every other pipeline keeps its two rows.
    let cells: Vec<String> = State::ALL
        .iter()
        .filter(|g| **g != State::Upstream || counts.get(g).is_some_and(|n| *n > 0))
        .map(|g| {
            let n = counts.get(g).copied().unwrap_or(0);
            format!("{} {:<9} {n:>width$}", cell(*g, colour), g.as_str())
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
        h.kind.map_or("?", |k| k.as_str()),
        h.by.as_deref().unwrap_or("?"),
        h.status.map_or("?", |s| s.as_str())
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
            .all(|(_, g)| *g == State::Missing)
    })
}

fn empty_years(summary: &Summary, first: i32, last: i32) -> String {
    let dates: usize = (first..=last)
        .filter_map(|y| year_in_span(summary.span, y))
        .map(|(start, end)| Interval { start, end }.len())
        .sum();
    format!(
        "{first}..{last}  nothing but missing dates ({})\n",
        thousands(dates as i64)
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
        let state = summary.cells.get(&day).copied().unwrap_or(State::Missing);
        line.push_str(&cell(state, colour));
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
    use crate::reservations::glance::testing::*;
    use crate::reservations::state::DateState;

    #[test]
    fn every_state_has_its_own_ascii_glyph() {
        let glyphs: std::collections::BTreeSet<char> =
            State::ALL.iter().map(|g| glyph(*g)).collect();
        assert_eq!(glyphs.len(), State::ALL.len());
        assert!(glyphs.iter().all(|c| c.is_ascii_graphic()));
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
        let summary = Summary::of(span, &states, &[]);
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
        let cal = calendar(&Summary::of(span, &states, &[]), false);
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
        let summary = Summary::of(span, &states, &[]);
        assert_eq!(summary.counts[&State::Computed], 3653);
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
        let text = summary_text(&Summary::of(span, &states, &[]), false, false);
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
    fn colour_is_only_on_top_of_the_glyphs() {
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
