//! Where the partitions of a model coarser than the day stand, as
//! `system/partition_states.sql` judges them: the date states judge days, and a week or a
//! month is recorded by its period's first day.

use chrono_tz::Tz;
use minijinja::context;

use crate::dates::interval::{fmt_date, Interval};
use crate::dates::period::{midnight, runs, Grain, Period};
use crate::db::{Db, RowShape};
use crate::error::Result;
use crate::pipeline::{to_value, Model, Pipeline};
use crate::text::words::PartitionState;

/// Consecutive partitions of one model in one state.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PartitionRange {
    pub model: String,
    pub grain: Grain,
    /// The first and the last partition's label (`2026-W06`, `2026-02`, ...).
    pub first: String,
    pub last: String,
    pub count: usize,
    pub state: PartitionState,
}

#[derive(serde::Deserialize)]
struct PartitionRow {
    ds: String,
    state: PartitionState,
}

/// One model coarser than the day: each of its partitions that start in a span, in
/// order, with its state (a calendar row per year: `status`, `report --html`).
#[derive(Debug, Clone)]
pub struct ModelPartitions {
    pub model: String,
    pub grain: Grain,
    pub cells: Vec<PartitionCell>,
}

/// One partition: its period, its label (`2026-W07`), where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionCell {
    pub period: Period,
    pub label: String,
    pub state: PartitionState,
}

/// Each model of a grain coarser than the day that the pipeline computes, and its
/// partitions that start in `span`, each with its state.
pub fn partition_cells(
    db: &mut Db,
    pipeline: &Pipeline,
    span: Interval,
    zone: Tz,
) -> Result<Vec<ModelPartitions>> {
    let mut out = Vec::new();
    let coarse = pipeline
        .computed_models()
        .into_iter()
        .filter(|m| !matches!(m.grain, Grain::Day | Grain::Hour));
    for model in coarse {
        let periods = periods_in(model.grain, span, zone);
        if periods.is_empty() {
            continue;
        }
        let rows = states(db, pipeline, model, &periods, zone)?;
        let cells = periods.iter().zip(rows).map(|(p, state)| PartitionCell {
            period: *p,
            label: p.label(zone),
            state,
        });
        out.push(ModelPartitions {
            model: model.name.clone(),
            grain: model.grain,
            cells: cells.collect(),
        });
    }
    Ok(out)
}

/// The same partitions as ranges by state.
pub fn partition_ranges(models: &[ModelPartitions], zone: Tz) -> Vec<PartitionRange> {
    models.iter().flat_map(|m| ranges(m, zone)).collect()
}

/// The periods of `grain` whose first day lies in `span`.
fn periods_in(grain: Grain, span: Interval, zone: Tz) -> Vec<Period> {
    let end = span.end.succ_opt().unwrap_or(span.end);
    Period::overlapping(grain, midnight(span.start, zone), midnight(end, zone), zone)
        .into_iter()
        .filter(|p| span.contains(p.first_day(zone)))
        .collect()
}

fn states(
    db: &mut Db,
    pipeline: &Pipeline,
    model: &Model,
    periods: &[Period],
    zone: Tz,
) -> Result<Vec<PartitionState>> {
    let sql = states_sql(pipeline, model, periods, zone)?;
    let rows: Vec<PartitionRow> = db.rows_as(sql.as_str(), &[])?;
    debug_assert!(rows
        .iter()
        .zip(periods)
        .all(|(r, p)| r.ds == fmt_date(p.first_day(zone))));
    Ok(rows.into_iter().map(|r| r.state).collect())
}

fn states_sql(pipeline: &Pipeline, model: &Model, periods: &[Period], zone: Tz) -> Result<String> {
    let firsts: Vec<String> = periods
        .iter()
        .map(|p| fmt_date(p.first_day(zone)))
        .collect();
    pipeline.render_system(
        "partition_states",
        context! {
            model => to_value(model),
            scoped => to_value(&super::judge::in_scope(pipeline, model)),
            periods => serde_json::to_string(&firsts).expect("dates serialize"),
        },
    )
}

/// Consecutive partitions in the same state, as ranges.
fn ranges(model: &ModelPartitions, zone: Tz) -> Vec<PartitionRange> {
    runs(model.cells.iter().map(|c| (c.period, c.state)))
        .into_iter()
        .map(|(first, last, count, state)| PartitionRange {
            model: model.model.clone(),
            grain: model.grain,
            first: first.label(zone),
            last: last.label(zone),
            count,
            state,
        })
        .collect()
}

/// The rows this module reads, for the test that prepares each against a real schema.
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let zone = Tz::UTC;
    let Some(model) = pipeline.models.first() else {
        return Ok(Vec::new());
    };
    let day = crate::dates::interval::parse_date("2026-02-01", "date")?;
    let periods = [Period::of_date(Grain::Month, day, zone)];
    let sql = states_sql(pipeline, model, &periods, zone)?;
    Ok(vec![RowShape::of::<PartitionRow, _>(
        sql.as_str(),
        pipeline.dialect,
    )])
}
