//! Declared sources: `sources/NAME.sql`, one table the pipeline reads and sqlrun does not
//! compute, reviewed and versioned like a model. Its header says the key, the column that
//! orders a key's versions (`-- latest_by:`), the date column when its rows have dates
//! (without one it is a lookup: customers, products), how late its data may be; its DDL is
//! `-- create:` or the file's body. sqlrun creates the table (or adopts one that exists),
//! tracks its changes once a model reads it, and gives it a `<name>_latest` view made from
//! the rule (system/source_latest.sql), so no model spells the rule out again.

use std::time::Duration;

use serde::Serialize;

use crate::pipeline::templates::TemplateFile;

/// One `sources/NAME.sql`.
#[derive(Debug, Clone, Serialize)]
pub struct Declared {
    /// The table's name: the file's stem.
    pub name: String,
    /// `sources/customers.sql`, as templates include it.
    pub template: String,
    /// Where it was read from, for messages.
    pub file: String,
    pub version: i64,
    /// What `source_declarations` records: the text's checksum, without `-- fresh_within:`.
    pub checksum: String,
    pub key: Option<String>,
    /// The column that orders a key's versions: the greatest wins, ties to the row that
    /// arrived last.
    pub latest_by: Option<String>,
    /// None: a lookup (no dates of its own).
    pub date_column: Option<String>,
    /// `-- create:`, when the DDL is in the header (else the body is rendered).
    pub create: Option<String>,
    /// `-- migrate:`: the SQL that brings the table from the previous version to this one.
    pub migrate: Option<String>,
    /// `-- fresh_within:`: how long after a date ends its rows may still arrive.
    pub fresh_within_seconds: Option<u64>,
    /// `-- fresh_within:` as written.
    pub fresh_within: Option<String>,
    /// `-- loaded_at:`: a column that says when each row arrived (else the change notes
    /// say when the source last changed).
    pub loaded_at: Option<String>,
    /// `<name>_latest`, when the declaration has a key and `-- latest_by:`.
    pub latest_view: Option<String>,
}

impl Declared {
    pub fn is_lookup(&self) -> bool {
        self.date_column.is_none()
    }

    /// What a model reads for the current rows: the `_latest` view, else the table.
    pub fn current_rows(&self) -> &str {
        self.latest_view.as_deref().unwrap_or(&self.name)
    }
}

/// A declaration from its file's header, or every problem of the header, each with its fix.
pub fn declared_from(file: &TemplateFile) -> std::result::Result<Declared, Vec<String>> {
    let mut problems = Vec::new();
    let name = file.name.trim_start_matches("sources/").to_string();
    let one = |key: &str, problems: &mut Vec<String>| -> Option<String> {
        let list = file.list(key);
        if list.len() > 1 {
            problems.push(format!(
                "`-- {key}: {}` names {} columns; a source's {key} is one column",
                list.join(", "),
                list.len()
            ));
        }
        list.into_iter().next()
    };
    let key = one("key", &mut problems);
    let latest_by = one("latest_by", &mut problems);
    let date_column = one("date_column", &mut problems);
    let loaded_at = one("loaded_at", &mut problems);
    if latest_by.is_some() && key.is_none() {
        problems.push(format!(
            "`-- latest_by:` orders the versions of one key, but there is no `-- key:`; add the column the versions share, e.g. `-- key: {name}_id`"
        ));
    }
    if date_column.is_none() && key.is_none() {
        problems.push(format!(
            "a source without `-- date_column:` is a lookup, which models reach by its key: add `-- key: COLUMN` (e.g. `-- key: {name}_id`), or `-- date_column: COLUMN` if its rows have dates"
        ));
    }
    let fresh_within = file.header.get("fresh_within").cloned();
    let fresh_within_seconds = match fresh_within.as_deref().map(parse_fresh_within) {
        None => None,
        Some(Ok(seconds)) => Some(seconds),
        Some(Err(problem)) => {
            problems.push(problem);
            None
        }
    };
    let create = file.header.get("create").cloned();
    if create.is_some() && !body(&file.source).trim().is_empty() {
        problems.push(
            "the DDL is given twice, in `-- create:` and as the file's body; keep one".into(),
        );
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let latest_view = latest_by.as_ref().map(|_| format!("{name}_latest"));
    Ok(Declared {
        checksum: crate::pipeline::templates::checksum(
            &crate::pipeline::templates::versioned_text(&file.source),
        ),
        template: file.include_name.clone(),
        file: file.path.clone(),
        version: file.version,
        key,
        latest_by,
        date_column,
        create,
        migrate: file.header.get("migrate").cloned(),
        fresh_within_seconds,
        fresh_within,
        loaded_at,
        latest_view,
        name,
    })
}

/// `2 hours`, `90 minutes`, `1 day`, `30m`: a duration, as `reserve --for` takes it.
fn parse_fresh_within(text: &str) -> std::result::Result<u64, String> {
    let compact: String = text.split_whitespace().collect();
    humantime::parse_duration(&compact)
        .ok()
        .filter(|d| *d > Duration::ZERO)
        .map(|d| d.as_secs())
        .ok_or_else(|| {
            format!("`-- fresh_within: {text}` is not a duration; write e.g. `-- fresh_within: 2 hours`, `90 minutes` or `1 day`")
        })
}

/// A file's text after its header: the DDL when there is no `-- create:`.
pub fn body(source: &str) -> String {
    let mut lines = source.lines().peekable();
    while lines.peek().is_some_and(|l| l.starts_with("--")) {
        lines.next();
    }
    lines.collect::<Vec<_>>().join("\n")
}

/// The columns a `CREATE TABLE name (...)` for `table` declares, in order, as written
/// (quotes taken off); None when the DDL has no such statement. Constraints (PRIMARY KEY,
/// UNIQUE, CHECK, FOREIGN KEY, CONSTRAINT, EXCLUDE) are not columns.
pub fn created_columns(ddl: &str, table: &str) -> Option<Vec<String>> {
    let text = without_comments(ddl);
    let inside = table_body(&text, table)?;
    let columns = split_top_level(inside)
        .into_iter()
        .filter_map(|part| first_word(part.trim()))
        .filter(|word| !is_constraint(word))
        .map(|word| unquote(&word))
        .collect();
    Some(columns)
}

fn without_comments(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '-' && chars.peek() == Some(&'-') => {
                for rest in chars.by_ref() {
                    if rest == '\n' {
                        out.push('\n');
                        break;
                    }
                }
                continue;
            }
            None => {}
        }
        out.push(c);
    }
    out
}

/// The text between the parentheses of `CREATE TABLE [IF NOT EXISTS] <table> (`.
fn table_body<'a>(text: &'a str, table: &str) -> Option<&'a str> {
    let upper = text.to_ascii_uppercase();
    let mut from = 0;
    while let Some(found) = upper[from..].find("CREATE") {
        let start = from + found;
        from = start + 6;
        let mut words = text[from..].split_whitespace();
        let mut next = words.next()?;
        if next.eq_ignore_ascii_case("TEMP") || next.eq_ignore_ascii_case("TEMPORARY") {
            next = words.next()?;
        }
        if !next.eq_ignore_ascii_case("TABLE") {
            continue;
        }
        let after_table = from + text[from..].to_ascii_uppercase().find("TABLE")? + 5;
        let rest = text[after_table..].trim_start();
        let rest = strip_words(rest, &["IF", "NOT", "EXISTS"]);
        let open = rest.find('(')?;
        let name = unquote(rest[..open].trim());
        let name = name.rsplit('.').next().unwrap_or_default();
        if !name.eq_ignore_ascii_case(table) {
            continue;
        }
        let body = &rest[open + 1..];
        return Some(&body[..closing(body)?]);
    }
    None
}

fn strip_words<'a>(mut text: &'a str, words: &[&str]) -> &'a str {
    let original = text;
    for word in words {
        match text.get(..word.len()) {
            Some(w) if w.eq_ignore_ascii_case(word) => text = text[word.len()..].trim_start(),
            _ => return original,
        }
    }
    text
}

/// The characters of `text` outside quotes, each with the depth of parentheses it is at
/// (a `)` at the depth it closes to; below 0 when it closes one opened before `text`).
fn outside_quotes(text: &str) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    let (mut depth, mut quote) = (0i32, None);
    text.char_indices().filter_map(move |(i, c)| {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None => {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                return Some((i, c, depth));
            }
        }
        None
    })
}

/// Where the parenthesis opened just before `text` closes.
fn closing(text: &str) -> Option<usize> {
    outside_quotes(text)
        .find(|&(_, c, depth)| c == ')' && depth < 0)
        .map(|(i, _, _)| i)
}

/// `text` cut at its commas outside quotes and parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c, depth) in outside_quotes(text) {
        if c == ',' && depth == 0 {
            parts.push(&text[start..i]);
            start = i + 1;
        }
    }
    parts.push(&text[start..]);
    parts
}

fn first_word(part: &str) -> Option<String> {
    if let Some(rest) = part.strip_prefix('"') {
        return rest.find('"').map(|end| format!("\"{}\"", &rest[..end]));
    }
    let word: String = part
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

fn is_constraint(word: &str) -> bool {
    const WORDS: [&str; 6] = [
        "CONSTRAINT",
        "PRIMARY",
        "UNIQUE",
        "CHECK",
        "FOREIGN",
        "EXCLUDE",
    ];
    WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

fn unquote(name: &str) -> String {
    name.trim_matches('"').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_columns_of_a_create_table() {
        let ddl = "CREATE TABLE customers (customer_id TEXT NOT NULL, segment TEXT NOT NULL,\n    updated_at TIMESTAMP NOT NULL)";
        assert_eq!(
            created_columns(ddl, "customers").unwrap(),
            ["customer_id", "segment", "updated_at"]
        );
        let orders = "-- the contract's\nCREATE TABLE IF NOT EXISTS \"orders\" (\n  order_id TEXT NOT NULL, -- a, b\n  created_at TEXT NOT NULL DEFAULT (datetime('now', '+1 day')),\n  note TEXT DEFAULT 'x, y)',\n  PRIMARY KEY (order_id, created_at),\n  CHECK (length(order_id) > 0)\n);\nCREATE INDEX orders_by_id ON orders (order_id);";
        assert_eq!(
            created_columns(orders, "orders").unwrap(),
            ["order_id", "created_at", "note"]
        );
        assert_eq!(created_columns(orders, "customers"), None);
        let pg = "create table public.events (\"Kind\" text, at timestamptz, n bigint generated always as identity)";
        assert_eq!(created_columns(pg, "events").unwrap(), ["Kind", "at", "n"]);
    }

    #[test]
    fn fresh_within_takes_spelt_out_durations() {
        assert_eq!(parse_fresh_within("2 hours"), Ok(7200));
        assert_eq!(parse_fresh_within("90 minutes"), Ok(5400));
        assert_eq!(parse_fresh_within("1 day"), Ok(86400));
        assert_eq!(parse_fresh_within("30m"), Ok(1800));
        assert!(parse_fresh_within("soon").is_err());
        assert!(parse_fresh_within("0 hours").is_err());
    }

    #[test]
    fn the_body_is_what_follows_the_header() {
        let source = "-- name: c\n-- version: 1\n--\n-- about it\nCREATE TABLE c (k TEXT)\n";
        assert_eq!(body(source).trim(), "CREATE TABLE c (k TEXT)");
        assert_eq!(body("-- name: c\n-- version: 1\n").trim(), "");
    }
}
