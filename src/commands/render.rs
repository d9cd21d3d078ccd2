//! `sqlrun render --date D`: the SQL of a date, to read or to run by hand.

use crate::commands::{open, Access};
use crate::error::Result;
use crate::exit::Exit;
use crate::interval::{fmt_date, parse_date};
use crate::output::{render as show, Output};
use crate::render;
use crate::settings::Settings;

pub fn run(
    settings: &Settings,
    date: &str,
    model: Option<&str>,
    select: &[String],
    out: &Output,
) -> Result<Exit> {
    let ds = fmt_date(parse_date(date, "--date")?);
    let mut opened = open(settings, select, Access::Read)?;
    show::rendered(
        &render::date(&mut opened.db, &opened.pipeline, ds, model)?,
        out,
    )?;
    Ok(Exit::Done)
}
