//! `sqlrun templates`: the pipeline's templates against what the state store recorded;
//! `--show NAME@VERSION`: a recorded version's text.

use crate::commands::open::{open, Access};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{templates as show, Output};
use crate::pipeline::versions;

/// `sqlrun templates [--show NAME@VERSION]`.
pub struct TemplatesRequest {
    pub show: Option<String>,
}

pub fn run(ctx: &Context, request: TemplatesRequest, out: &Output) -> Result<Exit> {
    let mut opened = open(&ctx.settings(out)?, &[], Access::Read)?;
    match request.show.as_deref() {
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
