//! Checks over dates already computed, reading only: `sqlrun check` (a new check against
//! two years of history without recomputing anything), and `seal`, which sends only dates
//! whose rows pass the error checks.

use serde::Serialize;

use crate::dates::interval::Interval;
use crate::db::{Db, DbError, Row, RowShape};
use crate::error::Failure;
use crate::error::Result;
use crate::pipeline::checks::{failure, Check};
use crate::pipeline::{DateVars, Pipeline};
use crate::text::words::Severity;

/// What `sqlrun check` found over an interval's computed dates.
#[derive(Debug, Serialize)]
pub struct Report {
    pub interval: String,
    /// The checks that ran on each date (`--select` narrows them), by name.
    pub checks: Vec<String>,
    /// How many dates were checked: those computed.
    pub dates_checked: usize,
    /// The dates of the interval never computed: not checked.
    pub not_computed: Vec<String>,
    /// Every check that found rows, date by date.
    pub failures: Vec<DateFailure>,
}

/// A check that found rows on one date.
#[derive(Debug, Serialize)]
pub struct DateFailure {
    pub ds: String,
    #[serde(flatten)]
    pub failure: Failure,
}

impl Report {
    /// Whether an error check found rows (`sqlrun check` exits 1).
    pub fn failed(&self) -> bool {
        self.failures
            .iter()
            .any(|f| f.failure.severity == Severity::Error)
    }
}

/// The checks of the models in scope over each computed date of `interval`, against its
/// rows as they stand (a sealed date's corrected values), reading only.
pub fn check_dates(db: &mut Db, pipeline: &Pipeline, interval: Interval) -> Result<Report> {
    let states = crate::reservations::judge::date_states(db, pipeline, interval)?;
    let checks = pipeline.computed_checks();
    let mut report = Report {
        interval: interval.to_string(),
        checks: checks.iter().map(|c| c.name.clone()).collect(),
        dates_checked: 0,
        not_computed: Vec::new(),
        failures: Vec::new(),
    };
    for state in &states {
        if !state.computed() {
            report.not_computed.push(state.ds.clone());
            continue;
        }
        report.dates_checked += 1;
        let date = (state.ds.as_str(), state.sealed());
        for failure in date_failures(db, pipeline, &checks, date, 0)? {
            report.failures.push(DateFailure {
                ds: state.ds.clone(),
                failure,
            });
        }
    }
    Ok(report)
}

/// Whether a partition of the check's model starts on `ds`: a week's or a month's rows are
/// keyed by its first day, and its checks read them there alone.
fn partition_starts(pipeline: &Pipeline, check: &Check, ds: &str) -> bool {
    use crate::dates::period::{Grain, Period};
    let Some(model) = pipeline.model(&check.model) else {
        return true;
    };
    let Ok(day) = crate::dates::interval::parse_date(ds, "date") else {
        return true;
    };
    // Dates, not instants: the zone does not move a week's or a month's first day.
    let tz = chrono_tz::Tz::UTC;
    match model.grain {
        Grain::Day | Grain::Hour => true,
        grain => Period::of_date(grain, day, tz).first_day(tz) == day,
    }
}

/// `checks` over one date's rows as they stand: those that found rows, with the first of
/// them. `run_id`: the run computing the date (0 when none is).
pub fn date_failures(
    db: &mut Db,
    pipeline: &Pipeline,
    checks: &[&Check],
    (ds, sealed): (&str, bool),
    run_id: i64,
) -> Result<Vec<Failure>> {
    let mut found = Vec::new();
    for check in checks.iter().filter(|c| partition_starts(pipeline, c, ds)) {
        let sql = pipeline.bind_check(check, ds, sealed, run_id)?;
        let kept = db.run_script_keeping(&sql.sql, &sql.params)?;
        for (_, rows) in kept.iter().filter(|(_, rows)| !rows.is_empty()) {
            found.push(failure(check, rows));
        }
    }
    Ok(found)
}

/// How many rows a check returned: `check_1`, `check_2`, ... in the order of
/// `computed_checks` (`system/date_checks.sql`).
#[derive(serde::Deserialize)]
struct CheckCount {
    check: i64,
}

/// In a date's transaction, after its script: the checks whose count
/// (`system/date_checks.sql`, kept as `checks`, a column per check in the order of
/// `computed_checks`) is not 0, each with its first rows. The count decides: a check
/// whose first rows cannot be read again (a query that is not deterministic) still fails.
pub fn counted_failures(
    db: &mut Db,
    pipeline: &Pipeline,
    kept: &[(String, Vec<Row>)],
    date: (&str, bool),
    run_id: i64,
) -> Result<Vec<Failure>> {
    let Some(counts) = kept
        .iter()
        .find(|(name, _)| name == "checks")
        .and_then(|(_, r)| r.first())
    else {
        return Ok(Vec::new());
    };
    let checks = pipeline.computed_checks();
    let ((), counts) = counts
        .read_numbered::<(), CheckCount>(checks.len())
        .map_err(|e| DbError::other(format!("system/date_checks.sql: {e}")))?;
    let mut found = Vec::new();
    for (check, count) in checks.into_iter().zip(counts) {
        let count = count.check;
        if count == 0 {
            continue;
        }
        let mut again = date_failures(db, pipeline, &[check], date, run_id)?;
        found.push(again.pop().unwrap_or_else(|| failure(check, &[])));
        if let Some(f) = found.last_mut() {
            f.failing_rows = f.failing_rows.max(count);
        }
    }
    Ok(found)
}

/// The rows this file reads, rendered for `pipeline`, for the test that prepares each
/// against a real schema: the counts a date's script keeps, and each check's first rows
/// (any columns: they are shown as they are).
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let d = pipeline.dialect;
    let (ds, run_id) = ("2026-02-01", 1);
    let date = pipeline.render_date(&DateVars {
        ds,
        run_id,
        sealed: false,
        uncovered: &[],
        started_at: "2026-02-02 00:00:00",
        lease_seconds: 60,
        undo: None,
        parts: None,
    })?;
    let checks = pipeline.computed_checks();
    let mut shapes = Vec::new();
    if !checks.is_empty() {
        let counts = RowShape::numbered::<(), CheckCount, _>(date.as_str(), d, checks.len());
        shapes.push(counts.kept("checks"));
    }
    for check in checks {
        let sql = pipeline.render_check(check, ds, false)?;
        shapes.push(RowShape::any(sql.as_str(), d).kept(&check.name));
    }
    Ok(shapes)
}
