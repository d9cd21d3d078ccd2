//! A date whose COMMIT failed on SQLite. Such a COMMIT is in doubt: SQLite writes the
//! transaction's pages to the WAL file and then syncs it, and when the write or the sync
//! fails (a disk going bad, a file system turning read-only) the pages may be in the file
//! or not; the next connection to open it decides by what it finds there. So the date is
//! neither reported nor recorded until the database has been read again through a new
//! connection (`Db::committing` opened one, after closing the old): what that connection
//! finds is what the date is, in the output, in `--json` and in the state store. The run
//! stops at that date either way: the fault is still there for the next one.

use super::each_date::{record_failure, status_in_run};
use super::outcome::{committed, committed_before, DateOutcome, Found, Stop};
use crate::dates::interval::Interval;
use crate::db::{self, Db};
use crate::error::{Error, InDoubtDate, RunStopped};
use crate::pipeline::Pipeline;
use crate::text::words::DateStatus;

/// The stop at `ds`, whose COMMIT failed with `error` (the connection opened again as
/// `reopened` says): the date as the database holds it now. One that did not land is
/// recorded failed, if the database still takes it.
pub(super) fn settle(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    (ds, started_at): (&str, &str),
    (error, reopened): (db::Error, db::Result<()>),
) -> Stop {
    let line = Error::from(error).to_string();
    let read = reopened
        .map_err(Error::from)
        .and_then(|()| status_in_run(db, run_id, ds));
    let found = match read {
        Ok(Some(status)) => Found::Committed(status),
        Ok(None) => rolled_back(db, pipeline, run_id, (ds, started_at), &line),
        Err(e) => Found::Unknown(e.to_string()),
    };
    Stop::InDoubt {
        ds: ds.into(),
        line,
        found,
    }
}

/// A date that did not land, recorded failed with the fault, or why it could not be.
fn rolled_back(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    date: (&str, &str),
    line: &str,
) -> Found {
    let error = format!("its COMMIT failed and it did not land (rolled back): {line}");
    let recorded = record_failure(db, pipeline, run_id, date, (&error, None), &[]);
    // The record's own COMMIT may have failed and still landed: its row tells.
    let unrecorded = match recorded {
        Ok(()) => None,
        Err(e) => match status_in_run(db, run_id, date.0) {
            Ok(Some(DateStatus::Failed)) => None,
            _ => Some(e.to_string()),
        },
    };
    Found::RolledBack { error, unrecorded }
}

/// The error a run that stopped at an in-doubt date ends with: the date as found, the
/// fault, what committed before it, whether the run's end is recorded (`recorded`: why
/// not), and what to run next.
pub(super) fn stopped(
    run_id: i64,
    interval: Interval,
    (ds, line, found): (&str, &str, &Found),
    dates: &[DateOutcome],
    recorded: Result<(), String>,
) -> Error {
    let end = match &recorded {
        Ok(()) => "the run is recorded failed".to_string(),
        Err(why) => format!(
            "the run's end could not be recorded ({}): the next run finds this process gone, \
             records the run interrupted and takes back its dates",
            or_same(why, line)
        ),
    };
    let message = format!(
        "run {run_id} stopped at {ds}, {}. The fault: {line}; {}; {end}; once the fault is \
         fixed, `sqlrun apply --interval {interval}` again finishes the work (`--only \
         missing`: just the dates never computed)",
        as_found(ds, line, found),
        committed_before(dates, ds),
    );
    let status = match found {
        Found::Committed(status) => Some(*status),
        Found::RolledBack {
            unrecorded: None, ..
        } => Some(DateStatus::Failed),
        _ => None,
    };
    Error::RunStopped(Box::new(RunStopped {
        message,
        run_id,
        committed: committed(dates),
        in_doubt: Some(InDoubtDate {
            ds: ds.into(),
            found: found.word(),
            status,
            run_recorded: recorded.is_ok(),
        }),
    }))
}

/// Why something more could not be done, unless it is the fault already said.
fn or_same<'a>(why: &'a str, line: &str) -> &'a str {
    match why == line {
        true => "the same fault",
        false => why,
    }
}

/// The date as a new connection found it (after the fault `line`), for the run's
/// message.
fn as_found(ds: &str, line: &str, found: &Found) -> String {
    let read = "read again through a new connection";
    match found {
        Found::Committed(status) => format!(
            "whose COMMIT failed but landed: {read}, the date is committed ({status}) and \
             stays so"
        ),
        Found::RolledBack {
            unrecorded: None, ..
        } => format!(
            "which rolled back: its COMMIT failed and, {read}, the date is not there \
             (recorded failed)"
        ),
        Found::RolledBack {
            unrecorded: Some(why),
            ..
        } => format!(
            "which rolled back: its COMMIT failed and, {read}, the date is not there; its \
             failure could not be recorded ({})",
            or_same(why, line)
        ),
        Found::Unknown(why) => format!(
            "whose COMMIT failed; whether it landed is not known, the database could not be \
             read again ({why}): once it can, `sqlrun status --interval {ds}` tells"
        ),
    }
}
