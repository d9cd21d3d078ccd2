//! Each date's state, as `system/date_states.sql` judges it, and what the database knows of
//! dates at all (the span of the state store and the sources, a source with no rows).

use minijinja::context;

use crate::dates::interval::{fmt_date, parse_date, Interval};
use crate::dates::period::Grain;
use crate::db::{Db, RowShape, Value};
use crate::error::Result;
use crate::pipeline::{Model, Pipeline};
use crate::reservations::state::Judged;
pub use crate::reservations::state::{DateState, Reclaim, Skip};
use crate::text::words::{
    Action, CheckMark, DateStatus, ModelState, Reason, RunKind, RunStatus, State,
};

/// Each date of `interval`, also those the state store knows nothing of, and where it
/// stands for the models the pipeline computes (`system/date_states.sql` judges; this
/// maps its columns).
pub fn date_states(db: &mut Db, pipeline: &Pipeline, interval: Interval) -> Result<Vec<DateState>> {
    let scope = scope(pipeline);
    let sql = date_states_sql(pipeline, interval, &scope)?;
    let rows =
        db.rows_numbered::<DateColumns, InScopeColumns, _>(sql.as_str(), &[], scope.len())?;
    Ok(rows
        .into_iter()
        .map(|(date, models)| date_state(date, models, &scope))
        .collect())
}

fn date_states_sql(pipeline: &Pipeline, interval: Interval, scope: &[InScope]) -> Result<String> {
    pipeline.render_system(
        "date_states",
        context! {
            start => fmt_date(interval.start),
            end => fmt_date(interval.end),
            models => pipeline.models_value(),
            sources => pipeline.noted_value(),
            scope => crate::pipeline::to_value(&scope),
            checks => crate::pipeline::to_value(&current_checks(pipeline)),
        },
    )
}

/// A check as it is now, as `date_states.sql` takes it: `checks/NAME` (as check_results
/// names it) and its version. Only these mark a date: a removed or re-versioned check's
/// results stay in check_results as history.
#[derive(serde::Serialize)]
struct CurrentCheck {
    name: String,
    version: i64,
}

/// The checks the scope's dates run now.
fn current_checks(pipeline: &Pipeline) -> Vec<CurrentCheck> {
    pipeline
        .computed_checks()
        .iter()
        .map(|c| CurrentCheck {
            name: format!("checks/{}", c.name),
            version: c.version,
        })
        .collect()
}

/// A model in scope as `date_states.sql` takes it: `models/NAME`, its version now, its
/// grain, and the models it reads (whose rebuilds make its partitions `upstream`).
#[derive(serde::Serialize)]
pub(super) struct InScope {
    name: String,
    version: i64,
    grain: Grain,
    reads: Vec<InRead>,
    /// The tables whose change notes mark its partitions `changed`, each with the
    /// window it reads it through.
    noted: Vec<InNoted>,
}

/// A source or lookup a model reads, as `common.sql`'s `source_changed` takes it.
#[derive(serde::Serialize)]
struct InNoted {
    table: String,
    window: Option<(i64, i64)>,
}

/// A model that a model reads, as `common.sql`'s `upstream` takes it: `models/NAME`, its
/// grain, and the window in its periods.
#[derive(serde::Serialize)]
struct InRead {
    from: String,
    grain: Grain,
    window: (i64, i64),
}

/// `model` as the state templates take it.
pub(super) fn in_scope(pipeline: &Pipeline, model: &Model) -> InScope {
    InScope {
        name: format!("models/{}", model.name),
        version: model.version,
        grain: model.grain,
        reads: reads_of(pipeline, model),
        noted: noted_of(model),
    }
}

/// The sources and lookups whose notes mark `model`'s partitions changed.
fn noted_of(model: &Model) -> Vec<InNoted> {
    let window = |table: &str| {
        let read = model.reads.iter().find(|r| r.source && r.from == table);
        read.map(|r| r.window).filter(|w| *w != (0, 0))
    };
    let sources = model.sources.iter().map(|s| InNoted {
        table: s.table.clone(),
        window: window(&s.table),
    });
    let lookups = model.lookups.iter().map(|l| InNoted {
        table: l.table.clone(),
        window: None,
    });
    sources.chain(lookups).collect()
}

/// The models `model` reads, each with its grain (sources are judged `changed` instead).
fn reads_of(pipeline: &Pipeline, model: &Model) -> Vec<InRead> {
    model
        .reads
        .iter()
        .filter(|r| !r.source)
        .filter_map(|r| {
            let from = pipeline.models.iter().find(|m| m.name == r.from)?;
            Some(InRead {
                from: format!("models/{}", from.name),
                grain: from.grain,
                window: r.window,
            })
        })
        .collect()
}

/// The models a date computes, in the order of their names (`Pipeline::signature`'s).
fn scope(pipeline: &Pipeline) -> Vec<InScope> {
    let mut scope: Vec<InScope> = pipeline
        .computed_models()
        .iter()
        .map(|m| in_scope(pipeline, m))
        .collect();
    scope.sort_by(|a, b| a.name.cmp(&b.name));
    scope
}

/// One row of `date_states.sql`: the facts, the judgement and the seal's version, then
/// a column per model of the scope (`InScopeColumns`).
#[derive(serde::Deserialize)]
struct DateColumns {
    ds: String,
    built_run: Option<i64>,
    built_kind: Option<RunKind>,
    built_at: Option<String>,
    built_models: Option<String>,
    last_run: Option<i64>,
    last_status: Option<DateStatus>,
    last_error: Option<String>,
    sealed_at: Option<String>,
    sealed_by: Option<String>,
    corrections: i64,
    held_by: Option<i64>,
    held_since: Option<String>,
    held_until: Option<String>,
    holder_kind: Option<RunKind>,
    holder_by: Option<String>,
    holder_status: Option<RunStatus>,
    source_changed: bool,
    failed_model: Option<String>,
    checks: Option<CheckMark>,
    computed: bool,
    failed: bool,
    missing: bool,
    stale: bool,
    changed: bool,
    upstream: bool,
    sealed: bool,
    state: State,
    reason: Reason,
    action: Action,
    needs_work: bool,
    lookback_reason: Reason,
    lookback: bool,
    seal_id: Option<i64>,
    seal_version: Option<i64>,
    unsealed: bool,
    reissued: bool,
}

/// Where a model of the scope stands on the date: `model_1`, `model_2`, ... in the
/// order of the scope.
#[derive(serde::Deserialize)]
struct InScopeColumns {
    model: ModelState,
    /// A source it reads changed on the date since it was built.
    changed: bool,
}

fn date_state(r: DateColumns, models: Vec<InScopeColumns>, scope: &[InScope]) -> DateState {
    let name = |m: &InScope| m.name.trim_start_matches("models/").to_string();
    let changed_models = scope
        .iter()
        .zip(&models)
        .filter(|(_, state)| state.changed)
        .map(|(m, _)| name(m))
        .collect();
    let models = scope
        .iter()
        .zip(models)
        .map(|(m, state)| (name(m), state.model))
        .collect();
    DateState {
        ds: r.ds,
        built_run: r.built_run,
        built_kind: r.built_kind,
        built_at: r.built_at,
        built_models: r.built_models,
        last_run: r.last_run,
        last_status: r.last_status,
        last_error: r.last_error,
        sealed_at: r.sealed_at,
        sealed_by: r.sealed_by,
        corrections: r.corrections,
        held_by: r.held_by,
        held_since: r.held_since,
        held_until: r.held_until,
        holder_kind: r.holder_kind,
        holder_by: r.holder_by,
        holder_status: r.holder_status,
        source_changed: r.source_changed,
        failed_model: r.failed_model,
        checks: r.checks,
        seal_id: r.seal_id,
        seal_version: r.seal_version,
        unsealed: r.unsealed,
        reissued: r.reissued,
        judged: Judged {
            computed: r.computed,
            failed: r.failed,
            missing: r.missing,
            stale: r.stale,
            changed: r.changed,
            upstream: r.upstream,
            sealed: r.sealed,
            state: r.state,
            reason: r.reason,
            action: r.action,
            needs_work: r.needs_work,
            lookback_reason: r.lookback_reason,
            lookback: r.lookback,
            models,
            changed_models,
        },
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
    let sql = source_rows_in_sql(pipeline, interval)?;
    let n = pipeline.sources.len();
    let ((), found) = db.one_numbered::<(), SourceRows, _>(sql.as_str(), &[], n)?;
    if found.iter().any(|s| s.rows > 0) {
        return Ok(None);
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

/// Whether a source has a row in the interval: `rows_1`, `rows_2`, ... in the order of
/// the pipeline's sources (`system/source_rows_in.sql`).
#[derive(serde::Deserialize)]
struct SourceRows {
    rows: i64,
}

fn source_rows_in_sql(pipeline: &Pipeline, interval: Interval) -> Result<String> {
    let after = interval
        .end
        .succ_opt()
        .map(fmt_date)
        .unwrap_or_else(|| "9999-12-31".into());
    pipeline.render_system(
        "source_rows_in",
        context! { sources => pipeline.sources_value(), first => fmt_date(interval.start), after => after },
    )
}

/// The first to the last date the database knows (`system/known_span.sql`): the dates of
/// the state store and of the pipeline's source rows. None: it knows no date. A source
/// bound that is not a date (nor a time whose first ten characters are one) is left out,
/// and said in the notes returned beside.
pub fn known_span(db: &mut Db, pipeline: &Pipeline) -> Result<(Option<Interval>, Vec<String>)> {
    let sql = known_span_sql(pipeline)?;
    let n = pipeline.sources.len();
    let (state, sources) = db.one_numbered::<StateSpan, SourceSpan, _>(sql.as_str(), &[], n)?;
    let mut dates = Vec::new();
    let mut notes = Vec::new();
    let bounds = std::iter::once((
        "the state store".to_string(),
        [state.state_first, state.state_last],
    ))
    .chain(pipeline.sources.iter().zip(sources).map(|(s, span)| {
        (
            format!("{}.{}", s.table, s.date_column),
            [span.first, span.last],
        )
    }));
    for (origin, values) in bounds {
        for value in values {
            let text = match value {
                Value::Null => continue,
                Value::Text(text) => text,
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

fn known_span_sql(pipeline: &Pipeline) -> Result<String> {
    pipeline.render_system(
        "known_span",
        context! { sources => pipeline.sources_value() },
    )
}

/// The first and the last date of the state store (`system/known_span.sql`), as they
/// come: a source's bound may be other than a date.
#[derive(serde::Deserialize)]
struct StateSpan {
    state_first: Value,
    state_last: Value,
}

/// A source's first and last date: `first_1`, `last_1`, ... in the order of the
/// pipeline's sources.
#[derive(serde::Deserialize)]
struct SourceSpan {
    first: Value,
    last: Value,
}

/// The rows this file reads, rendered for `pipeline`, for the test that prepares each
/// against a real schema.
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let d = pipeline.dialect;
    let day = parse_date("2026-02-01", "date")?;
    let interval = Interval {
        start: day,
        end: day,
    };
    let scope = scope(pipeline);
    let (sources, models) = (pipeline.sources.len(), scope.len());
    let states = date_states_sql(pipeline, interval, &scope)?;
    let mut shapes = vec![
        RowShape::numbered::<DateColumns, InScopeColumns, _>(states.as_str(), d, models),
        RowShape::numbered::<StateSpan, SourceSpan, _>(
            known_span_sql(pipeline)?.as_str(),
            d,
            sources,
        ),
    ];
    if sources > 0 {
        let rows_in = source_rows_in_sql(pipeline, interval)?;
        shapes.push(RowShape::numbered::<(), SourceRows, _>(
            rows_in.as_str(),
            d,
            sources,
        ));
    }
    Ok(shapes)
}
