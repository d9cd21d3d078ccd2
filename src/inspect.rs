//! `sqlrun status` (the other commands that read are in commands/).

use crate::db::Db;
use crate::error::Result;
use crate::exit::Exit;
use crate::interval::Interval;
use crate::pipeline::Pipeline;
use crate::report::{self, Output};
use crate::reserve;
use crate::settings::Settings;
use crate::store;

/// The pipeline and its database, for a command that only reads: read-only when nothing
/// needs writing (see `store::open_to_read`).
fn open(global: &Settings, select: &[String]) -> Result<(Pipeline, Db)> {
    let target = store::target(global)?;
    let mut pipeline = Pipeline::load(global.templates.as_deref(), target.dialect())?;
    if !select.is_empty() {
        pipeline.select(select)?;
    }
    let db = store::open_to_read(&target, Some(&pipeline))?;
    Ok((pipeline, db))
}

/// `sqlrun status`: a span at a glance (summary and calendar), or `--list` a line per
/// date. Without `--interval` the span runs from the first to the last date the
/// database knows, source rows included, so gaps inside it show.
pub fn status(
    global: &Settings,
    interval: Option<&str>,
    select: &[String],
    list: bool,
    out: &Output,
) -> Result<Exit> {
    let interval = interval.map(Interval::parse).transpose()?;
    let (pipeline, mut db) = open(global, select)?;
    let span = match interval {
        Some(i) => Some(i),
        None => {
            let (span, notes) = reserve::known_span(&mut db, &pipeline)?;
            notes.iter().for_each(|n| out.note(n));
            span
        }
    };
    let Some(span) = span else {
        return report::status_empty(out).map(|()| Exit::Done);
    };
    let states = reserve::date_states(&mut db, &pipeline, span)?;
    // A holder that is gone still holds its dates until the next writer reclaims them; say so.
    let dead = reserve::dead_holders(&mut db, &crate::holder::Identity::current(), None)?;
    let view = report::StatusView {
        span,
        known_span: interval.is_none(),
        list,
    };
    report::status(&view, &states, &pipeline.signature(), &dead, out)?;
    Ok(Exit::Done)
}
