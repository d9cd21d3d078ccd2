//! `sqlrun apply`: one code path for the regular run and every backfill. Reserve the dates
//! first (one transaction), then each date in ascending order in its own transaction:
//! replace (or, sealed, correct) every model, record the date, release its reservation.
//! With `--jobs N` (PostgreSQL), N workers take the dates in that order (src/workers.rs).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use chrono_tz::Tz;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::ApplyArgs;
use crate::dates::{DateState, Selection, Skip};
use crate::db::{Db, DbError, DbErrorKind, Dialect, Interrupter, Target, TxKind, Value};
use crate::error::{CommittedDate, Error, Result};
use crate::exit::Exit;
use crate::holder::Identity;
use crate::interval::{first_unfinished, fmt_date, parse_date, today_in, Interval};
use crate::pause;
use crate::pipeline::{DateVars, Pipeline};
use crate::plan;
use crate::queries;
use crate::report::{self, ApplyReport, DateOutcome, Output};
use crate::requester::{default_user, Scheduler};
use crate::reserve::{self, Reclaim};
use crate::settings::Settings;
use crate::store::{self, now};
use crate::vocabulary::{DateStatus, RunStatus};
use crate::vocabulary::{OnlyFilter as Only, RunKind as Kind};
use crate::workers::{self, Halt, Step, Stop};

/// What `apply` was asked to do, validated before the database is touched.
struct Request {
    interval: Interval,
    kind: Kind,
    by: String,
    reason: Option<String>,
    selection: Selection,
}

pub fn run(global: &Settings, args: &ApplyArgs, out: &mut Output) -> Result<Exit> {
    let args = &global.apply.fill(args);
    let request = match args.run {
        Some(_) => None,
        None => Some(request_from(args, global.timezone)?),
    };
    let target = store::target(global)?;
    let jobs = jobs(args, &target)?;
    let mut pipeline = Pipeline::load(global.templates.as_deref(), target.dialect())?;
    if !args.select.is_empty() {
        pipeline.select(&args.select)?;
    }
    let mut db = Db::open(&target)?;
    let (interval, reserved_run) = match (args.run, &request) {
        (Some(run_id), _) => reserved_interval(&mut db, run_id)?,
        (None, Some(r)) => (r.interval, None),
        (None, None) => unreachable!("a request exists without --run"),
    };

    if let Some(day) = unfinished_day(interval, global.timezone, args) {
        // A scheduler passing the day that has just begun is the mistake to stop. By hand,
        // a backfill that reaches into today is a request: computed, and said.
        if Scheduler::from_process().is_some() {
            return Err(Error::bad(day.refusal));
        }
        out.note(&day.warning);
    }
    // Every date's SQL must render before anything is written: a template error is bad
    // input (exit 2), not a failed date. Then the pipeline's objects are created and the
    // first date's statements checked against them in one transaction, so that a refused
    // model leaves nothing behind.
    preflight(&pipeline, interval)?;
    let first = fmt_date(interval.start);
    let (request, reserved_run) = (request.as_ref(), reserved_run.as_ref());
    let start = Start {
        args,
        request,
        reserved: reserved_run,
        interval,
    };
    if args.dry_run {
        // The plan may need the pipeline's new objects to read; they are made, used and
        // rolled back: a dry run writes nothing.
        let (steps, sql) = db.rolled_back(TxKind::Exclusive, |db| {
            if !pipeline.is_current(db)? {
                pipeline.sync_in(db, Some(&first))?;
            }
            dry_run(db, &pipeline, &start)
        })?;
        // Said once the transaction has ended: a slow reader of the plan (a pager) holds
        // up no other runner's turn.
        let plan = report::Plan {
            interval,
            run_id: reserved_run.map(|r| r.run_id),
            steps: &steps,
            sql,
            begin: db.dialect().begin(),
        };
        report::dry_run(&plan, out)?;
        return Ok(Exit::Done);
    }
    // The workers beside the run's own session get sessions of their own, opened
    // before anything is written (a server out of connections is exit 2, nothing written).
    let mut others = workers::open_sessions(&target, jobs.min(interval.len()) - 1)
        .map_err(|e| more_sessions_failed(e, jobs))?;
    for note in pipeline.sync_checking(&mut db, Some(&first))? {
        out.note(&note);
    }
    if out.verbose > 0 {
        out.note(&format!(
            "database {}; templates {} ({})",
            db.target,
            pipeline.templates.origin,
            pipeline.signature()
        ));
    }
    // From here on a signal stops the run cleanly instead of killing the process.
    let interrupters = std::iter::once(&db)
        .chain(&others)
        .map(Db::interrupter)
        .collect();
    let signal = SignalGuard::install(interrupters);
    let (run_id, kind, reclaimed, looked_back) = begin_run(&mut db, &pipeline, &start)?;
    pause::reached(pause::Point::Reserved);
    for line in reserve::reclaim_lines(&reclaimed) {
        out.note(&line);
    }
    if let Some((r, days)) = request.and_then(|r| Some((r, r.selection.lookback()?))) {
        for line in report::lookback_lines(days, r.interval, &looked_back, &pipeline.signature()) {
            out.note(&line);
        }
    }
    // Skips are said with the run's other dates, as ranges, when it ends (or stops).
    let skips = reserve::skipped_of_run(&mut db, run_id)?;
    // Said at once, not only in the summary at the end: a long backfill's watcher (and a
    // run killed before its end) must not keep a skip unsaid.
    for line in reserve::skip_lines(&skips) {
        out.note(&line);
    }

    let work = reserve::held_by_run(&mut db, run_id)?;
    // A look back goes past a failed date: an old date that keeps failing must not keep
    // yesterday from being computed every morning (the run still ends failed, exit 1).
    let keep_going = args.keep_going || request.is_some_and(|r| r.selection.lookback().is_some());
    let sessions = std::iter::once(&mut db).chain(&mut others).collect();
    let mut outcomes = compute_dates(
        sessions,
        &pipeline,
        run_id,
        &work,
        keep_going,
        signal.signal(),
        out,
    );
    signal.finishing();
    drop(others);
    if let Some((ds, e)) = outcomes.broken.take() {
        // Nothing more is written through a connection that broke. The run's own session,
        // unless it is the one that broke, records the end and releases the rest;
        // otherwise the next run finds the run's session gone and reclaims them.
        let note = format!("stopped: lost the connection to the database during {ds} ({e})");
        let ended = finish_run(&mut db, &pipeline, run_id, RunEnd::Failed, Some(&note)).is_ok();
        say_dates(&skips, outcomes.dates.clone(), out);
        return Err(connection_lost(run_id, &ds, &outcomes.dates, &e, ended));
    }
    if let Some((ds, line)) = outcomes.fault.take() {
        let note = format!("stopped at {ds}: {line}");
        let _ = finish_run(&mut db, &pipeline, run_id, RunEnd::Failed, Some(&note));
        say_dates(&skips, outcomes.dates.clone(), out);
        return Err(stopped_by_fault(
            run_id,
            interval,
            &ds,
            &line,
            &outcomes.dates,
        ));
    }

    // Whatever is still held (after a stop, a failure, a signal) is released, recorded.
    let stopped = outcomes.stopped.take();
    let end = RunEnd::of(&outcomes, !skips.is_empty());
    let released = match finish_run(&mut db, &pipeline, run_id, end, stopped.as_deref()) {
        Ok(released) => released,
        Err(e) => {
            say_dates(&skips, outcomes.dates.clone(), out);
            let message = format!(
                "run {run_id}: its dates are done ({} attempted; `sqlrun runs {run_id}` lists \
                 them), but recording the run's end failed: {e}",
                outcomes.dates.len()
            );
            return Err(Error::stopped(run_id, message, committed(&outcomes.dates)));
        }
    };
    drop(signal);
    if released > 0 {
        out.note(&format!(
            "released {released} date{} not computed: {}",
            if released == 1 { "" } else { "s" },
            stopped.as_deref().unwrap_or("run ended")
        ));
    } else if let (RunEnd::Interrupted(None), Some(why)) = (end, &stopped) {
        // Its dates were taken from it (released by hand, reclaimed): nothing left to
        // release, but why it stopped is still said.
        out.note(&format!("stopped: {why}"));
    }

    // As the database has it: a run released (or found dead) meanwhile keeps that status.
    let status = store::existing_run(&mut db, run_id)
        .map_or_else(|_| end.as_str(), |r| r.status.as_str())
        .to_string();
    let dates = with_skips(&skips, outcomes.dates);
    let report = ApplyReport {
        run_id,
        kind,
        interval: interval.to_string(),
        status,
        exit_code: end.exit().code(),
        ranges: report::outcome_ranges(&dates)?,
        dates,
        reclaimed,
        stopped,
    };
    report::apply_summary(&report, &skips, out)?;
    Ok(end.exit())
}

/// How many dates a run computes at once (`--jobs`, or the project's `[apply] jobs`).
fn asked_jobs(args: &ApplyArgs) -> u32 {
    args.jobs.unwrap_or(1)
}

/// The workers of a run: one unless asked for more, and more only on PostgreSQL. On
/// SQLite more would only queue for its one write lock: refused (exit 2, nothing written).
fn jobs(args: &ApplyArgs, target: &Target) -> Result<usize> {
    let jobs = asked_jobs(args);
    if jobs > 1 && target.dialect() == Dialect::Sqlite {
        return Err(Error::bad(format!(
            "--jobs {jobs}: {target} is a SQLite database, which commits one transaction at \
             a time (one writer), so {jobs} workers would only queue for its write lock; on \
             SQLite leave --jobs out (one date at a time), or use PostgreSQL (--db \
             postgresql://...) to compute dates in parallel"
        )));
    }
    Ok(jobs as usize)
}

/// A worker's session that could not be opened: the server's words, and that `--jobs`
/// asked for that many connections.
fn more_sessions_failed(e: Error, jobs: usize) -> Error {
    match e {
        Error::Open {
            target,
            message,
            fix,
        } => Error::Open {
            target,
            message,
            fix: format!(
                "{fix} (--jobs {jobs} takes up to {jobs} connections: the run's own and one \
                 per other worker), or lower --jobs"
            ),
        },
        e => e,
    }
}

/// A run's dates in date order: those it computed (or failed), and those it skipped.
fn with_skips(skips: &[Skip], mut computed: Vec<DateOutcome>) -> Vec<DateOutcome> {
    let mut dates: Vec<DateOutcome> = skips.iter().map(skipped_outcome).collect();
    dates.append(&mut computed);
    dates.sort_by(|a, b| a.ds.cmp(&b.ds));
    dates
}

/// How the dates of a run that stopped short ended, on stderr before its error: its
/// skips are said whatever happens.
fn say_dates(skips: &[Skip], computed: Vec<DateOutcome>, out: &Output) {
    if let Ok(ranges) = report::outcome_ranges(&with_skips(skips, computed)) {
        report::outcome_notes(&ranges, skips, out);
    }
}

/// `apply --run RUN_ID`: the interval of a run made by `sqlrun reserve`, which must not
/// have started.
fn reserved_interval(db: &mut Db, run_id: i64) -> Result<(Interval, Option<store::RunRow>)> {
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

/// What a run starts from: the command line, and a new request or a reserved run.
struct Start<'a> {
    args: &'a ApplyArgs,
    request: Option<&'a Request>,
    reserved: Option<&'a store::RunRow>,
    interval: Interval,
}

/// One transaction: the run row, its template versions, reclaims, reservations, skips.
/// The run's id and kind, what it reclaimed, and the older dates of a look back (taken
/// or left to their holder).
fn begin_run(
    db: &mut Db,
    pipeline: &Pipeline,
    start: &Start,
) -> Result<(i64, String, Vec<Reclaim>, Vec<DateState>)> {
    let me = Identity::current();
    db.transaction(TxKind::Exclusive, |db| {
        let (run_id, kind) =
            start_run(db, pipeline, start.args, &me, start.reserved, start.request)?;
        // Taken before the run row becomes visible: nobody can see it running and gone.
        db.hold_run(run_id)?;
        crate::versions::record_versions(db, &pipeline.templates, run_id)?;
        // Under the lock again (a model may have been retired meanwhile); the run's
        // model versions are the current ones.
        crate::models::record(db, pipeline, Some(run_id))?;
        let reclaimed = reserve::sweep(db, pipeline, &me, Some(run_id))?;
        let (selected, looked_back) =
            select_dates(db, pipeline, start.interval, start.request, run_id)?;
        // On PostgreSQL a run holds its dates without a lease: a running run there is
        // alive exactly while its session is, and renewing a lease as each date commits
        // would have a date's transaction update the run's other reservation rows, which a
        // release beside it is deleting (a serialization failure) or which that update
        // would lock (so the release could free none of them).
        let lease = (db.dialect() == Dialect::Sqlite).then(reserve::lease_seconds);
        reserve::reserve(db, pipeline, run_id, &selected, lease)?;
        pause::reached(pause::Point::Reserving);
        Ok((run_id, kind, reclaimed, looked_back))
    })
}

/// How a run that went through its dates ends: its status in `runs` and its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunEnd {
    Success,
    /// Some dates were skipped because another live run holds them.
    Partial,
    Failed,
    /// Stopped by a signal (its number), or its dates were taken over meanwhile (None).
    Interrupted(Option<i32>),
}

impl RunEnd {
    fn of(outcomes: &Outcomes, skipped: bool) -> RunEnd {
        if outcomes
            .dates
            .iter()
            .any(|d| d.status == DateStatus::Failed)
        {
            RunEnd::Failed
        } else if let Some(sig) = outcomes.signal {
            RunEnd::Interrupted(Some(sig))
        } else if outcomes.lost {
            RunEnd::Interrupted(None)
        } else if skipped {
            RunEnd::Partial
        } else {
            RunEnd::Success
        }
    }

    fn as_str(self) -> &'static str {
        let status = match self {
            RunEnd::Success => RunStatus::Success,
            RunEnd::Partial => RunStatus::Partial,
            RunEnd::Failed => RunStatus::Failed,
            RunEnd::Interrupted(_) => RunStatus::Interrupted,
        };
        status.as_str()
    }

    fn exit(self) -> Exit {
        match self {
            RunEnd::Success => Exit::Done,
            RunEnd::Partial => Exit::Skipped,
            RunEnd::Failed | RunEnd::Interrupted(None) => Exit::Failed,
            RunEnd::Interrupted(Some(sig)) => Exit::Signal(sig),
        }
    }
}

/// The end of a run, in one transaction: whatever it still holds (after a stop, a failure,
/// a signal) is released and recorded, and its status is set. Returns how many dates it
/// released.
fn finish_run(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    end: RunEnd,
    stopped: Option<&str>,
) -> Result<usize> {
    db.transaction(TxKind::Exclusive, |db| {
        let why = stopped.unwrap_or("run ended");
        let released = reserve::release(db, pipeline, run_id, why, false)?
            .freed
            .len();
        db.execute(
            &queries::FINISH_RUN,
            &[
                (":run_id", run_id.into()),
                (":status", end.as_str().into()),
                (":error", Value::opt_text(stopped)),
            ],
        )?;
        Ok(released)
    })
}

/// The run row: a new running run, or a reserved run that starts now. Its id and kind.
fn start_run(
    db: &mut Db,
    pipeline: &Pipeline,
    args: &ApplyArgs,
    me: &Identity,
    reserved: Option<&store::RunRow>,
    request: Option<&Request>,
) -> Result<(i64, String)> {
    let dialect = db.dialect().as_str();
    let selected = (!args.select.is_empty()).then(|| args.select.join(","));
    let holder = [
        (":keep_going", Value::from(args.keep_going)),
        (":selected", Value::opt_text(selected.as_deref())),
        (":templates_from", pipeline.templates.origin.as_str().into()),
        (":version", env!("CARGO_PKG_VERSION").into()),
        (":host", me.host.as_str().into()),
        (":pid", i64::from(me.pid).into()),
        (":pid_started", me.started.as_str().into()),
        (":dialect", dialect.into()),
        (":jobs", i64::from(asked_jobs(args)).into()),
    ];
    match (reserved, request) {
        (Some(run), _) => {
            let mut params = vec![(":run_id", Value::from(run.run_id))];
            params.extend(holder);
            if db.execute(&queries::START_RESERVED_RUN, &params)? != 1 {
                return Err(Error::bad(format!(
                    "run {} stopped being reserved meanwhile (released, or started by another process); see `sqlrun runs {}`",
                    run.run_id, run.run_id
                )));
            }
            Ok((run.run_id, run.kind.clone()))
        }
        (None, Some(r)) => {
            let mut params = vec![
                (":kind", Value::from(r.kind.as_str())),
                (":start", fmt_date(r.interval.start).into()),
                (":end", fmt_date(r.interval.end).into()),
                (":by", r.by.as_str().into()),
                (":reason", Value::opt_text(r.reason.as_deref())),
                (":status", "running".into()),
                (
                    ":only",
                    Value::opt_text(r.selection.only().map(Only::as_str)),
                ),
                (
                    ":lookback",
                    r.selection
                        .lookback()
                        .map_or(Value::Null, |n| i64::from(n).into()),
                ),
                (":command", store::command_line().into()),
            ];
            params.extend(holder);
            let run_id = store::insert_run(db, &params)?;
            Ok((run_id, r.kind.as_str().to_string()))
        }
        (None, None) => unreachable!("a request exists without --run"),
    }
}

/// The dates a run takes on: those of the interval its `--only` (or `--lookback`)
/// selects, or, for a reserved run, what it holds. With `--lookback`, also the older
/// dates that need work, taken or left to the run that holds them.
fn select_dates(
    db: &mut Db,
    pipeline: &Pipeline,
    interval: Interval,
    request: Option<&Request>,
    run_id: i64,
) -> Result<(Vec<String>, Vec<DateState>)> {
    let signature = pipeline.signature();
    let Some(r) = request else {
        return Ok((reserve::held_by_run(db, run_id)?, Vec::new()));
    };
    let states = reserve::date_states(db, pipeline, interval)?;
    let selected = states
        .iter()
        .filter(|s| s.selected_by(&r.selection, &signature))
        .map(|s| s.ds.clone())
        .collect();
    let looked_back = match &r.selection {
        Selection::Lookback { newest, .. } => states
            .into_iter()
            .filter(|s| s.ds != *newest && s.needs_work())
            .collect(),
        Selection::Only(_) => Vec::new(),
    };
    Ok((selected, looked_back))
}

fn request_from(args: &ApplyArgs, zone: Tz) -> Result<Request> {
    let interval = match (&args.interval, &args.as_of) {
        (Some(text), _) => Interval::parse(text)?,
        (None, Some(as_of)) => Interval::yesterday_of(parse_date(as_of, "--as-of")?)?,
        (None, None) => Interval::yesterday_of(today_in(zone))?,
    };
    let (interval, selection) = match args.lookback {
        None => (interval, Selection::Only(args.only.map(Only::from))),
        Some(days) => (
            interval.looking_back(days)?,
            Selection::Lookback {
                newest: fmt_date(interval.end),
                days,
            },
        ),
    };
    let kind = args
        .kind
        .map(Kind::from)
        .unwrap_or(if args.interval.is_some() {
            Kind::Backfill
        } else {
            Kind::Regular
        });
    Ok(Request {
        interval,
        kind,
        by: args.by.clone().unwrap_or_else(default_user),
        reason: args.reason.clone(),
        selection,
    })
}

/// A date of the run that has not ended yet: what a scheduler is told (refused), and
/// what a person is told (warned).
struct UnfinishedDay {
    refusal: String,
    warning: String,
}

/// A date that has not ended yet would be recorded as done with part of its rows: almost
/// always a scheduler passing the day that has just begun. None when every date has
/// ended, or `--allow-partial-day` asks for it.
fn unfinished_day(interval: Interval, zone: Tz, args: &ApplyArgs) -> Option<UnfinishedDay> {
    let now = Utc::now();
    let (date, ends) = first_unfinished(interval, now, zone).filter(|_| !args.allow_partial_day)?;
    let today = now.with_timezone(&zone).date_naive();
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
    let asked = match (args.run, &args.interval, &args.as_of) {
        (Some(run), _, _) => format!("run {run} (reserved for {interval})"),
        (None, Some(_), _) => format!("--interval {interval}"),
        (None, None, Some(as_of)) => format!("--as-of {as_of} (its yesterday is {interval})"),
        (None, None, None) => format!("the regular run ({interval})"),
    };
    let ds = fmt_date(date);
    let last_ended = today
        .pred_opt()
        .map_or_else(|| "yesterday".into(), fmt_date);
    Some(UnfinishedDay {
        refusal: format!(
            "{ds} {when}; {asked} would record a partial day as done. Usually a scheduler \
             passed the day that has just begun: with Airflow 3's default @daily schedule \
             `{{{{ ds }}}}` is today, and the day that ended is `{{{{ macros.ds_add(ds, -1) }}}}` \
             (see the README, \"Driving sqlrun from Airflow\"). Compute dates up to \
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
/// columns).
fn preflight(pipeline: &Pipeline, interval: Interval) -> Result<()> {
    for (i, date) in interval.dates().enumerate() {
        for sealed in [false, true] {
            if sealed && i > 0 {
                continue;
            }
            pipeline.render_date(&DateVars {
                ds: &fmt_date(date),
                run_id: 0,
                sealed,
                started_at: &now(),
                lease_seconds: 0,
            })?;
        }
    }
    Ok(())
}

struct Outcomes {
    dates: Vec<DateOutcome>,
    /// Why the loop stopped early, if it did.
    stopped: Option<String>,
    signal: Option<i32>,
    /// Another run took over a date this run held (it was found dead meanwhile).
    lost: bool,
    /// The date at which a fault of the database's surroundings stopped the run, and
    /// that fault on one line.
    fault: Option<(String, String)>,
    /// The date during which a connection of the run broke (or its own session was found
    /// gone), and how.
    broken: Option<(String, DbError)>,
}

/// The run's dates, one worker per session (the run's own first), in ascending order;
/// one line (or one progress bar) per run, from this thread.
fn compute_dates(
    sessions: Vec<&mut Db>,
    pipeline: &Pipeline,
    run_id: i64,
    work: &[String],
    keep_going: bool,
    signal: &AtomicI32,
    out: &mut Output,
) -> Outcomes {
    let progress = (out.progress_bar() && work.len() > 1).then(|| {
        let bar = ProgressBar::new(work.len() as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {pos}/{len} dates [{bar:30}] {elapsed} eta {eta} {msg}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        bar
    });
    let worker = Worker {
        pipeline,
        run_id,
        keep_going,
        signal,
    };
    let (dates, stops) = workers::each_date(
        sessions,
        work,
        signal,
        |db: &mut &mut Db, ds, halt: &Halt| worker.date(db, ds, halt),
        |date| show_date(date, progress.as_ref(), out),
    );
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    outcomes(dates, stops)
}

/// What every worker of a run shares.
struct Worker<'a> {
    pipeline: &'a Pipeline,
    run_id: i64,
    keep_going: bool,
    signal: &'a AtomicI32,
}

impl Worker<'_> {
    /// One date on this worker's session: its outcome, and whether the run stops there.
    fn date(&self, db: &mut Db, ds: &str, halt: &Halt) -> Step<DateOutcome> {
        let clock = Instant::now();
        let start = date_start(db, ds);
        // The database's clock (on PostgreSQL the server's, never this runner's); the
        // runner's only when the database could not even be asked.
        let started_at = start.as_ref().map_or_else(|_| now(), |s| s.at.clone());
        let result = start.and_then(|s| compute_date(db, self.pipeline, self.run_id, ds, &s));
        let millis = clock.elapsed().as_millis() as u64;
        let (status, error) = match self.ending(db, ds, &started_at, result, halt) {
            Ok(ending) => ending,
            Err(stop) => return Step::Last(None, stop),
        };
        let failed = error.is_some();
        let outcome = DateOutcome {
            ds: ds.to_string(),
            status,
            error,
            held_by: None,
            millis: Some(millis),
        };
        if failed && !self.keep_going {
            Step::Last(Some(outcome), Stop::Failed { ds: ds.into() })
        } else {
            Step::Next(outcome)
        }
    }

    /// How a date's transaction ended: done, or failed (recorded, with its message); or
    /// what stops the run there (the date rolled back, unrecorded).
    fn ending(
        &self,
        db: &mut Db,
        ds: &str,
        started_at: &str,
        result: Result<DateResult>,
        halt: &Halt,
    ) -> Result<(DateStatus, Option<String>), Stop> {
        let ds = ds.to_string();
        match result {
            Ok(DateResult::Done(status)) => Ok((status, None)),
            Ok(DateResult::Lost(holder)) => Err(Stop::Lost { ds, holder }),
            Ok(DateResult::RunGone) => Err(Stop::Broken {
                ds,
                error: run_gone(),
            }),
            Err(Error::Database(error))
                if matches!(
                    error.kind,
                    DbErrorKind::ConnectionLost | DbErrorKind::CommitUnknown
                ) =>
            {
                Err(Stop::Broken { ds, error })
            }
            Err(e)
                if e.db_kind() == Some(DbErrorKind::Interrupted)
                    && self.signal.load(Ordering::SeqCst) != 0 =>
            {
                let sig = self.signal.load(Ordering::SeqCst);
                Err(Stop::Signal {
                    sig,
                    ds,
                    during: true,
                })
            }
            Err(e) => {
                if !self.keep_going {
                    // No other worker takes a date while the failure is recorded.
                    halt.now();
                }
                let (message, fault) =
                    failed_date(db, self.pipeline, self.run_id, &ds, started_at, &e);
                match fault {
                    Some(line) => Err(Stop::Fault { ds, line }),
                    None => Ok((DateStatus::Failed, Some(message))),
                }
            }
        }
    }
}

/// A date as it ends: a line on stderr, or a step of the progress bar (a failure is
/// still said on its own line).
fn show_date(date: &DateOutcome, progress: Option<&ProgressBar>, out: &Output) {
    let millis = date.millis.unwrap_or_default();
    let line = match &date.error {
        Some(e) => format!("{}  failed  ({millis} ms): {e}", date.ds),
        None => format!("{}  {}  ({millis} ms)", date.ds, date.status),
    };
    match progress {
        Some(bar) => {
            bar.inc(1);
            if date.error.is_some() {
                bar.suspend(|| out.note(&line));
            }
        }
        None => out.progress(&line),
    }
}

/// The run's dates and why it stopped, from what its workers did: the first broken
/// connection and the first fault of the surroundings (each ends the run with an error),
/// and the first of the other stops, which says why the run ended early.
fn outcomes(dates: Vec<DateOutcome>, stops: Vec<Stop>) -> Outcomes {
    let mut result = Outcomes {
        dates,
        stopped: None,
        signal: None,
        lost: false,
        fault: None,
        broken: None,
    };
    for stop in stops {
        let why = match stop {
            Stop::Failed { ds } => {
                format!("stopped after {ds} failed (use --keep-going to go on past a failed date)")
            }
            Stop::Signal { sig, ds, during } => {
                result.signal.get_or_insert(sig);
                if during {
                    format!("stopped by signal {sig} during {ds} (rolled back)")
                } else {
                    format!("stopped by signal {sig} before {ds}")
                }
            }
            Stop::Lost { ds, holder } => {
                result.lost = true;
                let now = holder
                    .map(|h| format!("run {h} holds it now"))
                    .unwrap_or_else(|| "released by someone else".into());
                format!("{ds} is no longer held by this run ({now}); stopping")
            }
            Stop::Fault { ds, line } => {
                result.fault.get_or_insert((ds, line));
                continue;
            }
            Stop::Broken { ds, error } => {
                result.broken.get_or_insert((ds, error));
                continue;
            }
        };
        result.stopped.get_or_insert(why);
    }
    result
}

/// A date that failed, recorded if the database still takes it (a full disk may not).
/// Its message, and the fault that stops the run, if any: a full disk, a read-only file,
/// a lock held past the wait (the next date would meet it too), or a failure that cannot
/// even be recorded.
fn failed_date(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    ds: &str,
    started_at: &str,
    e: &Error,
) -> (String, Option<String>) {
    let (message, model) = match e {
        Error::Database(inner) => match inner.context.as_deref().and_then(|m| pipeline.model(m)) {
            Some(model) => (
                format!("model {} ({}): {}", model.name, model.file, inner.message),
                Some(model.name.as_str()),
            ),
            None => (inner.message.clone(), None),
        },
        other => (other.to_string(), None),
    };
    let failure = Failure {
        ds,
        started_at,
        message: &message,
        model,
    };
    let recorded = record_failure(db, pipeline, run_id, &failure);
    let fault = match (e, recorded) {
        (Error::Environment { .. }, _) => Some(message.clone()),
        (_, Err(r)) => Some(format!("{message}; recording that failed too: {r}")),
        (_, Ok(())) => None,
    };
    (message, fault)
}

/// A run stopped at `ds` by a fault of its surroundings, on one line: the date (rolled
/// back), the fault and its fix, how many dates committed before it, and how to finish.
fn stopped_by_fault(
    run_id: i64,
    interval: Interval,
    ds: &str,
    line: &str,
    dates: &[DateOutcome],
) -> Error {
    let committed = committed(dates);
    let days: Vec<&str> = committed.iter().map(|d| d.ds.as_str()).collect();
    let before = match days.as_slice() {
        [] => "no date of this run committed before it".to_string(),
        [one] => format!("1 date committed before it ({one}) and stays committed"),
        [first, .., last] => format!(
            "{} dates committed before it ({first}..{last}) and stay committed",
            days.len()
        ),
    };
    let message = format!(
        "run {run_id} stopped at {ds}, which rolled back: {line}; {before}; once that is \
         fixed, `sqlrun apply --interval {interval}` again finishes the work (`--only missing`: \
         just the dates never computed)"
    );
    Error::stopped(run_id, message, committed)
}

/// The dates a run finished (they stay committed when it stops): every outcome but a
/// failure.
fn committed(dates: &[DateOutcome]) -> Vec<CommittedDate> {
    dates
        .iter()
        .filter(|d| d.status != DateStatus::Failed)
        .map(|d| CommittedDate {
            ds: d.ds.clone(),
            status: d.status,
        })
        .collect()
}

/// A run whose connection broke stops: nothing more can be written through it, and it
/// never reconnects. `ended`: the run's own session still recorded its end and released
/// its other dates (a worker's connection broke); otherwise they are reclaimed once the
/// server ends its session.
fn connection_lost(
    run_id: i64,
    ds: &str,
    dates: &[DateOutcome],
    e: &DbError,
    ended: bool,
) -> Error {
    let done = committed(dates).len();
    let this_date = if e.kind == DbErrorKind::CommitUnknown {
        format!("it broke while {ds} committed, so {ds} may or may not have landed (`sqlrun status --interval {ds}` tells)")
    } else {
        format!("{ds} rolled back")
    };
    let rest = if ended {
        "its own session released the dates it did not compute"
    } else {
        "once the server has ended its session the next run reclaims its dates"
    };
    let message = format!(
        "lost the connection to the database during {ds} ({}); {this_date}; the {done} date{} \
         it committed stay committed. This run writes nothing more; {rest} (`sqlrun apply \
         --interval ... --only missing` finishes the work)",
        e.message,
        if done == 1 { "" } else { "s" }
    );
    Error::stopped(run_id, message, committed(dates))
}

enum DateResult {
    Done(DateStatus),
    /// The date's reservation is not this run's any more; the holder, if any.
    Lost(Option<i64>),
    /// The run's own session is gone (a worker of `--jobs` found out through its own).
    RunGone,
}

/// What a date starts from, read just before its transaction: whether it is sealed, and
/// the database's time, which its record gives as its start.
struct DateStart {
    sealed: bool,
    at: String,
}

fn date_start(db: &mut Db, ds: &str) -> Result<DateStart> {
    let row = db.one(&queries::IS_SEALED, &[(":ds", ds.into())])?;
    Ok(DateStart {
        sealed: row.bool(0)?,
        at: row.text(1)?,
    })
}

/// One date, one transaction: the partition(s), the record, the release.
///
/// The SQL is rendered before the write lock is taken, so that between two dates the lock
/// is free long enough for a waiting run (a regular run, a seal) to get in. Whether the
/// date is sealed cannot change meanwhile: this run holds the date, and `seal` refuses
/// held dates.
fn compute_date(
    db: &mut Db,
    pipeline: &Pipeline,
    run_id: i64,
    ds: &str,
    start: &DateStart,
) -> Result<DateResult> {
    let sealed = start.sealed;
    let script = pipeline.bind_date(&DateVars {
        ds,
        run_id,
        sealed,
        started_at: &start.at,
        lease_seconds: reserve::lease_seconds(),
    })?;
    let result = db.transaction(TxKind::Date, |db| {
        // Fencing: the date is written only while its reservation is this run's (nothing
        // is written otherwise, so the empty transaction may commit).
        let own = [(":ds", Value::from(ds)), (":run_id", run_id.into())];
        if db.row(&queries::OWN_RESERVATION, &own)?.is_none() {
            return Ok(DateResult::Lost(holder_now(db, ds)?));
        }
        // A worker of `--jobs` writes through a session of its own: only while the run's
        // own session lives (once it is gone, the next run may reclaim the dates).
        if !db.run_alive(run_id)? {
            return Ok(DateResult::RunGone);
        }
        pause::reached(pause::Point::InDate);
        db.run_script(&script.sql, &script.params)?;
        // record_date.sql decided: success, or for a sealed date corrected / unchanged.
        let status = if sealed {
            let params = [(":run_id", run_id.into()), (":ds", ds.into())];
            let text = db.one(&queries::DATE_STATUS_IN_RUN, &params)?.text(0)?;
            DateStatus::parse(&text).ok_or_else(|| {
                Error::bad(format!(
                    "{ds}: record_date.sql recorded the status `{text}`, which sqlrun does not know"
                ))
            })?
        } else {
            DateStatus::Success
        };
        // Once more, last: a worker's date commits only while the run's own session lives
        // (a reclaim may have freed the run's other dates meanwhile); otherwise it rolls
        // back.
        if !db.run_alive(run_id)? {
            return Err(Error::Database(run_gone()));
        }
        Ok(DateResult::Done(status))
    });
    match result {
        Ok(done) => {
            pause::reached(pause::Point::Committed);
            Ok(done)
        }
        Err(e) if e.db_kind() == Some(DbErrorKind::Conflict) => lost_or_failed(db, run_id, ds, e),
        Err(e) => Err(e),
    }
}

/// A worker of a run whose own session (the one that holds the run's lock) is gone.
fn run_gone() -> DbError {
    DbError {
        kind: DbErrorKind::ConnectionLost,
        message: "this run's own session, which holds its lock, is gone".into(),
        context: None,
    }
}

/// A date whose transaction met a row changed after its snapshot began (PostgreSQL): its
/// reservation was released or taken meanwhile (the date is then another's, not failed),
/// or, if it is still this run's, the date failed with that error.
fn lost_or_failed(db: &mut Db, run_id: i64, ds: &str, e: Error) -> Result<DateResult> {
    match holder_now(db, ds)? {
        Some(h) if h == run_id => Err(e),
        other => Ok(DateResult::Lost(other)),
    }
}

/// The run that holds `ds` now, if any (read without a lock).
fn holder_now(db: &mut Db, ds: &str) -> Result<Option<i64>> {
    db.row(&queries::HOLDER_OF_DATE, &[(":ds", ds.into())])?
        .map(|r| Ok(r.i64(0)?))
        .transpose()
}

/// A date that failed, as its record says it.
struct Failure<'a> {
    ds: &'a str,
    started_at: &'a str,
    message: &'a str,
    /// The model whose statement failed, if one did.
    model: Option<&'a str>,
}

fn record_failure(db: &mut Db, pipeline: &Pipeline, run_id: i64, f: &Failure) -> Result<()> {
    let script = pipeline.bind_system(
        "record_failure",
        minijinja::context! {
            run_id => run_id, ds => f.ds, started_at => f.started_at, error => f.message,
            model => f.model.map(|m| format!("models/{m}")),
        },
    )?;
    // READ COMMITTED on PostgreSQL (no snapshot from before a release beside it that
    // deletes the date's reservation).
    db.transaction(TxKind::Plain, |db| {
        Ok(db.run_script(&script.sql, &script.params)?)
    })
}

fn skipped_outcome(skip: &Skip) -> DateOutcome {
    DateOutcome {
        ds: skip.ds.clone(),
        status: DateStatus::Skipped,
        error: None,
        held_by: skip.held_by,
        millis: None,
    }
}

/// The first SIGINT/SIGTERM lets the current date finish, then the run stops; a second one
/// interrupts the current statement, so the date rolls back. Either way the transaction
/// ends whole and the run releases what it holds. Once the run is finishing (releasing and
/// recording its end), signals no longer interrupt. Dropping the guard restores the default.
struct SignalGuard {
    first: Arc<AtomicI32>,
    computing: Arc<AtomicBool>,
    handle: Option<signal_hook::iterator::Handle>,
}

impl SignalGuard {
    /// `interrupt`: one per session of the run, each stopping what its session runs.
    fn install(interrupt: Vec<Interrupter>) -> Self {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let first = Arc::new(AtomicI32::new(0));
        let computing = Arc::new(AtomicBool::new(true));
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            return SignalGuard {
                first,
                computing,
                handle: None,
            };
        };
        let handle = signals.handle();
        let (seen, still_computing) = (Arc::clone(&first), Arc::clone(&computing));
        std::thread::spawn(move || {
            for sig in signals.forever() {
                let repeated = seen
                    .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                    .is_err();
                if repeated && still_computing.load(Ordering::SeqCst) {
                    interrupt.iter().for_each(Interrupter::interrupt);
                }
            }
        });
        SignalGuard {
            first,
            computing,
            handle: Some(handle),
        }
    }

    fn finishing(&self) {
        self.computing.store(false, Ordering::SeqCst);
    }

    fn signal(&self) -> &AtomicI32 {
        &self.first
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            handle.close();
        }
    }
}

/// `--dry-run`: each date and what would happen to it (and with `--sql`, the SQL of
/// those it would compute). Writes nothing, and claims no run id: a new run's SQL shows
/// the placeholder `:run_id`.
/// Each date's step of the plan, and with `--sql` the SQL of each computed date.
type DryRun = (Vec<plan::Step>, Option<Vec<(String, String)>>);

fn dry_run(db: &mut Db, pipeline: &Pipeline, start: &Start) -> Result<DryRun> {
    let interval = start.interval;
    let signature = pipeline.signature();
    let own_run = start.reserved.map(|r| r.run_id);
    let states = reserve::date_states(db, pipeline, interval)?;
    let dead = reserve::dead_holders(db, &Identity::current(), own_run)?;
    let cx = plan::Context {
        signature: &signature,
        own_run,
        dead: &dead,
    };
    let steps: Vec<plan::Step> = states
        .iter()
        .map(|state| {
            let selected = match start.request {
                Some(r) => state.selected_by(&r.selection, &signature),
                None => state.held_by.is_some() && state.held_by == own_run,
            };
            plan::step(state, selected, &cx)
        })
        .collect();
    let sql = start
        .args
        .sql
        .then(|| plan_sql(pipeline, &states, &steps, own_run))
        .transpose()?;
    Ok((steps, sql))
}

/// The SQL of each date the plan computes, as the run would execute it, its values as
/// literals; the run id a reserved run's, else the placeholder.
fn plan_sql(
    pipeline: &Pipeline,
    states: &[DateState],
    steps: &[plan::Step],
    own_run: Option<i64>,
) -> Result<Vec<(String, String)>> {
    let mut sql = Vec::new();
    for (state, _) in states
        .iter()
        .zip(steps)
        .filter(|(_, s)| s.action.computes())
    {
        let vars = DateVars {
            ds: &state.ds,
            run_id: own_run.unwrap_or_default(),
            sealed: state.sealed(),
            started_at: &now(),
            lease_seconds: reserve::lease_seconds(),
        };
        let body = match own_run {
            Some(_) => pipeline.render_date(&vars)?,
            None => pipeline.render_date_unclaimed(&vars)?,
        };
        sql.push((state.ds.clone(), body));
    }
    Ok(sql)
}
