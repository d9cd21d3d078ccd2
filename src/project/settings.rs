//! The settings every command runs with, resolved from the flags, the environment, the
//! project file and the built-in defaults (`project::resolve`): plain values, no clap.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::db::{self, Target};
use crate::pipeline::retention::Retention;

/// The most dates `apply --jobs` (or `[apply] jobs`) computes at once (each is a
/// database session).
pub const MAX_JOBS: i64 = 64;

/// The global flags as given (each optional: what is not given comes from the environment,
/// then the project file, then the built-in default).
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub db: Option<String>,
    pub schema: Option<String>,
    pub templates: Option<PathBuf>,
    pub json: bool,
    pub verbose: u8,
}

/// `[apply]`: defaults of `sqlrun apply` that a team shares.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub struct ApplyDefaults {
    /// The regular run's `--lookback` when none is given.
    pub lookback: Option<u32>,
    /// `apply --jobs` when none is given. Only for a PostgreSQL database: a SQLite file
    /// named on the command line or in the environment does not inherit it.
    pub jobs: Option<u32>,
}

/// `[history]`: how long each model's `<table>_history` keeps replaced rows.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub struct HistoryDefaults {
    /// `"30 days"` or `"10 versions"` (checked by `Retention::parse` when the file is read).
    pub keep: Option<String>,
}

/// What named the database, the first of: `--db`, `SQLRUN_DB`, the project file's `db`,
/// the built-in default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbFrom {
    Flag,
    Env,
    ProjectFile,
    /// Nothing named it: the built-in default, `./sqlrun.db`.
    Default,
}

/// The global settings every command runs with, resolved from the flags, the
/// environment, the project file and the built-in defaults (`project::resolve`).
#[derive(Debug, Clone)]
pub struct Settings {
    /// A SQLite file path or a PostgreSQL URL.
    pub db: String,
    pub schema: Option<String>,
    /// None: the built-in pipeline.
    pub templates: Option<PathBuf>,
    /// The zone whose calendar days the dates are (UTC unless the project names one).
    pub timezone: chrono_tz::Tz,
    /// The project file these settings were read from, if one was found.
    pub project: Option<PathBuf>,
    /// What named the database.
    pub db_from: DbFrom,
    /// The command may create the database when it does not exist. Always for one that
    /// the command line, the environment or the default names; for the project file's
    /// only `sqlrun init` and `apply --create` (a typo there must not start an empty one).
    pub create_db: bool,
    /// The project's defaults for `apply`.
    pub apply: ApplyDefaults,
    /// How long `<table>_history` keeps replaced rows (`[history] keep`).
    pub retention: Retention,
}

impl Settings {
    /// Settings that name a database and nothing else: no project, the built-in
    /// pipeline, quiet (the demo's scratch database).
    pub fn scratch(db: String, schema: Option<String>) -> Self {
        Settings {
            db,
            schema,
            templates: None,
            timezone: chrono_tz::Tz::UTC,
            project: None,
            db_from: DbFrom::Flag,
            create_db: true,
            apply: ApplyDefaults::default(),
            retention: Retention::default(),
        }
    }

    /// Nothing named the database: it is the built-in default, `./sqlrun.db`.
    pub fn default_db(&self) -> bool {
        self.db_from == DbFrom::Default
    }

    /// The same settings, allowed to create the project's database (`init`,
    /// `apply --create`).
    pub fn creating(self) -> Self {
        Settings {
            create_db: true,
            ..self
        }
    }

    /// The database these settings name, parsed (nothing is opened).
    pub fn target(&self) -> db::Result<Target> {
        Target::parse(&self.db, self.schema.as_deref())
    }
}
