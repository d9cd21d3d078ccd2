//! The state store's records every command shares: runs, their times and who asked; and
//! sqlrun's own statements (queries) that read and write them.

pub mod queries;
pub mod requester;

use crate::db::{Db, Params, Row, Sql, Value};
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

impl RunRow {
    fn from_row(r: &Row) -> Result<RunRow> {
        Ok(RunRow {
            run_id: r.i64(0)?,
            kind: r.text(1)?,
            interval_start: r.text(2)?,
            interval_end: r.text(3)?,
            requested_by: r.text(4)?,
            reason: r.opt_text(5)?,
            status: {
                let text = r.text(6)?;
                RunStatus::parse(&text).ok_or_else(|| {
                    Error::bad(format!(
                        "run {}: unknown status `{text}` in runs",
                        r.i64(0).unwrap_or(0)
                    ))
                })?
            },
            created_at: r.text(7)?,
            started_at: r.opt_text(8)?,
            finished_at: r.opt_text(9)?,
            only_filter: r.opt_text(10)?,
            keep_going: r.bool(11)?,
            command: r.opt_text(12)?,
            templates_from: r.opt_text(13)?,
            sqlrun_version: r.opt_text(14)?,
            host: r.opt_text(15)?,
            pid: r.opt_i64(16)?,
            pid_started: r.opt_text(17)?,
            error: r.opt_text(18)?,
            dialect: r.opt_text(19)?,
            lookback: r.opt_i64(20)?,
            scheduler: r
                .opt_text(21)?
                .map(|name| -> Result<Scheduler> {
                    Ok(Scheduler {
                        name,
                        job: r.opt_text(22)?,
                        task: r.opt_text(23)?,
                        run: r.opt_text(24)?,
                        attempt: r.opt_i64(25)?,
                    })
                })
                .transpose()?,
            jobs: r.opt_i64(26)?,
        })
    }
}

pub fn run_by_id(db: &mut Db, run_id: i64) -> Result<Option<RunRow>> {
    db.row(&queries::RUN_BY_ID, &[(":run_id", run_id.into())])?
        .map(|r| RunRow::from_row(&r))
        .transpose()
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
    Ok(db.one(&queries::INSERT_RUN, &params)?.i64(0)?)
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

pub fn now() -> String {
    timestamp(chrono::Utc::now())
}

/// The rows of a query as JSON objects keyed by column: what `--json` prints of them.
pub fn rows_as_json<S: Sql + ?Sized>(
    db: &mut Db,
    sql: &S,
    params: Params,
) -> Result<Vec<serde_json::Map<String, serde_json::Value>>> {
    Ok(db
        .rows(sql, params)?
        .iter()
        .map(|row| {
            row.names()
                .iter()
                .enumerate()
                .map(|(i, name)| (name.clone(), row.value(i).to_json()))
                .collect()
        })
        .collect())
}
