//! The one opener: what a command needs first (its settings' database, the pipeline,
//! the database opened as the command asks, the pipeline's objects synced), done here once
//! for every command. A command asks by its access; nothing else opens a database of the
//! settings' (the demo opens its own scratch database).

use crate::db::{Create, Db, DbErrorKind, ReadOpen, Target};
use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
use crate::project::settings::Settings;

/// How a command that works on the pipeline needs its database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access<'a> {
    /// Only reads: a read-only connection where nothing needs writing first, else
    /// migrated and synced quietly.
    Read,
    /// As `Read`, and the statements of this date checked as they would run, also when
    /// nothing needs writing (`render --date`). A refusal of the pipeline's SQL does not
    /// fail the opening: it is kept in `refused`, and the state store opened alone, so
    /// that the command can still show the SQL it refuses.
    ReadDate(&'a str),
    /// Writes, but brings the pipeline's objects up to date itself (or not at all).
    Open,
    /// Reads, and writes nothing at all (`apply --diff`): a database whose pipeline
    /// objects are all there (SQLite: opened read-only); one that would need them made or
    /// changed first is refused, with `sqlrun init` as the way. (PostgreSQL opens as every
    /// command does: a schema of an older sqlrun is migrated.)
    NoWrites,
    /// Writes: migrated, and the pipeline's objects synced; what the sync did is in
    /// `notes`, for the command to say.
    Sync,
}

/// How a command that needs no pipeline needs its database: the state store alone
/// (`runs`, `seals`) or a source to write (`generate`). No template is loaded, so a
/// broken template folder does not stop it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreAccess {
    /// Only reads: read-only where nothing needs writing first, else migrated.
    Read,
    /// Opened and migrated.
    Write,
}

/// A command's pipeline and database, opened as it asked.
pub struct Opened {
    pub target: Target,
    pub pipeline: Pipeline,
    pub db: Db,
    /// What opening did that a user should hear of (a model added, a table made).
    pub notes: Vec<String>,
    /// `Access::ReadDate`: the pipeline's SQL refused for that date.
    pub refused: Option<Error>,
}

/// The database's target and the pipeline for its dialect, nothing opened yet: a
/// command that refuses on the pipeline alone does so before anything is written.
pub struct Loaded {
    pub target: Target,
    pub pipeline: Pipeline,
    /// Whether opening may create the database, and who named it (for the message when
    /// it may not).
    creating: Creating,
}

/// Whether a command may create its database, and what to say when it may not.
#[derive(Clone)]
struct Creating {
    create: Create,
    /// The project file that names the database.
    named_by: Option<std::path::PathBuf>,
}

impl Creating {
    fn of(settings: &Settings) -> Self {
        Creating {
            create: if settings.create_db {
                Create::Yes
            } else {
                Create::Refuse
            },
            named_by: settings.project.clone(),
        }
    }

    /// Opens the database as allowed, a missing one named with the ways to create it.
    fn open(&self, target: &Target) -> Result<Db> {
        Db::open_as(target, self.create).map_err(|e| self.absent(e.into()))
    }

    /// A project's database that does not exist: how to create it, where its name is.
    fn absent(&self, e: Error) -> Error {
        let (Error::NoDatabase { what, .. }, Some(file)) = (&e, &self.named_by) else {
            return e;
        };
        Error::NoDatabase {
            what: what.clone(),
            fix: format!(
                "the project file {} names it, and only `sqlrun init` (or `sqlrun apply \
                 --create`) creates a project's database; if the name is right, run `sqlrun \
                 init`; if it is a typo, fix `db` (or `schema`) there",
                file.display()
            ),
        }
    }
}

/// Loads the pipeline (narrowed to `select` when given) and opens its database.
pub fn open(settings: &Settings, select: &[String], access: Access) -> Result<Opened> {
    load(settings, select)?.open(access)
}

/// The pipeline for the settings' database, narrowed to `select` when given; nothing is
/// opened.
pub fn load(settings: &Settings, select: &[String]) -> Result<Loaded> {
    let target = settings.target()?;
    let mut pipeline = Pipeline::load(settings.templates.as_deref(), target.dialect())?;
    pipeline.retention = settings.retention;
    if !select.is_empty() {
        pipeline.select(select)?;
    }
    Ok(Loaded {
        target,
        pipeline,
        creating: Creating::of(settings),
    })
}

impl Loaded {
    /// Opens the database as `access` asks.
    pub fn open(self, access: Access) -> Result<Opened> {
        let Loaded {
            target,
            pipeline,
            creating,
        } = self;
        let mut notes = Vec::new();
        let mut refused = None;
        let db = match access {
            Access::Read => read(&target, Some(&pipeline), &creating)?,
            Access::ReadDate(ds) => {
                match read_checking(&target, Some(&pipeline), Some(ds), &creating) {
                    Err(
                        e @ (Error::PipelineSql { .. }
                        | Error::Template { .. }
                        | Error::EditedTemplate(_)),
                    ) => {
                        refused = Some(e);
                        read(&target, None, &creating)?
                    }
                    opened => opened?,
                }
            }
            Access::Open => creating.open(&target)?,
            Access::NoWrites => no_writes(&target, &pipeline, &creating)?,
            Access::Sync => {
                let mut db = creating.open(&target)?;
                notes = pipeline.sync(&mut db)?;
                db
            }
        };
        Ok(Opened {
            target,
            pipeline,
            db,
            notes,
            refused,
        })
    }
}

/// The settings' database without a pipeline, as `access` asks.
pub fn open_store(settings: &Settings, access: StoreAccess) -> Result<Db> {
    let target = settings.target()?;
    let creating = Creating::of(settings);
    match access {
        StoreAccess::Read => read(&target, None, &creating),
        StoreAccess::Write => creating.open(&target),
    }
}

/// The settings' database, only if it can be read without writing anything: a SQLite
/// file that exists and is current (a shell's completion must never create or migrate a
/// database, nor wait on a server). None otherwise.
pub fn peek_store(settings: &Settings) -> Option<Db> {
    match Db::open_read_only(&settings.target().ok()?).ok()? {
        ReadOpen::Current(db) => Some(*db),
        _ => None,
    }
}

/// The database, for a command that only reads (`status`, `runs`, `corrections`,
/// `render`, `templates`): opened read-only when its schema and the pipeline's objects
/// (if `pipeline` is given) are current, so that a copy on read-only media can be read;
/// otherwise opened, migrated and synced as every command does, and when that cannot
/// write, said so: run `sqlrun init` with write access.
fn read(target: &Target, pipeline: Option<&Pipeline>, creating: &Creating) -> Result<Db> {
    read_checking(target, pipeline, None, creating)
}

/// `read`, checking that the statements of date `ds` prepare (`render --date`),
/// also when nothing needs writing; the read-only connection prepares them too.
fn read_checking(
    target: &Target,
    pipeline: Option<&Pipeline>,
    ds: Option<&str>,
    creating: &Creating,
) -> Result<Db> {
    let what = match Db::open_read_only(target) {
        Ok(ReadOpen::Current(mut db)) => match pipeline {
            Some(p) if !p.is_current(&mut db)? => {
                Some("its pipeline objects (tables, views) are missing or out of date")
            }
            Some(p) => {
                if let Some(ds) = ds {
                    p.check_date(&mut db, ds)?;
                }
                return Ok(*db);
            }
            None => return Ok(*db),
        },
        Ok(ReadOpen::NeedsWriting) => Some("it needs migrating to this sqlrun's schema"),
        Ok(ReadOpen::Absent) => None,
        // A read-only connection cannot do what a writer can (recover a WAL whose -shm
        // it may not write): the ordinary open tries, and says why if it cannot.
        Err(e) if e.db_kind().is_some_and(DbErrorKind::is_unwritable) => None,
        Err(e) => return Err(e.into()),
    };
    let needs_init = |e| needs_init(e, target, what);
    let mut db = creating.open(target).map_err(needs_init)?;
    if let Some(p) = pipeline {
        // What a sync has to say (a model added) is for the commands that write.
        p.sync_checking(&mut db, ds).map_err(needs_init)?;
    }
    Ok(db)
}

/// The database for a command that writes nothing at all: opened read-only where it can
/// be (SQLite), and refused when the schema or the pipeline's objects would need writing
/// first: that is `sqlrun init`'s.
fn no_writes(target: &Target, pipeline: &Pipeline, creating: &Creating) -> Result<Db> {
    let refuse = |what: &str| {
        Error::bad(format!(
            "{target}: {what}, and `apply --diff` writes nothing, so it does not make them; run \
             `sqlrun init` first (it brings the database up to this pipeline and computes \
             nothing), then preview again"
        ))
    };
    let mut db = match Db::open_read_only(target) {
        Ok(ReadOpen::Current(db)) => *db,
        Ok(ReadOpen::NeedsWriting) if target.dialect() == crate::db::Dialect::Postgres => {
            creating.open(target)?
        }
        Ok(ReadOpen::NeedsWriting) => {
            return Err(refuse("it needs migrating to this sqlrun's schema"))
        }
        Ok(ReadOpen::Absent) => {
            return Err(refuse(
                "there is no database yet, so there is nothing to compare with",
            ))
        }
        Err(e) => return Err(e.into()),
    };
    if !pipeline.is_current(&mut db)? {
        return Err(refuse(
            "its pipeline objects (a model's table, a view) are missing or out of date",
        ));
    }
    Ok(db)
}

/// A database that cannot be written, met by a command that only reads and found it
/// needs writing first (`what`): run `sqlrun init` with write access. Other errors as
/// they are.
fn needs_init(e: Error, target: &Target, what: Option<&str>) -> Error {
    let (Error::Environment { kind, cause, .. }, Some(what)) = (&e, what) else {
        return e;
    };
    let why = match kind {
        DbErrorKind::ReadOnlyFolder => "its folder is read-only",
        DbErrorKind::Denied => "no privilege",
        DbErrorKind::ReadOnly => "it is read-only",
        DbErrorKind::ReadOnlyFileSystem => "its file system is read-only",
        _ => return e,
    };
    Error::NeedsInit {
        target: target.to_string(),
        what: what.into(),
        why: format!("{why}: {cause}"),
    }
}
