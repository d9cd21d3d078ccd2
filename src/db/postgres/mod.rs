//! PostgreSQL: one shared database whose runners sit on several machines. Everything of a
//! pipeline lives in one schema. A run is alive while its session lives: it holds a
//! session-level advisory lock keyed by its run id, so the server, not a process table,
//! knows whether a holder is gone (so a pooler that shares server sessions between
//! transactions is refused: pooler.rs). Every wait is bounded (see SESSION_DEFAULTS).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::Duration;

use tokio_postgres::types::Type;
use tokio_postgres::{Config, Statement};

use super::backend::{run_each, Scripted};
use super::{
    Backend, Create, DbError, DbErrorKind, Error, Interrupter, Params, Result, Row, TxKind, Value,
};

mod copy;
mod explain;
mod params;
mod pooler;
mod rights;
mod session;
mod tls;
mod types;

pub use explain::explain;
use explain::{located, migration_error, with_causes};
use params::positional;
use session::{Param, Session, Step};
use tls::Tls;
use types::{Any, TextParam};

mod embedded {
    refinery::embed_migrations!("sql/postgres");
}

const HISTORY_TABLE: &str = "sqlrun_schema_history";

/// Settings sqlrun gives its own sessions unless the URL's `options` set them
/// (`?options=-c%20lock_timeout%3D5s`). Why each:
/// - lock_timeout: a bookkeeping step or a date waits at most this long for a lock
///   (another runner's reservation step holds it for milliseconds);
/// - statement_timeout: one statement (one model for one date) runs at most this long;
/// - idle_in_transaction_session_timeout: a runner stopped mid-transaction (SIGSTOP, a
///   hung client) gives its locks back;
/// - idle_session_timeout (PostgreSQL 14+) off: a run's own session holds the run's lock
///   and sits idle while its workers compute (a slow date takes minutes); a server that
///   ended it would end the run (idle_session_off.sql sets it first, before the pooler
///   probe's wait; the probe's short second session is left as it is, see pooler.rs);
/// - tcp_* and client_connection_check_interval: the server ends the session of a runner
///   cut off by the network within about 8 s, which frees its dates for the next run
///   (PostgreSQL's defaults keep a silent session, and its locks, for over two hours);
/// - jit: sqlrun's statements are lookups by date and one model's SELECT for one date;
///   compiling them costs more than it saves. The planner's estimate for the date rule
///   (date_states.sql, a subquery per model and fact) crosses jit_above_cost, and its
///   compilation took 0.3 to 15 s where the query runs in 11 ms, inside a bookkeeping
///   step that other runners wait for.
const SESSION_DEFAULTS: &[(&str, &str)] = &[
    ("lock_timeout", "30s"),
    ("statement_timeout", "1h"),
    ("idle_in_transaction_session_timeout", "5min"),
    ("idle_session_timeout", "0"),
    ("tcp_keepalives_idle", "5"),
    ("tcp_keepalives_interval", "2"),
    ("tcp_keepalives_count", "2"),
    ("tcp_user_timeout", "5000"),
    ("client_connection_check_interval", "1000"),
    ("jit", "off"),
];

/// A statement's rows, and how many rows it changed.
type Changed = (Vec<tokio_postgres::Row>, u64);

pub struct Conn {
    client: Session,
    /// Bound statements by their text: a date's statements have the same text for every
    /// date, so each is parsed and planned once per run. (A text with `:name` parameters
    /// and its `$n` form never coincide, so both can be keys.)
    prepared: HashMap<String, Statement>,
    /// The texts run once unprepared (one round trip, planned once): one that comes
    /// again is prepared and kept, so a statement of every date is planned once per run.
    seen: HashSet<String>,
    /// The BEGIN of a date's transaction, not sent yet: it goes with the transaction's
    /// first statement, in the same round trip.
    pending_begin: Option<&'static str>,
    /// Whether a transaction is open (a statement that fails in it aborts it).
    in_transaction: bool,
    /// The run whose lock this session holds (hold_run.sql), if any.
    holds_run: Option<i64>,
    canceller: tls::Canceller,
}

/// The URL without its password (given before the host or as `?password=`), for messages
/// and the audit trail (`runs.command`).
pub fn redact(url: &str) -> String {
    without_password_parameter(&without_user_password(url))
}

fn without_password_parameter(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let parameters: Vec<&str> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some(("password", _)) => "password=***",
            _ => p,
        })
        .collect();
    format!("{base}?{}", parameters.join("&"))
}

fn without_user_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => match authority[..at].split_once(':') {
            Some((user, _)) => format!(
                "{}{user}:***{}",
                &url[..scheme_end + 3],
                &url[scheme_end + 3 + at..]
            ),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// What libpq (psql) fills in when the URL leaves it out: host and port from PGHOST and
/// PGPORT, else the local socket folder; the database from PGDATABASE.
fn libpq_defaults(config: &mut Config) {
    let env = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
    if config.get_hosts().is_empty() {
        let socket = ["/var/run/postgresql", "/run/postgresql", "/tmp"]
            .into_iter()
            .find(|dir| std::path::Path::new(dir).join(".s.PGSQL.5432").exists());
        match env("PGHOST").as_deref().or(socket) {
            Some(host) => config.host(host),
            None => config.host("localhost"),
        };
    }
    if config.get_ports().is_empty() {
        if let Some(port) = env("PGPORT").and_then(|p| p.parse().ok()) {
            config.port(port);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(db) = env("PGDATABASE") {
            config.dbname(&db);
        }
    }
}

fn config_from(url: &str) -> Result<(Config, Tls)> {
    let (rest, tls) = Tls::from_url(url)?;
    let mut config: Config = rest.parse().map_err(|e| {
        Error::BadInput(format!(
            "--db {}: not a usable PostgreSQL URL ({}); write postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, \
             or postgresql:///DATABASE?host=/run/postgresql for a local socket",
            redact(url),
            with_causes(&e)
        ))
    })?;
    libpq_defaults(&mut config);
    if config.get_user().is_none() {
        let user = std::env::var("PGUSER")
            .or_else(|_| std::env::var("USER"))
            .unwrap_or_else(|_| "postgres".into());
        config.user(&user);
    }
    if config.get_password().is_none() {
        if let Ok(password) = std::env::var("PGPASSWORD") {
            config.password(password);
        }
    }
    // The client side of the same bound: a runner notices a dead connection by itself.
    let given = |key: &str| url.contains(&format!("{key}="));
    if !given("connect_timeout") {
        config.connect_timeout(Duration::from_secs(10));
    }
    if !given("keepalives_idle") {
        config.keepalives_idle(Duration::from_secs(5));
    }
    if !given("keepalives_interval") {
        config.keepalives_interval(Duration::from_secs(2));
    }
    if !given("keepalives_retries") {
        config.keepalives_retries(2);
    }
    if !given("tcp_user_timeout") {
        config.tcp_user_timeout(Duration::from_secs(5));
    }
    if config.get_application_name().is_none() {
        config.application_name("sqlrun");
    }
    Ok((config, tls))
}

impl Conn {
    /// Opens and migrates the schema, creating it if missing unless `create` refuses.
    pub fn open(url: &str, schema: &str, label: &str, create: Create) -> Result<Conn> {
        let (mut config, tls) = config_from(url)?;
        let connector = tls.connector(&mut config, label)?;
        // The probe's connection opens beside this one (its start overlaps), and gives
        // way if this one finds no slot: a role allowed one connection keeps it.
        let (again, second) = (config.clone(), connector.clone());
        let pin_idle = !settings_in_options(config.get_options().unwrap_or_default())
            .iter()
            .any(|name| name == "idle_session_timeout");
        let mut probe = pooler::Probe::start(
            url,
            std::sync::Arc::new(move || second.connect(&again).map(|(session, _)| session)),
            pin_idle,
        );
        let (mut client, canceller) =
            pooler::after_probe(&mut probe, || connector.connect(&config))
                .map_err(|e| tls.explain(&e, &config, label))?;
        probe.finish(&mut client, label)?;
        let mut conn = Conn {
            client,
            prepared: Default::default(),
            seen: Default::default(),
            pending_begin: None,
            in_transaction: false,
            holds_run: None,
            canceller,
        };
        conn.session_settings(config.get_options())?;
        conn.check_rights(schema, label, create)?;
        conn.migrate(schema, label)?;
        Ok(conn)
    }

    /// sqlrun's session defaults, but those the URL's options set, and the settings its
    /// SQL reads by (standard_conforming_strings: every value sqlrun prints into SQL is a
    /// literal with quotes doubled, which means what it says only while backslashes are
    /// plain characters): one statement.
    fn session_settings(&mut self, options: Option<&str>) -> Result<()> {
        let given = settings_in_options(options.unwrap_or_default());
        let mut settings: serde_json::Map<String, serde_json::Value> = SESSION_DEFAULTS
            .iter()
            .filter(|(name, _)| !given.iter().any(|g| g == &name.to_lowercase()))
            .map(|(name, value)| (name.to_string(), (*value).into()))
            .collect();
        for (name, value) in [
            ("standard_conforming_strings", "on"),
            ("TimeZone", "UTC"),
            ("DateStyle", "ISO, YMD"),
        ] {
            settings.insert(name.into(), value.into());
        }
        self.execute(
            include_str!("../../../queries/postgres/session_settings.sql"),
            &[(
                ":settings",
                serde_json::Value::Object(settings).to_string().into(),
            )],
        )?;
        Ok(())
    }

    fn schema_version(&mut self) -> Result<i64> {
        let exists = self.rows(
            include_str!("../../../queries/postgres/table_exists.sql"),
            &[(":name", HISTORY_TABLE.into())],
        )?;
        if !exists
            .first()
            .map(|r| r.bool(0))
            .transpose()?
            .unwrap_or(false)
        {
            return Ok(0);
        }
        let rows = self.rows(include_str!("../../../queries/schema_version.sql"), &[])?;
        Ok(rows
            .first()
            .and_then(|r| r.opt_i64(0).ok().flatten())
            .unwrap_or(0))
    }

    /// Creates the schema if missing, points the session at it, and migrates it. Runners
    /// started together on a new database take turns (an advisory lock); a current one
    /// is only read, without the lock, so a runner stopped while it opens the database
    /// holds up nobody.
    fn migrate(&mut self, schema: &str, label: &str) -> Result<()> {
        if self.is_current(schema, label)? {
            return Ok(());
        }
        let lock = [(":schema", Value::from(schema))];
        self.execute(
            include_str!("../../../queries/postgres/migrate_lock.sql"),
            &lock,
        )?;
        let result = self.migrate_locked(schema, label);
        let unlocked = self.execute(
            include_str!("../../../queries/postgres/migrate_unlock.sql"),
            &lock,
        );
        result?;
        unlocked?;
        Ok(())
    }

    /// Whether the schema exists and is migrated (the session then points at it).
    fn is_current(&mut self, schema: &str, label: &str) -> Result<bool> {
        if self.missing_schema_ddl(schema)?.is_some() {
            return Ok(false);
        }
        self.current_in(schema, label)
    }

    /// The DDL that creates the schema, if it is missing.
    fn missing_schema_ddl(&mut self, schema: &str) -> Result<Option<String>> {
        let create = self.rows(
            include_str!("../../../queries/postgres/create_schema.sql"),
            &[(":schema", Value::from(schema))],
        )?;
        Ok(create.first().and_then(|r| r.opt_text(0).ok().flatten()))
    }

    /// Points the session at the schema; whether it is migrated.
    fn current_in(&mut self, schema: &str, label: &str) -> Result<bool> {
        self.execute(
            include_str!("../../../queries/postgres/search_path.sql"),
            &[(":schema", Value::from(schema))],
        )?;
        let found = self.schema_version()?;
        let migrations = embedded::migrations::runner();
        super::schema_is_current(label, found, migrations.get_migrations())
    }

    fn migrate_locked(&mut self, schema: &str, label: &str) -> Result<()> {
        if let Some(ddl) = self.missing_schema_ddl(schema)? {
            self.batch(&ddl).map_err(|e| Error::Open {
                target: label.to_string(),
                message: e.message,
                fix: format!(
                    "create the schema first (CREATE SCHEMA {schema}), or pass a --schema this user may use"
                ),
            })?;
        }
        if !self.current_in(schema, label)? {
            let mut runner = embedded::migrations::runner().set_grouped(true);
            runner.set_migration_table_name(HISTORY_TABLE);
            self.client
                .migrate(&runner)?
                .map_err(|e| migration_error(&e))?;
        }
        Ok(())
    }

    /// Sends the BEGIN a date's transaction put off, if any, alone.
    fn begun(&mut self) -> Result<(), DbError> {
        match self.pending_begin.take() {
            Some(begin) => self.client.batch_execute(begin).map_err(DbError::from),
            None => Ok(()),
        }
    }

    /// One statement and its rows, and how many rows it changed. The first time a text
    /// comes it is parsed, bound and run in one round trip, not kept (a prepared one takes
    /// two the first time: the driver waits for the server's description); the second
    /// time it is prepared and kept, and from then on runs bound, planned once. A BEGIN
    /// put off goes in the same round trip.
    fn run_one(&mut self, sql: &str, params: Params) -> Result<Changed, DbError> {
        let (text, values) = positional(sql, params);
        if self.prepared.contains_key(&text) || !self.seen.insert(text.clone()) {
            return self.run_prepared(text, &values);
        }
        self.one_piped(Piped::OneShot(&text, &values))
    }

    /// One statement, prepared once per text (after a BEGIN put off, in its round trip).
    fn run_prepared(&mut self, text: String, values: &[TextParam]) -> Result<Changed, DbError> {
        let statement = self.prepared(text)?;
        self.one_piped(Piped::Prepared(statement, values))
    }

    /// One statement through `pipelined` (so with a BEGIN put off).
    fn one_piped(&mut self, piped: Piped) -> Result<Changed, DbError> {
        let mut answers = self.pipelined(&[piped]).map_err(|(_, e)| e)?;
        Ok(answers.pop().unwrap_or_default())
    }

    fn prepared(&mut self, text: String) -> Result<Statement, DbError> {
        if let Some(statement) = self.prepared.get(&text) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(&text).map_err(|e| located(e, &text))?;
        self.prepared.insert(text, statement.clone());
        Ok(statement)
    }

    /// Prepares the texts not prepared yet, all in one round trip; the first that does
    /// not prepare is the error, with its index.
    fn prepare_each(&mut self, texts: &[&str]) -> Result<(), (Option<usize>, DbError)> {
        let missing: Vec<(usize, &str)> = texts
            .iter()
            .enumerate()
            .filter(|(_, t)| !self.prepared.contains_key(**t))
            .map(|(i, t)| (i, *t))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let asked: Vec<&str> = missing.iter().map(|(_, t)| *t).collect();
        let answers = self
            .client
            .prepare_all(&asked)
            .map_err(|e| (None, e.into()))?;
        for ((i, text), answer) in missing.into_iter().zip(answers) {
            let statement = answer.map_err(|e| (Some(i), located(e, text)))?;
            self.prepared.insert(text.to_string(), statement);
        }
        Ok(())
    }

    /// The statements with their values, sent at once after a BEGIN put off (one round
    /// trip): each one's rows and how many rows it changed. The first error is the error,
    /// with the index of the statement that failed (none: the BEGIN, or the connection).
    fn pipelined(&mut self, each: &[Piped]) -> Result<Vec<Changed>, (Option<usize>, DbError)> {
        let begin = self.pending_begin.take();
        let mut steps: Vec<Step> = begin.iter().map(|b| Step::Simple(b)).collect();
        steps.extend(each.iter().map(Piped::step));
        let answers = self.client.pipeline(&steps).map_err(|e| (None, e.into()))?;
        let mut answers = answers.into_iter();
        if begin.is_some() {
            if let Some(Err(e)) = answers.next() {
                return Err((None, e.into()));
            }
        }
        answers
            .enumerate()
            .map(|(i, answer)| answer.map_err(|e| (Some(i), DbError::from(e))))
            .collect()
    }
}

/// A statement of a pipeline, with its values: prepared (planned once, for any values),
/// or planned for these values alone (parsed and planned each time, as psql's are).
enum Piped<'a> {
    Prepared(Statement, &'a [TextParam]),
    OneShot(&'a str, &'a [TextParam]),
}

impl Piped<'_> {
    fn step(&self) -> Step<'_> {
        match self {
            Piped::Prepared(statement, values) => {
                Step::Bound(statement, values.iter().map(|v| v as Param).collect())
            }
            Piped::OneShot(sql, values) => Step::OneShot(
                sql,
                values.iter().map(|v| (v as Param, Type::UNKNOWN)).collect(),
            ),
        }
    }
}

impl Backend for Conn {
    /// An error names the line of the script where the server stopped.
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.begun()?;
        self.client.batch_execute(sql).map_err(|e| located(e, sql))
    }

    /// One statement of a bound script, prepared once per text.
    fn run_statement(&mut self, sql: &str, params: Params) -> Result<(), DbError> {
        let (text, values) = positional(sql, params);
        self.run_prepared(text, &values).map(drop)
    }

    /// All in one round trip (pipelined), each prepared once per text; a BEGIN put off
    /// goes first in the same round trip. The prepared statements of texts not seen yet
    /// are made in one round trip before.
    fn run_pipelined(
        &mut self,
        statements: &[Scripted],
        params: Params,
    ) -> Result<Vec<Vec<Row>>, (Option<usize>, DbError)> {
        if !self.in_transaction {
            // Outside a transaction each pipelined statement would commit on its own, also
            // those after one that failed: one at a time, stopping at the first error.
            return run_each(self, statements, params);
        }
        let bound: Vec<(String, Vec<TextParam>)> = statements
            .iter()
            .map(|s| positional(s.sql, params))
            .collect();
        // sqlrun's own statements are prepared once; the pipeline's own SQL is planned
        // for each date's values.
        let once: Vec<&str> = bound
            .iter()
            .zip(statements)
            .filter(|(_, s)| !s.planned_each_time)
            .map(|((text, _), _)| text.as_str())
            .collect();
        self.prepare_each(&once)?;
        let each: Vec<Piped> = bound
            .iter()
            .zip(statements)
            .map(|((text, values), s)| match s.planned_each_time {
                true => Piped::OneShot(text, values),
                false => Piped::Prepared(self.prepared[text].clone(), values),
            })
            .collect();
        let answers = self.pipelined(&each)?;
        let mut kept = Vec::new();
        for ((s, (rows, _)), i) in statements.iter().zip(answers).zip(0..) {
            if s.keep_rows {
                kept.push(read_rows(&rows).map_err(|e| (Some(i), e))?);
            }
        }
        Ok(kept)
    }

    /// A statement whose values come in the order of its parameters, prepared once per
    /// text (kept by the text as given: a bulk load's is long, and is run often); the
    /// server reads each value as the type of the column it goes into.
    fn execute_in_order(&mut self, sql: &str, values: &[Value]) -> Result<u64, DbError> {
        self.begun()?;
        let statement = match self.prepared.get(sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = self.client.prepare(&positional(sql, &[]).0)?;
                self.prepared.insert(sql.to_string(), statement.clone());
                statement
            }
        };
        if statement.params().len() != values.len() {
            return Err(DbError::other(format!(
                "a statement with {} parameters was given {} values",
                statement.params().len(),
                values.len()
            )));
        }
        let values: Vec<TextParam> = values.iter().cloned().map(TextParam).collect();
        let refs: Vec<Param> = values.iter().map(|v| v as Param).collect();
        Ok(self.client.execute(&statement, &refs)?)
    }

    fn insert_rows(&mut self, sql: &str, width: usize, values: &[Value]) -> Result<u64, DbError> {
        self.begun()?;
        copy::copy_rows(&mut self.client, sql, width, values)
    }

    fn execute(&mut self, sql: &str, params: Params) -> Result<u64, DbError> {
        Ok(self.run_one(sql, params)?.1)
    }

    fn rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>, DbError> {
        read_rows(&self.run_one(sql, params)?.0)
    }

    /// Prepared once per text, as `run_statement` (a check runs the same text each date).
    fn statement_rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>, DbError> {
        let (text, values) = positional(sql, params);
        read_rows(&self.run_prepared(text, &values)?.0)
    }

    /// Bookkeeping steps of one pipeline (schema) take turns, as SQLite's single writer
    /// does (queries/postgres/bookkeeping_begin.sql), each within sqlrun's own bounds. A
    /// date takes no pipeline lock: its transaction is REPEATABLE READ, so every statement
    /// of the date reads one snapshot (the version of its sources it records is the one
    /// its models read, while loaders go on inserting), and it locks only its own
    /// reservation row (fencing, own_date.sql). So no bookkeeping step of another
    /// runner ever waits for a date in flight, however long it takes or wherever its runner
    /// is stopped. A date's BEGIN is sent with its first statement (one round trip fewer).
    fn begin(&mut self, kind: TxKind) -> Result<(), DbError> {
        self.begun()?;
        let begin = match kind {
            TxKind::Exclusive => include_str!("../../../queries/postgres/bookkeeping_begin.sql"),
            TxKind::Plain => "BEGIN",
            TxKind::Preview => "BEGIN ISOLATION LEVEL REPEATABLE READ",
            TxKind::Date => {
                self.pending_begin = Some("BEGIN ISOLATION LEVEL REPEATABLE READ");
                self.in_transaction = true;
                return Ok(());
            }
        };
        let begun = self.batch(begin);
        if begun.is_err() && !self.client.is_closed() {
            // A turn not had within its bound: the transaction it opened goes with it.
            let _ = self.batch("ROLLBACK");
        }
        self.in_transaction = begun.is_ok();
        begun
    }

    /// A transaction whose BEGIN was never sent had nothing to commit.
    fn commit(&mut self) -> Result<(), DbError> {
        self.in_transaction = false;
        match self.pending_begin.take() {
            Some(_) => Ok(()),
            None => self.batch("COMMIT"),
        }
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.in_transaction = false;
        match self.pending_begin.take() {
            Some(_) => Ok(()),
            None => self.batch("ROLLBACK"),
        }
    }

    /// Prepares a statement (parse and analysis, nothing runs), and keeps it.
    fn check_statement(&mut self, sql: &str) -> Result<(), DbError> {
        self.check_statements(&[sql]).map_err(|(_, e)| e)
    }

    /// Prepares each statement, all in one round trip, and keeps them: the statements of
    /// a date checked before a run are the ones its dates run.
    /// Named parameters (`:p1`) are numbered as when the statement runs, so that the
    /// server guesses their types as it will then.
    fn check_statements(&mut self, statements: &[&str]) -> Result<(), (Option<usize>, DbError)> {
        let texts: Vec<String> = statements
            .iter()
            .map(|statement| positional(statement, &[]).0)
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        if !self.in_transaction {
            return self.prepare_each(&texts);
        }
        // In a transaction a statement that does not prepare aborts it: within a
        // savepoint, so that the caller may go on to find out which one and why.
        self.batch("SAVEPOINT sqlrun_check")
            .map_err(|e| (None, e))?;
        let checked = self.prepare_each(&texts);
        let after = match checked {
            Ok(()) => "RELEASE SAVEPOINT sqlrun_check",
            Err(_) => "ROLLBACK TO SAVEPOINT sqlrun_check; RELEASE SAVEPOINT sqlrun_check",
        };
        self.batch(after).map_err(|e| (None, e))?;
        checked
    }

    fn select_columns(&mut self, sql: &str) -> Result<Vec<String>, DbError> {
        self.begun()?;
        let (text, _) = positional(sql, &[]);
        let statement = self.client.prepare(&text).map_err(|e| located(e, &text))?;
        Ok(statement
            .columns()
            .iter()
            .map(|c| c.name().to_string())
            .collect())
    }

    fn interrupter(&self) -> Interrupter {
        let (token, canceller) = (self.client.cancel_token(), self.canceller.clone());
        Interrupter::new(move || canceller.cancel(&token))
    }

    fn hold_run(&mut self, run_id: i64) -> Result<(), DbError> {
        let rows = self.rows(
            include_str!("../../../queries/postgres/hold_run.sql"),
            &[(":run_id", run_id.into())],
        )?;
        if rows.first().map(|r| r.bool(0)).transpose()? != Some(true) {
            return Err(DbError::other(format!(
                "run {run_id}: another session already holds its lock"
            )));
        }
        self.holds_run = Some(run_id);
        Ok(())
    }

    /// Whether the run's own session still holds its lock: this one, or another, asked
    /// (run_alive.sql) inside a date's transaction.
    fn run_alive(&mut self, run_id: i64) -> Result<bool, DbError> {
        if self.holds_run == Some(run_id) {
            return Ok(true);
        }
        let rows = self.rows(
            include_str!("../../../queries/postgres/run_alive.sql"),
            &[(":run_id", run_id.into())],
        )?;
        Ok(rows.first().map(|r| r.bool(0)).transpose()? == Some(true))
    }

    fn object(&mut self, name: &str) -> Result<Option<String>, DbError> {
        let rows = self.rows(
            include_str!("../../../queries/postgres/object_sql.sql"),
            &[(":name", name.into())],
        )?;
        Ok(rows.first().map(|r| r.opt_text(0)).transpose()?.flatten())
    }

    fn record_view(&mut self, name: &str, create: &str) -> Result<(), DbError> {
        self.execute(
            include_str!("../../../queries/postgres/record_view.sql"),
            &[(":name", name.into()), (":create", create.into())],
        )?;
        Ok(())
    }

    fn server_clock(&mut self) -> Result<Option<chrono::DateTime<chrono::Utc>>, DbError> {
        let rows = self.rows(
            include_str!("../../../queries/postgres/server_clock.sql"),
            &[],
        )?;
        let micros = rows.first().map(|r| r.opt_i64(0)).transpose()?.flatten();
        let at = micros.and_then(chrono::DateTime::from_timestamp_micros);
        at.map(Some)
            .ok_or_else(|| DbError::other(format!("the server's clock read {micros:?}")))
    }
}

/// The settings a URL's `options` give the server (`-c name=value`, `-cname=value`,
/// `--name=value`; a backslash keeps the next character, as libpq reads them).
fn settings_in_options(options: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)))
            }
            c => word.push(c),
        }
    }
    words.extend((!word.is_empty()).then_some(word));
    let mut names = Vec::new();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        let setting = match word.as_str() {
            "-c" => words.next().map(String::as_str),
            w => w.strip_prefix("--").or_else(|| w.strip_prefix("-c")),
        };
        if let Some((name, _)) = setting.and_then(|s| s.split_once('=')) {
            names.push(name.replace('-', "_").to_lowercase());
        }
    }
    names
}

/// Every row of a query, each value as sqlrun's `Value` (`types::Any`).
fn read_rows(rows: &[tokio_postgres::Row]) -> Result<Vec<Row>, DbError> {
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    let names: Rc<Vec<String>> = Rc::new(
        first
            .columns()
            .iter()
            .map(|c| c.name().to_string())
            .collect(),
    );
    rows.iter()
        .map(|r| {
            let values = (0..names.len())
                .map(|i| r.try_get::<_, Any>(i).map(|a| a.0))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Row::new(Rc::clone(&names), values))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_given_in_the_options_are_found() {
        assert_eq!(
            settings_in_options("-c lock_timeout=5s -cStatement_Timeout=1min --jit=on"),
            vec!["lock_timeout", "statement_timeout", "jit"]
        );
        assert_eq!(
            settings_in_options("-c application\\ name=x --idle-in-transaction-session-timeout=0"),
            vec!["application name", "idle_in_transaction_session_timeout"]
        );
        assert!(settings_in_options("").is_empty());
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            redact("postgresql://me:pw@db.example:5432/x?host=/s"),
            "postgresql://me:***@db.example:5432/x?host=/s"
        );
        assert_eq!(redact("postgres:///x?host=/s"), "postgres:///x?host=/s");
        assert_eq!(
            redact("postgresql://me@db/x?sslmode=bogus&password=pw&host=/s"),
            "postgresql://me@db/x?sslmode=bogus&password=***&host=/s"
        );
    }
}
