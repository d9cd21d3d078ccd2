//! `sqlrun render`: the SQL a date would run, exactly as `apply` would run it (its whole
//! transaction, one model's SELECT, or one check's query), without running it; or, with
//! `--dialect` naming the other backend, as that backend would run it.

use chrono_tz::Tz;

use crate::dates::clock::Clock;
use crate::db::{Db, Dialect, RowShape};
use crate::error::{Error, Result};
use crate::pipeline::{DateVars, Pipeline};
use crate::reservations::take;
use crate::store::queries;

/// What `render` shows of a date.
pub struct Rendered<'a> {
    pub ds: String,
    /// The id the next run would get (the SQL names it); None where no database was
    /// asked (another backend's SQL: the date's SQL names the placeholder `:run_id`).
    pub run_id: Option<i64>,
    pub model: Option<&'a str>,
    pub body: String,
    /// How the date's transaction begins on this backend; None for one model's SELECT.
    pub begin: Option<&'static str>,
    /// The backend whose SQL it is.
    pub dialect: Dialect,
}

/// The id the next run will most likely get (`queries/next_run_id.sql`).
#[derive(serde::Deserialize)]
struct NextRun {
    run_id: i64,
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![RowShape::of::<NextRun, _>(&queries::NEXT_RUN_ID, dialect)]
}

pub fn date<'a>(
    db: &mut Db,
    pipeline: &Pipeline,
    ds: String,
    (model, zone): (Option<&'a str>, Tz),
) -> Result<Rendered<'a>> {
    let run_id = db.one_as::<NextRun, _>(&queries::NEXT_RUN_ID, &[])?.run_id;
    let start = crate::run::date_start(db, pipeline, &ds)?;
    let sealed = start.sealed;
    let (body, begin) = match model {
        Some(name) => match pipeline.check(name) {
            Some(check) => (pipeline.render_check(check, &ds, sealed)?, None),
            None => (model_sql(pipeline, name, &ds, run_id, zone)?, None),
        },
        None => {
            let body = pipeline.review_date(&DateVars {
                ds: &ds,
                run_id,
                sealed,
                uncovered: &start.uncovered,
                started_at: &start.at,
                lease_seconds: take::lease_seconds(),
                undo: None,
                parts: None,
            })?;
            (body, Some(db.dialect().begin()))
        }
    };
    Ok(Rendered {
        ds,
        run_id: Some(run_id),
        model,
        body,
        begin,
        dialect: db.dialect(),
    })
}

/// The same as `pipeline`'s backend (its dialect) would run it, with no database asked
/// (`render --dialect` naming the other backend): the date as one not sealed, started
/// now by this runner's clock. The date's SQL names the run as the placeholder
/// `:run_id`, as `apply --dry-run --sql` does before a run exists; a model's SELECT gets
/// 0 for `{{ run_id }}`.
pub fn date_unconnected<'a>(
    pipeline: &Pipeline,
    ds: String,
    (model, zone): (Option<&'a str>, Tz),
) -> Result<Rendered<'a>> {
    let (body, begin) = match model {
        Some(name) => match pipeline.check(name) {
            Some(check) => (pipeline.render_check(check, &ds, false)?, None),
            None => (model_sql(pipeline, name, &ds, 0, zone)?, None),
        },
        None => {
            let started_at = Clock::runner()
                .now()
                .format("%Y-%m-%d %H:%M:%S")
                .to_string();
            let vars = DateVars {
                ds: &ds,
                run_id: 0,
                sealed: false,
                uncovered: &[],
                started_at: &started_at,
                lease_seconds: take::lease_seconds(),
                undo: None,
                parts: None,
            };
            // The readiness query first, when a model the date computes declares
            // `-- ready:` (system/review_date.sql), as `render` shows it on its own backend.
            let body = pipeline.review_date_unclaimed(&vars)?;
            (body, Some(pipeline.dialect.begin()))
        }
    };
    Ok(Rendered {
        ds,
        run_id: None,
        model,
        body,
        begin,
        dialect: pipeline.dialect,
    })
}

fn model_sql(pipeline: &Pipeline, name: &str, ds: &str, run_id: i64, zone: Tz) -> Result<String> {
    let model = pipeline.model(name).ok_or_else(|| {
        let names: Vec<&str> = pipeline.models.iter().map(|m| m.name.as_str()).collect();
        let checks: Vec<&str> = pipeline.checks.iter().map(|c| c.name.as_str()).collect();
        Error::bad(format!(
            "no model named {name}, nor a check; this pipeline's models are: {}; its checks: {}",
            names.join(", "),
            if checks.is_empty() {
                "none".to_string()
            } else {
                checks.join(", ")
            }
        ))
    })?;
    pipeline.render_model(model, ds, run_id, zone)
}
