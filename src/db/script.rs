//! Reading SQL text: where its code is (outside quotes and comments), its statements,
//! and the text around an error.

/// The line of a statement that holds byte `at` (where a parse error stopped), its
/// spaces collapsed; a long line is shortened at spaces around `at`, never inside a word.
pub(super) fn excerpt(sql: &str, at: usize) -> String {
    const AROUND: usize = 60;
    let mut at = at.min(sql.len());
    while !sql.is_char_boundary(at) {
        at -= 1;
    }
    let start = sql[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = sql[at..].find('\n').map_or(sql.len(), |i| at + i);
    let (mut from, mut to) = (start, end);
    if at - start > AROUND {
        let cut = floor_boundary(sql, at - AROUND);
        from = sql[cut..at].find(' ').map_or(cut, |i| cut + i);
    }
    if end - at > AROUND {
        let cut = floor_boundary(sql, at + AROUND);
        to = sql[at..cut].rfind(' ').map_or(cut, |i| at + i);
    }
    let text = sql[from..to]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let before = if from > start { "... " } else { "" };
    let after = if to < end { " ..." } else { "" };
    format!("{before}{text}{after}")
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
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

/// One statement of a script, with what it belongs to (the last `-- sqlrun context:`
/// line before it) and, if it keeps its rows, the name they are kept under.
pub(super) struct Marked<'a> {
    pub statement: &'a str,
    pub context: Option<String>,
    pub kept: Option<String>,
}

/// A script's statements, each with its context and kept name.
pub(super) fn marked(sql: &str) -> Vec<Marked<'_>> {
    let mut context = None;
    split_statements(sql)
        .into_iter()
        .map(|statement| {
            if let Some(marked) = context_marker(statement) {
                context = marked;
            }
            Marked {
                statement,
                context: context.clone(),
                kept: rows_marker(statement),
            }
        })
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
    fn statements_carry_their_context_and_kept_name() {
        let sql = "INSERT a; DELETE b;\n-- sqlrun context: m\nDELETE c; INSERT d;\n\
                   -- sqlrun rows: k\nSELECT 1;\n-- sqlrun context: -\nINSERT e;";
        let shapes: Vec<(Option<String>, Option<String>)> = marked(sql)
            .into_iter()
            .map(|m| (m.context, m.kept))
            .collect();
        let m = || Some("m".to_string());
        assert_eq!(
            shapes,
            vec![
                (None, None),
                (None, None),
                (m(), None),
                (m(), None),
                (m(), Some("k".into())),
                (None, None),
            ]
        );
    }

    #[test]
    fn excerpts_keep_whole_words() {
        let sql = "SELECT a,\n       sum(o.ammount) AS revenue\nFROM t";
        let at = sql.find("o.ammount").unwrap();
        assert_eq!(excerpt(sql, at), "sum(o.ammount) AS revenue");
        let long = format!("{} o.ammount {}", "word ".repeat(30), "more ".repeat(30));
        let at = long.find("o.ammount").unwrap();
        let shown = excerpt(&long, at);
        assert!(
            shown.starts_with("... word") && shown.ends_with("more ..."),
            "{shown}"
        );
        assert!(shown.contains("o.ammount"), "{shown}");
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
