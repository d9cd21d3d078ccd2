//! A model's SQL against the database before a date runs (at open and sync, in `render`,
//! and in `apply` for its first date), each refusal said in the model's own lines. Its
//! SELECT alone, rendered as a date runs it, is prepared first: an error in it is in the
//! model's text, so it names the file, line and column (`source_map`), and the columns it
//! returns must be the ones its header names. An error in the statements sqlrun wraps
//! around it is found in the model's part of them when it is there.

use crate::db::{self, Db, DbError, Dialect, ErrorAt};
use crate::error::{Error, Result};
use crate::pipeline::source_map::{self, find_part, line_and_column, pointer};
use crate::pipeline::{Model, Pipeline};

impl Pipeline {
    /// Each model a date computes, rendered for `ds` with its values as parameters,
    /// prepares on its own and returns the columns its header names. A model that does
    /// not render is left to the date's SQL, whose error names it.
    pub fn check_models(&self, db: &mut Db, ds: &str) -> Result<()> {
        for model in self.computed_models() {
            let Ok(bound) = self.bind_model(model, ds) else {
                continue;
            };
            let columns = match db.select_columns(&bound.sql) {
                Ok(columns) => columns,
                Err(db::Error::Database(e)) => {
                    return Err(self.model_error(model, ds, e, &bound.sql));
                }
                Err(e) => return Err(e.into()),
            };
            check_columns(model, ds, &columns, db.dialect())?;
        }
        Ok(())
    }

    /// An error of a date's statement in a model's part (`DbError::context`): where in
    /// the model's file, when the database says where and it is the model's text; else
    /// the line of the statement sqlrun wraps around the model.
    pub fn date_statement_error(&self, model: &Model, ds: &str, e: DbError) -> Error {
        let part = self.bind_model(model, ds).ok();
        let within = e.at.as_deref().zip(part.as_ref()).and_then(|(at, part)| {
            let start = find_part(&at.statement, &part.sql)?;
            let (line, _) = line_and_column(&at.statement, at.offset);
            let lines = part.sql.lines().count();
            (start <= line && line < start + lines).then_some(start)
        });
        match (within, e.at.as_deref()) {
            (Some(start), Some(at)) => {
                let lines: Vec<&str> = at.statement.lines().skip(start).collect();
                let (line, column) = line_and_column(&at.statement, at.offset);
                self.pointed(model, ds, &e.message, &lines, (line - start, column))
            }
            (None, Some(at)) => {
                let (line, column) = line_and_column(&at.statement, at.offset);
                let text = at.statement.lines().nth(line).unwrap_or_default();
                let column = source_map::char_column(text, column);
                Error::PipelineSql {
                    file: owner(model, ds),
                    message: format!(
                        "{} in the SQL sqlrun runs around its SELECT (templates/system/replace.sql, or correct.sql on a sealed date):\n{}\n{}",
                        e.message,
                        pointer(None, text, column),
                        render_hint(model, ds)
                    ),
                }
            }
            (_, None) => Error::PipelineSql {
                file: owner(model, ds),
                message: format!("{e}\n{}", render_hint(model, ds)),
            },
        }
    }

    /// A model's SELECT, prepared alone, that the database refused.
    fn model_error(&self, model: &Model, ds: &str, e: DbError, sql: &str) -> Error {
        // What was prepared is the model alone (on PostgreSQL in its `$1` form, line for
        // line the same), so its error is in the model's text.
        match e.at.as_deref() {
            Some(ErrorAt { statement, offset }) => {
                let statement = if statement.is_empty() { sql } else { statement };
                let lines: Vec<&str> = statement.lines().collect();
                let at = last_text_at(&lines, line_and_column(statement, *offset));
                self.pointed(model, ds, &e.message, &lines, at)
            }
            // SQLite gives no offset for a statement that ends early: its end is where.
            None if e.message == "incomplete input" => {
                let lines: Vec<&str> = sql.lines().collect();
                let at = last_text_at(&lines, line_and_column(sql, sql.len()));
                let message = "incomplete input: the SQL ends before its statement does (an \
                               unclosed parenthesis, quote, CASE or comment)";
                self.pointed(model, ds, message, &lines, at)
            }
            None => self.date_statement_error(model, ds, e),
        }
    }

    /// The refusal, pointing at the line and column of the model's file that `at` (line
    /// and byte column of `rendered`, the model's rendered lines) came from.
    fn pointed(
        &self,
        model: &Model,
        ds: &str,
        message: &str,
        rendered: &[&str],
        (line, column): (usize, usize),
    ) -> Error {
        let source = self.source_of(&model.template).unwrap_or_default();
        let found = source_map::locate(source, rendered, line, column);
        let (place, shown) = match found.exact {
            true => (
                format!("line {}, column {}", found.line, found.column),
                pointer(
                    Some(found.line),
                    source.lines().nth(found.line - 1).unwrap_or_default(),
                    found.column,
                ),
            ),
            false => (
                format!("near line {}", found.line),
                format!(
                    "{}\n  (as rendered; the template's lines could not be matched for certain)",
                    pointer(None, rendered[line], found.column)
                ),
            ),
        };
        Error::PipelineSql {
            file: format!("{}, {place} ({})", model.file, owned(model, ds)),
            message: format!("{message}\n{shown}\n{}", render_hint(model, ds)),
        }
    }
}

/// An error at the end of the input ("syntax error at end of input": an offset past the
/// last line, or on blank lines after it) is shown at the end of the last line with text.
fn last_text_at(lines: &[&str], (line, column): (usize, usize)) -> (usize, usize) {
    let blank = |l: &usize| lines.get(*l).is_none_or(|t| t.trim().is_empty());
    if !blank(&line) {
        return (line, column);
    }
    (0..line.min(lines.len()))
        .rev()
        .find(|l| !blank(l))
        .map_or((0, 0), |l| (l, lines[l].trim_end().len()))
}

/// `model NAME, as rendered for DS`.
fn owned(model: &Model, ds: &str) -> String {
    format!("model {}, as rendered for {ds}", model.name)
}

fn owner(model: &Model, ds: &str) -> String {
    format!("{} ({})", model.file, owned(model, ds))
}

fn render_hint(model: &Model, ds: &str) -> String {
    format!(
        "fix it in {}; `sqlrun render --date {ds} {}` prints its SQL",
        model.file, model.name
    )
}

/// The columns a model's SELECT returns are those its header names (`-- key:` then
/// `-- values:`), in any order: a date inserts them by name, so a misspelt alias would
/// be a column the table lacks and a missing one a NULL.
fn check_columns(model: &Model, ds: &str, returned: &[String], dialect: Dialect) -> Result<()> {
    // SQLite matches column names without regard to case; PostgreSQL folds unquoted ones.
    let same = |a: &str, b: &str| match dialect {
        Dialect::Sqlite => a.eq_ignore_ascii_case(b),
        Dialect::Postgres => a == b,
    };
    let missing: Vec<&str> = model
        .columns
        .iter()
        .filter(|c| !returned.iter().any(|r| same(r, c)))
        .map(String::as_str)
        .collect();
    let extra: Vec<&str> = returned
        .iter()
        .filter(|r| !model.columns.iter().any(|c| same(r, c)))
        .map(String::as_str)
        .collect();
    if missing.is_empty() && extra.is_empty() {
        return Ok(());
    }
    Err(Error::PipelineSql {
        file: owner(model, ds),
        message: columns_message(model, returned, &missing, &extra),
    })
}

fn columns_message(model: &Model, returned: &[String], missing: &[&str], extra: &[&str]) -> String {
    let mut lines = vec![
        "its SELECT returns other columns than its header names".to_string(),
        format!("  the SELECT returns: {}", returned.join(", ")),
        format!(
            "  the header names:   {} (`-- key:`), {} (`-- values:`)",
            model.key.join(", "),
            model.values.join(", ")
        ),
    ];
    if !missing.is_empty() {
        lines.push(format!("  missing from the SELECT: {}", missing.join(", ")));
    }
    if !extra.is_empty() {
        lines.push(format!("  not in the header: {}", extra.join(", ")));
    }
    lines.push(format!(
        "Name each column of the SELECT as the header does (`... AS {}`), or fix the header's `-- key:` / `-- values:`",
        missing.first().copied().unwrap_or("name")
    ));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::DateVars;

    #[test]
    fn an_error_at_the_end_of_input_points_at_the_last_line_with_text() {
        let lines = ["SELECT a", "FROM t", "GROUP BY", "", "  "];
        // PostgreSQL's "at end of input": an offset past the last line.
        assert_eq!(last_text_at(&lines, (5, 0)), (2, 8));
        assert_eq!(last_text_at(&lines, (3, 0)), (2, 8));
        assert_eq!(last_text_at(&lines, (1, 3)), (1, 3));
        assert_eq!(last_text_at(&[], (0, 0)), (0, 0));
    }

    /// The statement of a date's SQL (as bound, as it is sent) that holds `needle`, and
    /// an error of the database at it.
    fn error_at(p: &Pipeline, needle: &str, from: &str) -> DbError {
        let vars = DateVars {
            ds: "2026-11-20",
            run_id: 0,
            sealed: false,
            uncovered: &[],
            started_at: "2026-11-20 00:00:00",
            lease_seconds: 0,
            undo: None,
            parts: None,
        };
        let sql = p.bind_date(&vars).unwrap().sql;
        let statement = db::split_statements(&sql)
            .into_iter()
            .find(|s| s.contains(needle) && s.contains(from))
            .unwrap()
            .to_string();
        let offset = statement.find(needle).unwrap();
        DbError {
            at: Some(Box::new(ErrorAt { statement, offset })),
            context: Some("daily_revenue".into()),
            ..DbError::other("no such column: x")
        }
    }

    #[test]
    fn a_date_statement_error_in_the_model_points_at_its_line() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let p = Pipeline::load(None, dialect).unwrap();
            let model = p.model("daily_revenue").unwrap();
            let e = error_at(&p, "o.order_date", "INSERT INTO");
            let text = p.date_statement_error(model, "2026-11-20", e).to_string();
            assert!(
                text.contains("daily_revenue.sql, line 18, column 7 (model daily_revenue, as rendered for 2026-11-20): no such column: x\n  18 | WHERE o.order_date = {{ ds }}\n     |       ^"),
                "{dialect:?}: {text}"
            );
            // In the SQL around the SELECT: that line, as it is sent.
            let e = error_at(&p, "model_rows", "INSERT INTO");
            let text = p.date_statement_error(model, "2026-11-20", e).to_string();
            assert!(
                text.contains("in the SQL sqlrun runs around its SELECT"),
                "{text}"
            );
            assert!(text.contains(" | ) AS model_rows\n"), "{text}");
        }
    }

    #[test]
    fn a_misspelt_alias_is_said_with_both_lists() {
        let p = Pipeline::load(None, Dialect::Sqlite).unwrap();
        let model = p.model("daily_revenue").unwrap();
        let returned: Vec<String> = ["ds", "revenu", "order_count"].map(String::from).into();
        let e = check_columns(model, "2026-11-20", &returned, Dialect::Sqlite).unwrap_err();
        let text = e.to_string();
        for part in [
            "daily_revenue.sql",
            "2026-11-20",
            "the SELECT returns: ds, revenu, order_count",
            "the header names:   ds (`-- key:`), revenue, order_count (`-- values:`)",
            "missing from the SELECT: revenue",
            "not in the header: revenu",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        let upper: Vec<String> = ["DS", "Revenue", "order_count"].map(String::from).into();
        assert!(check_columns(model, "2026-11-20", &upper, Dialect::Sqlite).is_ok());
        assert!(check_columns(model, "2026-11-20", &upper, Dialect::Postgres).is_err());
    }
}
