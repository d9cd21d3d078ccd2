//! `sqlrun new DIR`: a project to start from: sqlrun.toml, models/, views/, a README.

use std::path::PathBuf;

use crate::commands::Context;

use crate::error::Result;
use crate::exit::Exit;
use crate::output::{new as show, Output};
use crate::project::scaffold;

/// `sqlrun new DIR`.
pub struct NewRequest {
    pub dir: PathBuf,
}

pub fn run(ctx: &Context, request: NewRequest, out: &Output) -> Result<Exit> {
    let dir = &request.dir;
    show::created(dir, &scaffold::write_project(&ctx.flags, dir)?, out)?;
    Ok(Exit::Done)
}
