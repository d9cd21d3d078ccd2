//! A model's numbers for `sqlrun report`: per date and per ISO week, as true now
//! (`<table>_current`), and on a sealed date what went out beside it
//! (`<table>_sent_vs_now`). The weeks are summed in SQL (templates/system/report_weeks.sql),
//! and only the value columns that add up (pipeline/measures.rs) are summed at all.
//! Beside them, what each of the newest runs changed in the model: the partitions it
//! replaced and each summed column's total before and after (templates/system/report_changes.sql).

use minijinja::context;
use serde::Serialize;
use serde_json::{Map, Value as Json};

use crate::dates::interval::{fmt_date, Interval};
use crate::db::{Db, RowShape};
use crate::error::Result;
use crate::pipeline::{to_value, Model, Pipeline};
use crate::seals::corrections::ColumnKinds;
use crate::store::rows_as_json;
use crate::text::kinds::Kind;

/// A row by column name.
pub type Record = Map<String, Json>;

/// How many of the newest dates the per-date rows always cover; older dates come as
/// weeks (and, where a sealed date's numbers changed since they went out, as dates too),
/// so ten years stay one page.
pub const RECENT_DATES: i64 = 92;

/// How many runs the page says the changes of, per model: the newest that replaced a
/// partition of it within the page's dates. A regular run replaces a date a day, so every
/// run of years would be a table of thousands of lines; the newest few are the ones a
/// backfill is looked at for (and `--interval` narrows them to a range of dates).
pub const CHANGED_RUNS: i64 = 10;

/// A value column as the report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Measure {
    pub column: String,
    pub kind: Kind,
    pub how: How,
}

/// How a value column is shown (the templates read it as `sum` or `one`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum How {
    /// It adds up, over a date's keys and a week's dates.
    Sum,
    /// It does not, and the date is the model's key: a date has its one value (never
    /// summed).
    One,
}

impl Measure {
    pub fn adds_up(&self) -> bool {
        self.how == How::Sum
    }
}

/// One model's numbers over an interval.
pub struct ModelNumbers<'a> {
    pub model: &'a Model,
    pub measures: Vec<Measure>,
    /// Per date, newest first: `ds`, `keys`, `changed_keys` (null: not sealed), and per
    /// measure `now_<column>` and `sent_<column>` (null: not sealed).
    pub dates: Vec<Record>,
    /// Per ISO week, oldest first: `week` (its Monday), `dates`, `now_<column>` of each
    /// measure that adds up.
    pub weeks: Vec<Record>,
    /// The per-date rows cover every date from this one on.
    pub recent: String,
    /// What each of the newest runs (at most [`CHANGED_RUNS`]) that replaced partitions of
    /// the model within the interval changed there, newest first: `run_id`, `partitions`,
    /// `built_before`, `first_ds`, `last_ds`, `rows_before`, `rows_after`, and per measure
    /// that adds up `before_<column>`, `after_<column>`, `delta_<column>`.
    pub changes: Vec<Record>,
}

/// The numbers of each model of `models` over `span`.
pub fn of_models<'a>(
    db: &mut Db,
    pipeline: &Pipeline,
    models: &[&'a Model],
    span: Interval,
) -> Result<Vec<ModelNumbers<'a>>> {
    let recent = (span.end - chrono::Days::new(RECENT_DATES as u64 - 1)).max(span.start);
    let mut all = Vec::new();
    for &model in models {
        let kinds = ColumnKinds::read(db, &model.table)?;
        let measures = measures(model, &kinds);
        let range = (fmt_date(span.start), fmt_date(span.end), fmt_date(recent));
        let [dates, weeks] = ["report_dates", "report_weeks"]
            .map(|name| numbers_sql(pipeline, name, model, &measures, &range));
        let changes = changes_sql(pipeline, model, &measures, &range)?;
        all.push(ModelNumbers {
            model,
            dates: rows_as_json(db, dates?.as_str(), &[])?,
            weeks: rows_as_json(db, weeks?.as_str(), &[])?,
            changes: rows_as_json(db, &changes, &[])?,
            measures,
            recent: range.2,
        });
    }
    Ok(all)
}

/// The value columns shown: those that add up, summed; where the date is the key, the
/// others too, each date's one value. Text and dates over several keys are left out.
pub(crate) fn measures(model: &Model, kinds: &ColumnKinds) -> Vec<Measure> {
    let one_per_date = model.key == [model.date_column.clone()];
    model
        .values
        .iter()
        .filter_map(|v| {
            let kind = kinds.of(v, &[]);
            let how = match model.adds_up(v, kind) {
                true => How::Sum,
                false if one_per_date => How::One,
                false => return None,
            };
            Some(Measure {
                column: v.clone(),
                kind,
                how,
            })
        })
        .collect()
}

fn numbers_sql(
    pipeline: &Pipeline,
    name: &str,
    model: &Model,
    measures: &[Measure],
    (start, end, recent): &(String, String, String),
) -> Result<String> {
    pipeline.render_system(
        name,
        context! {
            model => to_value(model), measures => to_value(&measures),
            start => start, end => end, recent => recent,
        },
    )
}

/// What the newest runs changed in `model` (system/report_changes.sql): the columns that
/// add up only (a running total or a count of days summed over partitions means nothing).
fn changes_sql(
    pipeline: &Pipeline,
    model: &Model,
    measures: &[Measure],
    (start, end, _): &(String, String, String),
) -> Result<String> {
    let summed: Vec<&Measure> = measures.iter().filter(|m| m.adds_up()).collect();
    pipeline.render_system(
        "report_changes",
        context! {
            model => to_value(model), measures => to_value(&summed),
            start => start, end => end, runs => CHANGED_RUNS,
        },
    )
}

/// The rows this file reads, rendered for `pipeline`: model columns, read as they come.
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let mut shapes = Vec::new();
    let range = (
        "2026-01-01".into(),
        "2026-03-31".into(),
        "2026-02-01".into(),
    );
    for model in &pipeline.models {
        let measures: Vec<Measure> = model
            .values
            .iter()
            .map(|v| Measure {
                column: v.clone(),
                kind: Kind::Integer,
                how: How::Sum,
            })
            .collect();
        for name in ["report_dates", "report_weeks"] {
            let sql = numbers_sql(pipeline, name, model, &measures, &range)?;
            shapes.push(RowShape::any(sql.as_str(), pipeline.dialect));
        }
        let sql = changes_sql(pipeline, model, &measures, &range)?;
        shapes.push(RowShape::any(sql.as_str(), pipeline.dialect));
    }
    Ok(shapes)
}
