//! Many rows in one `COPY ... FROM STDIN` (text format): one statement, so the source
//! triggers fire once, and no round trip per row. The server reads each field as the type
//! of its column, as it reads a bound text parameter.

use bytes::Bytes;

use super::session::Session;
use super::{DbError, Value};

/// Bytes gathered before they are handed to the driver.
const CHUNK: usize = 64 * 1024;

/// Sends `values`, `width` to a row, through the COPY statement `sql`; how many rows the
/// server took. A row the server refuses fails the whole COPY.
pub(super) fn copy_rows(
    client: &mut Session,
    sql: &str,
    width: usize,
    values: &[Value],
) -> Result<u64, DbError> {
    let mut rows = values.chunks(width.max(1)).peekable();
    let chunks = std::iter::from_fn(|| {
        rows.peek()?;
        let mut buffer = String::with_capacity(CHUNK + 1024);
        while buffer.len() < CHUNK {
            let Some(row) = rows.next() else { break };
            push_row(&mut buffer, row);
        }
        Some(Bytes::from(buffer))
    });
    Ok(client.copy_in(sql, chunks)?)
}

/// One row of COPY's text format: fields by tabs, `\N` for NULL, a newline at the end.
fn push_row(out: &mut String, row: &[Value]) {
    for (i, value) in row.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        match value {
            Value::Null => out.push_str("\\N"),
            Value::Int(n) => out.push_str(&n.to_string()),
            Value::Real(f) => out.push_str(&f.to_string()),
            Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
            Value::Text(s) => push_text(out, s),
        }
    }
    out.push('\n');
}

/// Text with the characters COPY's text format gives a meaning escaped.
fn push_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_written_as_copy_text() {
        let mut out = String::new();
        push_row(
            &mut out,
            &[
                Value::Text("a\tb\\c\nd".into()),
                Value::Null,
                Value::Int(-42),
                Value::Bool(true),
            ],
        );
        assert_eq!(out, "a\\tb\\\\c\\nd\t\\N\t-42\tt\n");
    }
}
