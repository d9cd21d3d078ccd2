//! What the database layer returns when something goes wrong. It sits below the rest of
//! sqlrun, so it has errors of its own: `DbError` for a statement or a connection (by
//! cause), and `Error` for anything a `Db` call can end in (opening, migrating, a fault of
//! the surroundings explained for the database at hand). `crate::error::Error` wraps each
//! variant one to one.

/// What went wrong in the database, by cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbErrorKind {
    /// A statement was cancelled (a second Ctrl-C).
    Interrupted,
    /// The connection is gone: the session was terminated, the server restarted, the
    /// network dropped. Nothing more can be written through it.
    ConnectionLost,
    /// The connection broke while a COMMIT was under way: the transaction may or may
    /// not have committed.
    CommitUnknown,
    /// PostgreSQL: a REPEATABLE READ transaction met a row that another transaction
    /// changed after its snapshot began (40001 serialization_failure): a date whose
    /// reservation was released meanwhile.
    Conflict,
    /// A lock wait ran past its bound (busy SQLite beyond its wait, lock_timeout).
    Timeout,
    /// The database cannot be written: a read-only file or mount, a read-only server or
    /// session (SQLITE_READONLY, 25006 read_only_sql_transaction).
    ReadOnly,
    /// SQLite: the database's folder cannot be written, and SQLite creates its -wal and
    /// -shm files beside it (refined from SQLITE_CANTOPEN / SQLITE_READONLY by the path).
    ReadOnlyFolder,
    /// The user may not do this (SQLITE_PERM, 42501 insufficient_privilege).
    Denied,
    /// The file is not a SQLite database at all (SQLITE_NOTADB).
    NotADatabase,
    /// The database is damaged (SQLITE_CORRUPT, XX001 data_corrupted, XX002 index_corrupted).
    Corrupt,
    /// No space left where the database lives (SQLITE_FULL, 53100 disk_full).
    DiskFull,
    /// SQLite cannot open or create the file (SQLITE_CANTOPEN): a missing folder, no access.
    CannotOpen,
    /// SQLite: the file system under the database is read-only now (EROFS: mounted
    /// read-only, or remounted so after a disk error), refined from an I/O error or a
    /// read-only file by the OS's error.
    ReadOnlyFileSystem,
    /// SQLite: reading or writing the file failed (SQLITE_IOERR and its extended codes):
    /// a failing disk, a mount that went away.
    DiskIo,
    /// SQLite: a file lock did not behave (SQLITE_PROTOCOL), typical of a network file
    /// system or one that went away under the database.
    Protocol,
    Other,
}

impl DbErrorKind {
    /// A fault of where the database lives (its file, folder, disk, server, locks or
    /// rights), not of the SQL sent to it: no statement can succeed until it is fixed.
    pub fn is_environment(self) -> bool {
        matches!(
            self,
            DbErrorKind::Timeout
                | DbErrorKind::ReadOnly
                | DbErrorKind::ReadOnlyFolder
                | DbErrorKind::Denied
                | DbErrorKind::NotADatabase
                | DbErrorKind::Corrupt
                | DbErrorKind::DiskFull
                | DbErrorKind::CannotOpen
                | DbErrorKind::ReadOnlyFileSystem
                | DbErrorKind::DiskIo
                | DbErrorKind::Protocol
        )
    }

    /// The connection broke (or broke while a COMMIT was under way): nothing more goes
    /// through it, and running again may succeed.
    pub fn is_lost(self) -> bool {
        matches!(
            self,
            DbErrorKind::ConnectionLost | DbErrorKind::CommitUnknown
        )
    }

    /// Whether writing is what failed (so a database that only needs reading can still
    /// be read).
    pub fn is_unwritable(self) -> bool {
        matches!(
            self,
            DbErrorKind::ReadOnly
                | DbErrorKind::ReadOnlyFolder
                | DbErrorKind::ReadOnlyFileSystem
                | DbErrorKind::Denied
        )
    }
}

/// A statement's or a connection's error, as a backend reports it. Shown as the
/// database's words and, for a statement that does not prepare, its line where the
/// database stopped.
#[derive(Debug, Clone)]
pub struct DbError {
    pub kind: DbErrorKind,
    /// The database's own words.
    pub message: String,
    /// What the failing statement belonged to, as its script's last `-- sqlrun context:`
    /// comment before it said (a date's script names each model's part).
    pub context: Option<String>,
    /// Where in the statement it went wrong, when the database says (a statement that
    /// does not prepare): what sqlrun maps back to a template's line.
    pub at: Option<Box<ErrorAt>>,
}

/// The text of a statement as it was sent, and the byte in it the database pointed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorAt {
    pub statement: String,
    pub offset: usize,
}

impl DbError {
    pub fn other(message: impl Into<String>) -> DbError {
        DbError {
            kind: DbErrorKind::Other,
            message: message.into(),
            context: None,
            at: None,
        }
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        match &self.at {
            Some(at) => write!(f, ", near: {}", super::excerpt(&at.statement, at.offset)),
            None => Ok(()),
        }
    }
}

impl std::error::Error for DbError {}

/// Anything a `Db` call can end in. Each variant is the `crate::error::Error` variant of
/// the same name, which holds the message and the exit code.
#[derive(Debug)]
pub enum Error {
    /// An error of the SQL, or of the connection (by its kind).
    Database(DbError),
    /// A fault of where the database lives: `line` names the cause and the fix for this
    /// database; `cause` is the database's own words.
    Environment {
        kind: DbErrorKind,
        cause: String,
        line: String,
    },
    /// `--db` or `--schema` cannot name a database.
    BadInput(String),
    /// The server cannot be reached now (refused, timed out, no route, starting up, out of
    /// connection slots): a fault a retry may outlive, unlike a wrong password.
    Unreachable {
        target: String,
        message: String,
        fix: String,
    },
    /// The database cannot be opened, created or reached.
    Open {
        target: String,
        message: String,
        fix: String,
    },
    /// The database (a SQLite file, a PostgreSQL schema) does not exist, and the opener
    /// was told not to create it: what is missing, named.
    Absent(String),
    /// The database was migrated by a newer sqlrun.
    NewerSchema {
        target: String,
        found: i64,
        known: i64,
    },
    /// Migrating failed for a reason other than the surroundings.
    Migration(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A fault of the surroundings (to be explained for the database at hand), or an error of
/// the SQL.
impl From<DbError> for Error {
    fn from(e: DbError) -> Self {
        if e.kind.is_environment() {
            Error::Environment {
                kind: e.kind,
                line: e.message.clone(),
                cause: e.message,
            }
        } else {
            Error::Database(e)
        }
    }
}

impl Error {
    /// The database error behind this one, by cause.
    pub fn db_kind(&self) -> Option<DbErrorKind> {
        match self {
            Error::Database(e) => Some(e.kind),
            Error::Environment { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}
