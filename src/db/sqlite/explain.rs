//! SQLite's errors: classified by result code into a `DbError`, and a fault of the
//! database's surroundings (its file, folder, disk, locks) said on one line with its fix,
//! by what the file system says about the path.

use std::path::Path;

use rusqlite::{ffi, ErrorCode};

use super::super::ErrorAt;
use super::{folder, folder_writable, DbError, DbErrorKind, Error, BUSY_TIMEOUT};

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        db_error(&e)
    }
}

/// An error by its cause, from SQLite's (extended) result code.
fn db_error(e: &rusqlite::Error) -> DbError {
    let extended = match e {
        rusqlite::Error::SqliteFailure(f, _) => f.extended_code,
        _ => 0,
    };
    let kind = match e.sqlite_error_code() {
        _ if extended == ffi::SQLITE_READONLY_DIRECTORY => DbErrorKind::ReadOnlyFolder,
        _ if extended == ffi::SQLITE_IOERR_SHMSIZE => DbErrorKind::DiskFull,
        Some(ErrorCode::OperationInterrupted) => DbErrorKind::Interrupted,
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => DbErrorKind::Timeout,
        Some(ErrorCode::ReadOnly) => DbErrorKind::ReadOnly,
        Some(ErrorCode::PermissionDenied | ErrorCode::AuthorizationForStatementDenied) => {
            DbErrorKind::Denied
        }
        Some(ErrorCode::NotADatabase) => DbErrorKind::NotADatabase,
        Some(ErrorCode::DatabaseCorrupt) => DbErrorKind::Corrupt,
        Some(ErrorCode::DiskFull) => DbErrorKind::DiskFull,
        Some(ErrorCode::CannotOpen) => DbErrorKind::CannotOpen,
        _ => DbErrorKind::Other,
    };
    let at = match e {
        rusqlite::Error::SqlInputError { sql, offset, .. } => Some(Box::new(ErrorAt {
            statement: sql.clone(),
            offset: (*offset).max(0) as usize,
        })),
        _ => None,
    };
    DbError {
        kind,
        message: describe(e),
        context: None,
        at,
    }
}

/// A migration that failed: by its cause when SQLite's error says one (a read-only file,
/// a full disk), else as refinery tells it.
pub(super) fn migration_error(e: &refinery::Error) -> Error {
    let source = std::error::Error::source(e).and_then(|s| s.downcast_ref::<rusqlite::Error>());
    match source.map(db_error) {
        Some(db) if db.kind.is_environment() => db.into(),
        _ => Error::Migration(e.to_string()),
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        DbError::from(e).into()
    }
}

/// A database error in a line: SQLite's message (where a statement that does not
/// prepare stopped is `DbError::at`).
fn describe(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        other => other.to_string(),
    }
}

/// Whether the database file can be opened for writing (nothing is written).
fn file_writable(path: &Path) -> bool {
    std::fs::OpenOptions::new().write(true).open(path).is_ok()
}

/// A read-only or unopenable file, by what the file system says: the file itself (on a
/// read-only mount its folder too), its folder (where SQLite creates -wal and -shm), or a
/// folder that does not exist.
fn refine(kind: DbErrorKind, path: &Path) -> DbErrorKind {
    let by_path = [
        DbErrorKind::CannotOpen,
        DbErrorKind::ReadOnly,
        DbErrorKind::ReadOnlyFolder,
    ];
    if !by_path.contains(&kind) || !folder(path).is_dir() {
        return kind;
    }
    if path.is_file() && !file_writable(path) {
        DbErrorKind::ReadOnly
    } else if !folder_writable(path) {
        DbErrorKind::ReadOnlyFolder
    } else {
        kind
    }
}

/// A fault of the surroundings of the database at `path`, on one line: what is wrong
/// and how to fix it. Returns the kind refined by what the file system says.
pub fn explain(kind: DbErrorKind, path: &Path, cause: &str) -> (DbErrorKind, String) {
    let kind = refine(kind, path);
    let db = path.display();
    let line = match kind {
        DbErrorKind::ReadOnly | DbErrorKind::ReadOnlyFolder => read_only(kind, path, cause),
        DbErrorKind::NotADatabase => format!(
            "{db} is not a SQLite database ({cause}): pass --db the right file, or move this \
             one away and run `sqlrun init` to start a new database"
        ),
        DbErrorKind::Corrupt => format!(
            "database {db} is damaged ({cause}): restore it from a backup (`sqlite3 {db} \
             .recover` saves what it can), or move it away and run `sqlrun init` to start a \
             new one"
        ),
        DbErrorKind::DiskFull => format!(
            "the disk holding {db} is full ({cause}): free space on it, or move the database \
             to a disk with room"
        ),
        DbErrorKind::Timeout => format!(
            "database {db} stayed locked by another process for over {} s ({cause}): find \
             what holds it (`fuser {db}`; e.g. a sqlite3 shell inside a transaction) and end \
             it, then run again",
            BUSY_TIMEOUT.as_secs()
        ),
        DbErrorKind::CannotOpen => {
            let missing = match folder(path) {
                f if f.is_dir() => String::new(),
                f => format!("; the folder {} does not exist", f.display()),
            };
            format!(
                "cannot open database {db} ({cause}){missing}: pass --db PATH (or set \
                 SQLRUN_DB) to a file in a folder that exists and is writable"
            )
        }
        DbErrorKind::Denied => {
            format!("database {db}: not allowed ({cause}); check the file's owner and permissions")
        }
        _ => cause.to_string(),
    };
    (kind, line)
}

/// A read-only file (on a read-only mount, its folder too) or a read-only folder, which
/// SQLite needs for the database's -wal and -shm files.
fn read_only(kind: DbErrorKind, path: &Path, cause: &str) -> String {
    let db = path.display();
    let readers = "(the read commands, `sqlrun status`, `runs`, ..., need no write access to \
                   a database that is current)";
    let dir = folder(path);
    if kind == DbErrorKind::ReadOnly {
        let also = if folder_writable(path) {
            ""
        } else {
            ", and so is its folder"
        };
        return format!(
            "database {db} is read-only{also} ({cause}): make it writable (its permissions, \
             `chattr -i`, a read-write mount) or work on a writable copy {readers}"
        );
    }
    if !path.is_file() {
        return format!(
            "cannot create database {db}: its folder {} is read-only ({cause}); pass --db a \
             path in a writable folder",
            dir.display()
        );
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    format!(
        "database {db} cannot be written: its folder {} is read-only, and SQLite creates \
         {name}-wal and {name}-shm beside the database ({cause}); make the folder writable or \
         copy the database into a writable folder {readers}",
        dir.display()
    )
}
