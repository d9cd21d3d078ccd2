//! SQLite's result codes by name, for messages: SQLite itself only gives a code's
//! description ("disk I/O error"), which is the same for every kind of I/O error, while
//! the extended code (`SQLITE_IOERR_FSYNC`, `SQLITE_READONLY_DBMOVED`) is what tells a
//! failed sync from a failed write or a file moved away.

use rusqlite::ffi;

/// The name of an (extended) result code of the families that name a fault of the
/// surroundings: I/O errors, read-only, cannot open, locking protocol.
pub fn name(code: i32) -> Option<&'static str> {
    Some(match code {
        ffi::SQLITE_IOERR => "SQLITE_IOERR",
        ffi::SQLITE_IOERR_READ => "SQLITE_IOERR_READ",
        ffi::SQLITE_IOERR_SHORT_READ => "SQLITE_IOERR_SHORT_READ",
        ffi::SQLITE_IOERR_WRITE => "SQLITE_IOERR_WRITE",
        ffi::SQLITE_IOERR_FSYNC => "SQLITE_IOERR_FSYNC",
        ffi::SQLITE_IOERR_DIR_FSYNC => "SQLITE_IOERR_DIR_FSYNC",
        ffi::SQLITE_IOERR_TRUNCATE => "SQLITE_IOERR_TRUNCATE",
        ffi::SQLITE_IOERR_FSTAT => "SQLITE_IOERR_FSTAT",
        ffi::SQLITE_IOERR_UNLOCK => "SQLITE_IOERR_UNLOCK",
        ffi::SQLITE_IOERR_RDLOCK => "SQLITE_IOERR_RDLOCK",
        ffi::SQLITE_IOERR_DELETE => "SQLITE_IOERR_DELETE",
        ffi::SQLITE_IOERR_ACCESS => "SQLITE_IOERR_ACCESS",
        ffi::SQLITE_IOERR_CHECKRESERVEDLOCK => "SQLITE_IOERR_CHECKRESERVEDLOCK",
        ffi::SQLITE_IOERR_LOCK => "SQLITE_IOERR_LOCK",
        ffi::SQLITE_IOERR_CLOSE => "SQLITE_IOERR_CLOSE",
        ffi::SQLITE_IOERR_SHMOPEN => "SQLITE_IOERR_SHMOPEN",
        ffi::SQLITE_IOERR_SHMSIZE => "SQLITE_IOERR_SHMSIZE",
        ffi::SQLITE_IOERR_SHMLOCK => "SQLITE_IOERR_SHMLOCK",
        ffi::SQLITE_IOERR_SHMMAP => "SQLITE_IOERR_SHMMAP",
        ffi::SQLITE_IOERR_SEEK => "SQLITE_IOERR_SEEK",
        ffi::SQLITE_IOERR_MMAP => "SQLITE_IOERR_MMAP",
        ffi::SQLITE_IOERR_DATA => "SQLITE_IOERR_DATA",
        ffi::SQLITE_IOERR_CORRUPTFS => "SQLITE_IOERR_CORRUPTFS",
        ffi::SQLITE_IOERR_IN_PAGE => "SQLITE_IOERR_IN_PAGE",
        ffi::SQLITE_READONLY => "SQLITE_READONLY",
        ffi::SQLITE_READONLY_RECOVERY => "SQLITE_READONLY_RECOVERY",
        ffi::SQLITE_READONLY_CANTLOCK => "SQLITE_READONLY_CANTLOCK",
        ffi::SQLITE_READONLY_ROLLBACK => "SQLITE_READONLY_ROLLBACK",
        ffi::SQLITE_READONLY_DBMOVED => "SQLITE_READONLY_DBMOVED",
        ffi::SQLITE_READONLY_CANTINIT => "SQLITE_READONLY_CANTINIT",
        ffi::SQLITE_READONLY_DIRECTORY => "SQLITE_READONLY_DIRECTORY",
        ffi::SQLITE_CANTOPEN => "SQLITE_CANTOPEN",
        ffi::SQLITE_CANTOPEN_ISDIR => "SQLITE_CANTOPEN_ISDIR",
        ffi::SQLITE_CANTOPEN_FULLPATH => "SQLITE_CANTOPEN_FULLPATH",
        ffi::SQLITE_CANTOPEN_DIRTYWAL => "SQLITE_CANTOPEN_DIRTYWAL",
        ffi::SQLITE_CANTOPEN_SYMLINK => "SQLITE_CANTOPEN_SYMLINK",
        ffi::SQLITE_PROTOCOL => "SQLITE_PROTOCOL",
        _ => return None,
    })
}

/// Whether the OS's error number is worth reading for this result code: SQLite keeps
/// it (`sqlite3_system_errno`) only for I/O errors and files it cannot open, and leaves
/// it as it was after any other error.
pub fn has_errno(code: i32) -> bool {
    matches!(code & 0xff, ffi::SQLITE_IOERR | ffi::SQLITE_CANTOPEN)
}

/// The (extended) result code of an error from SQLite (0 for rusqlite's own errors).
pub fn of(e: &rusqlite::Error) -> i32 {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => f.extended_code,
        _ => 0,
    }
}
