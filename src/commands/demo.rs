//! `sqlrun demo`: the story (src/demo.rs), told on stdout, or its numbers with `--json`.

use std::path::PathBuf;

use crate::commands::Context;

use crate::demo;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::Output;
use crate::project;

/// `sqlrun demo [--keep DIR]`.
pub struct DemoRequest {
    pub keep: Option<PathBuf>,
}

/// The demo tells the same story anywhere: a scratch database and the built-in pipeline,
/// whatever a project file says (only the backend comes from --db).
pub fn run(ctx: &Context, request: DemoRequest, out: &Output) -> Result<Exit> {
    let settings = project::resolve(&ctx.flags, &project::Env::from_process(), None)?;
    let (say, summary) = demo::run(&settings, request.keep.as_deref())?;
    out.json(&summary)?;
    out.text(&say)?;
    Ok(Exit::Done)
}
