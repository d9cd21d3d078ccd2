//! How a date ended and how a run ended: one type for each (`DateOutcome`, `RunOutcome`),
//! and `Stop`, the cause a worker gives when the run stops at a date.
//!
//! Before, seven types said it: `RunEnd` (status and exit), `Outcomes` (the loop's dates
//! and the stops sorted into fields), `DateResult` (a date's transaction), `Failure` (a
//! failure's record), `Stop`, `Step` and `Error::RunStopped`. What was the same is folded:
//! a date's transaction that does not commit its writes ends in a `Stop` (the old
//! `DateResult::Lost` and `RunGone` were `Stop::Lost` and `Stop::Broken` by another name);
//! the stops are read once, in `finish`, into the run's status, exit, why and error (the
//! old `Outcomes` and `RunEnd`); a failure's record is the arguments of `record_failure`.
//! `Step` stays the worker pool's instruction (take the next date, or stop), not an
//! ending; `Error::RunStopped` stays the error value a run that stopped short ends with.

use serde::Serialize;

use crate::dates::interval::Interval;
use crate::db::DbError;
use crate::error::Failure;
use crate::error::{CommittedDate, Error};
use crate::exit::Exit;
use crate::reservations::beyond::BeyondWindow;
use crate::reservations::state::{Reclaim, Skip};
use crate::text::words::{DateStatus, RunKind, RunStatus};

/// How one date ended in this run.
#[derive(Debug, Clone, Serialize)]
pub struct DateOutcome {
    pub ds: String,
    pub status: DateStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub millis: Option<u64>,
    /// The checks that found rows on it: `warn` ones of a date that committed, or those
    /// that failed it (its `error`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Failure>,
}

impl DateOutcome {
    /// A date another live run holds: the run skipped it.
    pub fn skipped(skip: &Skip) -> Self {
        DateOutcome {
            ds: skip.ds.clone(),
            status: DateStatus::Skipped,
            error: None,
            held_by: skip.held_by,
            millis: None,
            checks: Vec::new(),
        }
    }
}

/// Why a run stopped taking dates.
#[derive(Debug)]
pub enum Stop {
    /// A date failed, and the run does not go on past a failure.
    Failed { ds: String },
    /// A stop signal: seen before `ds` was taken (the first signal), or during `ds`
    /// (a second one interrupted its statement, and the date rolled back).
    Signal { sig: i32, ds: String, during: bool },
    /// The date's reservation is not this run's any more: another run holds it (or
    /// nobody does).
    Lost { ds: String, holder: Option<i64> },
    /// A fault of the database's surroundings during `ds` (it rolled back): a full disk,
    /// a lock held past the wait; the fault on one line.
    Fault { ds: String, line: String },
    /// The connection broke during `ds`, or the run's own session is gone: nothing more
    /// is written through this run.
    Broken { ds: String, error: DbError },
    /// `ds`'s COMMIT failed (SQLite; the fault on one line), and the date is what the
    /// database was found to hold afterwards.
    InDoubt {
        ds: String,
        line: String,
        found: Found,
    },
}

/// A date whose COMMIT failed, as a new connection found the database afterwards.
#[derive(Debug)]
pub enum Found {
    /// It landed: its record as it landed (success; for a sealed date corrected or
    /// unchanged; skipped for one whose sources were not ready).
    Committed(DateStatus),
    /// It did not land: `error` is its failure as recorded, or as it would have been
    /// (`unrecorded`: why the database did not take it).
    RolledBack {
        error: String,
        unrecorded: Option<String>,
    },
    /// The database could not be read again: why.
    Unknown(String),
}

impl Found {
    /// Its word in `--json` (`in_doubt.found`).
    pub fn word(&self) -> &'static str {
        match self {
            Found::Committed(_) => "committed",
            Found::RolledBack { .. } => "rolled_back",
            Found::Unknown(_) => "unknown",
        }
    }

    /// In a few words, for the run's record.
    pub fn said(&self) -> &'static str {
        match self {
            Found::Committed(_) => "it landed (committed)",
            Found::RolledBack { .. } => "it did not land (rolled back)",
            Found::Unknown(_) => "whether it landed is not known",
        }
    }
}

impl Stop {
    /// Why the run ended early, as its record says it; None for a fault or a broken
    /// connection, which end it with an error instead.
    pub fn why(&self) -> Option<String> {
        Some(match self {
            Stop::Failed { ds } => {
                format!("stopped after {ds} failed (use --keep-going to go on past a failed date)")
            }
            Stop::Signal { sig, ds, during } if *during => {
                format!("stopped by signal {sig} during {ds} (rolled back)")
            }
            Stop::Signal { sig, ds, .. } => format!("stopped by signal {sig} before {ds}"),
            Stop::Lost { ds, holder } => {
                let now = holder
                    .map(|h| format!("run {h} holds it now"))
                    .unwrap_or_else(|| "released by someone else".into());
                format!("{ds} is no longer held by this run ({now}); stopping")
            }
            Stop::Fault { .. } | Stop::Broken { .. } | Stop::InDoubt { .. } => return None,
        })
    }

    /// How the date the run stopped at ended, when the stop knows: a date whose COMMIT
    /// was in doubt, as it was found.
    pub fn date_outcome(&self, millis: u64) -> Option<DateOutcome> {
        let Stop::InDoubt { ds, found, .. } = self else {
            return None;
        };
        let (status, error) = match found {
            Found::Committed(status) => (*status, None),
            Found::RolledBack { error, .. } => (DateStatus::Failed, Some(error.clone())),
            Found::Unknown(_) => return None,
        };
        Some(DateOutcome {
            ds: ds.clone(),
            status,
            error,
            held_by: None,
            millis: Some(millis),
            checks: Vec::new(),
        })
    }
}

/// How a run ended, and what it did.
#[derive(Debug)]
pub struct RunOutcome {
    pub run_id: i64,
    pub kind: RunKind,
    pub interval: Interval,
    /// Every date of the run in date order: computed, failed and skipped.
    pub dates: Vec<DateOutcome>,
    /// The dates it skipped and who holds them.
    pub skips: Vec<Skip>,
    pub reclaimed: Vec<Reclaim>,
    /// With `--lookback`: what needs work before its window.
    pub beyond_window: Option<BeyondWindow>,
    /// Its status as the database has it at the end (a run released, or found dead,
    /// meanwhile keeps that status).
    pub status: RunStatus,
    /// The status it ended with: with `exit`, what the process reports.
    pub ended: RunStatus,
    pub exit: Exit,
    /// Why it stopped early, if it did.
    pub stopped: Option<String>,
    /// How many of its dates it released, not computed.
    pub released: usize,
    /// It stopped short of a whole end (a fault, a broken connection, its end not
    /// recorded): the error the command ends with, `Error::RunStopped`.
    pub error: Option<Error>,
}

impl RunOutcome {
    /// Its dates were taken from it meanwhile (released by hand, reclaimed): it ended
    /// interrupted, though no signal stopped it.
    pub fn taken_over(&self) -> bool {
        self.ended == RunStatus::Interrupted && self.exit == Exit::Failed
    }
}

/// A run's status and exit code from how its dates ended and why it stopped: a failed
/// date first, then a signal, then a date taken from it, then a skip.
pub fn run_end(dates: &[DateOutcome], stops: &[Stop], skipped: bool) -> (RunStatus, Exit) {
    let signal = stops.iter().find_map(|s| match s {
        Stop::Signal { sig, .. } => Some(*sig),
        _ => None,
    });
    if dates.iter().any(|d| d.status == DateStatus::Failed) {
        (RunStatus::Failed, Exit::Failed)
    } else if let Some(sig) = signal {
        (RunStatus::Interrupted, Exit::Signal(sig))
    } else if stops.iter().any(|s| matches!(s, Stop::Lost { .. })) {
        (RunStatus::Interrupted, Exit::Failed)
    } else if skipped || dates.iter().any(|d| d.status == DateStatus::Skipped) {
        (RunStatus::Partial, Exit::Skipped)
    } else {
        (RunStatus::Success, Exit::Done)
    }
}

/// A run's dates in date order: those it computed (or failed), and those it skipped.
pub fn with_skips(skips: &[Skip], mut computed: Vec<DateOutcome>) -> Vec<DateOutcome> {
    let mut dates: Vec<DateOutcome> = skips.iter().map(DateOutcome::skipped).collect();
    dates.append(&mut computed);
    dates.sort_by(|a, b| a.ds.cmp(&b.ds));
    dates
}

/// The dates a run finished (they stay committed when it stops): every outcome but a
/// failure.
pub fn committed(dates: &[DateOutcome]) -> Vec<CommittedDate> {
    dates
        .iter()
        .filter(|d| d.status != DateStatus::Failed)
        .map(|d| CommittedDate {
            ds: d.ds.clone(),
            status: d.status,
        })
        .collect()
}

/// The dates a run committed before it stopped at `ds`, in words: none, one, or how many
/// from the first to the last; they stay committed.
pub fn committed_before(dates: &[DateOutcome], ds: &str) -> String {
    let committed = committed(dates);
    let days: Vec<&str> = committed
        .iter()
        .map(|d| d.ds.as_str())
        .filter(|d| *d != ds)
        .collect();
    match days.as_slice() {
        [] => "no date of this run committed before it".to_string(),
        [one] => format!("1 date committed before it ({one}) and stays committed"),
        [first, .., last] => format!(
            "{} dates committed before it ({first}..{last}) and stay committed",
            days.len()
        ),
    }
}
