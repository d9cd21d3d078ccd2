//! The library's errors. Each message names the date, file or run and says how to fix it;
//! each maps to one of the documented exit codes.

use std::path::PathBuf;

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

    /// The database file cannot be opened or created. Exit 2.
    #[error("cannot open database {path}: {source}; pass --db PATH (or set SQLRUN_DB) to a file in a folder that exists and is writable")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    /// The database was migrated by a newer sqlrun. Exit 2.
    #[error(
        "database {path} has schema version {found}, newer than this sqlrun knows ({known}); \
         it was migrated by a newer sqlrun: use that version, or a copy of the database from before"
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    #[error("migrating the database failed: {0}")]
    Migration(#[from] refinery::Error),

    /// A database error outside a date's transaction. Exit 1.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),

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
            Error::Migration(_) | Error::Sqlite(_) | Error::Io(_) => 1,
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
