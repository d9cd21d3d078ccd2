//! `sqlrun templates`: the pipeline's templates against what the state store recorded;
//! `--show NAME@VERSION`: a recorded version's text.

use crate::commands::{open, Access};
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{templates as show, Output};
use crate::pipeline::versions;
use crate::project::settings::Settings;

pub fn run(settings: &Settings, show_spec: Option<&str>, out: &Output) -> Result<Exit> {
    let mut opened = open(settings, &[], Access::Read)?;
    match show_spec {
        Some(spec) => {
            let (name, version, body) = versions::body(&mut opened.db, spec)?;
            show::body(&name, version, &body, out)?;
        }
        None => show::templates(
            &versions::states(&mut opened.db, &opened.pipeline.templates)?,
            out,
        )?,
    }
    Ok(Exit::Done)
}
