//! `sqlrun generate`: seeded synthetic orders, to try things on.

use crate::error::Result;
use crate::exit::Exit;
use crate::generate::{self, GenerateRequest};
use crate::output::{generate as show, Output};
use crate::settings::Settings;
use crate::store;

pub fn run(settings: &Settings, request: &GenerateRequest, out: &Output) -> Result<Exit> {
    let start = generate::check(request)?;
    let mut db = store::open(settings)?;
    show::generated(&generate::generate(&mut db, request, start)?, out)?;
    Ok(Exit::Done)
}
