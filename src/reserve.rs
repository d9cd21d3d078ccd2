//! Reservations: what each date's state is, which dates a run takes, which it skips because
//! another live run holds them, and reclaiming the dates of runs that are gone.

use std::time::Duration;

use minijinja::context;

use crate::dates::Judged;
pub use crate::dates::{DateState, Reclaim, Skip};
use crate::db::{Db, DbError, Row, Value};
use crate::error::{Error, Result};
use crate::holder::{liveness, Holder, Identity, Liveness};
use crate::interval::{fmt_date, parse_date, Interval};
use crate::pipeline::Pipeline;
use crate::queries;
use crate::store;
use crate::vocabulary::{
    Action, CheckMark, DateStatus, ModelState, Reason, RunKind, RunStatus, State,
};

/// A running run's lease on the dates it holds. Renewed as it commits dates, so it only
/// runs out when the holder stopped making progress; long enough that no single date of
/// a sane pipeline outlasts it. On the holder's own host a dead process is found at once
/// (pid and start time), so the lease only matters for holders on other hosts.
pub const LEASE: Duration = Duration::from_secs(15 * 60);

pub fn lease_seconds() -> i64 {
    LEASE.as_secs() as i64
}

/// Each date of `interval`, also those the state store knows nothing of, and where it
/// stands for the models the pipeline computes (`system/date_states.sql` judges; this
/// maps its columns).
pub fn date_states(db: &mut Db, pipeline: &Pipeline, interval: Interval) -> Result<Vec<DateState>> {
    let scope = scope(pipeline);
    let sql = pipeline.render_system(
        "date_states",
        context! {
            start => fmt_date(interval.start),
            end => fmt_date(interval.end),
            models => pipeline.models_value(),
            sources => pipeline.sources_value(),
            scope => crate::pipeline::to_value(&scope),
        },
    )?;
    db.rows(sql.as_str(), &[])?
        .iter()
        .map(|r| date_state(r, &scope))
        .collect()
}

/// A model in scope as `date_states.sql` takes it: `models/NAME` and its version now.
#[derive(serde::Serialize)]
struct InScope {
    name: String,
    version: i64,
}

/// The models a date computes, in the order of their names (`Pipeline::signature`'s).
fn scope(pipeline: &Pipeline) -> Vec<InScope> {
    let mut scope: Vec<InScope> = pipeline
        .computed_models()
        .iter()
        .map(|m| InScope {
            name: format!("models/{}", m.name),
            version: m.version,
        })
        .collect();
    scope.sort_by(|a, b| a.name.cmp(&b.name));
    scope
}

/// One row of `date_states.sql`: the facts (0-19), the judgement (20-31), the seal's
/// version (32-35), then each model of `scope` (36 on).
fn date_state(r: &Row, scope: &[InScope]) -> Result<DateState> {
    let models = scope
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let name = m.name.trim_start_matches("models/").to_string();
            Ok((name, word(r, 36 + i, ModelState::parse)?))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(DateState {
        ds: r.text(0)?,
        built_run: r.opt_i64(1)?,
        built_kind: opt_word(r, 2, RunKind::parse)?,
        built_at: r.opt_text(3)?,
        built_models: r.opt_text(4)?,
        last_run: r.opt_i64(5)?,
        last_status: opt_word(r, 6, DateStatus::parse)?,
        last_error: r.opt_text(7)?,
        sealed_at: r.opt_text(8)?,
        sealed_by: r.opt_text(9)?,
        corrections: r.i64(10)?,
        held_by: r.opt_i64(11)?,
        held_since: r.opt_text(12)?,
        held_until: r.opt_text(13)?,
        holder_kind: opt_word(r, 14, RunKind::parse)?,
        holder_by: r.opt_text(15)?,
        holder_status: opt_word(r, 16, RunStatus::parse)?,
        source_changed: r.bool(17)?,
        failed_model: r.opt_text(18)?,
        checks: opt_word(r, 19, CheckMark::parse)?,
        seal_id: r.opt_i64(32)?,
        seal_version: r.opt_i64(33)?,
        unsealed: r.bool(34)?,
        reissued: r.bool(35)?,
        judged: Judged {
            computed: r.bool(20)?,
            failed: r.bool(21)?,
            missing: r.bool(22)?,
            stale: r.bool(23)?,
            changed: r.bool(24)?,
            sealed: r.bool(25)?,
            state: word(r, 26, State::parse)?,
            reason: word(r, 27, Reason::parse)?,
            action: word(r, 28, Action::parse)?,
            needs_work: r.bool(29)?,
            lookback_reason: word(r, 30, Reason::parse)?,
            lookback: r.bool(31)?,
            models,
        },
    })
}

/// A column that holds one of the contract's words.
fn word<T>(r: &Row, i: usize, parse: fn(&str) -> Option<T>) -> Result<T> {
    let text = r.text(i)?;
    parse(&text).ok_or_else(|| {
        Error::Database(DbError::other(format!(
            "column {i} ({}) holds `{text}`, which sqlrun does not know",
            r.names().get(i).map(String::as_str).unwrap_or("?")
        )))
    })
}

fn opt_word<T>(r: &Row, i: usize, parse: fn(&str) -> Option<T>) -> Result<Option<T>> {
    match r.value(i) {
        Value::Null => Ok(None),
        _ => word(r, i, parse).map(Some),
    }
}

/// When no source of the pipeline has a row dated inside `interval`, what to say: its
/// dates are computed from nothing (the wrong folder or database, a load not run yet).
/// None: a source has rows there, or the pipeline declares none.
pub fn no_source_rows(
    db: &mut Db,
    pipeline: &Pipeline,
    interval: Interval,
) -> Result<Option<String>> {
    if pipeline.sources.is_empty() {
        return Ok(None);
    }
    let after = interval
        .end
        .succ_opt()
        .map(fmt_date)
        .unwrap_or_else(|| "9999-12-31".into());
    let sql = pipeline.render_system(
        "source_rows_in",
        context! { sources => pipeline.sources_value(), first => fmt_date(interval.start), after => after },
    )?;
    let row = db.one(sql.as_str(), &[])?;
    for i in 0..pipeline.sources.len() {
        if row.i64(i)? > 0 {
            return Ok(None);
        }
    }
    let sources: Vec<String> = pipeline
        .sources
        .iter()
        .map(|s| format!("{} (by {})", s.table, s.date_column))
        .collect();
    Ok(Some(format!(
        "note: {} has no rows dated {interval}: each date is computed from no source rows \
         (zeros). If that is unexpected, check the database this ran on ({}) and load the \
         rows first (`sqlrun load TABLE FILE`).",
        sources.join(" and "),
        db.target
    )))
}

/// The first to the last date the database knows (`system/known_span.sql`): the dates of
/// the state store and of the pipeline's source rows. None: it knows no date. A source
/// bound that is not a date (nor a time whose first ten characters are one) is left out,
/// and said in the notes returned beside.
pub fn known_span(db: &mut Db, pipeline: &Pipeline) -> Result<(Option<Interval>, Vec<String>)> {
    let sql = pipeline.render_system(
        "known_span",
        context! { sources => pipeline.sources_value() },
    )?;
    let row = db.one(sql.as_str(), &[])?;
    let mut dates = Vec::new();
    let mut notes = Vec::new();
    let origins = std::iter::once("the state store".to_string()).chain(
        pipeline
            .sources
            .iter()
            .map(|s| format!("{}.{}", s.table, s.date_column)),
    );
    for (i, origin) in origins.enumerate() {
        for column in [2 * i, 2 * i + 1] {
            let text = match row.value(column) {
                Value::Null => continue,
                Value::Text(text) => text.clone(),
                other => format!("{other:?}"),
            };
            match text.get(..10).map(|day| parse_date(day, "date")) {
                Some(Ok(date)) => dates.push(date),
                _ => notes.push(format!(
                    "{origin} holds `{text}`, which is not a date (YYYY-MM-DD); the span leaves it out (give --interval to choose one)"
                )),
            }
        }
    }
    let span = dates
        .iter()
        .min()
        .zip(dates.iter().max())
        .map(|(first, last)| Interval {
            start: *first,
            end: *last,
        });
    Ok((span, notes))
}

/// Runs that hold (or may hold) dates but are gone: a dead process, an expired lease.
/// Each with why, for the reclaim record. `exclude` is the caller's own run.
pub fn dead_holders(
    db: &mut Db,
    me: &Identity,
    exclude: Option<i64>,
) -> Result<Vec<(i64, String)>> {
    let mut dead = Vec::new();
    for r in db.rows(&queries::LIVE_RUNS, &[])? {
        let run_id = r.i64(0)?;
        if Some(run_id) == exclude {
            continue;
        }
        let status = r.text(1)?;
        let host = r.opt_text(2)?;
        let started = r.opt_text(4)?;
        let lease_until = r.opt_text(5)?;
        let session_alive = match r.value(8) {
            Value::Null => None,
            _ => Some(r.bool(8)?),
        };
        let holder = Holder {
            run_id,
            status: &status,
            host: host.as_deref(),
            pid: r.opt_i64(3)?,
            started: started.as_deref(),
            lease_until: lease_until.as_deref(),
            lease_expired: r.bool(7)?,
            unexpiring: r.i64(6)? > 0,
            session_alive,
        };
        if let Liveness::Dead(why) = liveness(&holder, me) {
            dead.push((run_id, why));
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
    db.rows(&queries::HELD_BY_RUN, &[(":run_id", run_id.into())])?
        .iter()
        .map(|r| Ok(r.text(0)?))
        .collect()
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
    db.rows(&queries::RELEASABLE_OF_RUN, &[(":run_id", run_id.into())])?
        .iter()
        .map(|r| Ok(r.text(0)?))
        .collect()
}

pub fn skipped_of_run(db: &mut Db, run_id: i64) -> Result<Vec<Skip>> {
    db.rows(&queries::SKIPPED_OF_RUN, &[(":run_id", run_id.into())])?
        .iter()
        .map(|r| {
            Ok(Skip {
                ds: r.text(0)?,
                held_by: r.opt_i64(1)?,
                holder_kind: r.opt_text(2)?,
                holder_by: r.opt_text(3)?,
                holder_status: r.opt_text(4)?,
                held_since: r.opt_text(5)?,
            })
        })
        .collect()
}
