//! PostgreSQL: one shared database whose runners sit on several machines. Everything of a
//! pipeline lives in one schema. A run is alive while its session lives: it holds a
//! session-level advisory lock keyed by its run id, so the server, not a process table,
//! knows whether a holder is gone (so a pooler that shares server sessions between
//! transactions is refused: pooler.rs). Every wait is bounded (see SESSION_DEFAULTS).

use std::rc::Rc;
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::{Client, Config};

use super::{
    Backend, DbError, DbErrorKind, Error, Interrupter, Params, Result, Row, TxKind, Value,
};

mod batch;
mod copy;
mod explain;
mod pooler;
mod rights;
mod tls;
mod types;

pub use explain::explain;
use explain::{located, migration_error, with_causes};
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
    ("tcp_keepalives_idle", "5"),
    ("tcp_keepalives_interval", "2"),
    ("tcp_keepalives_count", "2"),
    ("tcp_user_timeout", "5000"),
    ("client_connection_check_interval", "1000"),
    ("jit", "off"),
];

pub struct Conn {
    client: Client,
    /// Bound statements by their text: a date's statements have the same text for every
    /// date, so each is parsed and planned once per run. (A text with `:name` parameters
    /// and its `$n` form never coincide, so both can be keys.)
    prepared: std::collections::HashMap<String, postgres::Statement>,
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
    pub fn open(url: &str, schema: &str, label: &str) -> Result<Conn> {
        let (mut config, tls) = config_from(url)?;
        let connector = tls.connector(&mut config, label)?;
        let (mut client, canceller) = pooler::after_probe(|| connector.connect(&config))
            .map_err(|e| tls.explain(&e, &config, label))?;
        // The probe's connection opens once this one has its slot: a role allowed one
        // connection keeps it.
        let (again, second) = (config.clone(), connector.clone());
        let probe = pooler::Probe::start(
            url,
            Box::new(move || second.connect(&again).map(|(client, _)| client)),
        );
        probe.finish(&mut client, label)?;
        let mut conn = Conn {
            client,
            prepared: Default::default(),
            holds_run: None,
            canceller,
        };
        conn.session_settings()?;
        conn.check_rights(schema, label)?;
        conn.migrate(schema, label)?;
        Ok(conn)
    }

    fn session_settings(&mut self) -> Result<()> {
        for (name, value) in SESSION_DEFAULTS {
            self.execute(
                include_str!("../../../queries/postgres/session_default.sql"),
                &[(":name", (*name).into()), (":value", (*value).into())],
            )?;
        }
        // Every value sqlrun prints into SQL is a literal with quotes doubled, which means
        // what it says only while backslashes are plain characters.
        self.batch("SET standard_conforming_strings = on; SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD';")?;
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
            embedded::migrations::runner()
                .set_grouped(true)
                .set_migration_table_name(HISTORY_TABLE)
                .run(&mut self.client)
                .map_err(|e| migration_error(&e))?;
        }
        Ok(())
    }

    /// One statement, not kept prepared: parsed, bound and run in one round trip (a
    /// prepared one takes two: the driver waits for the server's description first). Its
    /// parameters' types are left to the server, as when prepared. Its rows, and how many
    /// rows it changed.
    fn unprepared(
        &mut self,
        sql: &str,
        params: Params,
    ) -> Result<(Vec<postgres::Row>, u64), DbError> {
        let (text, values) = positional(sql, params);
        let typed = values.iter().map(|v| (v, Type::UNKNOWN));
        let mut rows = self.client.query_typed_raw(&text, typed)?;
        let mut all = Vec::new();
        while let Some(row) = rows.next()? {
            all.push(row);
        }
        Ok((all, rows.rows_affected().unwrap_or(0)))
    }

    fn prepared(&mut self, text: String) -> Result<postgres::Statement, DbError> {
        if let Some(statement) = self.prepared.get(&text) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(&text).map_err(|e| located(e, &text))?;
        self.prepared.insert(text, statement.clone());
        Ok(statement)
    }
}

impl Backend for Conn {
    /// An error names the line of the script where the server stopped.
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).map_err(|e| located(e, sql))
    }

    /// One statement of a bound script, prepared once per text.
    fn run_statement(&mut self, sql: &str, params: Params) -> Result<(), DbError> {
        let (text, values) = positional(sql, params);
        let statement = self.prepared(text)?;
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v as _).collect();
        self.client.execute(&statement, &refs)?;
        Ok(())
    }

    /// One round trip for them all (the simple-query protocol, values as literals: see
    /// batch.rs); an error names the line where the server stopped.
    fn run_statements(&mut self, statements: &[&str], params: Params) -> Result<(), DbError> {
        match statements {
            [one] => self.run_statement(one, params),
            _ => self.batch(&batch::inlined(statements, params)),
        }
    }

    /// One round trip for them all, as `run_statements`.
    fn execute_each(&mut self, sql: &str, each: &[Vec<(&str, Value)>]) -> Result<(), DbError> {
        let script: String = each
            .iter()
            .map(|params| batch::inlined(&[sql], params))
            .collect();
        match script.is_empty() {
            true => Ok(()),
            false => self.batch(&script),
        }
    }

    /// A statement whose values come in the order of its parameters, prepared once per
    /// text (kept by the text as given: a bulk load's is long, and is run often); the
    /// server reads each value as the type of the column it goes into.
    fn execute_in_order(&mut self, sql: &str, values: &[Value]) -> Result<u64, DbError> {
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
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v as _).collect();
        Ok(self.client.execute(&statement, &refs)?)
    }

    fn insert_rows(&mut self, sql: &str, width: usize, values: &[Value]) -> Result<u64, DbError> {
        copy::copy_rows(&mut self.client, sql, width, values)
    }

    fn execute(&mut self, sql: &str, params: Params) -> Result<u64, DbError> {
        Ok(self.unprepared(sql, params)?.1)
    }

    fn rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>, DbError> {
        read_rows(&self.unprepared(sql, params)?.0)
    }

    /// Prepared once per text, as `run_statement` (a check runs the same text each date).
    fn statement_rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>, DbError> {
        let (text, values) = positional(sql, params);
        let statement = self.prepared(text)?;
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v as _).collect();
        read_rows(&self.client.query(&statement, &refs)?)
    }

    /// Bookkeeping steps of one pipeline (schema) take turns, as SQLite's single writer
    /// does (queries/postgres/bookkeeping_begin.sql), each within sqlrun's own bounds. A
    /// date takes no pipeline lock: its transaction is REPEATABLE READ, so every statement
    /// of the date reads one snapshot (the version of its sources it records is the one
    /// its models read, while loaders go on inserting), and it locks only its own
    /// reservation row (fencing, own_date.sql). So no bookkeeping step of another
    /// runner ever waits for a date in flight, however long it takes or wherever its runner
    /// is stopped.
    fn begin(&mut self, kind: TxKind) -> Result<(), DbError> {
        let begin = match kind {
            TxKind::Exclusive => include_str!("../../../queries/postgres/bookkeeping_begin.sql"),
            TxKind::Plain => "BEGIN",
            TxKind::Date => "BEGIN ISOLATION LEVEL REPEATABLE READ",
        };
        let begun = self.batch(begin);
        if begun.is_err() && !self.client.is_closed() {
            // A turn not had within its bound: the transaction it opened goes with it.
            let _ = self.batch("ROLLBACK");
        }
        begun
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.batch("ROLLBACK")
    }

    /// Prepares each statement (parse and analysis, nothing runs).
    /// Named parameters (`:p1`) are numbered as when the statement runs, so that the
    /// server guesses their types as it will then.
    fn check_statements(&mut self, sql: &str) -> Result<(), DbError> {
        for statement in super::split_statements(sql) {
            let (text, _) = positional(statement, &[]);
            self.client.prepare(&text).map_err(|e| located(e, &text))?;
        }
        Ok(())
    }

    fn select_columns(&mut self, sql: &str) -> Result<Vec<String>, DbError> {
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
}

/// `:name` parameters as `$1, $2, ...` (in code, not in quotes, comments or `::` casts);
/// the values in that order.
fn positional(sql: &str, params: Params) -> (String, Vec<TextParam>) {
    let mut out = String::with_capacity(sql.len());
    let mut order: Vec<&str> = Vec::new();
    // By name, so that a statement of many thousand parameters (a bulk load's) is
    // numbered in one pass.
    let mut numbers: std::collections::HashMap<&str, usize> = Default::default();
    let mut copied = 0;
    for (start, end) in batch::parameter_spans(sql) {
        let name = &sql[start..end];
        let n = *numbers.entry(name).or_insert_with(|| {
            order.push(name);
            order.len()
        });
        out.push_str(&sql[copied..start]);
        out.push('$');
        out.push_str(&n.to_string());
        copied = end;
    }
    out.push_str(&sql[copied..]);
    let values = order
        .iter()
        .map(|name| {
            let value = params
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone());
            TextParam(value.unwrap_or(Value::Null))
        })
        .collect();
    (out, values)
}

/// Every row of a query, each value as sqlrun's `Value` (`types::Any`).
fn read_rows(rows: &[postgres::Row]) -> Result<Vec<Row>, DbError> {
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
    fn named_parameters_become_positional() {
        let (sql, values) = positional(
            "SELECT ':no', x::date FROM t WHERE a = :a AND b = :b OR c = :a -- :c",
            &[(":a", Value::Int(1)), (":b", "two".into())],
        );
        assert_eq!(
            sql,
            "SELECT ':no', x::date FROM t WHERE a = $1 AND b = $2 OR c = $1 -- :c"
        );
        assert_eq!(values.len(), 2);
        assert_eq!(values[1].0, Value::Text("two".into()));
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
