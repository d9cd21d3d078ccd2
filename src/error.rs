//! The library's errors. Each message names the date, file or run and says how to fix it;
//! each maps to one of the documented exit codes.

use serde::Serialize;

use crate::db::{self, DbError, DbErrorKind};
use crate::exit::Exit;
use crate::text::words::Severity;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A conversion that cannot fail (a command's arguments into its request) converts through
/// `?` like one that can: every dispatch arm has one shape.
impl From<std::convert::Infallible> for Error {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input or usage: a flag, an interval, a run id. Exit 2, nothing written.
    #[error("{0}")]
    BadInput(String),

    /// A command line that does not parse (clap's message). Exit 2, nothing written.
    #[error("{0}")]
    Usage(String),

    /// A template that cannot be loaded or rendered. Exit 2, nothing written.
    #[error("template {file}: {message}")]
    Template { file: String, message: String },

    /// A model's (or check's) SQL that the database refuses before anything runs: it
    /// does not prepare, returns other columns than its header names, or its table's DDL
    /// fails. `file` names the file, and the line and column when known; `message` the
    /// database's words, the line with a caret, and the fix. Exit 2, nothing written.
    #[error("template {file}: {message}")]
    PipelineSql { file: String, message: String },

    /// Templates that are not this database's pipeline: they lack a model the database
    /// knows, or give a model's table to another model (see src/models.rs). The message
    /// names each difference and the ways out. Exit 2, nothing written.
    #[error("{0}")]
    WrongPipeline(String),

    /// A template whose text changed while its version did not. Exit 2.
    #[error("{0}")]
    EditedTemplate(Box<EditedTemplate>),

    /// The database cannot be opened, created or reached. Exit 2.
    #[error("cannot open database {target}: {message}; {fix}")]
    Open {
        target: String,
        message: String,
        fix: String,
    },

    /// The server cannot be reached now (refused, timed out, no route, starting up, out of
    /// connection slots). Exit 1, the code schedulers retry: nothing was written, and a
    /// retry may find it back.
    #[error(
        "cannot reach database {target}: {message}; nothing was written; {fix}, then run the \
         command again (exit 1: a scheduler retries it)"
    )]
    Unreachable {
        target: String,
        message: String,
        fix: String,
    },

    /// The database a project names does not exist (a SQLite file, a PostgreSQL schema),
    /// and this command does not create one: only `init` and `apply --create` do. `what`
    /// names it, `fix` says how to create it or where its name is. Exit 2.
    #[error("{what}; nothing was written: {fix}")]
    NoDatabase { what: String, fix: String },

    /// The database was migrated by a newer sqlrun. Exit 2.
    #[error(
        "database {target} has schema version {found}, newer than this sqlrun knows ({known}); \
         it was migrated by a newer sqlrun: use that version, or a copy of the database from before"
    )]
    NewerSchema {
        target: String,
        found: i64,
        known: i64,
    },

    /// Migrating failed for a reason other than the surroundings. Exit 2.
    #[error("migrating the database failed: {0}")]
    Migration(String),

    /// A fault of where the database lives, not of the SQL: a read-only file or folder, a
    /// file that is not a database or is damaged, a full disk, a lock held past the wait,
    /// no privilege. `line` names the cause and the fix (src/db explains it for the
    /// database at hand); `cause` is the database's own words. Exit 2: met before a date
    /// was attempted (apply reports one met during a date as `RunStopped`).
    #[error("{line}")]
    Environment {
        kind: DbErrorKind,
        cause: String,
        line: String,
    },

    /// A command that only reads found a database that must be written first (migrated,
    /// or its pipeline objects created) and cannot be written here. Exit 2.
    #[error(
        "database {target}: {what}, and it cannot be written here ({why}); run `sqlrun init` \
         on it with write access once, then the read commands work on it read-only"
    )]
    NeedsInit {
        target: String,
        what: String,
        why: String,
    },

    /// A database error outside a date's transaction: nothing was attempted. Exit 2; a
    /// connection that broke there is not bad input but a fault a retry may outlive:
    /// exit 1 (see `database_message`).
    #[error("{}", database_message(.0))]
    Database(DbError),

    /// A run stopped at a date by a fault of its surroundings (a full disk, a lock held
    /// past the wait, the connection to PostgreSQL lost), or could not record its end: the
    /// message names the date, what stays committed and the fix. Exit 1.
    #[error("{}", .0.message)]
    RunStopped(Box<RunStopped>),

    /// A date's error checks found rows: the date's transaction rolls back with this, and
    /// the date is recorded failed with the failures. Exit 1, as for any failed date.
    #[error("{}", failed_message(.0, None))]
    ChecksFailed(Vec<Failure>),

    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    pub fn exit_code(&self) -> u8 {
        self.exit().code()
    }

    /// How a command that failed with this error ends.
    pub fn exit(&self) -> Exit {
        match self {
            Error::BadInput(_)
            | Error::Usage(_)
            | Error::Template { .. }
            | Error::PipelineSql { .. }
            | Error::WrongPipeline(_)
            | Error::EditedTemplate(_)
            | Error::Open { .. }
            | Error::NewerSchema { .. }
            | Error::Migration(_)
            | Error::Environment { .. }
            | Error::NeedsInit { .. }
            | Error::NoDatabase { .. } => Exit::BadInput,
            Error::Database(e) if e.kind.is_lost() => Exit::Failed,
            Error::Database(_) => Exit::BadInput,
            Error::Unreachable { .. }
            | Error::RunStopped(_)
            | Error::ChecksFailed(_)
            | Error::Io(_) => Exit::Failed,
        }
    }

    /// The database error behind this one, by cause.
    pub fn db_kind(&self) -> Option<DbErrorKind> {
        match self {
            Error::Database(e) => Some(e.kind),
            Error::Environment { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    pub fn stopped(run_id: i64, message: String, committed: Vec<CommittedDate>) -> Self {
        Error::RunStopped(Box::new(RunStopped {
            message,
            run_id,
            committed,
            in_doubt: None,
        }))
    }

    /// The error as `--json` prints it on stdout: `{"error": {...}}`, with what a stopped
    /// run committed before it stopped.
    pub fn to_json(&self) -> serde_json::Value {
        let mut error = serde_json::json!({
            "exit_code": self.exit_code(),
            "kind": self.kind_name(),
            "message": self.to_string(),
        });
        if let Error::RunStopped(stopped) = self {
            error["run_id"] = stopped.run_id.into();
            error["committed"] = serde_json::json!(stopped.committed);
            if let Some(date) = &stopped.in_doubt {
                error["in_doubt"] = serde_json::json!(date);
            }
        }
        serde_json::json!({ "error": error })
    }

    /// A word for the kind of error, for scripts that branch on it.
    fn kind_name(&self) -> &'static str {
        match self {
            Error::BadInput(_) => "bad_input",
            Error::Usage(_) => "usage",
            // A script that branches on "template" keeps working: these are template errors.
            Error::Template { .. } | Error::PipelineSql { .. } | Error::EditedTemplate(_) => {
                "template"
            }
            Error::WrongPipeline(_) => "wrong_pipeline",
            Error::Open { .. } | Error::NeedsInit { .. } => "open",
            Error::NoDatabase { .. } => "no_database",
            Error::NewerSchema { .. } | Error::Migration(_) => "migration",
            Error::Environment { .. } => "environment",
            Error::Unreachable { .. } => "unreachable",
            Error::Database(e) if e.kind.is_lost() => "connection_lost",
            Error::Database(_) => "database",
            Error::RunStopped(_) => "run_stopped",
            Error::ChecksFailed(_) => "checks_failed",
            Error::Io(_) => "io",
        }
    }

    pub fn bad(message: impl Into<String>) -> Self {
        Error::BadInput(message.into())
    }

    /// Every problem found with one template file (its header, its table), one line each
    /// with its fix, so that it is fixed in one go.
    pub fn problems(file: &str, what: &str, mut problems: Vec<String>) -> Self {
        let message = match problems.len() {
            1 => problems.remove(0),
            n => format!("{n} problems with {what}:\n  - {}", problems.join("\n  - ")),
        };
        Error::Template {
            file: file.to_string(),
            message,
        }
    }

    /// Several errors said at once (one file's after another); one stays as it is.
    pub fn all(mut errors: Vec<Error>) -> Self {
        if errors.len() == 1 {
            return errors.remove(0);
        }
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        Error::BadInput(lines.join("\n"))
    }
}

/// A database error by its cause: a fault of the surroundings (to be explained for the
/// database at hand) or an error of the SQL.
impl From<DbError> for Error {
    fn from(e: DbError) -> Self {
        db::Error::from(e).into()
    }
}

/// A database error met outside a date's transaction, as said: a broken connection is
/// not the SQL's fault, and says what was written and that running again is safe.
fn database_message(e: &DbError) -> String {
    let landed = match e.kind {
        DbErrorKind::ConnectionLost => "the step under way rolled back and no date was written",
        DbErrorKind::CommitUnknown => {
            "it broke while a bookkeeping step was committing, which may have landed unless \
             the server's words say it rolled back (`sqlrun status` and `sqlrun runs` tell; a \
             run left holding dates is reclaimed by the next one), and no date was written"
        }
        _ => return format!("database error: {e}"),
    };
    format!(
        "lost the connection to the database ({e}): {landed}; check that the server is up and \
         the network to it, then run the command again (exit 1: a scheduler retries it; what \
         is done is not done twice)"
    )
}

/// What the database layer returns, as the variant of the same name.
impl From<db::Error> for Error {
    fn from(e: db::Error) -> Self {
        match e {
            db::Error::Database(e) => Error::Database(e),
            db::Error::Environment { kind, cause, line } => {
                Error::Environment { kind, cause, line }
            }
            db::Error::BadInput(message) => Error::BadInput(message),
            db::Error::Unreachable {
                target,
                message,
                fix,
            } => Error::Unreachable {
                target,
                message,
                fix,
            },
            db::Error::Open {
                target,
                message,
                fix,
            } => Error::Open {
                target,
                message,
                fix,
            },
            db::Error::NewerSchema {
                target,
                found,
                known,
            } => Error::NewerSchema {
                target,
                found,
                known,
            },
            db::Error::Migration(message) => Error::Migration(message),
            db::Error::Absent(what) => Error::NoDatabase {
                what,
                fix: "run `sqlrun init` to create it".into(),
            },
        }
    }
}

/// A run that stopped early, and what it committed before (`--json` reports both).
#[derive(Debug, Serialize)]
pub struct RunStopped {
    pub message: String,
    pub run_id: i64,
    /// The dates this run finished before it stopped (they stay committed), and how.
    pub committed: Vec<CommittedDate>,
    /// The date it stopped at, when that date's COMMIT failed (SQLite): as found after.
    pub in_doubt: Option<InDoubtDate>,
}

/// A date whose COMMIT failed, as the database was read afterwards through a new
/// connection: `found` is `committed` (it landed), `rolled_back` or `unknown` (the
/// database could not be read again); `status` its record in `run_partitions` as found
/// (none: it has no record); `run_recorded` whether the run's end could be recorded.
#[derive(Debug, Clone, Serialize)]
pub struct InDoubtDate {
    pub ds: String,
    pub found: &'static str,
    pub status: Option<crate::text::words::DateStatus>,
    pub run_recorded: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CommittedDate {
    pub ds: String,
    pub status: crate::text::words::DateStatus,
}

/// The details of an edited template, boxed to keep `Error` small.
#[derive(Debug, thiserror::Error)]
#[error(
    "template {file} changed but its version is still {version}: the state store recorded \
     version {version} with checksum {recorded} (first used {first_used}), the file now has \
     checksum {found}. Raise `-- version:` in its header to {next} to record the new SQL, or \
     restore the recorded text (`sqlrun templates --show {name}@{version}` prints it). If these \
     are another pipeline's templates, run with this database's project or `--templates` \
     instead{also}"
)]
pub struct EditedTemplate {
    /// What else the new version needs (a source's `-- migrate:`), or nothing.
    pub also: String,
    pub file: String,
    pub name: String,
    pub version: i64,
    pub next: i64,
    pub recorded: String,
    pub found: String,
    pub first_used: String,
}
/// A check that found rows on a date.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub check: String,
    pub model: String,
    pub severity: Severity,
    pub version: i64,
    /// How many rows it returned in all.
    pub failing_rows: i64,
    /// The first of them ([`SAMPLE_ROWS`] at most), each column by name.
    pub rows: Vec<serde_json::Map<String, serde_json::Value>>,
}

impl Failure {
    /// The failing rows as the state store keeps them: a JSON array of objects.
    pub fn sample_json(&self) -> String {
        serde_json::to_string(&self.rows).expect("JSON values serialize")
    }

    /// `check NAME (model M) found N failing rows`, as a failed date's error says it.
    pub fn summary(&self) -> String {
        let rows = match self.failing_rows {
            1 => "1 failing row".to_string(),
            n => format!("{n} failing rows"),
        };
        format!("check {} (model {}) found {rows}", self.check, self.model)
    }
}

/// The error a date fails with when its error checks fail: every failing check, with
/// its count; the date rolled back. `run_id`: the run whose record shows the rows.
pub fn failed_message(failures: &[Failure], run_id: Option<i64>) -> String {
    let each: Vec<String> = failures
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(Failure::summary)
        .collect();
    let run = run_id.map_or("RUN_ID".to_string(), |r| r.to_string());
    format!(
        "{}; the date was rolled back and its previous rows stay (`sqlrun runs {run}` shows the failing rows)",
        each.join("; ")
    )
}
