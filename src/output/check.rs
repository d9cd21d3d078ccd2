//! `sqlrun check`: a line per check that found rows on a date, with its first row, then
//! what was checked.

use crate::dates::interval::{contiguous, parse_date};
use crate::error::Result;
use crate::output::Output;
use crate::seals::verify::{DateFailure, Report};
use crate::text::table::aligned;

pub fn report(report: &Report, out: &Output) -> Result<()> {
    out.json(report)?;
    let rows: Vec<Vec<String>> = report.failures.iter().map(failure_row).collect();
    let mut text = aligned(&rows);
    let errors = report
        .failures
        .iter()
        .filter(|f| f.failure.severity == crate::text::words::Severity::Error)
        .count();
    let warnings = report.failures.len() - errors;
    text.push_str(&format!(
        "checked {} date{} of {} with {} check{}: {}\n",
        report.dates_checked,
        plural(report.dates_checked),
        report.interval,
        report.checks.len(),
        plural(report.checks.len()),
        match (errors, warnings) {
            (0, 0) => "all passed".to_string(),
            (e, w) => format!("{e} error{}, {w} warning{}", plural(e), plural(w)),
        }
    ));
    if !report.not_computed.is_empty() {
        let dates: Vec<_> = report
            .not_computed
            .iter()
            .filter_map(|d| parse_date(d, "date").ok())
            .collect();
        let ranges: Vec<String> = contiguous(&dates).iter().map(|r| r.to_string()).collect();
        text.push_str(&format!(
            "not checked (never computed): {}\n",
            ranges.join(", ")
        ));
    }
    out.text(&text)
}

fn failure_row(f: &DateFailure) -> Vec<String> {
    let first = f
        .failure
        .rows
        .first()
        .map(|r| serde_json::Value::Object(r.clone()).to_string())
        .unwrap_or_default();
    vec![
        f.ds.clone(),
        f.failure.severity.to_string(),
        f.failure.summary(),
        first,
    ]
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
