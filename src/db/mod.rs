//! The database seam: one narrow interface (open and migrate, run a script, query rows,
//! transactions, cancel, classify errors) and one small file per backend, as refinery has
//! one driver per database. No rusqlite or postgres type leaves this folder.

mod pg_types;
mod postgres;
mod row;
mod script;
mod sqlite;

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::error::{Error, Result};

pub use row::{Params, Row, Value};
pub use script::split_statements;
use script::{code_mask, excerpt};

/// Which SQL the database speaks. Templates and queries are chosen by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
        }
    }

    /// How a date's transaction begins, as `render` and `--dry-run` show it (on
    /// PostgreSQL own_reservation.sql runs first inside it and locks the date's
    /// reservation row).
    pub fn begin(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ",
        }
    }
}

/// A PostgreSQL URL without its password (anything else as it is): for messages and the
/// audit trail.
pub fn redact_url(text: &str) -> String {
    // Also `--db=postgresql://...`: the URL may follow a flag.
    match text
        .find("postgres://")
        .or_else(|| text.find("postgresql://"))
    {
        Some(at) => format!("{}{}", &text[..at], postgres::redact(&text[at..])),
        None => text.to_string(),
    }
}

/// Where the data and the state store live: `--db` and `--schema`.
#[derive(Debug, Clone)]
pub enum Target {
    Sqlite(PathBuf),
    Postgres { url: String, schema: String },
}

/// Whether `--db` names PostgreSQL (a `postgres://` or `postgresql://` URL) rather than a
/// SQLite file.
pub fn is_postgres_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// A schema name sqlrun takes: lowercase letters, digits and `_`, not starting with a
/// digit or `pg_`, at most 63 bytes (so it never needs quoting or truncating).
pub fn plain_schema(schema: &str) -> bool {
    !schema.is_empty()
        && schema.len() <= 63
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !schema.as_bytes()[0].is_ascii_digit()
        && !schema.starts_with("pg_")
}

impl Target {
    /// A `postgres://` or `postgresql://` URL is PostgreSQL; anything else a SQLite file.
    pub fn parse(db: &str, schema: Option<&str>) -> Result<Target> {
        if !is_postgres_url(db) {
            if schema.is_some_and(|s| s != "main") {
                return Err(Error::bad(format!(
                    "--schema is for PostgreSQL; --db {db} is a SQLite file, which holds one pipeline (use another file for another pipeline)"
                )));
            }
            return Ok(Target::Sqlite(PathBuf::from(db)));
        }
        let schema = schema.unwrap_or("public");
        if !plain_schema(schema) {
            return Err(Error::bad(format!(
                "--schema `{schema}` is not a plain schema name; use lowercase letters, digits and _ (not starting with a digit or pg_), e.g. --schema sales_pipeline"
            )));
        }
        Ok(Target::Postgres {
            url: db.to_string(),
            schema: schema.to_string(),
        })
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Target::Sqlite(_) => Dialect::Sqlite,
            Target::Postgres { .. } => Dialect::Postgres,
        }
    }
}

impl fmt::Display for Target {
    /// The database as messages name it: a file path, or the URL without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Sqlite(path) => write!(f, "{}", path.display()),
            Target::Postgres { url, schema } => {
                write!(f, "{} (schema {schema})", postgres::redact(url))
            }
        }
    }
}

/// A driver statement, one text per dialect (most are the same text).
#[derive(Debug, Clone, Copy)]
pub struct Query {
    pub name: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// SQL to run: a driver query (picked by dialect) or rendered text.
pub trait Sql {
    fn text(&self, dialect: Dialect) -> &str;
}

impl Sql for Query {
    fn text(&self, dialect: Dialect) -> &str {
        match dialect {
            Dialect::Sqlite => self.sqlite,
            Dialect::Postgres => self.postgres,
        }
    }
}

impl Sql for str {
    fn text(&self, _: Dialect) -> &str {
        self
    }
}

impl Sql for String {
    fn text(&self, _: Dialect) -> &str {
        self
    }
}

/// What kind of transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    /// Bookkeeping (reserve, reclaim, seal, finish): one at a time per pipeline, like
    /// SQLite's BEGIN IMMEDIATE; on PostgreSQL a transaction-scoped advisory lock, within
    /// sqlrun's own bounds (queries/postgres/bookkeeping_begin.sql).
    Exclusive,
    /// One date: SQLite still takes the write lock; on PostgreSQL no pipeline lock (no
    /// bookkeeping step waits for a date in flight): REPEATABLE READ, and the date locks
    /// its own reservation row.
    Date,
    /// What any client's INSERT does (`sqlrun load`): SQLite still takes the write lock;
    /// on PostgreSQL no pipeline lock, so a long load neither waits for runs nor holds
    /// them up (a date reads its sources from its own snapshot).
    Plain,
}

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
        )
    }

    /// Whether writing is what failed (so a database that only needs reading can still
    /// be read).
    pub fn is_unwritable(self) -> bool {
        matches!(
            self,
            DbErrorKind::ReadOnly | DbErrorKind::ReadOnlyFolder | DbErrorKind::Denied
        )
    }
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct DbError {
    pub kind: DbErrorKind,
    pub message: String,
    /// What the failing statement belonged to, as its script's last `-- sqlrun context:`
    /// comment before it said (a date's script names each model's part).
    pub context: Option<String>,
}

impl DbError {
    pub fn other(message: impl Into<String>) -> DbError {
        DbError {
            kind: DbErrorKind::Other,
            message: message.into(),
            context: None,
        }
    }
}

/// Stops the statement in progress, from another thread (a signal handler).
pub struct Interrupter(Box<dyn Fn() + Send + Sync>);

impl Interrupter {
    pub fn interrupt(&self) {
        (self.0)()
    }
}

/// Names a fault of the database's surroundings on one line: its cause, for this
/// database, and the fix. Any other error is returned as it is. Explaining twice gives the
/// same line.
fn explain(target: &Target, e: Error) -> Error {
    let Error::Environment { kind, cause, .. } = e else {
        return e;
    };
    let (kind, line) = match target {
        Target::Sqlite(path) => sqlite::explain(kind, path, &cause),
        Target::Postgres { .. } => (kind, postgres::explain(kind, &target.to_string(), &cause)),
    };
    Error::Environment { kind, cause, line }
}

enum Conn {
    Sqlite(sqlite::Conn),
    // Boxed: a client and its statement cache are much larger than a SQLite handle.
    Postgres(Box<postgres::Conn>),
}

/// An open, migrated database.
pub struct Db {
    conn: Conn,
    pub target: Target,
}

/// How a command that only reads finds the database.
pub enum ReadOpen {
    /// Opened read-only: its schema is current (SQLite).
    Current(Box<Db>),
    /// It exists, but must be written (migrated) before it can be read, or the backend
    /// opens one way only (PostgreSQL: writing only what is pending).
    NeedsWriting,
    /// There is no database file yet.
    Absent,
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match &mut $self.conn {
            Conn::Sqlite($c) => $e,
            Conn::Postgres($c) => $e,
        }
    };
}

/// `dispatch!`, with a fault of the surroundings explained for this database.
macro_rules! call {
    ($self:ident, $c:ident => $e:expr) => {{
        let result = dispatch!($self, $c => $e);
        result.map_err(|e| explain(&$self.target, e.into()))
    }};
}

impl Db {
    /// Opens (creating if needed) and migrates the database.
    pub fn open(target: &Target) -> Result<Db> {
        let conn = match target {
            Target::Sqlite(path) => sqlite::Conn::open(path).map(Conn::Sqlite),
            Target::Postgres { url, schema } => {
                postgres::Conn::open(url, schema, &target.to_string())
                    .map(|c| Conn::Postgres(Box::new(c)))
            }
        }
        .map_err(|e| explain(target, e))?;
        Ok(Db {
            conn,
            target: target.clone(),
        })
    }

    /// For a command that only reads: a SQLite file whose schema is current, opened
    /// read-only (also on read-only media). PostgreSQL opens as `open` does, which
    /// writes nothing when nothing is pending.
    pub fn open_read_only(target: &Target) -> Result<ReadOpen> {
        let Target::Sqlite(path) = target else {
            return Ok(ReadOpen::NeedsWriting);
        };
        if !path.is_file() {
            return Ok(ReadOpen::Absent);
        }
        let conn = sqlite::Conn::open_read_only(path).map_err(|e| explain(target, e))?;
        Ok(match conn {
            Some(conn) => ReadOpen::Current(Box::new(Db {
                conn: Conn::Sqlite(conn),
                target: target.clone(),
            })),
            None => ReadOpen::NeedsWriting,
        })
    }

    pub fn dialect(&self) -> Dialect {
        self.target.dialect()
    }

    /// Runs a script of one or more statements; their rows are discarded.
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        call!(self, c => c.batch(sql))
    }

    /// Runs a script whose values are parameters (`templates::render_bound`): statement by
    /// statement, each with the parameters it names. The text is the same for every date,
    /// so prepared statements are reused.
    pub fn run_script(&mut self, sql: &str, params: &[(String, Value)]) -> Result<()> {
        let params: Vec<(&str, Value)> = params
            .iter()
            .map(|(name, value)| (name.as_str(), value.clone()))
            .collect();
        self.each_statement(
            sql,
            |db, statement| call!(db, c => c.run_statement(statement, &params)),
        )
    }

    /// Runs one statement whose parameters are bound by position, in the order they first
    /// appear in the text (`:p1`, `:p2`, ... as `templates::render_bound` prints them):
    /// a bulk load binds a few thousand values per statement without a lookup by name.
    /// Prepared once per text. How many rows it changed.
    pub fn execute_in_order(&mut self, sql: &str, values: &[Value]) -> Result<u64> {
        call!(self, c => c.execute_in_order(sql, values))
    }

    /// Runs one statement; how many rows it changed.
    pub fn execute<S: Sql + ?Sized>(&mut self, sql: &S, params: Params) -> Result<u64> {
        let text = sql.text(self.dialect()).to_string();
        call!(self, c => c.execute(&text, params))
    }

    pub fn rows<S: Sql + ?Sized>(&mut self, sql: &S, params: Params) -> Result<Vec<Row>> {
        let text = sql.text(self.dialect()).to_string();
        call!(self, c => c.rows(&text, params))
    }

    pub fn row<S: Sql + ?Sized>(&mut self, sql: &S, params: Params) -> Result<Option<Row>> {
        Ok(self.rows(sql, params)?.into_iter().next())
    }

    /// The first row, which the statement always returns (an aggregate, RETURNING).
    pub fn one<S: Sql + ?Sized>(&mut self, sql: &S, params: Params) -> Result<Row> {
        self.row(sql, params)?.ok_or_else(|| {
            Error::Database(DbError::other(
                "a statement that always returns a row returned none",
            ))
        })
    }

    /// Runs `work` in a transaction: committed when it returns Ok, rolled back otherwise.
    pub fn transaction<T>(
        &mut self,
        kind: TxKind,
        work: impl FnOnce(&mut Db) -> Result<T>,
    ) -> Result<T> {
        call!(self, c => c.begin(kind))?;
        match work(self) {
            Ok(value) => match dispatch!(self, c => c.commit()) {
                Ok(()) => Ok(value),
                Err(e) if e.kind == DbErrorKind::ConnectionLost => Err(Error::Database(DbError {
                    kind: DbErrorKind::CommitUnknown,
                    ..e
                })),
                Err(e) => {
                    // A COMMIT that failed (a full disk) may leave the transaction open.
                    let _ = dispatch!(self, c => c.rollback());
                    Err(explain(&self.target, e.into()))
                }
            },
            Err(e) => {
                // The connection may be gone; the error that ended the work is the news.
                let _ = dispatch!(self, c => c.rollback());
                Err(e)
            }
        }
    }

    /// Runs `work` in a transaction that is always rolled back: what it wrote is seen by
    /// its own reads and then undone (`apply --dry-run`).
    pub fn rolled_back<T>(
        &mut self,
        kind: TxKind,
        work: impl FnOnce(&mut Db) -> Result<T>,
    ) -> Result<T> {
        call!(self, c => c.begin(kind))?;
        let result = work(self);
        let undone = dispatch!(self, c => c.rollback());
        let value = result?;
        undone.map_err(|e| explain(&self.target, e.into()))?;
        Ok(value)
    }

    /// Parses and plans each statement of a script without running it: unknown tables
    /// or columns and syntax errors show before anything is written.
    /// A statement that does not prepare is `Error::Database`; a fault of the
    /// surroundings is `Error::Environment`, as everywhere.
    /// An error names what the statement belonged to (`DbError::context`), as in
    /// `run_script`.
    pub fn check_statements(&mut self, sql: &str) -> Result<()> {
        self.each_statement(
            sql,
            |db, statement| call!(db, c => c.check_statements(statement)),
        )
    }

    /// Runs `each` on every statement of a script; an error names what the statement
    /// belonged to, as the script's last `-- sqlrun context:` line before it said.
    fn each_statement(
        &mut self,
        sql: &str,
        mut each: impl FnMut(&mut Db, &str) -> Result<()>,
    ) -> Result<()> {
        let mut context = None;
        for statement in split_statements(sql) {
            if let Some(marked) = script::context_marker(statement) {
                context = marked;
            }
            each(self, statement).map_err(|e| match e {
                Error::Database(e) => Error::Database(DbError {
                    context: context.clone(),
                    ..e
                }),
                other => other,
            })?;
        }
        Ok(())
    }

    pub fn interrupter(&self) -> Interrupter {
        match &self.conn {
            Conn::Sqlite(c) => c.interrupter(),
            Conn::Postgres(c) => c.interrupter(),
        }
    }

    /// A running run holds its session (PostgreSQL: a session-level advisory lock keyed
    /// by its run id) for its whole life, so that others can tell it is alive wherever it
    /// runs. On SQLite the process itself is the proof (pid and start time).
    pub fn hold_run(&mut self, run_id: i64) -> Result<()> {
        call!(self, c => c.hold_run(run_id))
    }

    /// Whether `run_id` is alive, asked inside a date's transaction from any session of
    /// the run (the workers of `apply --jobs` have sessions of their own): its own session
    /// still holds its lock. On SQLite the run is this process.
    pub fn run_alive(&mut self, run_id: i64) -> Result<bool> {
        call!(self, c => c.run_alive(run_id))
    }

    /// Whether a table or view exists, and for a view the text it was created from.
    pub fn object(&mut self, name: &str) -> Result<Option<String>> {
        call!(self, c => c.object(name))
    }

    /// Remembers the text a view was created from (PostgreSQL normalises the text it
    /// keeps; SQLite keeps it as given and needs nothing).
    pub fn record_view(&mut self, name: &str, create: &str) -> Result<()> {
        call!(self, c => c.record_view(name, create))
    }
}

/// Whether a database at schema version `found` is current for these migrations (false:
/// it needs migrating). One migrated by a newer sqlrun is refused.
fn schema_is_current(target: &str, found: i64, migrations: &[refinery::Migration]) -> Result<bool> {
    let known = migrations
        .iter()
        .map(|m| i64::from(m.version()))
        .max()
        .unwrap_or(0);
    if found > known {
        return Err(Error::NewerSchema {
            target: target.to_string(),
            found,
            known,
        });
    }
    Ok(found == known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_stay_out_of_the_audit_trail() {
        assert_eq!(
            redact_url("--db=postgresql://etl:s3cret@db/w"),
            "--db=postgresql://etl:***@db/w"
        );
        assert_eq!(redact_url("postgres://etl@db/w"), "postgres://etl@db/w");
        assert_eq!(redact_url("--reason"), "--reason");
    }

    #[test]
    fn targets_by_their_spelling() {
        assert!(matches!(
            Target::parse("x.db", None).unwrap(),
            Target::Sqlite(_)
        ));
        let pg = Target::parse("postgresql://u:secret@h/db", Some("sales")).unwrap();
        assert_eq!(pg.dialect(), Dialect::Postgres);
        assert!(!pg.to_string().contains("secret"), "{pg}");
        assert!(Target::parse("postgres:///db", Some("Bad-Name")).is_err());
        assert!(Target::parse("x.db", Some("sales")).is_err());
    }
}
