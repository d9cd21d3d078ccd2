//! `sqlrun init`: create or migrate the database and bring the pipeline's objects up to
//! date (every other command does so too; this one only that).

use crate::commands::{open, Access};
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{init as show, Output};
use crate::project::settings::Settings;

pub fn run(settings: &Settings, out: &Output) -> Result<Exit> {
    let opened = open(settings, &[], Access::Sync)?;
    out.notes(&opened.notes);
    show::ready(
        &opened.db,
        &opened.pipeline,
        settings.project.as_deref(),
        out,
    )?;
    Ok(Exit::Done)
}
