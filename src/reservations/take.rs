//! Reservations: which dates a run takes, which it skips because another live run holds
//! them, giving them back, and reclaiming the dates of runs that are gone.

use std::time::Duration;

use minijinja::context;

use crate::db::{Db, Dialect, RowShape};
use crate::error::Result;
use crate::pipeline::Pipeline;
use crate::reservations::holders::{liveness, Holder, Identity, Liveness};
use crate::reservations::judge::{Reclaim, Skip};
use crate::store;
use crate::store::queries;

/// A running run's lease on the dates it holds. Renewed as it commits dates, so it only
/// runs out when the holder stopped making progress; long enough that no single date of
/// a sane pipeline outlasts it. On the holder's own host a dead process is found at once
/// (pid and start time), so the lease only matters for holders on other hosts.
pub const LEASE: Duration = Duration::from_secs(15 * 60);

pub fn lease_seconds() -> i64 {
    LEASE.as_secs() as i64
}

/// A run that may hold dates, with what tells whether it is still there
/// (`queries/live_runs.sql`; `session_alive` only on PostgreSQL).
#[derive(serde::Deserialize)]
struct LiveRun {
    run_id: i64,
    status: String,
    host: Option<String>,
    pid: Option<i64>,
    pid_started: Option<String>,
    lease_until: Option<String>,
    unexpiring: i64,
    lease_expired: bool,
    session_alive: Option<bool>,
}

/// A date a run holds (`queries/held_by_run.sql`, `releasable_of_run.sql`).
#[derive(serde::Deserialize)]
struct Held {
    ds: String,
}

/// Runs that hold (or may hold) dates but are gone: a dead process, an expired lease.
/// Each with why, for the reclaim record. `exclude` is the caller's own run.
pub fn dead_holders(
    db: &mut Db,
    me: &Identity,
    exclude: Option<i64>,
) -> Result<Vec<(i64, String)>> {
    let mut dead = Vec::new();
    for r in db.rows_as::<LiveRun, _>(&queries::LIVE_RUNS, &[])? {
        if Some(r.run_id) == exclude {
            continue;
        }
        let holder = Holder {
            run_id: r.run_id,
            status: &r.status,
            host: r.host.as_deref(),
            pid: r.pid,
            started: r.pid_started.as_deref(),
            lease_until: r.lease_until.as_deref(),
            lease_expired: r.lease_expired,
            unexpiring: r.unexpiring > 0,
            session_alive: r.session_alive,
        };
        if let Liveness::Dead(why) = liveness(&holder, me) {
            dead.push((r.run_id, why));
        }
    }
    Ok(dead)
}

/// Reclaims the dates of every run that is gone and marks it interrupted. `by_run` is
/// the run that found out, if any.
pub fn sweep(
    db: &mut Db,
    pipeline: &Pipeline,
    me: &Identity,
    by_run: Option<i64>,
) -> Result<Vec<Reclaim>> {
    let mut reclaims = Vec::new();
    for (run_id, why) in dead_holders(db, me, by_run)? {
        // A date a worker of that run is still computing stays held (it is never waited
        // for): the worker finds its run gone before it commits, and a later sweep
        // reclaims the date.
        let dates = releasable(db, run_id)?;
        // A run that has ended and holds only a date still in flight: nothing to free
        // yet, and its end was recorded already.
        if dates.is_empty() && !store::existing_run(db, run_id)?.status.may_hold() {
            continue;
        }
        let script = pipeline.bind_system(
            "reclaim",
            context! {
                dead_run => run_id, by_run => by_run, why => why.clone(),
                dates => serde_json::to_string(&dates).expect("dates serialize"),
            },
        )?;
        db.run_script(&script.sql, &script.params)?;
        reclaims.push(Reclaim { run_id, why, dates });
    }
    Ok(reclaims)
}

pub fn held_by_run(db: &mut Db, run_id: i64) -> Result<Vec<String>> {
    let held = db.rows_as::<Held, _>(&queries::HELD_BY_RUN, &[(":run_id", run_id.into())])?;
    Ok(held.into_iter().map(|h| h.ds).collect())
}

/// Takes the free dates of `selected` for `run_id` and records the held ones as skipped.
/// `hold_seconds`: how long the reservations last, from the database's clock (None: until
/// released).
pub fn reserve(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    selected: &[String],
    hold_seconds: Option<i64>,
) -> Result<()> {
    let selected = serde_json::to_string(selected).expect("dates serialize");
    let script = pipeline.bind_system(
        "reserve",
        context! { run_id => run_id, selected => selected, hold_seconds => hold_seconds },
    )?;
    db.run_script(&script.sql, &script.params)?;
    Ok(())
}

/// What a release gave up, and what it left to a date in flight.
#[derive(Debug)]
pub struct Released {
    pub freed: Vec<String>,
    /// Dates whose transaction was in flight (PostgreSQL): each gives up its reservation
    /// itself when it commits or fails; a release never waits for one.
    pub in_flight: Vec<String>,
}

/// Gives up everything `run_id` still holds and can give up now, with the reason
/// recorded.
/// `recorded`: the release is recorded even when it frees nothing (`sqlrun release`: who
/// released the run, also when its only date was in flight).
pub fn release(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    why: &str,
    recorded: bool,
) -> Result<Released> {
    let freed = releasable(db, run_id)?;
    let dates = serde_json::to_string(&freed).expect("dates serialize");
    let script = pipeline.bind_system(
        "release",
        context! { run_id => run_id, why => why, dates => dates, recorded => recorded },
    )?;
    db.run_script(&script.sql, &script.params)?;
    // What is left is in flight (a date that commits meanwhile has let go of it itself).
    let in_flight = held_by_run(db, run_id)?;
    Ok(Released { freed, in_flight })
}

/// The dates `run_id` holds that can be given up now, locked for that: all but a date in
/// flight (queries/postgres/releasable_of_run.sql).
fn releasable(db: &mut Db, run_id: i64) -> Result<Vec<String>> {
    let held = db.rows_as::<Held, _>(&queries::RELEASABLE_OF_RUN, &[(":run_id", run_id.into())])?;
    Ok(held.into_iter().map(|h| h.ds).collect())
}

pub fn skipped_of_run(db: &mut Db, run_id: i64) -> Result<Vec<Skip>> {
    Ok(db.rows_as(&queries::SKIPPED_OF_RUN, &[(":run_id", run_id.into())])?)
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![
        RowShape::of::<LiveRun, _>(&queries::LIVE_RUNS, dialect),
        RowShape::of::<Held, _>(&queries::HELD_BY_RUN, dialect),
        RowShape::of::<Held, _>(&queries::RELEASABLE_OF_RUN, dialect),
        RowShape::of::<Skip, _>(&queries::SKIPPED_OF_RUN, dialect),
    ]
}
