//! The state store's records every command shares: runs, their times and who asked; and
//! sqlrun's own statements (queries) that read and write them.

pub mod queries;
pub mod requester;

use crate::db::{Db, Dialect, Params, Row, RowShape, Sql, Value};
use crate::error::{Error, Result};
use crate::text::words::RunStatus;
use requester::Scheduler;

/// A run's row, as `runs` and `apply --run` read it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunRow {
    pub run_id: i64,
    pub kind: String,
    pub interval_start: String,
    pub interval_end: String,
    pub requested_by: String,
    pub reason: Option<String>,
    pub status: RunStatus,
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
    pub dialect: Option<String>,
    /// A run's `--lookback` days (its interval starts that many days before the first date
    /// asked for).
    pub lookback: Option<i64>,
    /// The scheduler that started it (Airflow), and its ids for the run.
    pub scheduler: Option<Scheduler>,
    /// How many dates it computed at once (`apply --jobs`); None before it started.
    pub jobs: Option<i64>,
}

/// `queries/run_by_id.sql`'s row: a column each.
#[derive(serde::Deserialize)]
struct RunColumns {
    run_id: i64,
    kind: String,
    interval_start: String,
    interval_end: String,
    requested_by: String,
    reason: Option<String>,
    status: RunStatus,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
    only_filter: Option<String>,
    keep_going: bool,
    command: Option<String>,
    templates_from: Option<String>,
    sqlrun_version: Option<String>,
    host: Option<String>,
    pid: Option<i64>,
    pid_started: Option<String>,
    error: Option<String>,
    dialect: Option<String>,
    lookback: Option<i64>,
    scheduler: Option<String>,
    scheduler_job: Option<String>,
    scheduler_task: Option<String>,
    scheduler_run: Option<String>,
    scheduler_try: Option<i64>,
    jobs: Option<i64>,
}

impl From<RunColumns> for RunRow {
    fn from(r: RunColumns) -> RunRow {
        let scheduler = r.scheduler.map(|name| Scheduler {
            name,
            job: r.scheduler_job,
            task: r.scheduler_task,
            run: r.scheduler_run,
            attempt: r.scheduler_try,
        });
        RunRow {
            run_id: r.run_id,
            kind: r.kind,
            interval_start: r.interval_start,
            interval_end: r.interval_end,
            requested_by: r.requested_by,
            reason: r.reason,
            status: r.status,
            created_at: r.created_at,
            started_at: r.started_at,
            finished_at: r.finished_at,
            only_filter: r.only_filter,
            keep_going: r.keep_going,
            command: r.command,
            templates_from: r.templates_from,
            sqlrun_version: r.sqlrun_version,
            host: r.host,
            pid: r.pid,
            pid_started: r.pid_started,
            error: r.error,
            dialect: r.dialect,
            lookback: r.lookback,
            scheduler,
            jobs: r.jobs,
        }
    }
}

pub fn run_by_id(db: &mut Db, run_id: i64) -> Result<Option<RunRow>> {
    let row = db.row_as::<RunColumns, _>(&queries::RUN_BY_ID, &[(":run_id", run_id.into())])?;
    Ok(row.map(RunRow::from))
}

/// A run id that must exist, for `runs ID`, `release ID`, `apply --run ID`.
pub fn existing_run(db: &mut Db, run_id: i64) -> Result<RunRow> {
    run_by_id(db, run_id)?.ok_or_else(|| {
        Error::bad(format!(
            "there is no run {run_id} in this database; `sqlrun runs` lists the runs"
        ))
    })
}

/// Inserts a run and returns its id.
/// A new run; every run records the scheduler that started it, if one did.
pub fn insert_run(db: &mut Db, params: &[(&str, Value)]) -> Result<i64> {
    let scheduler = Scheduler::from_process();
    let mut params = params.to_vec();
    params.extend(Scheduler::params(scheduler.as_ref()));
    Ok(db
        .one_as::<NewRun, _>(&queries::INSERT_RUN, &params)?
        .run_id)
}

/// The id `queries/insert_run.sql` returns.
#[derive(serde::Deserialize)]
struct NewRun {
    run_id: i64,
}

/// The command line as it was given, for the audit trail, without the password of a
/// PostgreSQL URL.
pub fn command_line() -> String {
    std::env::args()
        .map(|arg| crate::db::redact_url(&arg))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn timestamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// The rows of a query as JSON objects keyed by column: what `--json` prints of them.
pub fn rows_as_json<S: Sql + ?Sized>(
    db: &mut Db,
    sql: &S,
    params: Params,
) -> Result<Vec<serde_json::Map<String, serde_json::Value>>> {
    Ok(db.rows(sql, params)?.iter().map(Row::to_json).collect())
}

/// A column of a table or view (`queries/*/column_types.sql`): its name, the kind of
/// value it holds (none: one sqlrun does not tell apart), whether it takes NULL and
/// whether it fills itself when left out.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct TableColumn {
    pub name: String,
    pub kind: Option<String>,
    pub not_null: bool,
    pub has_default: bool,
}

/// The columns of `table` in order (none: there is no such table or view).
pub fn table_columns(db: &mut Db, table: &str) -> Result<Vec<TableColumn>> {
    db.rows_as(&queries::COLUMN_TYPES, &[(":table", table.into())])
        .map_err(Error::from)
}

/// The rows this module reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![
        RowShape::of::<RunColumns, _>(&queries::RUN_BY_ID, dialect),
        RowShape::of::<NewRun, _>(&queries::INSERT_RUN, dialect),
        RowShape::of::<TableColumn, _>(&queries::COLUMN_TYPES, dialect),
    ]
}
