//! Which dates of a cascaded run wait for which, so that `--jobs N` can build dates side
//! by side and still build every partition after what it reads: date D waits for each
//! earlier date E of the run whose partitions one of D's partitions reads (a month's last
//! day for its days, a rolling day for the six before it). Only direct reads are listed:
//! E itself was not begun before the dates it reads had ended. Reads within one date need
//! no wait: its partitions are built in one transaction, in dependency order.

use std::collections::{BTreeMap, BTreeSet};

use chrono_tz::Tz;

use crate::dates::interval::Date;
use crate::dates::period::Period;
use crate::pipeline::cascade::{reads, Cascade, Part};
use crate::pipeline::Pipeline;

/// Per date of `cascade`, the earlier dates it waits for (a date that waits for none is
/// left out).
pub fn waits(pipeline: &Pipeline, cascade: &Cascade, tz: Tz) -> BTreeMap<Date, BTreeSet<Date>> {
    let built = built_on(cascade);
    let mut out = BTreeMap::new();
    for (&date, parts) in &cascade.dates {
        let before: BTreeSet<Date> = parts
            .iter()
            .flat_map(|part| read_dates(pipeline, &built, *part, tz))
            .filter(|e| *e < date)
            .collect();
        if !before.is_empty() {
            out.insert(date, before);
        }
    }
    out
}

/// Per model (its place), each period the cascade builds and the date it is built on.
fn built_on(cascade: &Cascade) -> BTreeMap<usize, BTreeMap<Period, Date>> {
    let mut built: BTreeMap<usize, BTreeMap<Period, Date>> = BTreeMap::new();
    for (&date, parts) in &cascade.dates {
        for part in parts {
            built
                .entry(part.model)
                .or_default()
                .insert(part.period, date);
        }
    }
    built
}

/// The dates the partitions `part` reads of other models are built on (sources are not
/// built by a run: nothing to wait for).
fn read_dates(
    pipeline: &Pipeline,
    built: &BTreeMap<usize, BTreeMap<Period, Date>>,
    part: Part,
    tz: Tz,
) -> Vec<Date> {
    let model = &pipeline.models[part.model];
    let mut out = Vec::new();
    for read in model.reads.iter().filter(|r| !r.source) {
        let Some(u) = pipeline.models.iter().position(|m| m.name == read.from) else {
            continue;
        };
        let (Some(theirs), Some((first, last))) = (
            built.get(&u),
            reads(part.period, read, pipeline.models[u].grain, tz),
        ) else {
            continue;
        };
        out.extend(theirs.range(first..=last).map(|(_, d)| *d));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Dialect;
    use crate::pipeline::cascade::{plan, Ask};
    use chrono::{NaiveDate, TimeZone, Utc};

    fn d(s: &str) -> Date {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn days(from: &str, to: &str) -> BTreeSet<Date> {
        d(from).iter_days().take_while(|x| *x <= d(to)).collect()
    }

    /// A model file: `name` of `grain`, with `reads` as its `depends_on` (none: no line).
    fn model(name: &str, grain: &str, reads: &str) -> String {
        let depends = match reads {
            "" => String::new(),
            r => format!("-- depends_on: {r}\n"),
        };
        format!(
            "-- name: {name}\n-- version: 1\n-- grain: {grain}\n-- key: ds\n-- values: n\n{depends}\
             -- create: CREATE TABLE {name} (ds DATE NOT NULL, n BIGINT NOT NULL, run_id BIGINT NOT NULL)\n\
             SELECT {{{{ ds }}}} AS ds, 1 AS n\n"
        )
    }

    /// A pipeline of `models` (name, grain, depends_on), loaded from a temp folder.
    fn pipeline(models: &[(&str, &str, &str)]) -> Pipeline {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("models")).unwrap();
        for (name, grain, reads) in models {
            let file = dir.path().join("models").join(format!("{name}.sql"));
            std::fs::write(file, model(name, grain, reads)).unwrap();
        }
        Pipeline::load(Some(dir.path()), Dialect::Sqlite).unwrap()
    }

    /// Every partition of the run of `from..=to`, its periods ended by March.
    fn waits_of(p: &Pipeline, from: &str, to: &str) -> BTreeMap<Date, BTreeSet<Date>> {
        let asked = days(from, to);
        let cascade = plan(&Ask {
            pipeline: p,
            zone: Tz::UTC,
            days: &asked,
            downstream: true,
            ended_by: Utc.with_ymd_and_hms(2026, 3, 2, 0, 0, 0).unwrap(),
            partial: false,
            closing: None,
            hours: None,
            narrowed: &crate::pipeline::cascade::Narrowed::new(),
        });
        waits(p, &cascade, Tz::UTC)
    }

    #[test]
    fn a_month_s_last_day_waits_for_all_its_days() {
        let p = pipeline(&[("days", "day", ""), ("months", "month", "days")]);
        let waits = waits_of(&p, "2026-02-01", "2026-02-28");
        assert_eq!(waits.keys().collect::<Vec<_>>(), [&d("2026-02-28")]);
        assert_eq!(waits[&d("2026-02-28")], days("2026-02-01", "2026-02-27"));
    }

    #[test]
    fn a_rolling_day_waits_for_the_six_before_it_in_the_run() {
        let p = pipeline(&[("days", "day", ""), ("rolling", "day", "days window -6..0")]);
        let waits = waits_of(&p, "2026-02-01", "2026-02-20");
        assert_eq!(waits[&d("2026-02-10")], days("2026-02-04", "2026-02-09"));
        // Its first dates wait only for the run's dates before them.
        assert_eq!(waits[&d("2026-02-03")], days("2026-02-01", "2026-02-02"));
        assert!(!waits.contains_key(&d("2026-02-01")));
        // The rolling days the run's last days feed are built after the interval, on
        // dates that wait for them.
        assert_eq!(waits[&d("2026-02-26")], days("2026-02-20", "2026-02-20"));
    }

    #[test]
    fn weeks_wait_for_their_days_and_a_month_the_run_reaches_for_the_run_s_days() {
        let p = pipeline(&[
            ("days", "day", ""),
            ("weeks", "week", "days"),
            ("months", "month", "days"),
        ]);
        let waits = waits_of(&p, "2026-02-02", "2026-02-15");
        // 2026-02-02 is a Monday: two whole weeks; the month is rebuilt on its last day,
        // after the days of it the run rebuilds.
        assert_eq!(waits[&d("2026-02-08")], days("2026-02-02", "2026-02-07"));
        assert_eq!(waits[&d("2026-02-15")], days("2026-02-09", "2026-02-14"));
        assert_eq!(waits[&d("2026-02-28")], days("2026-02-02", "2026-02-15"));
        assert_eq!(waits.len(), 3, "{waits:?}");
    }

    #[test]
    fn days_only_wait_for_nothing() {
        let p = pipeline(&[("days", "day", ""), ("more", "day", "days")]);
        assert!(waits_of(&p, "2026-02-01", "2026-02-28").is_empty());
    }
}
