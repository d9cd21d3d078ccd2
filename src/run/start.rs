//! A run's start: what it starts from (a new request or a reserved run, checked against
//! the calendar and rendered before anything is written), then in one transaction its row,
//! its template versions, reclaims, reservations and skips.

use std::time::Instant;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::pause;
use super::request::{Asked, Dates, NewRun, Request};
use super::undo::UndoWork;
use crate::dates::clock::today;
use crate::dates::interval::{first_unfinished, fmt_date, parse_date, Date, Interval};
use crate::db::{Db, Dialect, TxKind, Value};
use crate::error::{Error, Result};
use crate::pipeline::cascade::{self, Cascade};
use crate::pipeline::{DateVars, Pipeline};
use crate::reservations::beyond::{beyond_window, BeyondWindow};
use crate::reservations::holders::Identity;
use crate::reservations::state::{DateState, Reclaim, Selection};
use crate::reservations::{judge, take};
use crate::store::requester::Scheduler;
use crate::store::{self, timestamp, RunRow};
use crate::text::words::{RunKind, RunStatus};

/// What a run starts from: the request, and a new run or a reserved one, over `interval`.
pub struct Start<'a> {
    pub asked: &'a Asked<'a>,
    /// `apply --run`: the reserved run's row.
    pub reserved: Option<RunRow>,
    pub interval: Interval,
}

impl Start<'_> {
    pub fn request(&self) -> &Request {
        self.asked.request
    }

    pub fn new_run(&self) -> Option<&NewRun> {
        self.asked.new_run.as_ref()
    }
}

/// What starts a run (a dry one too), before anything is written: the interval (a
/// reserved run's, for `--run`), the day that has not ended (refused from a scheduler,
/// else `warn`ed), and every date's SQL rendered.
pub fn prepare<'a>(
    db: &mut Db,
    pipeline: &Pipeline,
    asked: &'a Asked<'a>,
    warn: &mut dyn FnMut(&str),
) -> Result<Start<'a>> {
    let (interval, reserved) = match (asked.request.run, &asked.new_run) {
        (Some(run_id), _) => reserved_interval(db, run_id)?,
        (None, Some(r)) => (new_run_interval(db, pipeline, r, warn)?, None),
        (None, None) => unreachable!("a new run is asked for without --run"),
    };
    // Hours asked for that have all ended are not a day in progress.
    let hours = asked.request.hours(asked.zone)?;
    refuse_hours_without_hourly_models(pipeline, asked.request, hours.is_some())?;
    let hours_ended = hours.is_some_and(|(_, end)| end <= asked.now);
    let unfinished = unfinished_day(interval, (asked.now, asked.zone), asked.request);
    if let Some(day) = unfinished.filter(|_| !hours_ended) {
        // A scheduler passing the day that has just begun is the mistake to stop. By hand,
        // a backfill that reaches into today is a request: computed, and said.
        if Scheduler::from_process().is_some() {
            return Err(Error::bad(day.refusal));
        }
        warn(&day.warning);
    }
    // Every date's SQL must render before anything is written: a template error is bad
    // input (exit 2), not a failed date. Then the pipeline's objects are created and the
    // first date's statements checked against them in one transaction, so that a refused
    // model leaves nothing behind.
    preflight(pipeline, interval, asked.now, asked.request.undo.as_ref())?;
    Ok(Start {
        asked,
        reserved,
        interval,
    })
}

/// Hours name partitions of hourly models: a pipeline without one has no partition an hour
/// could mean (its days would be computed while they are in progress, silently).
fn refuse_hours_without_hourly_models(
    pipeline: &Pipeline,
    request: &crate::run::Request,
    hours: bool,
) -> Result<()> {
    let hourly = pipeline
        .models
        .iter()
        .any(|m| m.grain == crate::dates::period::Grain::Hour);
    if !hours || hourly {
        return Ok(());
    }
    let (flag, text) = match (&request.interval, &request.as_of) {
        (Some(i), _) => ("--interval", i.as_str()),
        (None, Some(a)) => ("--as-of", a.as_str()),
        (None, None) => ("--interval", ""),
    };
    Err(Error::bad(format!(
        "{flag} {text} names an hour, and this pipeline has no hourly model (`-- grain: hour`); \
         name days instead (2026-02-09, or 2026-02-09..2026-02-11); nothing was written"
    )))
}

/// A new run's interval. For `--only` without `--interval`, the dates the database knows
/// (what `status` shows) up to the regular run's yesterday, and said: a selection by state
/// is asked of every date there is, not of yesterday alone.
fn new_run_interval(
    db: &mut Db,
    pipeline: &Pipeline,
    r: &NewRun,
    warn: &mut dyn FnMut(&str),
) -> Result<Interval> {
    let last = match r.dates {
        Dates::Interval(interval) => return Ok(interval),
        Dates::KnownUpTo(last) => last,
    };
    let only = r.selection.only().map_or("", |o| o.as_str());
    let (span, notes) = judge::known_span(db, pipeline)?;
    notes.iter().for_each(|n| warn(n));
    let interval = known_span_up_to(span, last).ok_or_else(|| {
        Error::bad(format!(
            "--only {only} without --interval looks at the dates sqlrun knows (its runs' and its \
             sources' rows) up to {}, and {}; name the dates: --interval START..END --only {only}",
            fmt_date(last),
            match span {
                None => "it knows none yet".to_string(),
                Some(s) => format!("the first it knows is {}", fmt_date(s.start)),
            }
        ))
    })?;
    warn(&format!(
        "--only {only}: looking at {interval} ({} dates), the dates sqlrun knows up to {} \
         (as `sqlrun status` shows them); --interval START..END looks at others",
        interval.len(),
        fmt_date(last)
    ));
    Ok(interval)
}

/// The known span's first date up to `last`; None when it knows no date that early.
fn known_span_up_to(span: Option<Interval>, last: Date) -> Option<Interval> {
    span.filter(|s| s.start <= last).map(|s| Interval {
        start: s.start,
        end: last,
    })
}

/// `apply --run RUN_ID`: the interval of a run made by `sqlrun reserve`, which must not
/// have started.
fn reserved_interval(db: &mut Db, run_id: i64) -> Result<(Interval, Option<RunRow>)> {
    let run = store::existing_run(db, run_id)?;
    if run.status != RunStatus::Reserved {
        return Err(Error::bad(format!(
            "run {run_id} is {}, not reserved: `apply --run` carries out a run made by `sqlrun reserve` \
             that has not started; for a new computation use `sqlrun apply --interval {}..{}`",
            run.status, run.interval_start, run.interval_end
        )));
    }
    let start = parse_date(&run.interval_start, "run interval")?;
    let end = parse_date(&run.interval_end, "run interval")?;
    Ok((Interval::new(start, end)?, Some(run)))
}

/// A date of the run that has not ended yet: what a scheduler is told (refused), and
/// what a person is told (warned).
struct UnfinishedDay {
    refusal: String,
    warning: String,
}

/// A date that has not ended yet at `now` in `zone` (the database's clock: on
/// PostgreSQL the server's) would be recorded as done with part of its rows: almost
/// always a scheduler passing the day that has just begun. None when every date has
/// ended, or `--allow-partial-day` asks for it.
fn unfinished_day(
    interval: Interval,
    (now, zone): (DateTime<Utc>, Tz),
    request: &Request,
) -> Option<UnfinishedDay> {
    let (date, ends) =
        first_unfinished(interval, now, zone).filter(|_| !request.allow_partial_day)?;
    let today = today(now, zone);
    let when = if date > today {
        "is in the future".to_string()
    } else {
        let left = (ends - now).num_minutes().max(1);
        let wait = match left {
            m if m < 120 => format!("{m} min"),
            m => format!("{} h", m / 60),
        };
        format!(
            "has not ended yet: it ends at {} {zone} (in {wait})",
            ends.with_timezone(&zone).format("%Y-%m-%d %H:%M")
        )
    };
    let asked = match (request.run, &request.interval, &request.as_of) {
        (Some(run), _, _) => format!("run {run} (reserved for {interval})"),
        (None, Some(_), _) => format!("--interval {interval}"),
        (None, None, Some(as_of)) => format!("--as-of {as_of} (its yesterday is {interval})"),
        (None, None, None) => format!("the regular run ({interval})"),
    };
    // A month or a year reaches far into the future as easily as into today: say how far.
    let later = match (interval.end - date).num_days() {
        0 => String::new(),
        1 => format!(
            " (the same holds for the date after it, {})",
            fmt_date(interval.end)
        ),
        n => format!(
            " (the same holds for the {n} dates after it, up to {})",
            fmt_date(interval.end)
        ),
    };
    let ds = fmt_date(date);
    let when = format!("{when}{later}");
    let last_ended = today
        .pred_opt()
        .map_or_else(|| "yesterday".into(), fmt_date);
    Some(UnfinishedDay {
        refusal: format!(
            "{ds} {when}; {asked} would record a partial day as done. Usually a scheduler \
             passed the day that has just begun: with Airflow 3's default @daily schedule \
             `{{{{ ds }}}}` is today: the regular run for the day that ended is `--as-of \
             {{{{ ds }}}}`, a backfill of it `--interval {{{{ macros.ds_add(ds, -1) }}}}` (see \
             the README, \"Driving sqlrun from Airflow\"). Compute dates up to \
             {last_ended}, or pass --allow-partial-day to compute it anyway"
        ),
        warning: format!(
            "warning: {ds} {when}: its rows so far are computed, and it shows as changed when \
             more arrive (`--lookback` or `--only changed` recomputes it). Started by a \
             scheduler this is refused; --allow-partial-day says it is meant"
        ),
    })
}

/// Template errors are bad input (exit 2), not failed dates: before anything is written,
/// every date of the interval is rendered (the first one's statements are then prepared
/// by `Pipeline::sync_checking`, which finds SQL syntax errors and unknown tables or
/// columns). `now` stands in for each date's start, which its transaction reads.
fn preflight(
    pipeline: &Pipeline,
    interval: Interval,
    now: DateTime<Utc>,
    undo: Option<&UndoWork>,
) -> Result<()> {
    let started_at = timestamp(now);
    for (i, date) in interval.dates().enumerate() {
        let ds = fmt_date(date);
        let undo = match undo {
            // An undo renders its own dates, each with what it puts back.
            Some(work) => match work.dates.get(&ds) {
                Some(date_undo) => Some(date_undo),
                None => continue,
            },
            None => None,
        };
        for sealed in [false, true] {
            if sealed && i > 0 {
                continue;
            }
            pipeline.render_date(&DateVars {
                ds: &ds,
                run_id: 0,
                sealed,
                uncovered: &[],
                started_at: &started_at,
                lease_seconds: 0,
                undo,
                parts: None,
            })?;
        }
    }
    Ok(())
}

/// A run begun: its row written and its dates reserved.
pub struct Begun {
    pub run_id: i64,
    pub kind: RunKind,
    /// The dead holders' dates it reclaimed.
    pub reclaimed: Vec<Reclaim>,
    /// With `--lookback`: the older dates that need work, taken or left to their holder.
    pub looked_back: Vec<DateState>,
    /// With `--lookback`: what needs work before its window (the run leaves it).
    pub beyond_window: Option<BeyondWindow>,
    /// When it began, for how long it took (`runs.took_ms`).
    pub clock: Instant,
    /// What it builds, by date, when the pipeline has other grains or windows.
    pub cascade: Option<Cascade>,
}

/// One transaction: the run row, its template versions, reclaims, reservations, skips.
pub fn begin(db: &mut Db, pipeline: &Pipeline, start: &Start) -> Result<Begun> {
    let me = Identity::current();
    let clock = Instant::now();
    db.transaction(TxKind::Exclusive, |db| {
        let (run_id, kind) = start_run(db, pipeline, start, &me)?;
        // Taken before the run row becomes visible: nobody can see it running and gone.
        db.hold_run(run_id)?;
        crate::pipeline::versions::record_versions(db, &pipeline.templates, run_id)?;
        // Under the lock again (a model may have been retired meanwhile); the run's
        // model versions are the current ones.
        crate::pipeline::models::record(db, pipeline, Some(run_id))?;
        let reclaimed = take::sweep(db, pipeline, &me, Some(run_id))?;
        let (selected, narrowed, looked_back) = match &start.request().undo {
            // An undo takes on the dates it puts back, no other of its interval; with the
            // cascade, exactly its partitions starting there, then what reads them.
            Some(work) => (
                work.dates.keys().cloned().collect(),
                work.narrowed()?,
                Vec::new(),
            ),
            None => select_dates(db, pipeline, start.interval, start.new_run(), run_id)?,
        };
        // In the same snapshot as the look back's own dates, so that the two cannot overlap
        // or leave a date between them.
        let beyond_window = match start.new_run().and_then(|r| r.selection.lookback()) {
            Some(_) => Some(beyond_window(db, pipeline, start.interval.start)?),
            None => None,
        };
        // On PostgreSQL a run holds its dates without a lease: a running run there is
        // alive exactly while its session is, and renewing a lease as each date commits
        // would have a date's transaction update the run's other reservation rows, which a
        // release beside it is deleting (a serialization failure) or which that update
        // would lock (so the release could free none of them).
        let lease = (db.dialect() == Dialect::Sqlite).then(take::lease_seconds);
        let cascade = match cascade::needed(pipeline) {
            true => Some(plan_cascade(pipeline, start, &selected, &narrowed)?),
            false => None,
        };
        // A cascade reserves the dates its partitions are built on: those asked for, and
        // the later ones where the weeks, months and rolling days they feed are built.
        let selected = match &cascade {
            Some(c) => c.dates.keys().map(|d| fmt_date(*d)).collect(),
            None => selected,
        };
        take::reserve(db, pipeline, run_id, &selected, lease)?;
        pause::reached(pause::Point::Reserving);
        Ok(Begun {
            run_id,
            kind,
            reclaimed,
            looked_back,
            beyond_window,
            clock,
            cascade,
        })
    })
}

/// The cascade of the dates a run takes on: every model's periods that lie in them, then
/// what those feed downstream (unless `--no-downstream`), each only once its period has
/// ended by `--as-of` (its midnight) or now, unless `--allow-partial`.
pub fn plan_cascade(
    pipeline: &Pipeline,
    start: &Start,
    selected: &[String],
    narrowed: &cascade::Narrowed,
) -> Result<Cascade> {
    let asked = start.asked;
    let days = selected
        .iter()
        .map(|d| parse_date(d, "date"))
        .collect::<Result<std::collections::BTreeSet<Date>>>()?;
    let request = asked.request;
    let regular = request.interval.is_none() && request.run.is_none() && !request.hourly()?;
    let ended_by = request.ended_by(asked.zone, asked.now)?;
    Ok(cascade::plan(&cascade::Ask {
        pipeline,
        zone: asked.zone,
        days: &days,
        downstream: !asked.request.no_downstream,
        ended_by,
        partial: asked.request.allow_partial_day,
        closing: regular.then_some(start.interval.end),
        hours: request.hours(asked.zone)?,
        narrowed,
    }))
}

/// The run row: a new running run, or a reserved run that starts now. Its id and kind.
fn start_run(
    db: &mut Db,
    pipeline: &Pipeline,
    start: &Start,
    me: &Identity,
) -> Result<(i64, RunKind)> {
    let request = start.request();
    let dialect = db.dialect().as_str();
    let selected = (!request.select.is_empty()).then(|| request.select.join(","));
    let holder = [
        (":keep_going", Value::from(request.keep_going)),
        (":selected", Value::opt_text(selected.as_deref())),
        (":templates_from", pipeline.templates.origin.as_str().into()),
        (":version", env!("CARGO_PKG_VERSION").into()),
        (":host", me.host.as_str().into()),
        (":pid", i64::from(me.pid).into()),
        (":pid_started", me.started.as_str().into()),
        (":dialect", dialect.into()),
        (":jobs", i64::from(request.asked_jobs()).into()),
    ];
    match (&start.reserved, start.new_run()) {
        (Some(run), _) => {
            let mut params = vec![(":run_id", Value::from(run.run_id))];
            params.extend(holder);
            if db.execute(&crate::store::queries::START_RESERVED_RUN, &params)? != 1 {
                return Err(Error::bad(format!(
                    "run {} stopped being reserved meanwhile (released, or started by another process); see `sqlrun runs {}`",
                    run.run_id, run.run_id
                )));
            }
            let kind = RunKind::parse(&run.kind).ok_or_else(|| {
                Error::bad(format!("run {}: unknown kind `{}`", run.run_id, run.kind))
            })?;
            Ok((run.run_id, kind))
        }
        (None, Some(r)) => {
            let mut params = new_run_params(r, start.interval);
            params.extend(holder);
            Ok((store::insert_run(db, &params)?, r.kind))
        }
        (None, None) => unreachable!("a new run is asked for without --run"),
    }
}

/// A new run's own columns, over `interval`.
fn new_run_params(r: &NewRun, interval: Interval) -> Vec<(&'static str, Value)> {
    vec![
        (":kind", Value::from(r.kind.as_str())),
        (":start", fmt_date(interval.start).into()),
        (":end", fmt_date(interval.end).into()),
        (":by", r.by.as_str().into()),
        (":reason", Value::opt_text(r.reason.as_deref())),
        (":status", "running".into()),
        (
            ":only",
            Value::opt_text(r.selection.only().map(|o| o.as_str())),
        ),
        (
            ":lookback",
            r.selection
                .lookback()
                .map_or(Value::Null, |n| i64::from(n).into()),
        ),
        (":command", store::command_line().into()),
    ]
}

/// The dates a run takes on: those of the interval its `--only` (or `--lookback`)
/// selects, or, for a reserved run, what it holds. With `--lookback`, also the older
/// dates that need work, taken or left to the run that holds them.
fn select_dates(
    db: &mut Db,
    pipeline: &Pipeline,
    interval: Interval,
    new_run: Option<&NewRun>,
    run_id: i64,
) -> Result<(Vec<String>, cascade::Narrowed, Vec<DateState>)> {
    let Some(r) = new_run else {
        // A reserved run's own dates: those of its interval (a cascade's later dates,
        // which it holds too, are planned again from these).
        let held = take::held_by_run(db, run_id)?;
        let own = held
            .into_iter()
            .filter(|d| parse_date(d, "date").is_ok_and(|d| interval.contains(d)))
            .collect();
        return Ok((own, cascade::Narrowed::new(), Vec::new()));
    };
    if matches!(r.selection, Selection::Only(None)) {
        // Every date asked for, whatever its state: nothing to judge (on PostgreSQL the
        // judging query costs a short run a tenth of its time, most of it planning).
        let every = interval.dates().map(fmt_date).collect();
        return Ok((every, cascade::Narrowed::new(), Vec::new()));
    }
    let states = judge::date_states(db, pipeline, interval)?;
    let taken: Vec<&DateState> = states
        .iter()
        .filter(|s| s.selected_by(&r.selection))
        .collect();
    let narrowed = narrowed(&taken, &r.selection)?;
    let selected = taken.iter().map(|s| s.ds.clone()).collect();
    let looked_back = states
        .into_iter()
        .filter(|s| r.selection.looks_back_at(&s.ds) && s.needs_work())
        .collect();
    Ok((selected, narrowed, looked_back))
}

/// The dates taken for `upstream` or `changed` alone, each with the models to rebuild
/// there.
pub fn narrowed(taken: &[&DateState], selection: &Selection) -> Result<cascade::Narrowed> {
    let mut out = cascade::Narrowed::new();
    for state in taken {
        if let Some(models) = state.narrowed_to(selection) {
            out.insert(parse_date(&state.ds, "date")?, models.into_iter().collect());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(text: &str) -> Interval {
        Interval::parse(text).unwrap()
    }

    #[test]
    fn the_known_span_runs_from_its_first_date_to_the_last_day_asked() {
        let last = parse_date("2026-11-30", "test").unwrap();
        let span = |t| known_span_up_to(Some(interval(t)), last);
        // Source rows dated today or later are not looked at: those days have not ended.
        assert_eq!(
            span("2026-11-01..2026-12-02"),
            Some(interval("2026-11-01..2026-11-30"))
        );
        // Dates not computed since the last one known are looked at too (--only missing).
        assert_eq!(
            span("2026-10-01..2026-10-05"),
            Some(interval("2026-10-01..2026-11-30"))
        );
        assert_eq!(span("2026-11-30"), Some(interval("2026-11-30")));
        assert_eq!(span("2026-12-01..2026-12-03"), None);
        assert_eq!(known_span_up_to(None, last), None);
    }
}
