//! `sqlrun reserve`: a planned backfill holds its dates from now on; `apply --run` carries
//! it out, `release` cancels it. Exit 99 when another live run holds some of them.

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{reserve as show, Output};
use crate::reservations::planned::{self, ReserveRequest};

pub fn run(ctx: &Context, request: ReserveRequest, out: &Output) -> Result<Exit> {
    let settings = &ctx.settings(out)?;
    let request = &request;
    let checked = planned::check(request, settings.timezone)?;
    let mut opened = open(settings, &[], Access::Sync)?;
    out.notes(&opened.notes);
    let reservation = planned::reserve_dates(&mut opened.db, &opened.pipeline, &checked)?;
    show::reserved(&reservation, out)?;
    Ok(if reservation.skips.is_empty() {
        Exit::Done
    } else {
        Exit::Skipped
    })
}
