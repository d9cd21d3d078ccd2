//! One file per subcommand: each reads its request, calls the domain, and hands the
//! result to output. What every command that touches the database does first is here,
//! once: settings → pipeline → database → sync.

pub mod apply;
pub mod check;
pub mod completions;
pub mod corrections;
pub mod demo;
pub mod generate;
pub mod help;
pub mod init;
pub mod load;
pub mod man;
pub mod new;
pub mod release;
pub mod render;
pub mod report;
pub mod reserve;
pub mod retire;
pub mod runs;
pub mod seal;
pub mod seals;
pub mod status;
pub mod templates;

use crate::db::{Db, Target};
use crate::error::Result;
use crate::pipeline::Pipeline;
use crate::project::settings::Settings;
use crate::store;

/// How a command needs its database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only reads: a read-only connection where nothing needs writing first
    /// (`store::open_to_read`), else migrated and synced quietly.
    Read,
    /// Writes, but brings the pipeline's objects up to date itself (or not at all).
    Open,
    /// Writes: migrated, and the pipeline's objects synced; what the sync did is in
    /// `notes`, for the command to say.
    Sync,
}

/// A command's pipeline and database, opened as it asked.
pub struct Opened {
    pub target: Target,
    pub pipeline: Pipeline,
    pub db: Db,
    /// What opening did that a user should hear of (a model added, a table made).
    pub notes: Vec<String>,
}

/// Loads the pipeline (narrowed to `select` when given) and opens its database.
pub fn open(settings: &Settings, select: &[String], access: Access) -> Result<Opened> {
    let (target, pipeline) = load(settings, select)?;
    let mut notes = Vec::new();
    let db = match access {
        Access::Read => store::open_to_read(&target, Some(&pipeline))?,
        Access::Open => Db::open(&target)?,
        Access::Sync => {
            let mut db = Db::open(&target)?;
            notes = pipeline.sync(&mut db)?;
            db
        }
    };
    Ok(Opened {
        target,
        pipeline,
        db,
        notes,
    })
}

/// The database's target and the pipeline for its dialect, without opening anything.
pub fn load(settings: &Settings, select: &[String]) -> Result<(Target, Pipeline)> {
    let target = store::target(settings)?;
    let mut pipeline = Pipeline::load(settings.templates.as_deref(), target.dialect())?;
    if !select.is_empty() {
        pipeline.select(select)?;
    }
    Ok((target, pipeline))
}
