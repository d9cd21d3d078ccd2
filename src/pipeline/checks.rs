//! Checks: a query over one model's rows of a date that returns the rows that are wrong
//! (the dbt and SQLMesh convention), in `checks/NAME.sql` with the model and a severity
//! in its header. A run executes them inside each date's transaction, after the date's
//! models and before its record: a failing `error` check rolls the date back, a failing
//! `warn` check is recorded with the date. What a check is and what it found; loading
//! them is the pipeline's (pipeline.rs), running them over history `checking.rs`'s.

use serde::Serialize;

use crate::db::Row;
use crate::error::Failure;
use crate::text::words::Severity;

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
    /// Its text names `previous` (or a macro over it, such as change_against_previous):
    /// only then does a date's statement of checks define that relation for it, which
    /// would otherwise be rendered, sent and planned for every check of every date.
    pub reads_previous: bool,
}

/// One check's failing rows: the count the wrapper added, and the rows without it.
pub fn failure(check: &Check, rows: &[Row]) -> Failure {
    let mut failing_rows = rows.len() as i64;
    let sample = rows
        .iter()
        .map(|row| {
            if let Ok(count) = row.get::<i64>(FAILING_ROWS_COLUMN) {
                failing_rows = count;
            }
            let mut object = row.to_json();
            object.remove(FAILING_ROWS_COLUMN);
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

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;
    use crate::db::Value;
    use crate::error::failed_message;

    fn check(severity: Severity) -> Check {
        Check {
            name: "one_row".into(),
            template: "checks/one_row.sql".into(),
            file: "checks/one_row.sql".into(),
            version: 2,
            model: "daily_revenue".into(),
            severity,
            reads_previous: false,
        }
    }

    fn rows(values: &[(&str, i64)], total: i64) -> Vec<Row> {
        let names = Rc::new(vec![
            "ds".to_string(),
            "revenue".to_string(),
            FAILING_ROWS_COLUMN.to_string(),
        ]);
        values
            .iter()
            .map(|(ds, revenue)| {
                Row::new(
                    Rc::clone(&names),
                    vec![Value::from(*ds), Value::Int(*revenue), Value::Int(total)],
                )
            })
            .collect()
    }

    #[test]
    fn a_failure_keeps_the_rows_without_the_count_and_the_count_of_all() {
        let f = failure(&check(Severity::Error), &rows(&[("2026-02-03", -5)], 12));
        assert_eq!(f.failing_rows, 12);
        assert_eq!(f.sample_json(), r#"[{"ds":"2026-02-03","revenue":-5}]"#);
        assert_eq!(
            f.summary(),
            "check one_row (model daily_revenue) found 12 failing rows"
        );
    }

    #[test]
    fn the_message_names_the_error_checks_and_the_run() {
        let (error, warn) = (check(Severity::Error), check(Severity::Warn));
        let found = [failure(&error, &rows(&[("2026-02-03", 1)], 1))];
        let message = failed_message(&found, Some(7));
        assert!(message.starts_with("check one_row (model daily_revenue) found 1 failing row;"));
        assert!(message.contains("`sqlrun runs 7`"), "{message}");
        let warned = [failure(&warn, &rows(&[("2026-02-03", 1)], 1))];
        assert_eq!(failed_message(&warned, None).split(';').next(), Some(""));
    }
}
