//! The state-store records every command shares: opening the database named by the
//! global flags, runs, and template versions.

pub mod queries;
pub mod requester;

use crate::db::{Db, DbErrorKind, Params, ReadOpen, Row, Sql, Target, Value};
use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
use crate::project::settings::Settings;
use crate::text::words::RunStatus;
use requester::Scheduler;

/// The database the global flags name, opened and migrated.
pub fn open(global: &Settings) -> Result<Db> {
    Ok(Db::open(&target(global)?)?)
}

/// The database, for a command that only reads (`status`, `runs`, `corrections`,
/// `render`, `templates`): opened read-only when its schema and the pipeline's objects
/// (if `pipeline` is given) are current, so that a copy on read-only media can be read;
/// otherwise opened, migrated and synced as every command does, and when that cannot
/// write, said so: run `sqlrun init` with write access.
pub fn open_to_read(target: &Target, pipeline: Option<&Pipeline>) -> Result<Db> {
    open_to_read_checking(target, pipeline, None)
}

/// `open_to_read`, checking that the statements of date `ds` prepare (`render --date`),
/// also when nothing needs writing; the read-only connection prepares them too.
pub fn open_to_read_checking(
    target: &Target,
    pipeline: Option<&Pipeline>,
    ds: Option<&str>,
) -> Result<Db> {
    let what = match Db::open_read_only(target) {
        Ok(ReadOpen::Current(mut db)) => match pipeline {
            Some(p) if !p.is_current(&mut db)? => {
                Some("its pipeline objects (tables, views) are missing or out of date")
            }
            Some(p) => {
                if let Some(ds) = ds {
                    p.check_date(&mut db, ds)?;
                }
                return Ok(*db);
            }
            None => return Ok(*db),
        },
        Ok(ReadOpen::NeedsWriting) => Some("it needs migrating to this sqlrun's schema"),
        Ok(ReadOpen::Absent) => None,
        // A read-only connection cannot do what a writer can (recover a WAL whose -shm
        // it may not write): the ordinary open tries, and says why if it cannot.
        Err(e) if e.db_kind().is_some_and(DbErrorKind::is_unwritable) => None,
        Err(e) => return Err(e.into()),
    };
    let needs_init = |e| needs_init(e, target, what);
    let mut db = Db::open(target).map_err(|e| needs_init(e.into()))?;
    if let Some(p) = pipeline {
        // What a sync has to say (a model added) is for the commands that write.
        p.sync_checking(&mut db, ds).map_err(needs_init)?;
    }
    Ok(db)
}

/// A database that cannot be written, met by a command that only reads and found it
/// needs writing first (`what`): run `sqlrun init` with write access. Other errors as
/// they are.
fn needs_init(e: Error, target: &Target, what: Option<&str>) -> Error {
    let (Error::Environment { kind, cause, .. }, Some(what)) = (&e, what) else {
        return e;
    };
    let why = match kind {
        DbErrorKind::ReadOnlyFolder => "its folder is read-only",
        DbErrorKind::Denied => "no privilege",
        DbErrorKind::ReadOnly => "it is read-only",
        _ => return e,
    };
    Error::NeedsInit {
        target: target.to_string(),
        what: what.into(),
        why: format!("{why}: {cause}"),
    }
}

pub fn target(global: &Settings) -> Result<Target> {
    Ok(Target::parse(&global.db, global.schema.as_deref())?)
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
