//! `sqlrun load TABLE FILE`: rows from a CSV file into a table, tracked like any insert,
//! then analyzed (PostgreSQL).

use crate::commands::{open, Access};
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{load as show, Output};
use crate::project::settings::Settings;
use crate::sources::load::{self, Input};
use crate::sources::statistics;

pub fn run(settings: &Settings, table: &str, file: &str, out: &Output) -> Result<Exit> {
    let input = Input::open(file)?;
    let mut opened = open(settings, &[], Access::Sync)?;
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
