//! The library's errors. Each message names the date, file or run and says how to fix it;
//! each maps to one of the documented exit codes.

use crate::db::{DbError, DbErrorKind};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input or usage: a flag, an interval, a run id. Exit 2, nothing written.
    #[error("{0}")]
    BadInput(String),

    /// A template that cannot be loaded or rendered. Exit 2, nothing written.
    #[error("template {file}: {message}")]
    Template { file: String, message: String },

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

    #[error("migrating the database failed: {0}")]
    Migration(String),

    /// A database error outside a date's transaction. Exit 1.
    #[error("database error: {0}")]
    Database(#[from] DbError),

    /// The connection to PostgreSQL ended while a run was writing: the date in progress
    /// rolled back, and nothing more can be written. Exit 1.
    #[error("{0}")]
    ConnectionLost(String),

    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::BadInput(_)
            | Error::Template { .. }
            | Error::EditedTemplate(_)
            | Error::Open { .. }
            | Error::NewerSchema { .. } => 2,
            Error::Migration(_) | Error::Database(_) | Error::ConnectionLost(_) | Error::Io(_) => 1,
        }
    }

    /// The database error behind this one, by cause.
    pub fn db_kind(&self) -> Option<DbErrorKind> {
        match self {
            Error::Database(e) => Some(e.kind),
            _ => None,
        }
    }

    pub fn bad(message: impl Into<String>) -> Self {
        Error::BadInput(message.into())
    }
}

/// The details of an edited template, boxed to keep `Error` small.
#[derive(Debug, thiserror::Error)]
#[error(
    "template {file} changed but its version is still {version}: the state store recorded \
     version {version} with checksum {recorded} (first used {first_used}), the file now has \
     checksum {found}. Raise `-- version:` in its header to {next} to record the new SQL, or \
     restore the recorded text (`sqlrun templates --show {name}@{version}` prints it)"
)]
pub struct EditedTemplate {
    pub file: String,
    pub name: String,
    pub version: i64,
    pub next: i64,
    pub recorded: String,
    pub found: String,
    pub first_used: String,
}
