//! What `apply` is asked, as plain values: the command line's words (`Request`, made from
//! clap's `ApplyArgs` in cli.rs, or built by the demo), the project's `[apply]` defaults
//! filled in, then checked (`Asked`) before anything is opened.

use chrono_tz::Tz;

use crate::dates::Selection;
use crate::db::{Dialect, Target};
use crate::error::{Error, Result};
use crate::interval::{fmt_date, parse_date, today_in, Interval};
use crate::requester::default_user;
use crate::settings::{ApplyDefaults, Settings};
use crate::store;
use crate::vocabulary::{OnlyFilter, RunKind};

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
    pub sql: bool,
    /// `--run`: carry out a run made by `sqlrun reserve`.
    pub run: Option<i64>,
    pub allow_partial_day: bool,
}

impl Request {
    /// The request with the project's defaults filled in where they apply. `lookback` is
    /// for a regular run only: a backfill (`--interval`), a reserved run (`--run`) or a
    /// selection (`--only`) computes what it names and nothing older. `jobs` is for every
    /// run.
    pub fn with_defaults(mut self, defaults: &ApplyDefaults) -> Request {
        let regular = self.interval.is_none() && self.run.is_none() && self.only.is_none();
        if regular && self.lookback.is_none() {
            self.lookback = defaults.lookback;
        }
        self.jobs = self.jobs.or(defaults.jobs);
        self
    }

    /// How many dates the run computes at once.
    pub fn asked_jobs(&self) -> u32 {
        self.jobs.unwrap_or(1)
    }

    /// The request checked before the database is touched: a new run's interval and
    /// selection (unless `--run`), then the workers it may have on its database.
    pub fn check(&self, settings: &Settings) -> Result<Asked<'_>> {
        let new_run = match self.run {
            Some(_) => None,
            None => Some(self.new_run(settings.timezone)?),
        };
        let jobs = self.workers(&store::target(settings)?)?;
        Ok(Asked {
            request: self,
            new_run,
            jobs,
            zone: settings.timezone,
        })
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

    fn new_run(&self, zone: Tz) -> Result<NewRun> {
        let interval = match (&self.interval, &self.as_of) {
            (Some(text), _) => Interval::parse(text)?,
            (None, Some(as_of)) => Interval::yesterday_of(parse_date(as_of, "--as-of")?)?,
            (None, None) => Interval::yesterday_of(today_in(zone))?,
        };
        let (interval, selection) = match self.lookback {
            None => (interval, Selection::Only(self.only)),
            Some(days) => (
                interval.looking_back(days)?,
                Selection::Lookback {
                    newest: fmt_date(interval.end),
                    days,
                },
            ),
        };
        let kind = self.kind.unwrap_or(if self.interval.is_some() {
            RunKind::Backfill
        } else {
            RunKind::Regular
        });
        Ok(NewRun {
            interval,
            kind,
            by: self.by.clone().unwrap_or_else(default_user),
            reason: self.reason.clone(),
            selection,
        })
    }
}

/// A request checked: what the run starts from, before its database is read.
pub struct Asked<'a> {
    pub request: &'a Request,
    /// A new run's own values; None for `--run`, whose values its reservation has.
    pub new_run: Option<NewRun>,
    /// How many workers compute its dates (each with a session of its own).
    pub jobs: usize,
    /// The zone whose calendar days the dates are.
    pub zone: Tz,
}

/// A new run, as it is recorded.
pub struct NewRun {
    pub interval: Interval,
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
