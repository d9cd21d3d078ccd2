//! `sqlrun release RUN_ID`: a reserved or running run gives up what it still holds.

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{reserve as show, Output};
use crate::reservations::planned;

/// `sqlrun release RUN_ID [--by NAME]`.
pub struct ReleaseRequest {
    pub run_id: i64,
    pub by: Option<String>,
}

pub fn run(ctx: &Context, request: ReleaseRequest, out: &Output) -> Result<Exit> {
    let ReleaseRequest { run_id, by } = request;
    let mut opened = open(&ctx.settings(out)?, &[], Access::Open)?;
    let released = planned::release_run(&mut opened.db, &opened.pipeline, run_id, by.as_deref())?;
    show::released(run_id, &released, out)?;
    Ok(Exit::Done)
}
