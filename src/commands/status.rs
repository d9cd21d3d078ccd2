//! `sqlrun status`: a span at a glance (summary and calendar), or `--list` a line per
//! date. Without `--interval` the span runs from the first to the last date the
//! database knows, source rows included, so gaps inside it show.

use crate::commands::{open, Access};
use crate::error::Result;
use crate::exit::Exit;
use crate::holder::Identity;
use crate::interval::Interval;
use crate::output::status::{self, Status, StatusView};
use crate::output::Output;
use crate::reserve;
use crate::settings::Settings;

pub fn run(
    settings: &Settings,
    interval: Option<&str>,
    select: &[String],
    list: bool,
    out: &Output,
) -> Result<Exit> {
    let interval = interval.map(Interval::parse).transpose()?;
    let mut opened = open(settings, select, Access::Read)?;
    out.notes(&opened.notes);
    let (pipeline, db) = (&opened.pipeline, &mut opened.db);
    let span = match interval {
        Some(i) => Some(i),
        None => {
            let (span, notes) = reserve::known_span(db, pipeline)?;
            out.notes(&notes);
            span
        }
    };
    let Some(span) = span else {
        status::status_empty(out)?;
        return Ok(Exit::Done);
    };
    let states = reserve::date_states(db, pipeline, span)?;
    // A holder that is gone still holds its dates until the next writer reclaims them; say so.
    let dead = reserve::dead_holders(db, &Identity::current(), None)?;
    let view = StatusView {
        span,
        known_span: interval.is_none(),
        list,
    };
    status::status(
        &Status {
            view,
            states: &states,
            dead: &dead,
        },
        out,
    )?;
    Ok(Exit::Done)
}
