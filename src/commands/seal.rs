//! `sqlrun seal`: mark the dates whose numbers went out.

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
    Ok(Exit::Done)
}
