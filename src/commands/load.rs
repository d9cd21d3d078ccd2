//! `sqlrun load TABLE FILE`: rows from a CSV file into a table, tracked like any insert,
//! then analyzed (PostgreSQL).

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{load as show, Output};
use crate::sources::load::{self, Input};
use crate::sources::statistics;

/// `sqlrun load TABLE FILE|-`.
pub struct LoadRequest {
    pub table: String,
    pub file: String,
}

pub fn run(ctx: &Context, request: LoadRequest, out: &Output) -> Result<Exit> {
    let settings = ctx.settings(out)?;
    let table = request.table.as_str();
    let input = Input::open(&request.file)?;
    let mut opened = open(&settings, &[], Access::Sync)?;
    out.notes(&opened.notes);
    let loaded = load::load_file(&mut opened.db, &opened.pipeline, table, input)?;
    if loaded > 0 {
        if let Some(note) = statistics::analyze_loaded(&mut opened.db, table)? {
            out.note(&note);
        }
    }
    let changed = load::changed_dates(&mut opened.db, &opened.pipeline, table)?;
    show::loaded(&opened.pipeline, table, loaded, &changed, out)?;
    Ok(Exit::Done)
}
