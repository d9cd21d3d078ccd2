//! `sqlrun seal` (also `--reissue`) and `sqlrun unseal`: what went out, and its life
//! after.

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{seal as show, Output};
use crate::seals::{self, SealRequest};

pub fn run(ctx: &Context, request: SealRequest, out: &Output) -> Result<Exit> {
    let settings = &ctx.settings(out)?;
    let request = &request;
    let checked = seals::check(request)?;
    let mut opened = open(settings, &[], Access::Sync)?;
    out.notes(&opened.notes);
    let sealing = seals::seal(&mut opened.db, &opened.pipeline, &checked)?;
    show::sealed(&checked, &sealing, out)?;
    // A dry run ends as the event would: refused is exit 2.
    match sealing.blockers.is_empty() {
        true => Ok(Exit::Done),
        false => Ok(Exit::BadInput),
    }
}
