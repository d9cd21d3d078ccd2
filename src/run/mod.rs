//! A run's life in parts: one code path for the regular run and every backfill. Reserve
//! the dates first (one transaction), then each date in ascending order in its own
//! transaction: replace (or, sealed, correct) every model, record the date, release its
//! reservation. With `--jobs N` (PostgreSQL), N workers take the dates in that order.
//!
//! - `request`: what was asked, as plain values, with the project's defaults, checked;
//! - `start`: what the run starts from, then its row and reservations (one transaction);
//! - `each_date`: the per-date loop, on the sessions of `workers`;
//! - `signals`: a signal stops the run cleanly; `pause`: a test aid at points of its life;
//! - `outcome`: how a date ended and how a run ended (one type each);
//! - `in_doubt`: a date whose COMMIT failed (SQLite), as the database holds it after;
//! - `finish`: the one way out, whatever stopped the run;
//! - `dry_run`: the plan instead of the run;
//! - `preview`: `apply --diff`, each date computed and rolled back; `changed`: `sqlrun diff
//!   RUN`, what a run changed, from history; `diff`, the table of what changed per model
//!   and partition that both show.
//!
//! Values in, values out: no clap type and no printing here. What a watcher sees while a
//! run goes (notes, a line per date) is told to a `Progress` the caller gives; how the
//! run ended is returned, for output to render.

pub mod changed;
pub mod diff;
mod dry_run;
mod each_date;
mod finish;
pub mod history;
mod in_doubt;
mod outcome;
pub mod pause;
pub mod plan;
pub mod preview;
pub mod render;
mod request;
mod signals;
mod start;
pub mod undo;
mod workers;

pub use dry_run::Plan;
pub(crate) use each_date::date_start;
pub use outcome::{DateOutcome, RunOutcome};
pub use preview::{preview, Preview};
pub use request::{Asked, Checked, Request};

use crate::dates::interval::{fmt_date, Interval};
use crate::db::{Db, Dialect, RowShape, Target, TxKind};
use crate::error::Result;
use crate::pipeline::Pipeline;
use crate::reservations::beyond::BeyondWindow;
use crate::reservations::state::{DateState, Reclaim, Skip};
use crate::reservations::take;

use each_date::Worker;
use finish::Ran;
use signals::SignalGuard;

/// The rows a run and the audit trail read, for the test that prepares each statement
/// against a real schema (each file keeps its own list beside its row structs).
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    let mut shapes = each_date::row_shapes(dialect);
    shapes.extend(render::row_shapes(dialect));
    shapes.extend(history::row_shapes(dialect));
    shapes.extend(changed::query_shapes(dialect));
    shapes.extend(undo::row_shapes(dialect));
    shapes
}

/// The same for the statements rendered for a pipeline's models (`sqlrun diff`'s list of
/// the partitions a run replaced).
pub fn template_row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    changed::row_shapes(pipeline)
}

/// What a watcher of a run is told while it goes, in this order; a run that tells
/// nobody passes `&mut ()`.
pub trait Progress {
    /// A line to be seen (a warning, what bringing the pipeline up to date did).
    fn note(&mut self, line: &str);
    /// The database and templates the run uses, once they are ready.
    fn ready(&mut self, target: &Target, pipeline: &Pipeline);
    /// The dead holders' dates the run reclaimed as it reserved its own.
    fn reclaimed(&mut self, reclaimed: &[Reclaim]);
    /// A look back of `days` over `interval`: the older dates that need work, taken or
    /// left to their holder, and what needs work before the window (`beyond`).
    fn looked_back(
        &mut self,
        days: u32,
        interval: Interval,
        dates: &[DateState],
        beyond: &BeyondWindow,
    );
    /// The dates it skips: another live run holds them.
    fn skipped(&mut self, skips: &[Skip]);
    /// The run takes on `count` dates now.
    fn dates(&mut self, count: usize);
    /// A date ended.
    fn date_done(&mut self, date: &DateOutcome);
    /// No more dates are taken.
    fn dates_done(&mut self);
}

/// Nobody watching (the demo).
impl Progress for () {
    fn note(&mut self, _: &str) {}
    fn ready(&mut self, _: &Target, _: &Pipeline) {}
    fn reclaimed(&mut self, _: &[Reclaim]) {}
    fn looked_back(&mut self, _: u32, _: Interval, _: &[DateState], _: &BeyondWindow) {}
    fn skipped(&mut self, _: &[Skip]) {}
    fn dates(&mut self, _: usize) {}
    fn date_done(&mut self, _: &DateOutcome) {}
    fn dates_done(&mut self) {}
}

/// `apply --dry-run`: the plan. The plan may need the pipeline's new objects to read;
/// they are made, used and rolled back: a dry run writes nothing.
pub fn dry_run(
    db: &mut Db,
    pipeline: &Pipeline,
    asked: &Asked,
    progress: &mut dyn Progress,
) -> Result<Plan> {
    let start = start::prepare(db, pipeline, asked, &mut |line| progress.note(line))?;
    let first = fmt_date(start.interval.start);
    db.rolled_back(TxKind::Exclusive, |db| {
        if !pipeline.is_current(db)? {
            pipeline.sync_in(db, Some(&first))?;
        }
        dry_run::plan(db, pipeline, &start)
    })
}

/// `apply`: the run, from its start to its one way out. `Err`: it stopped before it
/// began (nothing written); a run that began ends in a `RunOutcome`, which carries the
/// error it stopped short with, if any.
pub fn apply(
    target: &Target,
    pipeline: &Pipeline,
    db: &mut Db,
    asked: &Asked,
    progress: &mut dyn Progress,
) -> Result<RunOutcome> {
    let start = start::prepare(db, pipeline, asked, &mut |line| progress.note(line))?;
    let first = fmt_date(start.interval.start);
    // The workers beside the run's own session get sessions of their own, opened
    // before anything is written (a server out of connections is exit 2, nothing written).
    let jobs = asked.jobs;
    let mut others = workers::open_sessions(target, jobs.min(start.interval.len()) - 1, jobs)?;
    for note in pipeline.sync_checking(db, Some(&first))? {
        progress.note(&note);
    }
    progress.ready(&db.target, pipeline);
    if let Some(note) = crate::reservations::judge::no_source_rows(db, pipeline, start.interval)? {
        progress.note(&note);
    }
    // From here on a signal stops the run cleanly instead of killing the process.
    let interrupters = std::iter::once(&*db)
        .chain(&others)
        .map(Db::interrupter)
        .collect();
    let bound = asked
        .request
        .stop_within
        .map(|s| std::time::Duration::from_secs(s.into()));
    let signal = SignalGuard::install(interrupters, bound);
    let begun = start::begin(db, pipeline, &start)?;
    pause::reached(pause::Point::Reserved);
    progress.reclaimed(&begun.reclaimed);
    let days = start.new_run().and_then(|r| r.selection.lookback());
    if let (Some(days), Some(beyond)) = (days, &begun.beyond_window) {
        progress.looked_back(days, start.interval, &begun.looked_back, beyond);
    }
    // Said at once, not only in the summary at the end: a long backfill's watcher (and a
    // run killed before its end) must not keep a skip unsaid.
    let skips = take::skipped_of_run(db, begun.run_id)?;
    progress.skipped(&skips);

    let work = take::held_by_run(db, begun.run_id)?;
    let worker = Worker {
        pipeline,
        run_id: begun.run_id,
        keep_going: asked.request.keep_going,
        selection: start.new_run().map(|r| r.selection.clone()),
        signal: signal.signal(),
        clock: asked.clock,
        undo: asked.request.undo.as_ref(),
        cascade: begun.cascade.as_ref().map(|c| (c, asked.zone)),
    };
    // A cascade's dates read each other's partitions (a month its days, a rolling day the
    // days before it): its workers take them in order, each once the dates it reads have
    // ended (each_date::compute_dates).
    let sessions = std::iter::once(&mut *db).chain(&mut others).collect();
    let (dates, stops) = each_date::compute_dates(sessions, &work, &worker, progress);
    signal.finishing();
    drop(others);
    let ran = Ran {
        begun,
        interval: start.interval,
        skips,
        dates,
        stops,
    };
    Ok(finish::finish(db, pipeline, ran, signal))
}
