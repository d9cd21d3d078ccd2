//! Reading SQL text: where its code is (outside quotes and comments), its statements,
//! and the text around an error.

/// The text around byte `at` of a statement, on one line: where a parse error stopped.
pub(super) fn excerpt(sql: &str, at: usize) -> String {
    let at = at.min(sql.len());
    let start = sql[..at]
        .char_indices()
        .rev()
        .nth(60)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let end = sql[at..]
        .char_indices()
        .nth(40)
        .map(|(i, _)| at + i)
        .unwrap_or(sql.len());
    sql[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Which bytes of a script are SQL code: not inside a quoted string or identifier, nor
/// a `--` or `/* */` comment.
pub(super) fn code_mask(sql: &str) -> Vec<bool> {
    let bytes = sql.as_bytes();
    let mut code = vec![false; bytes.len()];
    let mut i = 0;
    while i < bytes.len() {
        let skip_to = match bytes[i] {
            b'\'' | b'"' => find_from(bytes, i + 1, &[bytes[i]]).map(|e| e + 1),
            b'-' if bytes.get(i + 1) == Some(&b'-') => find_from(bytes, i, b"\n"),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                find_from(bytes, i + 2, b"*/").map(|e| e + 2)
            }
            _ => {
                code[i] = true;
                i += 1;
                continue;
            }
        };
        i = skip_to.unwrap_or(bytes.len());
    }
    code
}

fn find_from(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// Splits a script into statements at `;` in code (not in quotes or comments); pieces
/// that hold only comments are dropped.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let code = code_mask(sql);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in sql.bytes().enumerate() {
        if b == b';' && code[i] {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, sql.len()));
    out.into_iter()
        .filter(|(from, to)| {
            (*from..*to).any(|i| code[i] && !sql.as_bytes()[i].is_ascii_whitespace())
        })
        .map(|(from, to)| &sql[from..to])
        .collect()
}

/// A `-- sqlrun context: NAME` comment line before a statement's code: what the statements
/// from there on belong to (`"quoted"` as an identifier; `-` for nothing). None: no such
/// line here.
pub(super) fn context_marker(statement: &str) -> Option<Option<String>> {
    let mut found = None;
    for line in statement.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("-- sqlrun context:") {
            found = Some(match name.trim() {
                "-" | "" => None,
                name => Some(unquoted(name)),
            });
        } else if !line.is_empty() && !line.starts_with("--") {
            break;
        }
    }
    found
}

/// A marker's name: `"quoted"` as an identifier, else as written.
fn unquoted(name: &str) -> String {
    match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => name.to_string(),
    }
}

/// A `-- sqlrun rows: NAME` comment line before a statement's code: its rows are kept
/// under NAME (a check's failing rows), not dropped.
pub(super) fn rows_marker(statement: &str) -> Option<String> {
    for line in statement.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("-- sqlrun rows:") {
            return Some(unquoted(name.trim()));
        } else if !line.is_empty() && !line.starts_with("--") {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_markers_name_what_follows() {
        let s = "-- sqlrun context: \"daily_revenue\"\nDELETE FROM t";
        assert_eq!(context_marker(s), Some(Some("daily_revenue".into())));
        assert_eq!(context_marker("-- sqlrun context: -\nINSERT"), Some(None));
        assert_eq!(context_marker("INSERT INTO t -- sqlrun context: x\n"), None);
        assert_eq!(context_marker("\n-- other\nSELECT 1"), None);
        let kept = "\n-- sqlrun rows: daily_revenue_one_row\nSELECT 1";
        assert_eq!(rows_marker(kept).as_deref(), Some("daily_revenue_one_row"));
        assert_eq!(rows_marker("SELECT 1 -- sqlrun rows: x\n"), None);
    }

    #[test]
    fn scripts_split_outside_quotes_and_comments() {
        let sql = "INSERT INTO t VALUES ('a;b'); -- c; d\nSELECT \"x;\" FROM t /* ; */;\n-- only a comment;\n";
        assert_eq!(
            split_statements(sql),
            vec![
                "INSERT INTO t VALUES ('a;b')",
                " -- c; d\nSELECT \"x;\" FROM t /* ; */"
            ]
        );
    }
}
