//! The database seam: `Db`, the same for every backend, over one written interface
//! (`backend::Backend`) that each backend implements, as refinery's drivers implement its
//! `Transaction` and `Query`. No rusqlite or postgres type leaves this folder, and nothing
//! here imports the rest of sqlrun: this is the bottom layer, with errors of its own
//! (`error.rs`), which `crate::error` wraps.

mod backend;
mod error;
mod postgres;
mod read;
mod row;
mod script;
mod sqlite;
mod target;

use backend::{Backend, Scripted};
pub use backend::{Interrupter, TxKind};
pub use error::{DbError, DbErrorKind, Error, ErrorAt, Result};
pub use read::RowShape;
pub use row::{Params, Row, Value};
pub use script::split_statements;
use script::{code_mask, excerpt};
use serde::de::DeserializeOwned;
pub use target::{is_postgres_url, plain_schema, redact_url, Dialect, Target};

/// A driver statement, one text per dialect (most are the same text).
#[derive(Debug, Clone, Copy)]
pub struct Query {
    /// Where its texts are, under queries/: SQLite's, PostgreSQL's (for messages).
    pub name: &'static str,
    pub postgres_name: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// SQL to run: a driver query (picked by dialect) or rendered text.
pub trait Sql {
    fn text(&self, dialect: Dialect) -> &str;

    /// What the statement is, for an error of reading its rows: a rendered template by
    /// the name its header gives.
    fn what(&self, dialect: Dialect) -> String {
        let text = self.text(dialect);
        let header = text
            .lines()
            .map(str::trim)
            .take_while(|l| l.is_empty() || l.starts_with("--"))
            .find_map(|l| l.strip_prefix("-- name:"));
        match header {
            Some(name) => format!("template {}", name.trim()),
            None => "a statement".to_string(),
        }
    }
}

impl Sql for Query {
    fn text(&self, dialect: Dialect) -> &str {
        match dialect {
            Dialect::Sqlite => self.sqlite,
            Dialect::Postgres => self.postgres,
        }
    }

    fn what(&self, dialect: Dialect) -> String {
        match dialect {
            Dialect::Sqlite => format!("queries/{}", self.name),
            Dialect::Postgres => format!("queries/{}", self.postgres_name),
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

/// Names a fault of the database's surroundings on one line: its cause, for this
/// database, and the fix. Any other error is returned as it is. Explaining twice gives the
/// same line.
fn explain(target: &Target, e: Error) -> Error {
    let Error::Environment { kind, cause, .. } = e else {
        return e;
    };
    let (kind, line) = match target {
        Target::Sqlite(path) => sqlite::explain(kind, path, &cause),
        Target::Postgres { url, schema } => (
            kind,
            postgres::explain(kind, &target.to_string(), url, schema, &cause),
        ),
    };
    Error::Environment { kind, cause, line }
}

/// How a transaction's COMMIT ended (`Db::committing`).
pub enum Commit<T> {
    /// It committed: what the work returned.
    Done(T),
    /// SQLite: the COMMIT failed, and a COMMIT that fails may still have landed (its WAL
    /// frames were written, the sync after them failed): only reading the file again
    /// tells. `error` is the COMMIT's, explained; `reopened` says whether a new connection
    /// took the old one's place (the old one is closed either way), so that what is read
    /// next is what the file holds, as the next process will find it.
    InDoubt { error: Error, reopened: Result<()> },
}

/// An open, migrated database.
pub struct Db {
    conn: Box<dyn Backend>,
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

/// A script's parameters as the backends take them.
fn named_params(params: &[(String, Value)]) -> Vec<(&str, Value)> {
    params
        .iter()
        .map(|(name, value)| (name.as_str(), value.clone()))
        .collect()
}

/// Whether opening may create the database (a SQLite file, a PostgreSQL schema) when it
/// does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    Yes,
    /// No: it is named by a project, and a typo there must not start an empty one.
    Refuse,
}

impl Db {
    /// Opens (creating if needed) and migrates the database.
    pub fn open(target: &Target) -> Result<Db> {
        Db::open_as(target, Create::Yes)
    }

    /// Opens and migrates the database, creating it only if `create` says so.
    pub fn open_as(target: &Target, create: Create) -> Result<Db> {
        let opened: Result<Box<dyn Backend>> = match target {
            Target::Sqlite(path) if create == Create::Refuse && !path.exists() => Err(
                Error::Absent(format!("database {} does not exist", path.display())),
            ),
            Target::Sqlite(path) => sqlite::Conn::open(path).map(|c| Box::new(c) as _),
            Target::Postgres { url, schema } => {
                postgres::Conn::open(url, schema, &target.to_string(), create)
                    .map(|c| Box::new(c) as _)
            }
        };
        Ok(Db {
            conn: opened.map_err(|e| explain(target, e))?,
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
                conn: Box::new(conn),
                target: target.clone(),
            })),
            None => ReadOpen::NeedsWriting,
        })
    }

    pub fn dialect(&self) -> Dialect {
        self.target.dialect()
    }

    /// One call of the backend, with a fault of the surroundings explained for this
    /// database.
    fn call<T>(&mut self, op: impl FnOnce(&mut dyn Backend) -> Result<T, DbError>) -> Result<T> {
        op(self.conn.as_mut()).map_err(|e| self.explained(e))
    }

    fn explained(&self, e: DbError) -> Error {
        explain(&self.target, e.into())
    }

    /// The error of a script's statement (its index, when one failed), named by the
    /// `-- sqlrun context:` that statement belongs to.
    fn in_context(&self, marked: &[script::Marked], (at, e): (Option<usize>, DbError)) -> Error {
        let context = at.and_then(|i| marked[i].context.clone());
        self.explained(DbError { context, ..e })
    }

    /// Runs a script of one or more statements; their rows are discarded.
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        self.call(|c| c.batch(sql))
    }

    /// Runs a script whose values are parameters (`templates::render_bound`): statement by
    /// statement, each with the parameters it names. The text is the same for every date,
    /// so prepared statements are reused.
    pub fn run_script(&mut self, sql: &str, params: &[(String, Value)]) -> Result<()> {
        self.run_script_keeping(sql, params).map(drop)
    }

    /// `run_script`, keeping the rows of each statement marked `-- sqlrun rows: NAME`
    /// (a check's failing rows): under its NAME, in the order they ran.
    pub fn run_script_keeping(
        &mut self,
        sql: &str,
        params: &[(String, Value)],
    ) -> Result<Vec<(String, Vec<Row>)>> {
        let params = named_params(params);
        let mut kept = Vec::new();
        self.each_statement(sql, |db, statement| {
            match script::rows_marker(statement) {
                Some(name) => {
                    let rows = db.call(|c| c.statement_rows(statement, &params))?;
                    kept.push((name, rows));
                }
                None => db.call(|c| c.run_statement(statement, &params))?,
            }
            Ok(())
        })?;
        Ok(kept)
    }

    /// `run_script_keeping` inside a transaction (a date's script), all its statements as
    /// one request (on PostgreSQL pipelined: one round trip, not one per statement). The
    /// statements of the `models` (their `-- sqlrun context:`) are planned for each run of
    /// them. An error names the `-- sqlrun context:` of the statement that failed, as
    /// `run_script_keeping`'s does.
    pub fn run_script_pipelined(
        &mut self,
        sql: &str,
        params: &[(String, Value)],
        models: &[&str],
    ) -> Result<Vec<(String, Vec<Row>)>> {
        let params = named_params(params);
        let marked = script::marked(sql);
        let statements: Vec<Scripted> = marked
            .iter()
            .map(|m| Scripted {
                sql: m.statement,
                keep_rows: m.kept.is_some(),
                planned_each_time: m.context.as_deref().is_some_and(|c| models.contains(&c)),
            })
            .collect();
        let rows = self
            .conn
            .run_pipelined(&statements, &params)
            .map_err(|failed| self.in_context(&marked, failed))?;
        let names = marked.into_iter().filter_map(|m| m.kept);
        Ok(names.zip(rows).collect())
    }

    /// Runs one statement whose parameters are bound by position, in the order they first
    /// appear in the text (`:p1`, `:p2`, ... as `templates::render_bound` prints them):
    /// a bulk load binds a few thousand values per statement without a lookup by name.
    /// Prepared once per text. How many rows it changed.
    pub fn execute_in_order(&mut self, sql: &str, values: &[Value]) -> Result<u64> {
        self.call(|c| c.execute_in_order(sql, values))
    }

    /// Inserts rows of `width` values each (one after the other in `values`) with `query`:
    /// on SQLite its INSERT of one row, run once per row (prepared once); on PostgreSQL
    /// its `COPY ... FROM STDIN`, all rows in one statement (a statement per row cost
    /// `generate` 40 times SQLite's time). How many rows went in.
    pub fn insert_rows(&mut self, query: &Query, width: usize, values: &[Value]) -> Result<u64> {
        let sql = query.text(self.dialect());
        self.call(|c| c.insert_rows(sql, width, values))
    }

    /// Runs one statement; how many rows it changed.
    pub fn execute<S: Sql + ?Sized>(&mut self, sql: &S, params: Params) -> Result<u64> {
        let text = sql.text(self.dialect()).to_string();
        self.call(|c| c.execute(&text, params))
    }

    pub fn rows<S: Sql + ?Sized>(&mut self, sql: &S, params: Params) -> Result<Vec<Row>> {
        let text = sql.text(self.dialect()).to_string();
        self.call(|c| c.rows(&text, params))
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

    /// The rows as `T`s, each field from the column of its name (`Row::read`); a column
    /// and a field that do not match are an error naming the statement and the column.
    pub fn rows_as<T: DeserializeOwned, S: Sql + ?Sized>(
        &mut self,
        sql: &S,
        params: Params,
    ) -> Result<Vec<T>> {
        let rows = self.rows(sql, params)?;
        let read = rows.iter().map(Row::read).collect::<Result<_, DbError>>();
        Ok(read.map_err(|e| read::of_statement(&sql.what(self.dialect()), e))?)
    }

    /// The first row as `T`, if there is one.
    pub fn row_as<T: DeserializeOwned, S: Sql + ?Sized>(
        &mut self,
        sql: &S,
        params: Params,
    ) -> Result<Option<T>> {
        let row = self.row(sql, params)?;
        let read = row.as_ref().map(Row::read).transpose();
        Ok(read.map_err(|e| read::of_statement(&sql.what(self.dialect()), e))?)
    }

    /// The first row as `T`, which the statement always returns (an aggregate, RETURNING).
    pub fn one_as<T: DeserializeOwned, S: Sql + ?Sized>(
        &mut self,
        sql: &S,
        params: Params,
    ) -> Result<T> {
        let row = self.one(sql, params)?;
        Ok(row
            .read()
            .map_err(|e| read::of_statement(&sql.what(self.dialect()), e))?)
    }

    /// The rows as `T`s with `n` numbered `U`s each (`Row::read_numbered`): a statement
    /// with columns per model, source or check of the pipeline.
    pub fn rows_numbered<T: DeserializeOwned, U: DeserializeOwned, S: Sql + ?Sized>(
        &mut self,
        sql: &S,
        params: Params,
        n: usize,
    ) -> Result<Vec<(T, Vec<U>)>> {
        let rows = self.rows(sql, params)?;
        let read = rows
            .iter()
            .map(|r| r.read_numbered(n))
            .collect::<Result<_, DbError>>();
        Ok(read.map_err(|e| read::of_statement(&sql.what(self.dialect()), e))?)
    }

    /// The first row as `T` with `n` numbered `U`s, which the statement always returns.
    pub fn one_numbered<T: DeserializeOwned, U: DeserializeOwned, S: Sql + ?Sized>(
        &mut self,
        sql: &S,
        params: Params,
        n: usize,
    ) -> Result<(T, Vec<U>)> {
        let row = self.one(sql, params)?;
        Ok(row
            .read_numbered(n)
            .map_err(|e| read::of_statement(&sql.what(self.dialect()), e))?)
    }

    /// How the columns a statement returns differ from what its read expects (None:
    /// they match), found by preparing it against this database.
    pub fn shape_mismatch(&mut self, shape: &RowShape) -> Result<Option<String>> {
        let statement = match &shape.kept {
            None => shape.sql.as_str(),
            Some(name) => {
                let marked = script::marked(&shape.sql);
                let kept = marked.iter().find(|m| m.kept.as_ref() == Some(name));
                match kept {
                    Some(m) => m.statement,
                    None => {
                        return Ok(Some(format!(
                            "{}: no statement keeps its rows as `{name}`",
                            shape.what
                        )))
                    }
                }
            }
        };
        let found = self.select_columns(statement)?;
        Ok(shape.mismatch(&found))
    }

    /// Runs `work` in a transaction: committed when it returns Ok, rolled back otherwise.
    /// `work` may fail with any error a database error converts into (the caller's own).
    /// A COMMIT in doubt (`Commit::InDoubt`) is its error.
    pub fn transaction<T, E: From<Error>>(
        &mut self,
        kind: TxKind,
        work: impl FnOnce(&mut Db) -> Result<T, E>,
    ) -> Result<T, E> {
        match self.committing(kind, work)? {
            Commit::Done(value) => Ok(value),
            Commit::InDoubt { error, .. } => Err(error.into()),
        }
    }

    /// `transaction`, saying how its COMMIT ended: done, or (SQLite) failed and in
    /// doubt, with the connection opened anew for the caller to find out what landed.
    /// PostgreSQL's COMMIT cut off with its connection is `DbErrorKind::CommitUnknown`.
    pub fn committing<T, E: From<Error>>(
        &mut self,
        kind: TxKind,
        work: impl FnOnce(&mut Db) -> Result<T, E>,
    ) -> Result<Commit<T>, E> {
        self.call(|c| c.begin(kind))?;
        let value = match work(self) {
            Ok(value) => value,
            Err(e) => {
                // The connection may be gone; the error that ended the work is the news.
                let _ = self.conn.rollback();
                return Err(e);
            }
        };
        match self.conn.commit() {
            Ok(()) => Ok(Commit::Done(value)),
            Err(e) if e.kind == DbErrorKind::ConnectionLost => Err(Error::Database(DbError {
                kind: DbErrorKind::CommitUnknown,
                ..e
            })
            .into()),
            Err(e) => {
                // A COMMIT that failed (a full disk) may leave the transaction open.
                let _ = self.conn.rollback();
                let error = self.explained(e);
                match self.dialect() {
                    Dialect::Sqlite => Ok(Commit::InDoubt {
                        error,
                        reopened: self.reopen(),
                    }),
                    Dialect::Postgres => Err(error.into()),
                }
            }
        }
    }

    /// Closes the connection and opens a new one in its place: read-write, else (a file
    /// that cannot be written any more) read-only. If neither opens, every later call
    /// fails.
    pub fn reopen(&mut self) -> Result<()> {
        self.conn.close();
        let fresh = match Db::open(&self.target) {
            Ok(db) => db,
            Err(e) => match Db::open_read_only(&self.target) {
                Ok(ReadOpen::Current(db)) => *db,
                _ => return Err(e),
            },
        };
        self.conn = fresh.conn;
        Ok(())
    }

    /// Runs `work` in a transaction that is always rolled back: what it wrote is seen by
    /// its own reads and then undone (`apply --dry-run`).
    pub fn rolled_back<T, E: From<Error>>(
        &mut self,
        kind: TxKind,
        work: impl FnOnce(&mut Db) -> Result<T, E>,
    ) -> Result<T, E> {
        self.call(|c| c.begin(kind))?;
        let result = work(self);
        let undone = self.conn.rollback();
        let value = result?;
        undone.map_err(|e| self.explained(e))?;
        Ok(value)
    }

    /// Parses and plans each statement of a script without running it: unknown tables
    /// or columns and syntax errors show before anything is written.
    /// A statement that does not prepare is `Error::Database`; a fault of the
    /// surroundings is `Error::Environment`, as everywhere.
    /// An error names what the statement belonged to (`DbError::context`), as in
    /// `run_script`.
    pub fn check_statements(&mut self, sql: &str) -> Result<()> {
        let marked = script::marked(sql);
        let statements: Vec<&str> = marked.iter().map(|m| m.statement).collect();
        self.conn
            .check_statements(&statements)
            .map_err(|failed| self.in_context(&marked, failed))
    }

    /// Prepares one SELECT without running it (values as `:p1` parameters, as a bound
    /// render prints them): the names of the columns it returns. One that does not
    /// prepare is `Error::Database`, with where it stopped (`DbError::at`).
    pub fn select_columns(&mut self, sql: &str) -> Result<Vec<String>> {
        self.call(|c| c.select_columns(sql))
    }

    /// Runs `each` on every statement of a script; an error names what the statement
    /// belonged to, as the script's last `-- sqlrun context:` line before it said.
    fn each_statement(
        &mut self,
        sql: &str,
        mut each: impl FnMut(&mut Db, &str) -> Result<()>,
    ) -> Result<()> {
        for marked in script::marked(sql) {
            each(self, marked.statement).map_err(|e| match e {
                Error::Database(e) => Error::Database(DbError {
                    context: marked.context,
                    ..e
                }),
                other => other,
            })?;
        }
        Ok(())
    }

    pub fn interrupter(&self) -> Interrupter {
        self.conn.interrupter()
    }

    /// A running run holds its session (PostgreSQL: a session-level advisory lock keyed
    /// by its run id) for its whole life, so that others can tell it is alive wherever it
    /// runs. On SQLite the process itself is the proof (pid and start time).
    pub fn hold_run(&mut self, run_id: i64) -> Result<()> {
        self.call(|c| c.hold_run(run_id))
    }

    /// Whether `run_id` is alive, asked inside a date's transaction from any session of
    /// the run (the workers of `apply --jobs` have sessions of their own): its own session
    /// still holds its lock. On SQLite the run is this process.
    pub fn run_alive(&mut self, run_id: i64) -> Result<bool> {
        self.call(|c| c.run_alive(run_id))
    }

    /// Whether a table or view exists, and for a view the text it was created from.
    pub fn object(&mut self, name: &str) -> Result<Option<String>> {
        self.call(|c| c.object(name))
    }

    /// Remembers the text a view was created from (PostgreSQL normalises the text it
    /// keeps; SQLite keeps it as given and needs nothing).
    pub fn record_view(&mut self, name: &str, create: &str) -> Result<()> {
        self.call(|c| c.record_view(name, create))
    }

    /// The database server's clock now (PostgreSQL: queries/postgres/server_clock.sql),
    /// which decides what day it is for every runner of the database; None on SQLite,
    /// where there is no server and the runner's clock is the clock.
    pub fn server_clock(&mut self) -> Result<Option<chrono::DateTime<chrono::Utc>>> {
        self.call(|c| c.server_clock())
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
