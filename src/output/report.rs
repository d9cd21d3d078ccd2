//! `sqlrun report --html`: the page. Every word of a date is what `status --list` says of
//! it (`status::list_row`), every cell's state the one `status` shows; this only lays them
//! out as HTML, each value escaped, with no script, no network and no clock in it.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use chrono::{Datelike, NaiveDate, NaiveDateTime};
use serde_json::Value as Json;

use crate::dates::interval::{parse_date, Date, Interval};
use crate::error::Result;
use crate::output::calendar::glyph;
use crate::output::report_numbers::numbers;
use crate::output::status::list_row;
use crate::output::Output;
use crate::pipeline::Model;
use crate::reservations::glance::{Holding, Summary};
use crate::reservations::state::DateState;
use crate::run::history::Record;
use crate::seals::corrections::{Correction, ModelCorrections};
use crate::seals::numbers::ModelNumbers;
use crate::text::kinds::Kind;
use crate::text::numbers::thousands;
use crate::text::table::cell;
use crate::text::words::{CheckMark, DateStatus, State};

const STYLE: &str = include_str!("report.css");

/// One model's calendar: each date's state and what `status --list` says of it.
pub struct ModelCalendar {
    pub model: String,
    pub summary: Summary,
    /// A date's line, for its cell's title (a date the state store has no row of: none).
    pub titles: BTreeMap<Date, String>,
    /// What the checks said of a date, where they said something.
    pub checks: BTreeMap<Date, CheckMark>,
}

impl ModelCalendar {
    pub fn new(
        model: String,
        span: Interval,
        states: Vec<DateState>,
        dead: &[(i64, String)],
    ) -> Self {
        let summary = Summary::of(span, &states, dead);
        let titles = states
            .iter()
            .filter_map(|s| Some((parse_date(&s.ds, "date").ok()?, title(&list_row(s, dead)))))
            .collect();
        let checks = states
            .iter()
            .filter_map(|s| Some((parse_date(&s.ds, "date").ok()?, s.checks?)))
            .collect();
        ModelCalendar {
            model,
            summary,
            titles,
            checks,
        }
    }
}

/// A `status --list` line in brief: the date and its state, then only what there is to say.
fn title(row: &[String]) -> String {
    let said = |i: usize| Some(row[i].as_str()).filter(|v| *v != "-");
    let mut text = format!("{} {}", row[0], row[1]);
    if let Some(run) = said(2) {
        let _ = write!(text, "; run {run} {} {}", row[3], row[4]);
    }
    if let Some(version) = said(5).filter(|v| *v != "current") {
        let _ = write!(text, "; version: {version}");
    }
    let parts = [
        (6, ""),
        (7, "corrections: "),
        (8, "checks: "),
        (9, "held by "),
        (10, "last failure: "),
    ];
    for (i, label) in parts {
        if let Some(v) = said(i) {
            let _ = write!(text, "; {label}{v}");
        }
    }
    text
}

/// Everything the page shows.
pub struct Page<'a> {
    /// The database it was made from (a URL without its password).
    pub database: String,
    /// The time of its latest recorded change (a run or seal event made, started or
    /// finished, a correction written).
    pub latest: Option<String>,
    pub span: Option<Interval>,
    pub known_span: bool,
    pub calendars: &'a [ModelCalendar],
    pub runs: &'a [Record],
    pub seals: &'a [Record],
    pub corrections: &'a [ModelCorrections<'a>],
    /// Each model's numbers per date and week (none: no dates known).
    pub numbers: &'a [ModelNumbers<'a>],
    /// The weeks, months, quarters and years of the models coarser than the day.
    pub grains: &'a [crate::reservations::partitions::ModelPartitions],
}

pub fn page(p: &Page) -> String {
    let mut html = String::with_capacity(64 * 1024);
    html.push_str("<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n");
    html.push_str(
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
    );
    html.push_str("<meta name=viewport content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(html, "<title>sqlrun report: {}</title>", esc(&p.database));
    let _ = writeln!(html, "<style>\n{STYLE}</style>\n</head>\n<body>");
    html.push_str("<header>\n");
    heading(&mut html, p);
    legend(&mut html);
    html.push_str("</header>\n");
    html.push_str(
        "<section id=calendars aria-labelledby=h-calendars>\n<h2 id=h-calendars>Dates</h2>\n",
    );
    if p.calendars.is_empty() {
        html.push_str("<p>The database knows no dates yet.</p>\n");
    }
    for c in p.calendars {
        calendar(&mut html, c);
    }
    html.push_str("</section>\n");
    super::grains::rows_html(&mut html, p.grains, esc);
    numbers(&mut html, p.numbers);
    runs(&mut html, p.runs);
    // Who holds a date does not depend on the model: any calendar's holders are all of them.
    if let Some(first) = p.calendars.first() {
        holders(&mut html, &first.summary.holders);
    }
    html.push_str("</section>\n");
    seals(&mut html, p.seals);
    corrections(&mut html, p.corrections);
    html.push_str("</body>\n</html>\n");
    html
}

fn heading(html: &mut String, p: &Page) {
    let span = match p.span {
        Some(s) if p.known_span => format!(
            "{s} ({} dates, the first to the last known)",
            thousands(s.len() as i64)
        ),
        Some(s) => format!("{s} ({} dates)", thousands(s.len() as i64)),
        None => "none known".into(),
    };
    let models: Vec<&str> = p.calendars.iter().map(|c| c.model.as_str()).collect();
    let _ = write!(
        html,
        "<div>\n<h1>sqlrun report</h1>\n<dl class=facts>\n\
         <dt>Database</dt><dd>{}</dd>\n<dt>Latest recorded change</dt><dd>{}</dd>\n\
         <dt>Dates</dt><dd>{}</dd>\n<dt>Models</dt><dd>{}</dd>\n</dl>\n<p class=hint>Hover over a date, or move to it with Tab, to read what \
         <code>sqlrun status --list</code> says of it.</p>\n</div>\n",
        esc(&p.database),
        esc(p.latest.as_deref().unwrap_or("none")),
        esc(&span),
        esc(&models.join(", ")),
    );
}

/// The class a state's cells carry (the stylesheet gives each its colour and glyph).
fn class(state: State) -> &'static str {
    match state {
        State::Computed => "c",
        State::Sealed => "s",
        State::Corrected => "r",
        State::Changed => "g",
        State::Upstream => "u",
        State::Stale => "t",
        State::Missing => "m",
        State::Failed => "f",
        State::Held => "h",
    }
}

fn meaning(state: State) -> &'static str {
    match state {
        State::Computed => "computed by the models' current versions",
        State::Sealed => "computed and sealed: its numbers went out",
        State::Corrected => "sealed, and a later run found other numbers (corrections written)",
        State::Changed => "a source row changed after it was computed (late data)",
        State::Upstream => "a partition was built before a partition it reads was rebuilt",
        State::Stale => "computed by another version of a model",
        State::Missing => "never computed, or a model has no rows on it",
        State::Failed => "its latest attempt failed",
        State::Held => "a run holds it now (reserved or running)",
    }
}

fn legend(html: &mut String) {
    html.push_str(
        "<table class=legend>\n<caption>Legend: a state's glyph (the terminal calendar's) \
         and colour</caption>\n<thead><tr><th scope=col>Cell</th>\
         <th scope=col>State</th><th scope=col>Meaning</th></tr></thead>\n<tbody>\n",
    );
    for &state in State::ALL {
        let _ = writeln!(
            html,
            "<tr><td><i class={} aria-hidden=true></i> <code>{}</code></td><th scope=row>{}</th><td>{}</td></tr>",
            class(state),
            esc(&glyph(state).to_string()),
            state,
            meaning(state)
        );
    }
    html.push_str(
        "<tr><td><i class=\"c k\" aria-hidden=true></i> <code>outlined</code></td><th scope=row>checks</th>\
         <td>its checks failed (latest attempt) or warned (latest build); dashed: warned</td></tr>\n\
         </tbody>\n</table>\n",
    );
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A model's calendar: a row per year, a cell per month, a square per day.
fn calendar(html: &mut String, c: &ModelCalendar) {
    let span = c.summary.span;
    let model = esc(&c.model);
    let _ = write!(
        html,
        "<table class=\"cal{}\" id=\"cal-{model}\" data-model=\"{model}\">\n<caption>{model}: each date as \
         <code>sqlrun status --select {model}</code> judges it<br><small>{}</small></caption>\n<thead><tr><th scope=col>Year</th>",
        // A span of a year or less gets larger squares: there is room, and they read better.
        if span.len() <= 366 { " big" } else { "" },
        counts(&c.summary.counts)
    );
    for m in MONTHS {
        let _ = write!(html, "<th scope=col>{m}</th>");
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    for year in span.start.year()..=span.end.year() {
        let _ = write!(html, "<tr><th scope=row>{year}</th>");
        for month in 1..=12 {
            month_cell(html, c, year, month);
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n");
}

fn counts(counts: &BTreeMap<State, usize>) -> String {
    let said: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(s, n)| format!("{s} {}", thousands(*n as i64)))
        .collect();
    said.join(", ")
}

/// One month of a calendar: its days in the span, each a focusable square with its line.
fn month_cell(html: &mut String, c: &ModelCalendar, year: i32, month: u32) {
    let span = c.summary.span;
    let Some(first) = NaiveDate::from_ymd_opt(year, month, 1) else {
        return;
    };
    let next = first + chrono::Months::new(1);
    if next <= span.start || first > span.end {
        html.push_str("<td></td>");
        return;
    }
    let _ = write!(
        html,
        "<td aria-label=\"{year}-{month:02}\"><p class=w{}>",
        first.weekday().num_days_from_monday()
    );
    let mut day = first;
    while day < next && day <= span.end {
        if day < span.start {
            html.push_str("<i class=o></i>");
        } else {
            day_cell(html, c, day);
        }
        day = day.succ_opt().unwrap_or(next);
    }
    html.push_str("</p></td>");
}

fn day_cell(html: &mut String, c: &ModelCalendar, day: Date) {
    let state = c.summary.cells.get(&day).copied().unwrap_or(State::Missing);
    let title = match c.titles.get(&day) {
        Some(t) => esc(t),
        None => format!("{} {state}", crate::dates::interval::fmt_date(day)),
    };
    let mark = match c.checks.get(&day) {
        Some(CheckMark::Failed) => " k",
        Some(CheckMark::Warned) => " w",
        None => "",
    };
    let quote = if mark.is_empty() { "" } else { "\"" };
    let _ = write!(
        html,
        "<i class={quote}{}{mark}{quote} tabindex=0 title=\"{title}\"></i>",
        class(state)
    );
}

fn holders(html: &mut String, holders: &[Holding]) {
    if holders.is_empty() {
        return;
    }
    html.push_str(
        "<table class=list id=held>\n<caption>Held dates, by whom</caption>\n<thead><tr>\
         <th scope=col>Run</th><th scope=col>Kind</th><th scope=col>By</th><th scope=col>Status</th>\
         <th scope=col>Dates</th><th scope=col>Gone</th></tr></thead>\n<tbody>\n",
    );
    for h in holders {
        let ranges: Vec<String> = h.ranges.iter().map(Interval::to_string).collect();
        let _ = writeln!(
            html,
            "<tr data-run={}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            h.run_id,
            h.run_id,
            esc(&h.kind.map_or("-".into(), |k| k.to_string())),
            esc(h.by.as_deref().unwrap_or("-")),
            esc(&h.status.map_or("-".into(), |s| s.to_string())),
            esc(&ranges.join(", ")),
            esc(h.gone.as_deref().unwrap_or("-")),
        );
    }
    html.push_str("</tbody>\n</table>\n");
}

/// A table's head: its caption and column names.
pub(super) fn table_head(html: &mut String, id: &str, caption: &str, columns: &[&str]) {
    let _ = write!(
        html,
        "<table class=list id={id}>\n<caption>{caption}</caption>\n<thead><tr>"
    );
    for c in columns {
        let _ = write!(html, "<th scope=col>{c}</th>");
    }
    html.push_str("</tr></thead>\n<tbody>\n");
}

pub(super) fn td(html: &mut String, text: &str) {
    let _ = write!(html, "<td>{}</td>", esc(text));
}

fn runs(html: &mut String, runs: &[Record]) {
    html.push_str("<section id=runs aria-labelledby=h-runs>\n<h2 id=h-runs>Runs</h2>\n");
    if runs.is_empty() {
        html.push_str("<p>No runs.</p>\n");
        return;
    }
    table_head(
        html,
        "run-list",
        "The runs, newest first (<code>sqlrun runs</code>)",
        &[
            "Run", "Kind", "By", "Reason", "Created", "Started", "Finished", "Took", "Status",
            "Dates", "Outcomes",
        ],
    );
    for r in runs {
        let _ = write!(html, "<tr data-run={}>", cell(&r["run_id"]));
        for column in [
            "run_id",
            "kind",
            "requested_by",
            "reason",
            "created_at",
            "started_at",
            "finished_at",
        ] {
            td(html, &cell(&r[column]));
        }
        td(html, &took(r));
        let _ = write!(
            html,
            "<td data-status=\"{0}\">{0}</td>",
            esc(&cell(&r["status"]))
        );
        td(html, &range(&r["interval_start"], &r["interval_end"]));
        td(html, &outcomes(r));
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n");
}

fn range(start: &Json, end: &Json) -> String {
    match (cell(start), cell(end)) {
        (s, e) if s == e => s,
        (s, e) => format!("{s}..{e}"),
    }
}

/// How long a run took: to the millisecond where its runner measured it (`took_ms`),
/// else from its start and finish, whole seconds (`-` until it has both).
fn took(r: &Record) -> String {
    if let Some(ms) = r.get("took_ms").and_then(Json::as_i64) {
        return millis(ms);
    }
    let time = |v: &Json| {
        let text = v.as_str()?;
        let text = text.get(..19)?;
        NaiveDateTime::parse_from_str(&text.replace('T', " "), "%Y-%m-%d %H:%M:%S").ok()
    };
    let (Some(a), Some(b)) = (time(&r["started_at"]), time(&r["finished_at"])) else {
        return "-".into();
    };
    match (b - a).num_seconds().max(0) {
        0 => "under 1 s".into(),
        s => format!("about {}", millis(s * 1000)),
    }
}

/// A duration for people: `12 ms`, `1.234 s`, `2 min 05.123 s`, `1 h 02 min`.
fn millis(ms: i64) -> String {
    match ms {
        ms if ms < 1000 => format!("{ms} ms"),
        ms if ms < 60_000 => format!("{}.{:03} s", ms / 1000, ms % 1000),
        ms if ms < 3_600_000 => format!(
            "{} min {:02}.{:03} s",
            ms / 60_000,
            ms % 60_000 / 1000,
            ms % 1000
        ),
        ms => format!("{} h {:02} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// A run's dates by how they ended: `5 success, 1 failed (2026-01-10)`, and what it holds.
fn outcomes(r: &Record) -> String {
    let mut parts = Vec::new();
    for &status in DateStatus::ALL {
        let n = r[status.as_str()].as_i64().unwrap_or(0);
        if n == 0 {
            continue;
        }
        let ranges: Vec<&str> = r
            .get(&format!("{status}_ranges"))
            .and_then(Json::as_array)
            .map(|a| a.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        match ranges.is_empty() {
            true => parts.push(format!("{} {status}", thousands(n))),
            false => parts.push(format!("{} {status} ({})", thousands(n), ranges.join(", "))),
        }
    }
    let holding = r["holding"].as_i64().unwrap_or(0);
    if holding > 0 {
        parts.push(format!("holding {}", thousands(holding)));
    }
    match parts.is_empty() {
        true => "-".into(),
        false => parts.join(", "),
    }
}

fn seals(html: &mut String, seals: &[Record]) {
    html.push_str("<section id=out aria-labelledby=h-out>\n<h2 id=h-out>What went out</h2>\n");
    if seals.is_empty() {
        html.push_str("<p>No seal events: nothing went out.</p>\n");
        return;
    }
    table_head(
        html,
        "seal-list",
        "Seal events, newest first (<code>sqlrun seals</code>)",
        &[
            "Seal", "Action", "Dates", "How many", "Models", "By", "At", "Reason",
        ],
    );
    for e in seals {
        let _ = write!(html, "<tr data-seal={}>", cell(&e["seal_id"]));
        td(html, &cell(&e["seal_id"]));
        td(html, &cell(&e["action"]));
        td(html, &range(&e["first_ds"], &e["last_ds"]));
        for column in ["dates", "models", "made_by", "made_at", "reason"] {
            td(html, &cell(&e[column]));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n");
}

fn corrections(html: &mut String, models: &[ModelCorrections]) {
    for m in models {
        let name = esc(&m.model.name);
        if m.rows.is_empty() {
            let _ = writeln!(html, "<p>{name}: no corrections.</p>");
            continue;
        }
        table_head(
            html,
            &format!("\"corrections-{name}\""),
            &format!("{name}: corrections of sealed dates (<code>sqlrun corrections --select {name}</code>)"),
            &["Id", "Key", "Column", "Sent", "Now", "Now − sent", "Seal", "Run", "By", "At"],
        );
        for c in &m.rows {
            correction_rows(html, c);
        }
        html.push_str("</tbody>\n");
        totals(html, m.model, &m.rows);
        html.push_str("</table>\n");
    }
    html.push_str("</section>\n");
}

fn correction_rows(html: &mut String, c: &Correction) {
    let key: Vec<String> = c.key.iter().map(|k| k.kind.show(&k.value)).collect();
    for v in &c.values {
        // The values as the JSON of `corrections` has them, for a reader (or a test) to compare.
        let _ = write!(
            html,
            "<tr data-correction={} data-column=\"{}\" data-sent=\"{}\" data-now=\"{}\">",
            cell(&c.record["correction_id"]),
            esc(&v.column),
            esc(&v.kind.typed(&v.sent).to_string()),
            esc(&v.kind.typed(&v.now).to_string())
        );
        td(html, &cell(&c.record["correction_id"]));
        td(html, &key.join(" "));
        td(html, &v.column);
        td(html, &v.kind.show(&v.sent));
        td(
            html,
            &if c.removed {
                "(removed)".into()
            } else {
                v.kind.show(&v.now)
            },
        );
        td(html, &v.kind.show_delta(v.delta.as_ref()));
        for column in ["seal_id", "run_id", "run_by", "corrected_at"] {
            td(html, &cell(&c.record[column]));
        }
        html.push_str("</tr>\n");
    }
}

/// Per value column that adds up (pipeline/measures.rs), the sums of what was sent, what
/// is true now, and their difference: a running total or a count of days has no total.
fn totals(html: &mut String, model: &Model, rows: &[Correction]) {
    let mut sums: BTreeMap<&str, (f64, f64, f64, Kind)> = BTreeMap::new();
    for c in rows {
        for v in &c.values {
            let e = sums
                .entry(v.column.as_str())
                .or_insert((0.0, 0.0, 0.0, v.kind));
            let num = |j: &Json| j.as_f64().unwrap_or(0.0);
            e.0 += num(&v.sent);
            e.1 += if c.removed { 0.0 } else { num(&v.now) };
            e.2 += v.delta.as_ref().map_or(0.0, num);
        }
    }
    html.push_str("<tfoot>\n");
    for (column, (sent, now, delta, kind)) in sums {
        if !model.adds_up(column, kind) {
            continue;
        }
        let show = |x: f64| {
            kind.show(&serde_json::json!(if kind == Kind::Integer {
                Json::from(x as i64)
            } else {
                Json::from(x)
            }))
        };
        let _ = writeln!(
            html,
            "<tr><th scope=row colspan=2>Total</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td colspan=4></td></tr>",
            esc(column),
            show(sent),
            show(now),
            show(delta)
        );
    }
    html.push_str("</tfoot>\n");
}

/// What `report` says once the page is written: its file, size and dates (`--json`: one
/// object with `html`, `bytes` and `interval`, null when the database knows no date).
pub fn written(path: &Path, bytes: usize, span: Option<Interval>, out: &Output) -> Result<()> {
    out.json(&serde_json::json!({
        "html": path.display().to_string(),
        "bytes": bytes,
        "interval": span.map(|s| s.to_string()),
    }))?;
    out.text(&format!(
        "wrote {} ({} bytes{})",
        path.display(),
        thousands(bytes as i64),
        span.map(|s| format!(", {s}")).unwrap_or_default()
    ))
}

/// Text as HTML: every character that could open markup or end an attribute, escaped.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn a_title_says_only_what_there_is_to_say() {
        let row: Vec<String> = [
            "2026-01-01",
            "computed",
            "3",
            "backfill",
            "2026-03-01 10:00:00",
            "current",
            "-",
            "-",
            "-",
            "-",
            "-",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            title(&row),
            "2026-01-01 computed; run 3 backfill 2026-03-01 10:00:00"
        );
    }

    /// Ten years of two models, every date computed: the page stays under the README's bound.
    #[test]
    fn ten_years_of_two_models_stay_under_a_megabyte() {
        let span = Interval::parse("2016-01-01..2025-12-31").unwrap();
        let states: Vec<DateState> = span
            .dates()
            .map(|d| {
                let mut s = DateState {
                    ds: crate::dates::interval::fmt_date(d),
                    built_run: Some(12345),
                    built_kind: Some(crate::text::words::RunKind::Backfill),
                    built_at: Some("2026-12-01 22:05:31".into()),
                    ..DateState::default()
                };
                s.judged.computed = true;
                s.judged.state = State::Computed;
                s
            })
            .collect();
        let calendars: Vec<ModelCalendar> = ["daily_revenue", "daily_amount_bands"]
            .iter()
            .map(|m| ModelCalendar::new(m.to_string(), span, states.clone(), &[]))
            .collect();
        let html = page(&Page {
            database: "sqlrun.db".into(),
            latest: None,
            span: Some(span),
            known_span: true,
            calendars: &calendars,
            runs: &[],
            seals: &[],
            corrections: &[],
            numbers: &[],
            grains: &[],
        });
        assert_eq!(html.matches(" tabindex=0 title=\"").count(), 2 * 3653);
        assert!(html.len() < 1_000_000, "{} bytes", html.len());
    }

    #[test]
    fn took_reads_millis_else_start_and_finish() {
        let run = |pairs: Json| pairs.as_object().unwrap().clone();
        let times =
            |a: &str, b: Option<&str>| run(serde_json::json!({"started_at": a, "finished_at": b}));
        assert_eq!(took(&run(serde_json::json!({"took_ms": 12}))), "12 ms");
        assert_eq!(took(&run(serde_json::json!({"took_ms": 1234}))), "1.234 s");
        assert_eq!(
            took(&run(serde_json::json!({"took_ms": 125_007}))),
            "2 min 05.007 s"
        );
        assert_eq!(
            took(&run(serde_json::json!({"took_ms": 3_720_000}))),
            "1 h 02 min"
        );
        let old = times("2026-01-01 10:00:00", Some("2026-01-01 10:01:05"));
        assert_eq!(took(&old), "about 1 min 05.000 s");
        let same = times("2026-01-01 10:00:00", Some("2026-01-01 10:00:00"));
        assert_eq!(took(&same), "under 1 s");
        assert_eq!(took(&times("2026-01-01 10:00:00", None)), "-");
    }
}
