//! `sqlrun demo`: the story (src/demo.rs), told on stdout, or its numbers with `--json`.

use std::path::Path;

use crate::demo;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::Output;
use crate::project::settings::Settings;

pub fn run(settings: &Settings, keep: Option<&Path>, out: &Output) -> Result<Exit> {
    let (say, summary) = demo::run(settings, keep)?;
    out.json(&summary)?;
    out.text(&say)?;
    Ok(Exit::Done)
}
