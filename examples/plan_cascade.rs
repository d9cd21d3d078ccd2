//! What planning a cascade costs, in process (the plan reads no database: the same on
//! SQLite and PostgreSQL). `cargo run --release --example plan_cascade` prints the median
//! of 21 plans of each case; BENCHMARKS.md ("The cascade") has the figures.
//!
//! 1. A one-day change over ten years of five models at four grains: daily_revenue, a
//!    7-day rolling total, a weekly, a monthly and a yearly roll-up (the runs's days are
//!    one; the plan walks what that day feeds).
//! 2. Ten years of an hourly model (87,600 hours, 3,650 days asked).
//! 3. The same ten years of days for the five models at once.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use sqlrun::db::Dialect;
use sqlrun::pipeline::cascade::{plan, Ask};
use sqlrun::pipeline::Pipeline;

const ROLL_UP: &str = "-- name: NAME\n-- version: 1\n-- grain: GRAIN\n-- key: ds\n-- values: revenue\n-- depends_on: daily_revenue\n-- create: CREATE TABLE NAME (ds DATE NOT NULL, revenue BIGINT NOT NULL, run_id BIGINT NOT NULL, PRIMARY KEY (ds))\nSELECT {{ period_start }} AS ds, sum(revenue) AS revenue FROM daily_revenue_current WHERE ds >= {{ period_start }} AND ds < {{ period_end }}\n";
const ROLLING: &str = "-- name: revenue_7d\n-- version: 1\n-- key: ds\n-- values: revenue\n-- depends_on: daily_revenue window -6..0\n-- create: CREATE TABLE revenue_7d (ds DATE NOT NULL, revenue BIGINT NOT NULL, run_id BIGINT NOT NULL, PRIMARY KEY (ds))\nSELECT {{ ds }} AS ds, sum(revenue) AS revenue FROM daily_revenue_current WHERE ds >= {{ window_start }} AND ds < {{ window_end }}\n";
const HOURLY: &str = "-- name: hourly_ticks\n-- version: 1\n-- grain: hour\n-- key: hour\n-- date_column: hour\n-- values: n\n-- create: CREATE TABLE hourly_ticks (hour TEXT NOT NULL, n BIGINT NOT NULL, run_id BIGINT NOT NULL, PRIMARY KEY (hour))\nSELECT {{ period_start }} AS hour, 1 AS n\n";

fn main() {
    let dir = std::env::temp_dir().join(format!("sqlrun-plan-cascade-{}", std::process::id()));
    let models = dir.join("models");
    std::fs::create_dir_all(&models).expect("a temp folder");
    let builtin = include_str!("../templates/models/daily_revenue.sql");
    std::fs::write(models.join("daily_revenue.sql"), builtin).unwrap();
    for (name, grain) in [
        ("weekly_revenue", "week"),
        ("monthly_revenue", "month"),
        ("yearly_revenue", "year"),
    ] {
        let text = ROLL_UP.replace("NAME", name).replace("GRAIN", grain);
        std::fs::write(models.join(format!("{name}.sql")), text).unwrap();
    }
    std::fs::write(models.join("revenue_7d.sql"), ROLLING).unwrap();
    let five = Pipeline::load(Some(&dir), Dialect::Sqlite).expect("the five models load");
    std::fs::write(models.join("hourly_ticks.sql"), HOURLY).unwrap();
    let hourly = Pipeline::load(Some(&dir), Dialect::Sqlite).expect("the hourly model loads");
    std::fs::remove_dir_all(&dir).ok();

    let first = NaiveDate::from_ymd_opt(2016, 1, 1).unwrap();
    let ten_years: BTreeSet<NaiveDate> = first.iter_days().take(3650).collect();
    let one_day: BTreeSet<NaiveDate> = [NaiveDate::from_ymd_opt(2021, 6, 15).unwrap()].into();
    let now: DateTime<Utc> = "2030-01-01T00:00:00Z".parse().unwrap();
    let narrowed = sqlrun::pipeline::cascade::Narrowed::new();
    let ask = |pipeline, days| Ask {
        pipeline,
        zone: Tz::Europe__Berlin,
        days,
        downstream: true,
        ended_by: now,
        partial: false,
        closing: None,
        hours: None,
        narrowed: &narrowed,
    };
    let mut hourly_only = hourly;
    hourly_only.select(&["hourly_ticks".to_string()]).unwrap();
    let cases = [
        (
            "one day's change, 5 models at 4 grains",
            ask(&five, &one_day),
        ),
        (
            "ten years of hours (87,600 partitions)",
            ask(&hourly_only, &ten_years),
        ),
        (
            "ten years of days, 5 models at 4 grains",
            ask(&five, &ten_years),
        ),
    ];
    for (label, ask) in &cases {
        let mut times: Vec<Duration> = Vec::new();
        let mut partitions = 0;
        for _ in 0..21 {
            let t = Instant::now();
            let c = plan(ask);
            times.push(t.elapsed());
            partitions = c.reached.values().map(|p| p.len()).sum::<usize>();
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{label:<42} {partitions:>7} partitions  median {:8.2} ms  (min {:.2}, max {:.2})",
            ms(times[10]),
            ms(times[0]),
            ms(times[20])
        );
    }
}
