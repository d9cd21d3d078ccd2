//! `sqlrun report --html FILE`: the calendar of each model, the runs, the seal events and
//! the corrections as one self-contained page. Read-only: every answer is the one
//! `status --select MODEL`, `runs`, `seals` and `corrections` give.

use std::path::{Path, PathBuf};

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::dates::interval::{fmt_date, Interval};
use crate::db::Db;
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::output::report::{self, ModelCalendar, Page};
use crate::output::Output;
use crate::pipeline::Model;
use crate::reservations::holders::Identity;
use crate::reservations::{judge, partitions, take};
use crate::run::history::{self, Record};
use crate::seals::corrections::{self, Feed, FeedShape};
use crate::seals::numbers;

/// What to show and where to write it, as asked.
pub struct ReportRequest {
    pub html: PathBuf,
    pub interval: Option<String>,
    pub select: Vec<String>,
}

pub fn run(ctx: &Context, request: ReportRequest, out: &Output) -> Result<Exit> {
    let settings = ctx.settings(out)?;
    let interval = request
        .interval
        .as_deref()
        .map(Interval::parse)
        .transpose()?;
    writable(&request.html)?;
    let mut opened = open(&settings, &request.select, Access::Read)?;
    out.notes(&opened.notes);
    let span = match interval {
        Some(i) => Some(i),
        None => {
            let (span, notes) = judge::known_span(&mut opened.db, &opened.pipeline)?;
            out.notes(&notes);
            span
        }
    };
    let names: Vec<String> = opened
        .pipeline
        .computed_models()
        .iter()
        .map(|m| m.name.clone())
        .collect();
    let calendars = calendars(&mut opened, &names, span)?;
    let mut all_runs = history::newest_runs(&mut opened.db, u32::MAX)?;
    with_millis(&mut opened.db, &mut all_runs)?;
    let all_seals = history::newest_seal_events(&mut opened.db, u32::MAX)?;
    let latest = latest_change(&all_runs, &all_seals);
    let runs = overlapping(all_runs, span, "interval_start", "interval_end");
    let seals = overlapping(all_seals, span, "first_ds", "last_ds");
    opened.pipeline.select(&names)?;
    let feed = Feed {
        interval,
        select: names.clone(),
        since: None,
        format: FeedShape::Json,
    };
    let corrections = corrections::list(&mut opened.db, &opened.pipeline, &feed)?;
    let models: Vec<&Model> = opened.pipeline.computed_models().into_iter().collect();
    let (numbers, grains) = match span {
        Some(span) => (
            numbers::of_models(&mut opened.db, &opened.pipeline, &models, span)?,
            partitions::partition_cells(&mut opened.db, &opened.pipeline, span, settings.timezone)?,
        ),
        None => (Vec::new(), Vec::new()),
    };
    let html = report::page(&Page {
        database: opened.target.to_string(),
        latest,
        span,
        known_span: interval.is_none(),
        calendars: &calendars,
        runs: &runs,
        seals: &seals,
        corrections: &corrections,
        numbers: &numbers,
        grains: &grains,
    });
    write(&request.html, &html)?;
    report::written(&request.html, html.len(), span, out)?;
    Ok(Exit::Done)
}

/// Each model's calendar: what `status --select MODEL` says of each date of the span.
fn calendars(
    opened: &mut super::open::Opened,
    names: &[String],
    span: Option<Interval>,
) -> Result<Vec<ModelCalendar>> {
    let Some(span) = span else {
        return Ok(Vec::new());
    };
    let dead = take::dead_holders(&mut opened.db, &Identity::current(), None)?;
    let mut calendars = Vec::new();
    for name in names {
        opened.pipeline.select(std::slice::from_ref(name))?;
        let states = judge::date_states(&mut opened.db, &opened.pipeline, span)?;
        calendars.push(ModelCalendar::new(name.clone(), span, states, &dead));
    }
    Ok(calendars)
}

/// Each run's `took_ms`, where its runner measured it, for its `Took` to the millisecond.
fn with_millis(db: &mut Db, runs: &mut [Record]) -> Result<()> {
    let Some(oldest) = runs.iter().filter_map(|r| r["run_id"].as_i64()).min() else {
        return Ok(());
    };
    let millis = history::run_millis(db, oldest)?;
    for r in runs {
        if let Some(ms) = r["run_id"].as_i64().and_then(|id| millis.get(&id)) {
            r.insert("took_ms".into(), (*ms).into());
        }
    }
    Ok(())
}

/// The time of the database's latest recorded change: the newest time a run was made,
/// started or finished, or a seal event made (the page carries no clock of its own).
fn latest_change(runs: &[Record], seals: &[Record]) -> Option<String> {
    let times = |rows: &[Record], columns: &[&str]| -> Vec<String> {
        rows.iter()
            .flat_map(|r| {
                columns
                    .iter()
                    .filter_map(|c| r[*c].as_str().map(String::from))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let mut all = times(runs, &["created_at", "started_at", "finished_at"]);
    all.extend(times(seals, &["made_at"]));
    all.into_iter().max()
}

/// The runs (or seal events) whose dates meet the span: all of them without one.
fn overlapping(rows: Vec<Record>, span: Option<Interval>, start: &str, end: &str) -> Vec<Record> {
    let Some(span) = span else { return rows };
    let (first, last) = (fmt_date(span.start), fmt_date(span.end));
    rows.into_iter()
        .filter(|r| {
            let from = r[start].as_str().unwrap_or("");
            let to = r[end].as_str().unwrap_or("9999-12-31");
            from <= last.as_str() && to >= first.as_str()
        })
        .collect()
}

/// The page can be written there: its folder exists and it is not a folder itself (bad
/// input is said before anything is read).
fn writable(path: &Path) -> Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if path.is_dir() || !folder.is_dir() {
        return Err(Error::bad(format!(
            "--html {}: {}; give a file in a folder that exists, e.g. --html report.html",
            path.display(),
            if path.is_dir() {
                "is a folder"
            } else {
                "its folder does not exist"
            }
        )));
    }
    Ok(())
}

/// Writes the page whole or not at all: a file beside it, renamed over it.
fn write(path: &Path, html: &str) -> Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".sqlrun-tmp");
    let temp = path.with_file_name(name);
    let cannot = |e: std::io::Error| {
        let _ = std::fs::remove_file(&temp);
        Error::bad(format!(
            "--html {}: cannot write it ({e}); give a file in a folder you can write",
            path.display()
        ))
    };
    std::fs::write(&temp, html).map_err(cannot)?;
    std::fs::rename(&temp, path).map_err(cannot)
}
