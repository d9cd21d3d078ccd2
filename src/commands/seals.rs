//! `sqlrun seals`: the seal events (seal, reissue, unseal), newest first; `seals ID`: one,
//! with the dates of each model it covered.

use crate::error::Result;
use crate::exit::Exit;
use crate::output::{runs as show, Output};
use crate::project::settings::Settings;
use crate::run::history;
use crate::store;

/// `sqlrun seals`: the seal events, newest first; `seals ID`: one, with what it covered.
pub fn run(settings: &Settings, seal_id: Option<i64>, limit: u32, out: &Output) -> Result<Exit> {
    let mut db = store::open_to_read(&store::target(settings)?, None)?;
    match seal_id {
        None => show::seals_list(&history::newest_seal_events(&mut db, limit)?, out)?,
        Some(id) => show::seal_detail(&history::seal_detail(&mut db, id)?, out)?,
    }
    Ok(Exit::Done)
}
