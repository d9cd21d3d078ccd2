//! Reservations: what each date's state is, which dates a run takes, which it skips because
//! another live run holds them, and reclaiming the dates of runs that are gone.

use std::time::Duration;

use chrono::Utc;
use minijinja::context;
use rusqlite::{named_params, Connection, Transaction, TransactionBehavior};

use crate::cli::{default_user, Global, Only, ReserveArgs};
use crate::error::{Error, Result};
use crate::holder::{liveness, Holder, Identity, Liveness};
use crate::interval::{contiguous, fmt_date, parse_date, Interval};
use crate::pipeline::Pipeline;
use crate::queries;
use crate::report::Output;
use crate::store::{self, timestamp};

/// A running run's lease on the dates it holds. Renewed as it commits dates, so it only
/// runs out when the holder stopped making progress; long enough that no single date of
/// a sane pipeline outlasts it. On the holder's own host a dead process is found at once
/// (pid and start time), so the lease only matters for holders on other hosts.
pub const LEASE: Duration = Duration::from_secs(15 * 60);

/// What the state store knows about one date (`system/date_states.sql`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DateState {
    pub ds: String,
    pub built_run: Option<i64>,
    pub built_kind: Option<String>,
    pub built_at: Option<String>,
    pub built_models: Option<String>,
    pub last_run: Option<i64>,
    pub last_status: Option<String>,
    pub last_error: Option<String>,
    pub sealed_at: Option<String>,
    pub sealed_by: Option<String>,
    pub corrections: i64,
    pub held_by: Option<i64>,
    pub held_since: Option<String>,
    pub held_until: Option<String>,
    pub holder_kind: Option<String>,
    pub holder_by: Option<String>,
    pub holder_status: Option<String>,
}

impl DateState {
    pub fn computed(&self) -> bool {
        self.built_run.is_some()
    }

    pub fn failed(&self) -> bool {
        self.last_status.as_deref() == Some("failed")
    }

    /// Built by other model versions than the pipeline's now.
    pub fn stale(&self, signature: &str) -> bool {
        self.computed() && self.built_models.as_deref() != Some(signature)
    }

    pub fn sealed(&self) -> bool {
        self.sealed_at.is_some()
    }

    pub fn selected_by(&self, only: Option<Only>, signature: &str) -> bool {
        match only {
            None => true,
            Some(Only::Missing) => !self.computed(),
            Some(Only::Failed) => self.failed(),
            Some(Only::Stale) => self.stale(signature),
        }
    }
}

/// Each date of `interval`, or without one every date the state store knows of.
pub fn date_states(
    conn: &Connection,
    pipeline: &Pipeline,
    interval: Option<Interval>,
) -> Result<Vec<DateState>> {
    let sql = pipeline.render_system(
        "date_states",
        context! {
            start => interval.map(|i| fmt_date(i.start)),
            end => interval.map(|i| fmt_date(i.end)),
            models => pipeline.models_value(),
        },
    )?;
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], |r| {
        Ok(DateState {
            ds: r.get(0)?,
            built_run: r.get(1)?,
            built_kind: r.get(2)?,
            built_at: r.get(3)?,
            built_models: r.get(4)?,
            last_run: r.get(5)?,
            last_status: r.get(6)?,
            last_error: r.get(7)?,
            sealed_at: r.get(8)?,
            sealed_by: r.get(9)?,
            corrections: r.get(10)?,
            held_by: r.get(11)?,
            held_since: r.get(12)?,
            held_until: r.get(13)?,
            holder_kind: r.get(14)?,
            holder_by: r.get(15)?,
            holder_status: r.get(16)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// A reclaim, for the report on stderr.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Reclaim {
    pub run_id: i64,
    pub why: String,
    pub dates: Vec<String>,
}

/// Runs that hold (or may hold) dates but are gone: a dead process, an expired lease.
/// Each with why, for the reclaim record. `exclude` is the caller's own run.
pub fn dead_holders(
    conn: &Connection,
    me: &Identity,
    exclude: Option<i64>,
) -> Result<Vec<(i64, String)>> {
    let mut stmt = conn.prepare_cached(queries::LIVE_RUNS)?;
    let mut rows = stmt.query([])?;
    let mut dead = Vec::new();
    while let Some(r) = rows.next()? {
        let run_id: i64 = r.get(0)?;
        if Some(run_id) == exclude {
            continue;
        }
        let status: String = r.get(1)?;
        let host: Option<String> = r.get(2)?;
        let started: Option<String> = r.get(4)?;
        let lease_until: Option<String> = r.get(5)?;
        let holder = Holder {
            run_id,
            status: &status,
            host: host.as_deref(),
            pid: r.get(3)?,
            started: started.as_deref(),
            lease_until: lease_until.as_deref(),
            unexpiring: r.get::<_, i64>(6)? > 0,
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
    tx: &Transaction,
    pipeline: &Pipeline,
    me: &Identity,
    by_run: Option<i64>,
) -> Result<Vec<Reclaim>> {
    let mut reclaims = Vec::new();
    for (run_id, why) in dead_holders(tx, me, by_run)? {
        let dates = held_by_run(tx, run_id)?;
        let sql = pipeline.render_system(
            "reclaim",
            context! { dead_run => run_id, by_run => by_run, why => why.clone() },
        )?;
        tx.execute_batch(&sql)?;
        reclaims.push(Reclaim { run_id, why, dates });
    }
    Ok(reclaims)
}

pub fn held_by_run(conn: &Connection, run_id: i64) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(queries::HELD_BY_RUN)?;
    let rows = stmt.query_map(named_params! {":run_id": run_id}, |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Takes the free dates of `selected` for `run_id` and records the held ones as skipped.
pub fn reserve(
    tx: &Transaction,
    pipeline: &Pipeline,
    run_id: i64,
    selected: &[String],
    expires_at: Option<String>,
) -> Result<()> {
    let selected = serde_json::to_string(selected).expect("dates serialize");
    let sql = pipeline.render_system(
        "reserve",
        context! { run_id => run_id, selected => selected, expires_at => expires_at },
    )?;
    tx.execute_batch(&sql)?;
    Ok(())
}

/// Gives up everything `run_id` still holds, with the reason recorded.
pub fn release(conn: &Connection, pipeline: &Pipeline, run_id: i64, why: &str) -> Result<usize> {
    let held = held_by_run(conn, run_id)?.len();
    let sql = pipeline.render_system("release", context! { run_id => run_id, why => why })?;
    conn.execute_batch(&sql)?;
    Ok(held)
}

/// The lease a date's transaction sets, and the time before which it is renewed (half of it
/// left): `(lease_until, renew_before)`.
pub fn lease_window() -> (String, String) {
    (lease_until(LEASE), lease_until(LEASE / 2))
}

pub fn lease_until(lease: Duration) -> String {
    timestamp(Utc::now() + chrono::Duration::from_std(lease).expect("lease fits"))
}

/// A skipped date and who holds it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Skip {
    pub ds: String,
    pub held_by: Option<i64>,
    pub holder_kind: Option<String>,
    pub holder_by: Option<String>,
    pub holder_status: Option<String>,
    pub held_since: Option<String>,
}

pub fn skipped_of_run(conn: &Connection, run_id: i64) -> Result<Vec<Skip>> {
    let mut stmt = conn.prepare_cached(queries::SKIPPED_OF_RUN)?;
    let rows = stmt.query_map(named_params! {":run_id": run_id}, |r| {
        Ok(Skip {
            ds: r.get(0)?,
            held_by: r.get(1)?,
            holder_kind: r.get(2)?,
            holder_by: r.get(3)?,
            holder_status: r.get(4)?,
            held_since: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One line per contiguous range of skipped dates with the same holder.
pub fn skip_lines(skips: &[Skip]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut i = 0;
    while i < skips.len() {
        let holder = skips[i].held_by;
        let mut j = i;
        while j + 1 < skips.len() && skips[j + 1].held_by == holder {
            j += 1;
        }
        let dates: Vec<_> = skips[i..=j]
            .iter()
            .filter_map(|s| parse_date(&s.ds, "date").ok())
            .collect();
        let s = &skips[i];
        for range in contiguous(&dates) {
            let n = range.len();
            lines.push(format!(
                "skipped {range} ({n} date{}): held by run {} ({}, requested by {}, {} since {})",
                if n == 1 { "" } else { "s" },
                holder.map(|h| h.to_string()).unwrap_or_else(|| "?".into()),
                s.holder_kind.as_deref().unwrap_or("?"),
                s.holder_by.as_deref().unwrap_or("?"),
                s.holder_status.as_deref().unwrap_or("?"),
                s.held_since.as_deref().unwrap_or("?"),
            ));
        }
        i = j + 1;
    }
    lines
}

pub fn reclaim_lines(reclaims: &[Reclaim]) -> Vec<String> {
    reclaims
        .iter()
        .map(|r| {
            let dates: Vec<_> = r
                .dates
                .iter()
                .filter_map(|d| parse_date(d, "date").ok())
                .collect();
            let ranges: Vec<String> = contiguous(&dates).iter().map(|i| i.to_string()).collect();
            let what = if ranges.is_empty() {
                "no dates".to_string()
            } else {
                ranges.join(", ")
            };
            format!(
                "reclaimed {what} from run {}: {}; run {} is now interrupted",
                r.run_id, r.why, r.run_id
            )
        })
        .collect()
}

/// `sqlrun reserve`: a planned backfill holds its dates from now on; `apply --run` carries
/// it out, `release` cancels it. Prints the run id alone on stdout.
pub fn reserve_command(global: &Global, args: &ReserveArgs, out: &Output) -> Result<u8> {
    let interval = Interval::parse(&args.interval)?;
    let hold_for = args.hold_for.as_deref().map(parse_hold).transpose()?;
    let by = args.by.clone().unwrap_or_else(default_user);
    let pipeline = Pipeline::load(global.templates.as_deref())?;
    let mut conn = store::open(&global.db)?;
    pipeline.sync(&mut conn)?;
    let me = Identity::current();

    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(
        queries::INSERT_RUN,
        named_params! {
            ":kind": "backfill", ":start": fmt_date(interval.start), ":end": fmt_date(interval.end),
            ":by": by, ":reason": args.reason, ":status": "reserved", ":only": None::<String>,
            ":keep_going": false, ":command": crate::apply::command_line(),
            ":templates_from": None::<String>, ":version": env!("CARGO_PKG_VERSION"),
            ":host": None::<String>, ":pid": None::<i64>, ":pid_started": None::<String>,
        },
    )?;
    let run_id = tx.last_insert_rowid();
    let reclaimed = sweep(&tx, &pipeline, &me, Some(run_id))?;
    let dates: Vec<String> = interval.dates().map(fmt_date).collect();
    reserve(&tx, &pipeline, run_id, &dates, hold_for.map(lease_until))?;
    tx.commit()?;

    for line in reclaim_lines(&reclaimed) {
        out.note(&line);
    }
    let skips = skipped_of_run(&conn, run_id)?;
    for line in skip_lines(&skips) {
        out.note(&line);
    }
    let held = held_by_run(&conn, run_id)?;
    out.json(&serde_json::json!({
        "run_id": run_id, "interval": interval.to_string(), "held": held,
        "skipped": skips, "reclaimed": reclaimed,
    }))?;
    out.text(&run_id.to_string())?;
    Ok(if skips.is_empty() { 0 } else { 99 })
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

/// `sqlrun release RUN_ID`: a reserved or running run gives up what it still holds.
pub fn release_command(global: &Global, run_id: i64, by: Option<&str>, out: &Output) -> Result<u8> {
    let pipeline = Pipeline::load(global.templates.as_deref())?;
    let mut conn = store::open(&global.db)?;
    let by = by.map(str::to_string).unwrap_or_else(default_user);
    // Checked under the write lock: the run may have ended while this one waited for it.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let run = store::existing_run(&tx, run_id)?;
    if run.status != "reserved" && run.status != "running" {
        return Err(Error::bad(format!(
            "run {run_id} is {}: only a reserved or running run holds dates to release",
            run.status
        )));
    }
    let why = format!("released by {by} (sqlrun release)");
    let n = release(&tx, &pipeline, run_id, &why)?;
    tx.execute(queries::RELEASE_RUN, named_params! {":run_id": run_id})?;
    tx.commit()?;
    out.json(&serde_json::json!({"run_id": run_id, "released_dates": n, "status": "released"}))?;
    out.text(&format!(
        "run {run_id} released: {n} date{} freed",
        if n == 1 { "" } else { "s" }
    ))?;
    Ok(0)
}
