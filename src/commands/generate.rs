//! `sqlrun generate`: seeded synthetic orders, to try things on, then analyzed
//! (PostgreSQL).

use crate::error::Result;
use crate::exit::Exit;
use crate::output::{generate as show, Output};
use crate::project::settings::Settings;
use crate::sources::generate::{self, GenerateRequest};
use crate::sources::statistics;
use crate::store;

pub fn run(settings: &Settings, request: &GenerateRequest, out: &Output) -> Result<Exit> {
    let start = generate::check(request)?;
    let mut db = store::open(settings)?;
    let generated = generate::generate(&mut db, request, start)?;
    if let Some(note) = statistics::analyze_loaded(&mut db, generate::TABLE)? {
        out.note(&note);
    }
    show::generated(&generated, out)?;
    Ok(Exit::Done)
}
