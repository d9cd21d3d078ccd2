//! `sqlrun check --interval I`: the checks over dates already computed, reading only; a
//! new check against two years of history without recomputing anything.

use crate::commands::{open, Access};
use crate::dates::interval::Interval;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{check as show, Output};
use crate::project::settings::Settings;
use crate::seals::verify;

pub fn run(settings: &Settings, interval: &str, select: &[String], out: &Output) -> Result<Exit> {
    let interval = Interval::parse(interval)?;
    let mut opened = open(settings, select, Access::Read)?;
    out.notes(&opened.notes);
    let report = verify::check_dates(&mut opened.db, &opened.pipeline, interval)?;
    show::report(&report, out)?;
    Ok(if report.failed() {
        Exit::Failed
    } else {
        Exit::Done
    })
}
