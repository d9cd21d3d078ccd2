//! `sqlrun undo RUN`: the plan read (what RUN replaced that still holds its rows), then
//! the run of kind undo that puts it back, through `apply`'s path; or, with `--dry-run`
//! or when nothing is left to undo, the plan alone.

use super::open::{open, Access};
use crate::commands::Context;
use crate::dates::clock::Clock;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::apply::{finished, Watch};
use crate::output::{undo as show, Output};
use crate::run::undo::{self, UndoAsk};
use crate::run::{self, Request};
use crate::text::words::RunKind;

/// `sqlrun undo RUN [--interval I] [--reason TEXT] [--by NAME] [--dry-run]`.
pub struct UndoRequest {
    pub run_id: i64,
    pub interval: Option<String>,
    pub reason: Option<String>,
    pub by: Option<String>,
    pub dry_run: bool,
}

pub fn run(ctx: &Context, request: UndoRequest, out: &Output) -> Result<Exit> {
    let settings = ctx.settings(out)?;
    let mut opened = open(&settings, &[], Access::Open)?;
    let ask = UndoAsk {
        run_id: request.run_id,
        interval: request.interval.clone(),
    };
    let plan = undo::plan(&mut opened.db, &opened.pipeline, &ask, settings.timezone)?;
    let span = match plan.span() {
        Some(span) if !request.dry_run => span,
        // Nothing left to put back, or only the plan asked for: said, nothing written.
        _ => {
            let zone = settings.timezone;
            let downstream = undo::downstream(&opened.pipeline, &plan, zone)?;
            show::plan(&plan, &downstream, request.dry_run, out)?;
            return Ok(Exit::Done);
        }
    };
    show::skipped(&plan, out);
    show::rebuilt(&plan, out);
    // The run computes the models it puts back and those downstream of them (recorded
    // as its selection); each date narrows that to its own (system/date.sql), or, in a
    // pipeline of other grains or windows, to its cascade's parts (run::start::begin).
    opened.pipeline.select(&plan.models())?;
    let run_request = Request {
        interval: Some(span.to_string()),
        kind: Some(RunKind::Undo),
        by: request.by,
        reason: request.reason,
        select: plan.models(),
        undo: Some(plan.work()),
        ..Request::default()
    };
    let request = run_request.with_defaults(&settings.apply);
    let checked = request.check(&settings)?;
    let (pipeline, db) = (&opened.pipeline, &mut opened.db);
    let clock = Clock::read(db)?;
    if let Some(warning) = clock.skew_warning() {
        out.note(&warning);
    }
    let asked = checked.at(clock)?;
    let mut watch = Watch::new(out);
    let ran = run::apply(&opened.target, pipeline, db, &asked, &mut watch)?;
    finished(ran, out)
}
