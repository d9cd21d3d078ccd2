//! `sqlrun new DIR`: a project to start from: sqlrun.toml, models/, views/, a README.

use std::path::Path;

use crate::error::Result;
use crate::exit::Exit;
use crate::output::{new as show, Output};
use crate::project::scaffold;
use crate::project::settings::Flags;

pub fn run(flags: &Flags, dir: &Path, out: &Output) -> Result<Exit> {
    show::created(dir, &scaffold::write_project(flags, dir)?, out)?;
    Ok(Exit::Done)
}
