//! `sqlrun check --interval I`: the checks over dates already computed, reading only; a
//! new check against two years of history without recomputing anything.

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::dates::interval::Interval;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{check as show, Output};
use crate::seals::verify;

/// `sqlrun check --interval I [--select M]`.
pub struct CheckRequest {
    pub interval: String,
    pub select: Vec<String>,
}

pub fn run(ctx: &Context, request: CheckRequest, out: &Output) -> Result<Exit> {
    let settings = ctx.settings(out)?;
    let interval = Interval::parse(&request.interval)?;
    let mut opened = open(&settings, &request.select, Access::Read)?;
    out.notes(&opened.notes);
    let report = verify::check_dates(&mut opened.db, &opened.pipeline, interval)?;
    show::report(&report, out)?;
    Ok(if report.failed() {
        Exit::Failed
    } else {
        Exit::Done
    })
}
