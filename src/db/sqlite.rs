//! SQLite, the embedded default: data and state store in one file. WAL journal, fsynced
//! commits, and a busy handler that lets waiting runs in between a backfill's dates.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{ffi, Connection, ErrorCode, OpenFlags, ToSql};

use super::{DbError, DbErrorKind, Interrupter, Params, Row, TxKind, Value};
use crate::error::{Error, Result};

mod embedded {
    refinery::embed_migrations!("sql/sqlite");
}

/// Concurrent sqlrun processes queue for SQLite's single write lock. Every write
/// transaction is one date or one bookkeeping step (milliseconds), so a wait this long
/// only ends in "database is locked" if something holds the lock abnormally.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

const HISTORY_TABLE: &str = "sqlrun_schema_history";

thread_local! {
    static WAITING_SINCE: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// SQLite's own busy timeout sleeps longer and longer between tries (up to 100 ms), so a
/// run that commits a date every few milliseconds would keep the write lock from a waiter
/// until it ends. This handler retries every 200 µs: a waiting run gets in between two
/// dates of a long backfill. It gives up after BUSY_TIMEOUT.
fn wait_for_write_lock(attempt: i32) -> bool {
    let now = Instant::now();
    let since = WAITING_SINCE.with(|w| {
        if attempt == 0 {
            w.set(Some(now));
        }
        w.get().unwrap_or(now)
    });
    if now.duration_since(since) >= BUSY_TIMEOUT {
        return false;
    }
    std::thread::sleep(Duration::from_micros(200));
    true
}

pub struct Conn {
    conn: Connection,
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Owned(SqlValue::Null),
            Value::Int(n) => ToSqlOutput::Owned(SqlValue::Integer(*n)),
            Value::Real(f) => ToSqlOutput::Owned(SqlValue::Real(*f)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Bool(b) => ToSqlOutput::Owned(SqlValue::Integer(i64::from(*b))),
        })
    }
}

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
    DbError {
        kind,
        message: describe(e),
        context: None,
    }
}

/// A migration that failed: by its cause when SQLite's error says one (a read-only file,
/// a full disk), else as refinery tells it.
fn migration_error(e: &refinery::Error) -> Error {
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

impl Conn {
    /// WAL journal: readers (status, a grader's query) never block the writer and the
    /// writer never blocks them. synchronous=FULL: in WAL mode each COMMIT is fsynced
    /// before it returns, so a date recorded as done survives a power cut.
    pub fn open(path: &Path) -> Result<Conn> {
        if path.is_dir() {
            return Err(Error::bad(format!(
                "--db {} is a folder; pass a database file path, e.g. {}/sqlrun.db",
                path.display(),
                path.display()
            )));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Conn::configured(Connection::open_with_flags(path, flags)?)?;
        conn.conn
            .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        conn.conn.execute_batch("PRAGMA synchronous = FULL;")?;
        conn.migrate(path)?;
        Ok(conn)
    }

    /// Opens the file read-only, for the commands that only read: None when its schema
    /// is not current (it needs migrating first). A WAL database needs its -shm file;
    /// in a folder that cannot be written (read-only media) and without a -wal file to
    /// read, the file is opened as immutable, which needs neither (nobody can write it
    /// there either).
    pub fn open_read_only(path: &Path) -> Result<Option<Conn>> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Conn::configured(Connection::open_with_flags(path, flags)?)?;
        let found = match conn.schema_version() {
            Err(e) if e.db_kind() == Some(DbErrorKind::CannotOpen) && immutable_is_safe(path) => {
                let uri = immutable_uri(path);
                conn = Conn::configured(Connection::open_with_flags(
                    uri,
                    flags | OpenFlags::SQLITE_OPEN_URI,
                )?)?;
                conn.schema_version()?
            }
            other => other?,
        };
        let migrations = embedded::migrations::runner();
        let current = super::schema_is_current(
            &path.display().to_string(),
            found,
            migrations.get_migrations(),
        )?;
        Ok(current.then_some(conn))
    }

    /// The settings every connection gets: the busy handler, and double-quoted words
    /// read as identifiers.
    fn configured(mut conn: Connection) -> Result<Conn> {
        conn.busy_handler(Some(wait_for_write_lock))?;
        // A double-quoted word is an identifier, as a DBA reads it: a misspelt column in
        // "quotes" is an error, never a string that sums to 0.
        for dqs in [
            DbConfig::SQLITE_DBCONFIG_DQS_DML,
            DbConfig::SQLITE_DBCONFIG_DQS_DDL,
        ] {
            conn.set_db_config(dqs, false)?;
        }
        Ok(Conn { conn })
    }

    fn schema_version(&self) -> Result<i64> {
        let has_history = self
            .conn
            .prepare(include_str!("../../queries/sqlite/object_sql.sql"))?
            .exists([HISTORY_TABLE])?;
        if !has_history {
            return Ok(0);
        }
        Ok(self
            .conn
            .query_row(include_str!("../../queries/schema_version.sql"), [], |r| {
                r.get::<_, Option<i64>>(0)
            })?
            .unwrap_or(0))
    }

    fn migrate(&mut self, path: &Path) -> Result<()> {
        let found = self.schema_version()?;
        let migrations = embedded::migrations::runner();
        if super::schema_is_current(
            &path.display().to_string(),
            found,
            migrations.get_migrations(),
        )? {
            return Ok(());
        }
        // Processes started together on a new file all try to migrate it. All migrations
        // go in one transaction; a loser waits for the winner's write lock and finds the
        // work done.
        let mut attempts = 0;
        loop {
            let mut runner = embedded::migrations::runner().set_grouped(true);
            match runner
                .set_migration_table_name(HISTORY_TABLE)
                .run(&mut self.conn)
            {
                Ok(_) => return Ok(()),
                Err(e) => {
                    let error = migration_error(&e);
                    if matches!(error, Error::Environment { .. }) {
                        return Err(error);
                    }
                    self.conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;")?;
                    let now = self.schema_version()?;
                    if super::schema_is_current(
                        &path.display().to_string(),
                        now,
                        migrations.get_migrations(),
                    )? {
                        return Ok(());
                    }
                    attempts += 1;
                    if attempts >= 5 {
                        return Err(error);
                    }
                }
            }
        }
    }

    pub fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        Ok(self.conn.execute_batch(sql)?)
    }

    /// One statement of a bound script: the parameters it names are bound, its rows (if
    /// any) read and dropped. Prepared once per text, from the statement cache.
    pub fn run_statement(&mut self, sql: &str, params: Params) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        for (name, value) in params {
            if let Some(i) = stmt.parameter_index(name)? {
                stmt.raw_bind_parameter(i, value)?;
            }
        }
        let mut rows = stmt.raw_query();
        while rows.next()?.is_some() {}
        Ok(())
    }

    pub fn execute_in_order(&mut self, sql: &str, values: &[Value]) -> Result<u64, DbError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        if stmt.parameter_count() != values.len() {
            return Err(DbError::other(format!(
                "a statement with {} parameters was given {} values",
                stmt.parameter_count(),
                values.len()
            )));
        }
        for (i, value) in values.iter().enumerate() {
            stmt.raw_bind_parameter(i + 1, value)?;
        }
        Ok(stmt.raw_execute()? as u64)
    }

    pub fn execute(&mut self, sql: &str, params: Params) -> Result<u64, DbError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let bound: Vec<(&str, &dyn ToSql)> =
            params.iter().map(|(n, v)| (*n, v as &dyn ToSql)).collect();
        Ok(stmt.execute(bound.as_slice())? as u64)
    }

    pub fn rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>, DbError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let names: Rc<Vec<String>> = Rc::new(stmt.column_names().map(|s| s.to_string()).collect());
        let bound: Vec<(&str, &dyn ToSql)> =
            params.iter().map(|(n, v)| (*n, v as &dyn ToSql)).collect();
        let mut rows = stmt.query(bound.as_slice())?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let values = (0..names.len())
                .map(|i| {
                    Ok(match r.get_ref(i)? {
                        ValueRef::Null => Value::Null,
                        ValueRef::Integer(n) => Value::Int(n),
                        ValueRef::Real(f) => Value::Real(f),
                        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                        ValueRef::Blob(b) => Value::Text(format!("<{} bytes>", b.len())),
                    })
                })
                .collect::<rusqlite::Result<Vec<_>>>()?;
            out.push(Row::new(Rc::clone(&names), values));
        }
        Ok(out)
    }

    /// SQLite has one writer at a time: every write transaction takes the lock up front
    /// (BEGIN IMMEDIATE), so it never fails halfway on a lock it could not upgrade.
    pub fn begin(&mut self, _kind: TxKind) -> Result<(), DbError> {
        Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
    }

    pub fn commit(&mut self) -> Result<(), DbError> {
        Ok(self.conn.execute_batch("COMMIT")?)
    }

    pub fn rollback(&mut self) -> Result<(), DbError> {
        if self.conn.is_autocommit() {
            return Ok(());
        }
        Ok(self.conn.execute_batch("ROLLBACK")?)
    }

    pub fn check_statements(&mut self, sql: &str) -> Result<(), DbError> {
        use fallible_iterator::FallibleIterator;
        let mut batch = rusqlite::Batch::new(&self.conn, sql);
        while let Some(_statement) = batch.next()? {}
        Ok(())
    }

    pub fn interrupter(&self) -> Interrupter {
        let handle = self.conn.get_interrupt_handle();
        Interrupter(Box::new(move || handle.interrupt()))
    }

    pub fn hold_run(&mut self, _run_id: i64) -> Result<()> {
        Ok(())
    }

    /// A run on SQLite is the process that asks: alive.
    pub fn run_alive(&mut self, _run_id: i64) -> Result<bool> {
        Ok(true)
    }

    pub fn object(&mut self, name: &str) -> Result<Option<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(include_str!("../../queries/sqlite/object_sql.sql"))?;
        let mut rows = stmt.query([name])?;
        Ok(match rows.next()? {
            Some(r) => Some(r.get::<_, Option<String>>(0)?.unwrap_or_default()),
            None => None,
        })
    }

    pub fn record_view(&mut self, _name: &str, _create: &str) -> Result<()> {
        Ok(())
    }
}

/// A database error in a line: SQLite's message, and for a statement that does not
/// prepare, the text around where it stopped (not the whole rendered SQL).
fn describe(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError {
            msg, sql, offset, ..
        } => {
            let at = (*offset).max(0) as usize;
            format!("{msg}, near: {}", super::excerpt(sql, at))
        }
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        other => other.to_string(),
    }
}

/// Whether the file can be opened as immutable: no -wal file holds commits that only it
/// has (a -wal file needs its -shm file, which only a writable folder gives).
fn immutable_is_safe(path: &Path) -> bool {
    let wal = beside(path, "-wal");
    std::fs::metadata(&wal).map_or(true, |m| m.len() == 0) && !folder_writable(path)
}

/// `file:PATH?immutable=1`, every byte of the path but letters, digits and `/-._~`
/// escaped.
fn immutable_uri(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in absolute.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// The file SQLite keeps beside the database: `-wal`, `-shm`.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn folder(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether a file can be created in the database's folder (tried: permissions,
/// attributes and mounts all count, also for root).
fn folder_writable(path: &Path) -> bool {
    tempfile::Builder::new()
        .prefix(".sqlrun-probe-")
        .tempfile_in(folder(path))
        .is_ok()
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
