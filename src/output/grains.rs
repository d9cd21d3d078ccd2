//! The weeks, months, quarters and years of the models coarser than the day, a cell per
//! partition: a row per model and year in `status` (text) and in `report --html`. Each
//! cell sits at its period's place in the year (week 7 is the seventh), so rows of
//! several years line up.

use std::fmt::Write;

use chrono::Datelike;

use crate::dates::period::{Grain, Period};
use crate::reservations::partitions::{ModelPartitions, PartitionCell};
use crate::text::words::PartitionState;

/// A partition state's glyph, as the day calendar's where the state is the same.
pub fn glyph(state: PartitionState) -> char {
    match state {
        PartitionState::Computed => '#',
        PartitionState::Provisional => 'p',
        PartitionState::Upstream => '^',
        PartitionState::Stale => '~',
        PartitionState::Missing => '.',
    }
}

/// Its class on the report page (report.css gives the colour and the glyph).
fn class(state: PartitionState) -> &'static str {
    match state {
        PartitionState::Computed => "c",
        PartitionState::Provisional => "v",
        PartitionState::Upstream => "u",
        PartitionState::Stale => "t",
        PartitionState::Missing => "m",
    }
}

/// The period's year and its place in that year, from 1 (an ISO week counts in its ISO
/// year: the week of 2026-12-28 is 2026's 53rd).
fn place(grain: Grain, period: Period) -> (i32, usize) {
    let day = match period {
        Period::Days(_, day) => day,
        Period::Hour(at) => at.date_naive(),
    };
    match grain {
        Grain::Week => (day.iso_week().year(), day.iso_week().week() as usize),
        Grain::Month => (day.year(), day.month() as usize),
        Grain::Quarter => (day.year(), day.month0() as usize / 3 + 1),
        _ => (day.year(), 1),
    }
}

/// How many places a year has at `grain`.
fn places(grain: Grain) -> usize {
    match grain {
        Grain::Week => 53,
        Grain::Month => 12,
        Grain::Quarter => 4,
        _ => 1,
    }
}

/// The ruler above a model's rows: where week 1, 10, 20, ... or each month's initial is.
fn ruler(grain: Grain) -> String {
    match grain {
        Grain::Week => {
            let mut line = vec![' '; 53];
            for week in [1usize, 10, 20, 30, 40, 50] {
                for (i, c) in week.to_string().chars().enumerate() {
                    line[week - 1 + i] = c;
                }
            }
            line.into_iter().collect::<String>().trim_end().to_string()
        }
        Grain::Month => "JFMAMJJASOND".to_string(),
        Grain::Quarter => "1234".to_string(),
        _ => String::new(),
    }
}

/// A model's cells by year, each year's cells at their places.
fn years(m: &ModelPartitions) -> Vec<(i32, Vec<Option<&PartitionCell>>)> {
    let mut out: Vec<(i32, Vec<Option<&PartitionCell>>)> = Vec::new();
    for cell in &m.cells {
        let (year, at) = place(m.grain, cell.period);
        if out.last().is_none_or(|(y, _)| *y != year) {
            out.push((year, vec![None; places(m.grain)]));
        }
        if let Some(slot) = out.last_mut().and_then(|(_, row)| row.get_mut(at - 1)) {
            *slot = Some(cell);
        }
    }
    out
}

/// `status`'s rows: a ruler per model, then a row per year.
pub fn rows_text(models: &[ModelPartitions]) -> String {
    let width = models.iter().map(|m| m.model.len()).max().unwrap_or(0);
    let mut text = String::from(
        "\nweeks, months, quarters and years, a cell per partition in its place in the year\n\
         (# computed, p provisional, ^ upstream, ~ stale, . missing):\n",
    );
    for m in models {
        let _ = writeln!(text, "{:width$}        {}", "", ruler(m.grain));
        for (year, row) in years(m) {
            let cells: String = row
                .iter()
                .map(|c| c.map_or(' ', |c| glyph(c.state)))
                .collect();
            let _ = writeln!(text, "{:<width$}  {year}  {}", m.model, cells.trim_end());
        }
    }
    text
}

/// The report's section: per model a table, a row per year, a square per partition.
pub fn rows_html(html: &mut String, models: &[ModelPartitions], esc: fn(&str) -> String) {
    if models.is_empty() {
        return;
    }
    html.push_str(
        "<section id=grains aria-labelledby=h-grains>\n<h2 id=h-grains>Weeks, months, \
         quarters and years</h2>\n",
    );
    for m in models {
        let model = esc(&m.model);
        let _ = writeln!(
            html,
            "<table class=\"cal big grains\" id=\"grain-{model}\">\n<caption>{model}: a square \
             per {}, by its first day in the span</caption>\n<tbody>",
            m.grain
        );
        for (year, row) in years(m) {
            let _ = write!(html, "<tr><th scope=row>{year}</th><td><p class=line>");
            for cell in row {
                match cell {
                    Some(c) => {
                        let title = esc(&format!("{} {}", c.label, c.state));
                        let _ = write!(
                            html,
                            "<i class={} tabindex=0 title=\"{title}\"></i>",
                            class(c.state)
                        );
                    }
                    None => html.push_str("<i class=o></i>"),
                }
            }
            html.push_str("</p></td></tr>\n");
        }
        html.push_str("</tbody>\n</table>\n");
    }
    html.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use chrono_tz::Tz;

    fn cells(grain: Grain, firsts: &[&str], state: PartitionState) -> ModelPartitions {
        let tz = Tz::UTC;
        let cells = firsts
            .iter()
            .map(|d| {
                let day = NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap();
                let period = Period::of_date(grain, day, tz);
                PartitionCell {
                    period,
                    label: period.label(tz),
                    state,
                }
            })
            .collect();
        ModelPartitions {
            model: format!("{grain}ly"),
            grain,
            cells,
        }
    }

    #[test]
    fn a_week_sits_at_its_number_and_a_month_at_its_initial() {
        let weeks = cells(
            Grain::Week,
            &["2026-02-09", "2026-02-16"],
            PartitionState::Upstream,
        );
        let months = cells(Grain::Month, &["2026-02-01"], PartitionState::Computed);
        let text = rows_text(&[weeks, months]);
        let lines: Vec<&str> = text.lines().collect();
        // The cells start after the name (7 wide), the year and two spaces each side.
        assert_eq!(
            lines[3],
            format!(
                "{:15}1        10        20        30        40        50",
                ""
            )
        );
        assert_eq!(lines[4], "weekly   2026        ^^", "weeks 7 and 8");
        assert_eq!(lines[5], format!("{:15}JFMAMJJASOND", ""));
        assert_eq!(lines[6], "monthly  2026   #");
    }

    #[test]
    fn an_iso_week_belongs_to_its_iso_year() {
        let weeks = cells(
            Grain::Week,
            &["2026-12-28", "2027-01-04"],
            PartitionState::Missing,
        );
        let rows = years(&weeks);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0, 2026);
        assert!(rows[0].1[52].is_some(), "2026 has 53 ISO weeks");
        assert!(rows[1].1[0].is_some(), "2027-W01");
    }
}
