//! `sqlrun render --date D`: the SQL of a date, to read or to run by hand.

use crate::commands::load;
use crate::dates::interval::{fmt_date, parse_date};
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::output::{render as show, Output};
use crate::project::settings::Settings;
use crate::run::render;
use crate::store;

/// Rendering needs no SQL to prepare: a model the database refuses (it does not prepare,
/// returns other columns than its header names, its table is not what its header says,
/// its text changed without a new version) still has its SQL shown, on stdout, and
/// then the refusal, on stderr, with exit 2, as `apply` would end. The statements checked
/// are those of the date asked for, not today's.
pub fn run(
    settings: &Settings,
    date: &str,
    model: Option<&str>,
    select: &[String],
    out: &Output,
) -> Result<Exit> {
    let ds = fmt_date(parse_date(date, "--date")?);
    let (target, pipeline) = load(settings, select)?;
    let (mut db, refused) = match store::open_to_read_checking(&target, Some(&pipeline), Some(&ds))
    {
        Ok(db) => (db, None),
        Err(
            e @ (Error::PipelineSql { .. } | Error::Template { .. } | Error::EditedTemplate(_)),
        ) => (store::open_to_read(&target, None)?, Some(e)),
        Err(e) => return Err(e),
    };
    let rendered = render::date(&mut db, &pipeline, ds, model)?;
    show::rendered(&rendered, refused.as_ref(), out)?;
    match refused {
        Some(e) => Err(e),
        None => Ok(Exit::Done),
    }
}
