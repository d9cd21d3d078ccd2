//! SQLite, the embedded default: data and state store in one file. WAL journal, fsynced
//! commits, and a busy handler that lets waiting runs in between a backfill's dates.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{Connection, ErrorCode, OpenFlags, ToSql};

use super::{
    Backend, DbError, DbErrorKind, Error, Interrupter, Params, Result, Row, TxKind, Value,
};

mod codes;
mod explain;
pub use explain::explain;
use explain::migration_error;

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
    /// None once closed (`Backend::close`): every call then fails.
    conn: Option<Connection>,
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

/// How many prepared statements a connection keeps: every distinct statement of a date
/// (its models, history, checks and record) and of a run's bookkeeping, several times over.
const STATEMENT_CACHE: usize = 256;

impl Conn {
    /// WAL journal: readers (status, a grader's query) never block the writer and the
    /// writer never blocks them. synchronous=FULL: in WAL mode each COMMIT is fsynced
    /// before it returns, so a date recorded as done survives a power cut.
    pub fn open(path: &Path) -> Result<Conn> {
        if path.is_dir() {
            return Err(Error::BadInput(format!(
                "--db {} is a folder; pass a database file path, e.g. {}/sqlrun.db",
                path.display(),
                path.display()
            )));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Conn::configured(Connection::open_with_flags(path, flags)?)?;
        conn.use_wal()?;
        conn.io(|c| c.execute_batch("PRAGMA synchronous = FULL;"))?;
        conn.migrate(path)?;
        Ok(conn)
    }

    /// Processes that open a new file together all switch it to WAL. The switch reads the
    /// file's header, then writes it; one that read it while another was writing is told
    /// busy at once (SQLite does not wait while it holds a read lock: two such waiters
    /// would deadlock), so it waits a moment and asks again, by when the file is WAL.
    fn use_wal(&self) -> Result<(), DbError> {
        let asked = Instant::now();
        loop {
            match self
                .c()?
                .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            {
                Err(e)
                    if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                        && asked.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(Duration::from_millis(1))
                }
                done => return done.map_err(|e| self.failed(&e)),
            }
        }
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
            Err(e) if e.kind == DbErrorKind::CannotOpen && immutable_is_safe(path) => {
                let uri = immutable_uri(path);
                conn = Conn::configured(Connection::open_with_flags(
                    uri,
                    flags | OpenFlags::SQLITE_OPEN_URI,
                )?)?;
                conn.schema_version()?
            }
            other => other?,
        };
        Ok(is_current(path, found)?.then_some(conn))
    }

    /// The settings every connection gets: the busy handler, and double-quoted words
    /// read as identifiers.
    fn configured(mut conn: Connection) -> Result<Conn, DbError> {
        conn.busy_handler(Some(wait_for_write_lock))?;
        // Every statement of a date is prepared once per run and kept: rusqlite keeps 16,
        // and a date of a pipeline with history and checks runs more than that, so the
        // least recently used were prepared again on every date (a third of the run's CPU).
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // A double-quoted word is an identifier, as a DBA reads it: a misspelt column in
        // "quotes" is an error, never a string that sums to 0.
        for dqs in [
            DbConfig::SQLITE_DBCONFIG_DQS_DML,
            DbConfig::SQLITE_DBCONFIG_DQS_DDL,
        ] {
            conn.set_db_config(dqs, false)?;
        }
        Ok(Conn { conn: Some(conn) })
    }

    /// The connection, unless it was closed.
    fn c(&self) -> Result<&Connection, DbError> {
        self.conn.as_ref().ok_or_else(closed)
    }

    /// `f` on the connection; its error by its cause, with the OS's error number of an
    /// I/O error (a read-only file system, a full disk and a failing one are all "disk
    /// I/O error" to SQLite).
    fn io<'c, T>(
        &'c self,
        f: impl FnOnce(&'c Connection) -> rusqlite::Result<T>,
    ) -> Result<T, DbError> {
        f(self.c()?).map_err(|e| self.failed(&e))
    }

    fn failed(&self, e: &rusqlite::Error) -> DbError {
        let errno = self.errno(codes::of(e));
        explain::db_error(e, errno)
    }

    /// The OS's error number behind an error of (extended) result `code` on this
    /// connection, for the codes SQLite keeps it for.
    fn errno(&self, code: i32) -> Option<i32> {
        match &self.conn {
            // SAFETY: the handle is this open connection's, used on this thread only,
            // for a call that reads a field of it.
            Some(c) if codes::has_errno(code) => {
                Some(unsafe { rusqlite::ffi::sqlite3_system_errno(c.handle()) })
            }
            _ => None,
        }
    }

    fn schema_version(&self) -> Result<i64, DbError> {
        self.io(|c| {
            let has_history = c
                .prepare(include_str!("../../../queries/sqlite/object_sql.sql"))?
                .exists([HISTORY_TABLE])?;
            if !has_history {
                return Ok(0);
            }
            let sql = include_str!("../../../queries/schema_version.sql");
            let found = c.query_row(sql, [], |r| r.get::<_, Option<i64>>(0))?;
            Ok(found.unwrap_or(0))
        })
    }

    fn migrate(&mut self, path: &Path) -> Result<()> {
        if is_current(path, self.schema_version()?)? {
            return Ok(());
        }
        // Processes started together on a new file all try to migrate it. All migrations
        // go in one transaction; a loser waits for the winner's write lock and finds the
        // work done. refinery's transaction is deferred: one that read the history before
        // the winner wrote cannot take the write lock (SQLite says busy at once rather
        // than deadlock), so a busy loser waits for the winner and looks again too.
        let mut attempts = 0;
        loop {
            let mut runner = embedded::migrations::runner().set_grouped(true);
            let conn = self.conn.as_mut().ok_or_else(closed)?;
            match runner.set_migration_table_name(HISTORY_TABLE).run(conn) {
                Ok(_) => return Ok(()),
                Err(e) => {
                    let error = migration_error(&e, |code| self.errno(code));
                    let busy = matches!(
                        error,
                        Error::Environment {
                            kind: DbErrorKind::Timeout,
                            ..
                        }
                    );
                    if matches!(error, Error::Environment { .. }) && !busy {
                        return Err(error);
                    }
                    self.io(|c| c.execute_batch("BEGIN IMMEDIATE; ROLLBACK;"))?;
                    if is_current(path, self.schema_version()?)? {
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
}

impl Backend for Conn {
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.io(|c| c.execute_batch(sql))
    }

    /// One statement of a bound script: the parameters it names are bound, its rows (if
    /// any) read and dropped. Prepared once per text, from the statement cache.
    fn run_statement(&mut self, sql: &str, params: Params) -> Result<(), DbError> {
        self.io(|c| {
            let mut stmt = bound(c.prepare_cached(sql)?, params)?;
            let mut rows = stmt.raw_query();
            while rows.next()?.is_some() {}
            Ok(())
        })
    }

    fn execute_in_order(&mut self, sql: &str, values: &[Value]) -> Result<u64, DbError> {
        let mut stmt = self.io(|c| c.prepare_cached(sql))?;
        if stmt.parameter_count() != values.len() {
            return Err(DbError::other(format!(
                "a statement with {} parameters was given {} values",
                stmt.parameter_count(),
                values.len()
            )));
        }
        let ran = values
            .iter()
            .enumerate()
            .try_for_each(|(i, value)| stmt.raw_bind_parameter(i + 1, value))
            .and_then(|()| stmt.raw_execute());
        ran.map(|n| n as u64).map_err(|e| self.failed(&e))
    }

    /// A row per execution of one prepared INSERT: as fast as SQLite goes within one
    /// transaction.
    fn insert_rows(&mut self, sql: &str, width: usize, values: &[Value]) -> Result<u64, DbError> {
        let mut rows = 0;
        for row in values.chunks(width.max(1)) {
            rows += self.execute_in_order(sql, row)?;
        }
        Ok(rows)
    }

    fn execute(&mut self, sql: &str, params: Params) -> Result<u64, DbError> {
        self.io(|c| {
            let mut stmt = c.prepare_cached(sql)?;
            let bound: Vec<(&str, &dyn ToSql)> =
                params.iter().map(|(n, v)| (*n, v as &dyn ToSql)).collect();
            Ok(stmt.execute(bound.as_slice())? as u64)
        })
    }

    fn rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>, DbError> {
        self.io(|c| {
            let mut stmt = c.prepare_cached(sql)?;
            let bound: Vec<(&str, &dyn ToSql)> =
                params.iter().map(|(n, v)| (*n, v as &dyn ToSql)).collect();
            let names = column_names(&stmt);
            let rows = stmt.query(bound.as_slice())?;
            read_rows(rows, &names)
        })
    }

    /// One statement of a bound script whose rows are kept: only the parameters it names
    /// are bound, as in `run_statement`.
    fn statement_rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>, DbError> {
        self.io(|c| {
            let mut stmt = bound(c.prepare_cached(sql)?, params)?;
            let names = column_names(&stmt);
            read_rows(stmt.raw_query(), &names)
        })
    }

    /// SQLite has one writer at a time: every write transaction takes the lock up front
    /// (BEGIN IMMEDIATE), so it never fails halfway on a lock it could not upgrade. A
    /// preview writes only the temp schema, which is its connection's own: a deferred
    /// BEGIN, a reader of the file that no writer waits for.
    fn begin(&mut self, kind: TxKind) -> Result<(), DbError> {
        let begin = match kind {
            TxKind::Preview => "BEGIN DEFERRED",
            TxKind::Exclusive | TxKind::Date | TxKind::Plain => "BEGIN IMMEDIATE",
        };
        self.io(|c| c.execute_batch(begin))
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.io(|c| c.execute_batch("COMMIT"))
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        if self.c()?.is_autocommit() {
            return Ok(());
        }
        self.io(|c| c.execute_batch("ROLLBACK"))
    }

    /// Closes the file now, so that a connection opened after it reads what the file
    /// holds: while any connection of this process stays open, a new one shares its view
    /// of the WAL index, which a COMMIT that failed may have left behind the WAL file.
    fn close(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = conn.close();
        }
    }

    fn check_statement(&mut self, sql: &str) -> Result<(), DbError> {
        use fallible_iterator::FallibleIterator;
        self.io(|c| {
            let mut batch = rusqlite::Batch::new(c, sql);
            while let Some(_statement) = batch.next()? {}
            Ok(())
        })
    }

    fn select_columns(&mut self, sql: &str) -> Result<Vec<String>, DbError> {
        self.io(|c| Ok(column_names(&c.prepare(sql)?).to_vec()))
    }

    fn interrupter(&self) -> Interrupter {
        match &self.conn {
            Some(c) => {
                let handle = c.get_interrupt_handle();
                Interrupter::new(move || handle.interrupt())
            }
            None => Interrupter::new(|| {}),
        }
    }

    fn hold_run(&mut self, _run_id: i64) -> Result<(), DbError> {
        Ok(())
    }

    /// A run on SQLite is the process that asks: alive.
    fn run_alive(&mut self, _run_id: i64) -> Result<bool, DbError> {
        Ok(true)
    }

    fn object(&mut self, name: &str) -> Result<Option<String>, DbError> {
        self.io(|c| {
            let mut stmt =
                c.prepare_cached(include_str!("../../../queries/sqlite/object_sql.sql"))?;
            let mut rows = stmt.query([name])?;
            Ok(match rows.next()? {
                Some(r) => Some(r.get::<_, Option<String>>(0)?.unwrap_or_default()),
                None => None,
            })
        })
    }

    fn record_view(&mut self, _name: &str, _create: &str) -> Result<(), DbError> {
        Ok(())
    }

    /// No server: the runner's clock is the clock (SQLite's own `datetime('now')` too).
    fn server_clock(&mut self) -> Result<Option<chrono::DateTime<chrono::Utc>>, DbError> {
        Ok(None)
    }
}

/// A prepared statement with the parameters it names bound (a script's statement is
/// given the script's parameters).
fn bound<'c>(
    mut stmt: rusqlite::CachedStatement<'c>,
    params: Params,
) -> rusqlite::Result<rusqlite::CachedStatement<'c>> {
    for (name, value) in params {
        if let Some(i) = stmt.parameter_index(name)? {
            stmt.raw_bind_parameter(i, value)?;
        }
    }
    Ok(stmt)
}

/// What every call of a closed connection fails with.
fn closed() -> DbError {
    DbError {
        kind: DbErrorKind::ConnectionLost,
        message: "the connection to the database was closed after a COMMIT that failed, and \
                  could not be opened again"
            .into(),
        context: None,
        at: None,
    }
}

/// Whether the database at `path`, at schema version `found`, is current for this
/// sqlrun's migrations (false: it needs migrating).
fn is_current(path: &Path, found: i64) -> Result<bool> {
    let migrations = embedded::migrations::runner();
    super::schema_is_current(
        &path.display().to_string(),
        found,
        migrations.get_migrations(),
    )
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

fn column_names(stmt: &rusqlite::Statement) -> Rc<Vec<String>> {
    Rc::new(stmt.column_names().map(|s| s.to_string()).collect())
}

/// Every row of a query, each value as sqlrun's `Value`.
fn read_rows(mut rows: rusqlite::Rows, names: &Rc<Vec<String>>) -> rusqlite::Result<Vec<Row>> {
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
        out.push(Row::new(Rc::clone(names), values));
    }
    Ok(out)
}
