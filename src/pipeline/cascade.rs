//! The cascade: which partitions of which models a run builds, and in which date's
//! transaction. A run asks for periods (every partition of each model whose period lies in
//! its dates); each partition it rebuilds changes what its downstream partitions read, so
//! those are rebuilt too, and only those. A partition is built in the transaction of the
//! date its period ends on, or later when something it reads is built later (a day that
//! reads its month waits for the month's last day): dates go in ascending order, and
//! within a date's transaction models go in dependency order, so every partition is built
//! after everything it reads is committed or written before it in the same transaction.
//!
//! The mapping is two rules, in one place, for both backends (hours need a time-zone
//! database, which SQLite does not have):
//! - partition P of model M reads, of an upstream U with `window (A, B)`, the periods of U
//!   from A before the first one P overlaps to B after the last one;
//! - so a rebuilt period Q of U feeds exactly the partitions of M that overlap the span
//!   from Q shifted by -B to Q shifted by -A (each such partition reads Q, and no other).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::dates::interval::Date;
use crate::dates::period::{runs, Grain, Period};
use crate::pipeline::grains::Read;
use crate::pipeline::{Model, Pipeline};

/// One partition a run builds: the model (by its place in `Pipeline::models`) and the
/// period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub model: usize,
    pub period: Period,
}

/// Why a model's partition is built: the run asked for it, or it reads a partition the run
/// rebuilds (the first upstream that says so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    Asked,
    Reads(String),
}

/// What a run builds, by date.
#[derive(Debug, Clone, Default)]
pub struct Cascade {
    /// Each date's partitions, models in dependency order.
    pub dates: BTreeMap<Date, Vec<Part>>,
    /// Per model (its place), the periods it builds and why.
    pub reached: BTreeMap<usize, BTreeMap<Period, Why>>,
    /// Per model, the downstream periods not built because they have not ended.
    pub not_ended: BTreeMap<usize, Vec<Period>>,
    /// The instant periods had to end by (`Ask::ended_by`): one built that ends later
    /// (`--allow-partial`) is provisional.
    pub ended_by: DateTime<Utc>,
}

/// What the cascade is planned from.
pub struct Ask<'a> {
    pub pipeline: &'a Pipeline,
    pub zone: Tz,
    /// The days the run takes on (its interval, or what `--only` selected there).
    pub days: &'a BTreeSet<Date>,
    /// `--no-downstream`: only the periods asked for.
    pub downstream: bool,
    /// A period that ends after this instant has not ended: it is not built unless
    /// `partial` (`--allow-partial`).
    pub ended_by: DateTime<Utc>,
    pub partial: bool,
    /// The regular run's yesterday: each model's period that ends on it is asked too
    /// (the last complete week, month, ...), whether or not all its days are.
    pub closing: Option<Date>,
    /// Hours asked for (an interval with an hour end, `--as-of` an hour): of the days,
    /// only the partitions that lie within them.
    pub hours: Option<(DateTime<Utc>, DateTime<Utc>)>,
    /// Days taken for `upstream` alone (`--only upstream`, a look back): on each, only
    /// the named models' partitions that start there are asked, not the day's others.
    pub narrowed: &'a Narrowed,
}

impl<'a> Ask<'a> {
    /// The cascade of `days` (and of the `narrowed` partitions) as it stands now: every
    /// downstream partition that has ended, none provisional, no regular run's closing
    /// period (what `sqlrun reserve` holds, and what an undo's plan names).
    pub fn now(
        pipeline: &'a Pipeline,
        zone: Tz,
        days: &'a BTreeSet<Date>,
        narrowed: &'a Narrowed,
    ) -> Self {
        Ask {
            pipeline,
            zone,
            days,
            downstream: true,
            ended_by: Utc::now(),
            partial: false,
            closing: None,
            hours: None,
            narrowed,
        }
    }
}

/// Per day, the models whose partitions starting on it a run asks for, alone.
pub type Narrowed = BTreeMap<Date, BTreeSet<String>>;

/// Whether a pipeline needs the cascade at all: a model of another grain than the day, or
/// one that reads a window. A pipeline of days alone is built as it always was: each date,
/// every model.
pub fn needed(pipeline: &Pipeline) -> bool {
    pipeline
        .models
        .iter()
        .any(|m| m.grain != Grain::Day || m.reads.iter().any(|r| r.window != (0, 0)))
}

/// The cascade of `ask`.
pub fn plan(ask: &Ask) -> Cascade {
    let pipeline = ask.pipeline;
    let computed: BTreeSet<&str> = pipeline
        .computed_models()
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    let mut cascade = Cascade {
        ended_by: ask.ended_by,
        ..Cascade::default()
    };
    for (i, model) in pipeline.models.iter().enumerate() {
        if !computed.contains(model.name.as_str()) {
            continue;
        }
        let mut periods: BTreeMap<Period, Why> = asked(model, ask)
            .into_iter()
            .map(|p| (p, Why::Asked))
            .collect();
        if ask.downstream {
            for read in model.reads.iter().filter(|r| !r.source) {
                let Some(u) = pipeline.models.iter().position(|m| m.name == read.from) else {
                    continue;
                };
                for q in cascade.reached.get(&u).into_iter().flat_map(|r| r.keys()) {
                    for p in feeds(*q, read, model.grain, ask.zone) {
                        periods
                            .entry(p)
                            .or_insert_with(|| Why::Reads(read.from.clone()));
                    }
                }
            }
        }
        let (built, waiting): (BTreeMap<_, _>, BTreeMap<_, _>) = periods
            .into_iter()
            .partition(|(p, _)| ask.partial || p.ends(ask.zone) <= ask.ended_by);
        if !waiting.is_empty() {
            cascade.not_ended.insert(i, waiting.into_keys().collect());
        }
        cascade.reached.insert(i, built);
    }
    cascade.dates = by_date(pipeline, &cascade.reached, ask.zone);
    cascade
}

/// The periods of `model` asked for: those that lie in the days (and hours) asked for, and
/// for a regular run the one that ends on its day.
fn asked(model: &Model, ask: &Ask) -> BTreeSet<Period> {
    let tz = ask.zone;
    let inside = |p: &Period| {
        ask.hours
            .is_none_or(|(from, to)| from <= p.begins(tz) && p.ends(tz) <= to)
    };
    let mut out: BTreeSet<Period> = asked_days(model, ask).into_iter().filter(inside).collect();
    for (day, models) in ask.narrowed {
        if models.contains(&model.name) {
            out.extend(periods_from(model.grain, *day, tz));
        }
    }
    if let Some(day) = ask.closing.filter(|_| model.grain != Grain::Hour) {
        let p = Period::of_date(model.grain, day, tz);
        if p.last_day(tz) == day {
            out.insert(p);
        }
    }
    out
}

/// The periods of `model` whose days all lie in the days asked for, for every model (not
/// narrowed); an hourly model: every hour of each such day.
fn asked_days(model: &Model, ask: &Ask) -> BTreeSet<Period> {
    let tz = ask.zone;
    let whole = |d: &Date| ask.days.contains(d) && !ask.narrowed.contains_key(d);
    let mut out = BTreeSet::new();
    for day in ask.days.iter().filter(|d| whole(d)) {
        if model.grain == Grain::Hour {
            out.extend(periods_from(Grain::Hour, *day, tz));
            continue;
        }
        let p = Period::of_date(model.grain, *day, tz);
        if out.contains(&p) {
            continue;
        }
        let (first, last) = (p.first_day(tz), p.last_day(tz));
        if first
            .iter_days()
            .take_while(|d| *d <= last)
            .all(|d| whole(&d))
        {
            out.insert(p);
        }
    }
    out
}

/// The partitions of `grain` that start on `day`: its hours, or the period that holds it
/// (a week's, a month's partition is recorded on its first day).
fn periods_from(grain: Grain, day: Date, tz: Tz) -> Vec<Period> {
    match grain {
        Grain::Hour => {
            let whole = Period::of_date(Grain::Day, day, tz);
            Period::overlapping(Grain::Hour, whole.begins(tz), whole.ends(tz), tz)
        }
        _ => vec![Period::of_date(grain, day, tz)],
    }
}

/// The partitions of a model of grain `own` that read the upstream period `q` through
/// `read`.
pub fn feeds(q: Period, read: &Read, own: Grain, tz: Tz) -> Vec<Period> {
    let (a, b) = read.window;
    let (Some(from), Some(to)) = (q.shift(-b), q.shift(-a)) else {
        return Vec::new();
    };
    Period::overlapping(own, from.begins(tz), to.ends(tz), tz)
}

/// The first and last upstream periods of grain `theirs` that partition `p` reads through
/// `read`.
pub fn reads(p: Period, read: &Read, theirs: Grain, tz: Tz) -> Option<(Period, Period)> {
    let first = Period::of_instant(theirs, p.begins(tz), tz);
    let last = Period::of_instant(theirs, p.ends(tz) - chrono::Duration::seconds(1), tz);
    Some((first.shift(read.window.0)?, last.shift(read.window.1)?))
}

/// A run of consecutive partitions of one model that the cascade builds for one reason,
/// as `--dry-run` shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reach {
    pub model: String,
    pub grain: Grain,
    pub first: String,
    pub last: String,
    pub count: usize,
    /// `asked`, `reads 2026-02-09..2026-02-11 of daily_revenue`, or `not ended (...)`.
    pub why: String,
}

/// The cascade as ranges per model (models in dependency order), with why.
pub fn reaches(pipeline: &Pipeline, cascade: &Cascade, tz: Tz) -> Vec<Reach> {
    let mut out = Vec::new();
    for (&i, periods) in &cascade.reached {
        let model = &pipeline.models[i];
        for (first, last, count, why) in runs(periods.iter().map(|(p, w)| (*p, w))) {
            let why = match why {
                Why::Reads(from) => read_text(pipeline, cascade, model, (first, last), from, tz),
                Why::Asked => "asked".to_string(),
            };
            out.push(reach(model, (first, last), count, why, tz));
        }
        let waiting = cascade.not_ended.get(&i).into_iter().flatten();
        for (first, last, count, _) in runs(waiting.map(|p| (*p, ()))) {
            let why = "not built: has not ended (--allow-partial builds it)".to_string();
            out.push(reach(model, (first, last), count, why, tz));
        }
    }
    out
}

fn reach(
    model: &Model,
    (first, last): (Period, Period),
    count: usize,
    why: String,
    tz: Tz,
) -> Reach {
    Reach {
        model: model.name.clone(),
        grain: model.grain,
        first: first.label(tz),
        last: last.label(tz),
        count,
        why,
    }
}

/// What of `from` the partitions `first..=last` read that the run rebuilds, as a range.
fn read_text(
    pipeline: &Pipeline,
    c: &Cascade,
    model: &Model,
    (first, last): (Period, Period),
    from: &str,
    tz: Tz,
) -> String {
    let u = pipeline.models.iter().position(|m| m.name == from);
    let read = model.reads.iter().find(|r| !r.source && r.from == from);
    let span = u.zip(read).and_then(|(u, read)| {
        let theirs = pipeline.models[u].grain;
        let (a, _) = reads(first, read, theirs, tz)?;
        let (_, b) = reads(last, read, theirs, tz)?;
        let built = c.reached.get(&u)?;
        let mut read = built.range(a..=b).map(|(q, _)| *q);
        let lo = read.next()?;
        Some((lo, read.next_back().unwrap_or(lo)))
    });
    match span {
        Some((a, b)) if a == b => format!("reads {} of {from}", a.label(tz)),
        Some((a, b)) => format!("reads {}..{} of {from}", a.label(tz), b.label(tz)),
        None => format!("reads {from}"),
    }
}

/// The span partition `p` of `model` reads through its windows and across grains (of
/// models, or of a dated source's days): the first upstream period and the last; `p`
/// itself when it reads only its own grain without a window. A day over hours gets the
/// instants of its local midnights.
pub fn window(pipeline: &Pipeline, model: &Model, p: Period, tz: Tz) -> (Period, Period) {
    let spans = model.reads.iter().filter_map(|r| {
        // A dated source's periods are its days.
        let theirs = match r.source {
            true => Grain::Day,
            false => pipeline.models.iter().find(|m| m.name == r.from)?.grain,
        };
        // A read of its own grain without a window reads its own period.
        let plain = r.window == (0, 0) && theirs == model.grain;
        (!plain).then(|| reads(p, r, theirs, tz)).flatten()
    });
    // By instants: periods of different grains do not order by their own Ord.
    spans
        .reduce(|(a, b), (c, d)| {
            let first = if c.begins(tz) < a.begins(tz) { c } else { a };
            let last = if d.ends(tz) > b.ends(tz) { d } else { b };
            (first, last)
        })
        .unwrap_or((p, p))
}

/// Each partition under the date it is built on: the day its period ends on, or the
/// latest date of a partition it reads that this run builds.
fn by_date(
    pipeline: &Pipeline,
    reached: &BTreeMap<usize, BTreeMap<Period, Why>>,
    tz: Tz,
) -> BTreeMap<Date, Vec<Part>> {
    let mut anchors: BTreeMap<usize, BTreeMap<Period, Date>> = BTreeMap::new();
    let mut dates: BTreeMap<Date, Vec<Part>> = BTreeMap::new();
    for (&i, periods) in reached {
        let model = &pipeline.models[i];
        let mut own = BTreeMap::new();
        for &p in periods.keys() {
            let mut anchor = p.last_day(tz);
            for read in model.reads.iter().filter(|r| !r.source) {
                let Some(u) = pipeline.models.iter().position(|m| m.name == read.from) else {
                    continue;
                };
                let (Some(built), Some((first, last))) = (
                    anchors.get(&u),
                    reads(p, read, pipeline.models[u].grain, tz),
                ) else {
                    continue;
                };
                if let Some(latest) = built.range(first..=last).map(|(_, d)| *d).max() {
                    anchor = anchor.max(latest);
                }
            }
            own.insert(p, anchor);
            dates.entry(anchor).or_default().push(Part {
                model: i,
                period: p,
            });
        }
        anchors.insert(i, own);
    }
    dates
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn d(s: &str) -> Date {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn read(window: (i64, i64)) -> Read {
        Read {
            from: "up".into(),
            window,
            source: false,
        }
    }

    #[test]
    fn a_day_feeds_its_week_its_month_and_the_seven_rolling_days() {
        let tz = Tz::UTC;
        let day = Period::of_date(Grain::Day, d("2026-02-11"), tz);
        let labels = |ps: Vec<Period>| ps.iter().map(|p| p.label(tz)).collect::<Vec<_>>();
        assert_eq!(
            labels(feeds(day, &read((0, 0)), Grain::Week, tz)),
            ["2026-W07"]
        );
        assert_eq!(
            labels(feeds(day, &read((0, 0)), Grain::Month, tz)),
            ["2026-02"]
        );
        let rolling = feeds(day, &read((-6, 0)), Grain::Day, tz);
        assert_eq!(rolling.len(), 7);
        assert_eq!(rolling[0].label(tz), "2026-02-11");
        assert_eq!(rolling[6].label(tz), "2026-02-17");
        let month = Period::of_date(Grain::Month, d("2026-02-01"), tz);
        assert_eq!(feeds(month, &read((0, 0)), Grain::Day, tz).len(), 28);
    }

    #[test]
    fn what_a_partition_reads_is_what_feeds_it() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        for (own, theirs, window) in [
            (Grain::Day, Grain::Day, (-6, 0)),
            (Grain::Week, Grain::Day, (0, 0)),
            (Grain::Day, Grain::Month, (-1, 0)),
            (Grain::Day, Grain::Hour, (0, 2)),
            (Grain::Hour, Grain::Day, (0, 0)),
        ] {
            let r = read(window);
            let q = Period::of_date(theirs, d("2026-03-29"), tz)
                .shift(3)
                .unwrap();
            for p in feeds(q, &r, own, tz) {
                let (first, last) = reads(p, &r, theirs, tz).unwrap();
                assert!(first <= q && q <= last, "{own} {p:?} should read {q:?}");
            }
            let before = Period::of_date(own, d("2026-03-20"), tz);
            let around: Vec<Period> = (0..40).filter_map(|n| before.shift(n)).collect();
            for p in around {
                let (first, last) = reads(p, &r, theirs, tz).unwrap();
                let fed = feeds(q, &r, own, tz).contains(&p);
                assert_eq!(fed, first <= q && q <= last, "{own} {p:?} and {q:?}");
            }
        }
    }
}
