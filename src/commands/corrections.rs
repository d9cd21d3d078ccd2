//! `sqlrun corrections`: what changed on sealed dates since they went out.

use crate::commands::{open, Access};
use crate::corrections;
use crate::error::Result;
use crate::exit::Exit;
use crate::interval::Interval;
use crate::output::{corrections as show, Output};
use crate::settings::Settings;

pub fn run(settings: &Settings, interval: Option<&str>, out: &Output) -> Result<Exit> {
    let interval = interval.map(Interval::parse).transpose()?;
    let mut opened = open(settings, &[], Access::Read)?;
    show::corrections(
        &corrections::list(&mut opened.db, &opened.pipeline, interval)?,
        out,
    )?;
    Ok(Exit::Done)
}
