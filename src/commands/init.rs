//! `sqlrun init`: create or migrate the database and bring the pipeline's objects up to
//! date (every other command does so too; this one only that).

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{init as show, Output};

/// `sqlrun init` (no arguments).
pub struct InitRequest;

pub fn run(ctx: &Context, _request: InitRequest, out: &Output) -> Result<Exit> {
    // The one command that creates a project's database (besides `apply --create`).
    let settings = &ctx.settings(out)?.creating();
    let opened = open(settings, &[], Access::Sync)?;
    out.notes(&opened.notes);
    show::ready(
        &opened.target,
        &opened.pipeline,
        settings.project.as_deref(),
        out,
    )?;
    Ok(Exit::Done)
}
