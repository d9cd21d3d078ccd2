//! The interface every backend implements, as refinery has one driver per database behind
//! its `Transaction` and `Query` traits. `Db` holds one backend and adds what is the same
//! for all: picking a query's text by dialect, running a script statement by statement
//! with its context, transactions that commit or roll back, and explaining a fault of the
//! surroundings for the database at hand.
//!
//! A backend must provide:
//! - statements: a script of several (`batch`), one with named parameters (`execute`,
//!   `rows`, `run_statement`, `statement_rows`), several in one request (`run_pipelined`),
//!   one with values in order (`execute_in_order`),
//!   many rows into one table (`insert_rows`), and preparing some without running them
//!   (`check_statement`, `check_statements`);
//! - transactions: `begin` of each `TxKind`, `commit`, `rollback`, and `close` before a
//!   connection is opened again;
//! - an `Interrupter` that stops the statement in progress from another thread;
//! - the run's liveness (`hold_run`, `run_alive`), the pipeline's objects (`object`,
//!   `record_view`), and the server's clock (`server_clock`).
//!
//! Beside the trait, each backend module has an `open` that connects and migrates, and an
//! `explain` module: its driver's errors classified into a `DbError` (`From`), and a
//! fault of the surroundings said on one line with its fix (`explain`). Every method
//! returns a `DbError` as the driver gave it; `Db` explains it.

use super::{DbError, Params, Row, Value};

/// One statement of a script sent as one request (`Backend::run_pipelined`).
#[derive(Debug, Clone, Copy)]
pub struct Scripted<'a> {
    pub sql: &'a str,
    /// Its rows are kept (a check's counts), not dropped.
    pub keep_rows: bool,
    /// A model's SQL: planned for each date's values, as a plan made for one date (or for
    /// an average one) can be a poor one for another (a date ten times the others' size,
    /// a join that should change its shape); sqlrun's own statements are planned once.
    pub planned_each_time: bool,
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
    /// `apply --diff`: reads the pipeline's tables (one date's, at one moment) and writes
    /// only the session's temporary objects; takes no lock a run waits for. SQLite: a
    /// deferred BEGIN (a reader of the WAL: a writer beside it never waits); PostgreSQL:
    /// REPEATABLE READ, no pipeline lock.
    Preview,
}

/// Stops the statement in progress, from another thread (a signal handler).
pub struct Interrupter(Box<dyn Fn() + Send + Sync>);

impl Interrupter {
    pub(super) fn new(stop: impl Fn() + Send + Sync + 'static) -> Interrupter {
        Interrupter(Box::new(stop))
    }

    pub fn interrupt(&self) {
        (self.0)()
    }
}

/// One open, migrated connection. `Send`: a worker of `apply --jobs` opens its own and
/// may be handed it.
pub(super) trait Backend: Send {
    /// Runs a script of one or more statements; their rows are discarded.
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;

    /// One statement of a bound script: the parameters it names are bound, its rows (if
    /// any) dropped. Prepared once per text.
    fn run_statement(&mut self, sql: &str, params: Params) -> Result<(), DbError>;

    /// The statements of a bound script, in order, as one request where the backend can
    /// (PostgreSQL: pipelined, one round trip), each with the parameters it names; the
    /// rows of those that keep them. An error comes with the index of the statement that
    /// failed, when one did.
    fn run_pipelined(
        &mut self,
        statements: &[Scripted],
        params: Params,
    ) -> Result<Vec<Vec<Row>>, (Option<usize>, DbError)> {
        run_each(self, statements, params)
    }

    /// One statement whose values come in the order of its parameters; prepared once per
    /// text. How many rows it changed.
    fn execute_in_order(&mut self, sql: &str, values: &[Value]) -> Result<u64, DbError>;

    /// Many rows of `width` values each, one after the other in `values`, into one table:
    /// on SQLite `sql` is an INSERT of one row run once per row; on PostgreSQL a `COPY
    /// ... FROM STDIN` that takes them all in one statement. How many rows went in.
    fn insert_rows(&mut self, sql: &str, width: usize, values: &[Value]) -> Result<u64, DbError>;

    /// One statement with named parameters; how many rows it changed.
    fn execute(&mut self, sql: &str, params: Params) -> Result<u64, DbError>;

    /// One statement with named parameters; its rows.
    fn rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>, DbError>;

    /// One statement of a bound script whose rows are kept (a check's failing rows):
    /// the parameters it names are bound; prepared once per text.
    fn statement_rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>, DbError>;

    fn begin(&mut self, kind: TxKind) -> Result<(), DbError>;

    fn commit(&mut self) -> Result<(), DbError>;

    /// Also when no transaction is open (the work that failed may have ended it).
    fn rollback(&mut self) -> Result<(), DbError>;

    /// Closes the connection now, before another is opened in its place (`Db::reopen`
    /// after a COMMIT in doubt); every later call fails. A backend whose connection needs
    /// nothing more than being dropped when it is replaced keeps this default.
    fn close(&mut self) {}

    /// Parses and plans each statement without running it.
    fn check_statement(&mut self, sql: &str) -> Result<(), DbError>;

    /// `check_statement` of each, in one request where the backend can (PostgreSQL: one
    /// round trip); an error with the index of the statement that failed.
    fn check_statements(&mut self, statements: &[&str]) -> Result<(), (Option<usize>, DbError)> {
        for (i, statement) in statements.iter().enumerate() {
            self.check_statement(statement).map_err(|e| (Some(i), e))?;
        }
        Ok(())
    }

    /// Prepares one SELECT without running it: the names of the columns it returns.
    fn select_columns(&mut self, sql: &str) -> Result<Vec<String>, DbError>;

    fn interrupter(&self) -> Interrupter;

    /// Holds the run's liveness for the session's life (see `Db::hold_run`).
    fn hold_run(&mut self, run_id: i64) -> Result<(), DbError>;

    /// Whether the run's session still lives (see `Db::run_alive`).
    fn run_alive(&mut self, run_id: i64) -> Result<bool, DbError>;

    /// Whether a table or view exists, and for a view the text it was created from.
    fn object(&mut self, name: &str) -> Result<Option<String>, DbError>;

    /// Remembers the text a view was created from, where the database does not keep it
    /// as given.
    fn record_view(&mut self, name: &str, create: &str) -> Result<(), DbError>;

    /// The database server's clock now; None where there is no server (see
    /// `Db::server_clock`).
    fn server_clock(&mut self) -> Result<Option<chrono::DateTime<chrono::Utc>>, DbError>;
}

/// `run_pipelined` one statement after the other, stopping at the first error.
pub(super) fn run_each<B: Backend + ?Sized>(
    backend: &mut B,
    statements: &[Scripted],
    params: Params,
) -> Result<Vec<Vec<Row>>, (Option<usize>, DbError)> {
    let mut kept = Vec::new();
    for (i, statement) in statements.iter().enumerate() {
        let ran = match statement.keep_rows {
            true => backend
                .statement_rows(statement.sql, params)
                .map(|rows| kept.push(rows)),
            false => backend.run_statement(statement.sql, params),
        };
        ran.map_err(|e| (Some(i), e))?;
    }
    Ok(kept)
}
