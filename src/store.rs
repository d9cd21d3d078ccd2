//! The database: opening it with deliberate settings, migrating it, and the state-store
//! records every command shares (runs, template versions). The one seam to the database
//! engine: a second backend would be a second implementation of what lives here.

use std::path::Path;
use std::time::Duration;

use rusqlite::{named_params, Connection, OpenFlags, OptionalExtension, Transaction};

use crate::error::{Error, Result};
use crate::queries;
use crate::templates::TemplateSet;

mod embedded {
    refinery::embed_migrations!("sql");
}

/// Concurrent sqlrun processes queue for SQLite's single write lock. Every write
/// transaction is one date or one bookkeeping step (milliseconds), so a wait this long
/// only ends in "database is locked" if something holds the lock abnormally.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

thread_local! {
    static WAITING_SINCE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// SQLite's own busy timeout sleeps longer and longer between tries (up to 100 ms), so a
/// run that commits a date every few milliseconds would keep the write lock from a waiter
/// until it ends. This handler retries every 200 µs: a waiting run gets in between two
/// dates of a long backfill. It gives up after BUSY_TIMEOUT.
fn wait_for_write_lock(attempt: i32) -> bool {
    let now = std::time::Instant::now();
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

/// Opens (creating if needed) and migrates the database.
///
/// WAL journal: readers (status, a grader's query) never block the writer and the writer
/// never blocks them. synchronous=FULL: in WAL mode each COMMIT is fsynced before it
/// returns, so a date recorded as done survives a power cut, not only a crash.
pub fn open(path: &Path) -> Result<Connection> {
    let open_err = |source| Error::Open {
        path: path.to_path_buf(),
        source,
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
    migrate(&mut conn, path)?;
    Ok(conn)
}

const HISTORY_TABLE: &str = "sqlrun_schema_history";

fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let runner = embedded::migrations::runner();
    let known = runner
        .get_migrations()
        .iter()
        .map(|m| i64::from(m.version()))
        .max()
        .unwrap_or(0);
    let current = |conn: &Connection| -> Result<i64> {
        let has_history: bool = conn
            .query_row(queries::OBJECT_SQL, [HISTORY_TABLE], |_| Ok(()))
            .optional()?
            .is_some();
        if !has_history {
            return Ok(0);
        }
        Ok(conn
            .query_row(queries::SCHEMA_VERSION, [], |r| r.get::<_, Option<i64>>(0))?
            .unwrap_or(0))
    };
    let found = current(conn)?;
    if found > known {
        return Err(Error::NewerSchema {
            path: path.to_path_buf(),
            found,
            known,
        });
    }
    if found == known {
        return Ok(());
    }
    // Processes started together on a new file all try to migrate it. All migrations go in
    // one transaction; a loser waits for the winner's write lock and finds the work done.
    let mut attempts = 0;
    loop {
        let mut runner = embedded::migrations::runner().set_grouped(true);
        let result = runner.set_migration_table_name(HISTORY_TABLE).run(conn);
        match result {
            Ok(_) => return Ok(()),
            Err(e) => {
                conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?
                    .rollback()?;
                if current(conn)? == known {
                    return Ok(());
                }
                attempts += 1;
                if attempts >= 5 {
                    return Err(e.into());
                }
            }
        }
    }
}

/// Refuses a template whose text changed while its version did not, as a migration tool
/// refuses an edited migration.
pub fn verify_templates(conn: &Connection, templates: &TemplateSet) -> Result<()> {
    let mut stmt = conn.prepare_cached(queries::TEMPLATE_VERSION)?;
    for file in &templates.files {
        let recorded: Option<(String, String)> = stmt
            .query_row(
                named_params! {":name": file.name, ":version": file.version},
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((checksum, first_used)) = recorded {
            if checksum != file.checksum {
                return Err(Error::EditedTemplate(Box::new(
                    crate::error::EditedTemplate {
                        file: file.path.clone(),
                        name: file.name.clone(),
                        version: file.version,
                        next: file.version + 1,
                        recorded: checksum[..12].to_string(),
                        found: file.checksum[..12].to_string(),
                        first_used,
                    },
                )));
            }
        }
    }
    Ok(())
}

/// Records the template versions a run uses (and each version's text the first time).
pub fn record_templates(tx: &Transaction, templates: &TemplateSet, run_id: i64) -> Result<()> {
    verify_templates(tx, templates)?;
    let mut version = tx.prepare_cached(queries::RECORD_TEMPLATE_VERSION)?;
    let mut used = tx.prepare_cached(queries::RECORD_RUN_TEMPLATE)?;
    for file in &templates.files {
        version.execute(named_params! {
            ":name": file.name, ":version": file.version, ":kind": file.kind.as_str(),
            ":checksum": file.checksum, ":body": file.source, ":run_id": run_id,
        })?;
        used.execute(named_params! {
            ":run_id": run_id, ":name": file.name, ":version": file.version, ":kind": file.kind.as_str(),
        })?;
    }
    Ok(())
}

/// A run's row, as `runs` and `apply --run` read it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunRow {
    pub run_id: i64,
    pub kind: String,
    pub interval_start: String,
    pub interval_end: String,
    pub requested_by: String,
    pub reason: Option<String>,
    pub status: String,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub only_filter: Option<String>,
    pub keep_going: bool,
    pub command: Option<String>,
    pub templates_from: Option<String>,
    pub sqlrun_version: Option<String>,
    pub host: Option<String>,
    pub pid: Option<i64>,
    pub pid_started: Option<String>,
    pub error: Option<String>,
}

pub fn run_by_id(conn: &Connection, run_id: i64) -> Result<Option<RunRow>> {
    Ok(conn
        .query_row(queries::RUN_BY_ID, named_params! {":run_id": run_id}, |r| {
            Ok(RunRow {
                run_id: r.get(0)?,
                kind: r.get(1)?,
                interval_start: r.get(2)?,
                interval_end: r.get(3)?,
                requested_by: r.get(4)?,
                reason: r.get(5)?,
                status: r.get(6)?,
                created_at: r.get(7)?,
                started_at: r.get(8)?,
                finished_at: r.get(9)?,
                only_filter: r.get(10)?,
                keep_going: r.get(11)?,
                command: r.get(12)?,
                templates_from: r.get(13)?,
                sqlrun_version: r.get(14)?,
                host: r.get(15)?,
                pid: r.get(16)?,
                pid_started: r.get(17)?,
                error: r.get(18)?,
            })
        })
        .optional()?)
}

/// A run id that must exist, for `runs ID`, `release ID`, `apply --run ID`.
pub fn existing_run(conn: &Connection, run_id: i64) -> Result<RunRow> {
    run_by_id(conn, run_id)?.ok_or_else(|| {
        Error::bad(format!(
            "there is no run {run_id} in this database; `sqlrun runs` lists the runs"
        ))
    })
}

/// A database error in a line: SQLite's message, and for a statement that does not
/// prepare, the text around where it stopped (not the whole rendered SQL).
pub fn describe(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError {
            msg, sql, offset, ..
        } => {
            let at = (*offset).max(0) as usize;
            let start = sql[..at.min(sql.len())]
                .char_indices()
                .rev()
                .nth(60)
                .map(|(i, _)| i)
                .unwrap_or(0);
            let end = sql[at.min(sql.len())..]
                .char_indices()
                .nth(40)
                .map(|(i, _)| at + i)
                .unwrap_or(sql.len());
            format!(
                "{msg}, near: {}",
                sql[start..end]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        other => other.to_string(),
    }
}

pub fn timestamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

pub fn now() -> String {
    timestamp(chrono::Utc::now())
}
