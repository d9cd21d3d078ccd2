//! `sqlrun diff RUN`: what a run changed, from history. For each partition the run
//! replaced (`replaced_partitions`), the rows it replaced (kept in `<table>_history`)
//! against the rows it wrote (in the model's table while they stand, else in history,
//! replaced since), in the same table as `apply --diff` (run/diff.rs). Reads only.

use minijinja::context;
use serde::Deserialize;
use serde_json::Value as Json;

use super::diff::{self, Change, History, ModelDiff, Partition};
use crate::dates::interval::{fmt_date, Interval};
use crate::db::{Db, Dialect, RowShape};
use crate::error::{Error, Result};
use crate::pipeline::{to_value, Model, Pipeline};
use crate::store::{self, queries, rows_as_json, RunRow};
use crate::text::words::DateStatus;

/// What a run changed.
#[derive(Debug)]
pub struct RunChanges {
    pub run: RunRow,
    /// Each model of the pipeline (in scope) whose partitions the run replaced.
    pub models: Vec<ModelDiff>,
    /// Models the run replaced partitions of that this pipeline does not have (retired,
    /// or another template folder's): not compared.
    pub other_models: Vec<String>,
    /// Sealed dates the run compared (it writes corrections there, never history):
    /// `sqlrun corrections` shows what it corrected.
    pub sealed: Vec<(String, DateStatus)>,
}

/// A partition a run replaced, as system/run_replaced.sql lists it.
#[derive(Deserialize)]
struct Replaced {
    ds: String,
    replaced_run: Option<i64>,
    row_count: i64,
    since: Option<i64>,
    since_rows: Option<i64>,
    other_runs_now: i64,
}

#[derive(Deserialize)]
struct ReplacedModel {
    model: String,
}

/// The rows this file reads, rendered for `pipeline`, for the test that prepares each
/// against a real schema.
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let dialect = pipeline.dialect;
    let mut shapes = Vec::new();
    for model in &pipeline.models {
        let sql = replaced_sql(pipeline, model, 1, None)?;
        shapes.push(RowShape::of::<Replaced, _>(sql.as_str(), dialect));
        let listed = pipeline.render_system(
            "diff_between",
            context! {
                model => to_value(model), measures => Vec::<String>::new(), from_run => 1,
                to_run => 2, ds => (), start => (), end => (),
            },
        )?;
        shapes.push(RowShape::of::<AtEither, _>(listed.as_str(), dialect));
    }
    Ok(shapes)
}

fn replaced_sql(
    pipeline: &Pipeline,
    model: &Model,
    run_id: i64,
    interval: Option<Interval>,
) -> Result<String> {
    pipeline.render_system(
        "run_replaced",
        context! {
            model => to_value(model), run_id => run_id,
            start => interval.map(|i| fmt_date(i.start)), end => interval.map(|i| fmt_date(i.end)),
        },
    )
}

/// What run `run_id` changed in the models of `pipeline` (its `--select`), over
/// `interval` when given. An unknown run, or one that replaced nothing there, is bad input
/// (exit 2) that says what would work.
pub fn of_run(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    interval: Option<Interval>,
) -> Result<RunChanges> {
    let run = store::existing_run(db, run_id)?;
    let replaced: Vec<ReplacedModel> = db.rows_as(
        &queries::MODELS_REPLACED_BY_RUN,
        &[(":run_id", run_id.into())],
    )?;
    let sealed = sealed_dates(db, run_id)?;
    let in_scope = |name: &str| pipeline.computed_models().iter().any(|m| m.name == name);
    let other_models: Vec<String> = replaced
        .iter()
        .map(|r| r.model.trim_start_matches("models/").to_string())
        .filter(|m| pipeline.model(m).is_none())
        .collect();
    let mut models = Vec::new();
    for model in pipeline.computed_models() {
        let name = format!("models/{}", model.name);
        if !replaced.iter().any(|r| r.model == name) || !in_scope(&model.name) {
            continue;
        }
        let diff = model_changes(db, pipeline, model, run_id, interval)?;
        if !diff.partitions.is_empty() {
            models.push(diff);
        }
    }
    if models.is_empty() {
        return Err(replaced_nothing(&run, &sealed, &other_models, interval));
    }
    Ok(RunChanges {
        run,
        models,
        other_models,
        sealed,
    })
}

/// One model's partitions that the run replaced, each compared.
fn model_changes(
    db: &mut Db,
    pipeline: &Pipeline,
    model: &Model,
    run_id: i64,
    interval: Option<Interval>,
) -> Result<ModelDiff> {
    let mut diff = diff::begin(db, model)?;
    let listed: Vec<Replaced> = db.rows_as(
        replaced_sql(pipeline, model, run_id, interval)?.as_str(),
        &[],
    )?;
    for r in listed {
        let sql = pipeline.bind_system(
            "diff_of_run",
            context! {
                model => to_value(model), measures => diff.measures_value(),
                run_id => run_id, ds => &r.ds,
            },
        )?;
        let kept = db.rows(sql.sql.as_str(), &params(&sql.params))?;
        let change = kept
            .first()
            .map_or_else(Change::default, |row| Change::from_row(row, &diff.measures));
        let mut pruned = Vec::new();
        if change.rows_before < r.row_count {
            pruned.push("before");
        }
        let after_pruned = match r.since {
            Some(_) => change.rows_after < r.since_rows.unwrap_or_default(),
            // Its rows are not in the table, and no replace since is recorded.
            None => change.rows_after == 0 && r.other_runs_now > 0,
        };
        if after_pruned {
            pruned.push("after");
        }
        let history = History {
            replaced_run: r.replaced_run,
            replaced_since: r.since,
        };
        diff.push(
            Partition {
                ds: r.ds,
                before_from: model.history_table.clone(),
                sealed: false,
                change,
                history: Some(history),
                pruned,
            },
            true,
        );
    }
    Ok(diff)
}

/// A bound script's parameters as `Db::rows` takes them.
fn params(bound: &[(String, crate::db::Value)]) -> Vec<(&str, crate::db::Value)> {
    bound
        .iter()
        .map(|(name, value)| (name.as_str(), value.clone()))
        .collect()
}

/// The sealed dates the run compared (corrected or found unchanged).
fn sealed_dates(db: &mut Db, run_id: i64) -> Result<Vec<(String, DateStatus)>> {
    let dates = rows_as_json(
        db,
        &queries::RUN_PARTITIONS_OF_RUN,
        &[(":run_id", run_id.into())],
    )?;
    Ok(dates
        .iter()
        .filter_map(|d| {
            let status = DateStatus::parse(d.get("status")?.as_str()?)?;
            let ds = d.get("ds").and_then(Json::as_str)?.to_string();
            matches!(status, DateStatus::Corrected | DateStatus::Unchanged).then_some((ds, status))
        })
        .collect())
}

/// A run that replaced no partition (of these models, in this interval): what it did
/// instead, and what would work.
fn replaced_nothing(
    run: &RunRow,
    sealed: &[(String, DateStatus)],
    other_models: &[String],
    interval: Option<Interval>,
) -> Error {
    let id = run.run_id;
    let mut why = vec![format!(
        "run {id} ({} {}..{}, {}) replaced no partition{}",
        run.kind,
        run.interval_start,
        run.interval_end,
        run.status,
        match interval {
            Some(i) => format!(" in {i}"),
            None => String::new(),
        }
    )];
    if !sealed.is_empty() {
        why.push(format!(
            "its {} sealed date(s) get corrections, never a replace: `sqlrun corrections` shows them",
            sealed.len()
        ));
    }
    if !other_models.is_empty() {
        why.push(format!(
            "it replaced partitions of {}, which these templates do not have (run `sqlrun diff \
             {id}` with the templates it ran with)",
            other_models.join(", ")
        ));
    }
    why.push(format!(
        "a run that computed dates replaces their partitions and keeps what it replaced for \
         the retention's time (`[history] keep`), after which `sqlrun diff` has nothing to \
         compare; `sqlrun runs {id}` shows its dates, `sqlrun runs` the runs"
    ));
    Error::bad(why.join("; "))
}

/// The rows this file reads through queries/, for the test that prepares each against a
/// real schema.
pub fn query_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![RowShape::of::<ReplacedModel, _>(
        &queries::MODELS_REPLACED_BY_RUN,
        dialect,
    )]
}

/// One model between two points of its history (`sqlrun diff --model M --from A --to B`).
#[derive(Debug)]
pub struct Between {
    pub from: RunRow,
    pub to: RunRow,
    pub model: ModelDiff,
}

/// A partition either point has rows of, as system/diff_between.sql lists it.
#[derive(Deserialize)]
struct AtEither {
    ds: String,
    known_from: i64,
}

/// Model `name`'s partitions as they stood once run `from` was done against once run
/// `to` was, over `interval` when given. An unknown model or run is bad input (exit 2).
pub fn between(
    db: &mut Db,
    pipeline: &Pipeline,
    name: &str,
    (from, to): (i64, i64),
    interval: Option<Interval>,
) -> Result<Between> {
    let Some(model) = pipeline.model(name) else {
        let known: Vec<&str> = pipeline.models.iter().map(|m| m.name.as_str()).collect();
        return Err(Error::bad(format!(
            "--model {name}: no such model; this pipeline's models are: {}",
            known.join(", ")
        )));
    };
    let (from_run, to_run) = (store::existing_run(db, from)?, store::existing_run(db, to)?);
    let mut diff = diff::begin(db, model)?;
    let context = |ds: Option<&str>, measures| {
        context! {
            model => to_value(model), measures => measures, from_run => from, to_run => to,
            ds => ds, start => interval.map(|i| fmt_date(i.start)),
            end => interval.map(|i| fmt_date(i.end)),
        }
    };
    let listed: Vec<AtEither> = db.rows_as(
        pipeline
            .render_system("diff_between", context(None, diff.measures_value()))?
            .as_str(),
        &[],
    )?;
    for p in listed {
        let sql =
            pipeline.bind_system("diff_between", context(Some(&p.ds), diff.measures_value()))?;
        let rows = db.rows(sql.sql.as_str(), &params(&sql.params))?;
        let change = rows
            .first()
            .map_or_else(Change::default, |row| Change::from_row(row, &diff.measures));
        let pruned = [("before", from), ("after", to)]
            .into_iter()
            .filter(|(_, run)| *run < p.known_from)
            .map(|(side, _)| side)
            .collect();
        diff.push(
            Partition {
                ds: p.ds,
                before_from: format!("after run {from}"),
                sealed: false,
                change,
                history: None,
                pruned,
            },
            true,
        );
    }
    Ok(Between {
        from: from_run,
        to: to_run,
        model: diff,
    })
}
