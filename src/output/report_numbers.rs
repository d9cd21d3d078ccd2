//! `sqlrun report --html`: each model's numbers, as laid out on the page: a trend drawn as
//! inline SVG (no script, no library), the ISO weeks, and the dates with what went out
//! beside what is true now. Summed only where a column adds up (seals/numbers.rs).

use std::fmt::Write;

use chrono::Datelike;
use serde_json::Value as Json;

use crate::dates::interval::parse_date;
use crate::output::report::{esc, table_head, td};
use crate::seals::numbers::{Measure, ModelNumbers, Record, CHANGED_RUNS, RECENT_DATES};

pub fn numbers(html: &mut String, models: &[ModelNumbers]) {
    if models.is_empty() {
        return;
    }
    html.push_str(
        "<section id=numbers aria-labelledby=h-numbers>\n<h2 id=h-numbers>Numbers</h2>\n",
    );
    html.push_str(
        "<p class=hint>As true now (<code>MODEL_current</code>: corrections applied); on a sealed \
         date also what went out (<code>MODEL_sent_vs_now</code>). Only columns that add up are \
         summed over a date's keys and a week's dates.</p>\n",
    );
    for m in models {
        model_numbers(html, m);
    }
    html.push_str("</section>\n");
}

fn model_numbers(html: &mut String, m: &ModelNumbers) {
    let name = esc(&m.model.name);
    let _ = writeln!(html, "<h3 id=\"numbers-{name}\">{name}</h3>");
    if m.measures.is_empty() {
        html.push_str("<p>No value column holds numbers to show.</p>\n");
        return;
    }
    trend(html, m);
    weeks(html, m);
    dates(html, m);
    changes(html, m);
}

/// What the newest runs changed in the model (seals/numbers.rs, CHANGED_RUNS): per run the
/// partitions it replaced, the rows and each summed column's total before and after, and
/// the delta.
fn changes(html: &mut String, m: &ModelNumbers) {
    let name = esc(&m.model.name);
    if m.changes.is_empty() {
        let _ = writeln!(
            html,
            "<p id=\"changes-{name}\">No run replaced a partition of {name} in these dates \
             (or the history of what it replaced is pruned).</p>"
        );
        return;
    }
    let summed: Vec<&Measure> = m.measures.iter().filter(|x| x.adds_up()).collect();
    let mut columns: Vec<String> = [
        "Run",
        "Dates",
        "Replaced",
        "Built before",
        "Rows before",
        "Rows after",
    ]
    .map(String::from)
    .to_vec();
    for x in &summed {
        let c = esc(&x.column);
        columns.extend([
            format!("{c} before"),
            format!("{c} after"),
            format!("{c} delta"),
        ]);
    }
    let caption = format!(
        "{name}: what the newest runs changed, newest first<br><small>Per run (at most \
         {CHANGED_RUNS}) that replaced partitions of these dates: before is what it took out \
         (<code>{history}</code>), after what it wrote (its rows, in the table or replaced \
         since); sealed dates are corrected, not replaced (see Corrections)</small>",
        history = esc(&m.model.history_table),
    );
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    table_head(html, &format!("\"changes-{name}\""), &caption, &columns);
    for r in &m.changes {
        let _ = write!(html, "<tr data-run={}>", attr(&r["run_id"].to_string()));
        td(html, &r["run_id"].to_string());
        let (first, last) = (
            r["first_ds"].as_str().unwrap_or_default(),
            r["last_ds"].as_str().unwrap_or_default(),
        );
        td(
            html,
            &match first == last {
                true => first.to_string(),
                false => format!("{first}..{last}"),
            },
        );
        for column in ["partitions", "built_before", "rows_before", "rows_after"] {
            let raw = &r[column];
            let _ = write!(
                html,
                "<td data-col={} data-v={}>{}</td>",
                column,
                attr(&raw.to_string()),
                esc(&raw.to_string())
            );
        }
        for x in &summed {
            value_cell(html, r, &format!("before_{}", x.column), x);
            value_cell(html, r, &format!("after_{}", x.column), x);
            let column = format!("delta_{}", x.column);
            let raw = r.get(&column).unwrap_or(&Json::Null);
            let _ = write!(
                html,
                "<td data-col={} data-v={}>{}</td>",
                attr(&column),
                attr(&raw.to_string()),
                esc(&x.kind.show_delta(Some(raw)))
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n");
}

/// The value of `column` in a row, as its kind shows it.
fn shown(row: &Record, column: &str, measure: &Measure) -> String {
    measure.kind.show(row.get(column).unwrap_or(&Json::Null))
}

/// A cell with its value for a reader (or a test) beside what people read.
fn value_cell(html: &mut String, row: &Record, column: &str, measure: &Measure) {
    let raw = row.get(column).unwrap_or(&Json::Null);
    let _ = write!(
        html,
        "<td data-col={} data-v={}>{}</td>",
        attr(column),
        attr(&raw.to_string()),
        esc(&shown(row, column, measure))
    );
}

/// An attribute's value, quoted only where it must be: ten years of weeks are many cells.
fn attr(text: &str) -> String {
    match text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        && !text.is_empty()
    {
        true => text.to_string(),
        false => format!("\"{}\"", esc(text)),
    }
}

/// `2026-W02`: the ISO week of its Monday.
fn iso_week(monday: &str) -> String {
    match parse_date(monday, "week") {
        Ok(d) => format!("{}-W{:02}", d.iso_week().year(), d.iso_week().week()),
        Err(_) => monday.to_string(),
    }
}

fn weeks(html: &mut String, m: &ModelNumbers) {
    let name = esc(&m.model.name);
    let summed: Vec<&Measure> = m.measures.iter().filter(|x| x.adds_up()).collect();
    let not: Vec<&str> = m
        .model
        .values
        .iter()
        .filter(|v| !summed.iter().any(|s| &s.column == *v))
        .map(String::as_str)
        .collect();
    let mut columns = vec!["Week".to_string(), "Dates".into()];
    columns.extend(summed.iter().map(|s| esc(&s.column)));
    let caption = format!(
        "{name}: per ISO week (from Monday), summed in SQL{}",
        match not.is_empty() {
            true => String::new(),
            false => format!(
                "<br><small>Not summed, they do not add up: {}</small>",
                esc(&not.join(", "))
            ),
        }
    );
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    table_head(html, &format!("\"weeks-{name}\""), &caption, &columns);
    for w in &m.weeks {
        let monday = w["week"].as_str().unwrap_or_default();
        let _ = write!(html, "<tr data-week={}>", attr(monday));
        td(html, &iso_week(monday));
        td(html, &w["dates"].to_string());
        for s in &summed {
            value_cell(html, w, &format!("now_{}", s.column), s);
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n");
}

fn dates(html: &mut String, m: &ModelNumbers) {
    let name = esc(&m.model.name);
    let sealed = m.dates.iter().any(|d| !d["changed_keys"].is_null());
    let mut columns = vec!["Date".to_string()];
    columns.extend(m.measures.iter().map(|x| esc(&x.column)));
    if sealed {
        columns.extend(
            m.measures
                .iter()
                .map(|x| format!("sent {}", esc(&x.column))),
        );
        columns.push("Sent vs now".into());
    }
    let caption = format!(
        "{name}: per date, newest first<br><small>The latest {RECENT_DATES} dates of the \
         span (from {}), and every earlier sealed date whose numbers changed since they \
         went out</small>",
        esc(&m.recent)
    );
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    table_head(html, &format!("\"dates-{name}\""), &caption, &columns);
    for d in &m.dates {
        date_row(html, m, d, sealed);
    }
    html.push_str("</tbody>\n</table>\n");
}

fn date_row(html: &mut String, m: &ModelNumbers, d: &Record, sealed: bool) {
    let _ = write!(
        html,
        "<tr data-ds={}>",
        attr(d["ds"].as_str().unwrap_or_default())
    );
    td(html, d["ds"].as_str().unwrap_or_default());
    for x in &m.measures {
        value_cell(html, d, &format!("now_{}", x.column), x);
    }
    if !sealed {
        html.push_str("</tr>\n");
        return;
    }
    for x in &m.measures {
        value_cell(html, d, &format!("sent_{}", x.column), x);
    }
    td(html, &sent_vs_now(m, d));
    html.push_str("</tr>\n");
}

/// How a sealed date's numbers stand against what went out: `unchanged`, or each
/// difference (`revenue +500`); `-` for a date not sealed.
fn sent_vs_now(m: &ModelNumbers, d: &Record) -> String {
    let Some(changed) = d["changed_keys"].as_i64() else {
        return "-".into();
    };
    let deltas: Vec<String> = m
        .measures
        .iter()
        .filter_map(|x| {
            let (sent, now) = (
                &d[&format!("sent_{}", x.column)],
                &d[&format!("now_{}", x.column)],
            );
            let delta = x.kind.delta(sent, now)?;
            (delta.as_f64() != Some(0.0))
                .then(|| format!("{} {}", x.column, x.kind.show_delta(Some(&delta))))
        })
        .collect();
    match (changed, deltas.is_empty()) {
        (0, _) => "unchanged".into(),
        (n, true) => format!("{n} keys changed"),
        (_, false) => format!("changed: {}", deltas.join(", ")),
    }
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 140.0;

/// The first value column's trend, per date over a short span, per week over a long one:
/// a line in inline SVG, with its lowest and highest values and its first and last period.
fn trend(html: &mut String, m: &ModelNumbers) {
    let measure = m
        .measures
        .iter()
        .find(|x| x.adds_up())
        .unwrap_or(&m.measures[0]);
    // Over more than a quarter a line per date is noise: weeks (of a column that adds up).
    let by_week = m.weeks.len() > 13 && measure.adds_up();
    let (rows, at, unit): (Vec<&Record>, &str, &str) = match by_week {
        true => (m.weeks.iter().collect(), "week", "week"),
        false => (m.dates.iter().rev().collect(), "ds", "date"),
    };
    let column = format!("now_{}", measure.column);
    let points: Vec<(String, f64)> = rows
        .iter()
        .filter_map(|r| Some((r[at].as_str()?.to_string(), r.get(&column)?.as_f64()?)))
        .collect();
    if points.len() < 2 {
        return;
    }
    let (low, high) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(p.1), h.max(p.1)));
    let title = format!(
        "{}: {} per {unit}, {} to {}; lowest {}, highest {}",
        m.model.name,
        measure.column,
        points[0].0,
        points[points.len() - 1].0,
        measure.kind.show(&number(low)),
        measure.kind.show(&number(high)),
    );
    let _ = write!(
        html,
        "<figure class=trend><svg id=\"trend-{}\" data-points={} viewBox=\"0 0 {WIDTH} {}\" \
         width={WIDTH} height={} role=img><title>{}</title>",
        esc(&m.model.name),
        points.len(),
        HEIGHT + 20.0,
        HEIGHT + 20.0,
        esc(&title)
    );
    line(html, &points, (low, high));
    let _ = writeln!(
        html,
        "<text x=0 y={} font-size=11>{}</text><text x={WIDTH} y={} font-size=11 \
         text-anchor=end>{}</text></svg><figcaption>{}</figcaption></figure>",
        HEIGHT + 16.0,
        esc(&points[0].0),
        HEIGHT + 16.0,
        esc(&points[points.len() - 1].0),
        esc(&title)
    );
}

/// The polyline of the points scaled into the chart, and the zero line where it shows.
fn line(html: &mut String, points: &[(String, f64)], (low, high): (f64, f64)) {
    let span = if high > low { high - low } else { 1.0 };
    let y = |v: f64| 4.0 + (HEIGHT - 8.0) * (high - v) / span;
    let step = WIDTH / (points.len() - 1) as f64;
    if low < 0.0 && high > 0.0 {
        let _ = write!(
            html,
            "<line x1=0 x2={WIDTH} y1={0:.1} y2={0:.1} stroke=#999 stroke-dasharray=4></line>",
            y(0.0)
        );
    }
    html.push_str("<polyline fill=none stroke=#1565c0 stroke-width=1.5 points=\"");
    for (i, (_, v)) in points.iter().enumerate() {
        let _ = write!(html, "{:.1},{:.1} ", i as f64 * step, y(*v));
    }
    html.push_str("\"></polyline>");
}

/// An f64 as JSON: whole when it is whole, so an integer column shows as one.
fn number(x: f64) -> Json {
    match x.fract() == 0.0 && x.abs() < 9.0e15 {
        true => Json::from(x as i64),
        false => serde_json::Number::from_f64(x).map_or(Json::Null, Json::Number),
    }
}
