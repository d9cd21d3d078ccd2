//! The audit trail as `sqlrun runs` reads it: the newest runs with their dates counted,
//! and one run whole (its row, dates, events and template versions). Rows stay JSON
//! objects keyed by column, as the state store has them: `--json` prints them as they are.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::dates::interval::{contiguous, parse_date};
use crate::db::{Db, Dialect, RowShape};
use crate::error::{Error, Result};
use crate::run::DateOutcome;
use crate::store::queries;
use crate::store::{self, rows_as_json, RunRow};
use crate::text::words::DateStatus;

/// A row of a query, by column name.
pub type Record = Map<String, Json>;

/// The newest `limit` runs, each with its dates counted per status and, for the failed and
/// skipped ones, where they are (`failed_ranges`, `skipped_ranges`).
pub fn newest_runs(db: &mut Db, limit: u32) -> Result<Vec<Record>> {
    let mut rows = rows_as_json(
        db,
        &queries::LIST_RUNS,
        &[(":limit", i64::from(limit).into())],
    )?;
    // The list is the newest runs: every run from the oldest listed one on.
    let oldest = rows.last().and_then(|r| r["run_id"].as_i64());
    let not_done = match oldest {
        Some(oldest) => rows_as_json(
            db,
            &queries::RUN_DATES_NOT_DONE,
            &[(":oldest", oldest.into())],
        )?,
        None => Vec::new(),
    };
    for r in &mut rows {
        for status in [DateStatus::Failed, DateStatus::Skipped] {
            let dates = not_done
                .iter()
                .filter(|d| d["run_id"] == r["run_id"] && d["status"] == status.as_str())
                .map(|d| parse_date(d["ds"].as_str().unwrap_or_default(), "date"))
                .collect::<Result<Vec<_>>>()?;
            let ranges: Vec<Json> = contiguous(&dates)
                .iter()
                .map(|i| Json::String(i.to_string()))
                .collect();
            r.insert(format!("{status}_ranges"), Json::Array(ranges));
        }
    }
    Ok(rows)
}

/// One run as `runs N` shows it.
pub struct RunDetail {
    pub run: RunRow,
    pub dates: Vec<Record>,
    /// The same dates, as outcomes (for ranges and counts).
    pub outcomes: Vec<DateOutcome>,
    pub events: Vec<Record>,
    pub templates: Vec<Record>,
    /// The checks that found rows on its dates (`sample`: the first rows, as JSON).
    pub checks: Vec<Record>,
    /// The seal events on its dates since it was made: what sent or unsealed its values.
    pub seals: Vec<Record>,
}

pub fn run_detail(db: &mut Db, run_id: i64) -> Result<RunDetail> {
    let run = store::existing_run(db, run_id)?;
    let by_run = [(":run_id", run_id.into())];
    let dates = rows_as_json(db, &queries::RUN_PARTITIONS_OF_RUN, &by_run)?;
    let events = rows_as_json(db, &queries::RUN_EVENTS_OF_RUN, &by_run)?;
    let templates = rows_as_json(db, &queries::RUN_TEMPLATES_OF_RUN, &by_run)?;
    let mut checks = rows_as_json(db, &queries::CHECK_RESULTS_OF_RUN, &by_run)?;
    for c in &mut checks {
        let sample = c["sample"]
            .as_str()
            .and_then(|s| serde_json::from_str(s).ok());
        c.insert("sample".into(), sample.unwrap_or(Json::Null));
    }
    let seals = rows_as_json(db, &queries::SEAL_EVENTS_OF_RUN, &by_run)?;
    let outcomes = dates
        .iter()
        .map(|d| outcome_of(run_id, d))
        .collect::<Result<Vec<_>>>()?;
    Ok(RunDetail {
        run,
        dates,
        outcomes,
        events,
        templates,
        checks,
        seals,
    })
}

/// The newest `limit` seal events (seal, reissue, unseal), each with how many dates and
/// models it covered.
pub fn newest_seal_events(db: &mut Db, limit: u32) -> Result<Vec<Record>> {
    rows_as_json(
        db,
        &queries::LIST_SEAL_EVENTS,
        &[(":limit", i64::from(limit).into())],
    )
}

/// One seal event, and each model with the dates it covered.
pub struct SealDetail {
    pub event: Record,
    pub coverage: Vec<(String, Vec<String>)>,
}

pub fn seal_detail(db: &mut Db, seal_id: i64) -> Result<SealDetail> {
    let by_id = [(":seal_id", seal_id.into())];
    let Some(event) = rows_as_json(db, &queries::SEAL_EVENT, &by_id)?
        .into_iter()
        .next()
    else {
        return Err(Error::bad(format!(
            "there is no seal event {seal_id}; `sqlrun seals` lists them"
        )));
    };
    let mut coverage: Vec<(String, Vec<String>)> = Vec::new();
    for row in rows_as_json(db, &queries::SEAL_COVERAGE_OF, &by_id)? {
        let model = row["model"].as_str().unwrap_or_default().to_string();
        let ds = row["ds"].as_str().unwrap_or_default().to_string();
        match coverage.last_mut() {
            Some((m, dates)) if *m == model => dates.push(ds),
            _ => coverage.push((model, vec![ds])),
        }
    }
    Ok(SealDetail { event, coverage })
}

/// How long a run took, to the millisecond, where its runner measured it.
#[derive(serde::Deserialize)]
struct RunMillis {
    run_id: i64,
    took_ms: i64,
}

/// Each run's `took_ms` from run `oldest` on (runs from before the column have none).
pub fn run_millis(db: &mut Db, oldest: i64) -> Result<BTreeMap<i64, i64>> {
    let rows = db.rows_as::<RunMillis, _>(&queries::RUN_MILLIS, &[(":oldest", oldest.into())])?;
    Ok(rows.into_iter().map(|r| (r.run_id, r.took_ms)).collect())
}

/// The rows this file reads, for the test that prepares each against a real schema:
/// `run_millis.sql` as its struct, the rest printed as they come (any columns).
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    let typed = RowShape::of::<RunMillis, _>(&queries::RUN_MILLIS, dialect);
    std::iter::once(typed)
        .chain(
            [
                queries::LIST_RUNS,
                queries::RUN_DATES_NOT_DONE,
                queries::RUN_PARTITIONS_OF_RUN,
                queries::RUN_EVENTS_OF_RUN,
                queries::RUN_TEMPLATES_OF_RUN,
                queries::CHECK_RESULTS_OF_RUN,
                queries::SEAL_EVENTS_OF_RUN,
                queries::LIST_SEAL_EVENTS,
                queries::SEAL_EVENT,
                queries::SEAL_COVERAGE_OF,
            ]
            .iter()
            .map(|q| RowShape::any(q, dialect)),
        )
        .collect()
}

/// A `run_partitions` row as the outcome of its date.
fn outcome_of(run_id: i64, d: &Record) -> Result<DateOutcome> {
    let ds = d["ds"].as_str().unwrap_or_default().to_string();
    let text = d["status"].as_str().unwrap_or_default();
    let status = DateStatus::parse(text).ok_or_else(|| {
        Error::bad(format!(
            "run {run_id}: {ds} has the status `{text}`, which this sqlrun does not know; \
             a newer sqlrun wrote it: use that version"
        ))
    })?;
    Ok(DateOutcome {
        ds,
        status,
        error: d["error"].as_str().map(str::to_string),
        held_by: d["held_by"].as_i64(),
        millis: None,
        checks: Vec::new(),
    })
}
