//! SQLite's errors: classified by result code into a `DbError`, and a fault of the
//! database's surroundings (its file, folder, disk, locks) said on one line with its fix,
//! by what the file system says about the path.

use std::io::ErrorKind;
use std::path::Path;

use rusqlite::{ffi, ErrorCode};

use super::super::ErrorAt;
use super::{codes, folder, folder_writable, DbError, DbErrorKind, Error, BUSY_TIMEOUT};

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        db_error(&e, None)
    }
}

/// An error by its cause, from SQLite's (extended) result code and, for an I/O error,
/// the OS's error number when the connection kept it (`errno`): an I/O error that is the
/// file system's being read-only, or full, is said as that.
pub(super) fn db_error(e: &rusqlite::Error, errno: Option<i32>) -> DbError {
    let extended = codes::of(e);
    let os = errno.map(|n| std::io::Error::from_raw_os_error(n).kind());
    let kind = match e.sqlite_error_code() {
        _ if os == Some(ErrorKind::ReadOnlyFilesystem) => DbErrorKind::ReadOnlyFileSystem,
        _ if os == Some(ErrorKind::StorageFull) => DbErrorKind::DiskFull,
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
        Some(ErrorCode::SystemIoFailure) => DbErrorKind::DiskIo,
        Some(ErrorCode::FileLockingProtocolFailed) => DbErrorKind::Protocol,
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
        message: with_code(describe(e), extended, errno),
        context: None,
        at,
    }
}

/// SQLite's words, with the code's name where it says more than the words (every I/O
/// error is "disk I/O error"; its extended code tells a failed sync from a failed
/// write) and the OS's error.
fn with_code(message: String, extended: i32, errno: Option<i32>) -> String {
    let family = extended & 0xff;
    let telling = matches!(family, ffi::SQLITE_IOERR | ffi::SQLITE_PROTOCOL) || extended != family;
    let mut message = match codes::name(extended) {
        Some(name) if telling => format!("{message}, code {name}"),
        _ => message,
    };
    if let Some(n) = errno.filter(|n| *n != 0) {
        message.push_str(&format!(", {}", std::io::Error::from_raw_os_error(n)));
    }
    message
}

/// A migration that failed: by its cause when SQLite's error says one (a read-only file,
/// a full disk), else as refinery tells it. `errno`: the OS's error number behind a
/// result code, as the connection kept it.
pub(super) fn migration_error(e: &refinery::Error, errno: impl Fn(i32) -> Option<i32>) -> Error {
    let source = std::error::Error::source(e).and_then(|s| s.downcast_ref::<rusqlite::Error>());
    match source.map(|e| db_error(e, errno(codes::of(e)))) {
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

/// A read-only or unopenable file, or an I/O error, by what the file system says: a file
/// system mounted read-only, the file itself (on a read-only mount its folder too), its
/// folder (where SQLite creates -wal and -shm), or a folder that does not exist.
fn refine(kind: DbErrorKind, path: &Path) -> DbErrorKind {
    let by_path = [
        DbErrorKind::CannotOpen,
        DbErrorKind::ReadOnly,
        DbErrorKind::ReadOnlyFolder,
        DbErrorKind::DiskIo,
    ];
    if !by_path.contains(&kind) || !folder(path).is_dir() {
        return kind;
    }
    if read_only_file_system(path) {
        DbErrorKind::ReadOnlyFileSystem
    } else if kind == DbErrorKind::DiskIo {
        kind
    } else if path.is_file() && !file_writable(path) {
        DbErrorKind::ReadOnly
    } else if !folder_writable(path) {
        DbErrorKind::ReadOnlyFolder
    } else {
        kind
    }
}

/// Whether the file system under the database is read-only (EROFS): opening the file
/// for writing, or creating one beside it, says so (nothing is written).
fn read_only_file_system(path: &Path) -> bool {
    let tried = match path.is_file() {
        true => std::fs::OpenOptions::new().write(true).open(path).map(drop),
        false => tempfile::Builder::new()
            .prefix(".sqlrun-probe-")
            .tempfile_in(folder(path))
            .map(drop),
    };
    matches!(tried, Err(e) if e.kind() == ErrorKind::ReadOnlyFilesystem)
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
        DbErrorKind::ReadOnlyFileSystem => format!(
            "the file system under {db} is read-only ({cause}): it was mounted read-only, or \
             the kernel remounted it so after a disk error (`dmesg` tells); check the disk, \
             then remount it read-write (`mount -o remount,rw`) or work on a writable copy, \
             and run again {READERS}"
        ),
        DbErrorKind::DiskIo => format!(
            "the disk under {db} failed ({cause}): check the disk and its mount (`dmesg`), \
             and free space, then run again"
        ),
        DbErrorKind::Protocol => format!(
            "a file lock on {db} failed ({cause}): SQLite's locks do not hold on this file \
             system, typical of a network file system (NFS, SMB) or of one that went away \
             under the database; put the database on a local disk (or check the mount), then \
             run again"
        ),
        _ => cause.to_string(),
    };
    (kind, line)
}

/// What still works on a database that cannot be written.
const READERS: &str = "(the read commands, `sqlrun status`, `runs`, ..., need no write access \
                       to a database that is current)";

/// A read-only file (on a read-only mount, its folder too) or a read-only folder, which
/// SQLite needs for the database's -wal and -shm files.
fn read_only(kind: DbErrorKind, path: &Path, cause: &str) -> String {
    let db = path.display();
    let readers = READERS;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(extended: i32) -> rusqlite::Error {
        let f = ffi::Error::new(extended);
        let words = ffi::code_to_str(extended & 0xff).to_string();
        rusqlite::Error::SqliteFailure(f, Some(words))
    }

    #[test]
    fn io_errors_are_named_by_their_extended_code_and_the_os_error() {
        let e = db_error(&failure(ffi::SQLITE_IOERR_FSYNC), Some(5));
        assert_eq!(e.kind, DbErrorKind::DiskIo);
        assert!(
            e.message.contains("code SQLITE_IOERR_FSYNC"),
            "{}",
            e.message
        );
        assert!(e.message.contains("os error 5"), "{}", e.message);
        // EROFS under an I/O error: the file system turned read-only.
        let e = db_error(&failure(ffi::SQLITE_IOERR_WRITE), Some(30));
        assert_eq!(e.kind, DbErrorKind::ReadOnlyFileSystem);
        // ENOSPC under a failed sync: a full disk.
        let e = db_error(&failure(ffi::SQLITE_IOERR_FSYNC), Some(28));
        assert_eq!(e.kind, DbErrorKind::DiskFull);
        let e = db_error(&failure(ffi::SQLITE_READONLY_DBMOVED), None);
        assert_eq!(e.kind, DbErrorKind::ReadOnly);
        assert!(
            e.message.ends_with("code SQLITE_READONLY_DBMOVED"),
            "{}",
            e.message
        );
        // A plain read-only file says what it always said.
        let e = db_error(&failure(ffi::SQLITE_READONLY), None);
        assert!(!e.message.contains("code"), "{}", e.message);
    }

    #[test]
    fn each_fault_of_the_disk_is_one_line_with_the_file_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        std::fs::write(&path, b"").unwrap();
        let e = db_error(&failure(ffi::SQLITE_PROTOCOL), None);
        assert_eq!(e.kind, DbErrorKind::Protocol);
        let (kind, line) = explain(e.kind, &path, &e.message);
        assert_eq!(kind, DbErrorKind::Protocol);
        for part in [
            "x.db",
            "locking protocol, code SQLITE_PROTOCOL",
            "network file system",
        ] {
            assert!(line.contains(part), "{part}: {line}");
        }
        let e = db_error(&failure(ffi::SQLITE_IOERR_READ), Some(5));
        let (kind, line) = explain(e.kind, &path, &e.message);
        assert_eq!(kind, DbErrorKind::DiskIo);
        for part in [
            "the disk under",
            "x.db failed (disk I/O error, code SQLITE_IOERR_READ",
            "dmesg",
        ] {
            assert!(line.contains(part), "{part}: {line}");
        }
        let (_, line) = explain(DbErrorKind::ReadOnlyFileSystem, &path, "cause");
        for part in ["file system under", "is read-only", "remount it read-write"] {
            assert!(line.contains(part), "{part}: {line}");
        }
        assert!(DbErrorKind::DiskIo.is_environment() && DbErrorKind::Protocol.is_environment());
    }
}
