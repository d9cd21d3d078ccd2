//! Where in a template a position in its rendered SQL comes from. minijinja keeps no
//! source map, but a template's lines are mostly literal SQL: a rendered line is matched
//! to the source line whose literal text it repeats (a `{{ ... }}` matches whatever it
//! printed), and a column inside literal text is the same column of the source line.
//! When the match is not certain (loops, conditions, a line that repeats), the answer
//! says so (`exact: false`, shown as "near line N").

/// A line and column (both from 1; the column in characters) of a template's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub line: usize,
    pub column: usize,
    /// Whether the line and column are certain: the rendered line matched this source
    /// line and no other.
    pub exact: bool,
}

/// The position in `source` of byte `column` of line `line` (from 0) of `rendered`, the
/// lines `source` rendered to (in a statement, its part; they need not end where the
/// source does: a model loses its final `;` and comments).
pub fn locate(source: &str, rendered: &[&str], line: usize, column: usize) -> Located {
    let patterns: Vec<Pattern> = parse(source);
    let straight = patterns.iter().all(|p| p.kind == Kind::Text);
    let chosen = if straight && rendered.len() <= patterns.len() {
        let exact = patterns
            .get(line)
            .is_some_and(|p| p.matches(rendered[line]).is_some());
        Some((line, exact))
    } else {
        by_anchors(&patterns, rendered, line)
    };
    let Some((source_line, exact)) = chosen else {
        return Located {
            line: line + 1,
            column: char_column(rendered[line], column),
            exact: false,
        };
    };
    let pattern = &patterns[source_line];
    match exact
        .then(|| pattern.source_column(rendered[line], column))
        .flatten()
    {
        Some(byte) => Located {
            line: source_line + 1,
            column: char_column(pattern.text, byte),
            exact: true,
        },
        None => Located {
            line: source_line + 1,
            column: char_column(rendered[line], column),
            exact: false,
        },
    }
}

/// The source line a rendered line came from, where the template has control flow: the
/// only source line it matches (exact), else one between the nearest lines that match
/// one source line only (not exact).
fn by_anchors(patterns: &[Pattern], rendered: &[&str], line: usize) -> Option<(usize, bool)> {
    let candidates = |i: usize| -> Vec<usize> {
        (0..patterns.len())
            .filter(|&j| {
                patterns[j].kind != Kind::Control && patterns[j].matches(rendered[i]).is_some()
            })
            .collect()
    };
    let anchor = |i: usize| match candidates(i).as_slice() {
        [only] => Some(*only),
        _ => None,
    };
    let before = (0..line).rev().find_map(anchor).unwrap_or(0);
    let after = (line + 1..rendered.len())
        .find_map(anchor)
        .unwrap_or(patterns.len().saturating_sub(1));
    let found = candidates(line);
    let between: Vec<usize> = found
        .iter()
        .copied()
        .filter(|&j| before <= j && j <= after)
        .collect();
    match (found.as_slice(), between.as_slice()) {
        ([only], _) | (_, [only]) => Some((*only, true)),
        (_, [first, ..]) => Some((*first, false)),
        _ => {
            // Nothing matches (a value that printed several lines): near the line after
            // the last certain one.
            let near = (before + 1).min(patterns.len().checked_sub(1)?);
            Some((near, false))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// SQL text, with `{{ ... }}` expressions in it.
    Text,
    /// Only `{% ... %}` tags or `{# ... #}` comments: the line renders to nothing.
    Control,
    /// Part of a tag or expression that spans lines: it matches no rendered line.
    Spanned,
}

/// One source line: its literal pieces and the expressions between them.
#[derive(Debug)]
struct Pattern<'a> {
    text: &'a str,
    kind: Kind,
    pieces: Vec<Piece<'a>>,
}

#[derive(Debug)]
enum Piece<'a> {
    /// Literal text, and the byte of the source line it starts at.
    Literal(&'a str, usize),
    /// An expression, starting at this byte of the source line.
    Hole(usize),
}

fn parse(source: &str) -> Vec<Pattern<'_>> {
    let mut open: Option<&str> = None;
    source
        .lines()
        .map(|text| {
            let (pattern, still_open) = parse_line(text, open);
            open = still_open;
            pattern
        })
        .collect()
}

/// A source line's pattern, and the closing delimiter of a tag left open at its end.
/// `open`: the closing delimiter of a tag an earlier line left open.
fn parse_line<'a>(
    text: &'a str,
    open: Option<&'static str>,
) -> (Pattern<'a>, Option<&'static str>) {
    let spanned = |open| {
        let pattern = Pattern {
            text,
            kind: Kind::Spanned,
            pieces: Vec::new(),
        };
        (pattern, open)
    };
    if let Some(close) = open {
        return match text.find(close) {
            None => spanned(Some(close)),
            Some(_) => spanned(None),
        };
    }
    let (mut pieces, mut tags, mut at, mut literal_from) = (Vec::new(), 0, 0, 0);
    while let Some(found) = text[at..].find('{') {
        let start = at + found;
        let close = match text.get(start + 1..start + 2) {
            Some("{") => "}}",
            Some("%") => "%}",
            Some("#") => "#}",
            _ => {
                at = start + 1;
                continue;
            }
        };
        if start > literal_from {
            pieces.push(Piece::Literal(&text[literal_from..start], literal_from));
        }
        let Some(end) = text[start + 2..].find(close).map(|e| start + 2 + e + 2) else {
            return spanned(Some(close));
        };
        match close {
            "}}" => pieces.push(Piece::Hole(start)),
            _ => tags += 1,
        }
        (at, literal_from) = (end, end);
    }
    if literal_from < text.len() {
        pieces.push(Piece::Literal(&text[literal_from..], literal_from));
    }
    let only_tags = tags > 0
        && pieces.iter().all(|p| match p {
            Piece::Literal(t, _) => t.trim().is_empty(),
            Piece::Hole(_) => false,
        });
    let kind = match (only_tags, tags) {
        (true, _) => Kind::Control,
        (false, 0) => Kind::Text,
        // A tag inside SQL text (`{% if %}x{% endif %}`) prints something unknown.
        _ => Kind::Spanned,
    };
    (Pattern { text, kind, pieces }, None)
}

impl Pattern<'_> {
    /// Where each piece starts in `rendered` (trailing spaces aside), if it matches.
    fn matches(&self, rendered: &str) -> Option<Vec<usize>> {
        if self.kind != Kind::Text {
            return None;
        }
        let rendered = rendered.trim_end();
        let mut starts = Vec::with_capacity(self.pieces.len());
        match_from(&self.pieces, rendered, 0, false, &mut starts).then_some(starts)
    }

    /// The byte of the source line that byte `column` of `rendered` came from: the same
    /// place in literal text, or the start of the expression that printed it.
    fn source_column(&self, rendered: &str, column: usize) -> Option<usize> {
        let starts = self.matches(rendered)?;
        let at = self
            .pieces
            .iter()
            .zip(&starts)
            .rposition(|(_, &start)| start <= column)?;
        Some(match self.pieces[at] {
            Piece::Literal(text, from) => from + (column - starts[at]).min(text.len()),
            Piece::Hole(from) => from,
        })
    }
}

/// Matches `pieces` against `rendered[at..]`, to its end; an expression matches any text
/// (the shortest that lets the rest match). `after_hole`: the piece before was one.
fn match_from(
    pieces: &[Piece],
    rendered: &str,
    at: usize,
    after_hole: bool,
    starts: &mut Vec<usize>,
) -> bool {
    let Some((first, rest)) = pieces.split_first() else {
        return after_hole || at == rendered.len();
    };
    match first {
        Piece::Hole(_) => {
            starts.push(at);
            if match_from(rest, rendered, at, true, starts) {
                return true;
            }
            starts.pop();
            false
        }
        Piece::Literal(text, _) => {
            let text = if rest.is_empty() {
                text.trim_end()
            } else {
                text
            };
            let tries: Vec<usize> = match after_hole {
                true => rendered[at..]
                    .match_indices(text)
                    .map(|(i, _)| at + i)
                    .filter(|&i| !rest.is_empty() || i + text.len() == rendered.len())
                    .collect(),
                false => rendered[at..]
                    .starts_with(text)
                    .then_some(at)
                    .into_iter()
                    .collect(),
            };
            for start in tries {
                starts.push(start);
                if match_from(rest, rendered, start + text.len(), false, starts) {
                    return true;
                }
                starts.pop();
            }
            false
        }
    }
}

/// Byte `byte` of `line` as a column counted in characters from 1.
pub fn char_column(line: &str, byte: usize) -> usize {
    let mut byte = byte.min(line.len());
    while !line.is_char_boundary(byte) {
        byte -= 1;
    }
    line[..byte].chars().count() + 1
}

/// The line and byte column (both from 0) of byte `offset` of `text`.
pub fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, offset - start)
}

/// Where `part` (a template rendered on its own) sits in `statement` (which includes
/// it): the first line of the statement where its lines begin, comparing lines with
/// their parameters' numbers left out (`:p3`, `$2`: a statement numbers them anew).
pub fn find_part(statement: &str, part: &str) -> Option<usize> {
    let part: Vec<String> = part.lines().map(unnumbered).collect();
    let lines: Vec<String> = statement.lines().map(unnumbered).collect();
    if part.is_empty() || part.len() > lines.len() {
        return None;
    }
    (0..=lines.len() - part.len()).find(|&k| lines[k..k + part.len()] == part[..])
}

/// A line with each parameter as `?`: a bound render prints `:p7`, and the statement
/// sent to PostgreSQL has `$2` there (a `:name` as the database layer reads one: not
/// after another `:`, as in a `::date` cast).
fn unnumbered(line: &str) -> String {
    let bytes = line.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let (mut out, mut i) = (String::with_capacity(line.len()), 0);
    while i < bytes.len() {
        let end = match bytes[i] {
            b'$' => (i + 1..bytes.len()).find(|&j| !bytes[j].is_ascii_digit()),
            b':' if (i == 0 || bytes[i - 1] != b':')
                && bytes
                    .get(i + 1)
                    .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_') =>
            {
                (i + 1..bytes.len()).find(|&j| !is_name(bytes[j]))
            }
            _ => Some(i),
        }
        .unwrap_or(bytes.len());
        if end > i + 1 {
            out.push('?');
            i = end;
        } else {
            let c = line[i..].chars().next().expect("at a character");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// A line of SQL with a caret under a column (in characters, from 1), numbered with its
/// line in the file when given:
///
/// ```text
///    11 |        sum(o.ammount) AS revenue
///       |            ^
/// ```
pub fn pointer(number: Option<usize>, text: &str, column: usize) -> String {
    let label = number.map(|n| n.to_string()).unwrap_or_default();
    let pad = " ".repeat(label.len());
    // Tabs stay tabs under the line, so the caret lines up however they are shown.
    let indent: String = text
        .chars()
        .take(column.saturating_sub(1))
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!("  {label} | {}\n  {pad} | {indent}^", text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL: &str = "-- name: orders_by_band
-- version: 1
SELECT {{ ds }} AS ds,
       CASE WHEN o.amount >= 100000 THEN 'large' ELSE 'small' END AS band,
       sum(o.ammount) AS revenue
FROM orders_latest AS o
WHERE o.order_date = {{ ds }}
GROUP BY 2;
-- a last comment
";

    fn at(rendered: &str, needle: &str) -> (Vec<String>, usize, usize) {
        let offset = rendered.find(needle).unwrap();
        let (line, column) = line_and_column(rendered, offset);
        (rendered.lines().map(String::from).collect(), line, column)
    }

    fn located(source: &str, rendered: &str, needle: &str) -> Located {
        let (lines, line, column) = at(rendered, needle);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        locate(source, &lines, line, column)
    }

    #[test]
    fn a_literal_line_maps_to_itself() {
        let rendered = MODEL
            .replace("{{ ds }}", "CAST(:p1 AS date)")
            .replace("GROUP BY 2;\n-- a last comment\n", "GROUP BY 2\n");
        let found = located(MODEL, &rendered, "o.ammount");
        assert_eq!(
            found,
            Located {
                line: 5,
                column: 12,
                exact: true
            }
        );
    }

    #[test]
    fn a_column_after_an_expression_is_the_source_column() {
        let rendered = MODEL.replace("{{ ds }}", "DATE '2026-11-20'");
        let found = located(MODEL, &rendered, "o.order_date");
        assert_eq!(
            found,
            Located {
                line: 7,
                column: 7,
                exact: true
            }
        );
        // Inside what an expression printed: the expression.
        let found = located(MODEL, &rendered, "'2026-11-20' AS ds");
        assert_eq!(
            found,
            Located {
                line: 3,
                column: 8,
                exact: true
            }
        );
    }

    #[test]
    fn lines_of_a_condition_are_found_by_their_text() {
        let source = "-- name: m
{% if dialect == 'postgres' %}
SELECT {{ ds }} AS ds,
{% else %}
SELECT {{ ds }} AS ds, -- sqlite
{% endif %}
       count(*) AS n,
       sum(o.ammount) AS revenue
FROM o";
        let rendered = "-- name: m\nSELECT '2026-01-01' AS ds, -- sqlite\n       count(*) AS n,\n       sum(o.ammount) AS revenue\nFROM o";
        let found = located(source, rendered, "o.ammount");
        assert_eq!(
            found,
            Located {
                line: 8,
                column: 12,
                exact: true
            }
        );
        let found = located(source, rendered, "-- sqlite");
        assert_eq!(found.line, 5, "{found:?}");
        assert!(found.exact);
    }

    #[test]
    fn a_repeated_line_is_only_near() {
        let source = "SELECT 1 AS a,\n{% for c in cols %}\n  x.bad,\n{% endfor %}\n  2 AS b";
        let rendered = "SELECT 1 AS a,\n  x.bad,\n  x.bad,\n  2 AS b";
        let (lines, _, column) = at(rendered, "x.bad");
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let found = locate(source, &lines, 2, column);
        assert_eq!(found.line, 3);
        // Matched one source line only: certain, even inside a loop.
        assert!(found.exact, "{found:?}");
        let found = locate(
            "a\n{% if x %}\nb\n{% endif %}\nb\nc",
            &["a", "b", "c"],
            1,
            0,
        );
        assert_eq!((found.line, found.exact), (3, false));
    }

    #[test]
    fn a_part_is_found_in_its_statement_whatever_its_parameters_are_numbered() {
        let part = "SELECT CAST(:p1 AS date) AS ds\nFROM o\nWHERE o.d = CAST(:p2 AS date)\n";
        let statement = "INSERT INTO t (ds)\nSELECT ds FROM (\nSELECT CAST($3 AS date) AS ds\nFROM o\nWHERE o.d = CAST($4 AS date)\n) AS model_rows";
        assert_eq!(find_part(statement, part), Some(2));
        assert_eq!(find_part(statement, "SELECT nothing\n"), None);
        assert_eq!(
            unnumbered("x::date = :p12x AND $3 > 'é'"),
            "x::date = ? AND ? > 'é'"
        );
    }

    #[test]
    fn the_pointer_puts_a_caret_under_the_column() {
        let shown = pointer(Some(11), "\tsum(o.ammount) AS revenue", 6);
        assert_eq!(shown, "  11 | \tsum(o.ammount) AS revenue\n     | \t    ^");
    }
}
