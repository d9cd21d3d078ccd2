//! `sqlrun undo RUN`: what RUN replaced, put back as a new run of kind `undo`.
//!
//! The plan is read here: each partition (model, date) RUN replaced
//! (`replaced_partitions`) that still holds RUN's rows (`partition_models`) goes back to
//! the rows RUN replaced (`<table>_history`, possibly none); the others are skipped, each
//! with why. The run itself is `run::apply`'s, over exactly the plan's dates (reserved
//! first, one transaction per date with its record, checks and seals): the date template
//! reads those models' rows from history (system/undo_rows.sql) and recomputes the models
//! downstream of them by their own SQL (the cascade).
//!
//! Values in, values out: no clap type and no printing here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::dates::interval::{fmt_date, parse_date, Interval};
use crate::db::{Db, Dialect, RowShape, Value};
use crate::error::{Error, Result};
use crate::pipeline::{DateUndo, Pipeline};
use crate::store::{self, queries};
use crate::text::words::{RunKind, RunStatus};

/// What an undo's run does on each of its dates (`Request::undo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoWork {
    /// The dates it takes on, each with the models it puts back there.
    pub dates: BTreeMap<String, DateUndo>,
}

/// `sqlrun undo RUN [--interval I]` as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoAsk {
    pub run_id: i64,
    /// Only the partitions of these dates (None: every one RUN replaced).
    pub interval: Option<String>,
}

/// One partition of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partition {
    pub ds: String,
    /// The model's name (`daily_revenue`), or None for a whole date (pruned, corrected).
    pub model: Option<String>,
    /// How many rows it goes back to (those RUN replaced).
    pub rows: Option<i64>,
}

/// Why a partition RUN touched is not put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "why", content = "run_id")]
pub enum Why {
    /// Another run replaced it since: putting RUN's predecessor back would erase it.
    ReplacedSince(i64),
    /// No record says which run's rows it holds (its model was retired, say).
    Unknown,
    /// The model is not in this pipeline any more.
    NotInPipeline,
    /// The retention pruned what RUN replaced there.
    Pruned,
    /// Sealed when RUN ran: it wrote corrections, not a replacement; they stand.
    Corrected,
}

/// A partition not put back, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    #[serde(flatten)]
    pub partition: Partition,
    #[serde(flatten)]
    pub why: Why,
}

/// What `sqlrun undo RUN` would do.
#[derive(Debug, Clone, Serialize)]
pub struct UndoPlan {
    /// RUN.
    pub run_id: i64,
    /// The dates looked at: RUN's interval, or the part of it asked for.
    pub interval: String,
    /// The partitions put back, by date and model.
    pub restore: Vec<Partition>,
    pub skipped: Vec<Skipped>,
}

impl UndoPlan {
    /// Nothing left to put back (an undo done twice: the first one replaced everything).
    pub fn is_empty(&self) -> bool {
        self.restore.is_empty()
    }

    /// The models put back, each once, in the pipeline's order.
    pub fn models(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .restore
            .iter()
            .filter_map(|p| p.model.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The dates put back, first to last.
    pub fn span(&self) -> Option<Interval> {
        let first = self.restore.first()?;
        let last = self.restore.last()?;
        let start = parse_date(&first.ds, "date").ok()?;
        let end = parse_date(&last.ds, "date").ok()?;
        Some(Interval { start, end })
    }

    /// The run's work: each date and the models it puts back there.
    pub fn work(&self) -> UndoWork {
        let mut dates: BTreeMap<String, DateUndo> = BTreeMap::new();
        for p in &self.restore {
            let date = dates.entry(p.ds.clone()).or_insert_with(|| DateUndo {
                of: self.run_id,
                restored: Vec::new(),
            });
            date.restored.extend(p.model.clone());
        }
        UndoWork { dates }
    }
}

/// A partition RUN replaced (queries/undo_replaced.sql).
#[derive(Deserialize)]
struct Replaced {
    ds: String,
    model: String,
    row_count: i64,
    holder: Option<i64>,
}

/// A date RUN computed without a replaced partition left (queries/undo_unreplaced.sql).
#[derive(Deserialize)]
struct Unreplaced {
    ds: String,
    status: String,
}

/// The latest undo (queries/latest_undo.sql).
#[derive(Deserialize)]
struct Latest {
    run_id: Option<i64>,
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![
        RowShape::of::<Replaced, _>(&queries::UNDO_REPLACED, dialect),
        RowShape::of::<Unreplaced, _>(&queries::UNDO_UNREPLACED, dialect),
        RowShape::of::<Latest, _>(&queries::LATEST_UNDO, dialect),
    ]
}

/// The plan of `sqlrun undo RUN`, read without writing. Bad input (exit 2): an unknown
/// run, one still going, an undo that is not the latest, an interval RUN did not touch,
/// a run that replaced nothing.
pub fn plan(db: &mut Db, pipeline: &Pipeline, ask: &UndoAsk) -> Result<UndoPlan> {
    let run_id = ask.run_id;
    let run = store::existing_run(db, run_id)?;
    if matches!(run.status, RunStatus::Reserved | RunStatus::Running) {
        return Err(Error::bad(format!(
            "run {run_id} is {}: only a run that has ended can be undone; wait for it to end, \
             or `sqlrun release {run_id}`, then undo what it did",
            run.status
        )));
    }
    if run.kind == RunKind::Undo.as_str() {
        let latest: Latest = db.one_as(&queries::LATEST_UNDO, &[])?;
        if let Some(latest) = latest.run_id.filter(|&l| l != run_id) {
            return Err(Error::bad(format!(
                "run {run_id} is an undo, and run {latest} is a later one: only the latest \
                 undo can be undone (undo them in the reverse order: `sqlrun undo {latest}` \
                 first); `sqlrun runs` lists them"
            )));
        }
    }
    let touched = Interval::new(
        parse_date(&run.interval_start, "run interval")?,
        parse_date(&run.interval_end, "run interval")?,
    )?;
    let (replaced, unreplaced) = read(db, run_id, touched)?;
    if replaced.is_empty() && unreplaced.is_empty() {
        return Err(Error::bad(format!(
            "run {run_id} ({} {touched}, {}) replaced no partition: there is nothing of it to \
             undo; `sqlrun runs {run_id}` shows how each of its dates ended, and `sqlrun undo` \
             takes a run that computed dates",
            run.kind, run.status
        )));
    }
    let interval = match &ask.interval {
        None => touched,
        Some(text) => within(Interval::parse(text)?, touched, run_id)?,
    };
    let inside =
        |ds: &str| parse_date(ds, "date").is_ok_and(|d| d >= interval.start && d <= interval.end);
    let mut plan = UndoPlan {
        run_id,
        interval: interval.to_string(),
        restore: Vec::new(),
        skipped: Vec::new(),
    };
    for r in replaced.into_iter().filter(|r| inside(&r.ds)) {
        let name = r.model.trim_start_matches("models/").to_string();
        let partition = Partition {
            ds: r.ds,
            model: Some(name.clone()),
            rows: Some(r.row_count),
        };
        let why = match r.holder {
            _ if pipeline.model(&name).is_none() => Some(Why::NotInPipeline),
            Some(h) if h == run_id => None,
            Some(h) => Some(Why::ReplacedSince(h)),
            None => Some(Why::Unknown),
        };
        match why {
            None => plan.restore.push(partition),
            Some(why) => plan.skipped.push(Skipped { partition, why }),
        }
    }
    for u in unreplaced.into_iter().filter(|u| inside(&u.ds)) {
        let why = match u.status.as_str() {
            "corrected" => Why::Corrected,
            _ => Why::Pruned,
        };
        let partition = Partition {
            ds: u.ds,
            model: None,
            rows: None,
        };
        plan.skipped.push(Skipped { partition, why });
    }
    plan.skipped
        .sort_by(|a, b| a.partition.ds.cmp(&b.partition.ds));
    Ok(plan)
}

/// What RUN replaced over `touched`, and its dates with nothing replaced left.
fn read(db: &mut Db, run_id: i64, touched: Interval) -> Result<(Vec<Replaced>, Vec<Unreplaced>)> {
    let params = [
        (":run_id", Value::from(run_id)),
        (":first", fmt_date(touched.start).into()),
        (":last", fmt_date(touched.end).into()),
    ];
    let replaced = db.rows_as(&queries::UNDO_REPLACED, &params)?;
    let unreplaced = db.rows_as(&queries::UNDO_UNREPLACED, &params)?;
    Ok((replaced, unreplaced))
}

/// Inside the date's transaction, once the run holds the date: each partition it puts
/// back still holds RUN's rows. The plan was read before the dates were reserved, and a
/// run that replaced one in between must not be overwritten: the date fails instead,
/// writing nothing, and the next `sqlrun undo RUN` skips that partition.
pub fn still_holds(db: &mut Db, undo: &DateUndo, ds: &str) -> Result<()> {
    let params = [
        (":run_id", Value::from(undo.of)),
        (":first", ds.into()),
        (":last", ds.into()),
    ];
    let now: Vec<Replaced> = db.rows_as(&queries::UNDO_REPLACED, &params)?;
    for model in &undo.restored {
        let holder = now
            .iter()
            .find(|r| r.model.trim_start_matches("models/") == model)
            .and_then(|r| r.holder);
        if holder != Some(undo.of) {
            let by = holder.map_or("another run".to_string(), |h| format!("run {h}"));
            return Err(Error::bad(format!(
                "{model} on {ds} was replaced by {by} after this undo read its plan, so \
                 putting back what run {} replaced would erase that; nothing of {ds} was \
                 written. Run `sqlrun undo {}` again: it skips what was replaced since",
                undo.of, undo.of
            )));
        }
    }
    Ok(())
}

/// `--interval` cut to what RUN touched; bad input when they do not meet.
fn within(asked: Interval, touched: Interval, run_id: i64) -> Result<Interval> {
    let start = asked.start.max(touched.start);
    let end = asked.end.min(touched.end);
    if start > end {
        return Err(Error::bad(format!(
            "--interval {asked}: run {run_id} touched {touched} only, so there is nothing of \
             it to undo there; give dates within {touched}, or leave --interval out to undo \
             all of it"
        )));
    }
    Ok(Interval { start, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(text: &str) -> Interval {
        Interval::parse(text).unwrap()
    }

    #[test]
    fn an_interval_is_cut_to_what_the_run_touched() {
        let touched = interval("2026-03-01..2026-03-10");
        let cut = within(interval("2026-02-25..2026-03-03"), touched, 4).unwrap();
        assert_eq!(cut, interval("2026-03-01..2026-03-03"));
        let Err(Error::BadInput(message)) = within(interval("2026-04-01"), touched, 4) else {
            panic!("outside is bad input");
        };
        assert!(
            message.contains("within 2026-03-01..2026-03-10"),
            "{message}"
        );
    }

    #[test]
    fn the_work_groups_models_by_date() {
        let p = |ds: &str, m: &str| Partition {
            ds: ds.into(),
            model: Some(m.into()),
            rows: Some(1),
        };
        let plan = UndoPlan {
            run_id: 3,
            interval: "2026-03-01..2026-03-02".into(),
            restore: vec![
                p("2026-03-01", "a"),
                p("2026-03-01", "b"),
                p("2026-03-02", "a"),
            ],
            skipped: Vec::new(),
        };
        let work = plan.work();
        assert_eq!(work.dates["2026-03-01"].restored, vec!["a", "b"]);
        assert_eq!(work.dates["2026-03-02"].of, 3);
        assert_eq!(plan.models(), vec!["a", "b"]);
        assert_eq!(plan.span(), Some(interval("2026-03-01..2026-03-02")));
    }
}
