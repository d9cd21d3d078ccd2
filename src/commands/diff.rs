//! `sqlrun diff RUN`: what a run changed, read from history (run/changed.rs), handed to
//! output as the same table `apply --diff` shows.

use super::open::{open, Access};
use crate::commands::Context;
use crate::dates::interval::Interval;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{diff as show, Output};
use crate::run::changed;

/// `sqlrun diff RUN_ID [--interval I] [--select M,...]`.
pub struct DiffRequest {
    pub run_id: i64,
    pub interval: Option<String>,
    pub select: Vec<String>,
}

pub fn run(ctx: &Context, request: DiffRequest, out: &Output) -> Result<Exit> {
    // A bad interval is refused before anything is opened.
    let interval = request
        .interval
        .as_deref()
        .map(Interval::parse)
        .transpose()?;
    let settings = ctx.settings(out)?;
    let mut opened = open(&settings, &request.select, Access::Read)?;
    let changes = changed::of_run(&mut opened.db, &opened.pipeline, request.run_id, interval)?;
    show::run_changes(&changes, out)?;
    Ok(Exit::Done)
}
