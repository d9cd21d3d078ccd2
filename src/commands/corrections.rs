//! `sqlrun corrections`: what changed on sealed dates since they went out, as a feed.

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{corrections as show, Output};
use crate::seals::corrections::{self, FeedRequest, FeedShape};

pub fn run(ctx: &Context, request: FeedRequest, out: &Output) -> Result<Exit> {
    let settings = &ctx.settings(out)?;
    let request = &request;
    let feed = corrections::check(request)?;
    let mut opened = open(settings, &[], Access::Read)?;
    let models = corrections::list(&mut opened.db, &opened.pipeline, &feed)?;
    match (out.json, feed.format) {
        (false, FeedShape::Csv) => show::csv(&models)?,
        (false, FeedShape::Json) => show::corrections(&models, &Output::new(true, out.verbose))?,
        _ => show::corrections(&models, out)?,
    }
    Ok(Exit::Done)
}
