//! Each date's state, as `system/date_states.sql` judges it, and what the database knows of
//! dates at all (the span of the state store and the sources, a source with no rows).

use minijinja::context;

use crate::dates::interval::{fmt_date, parse_date, Interval};
use crate::db::{Db, DbError, Row, Value};
use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
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
