//! `sqlrun seal` (also `--reissue`) and `sqlrun unseal`: what went out, and its life
//! after.

use crate::commands::{open, Access};
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{seal as show, Output};
use crate::seal::{self, SealRequest};
use crate::settings::Settings;

pub fn run(settings: &Settings, request: &SealRequest, out: &Output) -> Result<Exit> {
    let checked = seal::check(request)?;
    let mut opened = open(settings, &[], Access::Sync)?;
    out.notes(&opened.notes);
    let sealing = seal::seal(&mut opened.db, &opened.pipeline, &checked)?;
    show::sealed(&checked, &sealing, out)?;
    // A dry run ends as the event would: refused is exit 2.
    match sealing.blockers.is_empty() {
        true => Ok(Exit::Done),
        false => Ok(Exit::BadInput),
    }
}
