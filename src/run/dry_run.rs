//! `--dry-run`: each date and what would happen to it (and with `--sql`, the SQL of
//! those it would compute). Writes nothing, and claims no run id: a new run's SQL shows
//! the placeholder `:run_id`.

use super::start::Start;
use crate::dates::interval::Interval;
use crate::db::Db;
use crate::error::Result;
use crate::pipeline::cascade::{self, Reach};
use crate::pipeline::checks::Check;
use crate::pipeline::ready;
use crate::pipeline::{DateVars, Pipeline};
use crate::reservations::holders::Identity;
use crate::reservations::state::DateState;
use crate::reservations::{judge, take};
use crate::run::plan::{self, Step};

/// A dry run's plan, and the SQL of each date it would compute when `--sql` asks.
#[derive(Debug)]
pub struct Plan {
    pub interval: Interval,
    /// `apply --run N`: the reserved run, whose id the plan may name. None: a new run,
    /// whose id does not exist yet.
    pub run_id: Option<i64>,
    pub steps: Vec<Step>,
    /// Each computed date and its SQL (None without `--sql`).
    pub sql: Option<Vec<(String, String)>>,
    /// The backend's BEGIN, for the SQL.
    pub begin: &'static str,
    /// The checks each date it computes would run.
    pub checks: Vec<Check>,
    /// The dates it would compute whose sources are not ready: skipped, and why.
    pub not_ready: Vec<(String, String)>,
    /// For a pipeline of other grains or windows: the partitions per model, with why.
    pub cascade: Vec<Reach>,
    /// The same cascade by date (what `apply --diff` computes).
    pub planned: Option<cascade::Cascade>,
}

/// The plan, read in the transaction the caller rolls back.
pub fn plan(db: &mut Db, pipeline: &Pipeline, start: &Start) -> Result<Plan> {
    let interval = start.interval;
    let own_run = start.reserved.as_ref().map(|r| r.run_id);
    let states = judge::date_states(db, pipeline, interval)?;
    let dead = take::dead_holders(db, &Identity::current(), own_run)?;
    let cx = plan::Context {
        own_run,
        dead: &dead,
    };
    let steps: Vec<Step> = states
        .iter()
        .map(|state| {
            let selected = match start.new_run() {
                Some(r) => state.selected_by(&r.selection),
                None => state.held_by.is_some() && state.held_by == own_run,
            };
            plan::step(state, selected, &cx)
        })
        .collect();
    let sql = start
        .request()
        .sql
        .then(|| plan_sql(db, pipeline, &states, &steps, own_run))
        .transpose()?;
    let not_ready = not_ready_dates(db, pipeline, &states, &steps)?;
    let planned = match cascade::needed(pipeline) {
        true => Some(plan_cascade(start, pipeline, &states, &steps)?),
        false => None,
    };
    let cascade = planned.as_ref().map_or_else(Vec::new, |c| {
        cascade::reaches(pipeline, c, start.asked.zone)
    });
    Ok(Plan {
        interval,
        run_id: own_run,
        steps,
        sql,
        begin: db.dialect().begin(),
        checks: pipeline.computed_checks().into_iter().cloned().collect(),
        not_ready,
        cascade,
        planned,
    })
}

/// The cascade of the dates the plan computes (each narrowed as the run would narrow it).
fn plan_cascade(
    start: &Start,
    pipeline: &Pipeline,
    states: &[DateState],
    steps: &[Step],
) -> Result<cascade::Cascade> {
    let days: Vec<String> = steps
        .iter()
        .filter(|s| s.action.computes())
        .map(|s| s.ds.clone())
        .collect();
    let taken: Vec<&DateState> = states.iter().filter(|s| days.contains(&s.ds)).collect();
    let narrowed = match start.new_run() {
        Some(r) => super::start::narrowed(&taken, &r.selection)?,
        None => cascade::Narrowed::new(),
    };
    super::start::plan_cascade(pipeline, start, &days, &narrowed)
}

/// The dates the plan computes whose sources are not ready, with why (as the run would
/// find them now).
fn not_ready_dates(
    db: &mut Db,
    pipeline: &Pipeline,
    states: &[DateState],
    steps: &[Step],
) -> Result<Vec<(String, String)>> {
    let mut waiting = Vec::new();
    for (state, _) in states
        .iter()
        .zip(steps)
        .filter(|(_, s)| s.action.computes())
    {
        let ready = pipeline.bind_ready(&state.ds)?;
        if let Some(reason) = ready::not_ready(db, pipeline, ready.as_ref())? {
            waiting.push((state.ds.clone(), reason));
        }
    }
    Ok(waiting)
}

/// The SQL of each date the plan computes, as the run would execute it, its values as
/// literals; the run id a reserved run's, else the placeholder.
fn plan_sql(
    db: &mut Db,
    pipeline: &Pipeline,
    states: &[DateState],
    steps: &[Step],
    own_run: Option<i64>,
) -> Result<Vec<(String, String)>> {
    let mut sql = Vec::new();
    for (state, _) in states
        .iter()
        .zip(steps)
        .filter(|(_, s)| s.action.computes())
    {
        let start = super::date_start(db, pipeline, &state.ds)?;
        let vars = DateVars {
            ds: &state.ds,
            run_id: own_run.unwrap_or_default(),
            sealed: start.sealed,
            uncovered: &start.uncovered,
            started_at: &start.at,
            lease_seconds: take::lease_seconds(),
            undo: None,
            parts: None,
        };
        let body = match own_run {
            Some(_) => pipeline.render_date(&vars)?,
            None => pipeline.render_date_unclaimed(&vars)?,
        };
        sql.push((state.ds.clone(), body));
    }
    Ok(sql)
}
