//! The per-date loop: each date of a run in ascending order, in its own transaction, on
//! the session of the worker that took it; how each ended is told to the observer as it
//! comes, on the calling thread.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

use super::in_doubt;
use super::outcome::{DateOutcome, Stop};
use super::pause;
use super::undo::UndoWork;
use super::workers::{self, Halt, Step};
use super::Progress;
use crate::dates::clock::Clock;
use crate::dates::interval::{fmt_date, Date};
use crate::db::{Commit, Db, DbError, DbErrorKind, Dialect, RowShape, TxKind, Value};
use crate::error::{failed_message, Failure};
use crate::error::{Error, Result};
use crate::pipeline::cascade::Cascade;
use crate::pipeline::templates::Bound;
use crate::pipeline::{ready, waits};
use crate::pipeline::{DatePart, DateUndo, DateVars, Owner, PartitionKey, Pipeline};
use crate::reservations::state::Selection;
use crate::reservations::take;
use crate::seals::verify;
use crate::store::{queries, timestamp};
use crate::text::words::{DateStatus, Severity};
use chrono_tz::Tz;

/// What every worker of a run shares.
pub struct Worker<'a> {
    pub pipeline: &'a Pipeline,
    pub run_id: i64,
    pub keep_going: bool,
    /// A new run's selection: a failed date its look back heals (before the dates asked
    /// for) does not stop the run, with or without `keep_going`.
    pub selection: Option<Selection>,
    pub signal: &'a AtomicI32,
    /// The database's clock, for a date whose transaction did not get to read it.
    pub clock: Clock,
    /// `sqlrun undo`: what each date puts back.
    pub undo: Option<&'a UndoWork>,
    /// What each date builds, when the pipeline has other grains or windows, and the
    /// zone its periods are in.
    pub cascade: Option<(&'a Cascade, Tz)>,
}

/// The run's dates, one worker per session (the run's own first), in ascending order.
/// How each date ended, in the order they came, and the stops in the order they came.
pub fn compute_dates(
    sessions: Vec<&mut Db>,
    work: &[String],
    worker: &Worker,
    progress: &mut dyn Progress,
) -> (Vec<DateOutcome>, Vec<Stop>) {
    progress.dates(work.len());
    let waits = match worker.cascade {
        Some((cascade, zone)) => places(work, &waits::waits(worker.pipeline, cascade, zone)),
        None => Vec::new(),
    };
    let ended = workers::each_date(
        sessions,
        (work, &waits),
        worker.signal,
        |db: &mut &mut Db, ds, halt: &Halt| worker.date(db, ds, halt),
        |date| progress.date_done(date),
    );
    progress.dates_done();
    ended
}

/// Per date of `work` (by place), the places of the earlier dates of `work` it waits for.
/// A date the run does not build (another run holds it) is nothing to wait for.
fn places(work: &[String], waits: &BTreeMap<Date, BTreeSet<Date>>) -> Vec<Vec<usize>> {
    let place: HashMap<&str, usize> = work
        .iter()
        .enumerate()
        .map(|(i, d)| (d.as_str(), i))
        .collect();
    let mut out = vec![Vec::new(); work.len()];
    for (date, before) in waits {
        let Some(&i) = place.get(fmt_date(*date).as_str()) else {
            continue;
        };
        out[i] = before
            .iter()
            .filter_map(|e| place.get(fmt_date(*e).as_str()).copied())
            .filter(|&e| e < i)
            .collect();
    }
    out
}

/// A date's transaction: committed with how the date ended, or the run stops at it (the
/// date not written: its reservation is not this run's, or the run's session is gone).
type Attempt = std::result::Result<Ended, Stop>;

/// How a date's transaction that committed ended.
struct Ended {
    status: DateStatus,
    /// Why it was not built (its sources are not ready), for a skipped date.
    reason: Option<String>,
    /// Its `warn` checks that found rows.
    warnings: Vec<Failure>,
}

impl Worker<'_> {
    /// Whether the run goes on after `ds` failed: `--keep-going`, or a date a look back
    /// heals (an old date that keeps failing must not keep the dates asked for from being
    /// computed every morning; the run still ends failed, exit 1).
    fn goes_on_after(&self, ds: &str) -> bool {
        self.keep_going || self.selection.as_ref().is_some_and(|s| s.looks_back_at(ds))
    }

    /// One date on this worker's session: its outcome, and whether the run stops there.
    fn date(&self, db: &mut Db, ds: &str, halt: &Halt) -> Step<DateOutcome> {
        let clock = Instant::now();
        let mut started = None;
        let result = compute_date(
            db,
            (self.pipeline, &self.clock, self.undo, self.cascade),
            self.run_id,
            ds,
            &mut started,
        );
        // The database's clock (on PostgreSQL the server's, never this runner's); as
        // measured when the run began only when the date's transaction did not even get
        // to read it.
        let started_at = started.unwrap_or_else(|| timestamp(self.clock.now()));
        let millis = clock.elapsed().as_millis() as u64;
        let (status, error, checks) = match self.ending(db, ds, &started_at, result, halt) {
            Ok(ending) => ending,
            Err(stop) => return Step::Last(stop.date_outcome(millis), stop),
        };
        let failed = status == DateStatus::Failed;
        let outcome = DateOutcome {
            ds: ds.to_string(),
            status,
            error,
            held_by: None,
            millis: Some(millis),
            checks,
        };
        if failed && !self.goes_on_after(ds) {
            Step::Last(Some(outcome), Stop::Failed { ds: ds.into() })
        } else {
            Step::Next(outcome)
        }
    }

    /// How a date's transaction ended: done (or not ready, with why), or failed
    /// (recorded, with its message), with the checks that found rows; or what stops the
    /// run there (the date rolled back, unrecorded).
    fn ending(
        &self,
        db: &mut Db,
        ds: &str,
        started_at: &str,
        result: Result<Attempt>,
        halt: &Halt,
    ) -> std::result::Result<(DateStatus, Option<String>, Vec<Failure>), Stop> {
        let ds = ds.to_string();
        match result {
            Ok(Ok(ended)) => Ok((ended.status, ended.reason, ended.warnings)),
            Ok(Err(stop)) => Err(stop),
            Err(Error::Database(error)) if error.kind.is_lost() => Err(Stop::Broken { ds, error }),
            Err(e)
                if e.db_kind() == Some(DbErrorKind::Interrupted)
                    && self.signal.load(Ordering::SeqCst) != 0 =>
            {
                let sig = self.signal.load(Ordering::SeqCst);
                Err(Stop::Signal {
                    sig,
                    ds,
                    during: true,
                })
            }
            Err(e) => {
                if !self.goes_on_after(&ds) {
                    // No other worker takes a date while the failure is recorded.
                    halt.now();
                }
                let (message, fault) =
                    failed_date(db, self.pipeline, self.run_id, &ds, started_at, &e);
                let checks = match e {
                    Error::ChecksFailed(failures) => failures,
                    _ => Vec::new(),
                };
                match fault {
                    Some(line) => Err(Stop::Fault { ds, line }),
                    None => Ok((DateStatus::Failed, Some(message), checks)),
                }
            }
        }
    }
}

/// What a date starts from, read just before its transaction: whether it is sealed, the
/// database's time, which its record gives as its start, and on a sealed date the models
/// its seal does not cover (replaced there, not corrected).
pub(crate) struct DateStart {
    pub sealed: bool,
    pub at: String,
    pub uncovered: Vec<String>,
}

pub(crate) fn date_start(db: &mut Db, pipeline: &Pipeline, ds: &str) -> Result<DateStart> {
    let row = db.one_as(&queries::IS_SEALED, &[(":ds", ds.into())])?;
    Ok(start_from(row, pipeline))
}

/// What a date starts from, as the database says just before its transaction or as
/// the first statement of it (queries/is_sealed.sql, own_date.sql): whether it is
/// sealed, the database's time, and the models its seal covers (comma separated).
#[derive(serde::Deserialize)]
struct StartColumns {
    sealed: bool,
    started_at: String,
    covered: Option<String>,
}

fn start_from(row: StartColumns, pipeline: &Pipeline) -> DateStart {
    let covered = row.covered.unwrap_or_default();
    let covered: Vec<&str> = covered.split(',').collect();
    let uncovered = match row.sealed {
        true => pipeline
            .computed_models()
            .iter()
            .filter(|m| !covered.contains(&m.name.as_str()))
            .map(|m| m.name.clone())
            .collect(),
        false => Vec::new(),
    };
    DateStart {
        sealed: row.sealed,
        at: row.started_at,
        uncovered,
    }
}

/// How a date ended in a run (queries/date_status_in_run.sql).
#[derive(serde::Deserialize)]
struct DateEnded {
    status: DateStatus,
}

/// The run that holds a date (queries/holder_of_date.sql).
#[derive(serde::Deserialize)]
struct Holder {
    run_id: i64,
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![
        RowShape::of::<StartColumns, _>(&queries::IS_SEALED, dialect),
        RowShape::of::<StartColumns, _>(&queries::OWN_DATE, dialect),
        RowShape::of::<DateEnded, _>(&queries::DATE_STATUS_IN_RUN, dialect),
        RowShape::of::<Holder, _>(&queries::HOLDER_OF_DATE, dialect),
    ]
}

/// One date, one transaction: the fencing (with what the date starts from: its seal and
/// the database's time, `started`), the partition(s), the record, the release.
///
/// Where the date's SQL is rendered depends on the backend. On SQLite, before the write
/// lock is taken (with its seal read just before), so that between two dates the lock is
/// free long enough for a waiting run (a regular run, a seal) to get in. On PostgreSQL,
/// inside the transaction, once the fencing statement has also said whether the date is
/// sealed (one round trip fewer; nobody waits for a date's transaction there). Whether the
/// date is sealed, and for which models, cannot change meanwhile: this run holds the date,
/// and `seal`, `seal --reissue` and `unseal` refuse held dates.
fn compute_date(
    db: &mut Db,
    (pipeline, clock, work, cascade): (&Pipeline, &Clock, Option<&UndoWork>, Cascaded),
    run_id: i64,
    ds: &str,
    started: &mut Option<String>,
) -> Result<Attempt> {
    let undo = work.map(|w| w.on(ds));
    let early = match db.dialect() {
        Dialect::Sqlite => {
            let start = date_start(db, pipeline, ds)?;
            *started = Some(start.at.clone());
            let parts = date_parts(db, pipeline, (cascade, work), ds, &start)?;
            Some(Rendered::of(
                pipeline,
                (run_id, undo.as_ref()),
                ds,
                start,
                parts,
            )?)
        }
        Dialect::Postgres => None,
    };
    let result = db.committing(TxKind::Date, |db| {
        let fenced_start = match fenced(db, pipeline, run_id, ds)? {
            Ok(start) => start,
            Err(stop) => return Ok(Err(stop)),
        };
        let rendered = match &early {
            Some(rendered) => rendered,
            None => {
                *started = Some(fenced_start.at.clone());
                let parts = date_parts(db, pipeline, (cascade, work), ds, &fenced_start)?;
                &Rendered::of(pipeline, (run_id, undo.as_ref()), ds, fenced_start, parts)?
            }
        };
        if let Some(of) = work.map(|w| w.of) {
            super::undo::still_holds(db, of, &rendered.restoring)?;
        }
        pause::reached(pause::Point::InDate);
        let ended = rendered.build(db, pipeline, run_id, ds)?;
        // Once more, last: a worker's date commits only while the run's own session lives
        // (a reclaim may have freed the run's other dates meanwhile); otherwise it rolls
        // back.
        if !db.run_alive(run_id)? {
            return Err(Error::Database(run_gone()));
        }
        Ok(Ok(ended))
    });
    match result {
        Ok(Commit::Done(done)) => {
            pause::reached(pause::Point::Committed);
            Ok(done)
        }
        Ok(Commit::InDoubt { error, reopened }) => {
            let started_at = started.clone().unwrap_or_else(|| timestamp(clock.now()));
            let date = (ds, started_at.as_str());
            let stop = in_doubt::settle(db, pipeline, run_id, date, (error, reopened));
            Ok(Err(stop))
        }
        Err(e) if e.db_kind() == Some(DbErrorKind::Conflict) => lost_or_failed(db, run_id, ds, e),
        Err(e) => Err(e),
    }
}

/// A run's cascade and the zone of its periods, if the pipeline needs one.
pub(super) type Cascaded<'a> = Option<(&'a Cascade, Tz)>;

/// The partitions date `ds` builds in a cascaded run, each with the seal of its own first
/// day (a month's is its 1st, read here; the date's own, `start`, was read already).
pub(super) fn date_parts(
    db: &mut Db,
    pipeline: &Pipeline,
    (cascade, undo): (Cascaded, Option<&UndoWork>),
    ds: &str,
    start: &DateStart,
) -> Result<Option<Vec<DatePart>>> {
    let Some((cascade, zone)) = cascade else {
        return Ok(None);
    };
    let day = crate::dates::interval::parse_date(ds, "date")?;
    let mut parts = Vec::new();
    for part in cascade.dates.get(&day).into_iter().flatten() {
        let model = &pipeline.models[part.model];
        let first = fmt_date(part.period.first_day(zone));
        let (sealed, uncovered) = match first == ds {
            true => (start.sealed, start.uncovered.clone()),
            false => {
                let own = date_start(db, pipeline, &first)?;
                (own.sealed, own.uncovered)
            }
        };
        let (from, to) = crate::pipeline::cascade::window(pipeline, model, part.period, zone);
        parts.push(DatePart {
            start: PartitionKey::of(part.period),
            end: PartitionKey::of(part.period.next()),
            window: (PartitionKey::of(from), PartitionKey::of(to.next())),
            provisional: part.period.ends(zone) > cascade.ended_by,
            sealed,
            uncovered,
            restored: undo.is_some_and(|u| u.restores(&model.name, &first)),
            model: model.name.clone(),
            ds: first,
        });
    }
    Ok(Some(parts))
}

/// A date's SQL, rendered for how it starts.
struct Rendered {
    start: DateStart,
    script: Bound,
    ready: Option<Bound>,
    /// An undo's partitions put back on the date (model, first day), which must still
    /// hold the undone run's rows when the date's transaction runs.
    restoring: Vec<(String, String)>,
}

impl Rendered {
    fn of(
        pipeline: &Pipeline,
        (run_id, undo): (i64, Option<&DateUndo>),
        ds: &str,
        start: DateStart,
        parts: Option<Vec<DatePart>>,
    ) -> Result<Rendered> {
        let script = pipeline.bind_date(&DateVars {
            ds,
            run_id,
            sealed: start.sealed,
            uncovered: &start.uncovered,
            started_at: &start.at,
            lease_seconds: take::lease_seconds(),
            undo,
            parts: parts.as_deref(),
        })?;
        let ready = pipeline.bind_ready(ds)?;
        let restoring = match (parts, undo) {
            (Some(parts), _) => parts
                .into_iter()
                .filter(|p| p.restored)
                .map(|p| (p.model, p.ds))
                .collect(),
            (None, Some(u)) => u.restored.iter().map(|m| (m.clone(), ds.into())).collect(),
            (None, None) => Vec::new(),
        };
        Ok(Rendered {
            start,
            script,
            ready,
            restoring,
        })
    }

    /// Its work (Built::build).
    fn build(&self, db: &mut Db, pipeline: &Pipeline, run_id: i64, ds: &str) -> Result<Ended> {
        let built = Built {
            pipeline,
            run_id,
            date: (ds, self.start.sealed),
            started_at: &self.start.at,
        };
        built.build(db, &self.script, self.ready.as_ref())
    }
}

/// Fencing: a date is written only while its reservation is this run's (nothing is written
/// otherwise, so the empty transaction may commit), and a worker of `--jobs`, which writes
/// through a session of its own, only while the run's own session lives (once it is gone,
/// the next run may reclaim the dates). What the date starts from, or the stop, if the
/// date may not be written.
fn fenced(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    ds: &str,
) -> Result<std::result::Result<DateStart, Stop>> {
    let own = [(":ds", Value::from(ds)), (":run_id", run_id.into())];
    let Some(row) = db.row_as(&queries::OWN_DATE, &own)? else {
        let holder = holder_now(db, ds)?;
        return Ok(Err(Stop::Lost {
            ds: ds.into(),
            holder,
        }));
    };
    if !db.run_alive(run_id)? {
        return Ok(Err(Stop::Broken {
            ds: ds.into(),
            error: run_gone(),
        }));
    }
    Ok(Ok(start_from(row, pipeline)))
}

/// What one date's work inside its transaction needs.
struct Built<'a> {
    pipeline: &'a Pipeline,
    run_id: i64,
    /// The date, and whether it is sealed.
    date: (&'a str, bool),
    started_at: &'a str,
}

impl Built<'_> {
    /// The date's work, inside its transaction: skipped and recorded when its sources are
    /// not ready; else its script (models, checks' counts, record), then what its checks
    /// found. A failing error check ends it with `Error::ChecksFailed`: it rolls back.
    fn build(&self, db: &mut Db, script: &Bound, ready: Option<&Bound>) -> Result<Ended> {
        let (pipeline, run_id, (ds, sealed)) = (self.pipeline, self.run_id, self.date);
        if let Some(reason) = ready::not_ready(db, pipeline, ready)? {
            record_not_ready(db, pipeline, run_id, (ds, self.started_at), &reason)?;
            return Ok(Ended {
                status: DateStatus::Skipped,
                reason: Some(reason),
                warnings: Vec::new(),
            });
        }
        let models: Vec<&str> = pipeline
            .computed_models()
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        let kept = db.run_script_pipelined(&script.sql, &script.params, &models)?;
        let failures = verify::counted_failures(db, pipeline, &kept, self.date, run_id)?;
        if failures.iter().any(|f| f.severity == Severity::Error) {
            return Err(Error::ChecksFailed(failures));
        }
        record_checks(db, pipeline, run_id, ds, &failures)?;
        // record_date.sql decided: success, or for a sealed date corrected / unchanged.
        let status = match sealed {
            true => recorded_status(db, run_id, ds)?,
            false => DateStatus::Success,
        };
        Ok(Ended {
            status,
            reason: None,
            warnings: failures,
        })
    }
}

/// A date not built because its sources are not ready: recorded skipped, with why, and
/// released, in the date's transaction.
fn record_not_ready(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    (ds, started_at): (&str, &str),
    reason: &str,
) -> Result<()> {
    let script = pipeline.bind_system(
        "record_not_ready",
        minijinja::context! {
            run_id => run_id, ds => ds, started_at => started_at, reason => reason,
            lease_seconds => take::lease_seconds(),
        },
    )?;
    Ok(db.run_script(&script.sql, &script.params)?)
}

/// The checks that found rows on a date, with their first rows (none: nothing written).
fn record_checks(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    ds: &str,
    failures: &[Failure],
) -> Result<()> {
    if failures.is_empty() {
        return Ok(());
    }
    let listed: Vec<minijinja::Value> = failures
        .iter()
        .map(|f| {
            minijinja::context! {
                check => &f.check, model => &f.model, severity => f.severity.as_str(),
                version => f.version, failing_rows => f.failing_rows, sample => f.sample_json(),
            }
        })
        .collect();
    let script = pipeline.bind_system(
        "record_checks",
        minijinja::context! { run_id => run_id, ds => ds, failures => listed },
    )?;
    Ok(db.run_script(&script.sql, &script.params)?)
}

/// A sealed date's status as record_date.sql recorded it: corrected or unchanged.
fn recorded_status(db: &mut Db, run_id: i64, ds: &str) -> Result<DateStatus> {
    let params = [(":run_id", run_id.into()), (":ds", ds.into())];
    Ok(db
        .one_as::<DateEnded, _>(&queries::DATE_STATUS_IN_RUN, &params)?
        .status)
}

/// How `ds` ended in the run, as its record says; None: it has no record.
pub(super) fn status_in_run(db: &mut Db, run_id: i64, ds: &str) -> Result<Option<DateStatus>> {
    let params = [(":run_id", run_id.into()), (":ds", ds.into())];
    let ended: Option<DateEnded> = db.row_as(&queries::DATE_STATUS_IN_RUN, &params)?;
    Ok(ended.map(|e| e.status))
}

/// A worker of a run whose own session (the one that holds the run's lock) is gone.
pub(super) const RUN_GONE: &str = "this run's own session, which holds its lock, is gone";

fn run_gone() -> DbError {
    DbError {
        kind: DbErrorKind::ConnectionLost,
        message: RUN_GONE.into(),
        context: None,
        at: None,
    }
}

/// A date whose transaction met a row changed after its snapshot began (PostgreSQL): its
/// reservation was released or taken meanwhile (the date is then another's, not failed),
/// or, if it is still this run's, the date failed with that error.
fn lost_or_failed(db: &mut Db, run_id: i64, ds: &str, e: Error) -> Result<Attempt> {
    match holder_now(db, ds)? {
        Some(h) if h == run_id => Err(e),
        holder => Ok(Err(Stop::Lost {
            ds: ds.into(),
            holder,
        })),
    }
}

/// The run that holds `ds` now, if any (read without a lock).
fn holder_now(db: &mut Db, ds: &str) -> Result<Option<i64>> {
    let holder: Option<Holder> = db.row_as(&queries::HOLDER_OF_DATE, &[(":ds", ds.into())])?;
    Ok(holder.map(|h| h.run_id))
}

/// A date that failed, recorded if the database still takes it (a full disk may not).
/// Its message, and the fault that stops the run, if any: a full disk, a read-only file,
/// a lock held past the wait (the next date would meet it too), or a failure that cannot
/// even be recorded.
fn failed_date(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    ds: &str,
    started_at: &str,
    e: &Error,
) -> (String, Option<String>) {
    let (message, model) = failure_message(pipeline, run_id, e);
    let failures = match e {
        Error::ChecksFailed(failures) => failures.as_slice(),
        _ => &[],
    };
    let recorded = record_failure(
        db,
        pipeline,
        run_id,
        (ds, started_at),
        (&message, model),
        failures,
    );
    let fault = match (e, recorded) {
        (Error::Environment { .. }, _) => Some(message.clone()),
        (_, Err(r)) => Some(format!("{message}; recording that failed too: {r}")),
        (_, Ok(())) => None,
    };
    (message, fault)
}

/// A failed date's message, naming the model (or check) whose statement failed and its
/// file, and that model.
pub(super) fn failure_message<'p>(
    pipeline: &'p Pipeline,
    run_id: i64,
    e: &Error,
) -> (String, Option<&'p str>) {
    match e {
        Error::Database(inner) => {
            let context = inner.context.as_deref().unwrap_or_default();
            match pipeline.owner(context) {
                Some(Owner::Model(model)) => (
                    format!("model {} ({}): {}", model.name, model.file, inner.message),
                    Some(model.name.as_str()),
                ),
                Some(Owner::Check(check)) => (
                    format!("check {} ({}): {}", check.name, check.file, inner.message),
                    Some(check.model.as_str()),
                ),
                None if context == "ready" => (
                    format!(
                        "a model's `-- ready:` condition could not run (`sqlrun render --date D` prints it first): {}",
                        inner.message
                    ),
                    None,
                ),
                None if context == "checks" => (
                    format!(
                        "a check of the date could not run (`sqlrun render --date D CHECK` prints each): {}",
                        inner.message
                    ),
                    None,
                ),
                None => (inner.message.clone(), None),
            }
        }
        Error::ChecksFailed(failures) => (
            failed_message(failures, Some(run_id)),
            failures
                .iter()
                .find(|f| f.severity == Severity::Error)
                .and_then(|f| pipeline.model(&f.model))
                .map(|m| m.name.as_str()),
        ),
        other => (other.to_string(), None),
    }
}

/// A date that failed, as its record says it: the date and when it started, the message
/// and the model whose statement failed, if one did, and the checks that found rows.
pub(super) fn record_failure(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    (ds, started_at): (&str, &str),
    (message, model): (&str, Option<&str>),
    failures: &[Failure],
) -> Result<()> {
    let script = pipeline.bind_system(
        "record_failure",
        minijinja::context! {
            run_id => run_id, ds => ds, started_at => started_at, error => message,
            model => model.map(|m| format!("models/{m}")),
            lease_seconds => take::lease_seconds(),
        },
    )?;
    // READ COMMITTED on PostgreSQL (no snapshot from before a release beside it that
    // deletes the date's reservation).
    db.transaction(TxKind::Plain, |db| {
        db.run_script(&script.sql, &script.params)?;
        record_checks(db, pipeline, run_id, ds, failures)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn d(s: &str) -> Date {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn a_date_waits_only_for_earlier_dates_the_run_builds() {
        let work: Vec<String> = ["2026-02-01", "2026-02-03", "2026-02-04"]
            .map(String::from)
            .into();
        let waits = BTreeMap::from([
            // 2026-02-02 is another run's: nothing to wait for.
            (
                d("2026-02-04"),
                BTreeSet::from([d("2026-02-01"), d("2026-02-02"), d("2026-02-03")]),
            ),
            (d("2026-02-02"), BTreeSet::from([d("2026-02-01")])),
        ]);
        assert_eq!(places(&work, &waits), [vec![], vec![], vec![0, 1]]);
    }
}
