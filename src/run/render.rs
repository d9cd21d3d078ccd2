//! `sqlrun render`: the SQL a date would run, exactly as `apply` would run it (its whole
//! transaction, one model's SELECT, or one check's query), without running it.

use crate::db::{Db, Dialect, RowShape};
use crate::error::{Error, Result};
use crate::pipeline::{DateVars, Pipeline};
use crate::reservations::take;
use crate::store::queries;

/// What `render` shows of a date.
pub struct Rendered<'a> {
    pub ds: String,
    /// The id the next run would get (the SQL names it).
    pub run_id: i64,
    pub model: Option<&'a str>,
    pub body: String,
    /// How the date's transaction begins on this backend; None for one model's SELECT.
    pub begin: Option<&'static str>,
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
    model: Option<&'a str>,
) -> Result<Rendered<'a>> {
    let run_id = db.one_as::<NextRun, _>(&queries::NEXT_RUN_ID, &[])?.run_id;
    let start = crate::run::date_start(db, pipeline, &ds)?;
    let sealed = start.sealed;
    let (body, begin) = match model {
        Some(name) => match pipeline.check(name) {
            Some(check) => (pipeline.render_check(check, &ds, sealed)?, None),
            None => (model_sql(pipeline, name, &ds, run_id)?, None),
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
            })?;
            (body, Some(db.dialect().begin()))
        }
    };
    Ok(Rendered {
        ds,
        run_id,
        model,
        body,
        begin,
    })
}

fn model_sql(pipeline: &Pipeline, name: &str, ds: &str, run_id: i64) -> Result<String> {
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
    pipeline.render_model(model, ds, run_id)
}
