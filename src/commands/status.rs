//! `sqlrun status`: a span at a glance (summary and calendar), or `--list` a line per
//! date. Without `--interval` the span runs from the first to the last date the
//! database knows, source rows included, so gaps inside it show.

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::dates::interval::Interval;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::status::{self, Status, StatusView};
use crate::output::Output;
use crate::reservations::holders::Identity;
use crate::reservations::{judge, partitions, take};
use crate::sources::freshness;

/// `sqlrun status [--interval I] [--select M] [--list]`.
pub struct StatusRequest {
    pub interval: Option<String>,
    pub select: Vec<String>,
    pub list: bool,
}

pub fn run(ctx: &Context, request: StatusRequest, out: &Output) -> Result<Exit> {
    let StatusRequest {
        interval,
        select,
        list,
    } = request;
    let settings = ctx.settings(out)?;
    let interval = interval.as_deref().map(Interval::parse).transpose()?;
    let mut opened = open(&settings, &select, Access::Read)?;
    out.notes(&opened.notes);
    let (pipeline, db) = (&opened.pipeline, &mut opened.db);
    let span = match interval {
        Some(i) => Some(i),
        None => {
            let (span, notes) = judge::known_span(db, pipeline)?;
            out.notes(&notes);
            span
        }
    };
    let sources = freshness::freshness(db, pipeline)?;
    let Some(span) = span else {
        status::status_empty(out)?;
        return Ok(Exit::Done);
    };
    let states = judge::date_states(db, pipeline, span)?;
    let cells = partitions::partition_cells(db, pipeline, span, settings.timezone)?;
    let partitions = partitions::partition_ranges(&cells, settings.timezone);
    // A holder that is gone still holds its dates until the next writer reclaims them; say so.
    let dead = take::dead_holders(db, &Identity::current(), None)?;
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
            sources: &sources,
            partitions: &partitions,
            cells: &cells,
        },
        out,
    )?;
    Ok(Exit::Done)
}
