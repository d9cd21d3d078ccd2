//! `sqlrun runs`: the runs, newest first, each with its dates in brief; `runs N`: one run,
//! its dates as ranges per status (`--dates`: each date), events and templates.

use crate::commands::open::{open_store, StoreAccess};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{runs as show, Output};
use crate::run::history;

/// `sqlrun runs [RUN_ID] [--limit N] [--dates]`.
pub struct RunsRequest {
    pub run_id: Option<i64>,
    pub limit: u32,
    pub each_date: bool,
}

pub fn run(ctx: &Context, request: RunsRequest, out: &Output) -> Result<Exit> {
    let RunsRequest {
        run_id,
        limit,
        each_date,
    } = request;
    let mut db = open_store(&ctx.settings(out)?, StoreAccess::Read)?;
    match run_id {
        None => {
            let runs = history::newest_runs(&mut db, limit)?;
            let seals = history::newest_seal_events(&mut db, limit)?;
            show::runs_list(&runs, &seals, out)?
        }
        Some(run_id) => show::run_detail(&history::run_detail(&mut db, run_id)?, each_date, out)?,
    }
    Ok(Exit::Done)
}
