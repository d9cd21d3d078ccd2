//! What `apply` is asked, as plain values: the command line's words (`Request`, made from
//! clap's `ApplyArgs` in cli.rs, or built by the demo), the project's `[apply]` defaults
//! filled in, then checked (`Checked`) before anything is opened, and once the
//! database's clock is read, put on its calendar (`Asked`).

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::dates::clock::{today, Clock};
use crate::dates::interval::{fmt_date, hour_span, parse_date, parse_hour, Date, Interval};
use crate::dates::period::{local, midnight};
use crate::db::{Dialect, Target};
use crate::error::{Error, Result};
use crate::project::settings::{ApplyDefaults, Settings};
use crate::reservations::state::Selection;
use crate::store::requester::default_user;
use crate::text::words::{OnlyFilter, RunKind};

/// `sqlrun apply` as asked: each field as given (None, empty: not given).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    pub interval: Option<String>,
    pub as_of: Option<String>,
    pub kind: Option<RunKind>,
    pub by: Option<String>,
    pub reason: Option<String>,
    pub only: Option<OnlyFilter>,
    pub lookback: Option<u32>,
    pub select: Vec<String>,
    pub keep_going: bool,
    pub jobs: Option<u32>,
    pub dry_run: bool,
    /// `--diff`: compute each date and show what would change, writing nothing.
    pub diff: bool,
    pub sql: bool,
    /// `--run`: carry out a run made by `sqlrun reserve`.
    pub run: Option<i64>,
    pub allow_partial_day: bool,
    /// `--no-downstream`: the partitions asked for, not the cascade below them.
    pub no_downstream: bool,
    /// `--create`: create the project's database if it does not exist yet.
    pub create: bool,
    /// `--stop-within SECONDS`: after the first stop signal, how long the date in progress
    /// may go on before it is rolled back (None: until it ends).
    pub stop_within: Option<u32>,
    /// `sqlrun undo RUN`: the dates the run takes on (no other) and, for each, the models
    /// whose rows it puts back from history.
    pub undo: Option<super::undo::UndoWork>,
}

impl Request {
    /// The request with the project's defaults filled in where they apply. The project's
    /// `lookback` is for a regular run only: a backfill (`--interval`), a reserved run
    /// (`--run`) or a selection (`--only`) computes what it names and nothing older,
    /// unless it asks for `--lookback` itself. `jobs` is for every run.
    pub fn with_defaults(mut self, defaults: &ApplyDefaults) -> Request {
        let regular = self.interval.is_none() && self.run.is_none() && self.only.is_none();
        if regular && self.lookback.is_none() {
            self.lookback = defaults.lookback;
        }
        // A preview computes its dates one after the other on one session: the project's
        // jobs are for runs (an asked `--jobs N` is refused, `check`).
        if !self.diff {
            self.jobs = self.jobs.or(defaults.jobs);
        }
        self
    }

    /// How many dates the run computes at once.
    pub fn asked_jobs(&self) -> u32 {
        self.jobs.unwrap_or(1)
    }

    /// The request checked before the database is touched: a new run's interval and
    /// selection (unless `--run`), then the workers it may have on its database. A
    /// regular run without `--as-of` waits for the database's clock (`Checked::at`).
    pub fn check(&self, settings: &Settings) -> Result<Checked<'_>> {
        self.refuse_with_diff()?;
        let new_run = match (self.run, self.asked()?) {
            (Some(_), _) => Checking::Reserved,
            (None, Some(interval)) => Checking::Known(self.new_run(interval)?),
            (None, None) => {
                // A look back that reaches before the year 1 is bad input whatever the
                // day: refused before anything is opened (by this runner's clock; the
                // run's dates are the database's, `Checked::at`).
                let today = today(Clock::runner().now(), settings.timezone);
                self.new_run(Interval::yesterday_of(today)?)?;
                Checking::OfToday
            }
        };
        let jobs = self.workers(&settings.target()?)?;
        Ok(Checked {
            request: self,
            new_run,
            jobs,
            zone: settings.timezone,
        })
    }

    /// `--diff` previews a new run as `--interval`, `--as-of`, `--only`, `--lookback` and
    /// `--select` ask for it, writing nothing. What cannot go with that is refused (exit 2,
    /// nothing written), with what would work.
    fn refuse_with_diff(&self) -> Result<()> {
        if !self.diff {
            return Ok(());
        }
        let refusal = if self.dry_run {
            "--diff with --dry-run: --dry-run lists what the run would do to each date without \
             computing it, --diff computes each date and shows what would change in its rows; \
             ask for one of them"
                .to_string()
        } else if let Some(run) = self.run {
            format!(
                "--diff with --run {run}: a preview is of a new run, and a reserved run's dates are \
                 held by it; preview the same dates with `sqlrun apply --interval START..END --diff` \
                 (`sqlrun runs {run}` shows its interval), then carry it out with `sqlrun apply \
                 --run {run}`"
            )
        } else if let Some(jobs) = self.jobs.filter(|j| *j > 1) {
            format!(
                "--diff with --jobs {jobs}: a preview computes its dates one after the other in \
                 one transaction that is rolled back, on one session; leave --jobs out of the \
                 preview (the run itself may have it)"
            )
        } else if self.create {
            "--diff with --create: a preview writes nothing, so it creates no database either; \
             create it with `sqlrun init` (or the run with `sqlrun apply --create`), then preview"
                .to_string()
        } else {
            return Ok(());
        };
        Err(Error::bad(refusal))
    }

    /// The workers of a run: one unless asked for more, and more only on PostgreSQL. On
    /// SQLite more would only queue for its one write lock: refused (exit 2, nothing
    /// written).
    fn workers(&self, target: &Target) -> Result<usize> {
        let jobs = self.asked_jobs();
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

    /// The interval a new run asks for when the request alone says it: `--interval`, or
    /// the day before `--as-of`. None: the regular run's yesterday, which the database's
    /// clock says (on PostgreSQL the server's, not this runner's).
    fn asked(&self) -> Result<Option<Interval>> {
        self.refuse_only_with_lookback()?;
        match (&self.interval, &self.as_of) {
            (Some(text), _) => Interval::parse(text).map(Some),
            (None, Some(as_of)) => match parse_hour(as_of, "--as-of")? {
                // An hour: the run of the hour that ends then (on its day).
                Some(at) => Ok(Some(Interval::single(
                    (at - chrono::Duration::hours(1)).date(),
                ))),
                None => Interval::yesterday_of(parse_date(as_of, "--as-of")?).map(Some),
            },
            (None, None) => Ok(None),
        }
    }

    /// The local hours the run asks for, as instants: an interval with an hour end, or
    /// `--as-of` an hour (the hour that ends then). None: whole days.
    pub fn hours(&self, zone: Tz) -> Result<Option<(DateTime<Utc>, DateTime<Utc>)>> {
        let hour = chrono::Duration::hours(1);
        match (&self.interval, &self.as_of) {
            (Some(text), _) => hour_span(text, zone),
            // The hour that ends at `at`: on the night the clocks go forward the hour before
            // 03:00 is 01:00's; where 02:00 comes twice, both.
            (None, Some(as_of)) => Ok(parse_hour(as_of, "--as-of")?.map(|at| {
                let end = local(at, zone);
                (local(at - hour, zone).min(end - hour), end)
            })),
            (None, None) => Ok(None),
        }
    }

    /// Whether `--as-of` names an hour that is not a midnight: a run of that hour, which
    /// asks for no day, week or month.
    pub fn hourly(&self) -> Result<bool> {
        let hour = match &self.as_of {
            Some(as_of) => parse_hour(as_of, "--as-of")?,
            None => None,
        };
        Ok(hour.is_some_and(|at| at.time() != chrono::NaiveTime::MIN))
    }

    /// The instant periods must have ended by: `--as-of` (an hour's start, or a day's
    /// midnight in `zone`), else `now`.
    pub fn ended_by(&self, zone: Tz, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
        let Some(as_of) = &self.as_of else {
            return Ok(now);
        };
        Ok(match parse_hour(as_of, "--as-of")? {
            Some(at) => local(at, zone),
            None => midnight(parse_date(as_of, "--as-of")?, zone),
        })
    }

    /// A new run over the interval `asked` for: its dates (with a look back), selection
    /// and kind.
    fn new_run(&self, asked: Interval) -> Result<NewRun> {
        let (dates, selection) = match (self.lookback, self.only) {
            (Some(days), _) => (
                Dates::Interval(asked.looking_back(days)?),
                Selection::Lookback {
                    first: fmt_date(asked.start),
                    days,
                },
            ),
            // `--only` without an interval: the dates the database knows, up to the
            // regular run's yesterday (found once it is open).
            (None, Some(only)) if self.interval.is_none() => {
                (Dates::KnownUpTo(asked.end), Selection::Only(Some(only)))
            }
            (None, only) => (Dates::Interval(asked), Selection::Only(only)),
        };
        // Regular: the run of yesterday (with its look back); any other span is a backfill.
        let regular = matches!(dates, Dates::Interval(_)) && self.interval.is_none();
        let kind = self.kind.unwrap_or(if regular {
            RunKind::Regular
        } else {
            RunKind::Backfill
        });
        Ok(NewRun {
            dates,
            kind,
            by: self.by.clone().unwrap_or_else(default_user),
            reason: self.reason.clone(),
            selection,
        })
    }

    /// `--only` takes the dates of a span in one state; `--lookback` takes every date
    /// asked for and heals the days before them by its own rule. Together they say two
    /// things: refused (exit 2, nothing written), with the two ways that work.
    fn refuse_only_with_lookback(&self) -> Result<()> {
        let (Some(only), Some(days)) = (self.only, self.lookback) else {
            return Ok(());
        };
        let dates = self.interval.as_deref().unwrap_or("yesterday");
        Err(Error::bad(format!(
            "--only {only} with --lookback {days}: --only takes the dates of the span in one \
             state, --lookback every date asked for ({dates}) plus the missing, failed or \
             changed ones of the {days} days before; ask for one of them: \
             `--interval START..END --only {only}` over the whole span, or `--lookback {days}` \
             alone"
        )))
    }
}

/// Where a new run's dates are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dates {
    /// An interval known from the request alone.
    Interval(Interval),
    /// `--only` without `--interval`: from the first date the database knows (its state
    /// store's and its sources') up to this day, the regular run's yesterday.
    KnownUpTo(Date),
}

/// A request checked before its database is opened; what day it is is not known yet.
pub struct Checked<'a> {
    request: &'a Request,
    new_run: Checking,
    jobs: usize,
    zone: Tz,
}

/// A new run as far as the request alone says.
enum Checking {
    /// `--run`: its values are its reservation's.
    Reserved,
    /// Its interval given (`--interval`, `--as-of`).
    Known(NewRun),
    /// The regular run's yesterday: the day before today by the database's clock.
    OfToday,
}

impl<'a> Checked<'a> {
    /// The request on the calendar of `clock` (`Clock::read`: on PostgreSQL the server's,
    /// on SQLite the runner's): the regular run's yesterday is the day before today
    /// there, in the project's zone, and the days that have not ended are judged by it.
    pub fn at(self, clock: Clock) -> Result<Asked<'a>> {
        let now = clock.now();
        let new_run = match self.new_run {
            Checking::Reserved => None,
            Checking::Known(r) => Some(r),
            Checking::OfToday => {
                let yesterday = Interval::yesterday_of(today(now, self.zone))?;
                Some(self.request.new_run(yesterday)?)
            }
        };
        Ok(Asked {
            request: self.request,
            new_run,
            jobs: self.jobs,
            zone: self.zone,
            clock,
            now,
        })
    }
}

/// A request checked and put on the database's calendar: what the run starts from.
pub struct Asked<'a> {
    pub request: &'a Request,
    /// A new run's own values; None for `--run`, whose values its reservation has.
    pub new_run: Option<NewRun>,
    /// How many workers compute its dates (each with a session of its own).
    pub jobs: usize,
    /// The zone whose calendar days the dates are.
    pub zone: Tz,
    /// The clock that decides (the database's), for instants later in the run.
    pub clock: Clock,
    /// Now by that clock, once: the regular run's today and the days that have not
    /// ended are judged at the same instant.
    pub now: DateTime<Utc>,
}

/// A new run, as it is recorded.
pub struct NewRun {
    pub dates: Dates,
    pub kind: RunKind,
    pub by: String,
    pub reason: Option<String>,
    pub selection: Selection,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookback_fills_a_regular_run_only() {
        let defaults = ApplyDefaults {
            lookback: Some(5),
            jobs: None,
        };
        let regular = Request {
            as_of: Some("2026-02-10".into()),
            ..Request::default()
        };
        assert_eq!(regular.clone().with_defaults(&defaults).lookback, Some(5));
        let own = Request {
            lookback: Some(0),
            ..regular.clone()
        };
        assert_eq!(own.with_defaults(&defaults).lookback, Some(0));
        for other in [
            Request {
                interval: Some("2026-02-01".into()),
                as_of: None,
                ..regular.clone()
            },
            Request {
                run: Some(3),
                as_of: None,
                ..regular.clone()
            },
            Request {
                only: Some(OnlyFilter::Missing),
                ..regular.clone()
            },
        ] {
            assert_eq!(other.with_defaults(&defaults).lookback, None);
        }
        assert_eq!(
            regular.with_defaults(&ApplyDefaults::default()).lookback,
            None
        );
    }

    fn new_run(request: Request) -> Result<NewRun> {
        let asked = request.asked()?.expect("--interval or --as-of");
        request.new_run(asked)
    }

    fn day(text: &str) -> Date {
        parse_date(text, "test").unwrap()
    }

    fn interval(text: &str) -> Interval {
        Interval::parse(text).unwrap()
    }

    #[test]
    fn an_interval_with_a_look_back_is_its_dates_and_the_days_before() {
        let r = new_run(Request {
            interval: Some("2026-11-28..2026-11-30".into()),
            lookback: Some(7),
            ..Request::default()
        })
        .unwrap();
        assert_eq!(r.dates, Dates::Interval(interval("2026-11-21..2026-11-30")));
        assert_eq!(
            r.selection,
            Selection::Lookback {
                first: "2026-11-28".into(),
                days: 7
            }
        );
        assert_eq!(r.kind, RunKind::Backfill);
        // The regular run's look back is the same rule, from yesterday.
        let regular = new_run(Request {
            as_of: Some("2026-12-01".into()),
            lookback: Some(7),
            ..Request::default()
        })
        .unwrap();
        assert_eq!(
            regular.dates,
            Dates::Interval(interval("2026-11-23..2026-11-30"))
        );
        assert!(regular.selection.looks_back_at("2026-11-29"));
        assert_eq!(regular.kind, RunKind::Regular);
        let asked_regular = Request {
            interval: Some("2026-11-30".into()),
            lookback: Some(1),
            kind: Some(RunKind::Regular),
            ..Request::default()
        };
        assert_eq!(new_run(asked_regular).unwrap().kind, RunKind::Regular);
    }

    #[test]
    fn only_without_an_interval_looks_at_the_known_dates_up_to_yesterday() {
        let r = new_run(Request {
            as_of: Some("2026-12-01".into()),
            only: Some(OnlyFilter::Changed),
            ..Request::default()
        })
        .unwrap();
        assert_eq!(r.dates, Dates::KnownUpTo(day("2026-11-30")));
        assert_eq!(r.selection, Selection::Only(Some(OnlyFilter::Changed)));
        assert_eq!(
            r.kind,
            RunKind::Backfill,
            "a span of history, not yesterday"
        );
        let within = new_run(Request {
            interval: Some("2026-11-01..2026-11-30".into()),
            only: Some(OnlyFilter::Changed),
            ..Request::default()
        })
        .unwrap();
        assert_eq!(
            within.dates,
            Dates::Interval(interval("2026-11-01..2026-11-30"))
        );
    }

    #[test]
    fn only_with_a_look_back_is_refused_with_the_two_ways_that_work() {
        for interval in [None, Some("2026-11-01..2026-11-30".to_string())] {
            let refused = new_run(Request {
                interval,
                only: Some(OnlyFilter::Missing),
                lookback: Some(3),
                ..Request::default()
            });
            let Err(Error::BadInput(message)) = refused else {
                panic!("--only with --lookback is bad input");
            };
            assert!(
                message.contains("--interval START..END --only missing")
                    && message.contains("`--lookback 3` alone"),
                "{message}"
            );
        }
    }

    #[test]
    fn the_regular_runs_yesterday_is_the_day_before_the_database_clocks_today() {
        let server = chrono::DateTime::parse_from_rfc3339("2026-12-03T23:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        // Whatever this runner's clock says, the server's decides.
        let clock = Clock::of(Some(server), Utc::now());
        let at = |request: &Request, zone| {
            let checked = Checked {
                request,
                new_run: Checking::OfToday,
                jobs: 1,
                zone,
            };
            checked.at(clock).unwrap().new_run.unwrap().dates
        };
        let regular = Request::default();
        assert_eq!(
            at(&regular, Tz::UTC),
            Dates::Interval(interval("2026-12-02"))
        );
        // The project's zone applies to the server's now: 08:30 on the 4th in Seoul.
        assert_eq!(
            at(&regular, Tz::Asia__Seoul),
            Dates::Interval(interval("2026-12-03"))
        );
        let back = Request {
            lookback: Some(2),
            ..Request::default()
        };
        assert_eq!(
            at(&back, Tz::UTC),
            Dates::Interval(interval("2026-11-30..2026-12-02"))
        );
    }

    #[test]
    fn jobs_fill_every_run_unless_given() {
        let defaults = ApplyDefaults {
            lookback: None,
            jobs: Some(3),
        };
        let backfill = Request {
            interval: Some("2026-02-01..2026-02-09".into()),
            ..Request::default()
        };
        assert_eq!(backfill.clone().with_defaults(&defaults).jobs, Some(3));
        let reserved = Request {
            run: Some(4),
            ..Request::default()
        };
        assert_eq!(reserved.clone().with_defaults(&defaults).jobs, Some(3));
        let own = Request {
            jobs: Some(1),
            ..backfill
        };
        assert_eq!(own.with_defaults(&defaults).jobs, Some(1));
        assert_eq!(reserved.with_defaults(&ApplyDefaults::default()).jobs, None);
    }
}
