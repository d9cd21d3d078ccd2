//! Checks: a query over one model's rows of a date that returns the rows that are wrong
//! (the dbt and SQLMesh convention), in `checks/NAME.sql` with the model and a severity
//! in its header. A run executes them inside each date's transaction, after the date's
//! models and before its record: a failing `error` check rolls the date back, a failing
//! `warn` check is recorded with the date.

use serde::Serialize;

use crate::db::{Db, Row};
use crate::error::{Error, Result};
use crate::interval::Interval;
use crate::pipeline::Pipeline;
use crate::templates::{TemplateFile, TemplateKind, TemplateSet};
use crate::vocabulary::Severity;

/// How many failing rows a check keeps (with the count of all of them): enough to see
/// what is wrong, bounded so that a check that fails on every row stays small.
pub const SAMPLE_ROWS: i64 = 10;

/// The column the check wrapper (`system/check.sql`) adds: how many rows failed in all.
const FAILING_ROWS_COLUMN: &str = "sqlrun_failing_rows";

/// One check of one model.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// `daily_revenue_one_row` (the file stem).
    pub name: String,
    /// `checks/daily_revenue_one_row.sql`, as templates include it.
    pub template: String,
    /// Where it was read from, for messages.
    pub file: String,
    pub version: i64,
    /// The model whose rows it reads.
    pub model: String,
    pub severity: Severity,
}

impl Check {
    /// The name the state store keeps (`checks/NAME`), as for every template.
    pub fn recorded_name(&self) -> String {
        format!("checks/{}", self.name)
    }
}

/// The checks of a template set, each naming one of `models`; every problem of every
/// check's header at once.
pub fn load(templates: &TemplateSet, models: &[&str]) -> Result<Vec<Check>> {
    let mut checks = Vec::new();
    let mut problems = Vec::new();
    for file in templates.of_kind(TemplateKind::Check) {
        match check_from(file, models) {
            Ok(check) => checks.push(check),
            Err(found) => problems.push(Error::problems(&file.path, "its header", found)),
        }
    }
    match problems.is_empty() {
        true => Ok(checks),
        false => Err(Error::all(problems)),
    }
}

fn check_from(file: &TemplateFile, models: &[&str]) -> std::result::Result<Check, Vec<String>> {
    let mut problems = Vec::new();
    let model = match file.header.get("model") {
        Some(m) if models.contains(&m.as_str()) => m.clone(),
        Some(m) => {
            problems.push(format!(
                "`-- model: {m}` is not a model of this pipeline; its models are: {}",
                models.join(", ")
            ));
            String::new()
        }
        None => {
            problems.push(format!(
                "no `-- model:` line in its header; name the model whose rows it checks, e.g. `-- model: {}`",
                models.first().copied().unwrap_or("daily_revenue")
            ));
            String::new()
        }
    };
    let severity = match file.header.get("severity").map(String::as_str) {
        None => Severity::Error,
        Some(text) => Severity::parse(text).unwrap_or_else(|| {
            problems.push(format!(
                "`-- severity: {text}` is not error or warn; write `-- severity: error` (the date rolls back when it fails) or `-- severity: warn` (recorded, the date commits)"
            ));
            Severity::Error
        }),
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Check {
        name: file.name.trim_start_matches("checks/").to_string(),
        template: file.include_name.clone(),
        file: file.path.clone(),
        version: file.version,
        model,
        severity,
    })
}

/// A check that found rows on a date.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub check: String,
    pub model: String,
    pub severity: Severity,
    pub version: i64,
    /// How many rows it returned in all.
    pub failing_rows: i64,
    /// The first of them ([`SAMPLE_ROWS`] at most), each column by name.
    pub rows: Vec<serde_json::Map<String, serde_json::Value>>,
}

impl Failure {
    /// The failing rows as the state store keeps them: a JSON array of objects.
    pub fn sample_json(&self) -> String {
        serde_json::to_string(&self.rows).expect("JSON values serialize")
    }

    /// `check NAME (model M) found N failing rows`, as a failed date's error says it.
    pub fn summary(&self) -> String {
        let rows = match self.failing_rows {
            1 => "1 failing row".to_string(),
            n => format!("{n} failing rows"),
        };
        format!("check {} (model {}) found {rows}", self.check, self.model)
    }
}

/// The failures among the rows a date's checks returned (`-- sqlrun rows: NAME`, one
/// entry per check that ran, in order): those that returned any.
pub fn failures(checks: &[Check], kept: &[(String, Vec<Row>)]) -> Vec<Failure> {
    kept.iter()
        .filter(|(_, rows)| !rows.is_empty())
        .filter_map(|(name, rows)| {
            let check = checks.iter().find(|c| &c.name == name)?;
            Some(failure(check, rows))
        })
        .collect()
}

/// One check's failing rows: the count the wrapper added, and the rows without it.
pub fn failure(check: &Check, rows: &[Row]) -> Failure {
    let mut failing_rows = rows.len() as i64;
    let sample = rows
        .iter()
        .map(|row| {
            let mut object = serde_json::Map::new();
            for (i, name) in row.names().iter().enumerate() {
                match name.as_str() {
                    FAILING_ROWS_COLUMN => failing_rows = row.i64(i).unwrap_or(failing_rows),
                    _ => {
                        object.insert(name.clone(), row.value(i).to_json());
                    }
                }
            }
            object
        })
        .collect();
    Failure {
        check: check.name.clone(),
        model: check.model.clone(),
        severity: check.severity,
        version: check.version,
        failing_rows,
        rows: sample,
    }
}

/// The error a date fails with when its error checks fail: every failing check, with
/// its count; the date rolled back. `run_id`: the run whose record shows the rows.
pub fn failed_message(failures: &[Failure], run_id: Option<i64>) -> String {
    let each: Vec<String> = failures
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(Failure::summary)
        .collect();
    let run = run_id.map_or("RUN_ID".to_string(), |r| r.to_string());
    format!(
        "{}; the date was rolled back and its previous rows stay (`sqlrun runs {run}` shows the failing rows)",
        each.join("; ")
    )
}

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
    let states = crate::reserve::date_states(db, pipeline, interval)?;
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
        for failure in date_failures(db, pipeline, &checks, &state.ds, state.sealed())? {
            report.failures.push(DateFailure {
                ds: state.ds.clone(),
                failure,
            });
        }
    }
    Ok(report)
}

/// `checks` over one date's rows as they stand: those that found rows.
pub fn date_failures(
    db: &mut Db,
    pipeline: &Pipeline,
    checks: &[&Check],
    ds: &str,
    sealed: bool,
) -> Result<Vec<Failure>> {
    let mut found = Vec::new();
    for check in checks {
        let sql = pipeline.bind_check(check, ds, sealed)?;
        let kept = db.run_script_keeping(&sql.sql, &sql.params)?;
        for (_, rows) in kept.iter().filter(|(_, rows)| !rows.is_empty()) {
            found.push(failure(check, rows));
        }
    }
    Ok(found)
}
