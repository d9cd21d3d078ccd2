//! A run of a date's statements as one request: the simple-query protocol sends several
//! statements in one round trip (the blocking client waits for each bound statement), so
//! their values go in as quoted literals, the same text a bound parameter sends
//! (`TextParam`), which the server reads by the statement's casts and context as it reads
//! the parameter.

use super::super::code_mask;
use super::types::TextParam;
use super::{Params, Value};

/// Where each `:name` parameter is in `sql` (in code, not in quotes, comments or `::`
/// casts): byte ranges, in order.
pub(super) fn parameter_spans(sql: &str) -> Vec<(usize, usize)> {
    let code = code_mask(sql);
    let bytes = sql.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_name = code[i]
            && bytes[i] == b':'
            && (i == 0 || bytes[i - 1] != b':')
            && bytes
                .get(i + 1)
                .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
        if !starts_name {
            i += 1;
            continue;
        }
        let end = (i + 1..bytes.len())
            .find(|&j| !is_name(bytes[j]))
            .unwrap_or(bytes.len());
        spans.push((i, end));
        i = end;
    }
    spans
}

/// The statements as one script, each `:name` replaced by its value as a quoted literal
/// (quotes doubled: sessions run with standard_conforming_strings on), NULL for none.
pub(super) fn inlined(statements: &[&str], params: Params) -> String {
    let mut out = String::new();
    for statement in statements {
        let mut copied = 0;
        for (start, end) in parameter_spans(statement) {
            out.push_str(&statement[copied..start]);
            let value = params
                .iter()
                .find(|(n, _)| *n == &statement[start..end])
                .map(|(_, v)| v.clone());
            out.push_str(&literal(value.unwrap_or(Value::Null)));
            copied = end;
        }
        out.push_str(&statement[copied..]);
        out.push_str(";\n");
    }
    out
}

fn literal(value: Value) -> String {
    match TextParam(value).text() {
        Some(text) => format!("'{}'", text.replace('\'', "''")),
        None => "NULL".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_quoted_literals() {
        let sql = inlined(
            &[
                "INSERT INTO t VALUES (CAST(:p1 AS bigint), :p2, ':p1', x::date)",
                " -- :p2\nDELETE FROM t WHERE a = :p3",
            ],
            &[
                (":p1", Value::Int(-5)),
                (":p2", "it's".into()),
                (":p3", Value::Null),
            ],
        );
        assert_eq!(
            sql,
            "INSERT INTO t VALUES (CAST('-5' AS bigint), 'it''s', ':p1', x::date);\n \
             -- :p2\nDELETE FROM t WHERE a = NULL;\n"
        );
    }
}
