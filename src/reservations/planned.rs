//! A planned backfill: `sqlrun reserve` makes a run that holds its dates from now on
//! (`apply --run` carries it out), and `sqlrun release` makes a reserved or running run
//! give up what it still holds.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono_tz::Tz;

use crate::dates::interval::{fmt_date, Interval};
use crate::db::{Db, TxKind, Value};
use crate::error::{Error, Result};
use crate::pipeline::{cascade, Pipeline};
use crate::reservations::holders::Identity;
use crate::reservations::state::{Reclaim, Skip};
use crate::reservations::take::{self, Released};
use crate::store;
use crate::store::queries;
use crate::store::requester::default_user;

/// `sqlrun reserve` as asked (text as given; checked by `reserve_dates`).
#[derive(Debug, Clone, Default)]
pub struct ReserveRequest {
    pub interval: String,
    pub by: Option<String>,
    pub reason: Option<String>,
    /// How long the hold lasts without `apply --run` (`90m`, `2h`, `1d`); None: until
    /// carried out or released.
    pub hold_for: Option<String>,
}

/// What a reservation got: the dates it holds, those another live run holds (skipped),
/// and those it took back from runs that are gone.
pub struct Reservation {
    pub run_id: i64,
    pub interval: Interval,
    pub held: Vec<String>,
    pub skips: Vec<Skip>,
    pub reclaimed: Vec<Reclaim>,
}

/// The request's input checked, before anything is opened: bad input writes nothing.
pub struct CheckedReserve {
    interval: Interval,
    /// The project's zone: a cascade's weeks and months end on its calendar.
    zone: Tz,
    hold_for: Option<Duration>,
    by: String,
    reason: Option<String>,
}

pub fn check(request: &ReserveRequest, zone: Tz) -> Result<CheckedReserve> {
    // A reservation holds dates, and `apply --run` builds them whole: hours would be lost.
    if crate::dates::interval::hour_span(&request.interval, zone)?.is_some() {
        return Err(Error::bad(format!(
            "reserve --interval {}: a reservation holds whole dates, and `apply --run` builds them whole; name days (2026-02-09..2026-02-11), or run the hours with `sqlrun apply --interval {}`",
            request.interval, request.interval
        )));
    }
    Ok(CheckedReserve {
        interval: Interval::parse(&request.interval)?,
        zone,
        hold_for: request.hold_for.as_deref().map(parse_hold).transpose()?,
        by: request.by.clone().unwrap_or_else(default_user),
        reason: request.reason.clone(),
    })
}

/// Makes the reserved run and takes its dates, in one transaction.
pub fn reserve_dates(db: &mut Db, pipeline: &Pipeline, r: &CheckedReserve) -> Result<Reservation> {
    let me = Identity::current();
    let (run_id, reclaimed) = db.transaction(TxKind::Exclusive, |db| {
        let run_id = store::insert_run(db, &reserved_run(db, r))?;
        let reclaimed = take::sweep(db, pipeline, &me, Some(run_id))?;
        let dates = cascaded_dates(pipeline, r);
        let hold_seconds = r.hold_for.map(|d| d.as_secs() as i64);
        take::reserve(db, pipeline, run_id, &dates, hold_seconds)?;
        Ok::<_, Error>((run_id, reclaimed))
    })?;
    Ok(Reservation {
        run_id,
        interval: r.interval,
        skips: take::skipped_of_run(db, run_id)?,
        held: take::held_by_run(db, run_id)?,
        reclaimed,
    })
}

/// The dates a planned run will write on: its interval's, and, for a pipeline of other
/// grains or windows, the later dates its cascade builds the weeks, months and rolling
/// days on (those that have ended by now; `apply --run` plans again and takes any more).
fn cascaded_dates(pipeline: &Pipeline, r: &CheckedReserve) -> Vec<String> {
    let days: BTreeSet<_> = r.interval.dates().collect();
    if !cascade::needed(pipeline) {
        return days.into_iter().map(fmt_date).collect();
    }
    let none = cascade::Narrowed::new();
    let plan = cascade::plan(&cascade::Ask::now(pipeline, r.zone, &days, &none));
    plan.dates.keys().map(|d| fmt_date(*d)).collect()
}

/// The `runs` row of a reservation: a backfill, reserved, not started by any process.
fn reserved_run(db: &Db, r: &CheckedReserve) -> Vec<(&'static str, Value)> {
    vec![
        (":kind", "backfill".into()),
        (":start", fmt_date(r.interval.start).into()),
        (":end", fmt_date(r.interval.end).into()),
        (":by", r.by.as_str().into()),
        (":reason", Value::opt_text(r.reason.as_deref())),
        (":status", "reserved".into()),
        (":only", Value::Null),
        (":lookback", Value::Null),
        (":selected", Value::Null),
        (":keep_going", false.into()),
        (":command", store::command_line().into()),
        (":templates_from", Value::Null),
        (":version", env!("CARGO_PKG_VERSION").into()),
        (":host", Value::Null),
        (":pid", Value::Null),
        (":pid_started", Value::Null),
        (":dialect", db.dialect().as_str().into()),
        (":jobs", Value::Null),
    ]
}

fn parse_hold(text: &str) -> Result<Duration> {
    // The expiry must stay a timestamp SQLite can compare: at most ten years ahead.
    const LONGEST: Duration = Duration::from_secs(10 * 366 * 24 * 3600);
    humantime::parse_duration(text)
        .ok()
        .filter(|d| !d.is_zero() && *d <= LONGEST)
        .ok_or_else(|| {
            Error::bad(format!(
                "--for `{text}` is not a duration; write e.g. 90m, 2h or 1d, at most ten years (or leave it out to hold until `apply --run` or `release`)"
            ))
        })
}

/// A reserved or running run gives up what it still holds; its status becomes released.
pub fn release_run(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    by: Option<&str>,
) -> Result<Released> {
    let by = by.map(str::to_string).unwrap_or_else(default_user);
    // Checked under the write lock: the run may have ended while this one waited for it.
    db.transaction(TxKind::Exclusive, |db| {
        let run = store::existing_run(db, run_id)?;
        if !run.status.may_hold() {
            return Err(Error::bad(format!(
                "run {run_id} is {}: only a reserved or running run holds dates to release",
                run.status
            )));
        }
        let why = format!("released by {by} (sqlrun release)");
        let released = take::release(db, pipeline, run_id, &why, true)?;
        db.execute(&queries::RELEASE_RUN, &[(":run_id", run_id.into())])?;
        Ok(released)
    })
}
