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
//! A pipeline of other grains or windows: RUN's partitions reach outside its interval (its
//! month from the 1st, its rolling days after it), so all of them are read, and the run's
//! cascade is planned from them (`UndoWork::narrowed`): each is built on its anchor date,
//! in dependency order, from history, and what reads it that RUN did not build (RUN was
//! `--no-downstream`) is rebuilt by its own SQL in the same run.
//!
//! Values in, values out: no clap type and no printing here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use chrono_tz::Tz;

use crate::dates::interval::{fmt_date, parse_date, Date, Interval};
use crate::dates::period::{Grain, Period};
use crate::db::{Db, Dialect, RowShape, Value};
use crate::error::{Error, Result};
use crate::pipeline::cascade::{self, Narrowed};
use crate::pipeline::{DateUndo, Pipeline};
use crate::store::{self, queries};
use crate::text::words::{RunKind, RunStatus};

/// What an undo's run does on each of its dates (`Request::undo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoWork {
    /// RUN, the run undone.
    pub of: i64,
    /// The dates it takes on, each with the models it puts back there (with the cascade:
    /// the first days of the partitions it puts back, each with their models).
    pub dates: BTreeMap<String, DateUndo>,
    /// With the cascade: by first day, the models whose partitions starting there RUN
    /// built and this run rebuilds by their SQL (`UndoPlan::rebuild`).
    pub rebuilt: BTreeMap<String, Vec<String>>,
}

impl UndoWork {
    /// What date `ds` of the undo's run puts back there: with the cascade, a date may
    /// only rebuild what reads a partition put back (nothing of its own is).
    pub fn on(&self, ds: &str) -> DateUndo {
        DateUndo {
            of: self.of,
            restored: self
                .dates
                .get(ds)
                .map(|d| d.restored.clone())
                .unwrap_or_default(),
        }
    }

    /// Whether the partition of `model` whose period starts on `first` is put back.
    pub fn restores(&self, model: &str, first: &str) -> bool {
        self.dates
            .get(first)
            .is_some_and(|d| d.restored.iter().any(|m| m == model))
    }

    /// The cascade's ask: on each first day, the models whose partitions starting there
    /// are put back, alone (not the day's other models).
    pub fn narrowed(&self) -> Result<Narrowed> {
        let mut out = Narrowed::new();
        let restored = self.dates.iter().map(|(ds, d)| (ds, &d.restored));
        for (ds, models) in restored.chain(&self.rebuilt) {
            let day = out.entry(parse_date(ds, "date")?).or_default();
            day.extend(models.iter().cloned());
        }
        Ok(out)
    }
}

/// With the cascade: what the undo would rebuild by its own SQL because it reads a
/// partition put back (RUN was `--no-downstream`, or `--interval` leaves out a month that
/// reads its days), as `--dry-run` shows a cascade. Empty for a pipeline of days.
pub fn downstream(pipeline: &Pipeline, plan: &UndoPlan, zone: Tz) -> Result<Vec<cascade::Reach>> {
    if !cascade::needed(pipeline) || plan.is_empty() {
        return Ok(Vec::new());
    }
    let narrowed = plan.work().narrowed()?;
    let days = narrowed.keys().copied().collect();
    let planned = cascade::plan(&cascade::Ask::now(pipeline, zone, &days, &narrowed));
    let reaches = cascade::reaches(pipeline, &planned, zone);
    Ok(reaches.into_iter().filter(|r| r.why != "asked").collect())
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
    /// The first day of its period (what the bookkeeping is keyed by).
    pub ds: String,
    /// A week's, a month's label (`2026-W07`, `2026-02`): how the plan shows it. None for a
    /// day, whose label is `ds` (a pipeline of days shows and says what it always did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
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
    /// With the cascade: partitions RUN built that read one of RUN's that is not put back
    /// (replaced since): their old rows were computed from what is no longer there, so
    /// they are rebuilt by their own SQL from what is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rebuild: Vec<Partition>,
    pub skipped: Vec<Skipped>,
}

impl UndoPlan {
    /// Nothing left to put back (an undo done twice: the first one replaced everything).
    pub fn is_empty(&self) -> bool {
        self.restore.is_empty() && self.rebuild.is_empty()
    }

    /// The models put back, each once, in the pipeline's order.
    pub fn models(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .restore
            .iter()
            .chain(&self.rebuild)
            .filter_map(|p| p.model.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The dates put back, first to last.
    pub fn span(&self) -> Option<Interval> {
        let mut days = self
            .restore
            .iter()
            .chain(&self.rebuild)
            .filter_map(|p| parse_date(&p.ds, "date").ok());
        let first = days.next()?;
        let (start, end) = days.fold((first, first), |(a, b), d| (a.min(d), b.max(d)));
        Some(Interval { start, end })
    }

    /// The run's work: each date and the models it puts back there.
    pub fn work(&self) -> UndoWork {
        let of = self.run_id;
        let mut dates: BTreeMap<String, DateUndo> = BTreeMap::new();
        for p in &self.restore {
            let date = dates.entry(p.ds.clone()).or_insert_with(|| DateUndo {
                of: self.run_id,
                restored: Vec::new(),
            });
            date.restored.extend(p.model.clone());
        }
        let mut rebuilt: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for p in &self.rebuild {
            rebuilt
                .entry(p.ds.clone())
                .or_default()
                .extend(p.model.clone());
        }
        UndoWork { of, dates, rebuilt }
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
/// a run that replaced nothing. `zone`: the project's, where periods are.
pub fn plan(db: &mut Db, pipeline: &Pipeline, ask: &UndoAsk, zone: Tz) -> Result<UndoPlan> {
    let run_id = ask.run_id;
    let run = undoable(db, run_id)?;
    let asked_of_run = Interval::new(
        parse_date(&run.interval_start, "run interval")?,
        parse_date(&run.interval_end, "run interval")?,
    )?;
    let cascaded = cascade::needed(pipeline);
    let (replaced, unreplaced) = read(db, run_id, asked_of_run, cascaded)?;
    if replaced.is_empty() && unreplaced.is_empty() {
        return Err(Error::bad(format!(
            "run {run_id} ({} {asked_of_run}, {}) replaced no partition: there is nothing of \
             it to undo; `sqlrun runs {run_id}` shows how each of its dates ended, and `sqlrun \
             undo` takes a run that computed dates",
            run.kind, run.status
        )));
    }
    // A cascaded run touched the periods of its partitions, not only the days it was asked.
    let periods: Vec<Period> = replaced
        .iter()
        .map(|r| period_of(pipeline, &r.model, &r.ds, zone))
        .collect::<Result<_>>()?;
    let touched = periods.iter().fold(asked_of_run, |t, p| Interval {
        start: t.start.min(p.first_day(zone)),
        end: t.end.max(p.last_day(zone)),
    });
    let interval = match &ask.interval {
        None => touched,
        Some(text) => within(Interval::parse(text)?, touched, run_id)?,
    };
    // A partition is undone when its whole period lies in the interval (as an interval
    // selects partitions); a day's period is its date.
    let inside =
        |p: &Period| interval.contains(p.first_day(zone)) && interval.contains(p.last_day(zone));
    let mut plan = UndoPlan {
        run_id,
        interval: interval.to_string(),
        restore: Vec::new(),
        rebuild: Vec::new(),
        skipped: Vec::new(),
    };
    for (r, p) in replaced
        .into_iter()
        .zip(&periods)
        .filter(|(_, p)| inside(p))
    {
        let (partition, why) = judged(pipeline, run_id, r, *p, zone);
        match why {
            None => plan.restore.push(partition),
            Some(why) => plan.skipped.push(Skipped { partition, why }),
        }
    }
    // A cascaded date may build only a month or rolling days whose first day is another:
    // it replaced something, under that first day.
    let covered = |d: Date| {
        periods
            .iter()
            .any(|p| p.first_day(zone) <= d && d <= p.last_day(zone))
    };
    for u in unreplaced {
        let Ok(day) = parse_date(&u.ds, "date") else {
            continue;
        };
        let why = match u.status.as_str() {
            "corrected" => Why::Corrected,
            _ if cascaded && covered(day) => continue,
            _ => Why::Pruned,
        };
        if !interval.contains(day) {
            continue;
        }
        let partition = Partition {
            ds: u.ds,
            period: None,
            model: None,
            rows: None,
        };
        plan.skipped.push(Skipped { partition, why });
    }
    plan.skipped
        .sort_by(|a, b| a.partition.ds.cmp(&b.partition.ds));
    if cascaded {
        demote(pipeline, &mut plan, zone)?;
    }
    Ok(plan)
}

/// Moves to `rebuild` each partition to put back that reads (through its windows, across
/// grains) a partition of RUN that stays as it is (replaced since, or on a date sealed when
/// RUN ran, whose corrections stand) or is rebuilt itself: the rows RUN replaced there
/// were computed from inputs no longer there. Models come in dependency order, so one
/// pass carries it downstream.
fn demote(pipeline: &Pipeline, plan: &mut UndoPlan, zone: Tz) -> Result<()> {
    let mut gone: Vec<(String, Period)> = Vec::new();
    for s in &plan.skipped {
        let ds = &s.partition.ds;
        match (&s.partition.model, s.why) {
            (Some(model), Why::ReplacedSince(_)) => {
                gone.push((model.clone(), period_of(pipeline, model, ds, zone)?));
            }
            // Every partition that starts on a corrected date keeps its corrections.
            (None, Why::Corrected) => {
                for m in pipeline.computed_models() {
                    let period = period_of(pipeline, &m.name, ds, zone)?;
                    if fmt_date(period.first_day(zone)) == *ds {
                        gone.push((m.name.clone(), period));
                    }
                }
            }
            _ => {}
        }
    }
    // By instants: an hourly model's partitions are kept per day, and periods of different
    // grains do not order by their own Ord.
    let within = |q: &Period, (a, b): (Period, Period)| {
        q.begins(zone) < b.ends(zone) && a.begins(zone) < q.ends(zone)
    };
    for model in &pipeline.models {
        let mut kept = Vec::new();
        for p in std::mem::take(&mut plan.restore) {
            if p.model.as_deref() != Some(model.name.as_str()) {
                kept.push(p);
                continue;
            }
            let period = period_of(pipeline, &model.name, &p.ds, zone)?;
            let reads_gone = model.reads.iter().filter(|r| !r.source).any(|r| {
                let span = pipeline
                    .model(&r.from)
                    .and_then(|theirs| cascade::reads(period, r, theirs.grain, zone));
                span.is_some_and(|span| gone.iter().any(|(m, q)| *m == r.from && within(q, span)))
            });
            match reads_gone {
                true => {
                    gone.push((model.name.clone(), period));
                    plan.rebuild.push(p);
                }
                false => kept.push(p),
            }
        }
        plan.restore = kept;
    }
    Ok(())
}

/// RUN's row, when RUN may be undone: it has ended, and an undo is the latest one.
fn undoable(db: &mut Db, run_id: i64) -> Result<store::RunRow> {
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
    Ok(run)
}

/// The period of a partition RUN replaced, from its model's grain and first day; an
/// hourly model's bookkeeping is per local day, and a model no longer in the pipeline
/// is taken as a day.
fn period_of(pipeline: &Pipeline, model: &str, ds: &str, zone: Tz) -> Result<Period> {
    let name = model.trim_start_matches("models/");
    let grain = match pipeline.model(name).map(|m| m.grain) {
        Some(Grain::Hour) | None => Grain::Day,
        Some(grain) => grain,
    };
    Ok(Period::of_date(grain, parse_date(ds, "date")?, zone))
}

/// A partition RUN replaced, as the plan shows it, and why it is not put back (None: it
/// is).
fn judged(
    pipeline: &Pipeline,
    run_id: i64,
    r: Replaced,
    period: Period,
    zone: Tz,
) -> (Partition, Option<Why>) {
    let name = r.model.trim_start_matches("models/").to_string();
    let label = period.label(zone);
    let partition = Partition {
        period: (label != r.ds).then_some(label),
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
    (partition, why)
}

/// What RUN replaced over its interval, and its dates with nothing replaced left. With the
/// cascade, all of it: its partitions reach outside its interval (a month from its 1st,
/// rolling days after it), and its dates with them.
fn read(
    db: &mut Db,
    run_id: i64,
    asked: Interval,
    cascaded: bool,
) -> Result<(Vec<Replaced>, Vec<Unreplaced>)> {
    let (first, last) = match cascaded {
        true => ("0001-01-01".to_string(), "9999-12-31".to_string()),
        false => (fmt_date(asked.start), fmt_date(asked.end)),
    };
    let params = [
        (":run_id", Value::from(run_id)),
        (":first", first.into()),
        (":last", last.into()),
    ];
    let replaced = db.rows_as(&queries::UNDO_REPLACED, &params)?;
    let unreplaced = db.rows_as(&queries::UNDO_UNREPLACED, &params)?;
    Ok((replaced, unreplaced))
}

/// Inside the date's transaction, once the run holds the date: each partition it puts
/// back (model and first day) still holds RUN's rows. The plan was read before the dates
/// were reserved, and a run that replaced one in between must not be overwritten: the
/// date fails instead, writing nothing, and the next `sqlrun undo RUN` skips that
/// partition.
pub fn still_holds(db: &mut Db, of: i64, parts: &[(String, String)]) -> Result<()> {
    let (Some(first), Some(last)) = (
        parts.iter().map(|(_, ds)| ds).min(),
        parts.iter().map(|(_, ds)| ds).max(),
    ) else {
        return Ok(());
    };
    let params = [
        (":run_id", Value::from(of)),
        (":first", first.as_str().into()),
        (":last", last.as_str().into()),
    ];
    let now: Vec<Replaced> = db.rows_as(&queries::UNDO_REPLACED, &params)?;
    for (model, ds) in parts {
        let holder = now
            .iter()
            .find(|r| r.model.trim_start_matches("models/") == model && &r.ds == ds)
            .and_then(|r| r.holder);
        if holder != Some(of) {
            let by = holder.map_or("another run".to_string(), |h| format!("run {h}"));
            return Err(Error::bad(format!(
                "{model} on {ds} was replaced by {by} after this undo read its plan, so \
                 putting back what run {of} replaced would erase that; nothing of {ds} was \
                 written. Run `sqlrun undo {of}` again: it skips what was replaced since"
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
            period: None,
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
            rebuild: Vec::new(),
            skipped: Vec::new(),
        };
        let work = plan.work();
        assert_eq!(work.dates["2026-03-01"].restored, vec!["a", "b"]);
        assert_eq!(work.dates["2026-03-02"].of, 3);
        assert_eq!(plan.models(), vec!["a", "b"]);
        assert_eq!(plan.span(), Some(interval("2026-03-01..2026-03-02")));
    }
}
