//! Named parameters (`:p1`, `:run_id`) as PostgreSQL's positional ones (`$1`, `$2`):
//! every value is bound, never printed into the SQL.

use std::collections::HashMap;

use super::super::code_mask;
use super::types::TextParam;
use super::{Params, Value};

/// Where each `:name` parameter is in `sql` (in code, not in quotes, comments or `::`
/// casts): byte ranges, in order.
fn parameter_spans(sql: &str) -> Vec<(usize, usize)> {
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

/// `:name` parameters as `$1, $2, ...` (in code, not in quotes, comments or `::` casts);
/// the values in that order.
pub(super) fn positional(sql: &str, params: Params) -> (String, Vec<TextParam>) {
    let mut out = String::with_capacity(sql.len());
    let mut order: Vec<&str> = Vec::new();
    // By name, so that a statement of many thousand parameters (a bulk load's) is
    // numbered in one pass.
    let mut numbers: HashMap<&str, usize> = HashMap::new();
    let mut copied = 0;
    for (start, end) in parameter_spans(sql) {
        let name = &sql[start..end];
        let n = *numbers.entry(name).or_insert_with(|| {
            order.push(name);
            order.len()
        });
        out.push_str(&sql[copied..start]);
        out.push('$');
        out.push_str(&n.to_string());
        copied = end;
    }
    out.push_str(&sql[copied..]);
    let values = order
        .iter()
        .map(|name| {
            let value = params
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone());
            TextParam(value.unwrap_or(Value::Null))
        })
        .collect();
    (out, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_parameters_become_positional() {
        let (sql, values) = positional(
            "SELECT ':no', x::date FROM t WHERE a = :a AND b = :b OR c = :a -- :c",
            &[(":a", Value::Int(1)), (":b", "two".into())],
        );
        assert_eq!(
            sql,
            "SELECT ':no', x::date FROM t WHERE a = $1 AND b = $2 OR c = $1 -- :c"
        );
        assert_eq!(values.len(), 2);
        assert_eq!(values[1].0, Value::Text("two".into()));
    }
}
