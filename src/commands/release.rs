//! `sqlrun release RUN_ID`: a reserved or running run gives up what it still holds.

use crate::commands::{open, Access};
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{reserve as show, Output};
use crate::project::settings::Settings;
use crate::reservations::planned;

pub fn run(settings: &Settings, run_id: i64, by: Option<&str>, out: &Output) -> Result<Exit> {
    let mut opened = open(settings, &[], Access::Open)?;
    let released = planned::release_run(&mut opened.db, &opened.pipeline, run_id, by)?;
    show::released(run_id, &released, out)?;
    Ok(Exit::Done)
}
