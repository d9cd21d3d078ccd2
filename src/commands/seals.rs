//! `sqlrun seals`: the seal events (seal, reissue, unseal), newest first; `seals ID`: one,
//! with the dates of each model it covered.

use crate::commands::open::{open_store, StoreAccess};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{runs as show, Output};
use crate::run::history;

/// `sqlrun seals [SEAL_ID] [--limit N]`.
pub struct SealsRequest {
    pub seal_id: Option<i64>,
    pub limit: u32,
}

/// `sqlrun seals`: the seal events, newest first; `seals ID`: one, with what it covered.
pub fn run(ctx: &Context, request: SealsRequest, out: &Output) -> Result<Exit> {
    let SealsRequest { seal_id, limit } = request;
    let mut db = open_store(&ctx.settings(out)?, StoreAccess::Read)?;
    match seal_id {
        None => show::seals_list(&history::newest_seal_events(&mut db, limit)?, out)?,
        Some(id) => show::seal_detail(&history::seal_detail(&mut db, id)?, out)?,
    }
    Ok(Exit::Done)
}
