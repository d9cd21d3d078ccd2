//! `sqlrun diff RUN`: what a run changed; `sqlrun diff --model M --from A --to B`: one
//! model between two points of its history. Both read from history (run/changed.rs) and
//! are handed to output as the same table `apply --diff` shows.

use super::open::{open, Access};
use crate::commands::Context;
use crate::dates::interval::Interval;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{diff as show, Output};
use crate::run::changed;

/// `sqlrun diff (RUN_ID | --model M --from A --to B) [--interval I] [--select M,...]`.
pub struct DiffRequest {
    pub what: DiffOf,
    pub interval: Option<String>,
    pub select: Vec<String>,
}

/// What is compared.
pub enum DiffOf {
    /// What a run changed.
    Run(i64),
    /// One model as it stood once run `from` was done, against once run `to` was.
    Between { model: String, from: i64, to: i64 },
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
    let (db, pipeline) = (&mut opened.db, &opened.pipeline);
    match request.what {
        DiffOf::Run(run_id) => {
            show::run_changes(&changed::of_run(db, pipeline, run_id, interval)?, out)?
        }
        DiffOf::Between { model, from, to } => show::between(
            &changed::between(db, pipeline, &model, (from, to), interval)?,
            out,
        )?,
    }
    Ok(Exit::Done)
}
