//! PostgreSQL's errors: classified by SQLSTATE (or by the connection) into a `DbError`,
//! and a fault of the database's surroundings (privileges, a read-only server, a full
//! disk, a lock held too long) or a connection that could not be made, said on one line
//! with its fix.

use std::error::Error as StdError;

use tokio_postgres::error::SqlState;

use super::super::ErrorAt;
use super::{rights, DbError, DbErrorKind, Error};

/// An error with what caused it (the driver's words, then the system's): "error
/// communicating with the server: Connection timed out".
pub(super) fn with_causes(e: &dyn StdError) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}

/// A connection that could not be made, on one line: the server's or the network's
/// words, and what to check.
pub(super) fn connect_error(e: &tokio_postgres::Error, label: &str) -> Error {
    let code = e.code().map(SqlState::code).unwrap_or("");
    let message = match (e.as_db_error(), e.source()) {
        (Some(db), _) => db.message().to_string(),
        (None, Some(source)) => format!("{e}: {source}"),
        (None, None) => e.to_string(),
    };
    let target = label.to_string();
    let unreachable = |fix: &str| Error::Unreachable {
        target: target.clone(),
        message: message.clone(),
        fix: fix.into(),
    };
    let open = |fix: &str| Error::Open {
        target: target.clone(),
        message: message.clone(),
        fix: fix.into(),
    };
    match code {
        "3D000" => open("create that database (`createdb NAME`) or fix its name in the URL"),
        "28000" | "28P01" => {
            open("check the URL's user and password (or PGPASSWORD), and pg_hba.conf")
        }
        "53300" => {
            unreachable("the server has no free connection slot: wait, or raise max_connections")
        }
        "57P03" => unreachable("the server is starting up or shutting down: wait for it"),
        // Any other answer from the server is about this URL; no answer at all (refused,
        // timed out, no route, a name that does not resolve) may be gone on the next try.
        _ if e.as_db_error().is_some() => open(
            "check that the URL's host and port (or host=/socket/folder) name the right server",
        ),
        _ => unreachable(
            "check that the server is up, that the URL's host and port (or \
             host=/socket/folder) are right, and the network between them",
        ),
    }
}

/// A migration that failed: by its cause when the server's error says one (no
/// privilege, a read-only server, a full disk), else as refinery tells it.
pub(super) fn migration_error(e: &refinery::Error) -> Error {
    let source = StdError::source(e).and_then(|s| s.downcast_ref::<tokio_postgres::Error>());
    match source.map(db_error) {
        Some(db) if db.kind.is_environment() => db.into(),
        // Not the migration's fault: a retry migrates (each migration is a transaction).
        Some(db) if db.kind == DbErrorKind::ConnectionLost => Error::Database(db),
        _ => Error::Migration(e.to_string()),
    }
}

/// A fault of the surroundings of the database `label` (URL and schema), on one line:
/// what is wrong and how to fix it.
pub fn explain(kind: DbErrorKind, label: &str, url: &str, schema: &str, cause: &str) -> String {
    match kind {
        DbErrorKind::ReadOnly => format!(
            "database {label} only takes reads ({cause}): it is a standby, or the session or \
             database is set read-only (default_transaction_read_only); point --db at the \
             primary server"
        ),
        DbErrorKind::Denied => denied(label, url, schema, cause),
        DbErrorKind::DiskFull => format!(
            "the PostgreSQL server's disk is full ({cause}) for {label}: free space on the \
             server's data volume"
        ),
        DbErrorKind::Corrupt => format!(
            "PostgreSQL reports damaged data in {label} ({cause}): the server needs repair \
             (see its log); restore from a backup"
        ),
        DbErrorKind::Timeout => format!(
            "a wait on {label} ran past its bound ({cause}): another session held a lock too \
             long (find it in pg_stat_activity and pg_locks, and end it), or a statement ran \
             past statement_timeout; raise them in the URL's options if that is expected"
        ),
        _ => cause.to_string(),
    }
}

/// A right the role lacks: the GRANT that gives it, for the URL's user (a role taken
/// with SET ROLE in the URL's options is not seen here).
fn denied(label: &str, url: &str, schema: &str, cause: &str) -> String {
    let role = super::config_from(url)
        .ok()
        .and_then(|(c, _)| c.get_user().map(str::to_string));
    if let Some((role, grant)) =
        role.and_then(|r| rights::grant_for(cause, &r, schema).map(|g| (r, g)))
    {
        return format!(
            "role {} may not do this in {label} ({cause}): the schema's owner (or an admin) \
             runs: {grant}",
            rights::quoted(&role)
        );
    }
    if cause.contains("must be owner of") {
        return format!(
            "only an object's owner may change it, in {label} ({cause}): run sqlrun as the \
             role that owns the schema and its objects"
        );
    }
    format!(
        "the user may not do this in {label} ({cause}): run sqlrun as a user with rights on \
         the schema (its owner), or GRANT this user USAGE and CREATE on it and \
         SELECT, INSERT, UPDATE, DELETE on its tables"
    )
}

fn kind_of(e: &tokio_postgres::Error) -> DbErrorKind {
    match e.code() {
        // A statement that ran past statement_timeout is that date's failure (its SQL is
        // too slow), recorded like any other; a cancel from sqlrun itself is a signal.
        Some(code) if *code == SqlState::QUERY_CANCELED => {
            if e.to_string().contains("statement timeout") {
                DbErrorKind::Other
            } else {
                DbErrorKind::Interrupted
            }
        }
        Some(code) if *code == SqlState::LOCK_NOT_AVAILABLE => DbErrorKind::Timeout,
        Some(code) if *code == SqlState::T_R_SERIALIZATION_FAILURE => DbErrorKind::Conflict,
        Some(code) if *code == SqlState::READ_ONLY_SQL_TRANSACTION => DbErrorKind::ReadOnly,
        Some(code) if *code == SqlState::INSUFFICIENT_PRIVILEGE => DbErrorKind::Denied,
        Some(code) if *code == SqlState::DISK_FULL => DbErrorKind::DiskFull,
        Some(code) if *code == SqlState::DATA_CORRUPTED || *code == SqlState::INDEX_CORRUPTED => {
            DbErrorKind::Corrupt
        }
        // 57P01..57P05: the server ended the session (an administrator, a shutdown, a
        // crash, a dropped database, the idle-session timeout).
        Some(code)
            if code.code().starts_with("57P")
                || *code == SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT
                || code.code().starts_with("08") =>
        {
            DbErrorKind::ConnectionLost
        }
        Some(_) => DbErrorKind::Other,
        None if e.is_closed() || e.source().is_some_and(|s| s.is::<std::io::Error>()) => {
            DbErrorKind::ConnectionLost
        }
        None => DbErrorKind::Other,
    }
}

impl From<tokio_postgres::Error> for DbError {
    fn from(e: tokio_postgres::Error) -> Self {
        db_error(&e)
    }
}

/// An error by its cause, from its SQLSTATE or from the connection.
fn db_error(e: &tokio_postgres::Error) -> DbError {
    let kind = kind_of(e);
    let message = match e.as_db_error() {
        Some(db) => {
            let mut m = db.message().to_string();
            if let Some(detail) = db.detail() {
                m.push_str(": ");
                m.push_str(detail);
            }
            if e.code() == Some(&SqlState::IDLE_SESSION_TIMEOUT) {
                m.push_str(
                    " (the server's idle_session_timeout, which sqlrun turns off for its \
                     sessions unless the URL's options set it: leave it out of them)",
                );
            }
            if e.code() == Some(&SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT) {
                m.push_str(
                    ": this runner stood still inside a transaction past its bound (stopped, \
                     paused, or starved of CPU), so the server ended its session and nothing \
                     of that transaction was written; run the command again",
                );
            }
            m
        }
        None if kind == DbErrorKind::ConnectionLost => {
            format!("the connection to PostgreSQL is gone ({})", with_causes(&e))
        }
        None => e.to_string(),
    };
    DbError {
        kind,
        message,
        context: None,
        at: None,
    }
}

impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Self {
        DbError::from(e).into()
    }
}

/// A statement that does not prepare: the server's message, and where in the statement
/// it stopped (the server counts characters from 1; `ErrorAt` holds a byte offset).
pub(super) fn located(e: tokio_postgres::Error, statement: &str) -> DbError {
    let position = e.as_db_error().and_then(|d| match d.position() {
        Some(tokio_postgres::error::ErrorPosition::Original(p)) => Some(*p as usize),
        _ => None,
    });
    let mut err = DbError::from(e);
    if let Some(chars) = position {
        let offset = statement
            .char_indices()
            .nth(chars.saturating_sub(1))
            .map(|(i, _)| i)
            .unwrap_or(statement.len());
        err.at = Some(Box::new(ErrorAt {
            statement: statement.to_string(),
            offset,
        }));
    }
    err
}
