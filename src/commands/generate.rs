//! `sqlrun generate`: seeded synthetic orders, to try things on, then analyzed
//! (PostgreSQL).

use crate::commands::open::{open_store, StoreAccess};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{generate as show, Output};
use crate::sources::generate::{self, GenerateRequest};
use crate::sources::statistics;

pub fn run(ctx: &Context, request: GenerateRequest, out: &Output) -> Result<Exit> {
    let settings = &ctx.settings(out)?;
    let request = &request;
    let start = generate::check(request)?;
    let mut db = open_store(settings, StoreAccess::Write)?;
    let generated = generate::generate(&mut db, request, start)?;
    if let Some(note) = statistics::analyze_loaded(&mut db, generate::TABLE)? {
        out.note(&note);
    }
    show::generated(&generated, out)?;
    Ok(Exit::Done)
}
