//! The one way out of a run that has begun, whatever stopped it: the stops its workers
//! gave are read once into its status, exit code and why; whatever it still holds is
//! released and its end recorded in one transaction (through its own session, unless that
//! is the one that broke); a run that stopped short ends with `Error::RunStopped`.

use super::each_date::RUN_GONE;
use super::in_doubt;
use super::outcome::Stop;
use super::outcome::{committed, committed_before, run_end, with_skips, DateOutcome, RunOutcome};
use super::signals::SignalGuard;
use super::start::Begun;
use crate::dates::interval::Interval;
use crate::db::{Db, DbError, DbErrorKind, TxKind, Value};
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::pipeline::Pipeline;
use crate::reservations::state::Skip;
use crate::reservations::take;
use crate::store;
use crate::store::queries;
use crate::text::words::RunStatus;

/// What a run's dates left, for its end.
pub struct Ran {
    pub begun: Begun,
    pub interval: Interval,
    pub skips: Vec<Skip>,
    /// The dates it computed (or failed), in the order they came.
    pub dates: Vec<DateOutcome>,
    /// Why it stopped taking dates, in the order the stops came (none: it took them all).
    pub stops: Vec<Stop>,
}

/// The end of a run. `signal` is dropped once its end is recorded: from then on a signal
/// ends the process as by default.
pub fn finish(db: &mut Db, pipeline: &Pipeline, ran: Ran, signal: SignalGuard) -> RunOutcome {
    let run_id = ran.begun.run_id;
    let (mut ended, mut exit) = run_end(&ran.dates, &ran.stops, !ran.skips.is_empty());
    let stopped = ran.stops.iter().find_map(Stop::why);
    // A broken connection first, then a fault (or a COMMIT in doubt, which is one): each
    // ends the run with an error.
    let short = ran
        .stops
        .iter()
        .find(|s| matches!(s, Stop::Broken { .. }))
        .or_else(|| {
            let fault = |s: &&Stop| matches!(s, Stop::Fault { .. } | Stop::InDoubt { .. });
            ran.stops.iter().find(fault)
        });
    let (mut status, mut released) = (ended, 0);
    let error = match short {
        Some(stop) => {
            (ended, exit) = (RunStatus::Failed, Exit::Failed);
            Some(stopped_short(db, pipeline, &ran, stop))
        }
        None => match record_end(db, pipeline, run_id, ended, stopped.as_deref()) {
            Ok(freed) => {
                drop(signal);
                released = freed;
                // As the database has it: a run released (or found dead) meanwhile keeps
                // that status.
                status = store::existing_run(db, run_id).map_or(ended, |r| r.status);
                None
            }
            Err(e) => {
                let message = format!(
                    "run {run_id}: its dates are done ({} attempted; `sqlrun runs {run_id}` \
                     lists them), but recording the run's end failed: {e}",
                    ran.dates.len()
                );
                Some(Error::stopped(run_id, message, committed(&ran.dates)))
            }
        },
    };
    RunOutcome {
        run_id,
        kind: ran.begun.kind,
        interval: ran.interval,
        dates: with_skips(&ran.skips, ran.dates),
        skips: ran.skips,
        reclaimed: ran.begun.reclaimed,
        status,
        ended,
        exit,
        stopped,
        released,
        error,
    }
}

/// A run stopped by a broken connection or a fault of its surroundings: recorded as
/// failed if its own session still can, and the error it ends with.
fn stopped_short(db: &mut Db, pipeline: &Pipeline, ran: &Ran, stop: &Stop) -> Error {
    let run_id = ran.begun.run_id;
    match stop {
        Stop::Broken { ds, error } => {
            // Nothing more is written through a connection that broke. The run's own
            // session, unless it is the one that broke, records the end and releases the
            // rest; otherwise the next run finds the run's session gone and reclaims them.
            let note =
                format!("stopped: lost the connection to the database during {ds} ({error})");
            let ended = record_end(db, pipeline, run_id, RunStatus::Failed, Some(&note));
            let error = with_server_reason(error, ended.as_ref().err());
            connection_lost(run_id, ds, &ran.dates, &error, ended.is_ok())
        }
        Stop::Fault { ds, line } => {
            let note = format!("stopped at {ds}: {line}");
            let _ = record_end(db, pipeline, run_id, RunStatus::Failed, Some(&note));
            stopped_by_fault(run_id, ran.interval, ds, line, &ran.dates)
        }
        Stop::InDoubt { ds, line, found } => {
            let said = found.said();
            let note = format!("stopped at {ds}: its COMMIT failed ({line}); {said}");
            let recorded = end_recorded(db, pipeline, run_id, &note);
            in_doubt::stopped(
                run_id,
                ran.interval,
                (ds, line, found),
                &ran.dates,
                recorded,
            )
        }
        _ => unreachable!("only a broken connection or a fault stops a run short"),
    }
}

/// A worker sees only that the run's own session is gone; the server told that session
/// why it ended it (a timeout, an administrator, a shutdown), and the session says so when
/// it is used again (here: to record the run's end). The worker's error with that reason.
fn with_server_reason(error: &DbError, own: Option<&Error>) -> DbError {
    match own {
        Some(Error::Database(own))
            if error.message == RUN_GONE && own.kind == DbErrorKind::ConnectionLost =>
        {
            DbError {
                message: format!("{RUN_GONE}: {}", own.message),
                ..error.clone()
            }
        }
        _ => error.clone(),
    }
}

/// A run's end recorded failed (`note`: why it stopped), or why it could not be. A record
/// whose own COMMIT failed (SQLite) may still have landed: the run's row, read again
/// through the connection opened after it, tells.
fn end_recorded(db: &mut Db, pipeline: &Pipeline, run_id: i64, note: &str) -> Result<(), String> {
    let Err(e) = record_end(db, pipeline, run_id, RunStatus::Failed, Some(note)) else {
        return Ok(());
    };
    match store::existing_run(db, run_id) {
        Ok(run) if run.status == RunStatus::Failed => Ok(()),
        _ => Err(e.to_string()),
    }
}

/// The end of a run, in one transaction: whatever it still holds (after a stop, a failure,
/// a signal) is released and recorded, and its status is set. Returns how many dates it
/// released.
fn record_end(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    status: RunStatus,
    stopped: Option<&str>,
) -> Result<usize> {
    db.transaction(TxKind::Exclusive, |db| {
        let why = stopped.unwrap_or("run ended");
        let released = take::release(db, pipeline, run_id, why, false)?.freed.len();
        db.execute(
            &queries::FINISH_RUN,
            &[
                (":run_id", run_id.into()),
                (":status", status.as_str().into()),
                (":error", Value::opt_text(stopped)),
            ],
        )?;
        Ok(released)
    })
}

/// A run stopped at `ds` by a fault of its surroundings, on one line: the date (rolled
/// back), the fault and its fix, how many dates committed before it, and how to finish.
fn stopped_by_fault(
    run_id: i64,
    interval: Interval,
    ds: &str,
    line: &str,
    dates: &[DateOutcome],
) -> Error {
    let before = committed_before(dates, ds);
    let message = format!(
        "run {run_id} stopped at {ds}, which rolled back: {line}; {before}; once that is \
         fixed, `sqlrun apply --interval {interval}` again finishes the work (`--only missing`: \
         just the dates never computed)"
    );
    Error::stopped(run_id, message, committed(dates))
}

/// A run whose connection broke stops: nothing more can be written through it, and it
/// never reconnects. `ended`: the run's own session still recorded its end and released
/// its other dates (a worker's connection broke); otherwise they are reclaimed once the
/// server ends its session.
fn connection_lost(
    run_id: i64,
    ds: &str,
    dates: &[DateOutcome],
    e: &DbError,
    ended: bool,
) -> Error {
    let done = committed(dates).len();
    let this_date = if e.kind == DbErrorKind::CommitUnknown {
        format!("it broke while {ds} committed, so {ds} may or may not have landed (`sqlrun status --interval {ds}` tells)")
    } else {
        format!("{ds} rolled back")
    };
    let rest = if ended {
        "its own session released the dates it did not compute"
    } else {
        "once the server has ended its session the next run reclaims its dates"
    };
    let message = format!(
        "lost the connection to the database during {ds} ({}); {this_date}; the {done} date{} \
         it committed stay committed. This run writes nothing more; {rest} (`sqlrun apply \
         --interval ... --only missing` finishes the work)",
        e.message,
        if done == 1 { "" } else { "s" }
    );
    Error::stopped(run_id, message, committed(dates))
}
