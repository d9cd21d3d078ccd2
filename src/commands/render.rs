//! `sqlrun render --date D`: the SQL of a date, to read or to run by hand.

use crate::commands::open::{open, Access, Opened};
use crate::commands::Context;
use crate::dates::interval::{fmt_date, parse_date};
use crate::db::Dialect;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{render as show, Output};
use crate::pipeline::Pipeline;
use crate::run::render;

/// `sqlrun render --date D [MODEL] [--select M] [--dialect sqlite|postgres]`.
pub struct RenderRequest {
    pub date: String,
    pub model: Option<String>,
    pub select: Vec<String>,
    /// The backend whose SQL to show (None: the database's).
    pub dialect: Option<Dialect>,
}

/// Rendering needs no SQL to prepare: a model the database refuses (it does not prepare,
/// returns other columns than its header names, its table is not what its header says,
/// its text changed without a new version) still has its SQL shown, on stdout, and
/// then the refusal, on stderr, with exit 2, as `apply` would end. The statements checked
/// are those of the date asked for, not today's. `--dialect` naming the other backend
/// shows that backend's SQL, from the pipeline loaded for it: nothing is opened, and so
/// nothing prepared (the date renders as one not sealed).
pub fn run(ctx: &Context, request: RenderRequest, out: &Output) -> Result<Exit> {
    let RenderRequest {
        date,
        model,
        select,
        dialect,
    } = request;
    let settings = ctx.settings(out)?;
    let ds = fmt_date(parse_date(&date, "--date")?);
    // Another backend's SQL: its pipeline, rendered without opening the database.
    let own = settings.target()?.dialect();
    if let Some(other) = dialect.filter(|d| *d != own) {
        let mut pipeline = Pipeline::load(settings.templates.as_deref(), other)?;
        pipeline.retention = settings.retention;
        if !select.is_empty() {
            pipeline.select(&select)?;
        }
        let rendered =
            render::date_unconnected(&pipeline, ds, (model.as_deref(), settings.timezone))?;
        show::rendered(&rendered, None, out)?;
        return Ok(Exit::Done);
    }
    let Opened {
        pipeline,
        mut db,
        refused,
        ..
    } = open(&settings, &select, Access::ReadDate(&ds))?;
    let rendered = render::date(
        &mut db,
        &pipeline,
        ds,
        (model.as_deref(), settings.timezone),
    )?;
    show::rendered(&rendered, refused.as_ref(), out)?;
    match refused {
        Some(e) => Err(e),
        None => Ok(Exit::Done),
    }
}
