//! Grains, windows and the cascade (issue 34): models of a week, a month, an hour and a
//! rolling seven-day window beside daily_revenue. A run rebuilds the partitions asked for,
//! then exactly the downstream partitions whose inputs it changed and whose periods have
//! ended (`--as-of` says which have). Every value of a roll-up is checked against a sum
//! computed here from daily_revenue, and "which partitions did run R write" is read both
//! from partition_models and from each table's own run_id column.

use std::collections::BTreeMap;

use chrono::{Datelike, Duration, Months, NaiveDate, NaiveDateTime};

use crate::support::*;
use crate::templates::copy_templates;

/// The orders of every test: 59 days from 2026-01-01 (January and February).
const FIRST: &str = "2026-01-01";
const DAYS: i64 = 59;
pub(crate) const FULL: &str = "2026-01-01..2026-02-28";
/// The day after the orders: every day, week and month they touch has ended, but the
/// week of 2026-02-23 (it ends 2026-03-01, exclusive end 03-02).
pub(crate) const AS_OF: &str = "2026-03-01";

/// The tables of the four-model pipeline, each with its columns but run_id.
const TABLES: [(&str, &str); 4] = [
    ("daily_revenue", "ds, revenue, order_count"),
    ("weekly_revenue", "ds, revenue"),
    ("monthly_revenue", "ds, revenue"),
    ("rolling7", "ds, revenue"),
];

/// A roll-up to `grain` of table or view `from` (a model's, or its `_current` view, which
/// the header's `depends_on` names as the model), in table `name`; `extra` adds header
/// lines.
fn roll_up(name: &str, grain: &str, from: &str, extra: &str) -> String {
    let depends_on = from.trim_end_matches("_current");
    format!(
        "\
-- name: {name}
-- version: 1
-- grain: {grain}
-- key: ds
-- values: revenue
{extra}-- depends_on: {depends_on}
-- create: CREATE TABLE {name} (ds DATE NOT NULL, revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
SELECT {{{{ period_start }}}} AS ds, coalesce(sum(revenue), 0) AS revenue
FROM {from} WHERE ds >= {{{{ period_start }}}} AND ds < {{{{ period_end }}}}
"
    )
}

/// The 7-day rolling revenue, ending on each day; `window` as written in its header.
fn rolling7(window: &str) -> String {
    format!(
        "\
-- name: rolling7
-- version: 1
-- key: ds
-- values: revenue
-- depends_on: {window}
-- create: CREATE TABLE rolling7 (ds DATE NOT NULL, revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
SELECT {{{{ ds }}}} AS ds, coalesce(sum(revenue), 0) AS revenue
FROM daily_revenue WHERE ds >= {{{{ window_start }}}} AND ds < {{{{ window_end }}}}
"
    )
}

/// One row per hour, no source: the hour's start (UTC text on SQLite, a timestamptz on
/// PostgreSQL).
fn hourly_ticks() -> String {
    let kind = if is_sqlite() { "TEXT" } else { "TIMESTAMPTZ" };
    format!(
        "\
-- name: hourly_ticks
-- version: 1
-- grain: hour
-- key: hour
-- date_column: hour
-- values: n
-- create: CREATE TABLE hourly_ticks (hour {kind} NOT NULL, n BIGINT NOT NULL, run_id BIGINT NOT NULL, PRIMARY KEY (hour))
SELECT {{{{ period_start }}}} AS hour, 1 AS n
"
    )
}

/// weekly_revenue, monthly_revenue and rolling7 over daily_revenue, as the brief's
/// working pipeline has them.
pub(crate) fn four_models() -> Vec<(&'static str, String)> {
    vec![
        (
            "weekly_revenue",
            roll_up("weekly_revenue", "week", "daily_revenue", ""),
        ),
        (
            "monthly_revenue",
            roll_up("monthly_revenue", "month", "daily_revenue", ""),
        ),
        ("rolling7", rolling7("daily_revenue window -6..0")),
    ]
}

/// The pipeline folder: the built-in templates (daily_revenue over orders) and `models`
/// (file name without `.sql`, text) beside them.
fn pipeline(sb: &Sandbox, models: &[(&str, String)]) -> String {
    let dir = copy_templates(sb);
    for (name, text) in models {
        std::fs::write(dir.join("models").join(format!("{name}.sql")), text).unwrap();
    }
    dir.to_str().unwrap().to_string()
}

/// A sandbox with a pipeline folder.
pub(crate) struct Grains {
    pub(crate) sb: Sandbox,
    tpl: String,
}

impl Grains {
    pub(crate) fn new(models: &[(&str, String)]) -> Self {
        let sb = Sandbox::new();
        let tpl = pipeline(&sb, models);
        Grains { sb, tpl }
    }

    /// The four-model pipeline over the seeded orders of January and February.
    pub(crate) fn with_orders(seed: u64) -> Self {
        let g = Self::new(&four_models());
        g.sb.insert_orders(&Orders::new(seed, FIRST, DAYS, false).rows);
        g
    }

    /// The project's time zone: Europe/Berlin (a sqlrun.toml in the sandbox).
    fn in_berlin(&self) {
        let toml = "timezone = \"Europe/Berlin\"\n";
        std::fs::write(self.sb.path().join("sqlrun.toml"), toml).unwrap();
    }

    /// `apply ARGS` held right after it reserved its dates (`resume` lets it go on).
    fn held_apply(&self, args: &[&str]) -> std::process::Child {
        let all = [&["--templates", self.tpl.as_str(), "apply"][..], args].concat();
        stopped_at(self.sb.cmd(&all), "reserved")
    }

    /// `status --json --interval I`, parsed.
    fn status_json(&self, interval: &str) -> serde_json::Value {
        let run = self.sqlrun(0, &["status", "--json", "--interval", interval]);
        serde_json::from_str(run.stdout.trim()).unwrap()
    }

    /// `sqlrun --templates DIR ARGS`, wanting exit `code`.
    fn sqlrun(&self, code: i32, args: &[&str]) -> Run {
        let mut all = vec!["--templates", &self.tpl];
        all.extend_from_slice(args);
        self.sb.expect(code, &all)
    }

    /// `apply ARGS`, wanting exit `code`; returns the run and its id (the newest run).
    pub(crate) fn apply(&self, code: i32, args: &[&str]) -> (Run, i64) {
        let mut all = vec!["apply"];
        all.extend_from_slice(args);
        let run = self.sqlrun(code, &all);
        (run, self.sb.last_run_id())
    }

    /// The dates run `run` holds in `reservations`.
    pub(crate) fn held_by(&self, run: i64) -> Vec<String> {
        column(&self.sb.rows(&format!(
            "SELECT ds FROM reservations WHERE run_id = {run} ORDER BY ds"
        )))
    }

    /// Model name -> dates, from partition_models, of the partitions run `run` built.
    pub(crate) fn built_by(&self, run: i64) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in self.sb.rows(&format!(
            "SELECT model, ds FROM partition_models WHERE run_id = {run} ORDER BY model, ds"
        )) {
            let model = r[0].strip_prefix("models/").unwrap_or(&r[0]).to_string();
            out.entry(model).or_default().push(r[1].clone());
        }
        out
    }

    /// Table -> dates whose rows carry run_id `run`, in the four tables.
    pub(crate) fn written_by(&self, run: i64) -> BTreeMap<String, Vec<String>> {
        TABLES
            .iter()
            .filter(|(table, _)| self.sb.table_exists(table))
            .map(|(table, _)| {
                let dates = column(&self.sb.rows(&format!(
                    "SELECT ds FROM {table} WHERE run_id = {run} ORDER BY ds"
                )));
                (table.to_string(), dates)
            })
            .filter(|(_, dates)| !dates.is_empty())
            .collect()
    }

    /// Every row of the four tables, without run_id.
    pub(crate) fn tables(&self) -> BTreeMap<&'static str, Vec<Vec<String>>> {
        TABLES
            .iter()
            .map(|(table, cols)| {
                let rows = match self.sb.table_exists(table) {
                    true => self
                        .sb
                        .rows(&format!("SELECT {cols} FROM {table} ORDER BY ds")),
                    false => vec![vec!["(no such table)".to_string()]],
                };
                (*table, rows)
            })
            .collect()
    }

    /// ds -> revenue of a table.
    pub(crate) fn revenue(&self, table: &str) -> BTreeMap<String, i64> {
        self.sb
            .rows(&format!("SELECT ds, revenue FROM {table}"))
            .into_iter()
            .map(|r| (r[0].clone(), int(&r[1])))
            .collect()
    }

    /// ds -> run_id of a table.
    fn run_ids(&self, table: &str) -> BTreeMap<String, i64> {
        self.sb
            .rows(&format!("SELECT ds, run_id FROM {table}"))
            .into_iter()
            .map(|r| (r[0].clone(), int(&r[1])))
            .collect()
    }

    /// Every row of weekly_revenue, monthly_revenue and rolling7 equals the sum of its
    /// days in daily_revenue, summed here.
    pub(crate) fn assert_roll_ups_add_up(&self) {
        let daily = self.revenue("daily_revenue");
        let sum = |from: NaiveDate, until: NaiveDate| -> i64 {
            daily
                .range(iso(from)..iso(until))
                .map(|(_, revenue)| revenue)
                .sum()
        };
        let spans: [(&str, Span); 3] = [
            ("weekly_revenue", |d| (d, d + Duration::days(7))),
            ("monthly_revenue", |d| {
                (d, d.checked_add_months(Months::new(1)).unwrap())
            }),
            ("rolling7", |d| {
                (d - Duration::days(6), d + Duration::days(1))
            }),
        ];
        for (table, span) in spans {
            let got = self.revenue(table);
            let want: BTreeMap<String, i64> = got
                .keys()
                .map(|ds| {
                    let (from, until) = span(date(ds));
                    (ds.clone(), sum(from, until))
                })
                .collect();
            assert_eq!(got, want, "{table} against daily_revenue (on {BACKEND})");
        }
        for ds in self.revenue("weekly_revenue").keys() {
            assert_eq!(date(ds).weekday(), chrono::Weekday::Mon, "week {ds}");
        }
        for ds in self.revenue("monthly_revenue").keys() {
            assert_eq!(date(ds).day(), 1, "month {ds}");
        }
    }
}

/// The days a roll-up's row reads, from its date: [from, until).
type Span = fn(NaiveDate) -> (NaiveDate, NaiveDate);

pub(crate) fn date(ds: &str) -> NaiveDate {
    NaiveDate::parse_from_str(ds, "%Y-%m-%d").unwrap_or_else(|_| panic!("{ds:?} is no date"))
}

pub(crate) fn iso(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

fn int(s: &str) -> i64 {
    s.parse()
        .unwrap_or_else(|_| panic!("{s:?} is not an integer"))
}

/// The first column of rows.
fn column(rows: &[Vec<String>]) -> Vec<String> {
    rows.iter().map(|r| r[0].clone()).collect()
}

/// Every `step`-th day from `from` to `to`, both included.
fn every(from: &str, to: &str, step: i64) -> Vec<String> {
    let (mut d, end) = (date(from), date(to));
    let mut out = Vec::new();
    while d <= end {
        out.push(iso(d));
        d += Duration::days(step);
    }
    out
}

fn days(from: &str, to: &str) -> Vec<String> {
    every(from, to, 1)
}

/// Model -> dates, as `built_by` and `written_by` give them.
fn plan(parts: &[(&str, Vec<String>)]) -> BTreeMap<String, Vec<String>> {
    parts
        .iter()
        .map(|(m, d)| (m.to_string(), d.clone()))
        .collect()
}

/// Each hour from `from` (UTC, `YYYY-MM-DD HH:00:00`), `n` of them.
fn hours(from: &str, n: i64) -> Vec<String> {
    let start = NaiveDateTime::parse_from_str(from, "%Y-%m-%d %H:%M:%S").unwrap();
    (0..n)
        .map(|i| {
            (start + Duration::hours(i))
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()
        })
        .collect()
}

/// The 1-based number of the line of `text` that contains `part`.
fn line_of(text: &str, part: &str) -> usize {
    text.lines()
        .position(|l| l.contains(part))
        .unwrap_or_else(|| panic!("no {part:?} in {text}"))
        + 1
}

/// What the full build over January and February builds: every day and rolling day,
/// the weeks that have ended (2025-12-29's included: its days 01-01..01-04 changed; not
/// 2026-02-23's, which ends after AS_OF), both months.
fn full_build() -> BTreeMap<String, Vec<String>> {
    plan(&[
        ("daily_revenue", days(FIRST, "2026-02-28")),
        (
            "monthly_revenue",
            vec!["2026-01-01".into(), "2026-02-01".into()],
        ),
        ("rolling7", days(FIRST, "2026-02-28")),
        ("weekly_revenue", every("2025-12-29", "2026-02-16", 7)),
    ])
}

/// What a backfill of 2026-02-09..02-11 builds after the full build: its days, the week
/// and month that hold them, and the rolling days whose windows reach them.
fn three_day_backfill() -> BTreeMap<String, Vec<String>> {
    plan(&[
        ("daily_revenue", days("2026-02-09", "2026-02-11")),
        ("monthly_revenue", vec!["2026-02-01".into()]),
        ("rolling7", days("2026-02-09", "2026-02-17")),
        ("weekly_revenue", vec!["2026-02-09".into()]),
    ])
}

#[test]
fn a_three_day_backfill_reaches_exactly_its_weeks_month_and_rolling_dates() {
    let g = Grains::with_orders(3401);
    let (_, first) = g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    assert_eq!(g.built_by(first), full_build(), "the full build");
    assert_eq!(g.written_by(first), full_build(), "the full build's rows");
    g.assert_roll_ups_add_up();

    let (_, run) = g.apply(
        0,
        &["--interval", "2026-02-09..2026-02-11", "--as-of", AS_OF],
    );
    assert_eq!(g.built_by(run), three_day_backfill(), "partition_models");
    assert_eq!(
        g.written_by(run),
        three_day_backfill(),
        "the tables' run_id"
    );
    g.assert_roll_ups_add_up();

    // Again: the same partitions, the same numbers.
    let before = g.tables();
    let (_, again) = g.apply(
        0,
        &["--interval", "2026-02-09..2026-02-11", "--as-of", AS_OF],
    );
    assert_eq!(g.tables(), before, "the same backfill again");
    assert_eq!(g.built_by(again), three_day_backfill());
}

#[test]
fn the_interval_at_once_and_day_by_day_leave_the_same_tables() {
    let at_once = Grains::with_orders(3402);
    at_once.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let by_day = Grains::with_orders(3402);
    for ds in days(FIRST, "2026-02-28") {
        by_day.apply(0, &["--interval", &ds, "--as-of", AS_OF]);
    }
    assert_eq!(by_day.tables(), at_once.tables());
    at_once.assert_roll_ups_add_up();
    let weeks = column(&at_once.sb.rows("SELECT ds FROM weekly_revenue ORDER BY ds"));
    assert_eq!(weeks, every("2025-12-29", "2026-02-16", 7));
}

#[test]
fn a_late_order_is_healed_by_lookback() {
    let g = Grains::with_orders(3403);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let before: BTreeMap<&str, BTreeMap<String, i64>> =
        TABLES.iter().map(|(t, _)| (*t, g.revenue(t))).collect();
    let amount = 123_457;
    g.sb.insert_orders(&[OrderRow {
        order_id: "late-1".into(),
        order_date: "2026-02-10".into(),
        amount,
        created_at: "2031-01-01 00:00:00".into(),
    }]);

    // The regular run of 2026-03-02 (its yesterday 03-01), looking back 30 days: February
    // has ended, so its month is rebuilt with its late day.
    let (_, run) = g.apply(0, &["--as-of", "2026-03-02", "--lookback", "30"]);
    let plus = |table: &str, dates: &[String]| {
        let mut want = before[table].clone();
        for ds in dates {
            *want.get_mut(ds).unwrap() += amount;
        }
        let mut now = g.revenue(table);
        now.retain(|ds, _| want.contains_key(ds));
        assert_eq!(now, want, "{table} after the late order");
    };
    plus("daily_revenue", &["2026-02-10".into()]);
    plus("rolling7", &days("2026-02-10", "2026-02-16"));
    plus("weekly_revenue", &["2026-02-09".into()]);
    let rolling = g.run_ids("rolling7");
    assert_ne!(rolling["2026-02-09"], run, "rolling7 2026-02-09 rebuilt");
    assert_ne!(rolling["2026-02-17"], run, "rolling7 2026-02-17 rebuilt");
    plus("monthly_revenue", &["2026-02-01".into()]);
    g.assert_roll_ups_add_up();

    // Rebuilt: the late day, yesterday (2026-03-01: a regular run's day), the rolling days
    // that read the late day, the week and the month of the late day, and the week that
    // ends yesterday (the last complete week). Not 02-09, not 02-17; not the rolling days
    // after 03-01, nor March, which have not ended.
    let rebuilt = plan(&[
        (
            "daily_revenue",
            vec!["2026-02-10".into(), "2026-03-01".into()],
        ),
        ("monthly_revenue", vec!["2026-02-01".into()]),
        (
            "rolling7",
            [days("2026-02-10", "2026-02-16"), vec!["2026-03-01".into()]].concat(),
        ),
        (
            "weekly_revenue",
            vec!["2026-02-09".into(), "2026-02-23".into()],
        ),
    ]);
    assert_eq!(g.written_by(run), rebuilt, "rows with the new run_id");
    assert_eq!(g.built_by(run), rebuilt, "partition_models of the new run");
}

#[test]
fn a_month_in_progress_is_not_built_unless_allow_partial() {
    let g = Grains::with_orders(3404);
    let args = [
        "--interval",
        "2026-02-01..2026-02-10",
        "--as-of",
        "2026-02-11",
    ];
    let (_, first) = g.apply(0, &args);
    assert_eq!(
        g.sb.count("SELECT count(*) FROM monthly_revenue WHERE ds = '2026-02-01'"),
        0,
        "February has not ended on 2026-02-11"
    );
    assert!(!g.built_by(first).contains_key("monthly_revenue"));

    let (_, partial) = g.apply(0, &[&args[..], &["--allow-partial"]].concat());
    assert_eq!(
        column(&g.sb.rows("SELECT ds FROM daily_revenue ORDER BY ds")),
        days("2026-02-01", "2026-02-10")
    );
    let feb: i64 = g.revenue("daily_revenue").values().sum();
    assert_eq!(
        g.sb.rows("SELECT ds, revenue, run_id FROM monthly_revenue"),
        [[
            "2026-02-01".to_string(),
            feb.to_string(),
            partial.to_string()
        ]],
        "the provisional month: the days built so far"
    );
}

#[test]
fn hourly_partitions_follow_daylight_saving_in_berlin_and_utc() {
    let hourly = [("hourly_ticks", hourly_ticks())];
    let per_day = |g: &Grains, run: i64| {
        g.sb.rows(&format!(
            "SELECT ds, count(*) FROM partition_models \
             WHERE model = 'models/hourly_ticks' AND run_id = {run} GROUP BY ds ORDER BY ds"
        ))
    };
    let ticks = |g: &Grains, run: i64| {
        column(&g.sb.rows(&format!(
            "SELECT hour FROM hourly_ticks WHERE run_id = {run} ORDER BY hour"
        )))
    };
    let pairs = |p: &[(&str, i64)]| -> Vec<Vec<String>> {
        p.iter()
            .map(|(ds, n)| vec![ds.to_string(), n.to_string()])
            .collect()
    };

    let berlin = Grains::new(&hourly);
    berlin.in_berlin();
    let utc = Grains::new(&hourly);
    let spring = [
        "--interval",
        "2026-03-28..2026-03-30",
        "--as-of",
        "2026-04-01",
    ];
    let (_, berlin_spring) = berlin.apply(0, &spring);
    let (_, berlin_autumn) =
        berlin.apply(0, &["--interval", "2026-10-25", "--as-of", "2026-10-26"]);
    let (_, utc_spring) = utc.apply(0, &spring);

    // The rows. Local midnight of 03-28 is 23:00 UTC the day before; 03-29 loses its 02:00,
    // so its first hour starts 2026-03-28 23:00:00 UTC and it has 23: 71 hours in all.
    // 10-25 gets its 02:00 twice: 25 hours from 22:00 UTC the day before.
    assert_eq!(
        ticks(&berlin, berlin_spring),
        hours("2026-03-27 23:00:00", 71)
    );
    assert_eq!(
        ticks(&berlin, berlin_autumn),
        hours("2026-10-24 22:00:00", 25)
    );
    assert_eq!(ticks(&utc, utc_spring), hours("2026-03-28 00:00:00", 72));

    // The bookkeeping: one partition_models row per local day of hours.
    assert_eq!(
        per_day(&berlin, berlin_spring),
        pairs(&[("2026-03-28", 1), ("2026-03-29", 1), ("2026-03-30", 1)]),
        "partition_models: a row per local day in Berlin"
    );
    assert_eq!(per_day(&berlin, berlin_autumn), pairs(&[("2026-10-25", 1)]));
    assert_eq!(
        per_day(&utc, utc_spring),
        pairs(&[("2026-03-28", 1), ("2026-03-29", 1), ("2026-03-30", 1)]),
        "partition_models: a row per day in UTC"
    );
}

#[test]
fn two_runs_cascading_into_one_month_one_builds_it_the_other_exits_99() {
    let g = Grains::with_orders(3406);
    let (_, full) = g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let single = g.tables();

    // `sqlrun reserve` takes no --as-of (nor does it plan the cascade): the first run is an
    // apply held right after it reserved its dates, the month's anchor 02-28 among them.
    let child = g.held_apply(&["--interval", "2026-02-02..2026-02-04", "--as-of", AS_OF]);
    let holder = g.sb.last_run_id();
    let held = g.held_by(holder);

    let second = g.sb.run(&[
        "--templates",
        &g.tpl,
        "apply",
        "--interval",
        "2026-02-16..2026-02-18",
        "--as-of",
        AS_OF,
    ]);
    let second_id = g.sb.last_run_id();
    let month_after_second = g.run_ids("monthly_revenue");
    let first = resume(child);

    assert!(
        held.contains(&"2026-02-28".to_string()),
        "the first run holds the month's anchor: {held:?}"
    );
    assert_eq!(second.code, 99, "the second run: {second:?}");
    contains_all(&second.stderr, &["2026-02-28", &format!("run {holder}")]);
    assert_ne!(second_id, holder);
    assert_eq!(
        month_after_second["2026-02-01"], full,
        "the second run wrote no monthly row"
    );
    assert!(!g.built_by(second_id).contains_key("monthly_revenue"));
    assert_eq!(
        g.sb.rows(&format!(
            "SELECT status, held_by FROM run_partitions WHERE run_id = {second_id} AND ds = '2026-02-28'"
        )),
        [["skipped".to_string(), holder.to_string()]]
    );

    assert_eq!(first.code, 0, "the first run: {first:?}");
    assert_eq!(g.run_ids("monthly_revenue")["2026-02-01"], holder);
    assert_eq!(g.tables(), single, "the same rows as the single full run");
    g.assert_roll_ups_add_up();
}

#[test]
fn jobs_2_leaves_the_same_rows_as_jobs_1() {
    if postgres_only("SQLite has one writer: more than one job is refused") {
        return;
    }
    let one = Grains::with_orders(3407);
    let two = Grains::with_orders(3407);
    let (_, a) = one.apply(0, &["--interval", FULL, "--as-of", AS_OF, "--jobs", "1"]);
    let (_, b) = two.apply(0, &["--interval", FULL, "--as-of", AS_OF, "--jobs", "2"]);
    assert_eq!(two.tables(), one.tables());
    assert_eq!(two.built_by(b), one.built_by(a));
    assert_eq!(two.built_by(b), full_build());
    two.assert_roll_ups_add_up();

    let back = ["--interval", "2026-02-09..2026-02-11", "--as-of", AS_OF];
    let (_, a) = one.apply(0, &[&back[..], &["--jobs", "1"]].concat());
    let (_, b) = two.apply(0, &[&back[..], &["--jobs", "2"]].concat());
    assert_eq!(two.tables(), one.tables());
    assert_eq!(two.built_by(b), three_day_backfill());
    assert_eq!(two.written_by(b), one.written_by(a));
}

#[test]
fn a_sealed_month_and_a_late_voucher_give_one_correction_for_the_day_and_one_for_the_month() {
    let g = Grains::new(&[(
        "monthly_revenue",
        roll_up("monthly_revenue", "month", "daily_revenue_current", ""),
    )]);
    g.sb.insert_orders(&Orders::new(3408, FIRST, DAYS, false).rows);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    g.sqlrun(
        0,
        &[
            "seal",
            "--interval",
            "2026-01-01..2026-01-31",
            "--reason",
            "r",
        ],
    );
    let day = g.revenue("daily_revenue")["2026-01-10"];
    let month = g.revenue("monthly_revenue")["2026-01-01"];
    let sealed = (
        g.sb.rows("SELECT * FROM daily_revenue WHERE ds = '2026-01-10'"),
        g.sb.rows("SELECT * FROM monthly_revenue WHERE ds = '2026-01-01'"),
    );
    let amount = 5_000;
    g.sb.insert_orders(&[OrderRow {
        order_id: "voucher-1".into(),
        order_date: "2026-01-10".into(),
        amount,
        created_at: "2031-01-01 00:00:00".into(),
    }]);

    let (_, run) = g.apply(0, &["--interval", "2026-01-10", "--as-of", AS_OF]);
    assert_eq!(
        g.sb.rows("SELECT ds, revenue, previous_revenue, run_id FROM daily_revenue_corrections"),
        [[
            "2026-01-10".to_string(),
            (day + amount).to_string(),
            day.to_string(),
            run.to_string()
        ]]
    );
    assert_eq!(
        g.sb.rows("SELECT ds, revenue, previous_revenue, run_id FROM monthly_revenue_corrections"),
        [[
            "2026-01-01".to_string(),
            (month + amount).to_string(),
            month.to_string(),
            run.to_string()
        ]]
    );
    assert_eq!(
        (
            g.sb.rows("SELECT * FROM daily_revenue WHERE ds = '2026-01-10'"),
            g.sb.rows("SELECT * FROM monthly_revenue WHERE ds = '2026-01-01'"),
        ),
        sealed,
        "the sealed rows stand"
    );
    // The same late data again: no second correction.
    g.apply(0, &["--interval", "2026-01-10", "--as-of", AS_OF]);
    assert_eq!(
        g.sb.count("SELECT count(*) FROM daily_revenue_corrections"),
        1
    );
    assert_eq!(
        g.sb.count("SELECT count(*) FROM monthly_revenue_corrections"),
        1
    );
}

#[test]
fn bad_grain_headers_exit_2_naming_file_and_line() {
    let weekly = roll_up("weekly_revenue", "week", "daily_revenue", "");
    let cases: [(&str, String, &str); 4] = [
        (
            "weekly_revenue",
            weekly.replace("grain: week", "grain: weeek"),
            "grain: weeek",
        ),
        (
            "rolling7",
            rolling7("nosuch window -6..0"),
            "depends_on: nosuch",
        ),
        (
            "monthly_revenue",
            roll_up("monthly_revenue", "month", "weekly_revenue", ""),
            "depends_on: weekly_revenue",
        ),
        (
            "rolling7",
            rolling7("daily_revenue window 0..-6"),
            "window 0..-6",
        ),
    ];
    for (i, (name, text, bad)) in cases.into_iter().enumerate() {
        // The first case on a database that does not exist yet: the refused command makes
        // none (no file; on PostgreSQL no table in the schema).
        let first = i == 0;
        let sb = if first {
            Sandbox::empty()
        } else {
            Sandbox::new()
        };
        let mut models = vec![(name, text.clone())];
        if name == "monthly_revenue" {
            models.push(("weekly_revenue", weekly.clone()));
        }
        let tpl = pipeline(&sb, &models);
        let run = sb.expect(
            2,
            &["--templates", &tpl, "apply", "--interval", "2026-02-01"],
        );
        let at = format!("models/{name}.sql:{}", line_of(&text, bad));
        contains_all(&run.stderr, &[&at]);
        if first {
            match &sb.schema {
                None => assert!(
                    !sb.db.exists(),
                    "{bad}: the refused command made the database"
                ),
                Some(schema) => assert_eq!(
                    sb.count(&format!(
                        "SELECT count(*) FROM pg_catalog.pg_class AS c \
                         JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace \
                         WHERE n.nspname = '{schema}'"
                    )),
                    0,
                    "{bad}: the refused command made tables"
                ),
            }
            sb.ok(&["init"]);
        }
        assert_eq!(sb.count("SELECT count(*) FROM runs"), 0, "{bad}");
        assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0, "{bad}");
        for (table, _) in &TABLES[1..] {
            assert!(!sb.table_exists(table), "{bad}: {table} was made");
        }
    }
}

#[test]
fn no_downstream_builds_only_what_was_asked() {
    let g = Grains::with_orders(3410);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let before = g.tables();
    let (_, run) = g.apply(
        0,
        &[
            "--interval",
            "2026-02-09..2026-02-11",
            "--as-of",
            AS_OF,
            "--no-downstream",
        ],
    );
    // An interval asks every model for its partitions in it: rolling7's three days too,
    // but not the rolling days, week and month they feed.
    let asked = plan(&[
        ("daily_revenue", days("2026-02-09", "2026-02-11")),
        ("rolling7", days("2026-02-09", "2026-02-11")),
    ]);
    assert_eq!(g.built_by(run), asked, "partition_models");
    assert_eq!(g.written_by(run), asked, "the tables' run_id");
    assert_eq!(g.tables(), before, "no number changed");
}

#[test]
fn select_model_plus_is_the_model_and_downstream() {
    let plus = Grains::with_orders(3411);
    let plain = Grains::with_orders(3411);
    let back = ["--interval", "2026-02-09..2026-02-11", "--as-of", AS_OF];
    for g in [&plus, &plain] {
        g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    }
    let (_, a) = plus.apply(0, &[&back[..], &["--select", "daily_revenue+"]].concat());
    let (_, b) = plain.apply(0, &[&back[..], &["--select", "daily_revenue"]].concat());
    assert_eq!(plus.built_by(a), plain.built_by(b));
    assert_eq!(plus.built_by(a), three_day_backfill());
    assert_eq!(plus.written_by(a), plain.written_by(b));
    assert_eq!(plus.tables(), plain.tables());
}

#[test]
fn intervals_at_every_grain() {
    let g = Grains::with_orders(3412);
    for (interval, from, to) in [
        ("2026-02", "2026-02-01", "2026-02-28"),
        ("2026-W06", "2026-02-02", "2026-02-08"),
        ("2026-Q1", "2026-01-01", "2026-03-31"),
    ] {
        let (_, run) = g.apply(0, &["--interval", interval, "--as-of", "2026-04-01"]);
        assert_eq!(
            g.built_by(run).get("daily_revenue"),
            Some(&days(from, to)),
            "--interval {interval}"
        );
        assert_eq!(
            g.sb.rows(&format!(
                "SELECT interval_start, interval_end FROM runs WHERE run_id = {run}"
            )),
            [[from.to_string(), to.to_string()]],
            "--interval {interval}"
        );
    }
}

#[test]
fn dry_run_shows_the_cascade_and_a_preview_follows_it() {
    let g = Grains::with_orders(3413);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let before = g.tables();
    let runs = g.sb.count("SELECT count(*) FROM runs");
    let back = ["--interval", "2026-02-09..2026-02-11", "--as-of", AS_OF];
    let (dry, _) = g.apply(0, &[&back[..], &["--dry-run"]].concat());
    for line in [
        "daily_revenue    2026-02-09..2026-02-11  3 days   asked",
        "monthly_revenue  2026-02                 1 month  reads 2026-02-09..2026-02-11 of daily_revenue",
        "rolling7         2026-02-12..2026-02-17  6 days   reads 2026-02-09..2026-02-11 of daily_revenue",
        "weekly_revenue   2026-W07                1 week   reads 2026-02-09..2026-02-11 of daily_revenue",
    ] {
        assert!(dry.stdout.contains(line), "{line:?} in:\n{}", dry.stdout);
    }
    // Before February ends, the month is named and not built.
    let (early, _) = g.apply(
        0,
        &[&back[..2], &["--as-of", "2026-02-20", "--dry-run"]].concat(),
    );
    assert!(
        early.stdout.contains("monthly_revenue  2026-02                 1 month  not built: has not ended (--allow-partial builds it)"),
        "{}",
        early.stdout
    );
    // A late order on 2026-02-10: the preview computes the cascade as the run would,
    // writes nothing, and names each model's partitions that would change.
    g.sb.insert_orders(&[OrderRow {
        order_id: "late-7".into(),
        order_date: "2026-02-10".into(),
        amount: 4_321,
        created_at: "2031-01-01 00:00:00".into(),
    }]);
    let (diff, _) = g.apply(0, &[&back[..], &["--diff"]].concat());
    contains_all(
        &diff.stdout,
        &[
            "daily_revenue: 1 of 3 dates would change",
            "rolling7: 7 of 9 dates would change",
            "weekly_revenue: 1 of 1 date would change",
            "monthly_revenue: 1 of 1 date would change",
        ],
    );
    // A rolling total counts each day in seven dates: its revenue is not summed.
    let rolling = &diff.stdout[diff.stdout.find("rolling7:").unwrap()..];
    let total = rolling.lines().find(|l| l.starts_with("total")).unwrap();
    assert!(total.trim_end().ends_with('-'), "{total}");
    assert_eq!(
        g.sb.count("SELECT count(*) FROM runs"),
        runs,
        "no run recorded"
    );
    assert_eq!(g.tables(), before, "nothing written");
    // The run then writes what the preview showed: the week's and the month's new sums.
    g.apply(0, &back);
    for (table, ds) in [
        ("weekly_revenue", "2026-02-09"),
        ("monthly_revenue", "2026-02-01"),
    ] {
        let after = g.revenue(table)[ds];
        assert_eq!(after, g_before_plus(&before, table, ds, 4_321), "{table}");
        let shown = sqlrun::text::numbers::thousands(after);
        assert!(
            diff.stdout.contains(&shown),
            "{table} {shown} in:\n{}",
            diff.stdout
        );
    }
    g.assert_roll_ups_add_up();
}

/// A pipeline with an hourly model is not previewed (its temporary rows would be told
/// apart by the hour, its bookkeeping by the day): exit 2, nothing written.
#[test]
fn a_preview_of_an_hourly_pipeline_is_refused() {
    let g = Grains::new(&[("hourly_ticks", hourly_ticks())]);
    g.sqlrun(0, &["init"]);
    let refused = g.sqlrun(
        2,
        &[
            "apply",
            "--interval",
            "2026-02-09",
            "--as-of",
            AS_OF,
            "--diff",
        ],
    );
    contains_all(&refused.stderr, &["hourly model", "--dry-run"]);
    assert_eq!(
        g.sb.count("SELECT count(*) FROM runs"),
        0,
        "no run recorded"
    );
}

/// `render --date D MODEL` renders a week, a month or a rolling day as the run would for
/// the partition that holds D: its own period and window, not the day's.
#[test]
fn render_a_model_shows_the_partition_that_holds_the_day() {
    let g = Grains::new(&four_models());
    g.sqlrun(0, &["init"]);
    for (model, from, until) in [
        ("weekly_revenue", "2026-02-09", "2026-02-16"),
        ("monthly_revenue", "2026-02-01", "2026-03-01"),
        ("rolling7", "2026-02-05", "2026-02-12"),
    ] {
        let sql = g
            .sqlrun(0, &["render", "--date", "2026-02-11", model])
            .stdout;
        let filter = sql
            .lines()
            .find(|l| l.contains("WHERE ds >="))
            .expect("its filter");
        assert!(
            filter.contains(from) && filter.contains(until),
            "{model}: {from}..{until} in {filter}"
        );
    }
}

/// A table's revenue on `ds` in `tables` (as `Grains::tables` read it), plus `amount`.
fn g_before_plus(
    tables: &BTreeMap<&'static str, Vec<Vec<String>>>,
    table: &str,
    ds: &str,
    amount: i64,
) -> i64 {
    let row = tables[table].iter().find(|r| r[0] == ds).expect("the row");
    int(&row[1]) + amount
}

/// A 7-day rolling total over orders directly, through a source window.
fn rolling7_over_orders() -> String {
    "\
-- name: rolling7
-- version: 1
-- key: ds
-- values: revenue
-- sources: orders(order_date, key order_id) window -6..0
-- create: CREATE TABLE rolling7 (ds DATE NOT NULL, revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
SELECT {{ ds }} AS ds, coalesce(sum(amount), 0) AS revenue
FROM orders_latest
WHERE order_date >= {{ window_start }} AND order_date < {{ window_end }}
"
    .to_string()
}

#[test]
fn a_late_order_marks_exactly_the_rolling_dates_of_a_source_window_changed() {
    let g = Grains::new(&[("rolling7", rolling7_over_orders())]);
    g.sb.insert_orders(&Orders::new(3414, FIRST, DAYS, false).rows);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let before = g.revenue("rolling7");
    let amount = 4_321;
    g.sb.insert_orders(&[OrderRow {
        order_id: "late-7".into(),
        order_date: "2026-02-10".into(),
        amount,
        created_at: "2031-01-01 00:00:00".into(),
    }]);
    let (_, run) = g.apply(
        0,
        &["--interval", FULL, "--as-of", AS_OF, "--only", "changed"],
    );
    let week = days("2026-02-10", "2026-02-16");
    assert_eq!(
        g.built_by(run).get("rolling7"),
        Some(&week),
        "the rolling dates that read 2026-02-10, and only those"
    );
    // The later dates are changed for rolling7 alone: their days are not rebuilt.
    assert_eq!(
        g.built_by(run).get("daily_revenue"),
        Some(&vec!["2026-02-10".to_string()]),
        "the late day alone"
    );
    let mut want = before.clone();
    for ds in &week {
        *want.get_mut(ds).unwrap() += amount;
    }
    assert_eq!(g.revenue("rolling7"), want);
    let daily = g.revenue("daily_revenue");
    for (ds, revenue) in g.revenue("rolling7") {
        let d = date(&ds);
        let sum: i64 = daily
            .range(iso(d - Duration::days(6))..=ds.clone())
            .map(|(_, r)| r)
            .sum();
        assert_eq!(revenue, sum, "rolling7 {ds} against its seven days");
    }
    // Healed: nothing is changed any more.
    let (_, again) = g.apply(
        0,
        &["--interval", FULL, "--as-of", AS_OF, "--only", "changed"],
    );
    assert!(g.built_by(again).is_empty(), "{:?}", g.built_by(again));
}

#[test]
fn hour_intervals_and_an_hourly_regular_run() {
    let g = Grains::new(&[("hourly_ticks", hourly_ticks())]);
    g.in_berlin();
    let ticks = |run: i64| {
        column(&g.sb.rows(&format!(
            "SELECT hour FROM hourly_ticks WHERE run_id = {run} ORDER BY hour"
        )))
    };
    let only = ["--select", "hourly_ticks"];
    // 01:00 to 04:00 in Berlin on the night the clocks skip 02:00: two hours.
    let (_, run) = g.apply(
        0,
        &[
            &[
                "--interval",
                "2026-03-29T01..2026-03-29T03",
                "--as-of",
                "2026-04-01",
            ][..],
            &only,
        ]
        .concat(),
    );
    assert_eq!(ticks(run), hours("2026-03-29 00:00:00", 2));
    // The hour that ends at 06:00 on 03-30 (03:00 UTC, summer time), and nothing else.
    let (_, run) = g.apply(0, &[&["--as-of", "2026-03-30T06"][..], &only].concat());
    assert_eq!(ticks(run), hours("2026-03-30 03:00:00", 1));
    assert_eq!(
        g.sb.rows(&format!(
            "SELECT interval_start, interval_end FROM runs WHERE run_id = {run}"
        )),
        [["2026-03-30".to_string(), "2026-03-30".to_string()]]
    );
    // Bad hours: exit 2, nothing written.
    let runs = g.sb.count("SELECT count(*) FROM runs");
    for bad in ["2026-03-30T24", "2026-03-30T6"] {
        let (refused, _) = g.apply(2, &["--interval", bad]);
        contains_all(&refused.stderr, &[bad, "2026-02-09T05"]);
    }
    let reserve = g.sqlrun(
        2,
        &["reserve", "--interval", "2026-03-30T05..2026-03-30T08"],
    );
    contains_all(&reserve.stderr, &["whole dates", "sqlrun apply --interval"]);
    let (refused, _) = g.apply(2, &["--as-of", "2026-03-30T25"]);
    contains_all(&refused.stderr, &["--as-of", "00..23"]);
    assert_eq!(g.sb.count("SELECT count(*) FROM runs"), runs);
}

#[test]
fn a_provisional_month_is_recorded_and_never_sealed_until_built_again() {
    let g = Grains::with_orders(3415);
    let early = [
        "--interval",
        "2026-02-01..2026-02-10",
        "--as-of",
        "2026-02-11",
        "--allow-partial",
    ];
    g.apply(0, &early);
    let provisional = || {
        g.sb.rows(
            "SELECT ds, CASE WHEN provisional THEN 'provisional' ELSE 'final' END \
             FROM partition_models WHERE model = 'models/monthly_revenue'",
        )
    };
    assert_eq!(
        provisional(),
        [["2026-02-01".to_string(), "provisional".to_string()]]
    );
    // The day it starts on is computed; the month on it is not final.
    let refused = g.sqlrun(2, &["seal", "--interval", "2026-02-01", "--reason", "r"]);
    contains_all(
        &refused.stderr,
        &[
            "provisional",
            "monthly_revenue from 2026-02-01",
            "--allow-partial",
        ],
    );
    assert_eq!(
        g.sb.count("SELECT count(*) FROM seals"),
        0,
        "nothing sealed"
    );

    // Once February has ended, building it again makes it final, and it seals.
    g.apply(
        0,
        &["--interval", "2026-02-01..2026-02-28", "--as-of", AS_OF],
    );
    assert_eq!(
        provisional(),
        [["2026-02-01".to_string(), "final".to_string()]]
    );
    g.sqlrun(0, &["seal", "--interval", "2026-02-01", "--reason", "r"]);
    assert_eq!(g.sb.count("SELECT count(*) FROM seals"), 1);
}

#[test]
fn status_shows_the_weeks_and_months_by_state() {
    let g = Grains::with_orders(3417);
    g.apply(
        0,
        &[
            "--interval",
            "2026-02-01..2026-02-10",
            "--as-of",
            "2026-02-11",
            "--allow-partial",
        ],
    );
    let partitions = || -> Vec<(String, String, String, i64, String)> {
        let doc = g.status_json("2026-02-01..2026-02-28");
        doc["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["model"].as_str().unwrap().to_string(),
                    r["first"].as_str().unwrap().to_string(),
                    r["last"].as_str().unwrap().to_string(),
                    r["count"].as_i64().unwrap(),
                    r["state"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let row = |m: &str, a: &str, b: &str, n: i64, s: &str| {
        (
            m.to_string(),
            a.to_string(),
            b.to_string(),
            n,
            s.to_string(),
        )
    };
    // February on the 11th, built with --allow-partial: provisional. The weeks of
    // 02-02 and 02-09 ended by then (W06 on the 8th; W07 on the 15th has not: partial too).
    assert_eq!(
        partitions(),
        [
            row("monthly_revenue", "2026-02", "2026-02", 1, "provisional"),
            row("weekly_revenue", "2026-W06", "2026-W06", 1, "computed"),
            row("weekly_revenue", "2026-W07", "2026-W07", 1, "provisional"),
            row("weekly_revenue", "2026-W08", "2026-W09", 2, "missing"),
        ]
    );
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    assert_eq!(
        partitions(),
        [
            row("monthly_revenue", "2026-02", "2026-02", 1, "computed"),
            row("weekly_revenue", "2026-W06", "2026-W08", 3, "computed"),
            row("weekly_revenue", "2026-W09", "2026-W09", 1, "missing"),
        ]
    );
    let text = g.sqlrun(0, &["status", "--interval", "2026-02-01..2026-02-28"]);
    contains_all(
        &text.stdout,
        &["weekly_revenue   2026-W06..2026-W08  computed  3 weeks"],
    );
}

#[test]
fn a_date_that_builds_only_a_week_leaves_the_days_late_rows_changed() {
    let g = Grains::with_orders(3418);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let amount = 1_000;
    g.sb.insert_orders(&[OrderRow {
        order_id: "late-sunday".into(),
        order_date: "2026-02-15".into(),
        amount,
        created_at: "2031-01-01 00:00:00".into(),
    }]);
    let sunday = g.revenue("daily_revenue")["2026-02-15"];
    // 2026-02-11's cascade builds the week and rolling7 in 2026-02-15's transaction, not
    // daily_revenue of 2026-02-15: that day's late order must stay noted.
    let (_, run) = g.apply(0, &["--interval", "2026-02-11", "--as-of", AS_OF]);
    assert!(!g.built_by(run)["daily_revenue"].contains(&"2026-02-15".to_string()));
    assert_eq!(g.revenue("daily_revenue")["2026-02-15"], sunday);
    let (_, heal) = g.apply(
        0,
        &["--interval", FULL, "--as-of", AS_OF, "--only", "changed"],
    );
    assert_eq!(
        g.built_by(heal).get("daily_revenue"),
        Some(&vec!["2026-02-15".to_string()]),
        "the late day is still changed, and healed"
    );
    assert_eq!(g.revenue("daily_revenue")["2026-02-15"], sunday + amount);
    g.assert_roll_ups_add_up();
}

#[test]
fn an_hourly_schedule_over_the_spring_night_misses_no_hour() {
    let g = Grains::new(&[("hourly_ticks", hourly_ticks())]);
    g.in_berlin();
    // What a scheduler passes each hour that night: 03:00 follows 01:00 on the clock.
    for at in [
        "2026-03-29T01",
        "2026-03-29T03",
        "2026-03-29T04",
        "2026-03-29T05",
    ] {
        g.apply(0, &["--as-of", at, "--select", "hourly_ticks"]);
    }
    assert_eq!(
        column(&g.sb.rows("SELECT hour FROM hourly_ticks ORDER BY hour")),
        hours("2026-03-28 23:00:00", 4),
        "23:00, 00:00, 01:00 and 02:00 UTC: midnight to 05:00 in Berlin, no gap"
    );
    // The repeated 02:00 in October: the run at 03:00 builds both.
    g.apply(0, &["--as-of", "2026-10-25T03", "--select", "hourly_ticks"]);
    assert_eq!(
        g.sb.count(
            "SELECT count(*) FROM hourly_ticks WHERE hour >= '2026-10-25 00:00:00' AND hour < '2026-10-25 02:00:00'"
        ),
        2
    );
}

#[test]
fn hours_are_refused_for_a_pipeline_without_an_hourly_model() {
    let g = Grains::with_orders(3419);
    for args in [
        &["--as-of", "2026-02-10T06"][..],
        &[
            "--interval",
            "2026-02-09T00..2026-02-09T05",
            "--as-of",
            AS_OF,
        ],
    ] {
        let refused = g.sqlrun(2, &[&["apply"][..], args].concat());
        contains_all(&refused.stderr, &["names an hour", "no hourly model"]);
    }
    assert_eq!(
        g.sb.count("SELECT count(*) FROM runs"),
        0,
        "nothing written"
    );
}

#[test]
fn checks_of_a_week_read_it_on_its_first_day_and_hourly_checks_are_refused() {
    let g = Grains::with_orders(3420);
    let checks = std::path::Path::new(&g.tpl).join("checks");
    std::fs::create_dir_all(&checks).unwrap();
    std::fs::write(
        checks.join("weekly_one_row.sql"),
        "-- name: weekly_one_row\n-- version: 1\n-- model: weekly_revenue\n-- severity: error\n\
         {% import \"system/checks.sql\" as check %}\n{{ check.row_count(min=1, max=1) }}\n",
    )
    .unwrap();
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    // Only the weeks' first days hold their rows: no other day fails the check.
    let run = g.sqlrun(0, &["check", "--interval", "2026-02-09..2026-02-15"]);
    assert!(!run.stdout.contains("weekly_one_row"), "{}", run.stdout);
    g.sqlrun(0, &["seal", "--interval", "2026-02-10", "--reason", "r"]);
    // A week that lost its row is found on its Monday.
    g.sb.exec("DELETE FROM weekly_revenue WHERE ds = '2026-02-16'");
    let run = g.sqlrun(1, &["check", "--interval", "2026-02-16..2026-02-22"]);
    contains_all(&run.stdout, &["2026-02-16", "weekly_one_row"]);

    let h = Grains::new(&[("hourly_ticks", hourly_ticks())]);
    let checks = std::path::Path::new(&h.tpl).join("checks");
    std::fs::create_dir_all(&checks).unwrap();
    std::fs::write(
        checks.join("hourly_positive.sql"),
        "-- name: hourly_positive\n-- version: 1\n-- model: hourly_ticks\n-- severity: error\n\
         {% import \"system/checks.sql\" as check %}\n{{ check.accepted_range(\"n\", min=1) }}\n",
    )
    .unwrap();
    let refused = h.sqlrun(2, &["apply", "--interval", "2026-02-09"]);
    contains_all(
        &refused.stderr,
        &["checks/hourly_positive.sql", "hourly model"],
    );
}

#[test]
fn an_hourly_model_is_not_sealed_its_rows_are_replaced_on_a_sealed_day() {
    let kind = if is_sqlite() { "TEXT" } else { "TIMESTAMPTZ" };
    let hourly = format!(
        "-- name: hourly_orders\n-- version: 1\n-- grain: hour\n-- key: hour\n-- date_column: hour\n\
         -- values: n\n-- sources: orders(order_date, key order_id)\n\
         -- create: CREATE TABLE hourly_orders (hour {kind} NOT NULL, n BIGINT NOT NULL, run_id BIGINT NOT NULL, PRIMARY KEY (hour))\n\
         SELECT {{{{ period_start }}}} AS hour, count(*) AS n FROM orders_latest WHERE order_date = {{{{ ds }}}}\n"
    );
    let g = Grains::new(&[("hourly_orders", hourly)]);
    g.sb.insert_orders(&Orders::new(3421, FIRST, DAYS, false).rows);
    let day = ["--interval", "2026-02-09", "--as-of", AS_OF];
    g.apply(0, &day);
    g.sqlrun(0, &["seal", "--interval", "2026-02-09", "--reason", "r"]);
    let n = g.sb.count("SELECT max(n) FROM hourly_orders");
    g.sb.insert_orders(&[OrderRow {
        order_id: "late-h".into(),
        order_date: "2026-02-09".into(),
        amount: 10,
        created_at: "2031-01-01 00:00:00".into(),
    }]);
    g.apply(0, &day);
    g.apply(0, &day);
    assert_eq!(
        g.sb.count("SELECT count(*) FROM hourly_orders_corrections"),
        0
    );
    assert_eq!(g.sb.count("SELECT count(*) FROM hourly_orders"), 24);
    assert_eq!(
        g.sb.count("SELECT min(n) FROM hourly_orders"),
        n + 1,
        "replaced"
    );
    assert_eq!(
        g.sb.count("SELECT count(*) FROM daily_revenue_corrections"),
        1
    );
    assert_eq!(
        g.sb.count("SELECT count(*) FROM seal_coverage WHERE model = 'hourly_orders'"),
        0
    );
}

#[test]
fn a_day_over_hours_reads_its_local_day() {
    let daily_ticks = "-- name: daily_ticks\n-- version: 1\n-- key: ds\n-- values: n\n\
        -- depends_on: hourly_ticks\n\
        -- create: CREATE TABLE daily_ticks (ds DATE NOT NULL, n BIGINT NOT NULL, run_id BIGINT NOT NULL, PRIMARY KEY (ds))\n\
        SELECT {{ ds }} AS ds, coalesce(sum(n), 0) AS n FROM hourly_ticks\n\
        WHERE hour >= {{ window_start }} AND hour < {{ window_end }}\n"
        .to_string();
    let g = Grains::new(&[
        ("hourly_ticks", hourly_ticks()),
        ("daily_ticks", daily_ticks),
    ]);
    g.in_berlin();
    g.apply(
        0,
        &[
            "--interval",
            "2026-03-28..2026-03-30",
            "--as-of",
            "2026-04-01",
        ],
    );
    assert_eq!(
        g.sb.rows("SELECT ds, n FROM daily_ticks ORDER BY ds"),
        [
            ["2026-03-28", "24"],
            ["2026-03-29", "23"],
            ["2026-03-30", "24"]
        ]
        .map(|r| r.map(String::from).to_vec())
    );
}

#[test]
fn a_week_cannot_be_sealed_while_a_run_holds_the_date_that_rebuilds_it() {
    let g = Grains::with_orders(3422);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    // A run that rebuilds 2026-02-15, and with it the week of 2026-02-09 (in 02-15's
    // transaction), held right after it reserved.
    let child = g.held_apply(&["--interval", "2026-02-15", "--as-of", AS_OF]);
    let holder = g.sb.last_run_id();
    let refused = g.sb.run(&[
        "--templates",
        &g.tpl,
        "seal",
        "--interval",
        "2026-02-09",
        "--reason",
        "r",
    ]);
    let run = resume(child);
    assert_eq!(run.code, 0, "{run:?}");
    assert_ne!(refused.code, 0, "{refused:?}");
    contains_all(&refused.stderr, &["2026-02-09", &format!("run {holder}")]);
    assert_eq!(
        g.sb.count("SELECT count(*) FROM seals"),
        0,
        "nothing sealed"
    );
    // Once the run is done, the week seals.
    g.sqlrun(0, &["seal", "--interval", "2026-02-09", "--reason", "r"]);
}

#[test]
fn days_between_a_periods_first_days_are_not_missing_its_partition() {
    let mut models = four_models();
    models.push((
        "quarterly_revenue",
        roll_up("quarterly_revenue", "quarter", "daily_revenue", ""),
    ));
    let g = Grains::new(&models);
    g.sb.insert_orders(&Orders::new(3423, FIRST, DAYS, false).rows);
    // A selection's run: no fallback to a run of every model for the days without a week.
    g.apply(
        0,
        &[
            "--interval",
            FULL,
            "--as-of",
            "2026-04-01",
            "--select",
            "daily_revenue",
        ],
    );
    let doc = g.status_json(FULL);
    assert_eq!(doc["counts"]["missing"], 0, "{}", doc["counts"]);
    assert_eq!(doc["counts"]["computed"], 59, "{}", doc["counts"]);
    // The quarter's first day is judged by its partition: built, current. One built by an
    // older version is stale there alone.
    let models = |ds: &str| {
        doc["dates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["ds"] == ds)
            .unwrap()["models"]
            .clone()
    };
    assert_eq!(models("2026-01-01")["quarterly_revenue"], "current");
    assert_eq!(models("2026-02-10")["quarterly_revenue"], "current");
    g.sb.exec("UPDATE partition_models SET version = 0 WHERE model = 'models/weekly_revenue' AND ds = '2026-02-09'");
    let doc = g.status_json("2026-02-08..2026-02-10");
    let states: Vec<&str> = doc["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["models"]["weekly_revenue"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["current", "stale", "current"]);
}

/// The demo's seventh chapter (the issue's §9): after February has ended, the story's
/// backfill of three days reaches exactly their week, the nine rolling dates that read
/// them and their month, and nothing else; the month derived from the days holds their
/// sum while the additive total is off. On SQLite the kept story's rows are read too.
#[test]
fn the_demo_s_backfill_reaches_exactly_its_week_rolling_dates_and_month() {
    let sb = Sandbox::empty();
    let story: serde_json::Value = serde_json::from_str(&sb.ok(&["demo", "--json"]).stdout)
        .expect("demo --json prints one document");
    let expected = serde_json::json!({
        "daily_revenue": 3, "weekly_revenue": 1, "revenue_7d": 9, "monthly_revenue": 1,
    });
    assert_eq!(story["cascade"], expected, "{story}");
    // February: the fourteen days, the voucher, and the thirteen days of chapter 7.
    assert_eq!(
        story["monthly_revenue_2026_02"],
        51_820_000 + 350_000 + 53_500_000
    );
    assert_eq!(story["additive_month"], 105_670_000 + 28_300_000, "{story}");
    if is_postgres() {
        return; // the demo's scratch schema is dropped; its numbers are checked above
    }
    let dir = sb.path().join("story");
    sb.ok(&["demo", "--keep", &dir.display().to_string()]);
    let conn = rusqlite::Connection::open(dir.join("sqlrun.db")).unwrap();
    let one = |sql: &str| -> String {
        conn.query_row(sql, [], |r| r.get::<_, String>(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    let run = story["cascade_run"].as_i64().unwrap();
    let built = one(&format!(
        "SELECT group_concat(model || ' ' || ds, ', ') FROM (SELECT model, ds FROM \
         partition_models WHERE run_id = {run} ORDER BY model, ds)"
    ));
    let rolling: Vec<String> = (9..=17)
        .map(|d| format!("models/revenue_7d 2026-02-{d:02}"))
        .collect();
    assert_eq!(
        built,
        format!(
            "models/daily_revenue 2026-02-09, models/daily_revenue 2026-02-10, \
             models/daily_revenue 2026-02-11, models/monthly_revenue 2026-02-01, {}, \
             models/weekly_revenue 2026-02-09",
            rolling.join(", ")
        )
    );
    // Each table's own run_id says the same.
    let own = one(&format!(
        "SELECT (SELECT count(*) FROM daily_revenue WHERE run_id = {run}) || ' ' || \
         (SELECT count(*) FROM weekly_revenue WHERE run_id = {run}) || ' ' || \
         (SELECT count(*) FROM revenue_7d WHERE run_id = {run}) || ' ' || \
         (SELECT count(*) FROM monthly_revenue WHERE run_id = {run})"
    ));
    assert_eq!(own, "3 1 9 1");
    // Every week, rolling date and month equals the sum of its days as they are now.
    let wrong = one(
        "SELECT (SELECT count(*) FROM weekly_revenue w WHERE revenue <> (SELECT sum(revenue) \
         FROM daily_revenue_current d WHERE d.ds BETWEEN w.ds AND date(w.ds, '+6 days'))) \
         || ' ' || (SELECT count(*) FROM revenue_7d r WHERE revenue <> (SELECT \
         coalesce(sum(revenue), 0) FROM daily_revenue_current d WHERE d.ds BETWEEN \
         date(r.ds, '-6 days') AND r.ds)) || ' ' || (SELECT count(*) FROM monthly_revenue m \
         WHERE revenue <> (SELECT sum(revenue) FROM daily_revenue_current d WHERE d.ds \
         BETWEEN m.ds AND date(m.ds, '+1 month', '-1 day'))) || ' ' || (SELECT count(*) \
         FROM weekly_revenue) || ' ' || (SELECT count(*) FROM revenue_7d)",
    );
    assert_eq!(
        wrong, "0 0 0 3 28",
        "wrong weeks, rolling dates, months; weeks; dates"
    );
}

/// A late order on 2026-02-10, rebuilt with `--no-downstream`: the day and its own
/// rolling day are new; the week, the month and the six rolling days after it that read
/// the day were built before it. Returns the sandbox and the late amount.
fn day_rebuilt_alone(seed: u64) -> (Grains, i64) {
    let g = Grains::with_orders(seed);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let amount = 98_765;
    g.sb.insert_orders(&[OrderRow {
        order_id: "late-1".into(),
        order_date: "2026-02-10".into(),
        amount,
        created_at: "2031-01-01 00:00:00".into(),
    }]);
    g.apply(
        0,
        &[
            "--interval",
            "2026-02-10",
            "--as-of",
            AS_OF,
            "--no-downstream",
        ],
    );
    (g, amount)
}

/// The dates `status --json` gives `state` over February, as ranges.
fn february_in(g: &Grains, state: &str) -> serde_json::Value {
    g.status_json("2026-02-01..2026-02-28")["ranges"][state].clone()
}

/// The partitions a late day rebuilt alone leaves `upstream`: the week and the month that
/// hold it, and the rolling days after it that read it.
fn upstream_of_the_late_day() -> BTreeMap<String, Vec<String>> {
    plan(&[
        ("monthly_revenue", vec!["2026-02-01".into()]),
        ("rolling7", days("2026-02-11", "2026-02-16")),
        ("weekly_revenue", vec!["2026-02-09".into()]),
    ])
}

#[test]
fn a_day_rebuilt_without_its_cascade_leaves_its_readers_upstream_and_only_upstream_heals_them() {
    let (g, amount) = day_rebuilt_alone(3420);
    // Judged by partition_models' built_at: each partition that reads the day (by its
    // first day) stands `upstream`, and nothing else does.
    assert_eq!(
        february_in(&g, "upstream"),
        serde_json::json!(["2026-02-01", "2026-02-09", "2026-02-11..2026-02-16"])
    );
    let status = g.status_json("2026-02-01..2026-02-28");
    let partitions: Vec<(String, String)> = status["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["state"] == "upstream")
        .map(|p| (p["model"].to_string(), p["first"].to_string()))
        .collect();
    assert_eq!(
        partitions,
        [
            ("\"monthly_revenue\"".into(), "\"2026-02\"".into()),
            ("\"weekly_revenue\"".into(), "\"2026-W07\"".into())
        ]
    );
    let week_before = g.revenue("weekly_revenue")["2026-02-09"];

    // `--only upstream` rebuilds exactly those partitions, not the days they read.
    let (_, run) = g.apply(
        0,
        &["--interval", FULL, "--as-of", AS_OF, "--only", "upstream"],
    );
    assert_eq!(
        g.built_by(run),
        upstream_of_the_late_day(),
        "partition_models"
    );
    assert_eq!(
        g.written_by(run),
        upstream_of_the_late_day(),
        "the tables' run_id"
    );
    assert_eq!(
        g.revenue("weekly_revenue")["2026-02-09"],
        week_before + amount,
        "the week now holds the late order"
    );
    g.assert_roll_ups_add_up();
    assert_eq!(february_in(&g, "upstream"), serde_json::json!([]));
}

#[test]
fn a_look_back_heals_upstream_partitions_and_rebuilds_nothing_else_old() {
    let (g, _) = day_rebuilt_alone(3421);
    // The regular run of 2026-03-01 (yesterday 02-28, the last day of February) looking
    // back 28 days: the upstream partitions are rebuilt; the days they read are not.
    let (_, run) = g.apply(0, &["--as-of", AS_OF, "--lookback", "28"]);
    let mut want = upstream_of_the_late_day();
    want.insert("daily_revenue".into(), vec!["2026-02-28".into()]);
    want.get_mut("rolling7").unwrap().push("2026-02-28".into());
    assert_eq!(g.built_by(run), want, "partition_models");
    g.assert_roll_ups_add_up();
    assert_eq!(february_in(&g, "upstream"), serde_json::json!([]));
}

/// A day model that reads this month's and last month's totals (`window -1..0` in months).
fn versus_last_month() -> String {
    "\
-- name: versus_last_month
-- version: 1
-- key: ds
-- values: revenue
-- depends_on: monthly_revenue window -1..0
-- create: CREATE TABLE versus_last_month (ds DATE NOT NULL, revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
SELECT {{ ds }} AS ds, coalesce(sum(revenue), 0) AS revenue
FROM monthly_revenue WHERE ds >= {{ window_start }} AND ds < {{ window_end }}
"
    .to_string()
}

/// The rule that judges `upstream` (common.sql) reads the partitions the cascade's rule
/// (cascade.rs) does, here for a window counted in months: January rebuilt alone leaves
/// February's days upstream, which read it as last month, and no other date.
#[test]
fn upstream_follows_a_window_counted_in_the_read_model_s_periods() {
    let g = Grains::new(&[
        (
            "monthly_revenue",
            roll_up("monthly_revenue", "month", "daily_revenue", ""),
        ),
        ("versus_last_month", versus_last_month()),
    ]);
    g.sb.insert_orders(&Orders::new(3422, FIRST, DAYS, false).rows);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    assert_eq!(february_in(&g, "upstream"), serde_json::json!([]));
    g.apply(
        0,
        &["--interval", "2026-01", "--as-of", AS_OF, "--no-downstream"],
    );
    assert_eq!(
        g.status_json(FULL)["ranges"]["upstream"],
        serde_json::json!(["2026-02-01..2026-02-28"])
    );
    let (_, run) = g.apply(
        0,
        &["--interval", FULL, "--as-of", AS_OF, "--only", "upstream"],
    );
    assert_eq!(
        g.built_by(run),
        plan(&[("versus_last_month", days("2026-02-01", "2026-02-28"))])
    );
    assert_eq!(
        g.status_json(FULL)["ranges"]["upstream"],
        serde_json::json!([])
    );
}

/// `status` and `report --html` show the weeks and the months a cell each, in its place
/// in the year: the late day rebuilt alone leaves its week and its month `^`.
#[test]
fn status_and_the_report_show_a_row_of_weeks_and_a_row_of_months() {
    let (g, _) = day_rebuilt_alone(3423);
    let text = g
        .sqlrun(0, &["status", "--interval", "2026-01-01..2026-02-28"])
        .stdout;
    // Week 1 of 2026 starts on 2025-12-29, before the span: its place stays blank. The
    // week of 2026-02-23 has not ended by --as-of 2026-03-01.
    assert!(
        text.contains(&format!("\n{:<15}  2026   #####^#.\n", "weekly_revenue")),
        "{text}"
    );
    assert!(
        text.contains(&format!("\n{:<15}  2026  #^\n", "monthly_revenue")),
        "{text}"
    );
    let page = g.sb.path().join("report.html");
    g.sqlrun(0, &["report", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    let grains = &html[html.find("<section id=grains").expect("the section")..];
    for cell in [
        "title=\"2026-W07 upstream\"",
        "title=\"2026-W06 computed\"",
        "title=\"2026-02 upstream\"",
        "title=\"2026-01 computed\"",
    ] {
        assert!(grains.contains(cell), "{cell} in {grains}");
    }
}

/// The full build, then late orders for 2026-02-09..02-11 (created after it): the tables
/// as the full build left them, and the sandbox.
fn late_orders_after_the_full_build(
    seed: u64,
) -> (Grains, BTreeMap<&'static str, Vec<Vec<String>>>) {
    let g = Grains::with_orders(seed);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    let before = g.tables();
    let late: Vec<OrderRow> = [
        ("2026-02-09", 11_000),
        ("2026-02-10", 22_000),
        ("2026-02-11", 33_000),
    ]
    .iter()
    .map(|(day, amount)| OrderRow {
        order_id: format!("late-{day}"),
        order_date: day.to_string(),
        amount: *amount,
        created_at: "2031-01-01 00:00:00".into(),
    })
    .collect();
    g.sb.insert_orders(&late);
    (g, before)
}

/// `undo RUN` on a cascaded backfill puts back every partition RUN built, the week, the
/// month and the rolling days too, each from history; the undo's run built exactly RUN's
/// partitions, and it can itself be undone.
#[test]
fn undo_of_a_cascaded_backfill_puts_back_every_partition_it_built_and_can_be_undone() {
    let (g, before) = late_orders_after_the_full_build(3430);
    let (_, run) = g.apply(
        0,
        &["--interval", "2026-02-09..2026-02-11", "--as-of", AS_OF],
    );
    assert_eq!(g.built_by(run), three_day_backfill());
    let backfilled = g.tables();
    assert_ne!(
        backfilled, before,
        "the late orders changed the backfill's numbers"
    );
    let id = run.to_string();

    let dry = g.sqlrun(0, &["undo", &id, "--dry-run"]);
    contains_all(
        &dry.stdout,
        &[
            "would put back 14 partitions",
            "2026-02-10 daily_revenue: back to",
            "2026-W07 weekly_revenue: back to",
            "2026-02 monthly_revenue: back to",
            "2026-02-17 rolling7: back to",
        ],
    );
    assert_eq!(g.tables(), backfilled, "a dry run writes nothing");

    g.sqlrun(0, &["undo", &id, "--reason", "the late orders were a test"]);
    let undo = g.sb.last_run_id();
    assert_eq!(g.tables(), before, "every table as before the backfill");
    assert_eq!(g.built_by(undo), three_day_backfill(), "partition_models");
    assert_eq!(
        g.written_by(undo),
        three_day_backfill(),
        "the tables' run_id"
    );
    g.assert_roll_ups_add_up();
    assert_eq!(
        g.sb.rows(&format!(
            "SELECT kind, status FROM runs WHERE run_id = {undo}"
        )),
        [["undo".to_string(), "success".to_string()]]
    );

    // The undo undone: the backfill's numbers again.
    g.sqlrun(
        0,
        &["undo", &undo.to_string(), "--reason", "they were real"],
    );
    let again = g.sb.last_run_id();
    assert_eq!(g.tables(), backfilled, "back to the backfill's numbers");
    assert_eq!(g.built_by(again), three_day_backfill());
    g.assert_roll_ups_add_up();
}

/// RUN was `--no-downstream`: the undo puts its day back, and rebuilds by their own SQL
/// the week, the month and the rolling days that read it (RUN left them upstream).
#[test]
fn undo_of_a_day_rebuilt_alone_rebuilds_what_reads_it_and_leaves_nothing_upstream() {
    let (g, before) = late_orders_after_the_full_build(3431);
    let (_, run) = g.apply(
        0,
        &[
            "--interval",
            "2026-02-10",
            "--as-of",
            AS_OF,
            "--no-downstream",
        ],
    );
    assert_eq!(
        g.built_by(run),
        plan(&[
            ("daily_revenue", vec!["2026-02-10".into()]),
            ("rolling7", vec!["2026-02-10".into()]),
        ])
    );
    assert_ne!(february_in(&g, "upstream"), serde_json::json!([]));

    // The plan names what the undo's cascade rebuilds by its own SQL.
    let dry = g.sqlrun(0, &["undo", &run.to_string(), "--dry-run"]).stdout;
    contains_all(
        &dry,
        &[
            "then rebuild by their own SQL what reads them (the cascade):",
            "monthly_revenue  2026-02",
            "rolling7         2026-02-11..2026-02-16  6 days",
            "weekly_revenue   2026-W07",
        ],
    );
    g.sqlrun(0, &["undo", &run.to_string(), "--reason", "r"]);
    let undo = g.sb.last_run_id();
    assert_eq!(g.tables(), before, "every table as before RUN");
    g.assert_roll_ups_add_up();
    assert_eq!(
        g.built_by(undo),
        plan(&[
            ("daily_revenue", vec!["2026-02-10".into()]),
            ("monthly_revenue", vec!["2026-02-01".into()]),
            ("rolling7", days("2026-02-10", "2026-02-16")),
            ("weekly_revenue", vec!["2026-02-09".into()]),
        ])
    );
    assert_eq!(february_in(&g, "upstream"), serde_json::json!([]));
}

/// A day of RUN's that a later run rebuilt is skipped and said; what reads it is rebuilt by
/// its own SQL from what is there now (its old rows were computed from RUN's day), and the
/// rest goes back.
#[test]
fn undo_skips_a_partition_rebuilt_since_and_rebuilds_what_reads_it() {
    let (g, before) = late_orders_after_the_full_build(3432);
    let (_, run) = g.apply(
        0,
        &["--interval", "2026-02-09..2026-02-11", "--as-of", AS_OF],
    );
    let (_, later) = g.apply(
        0,
        &[
            "--interval",
            "2026-02-10",
            "--as-of",
            AS_OF,
            "--no-downstream",
        ],
    );
    let kept_day = g.revenue("daily_revenue")["2026-02-10"];

    let undone = g.sqlrun(0, &["undo", &run.to_string(), "--reason", "r"]);
    let undo = g.sb.last_run_id();
    contains_all(
        &undone.stderr,
        &[
            &format!("skipped 2026-02-10 daily_revenue: replaced since by run {later}"),
            "2026-W07 weekly_revenue: rebuilt by its own SQL",
        ],
    );
    let daily = g.revenue("daily_revenue");
    assert_eq!(daily["2026-02-10"], kept_day, "the later run's day stays");
    assert_eq!(g.run_ids("daily_revenue")["2026-02-10"], later);
    let old: BTreeMap<String, i64> = before["daily_revenue"]
        .iter()
        .map(|r| (r[0].clone(), int(&r[1])))
        .collect();
    for day in ["2026-02-09", "2026-02-11"] {
        assert_eq!(daily[day], old[day], "{day} put back");
    }
    g.assert_roll_ups_add_up();
    let built = g.built_by(undo);
    assert_eq!(built["daily_revenue"], ["2026-02-09", "2026-02-11"]);
    assert_eq!(built["weekly_revenue"], ["2026-02-09"]);
    assert_eq!(built["monthly_revenue"], ["2026-02-01"]);
    assert_eq!(built["rolling7"], days("2026-02-09", "2026-02-17"));
    assert_eq!(february_in(&g, "upstream"), serde_json::json!([]));
}

/// The undo reserves the dates its cascade builds on, as `apply` does: the month's anchor
/// 2026-02-28 and the rolling days' among them; a run beside it meets them held (exit 99).
#[test]
fn an_undo_holds_its_cascade_s_dates_and_a_run_beside_it_exits_99() {
    let (g, before) = late_orders_after_the_full_build(3433);
    let (_, run) = g.apply(
        0,
        &["--interval", "2026-02-09..2026-02-11", "--as-of", AS_OF],
    );
    let id = run.to_string();
    let undo_cmd =
        g.sb.cmd(&["--templates", g.tpl.as_str(), "undo", &id, "--reason", "r"]);
    let child = stopped_at(undo_cmd, "reserved");
    let undo = g.sb.last_run_id();
    let held = g.held_by(undo);
    let beside = g.sb.run(&[
        "--templates",
        &g.tpl,
        "apply",
        "--interval",
        "2026-02-16..2026-02-18",
        "--as-of",
        AS_OF,
    ]);
    let undone = resume(child);

    // The anchors: the days and rolling days where they end, the month on its last day
    // (not its first: nothing is built there).
    let mut anchors = days("2026-02-09", "2026-02-17");
    anchors.push("2026-02-28".into());
    assert_eq!(held, anchors);
    assert_eq!(beside.code, 99, "the run beside it: {beside:?}");
    contains_all(&beside.stderr, &["2026-02-28", &format!("run {undo}")]);
    assert_eq!(undone.code, 0, "the undo: {undone:?}");
    assert_eq!(g.tables()["monthly_revenue"], before["monthly_revenue"]);
    assert_eq!(g.run_ids("monthly_revenue")["2026-02-01"], undo);
    g.assert_roll_ups_add_up();
}

/// An hourly model goes back a local day at a time (its bookkeeping is per day), each hour
/// by its own partition value: the hours RUN built get the rows RUN replaced, and the hours
/// of that day RUN was not asked for keep theirs.
#[test]
fn undo_of_some_hours_puts_them_back_and_keeps_the_day_s_other_hours() {
    let g = Grains::new(&[("hourly_ticks", hourly_ticks())]);
    let only = ["--select", "hourly_ticks"];
    let at = ["--as-of", "2026-02-11"];
    let (_, day) = g.apply(0, &[&["--interval", "2026-02-09"][..], &at, &only].concat());
    let ticks = || {
        g.sb.rows("SELECT hour, n, run_id FROM hourly_ticks ORDER BY hour")
            .into_iter()
            .map(|r| (r[0].clone(), r[2].clone()))
            .collect::<Vec<_>>()
    };
    // Three hours rebuilt on their own.
    let (_, run) = g.apply(
        0,
        &[
            &["--interval", "2026-02-09T10..2026-02-09T12"][..],
            &at,
            &only,
        ]
        .concat(),
    );
    assert_eq!(
        g.sb.count(&format!(
            "SELECT count(*) FROM hourly_ticks WHERE run_id = {run}"
        )),
        3
    );
    g.sqlrun(0, &["undo", &run.to_string(), "--reason", "r"]);
    let undo = g.sb.last_run_id();
    let after = ticks();
    assert_eq!(
        after.len(),
        24,
        "every hour of the day still has its row: {after:?}"
    );
    assert_eq!(
        column(&g.sb.rows("SELECT hour FROM hourly_ticks ORDER BY hour")),
        hours("2026-02-09 00:00:00", 24)
    );
    assert!(
        after.iter().all(|(_, r)| *r == undo.to_string()),
        "{after:?}"
    );
    assert_eq!(
        g.sb.count(&format!(
            "SELECT count(*) FROM hourly_ticks WHERE run_id = {day}"
        )),
        0
    );
}

/// A backfill that corrected a sealed week: its corrections stand when it is undone, so
/// what RUN replaced beside them (the month, a rolling day past the seal) is rebuilt by
/// its own SQL from the days as they are now rather than put back to numbers without the
/// late order.
#[test]
fn undo_of_a_run_that_corrected_a_sealed_week_rebuilds_what_reads_the_corrections() {
    // The roll-ups read the days as they are true now, corrections included.
    let current = "daily_revenue_current";
    let g = Grains::new(&[
        (
            "weekly_revenue",
            roll_up("weekly_revenue", "week", current, ""),
        ),
        (
            "monthly_revenue",
            roll_up("monthly_revenue", "month", current, ""),
        ),
        ("rolling7", rolling7("daily_revenue window -6..0")),
    ]);
    g.sb.insert_orders(&Orders::new(3433, FIRST, DAYS, false).rows);
    g.apply(0, &["--interval", FULL, "--as-of", AS_OF]);
    g.sqlrun(
        0,
        &[
            "seal",
            "--interval",
            "2026-02-09..2026-02-15",
            "--reason",
            "w7",
        ],
    );
    g.sb.insert_orders(&[OrderRow {
        order_id: "late-9".into(),
        order_date: "2026-02-10".into(),
        amount: 7_000,
        created_at: "2031-01-01 00:00:00".into(),
    }]);
    let (_, run) = g.apply(0, &["--interval", "2026-02-10", "--as-of", AS_OF]);
    let corrections = "SELECT count(*) FROM daily_revenue_corrections WHERE settled_by IS NULL";
    assert_eq!(g.sb.count(corrections), 1);
    let dry = g.sqlrun(0, &["undo", &run.to_string(), "--dry-run"]).stdout;
    contains_all(
        &dry,
        &[
            "2026-02 monthly_revenue: rebuilt by its own SQL",
            "2026-02-16 rolling7: rebuilt by its own SQL",
        ],
    );
    g.sqlrun(0, &["undo", &run.to_string(), "--reason", "r"]);
    let undo = g.sb.last_run_id();
    assert_eq!(
        g.built_by(undo),
        plan(&[
            ("monthly_revenue", vec!["2026-02-01".into()]),
            ("rolling7", vec!["2026-02-16".into()]),
        ])
    );
    assert_eq!(g.sb.count(corrections), 1, "the correction stands");
    let month_off = "SELECT count(*) FROM monthly_revenue AS m WHERE m.ds = '2026-02-01' \
         AND m.revenue <> (SELECT sum(d.revenue) FROM daily_revenue_current AS d \
         WHERE d.ds >= '2026-02-01' AND d.ds < '2026-03-01')";
    assert_eq!(
        g.sb.count(month_off),
        0,
        "the month holds the corrected days"
    );
}
