//! `sqlrun apply`: the request checked, the database opened and its clock read (what day
//! it is), the run (or its plan, or its preview), and how it ended handed to output.

use super::open::{open, Access};
use crate::commands::Context;
use crate::dates::clock::Clock;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::apply::{finished, Watch};
use crate::output::{diff, plan, Output};
use crate::run::{self, Request};
use crate::sources::statistics;

pub fn run(ctx: &Context, request: Request, out: &Output) -> Result<Exit> {
    let settings = ctx.settings(out)?;
    let settings = &if request.create {
        settings.creating()
    } else {
        settings
    };
    let request = request.with_defaults(&settings.apply);
    // A request that cannot run is refused before the templates load.
    let checked = request.check(settings)?;
    let access = match request.diff {
        true => Access::NoWrites,
        false => Access::Open,
    };
    let mut opened = open(settings, &request.select, access)?;
    let (pipeline, db) = (&opened.pipeline, &mut opened.db);
    // Once per run: on PostgreSQL the server's clock says what day it is, for the dry
    // run as for the run.
    let clock = Clock::read(db)?;
    if let Some(warning) = clock.skew_warning() {
        out.note(&warning);
    }
    let asked = checked.at(clock)?;
    let mut watch = Watch::new(out);
    if request.diff {
        let preview = run::preview(db, pipeline, &asked, &mut watch)?;
        // Said once its transaction has ended, as the plan is.
        diff::preview(&preview, out)?;
        return Ok(preview.exit());
    }
    if request.dry_run {
        let plan = run::dry_run(db, pipeline, &asked, &mut watch)?;
        // Said once its transaction has ended: a slow reader of the plan (a pager) holds
        // up no other runner's turn.
        plan::dry_run(&plan, out)?;
        return Ok(Exit::Done);
    }
    // Before the run: a date planned from stale statistics can take ten times as long.
    let sources: Vec<&str> = pipeline.sources.iter().map(|s| s.table.as_str()).collect();
    out.notes(&statistics::refresh_stale(db, &sources)?);
    let ran = run::apply(&opened.target, pipeline, db, &asked, &mut watch)?;
    finished(ran, out)
}
