//! `sqlrun load TABLE FILE`: rows from a CSV file (or stdin) into a table, all or nothing.
//!
//! The header row names the columns; the table's other columns take their defaults (the
//! sqlite3 shell's `.import` gives every column a value, so `orders.created_at`'s default
//! never applies there). An empty field is NULL, as PostgreSQL's COPY reads CSV. Every
//! value is checked against its column's kind before it is sent (SQLite would keep `abc`
//! in an INTEGER column), and a source's date column takes only dates. The file is read
//! as a stream, many rows per INSERT, in one transaction: a bad row stops the load with
//! its line, column and value, and nothing is written. A tracked source's triggers mark
//! the dates its new rows touch as changed, as for any insert.

use std::borrow::Cow;
use std::io::Read;

use chrono::{DateTime, NaiveDateTime};
use minijinja::context;

use crate::dates::interval::{parse_date, Date, Interval};
use crate::db::{Db, DbError, Dialect, RowShape, TxKind, Value};
use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
use crate::store::{self, queries};
use crate::text::kinds::Kind;

/// The FILE that means standard input.
const STDIN: &str = "-";

/// sqlrun's own tables: the state store, written as runs, seals and syncs happen, never
/// from a file. (A unit test holds this list to the migrations.)
const STATE_TABLES: &[&str] = &[
    "runs",
    "run_partitions",
    "reservations",
    "run_events",
    "template_versions",
    "run_templates",
    "seals",
    "source_changes",
    "partition_sources",
    "source_tracking",
    "models",
    "model_events",
    "partition_models",
    "sqlrun_views",
    "check_results",
    "seal_events",
    "seal_coverage",
    "replaced_partitions",
    "source_declarations",
    "sqlrun_schema_history",
];

/// Rows per INSERT: few statements for a large file (PostgreSQL's source triggers fire
/// once per statement, and each reads the source), and at most PARAMETERS_PER_STATEMENT
/// values, within what SQLite (32,766) and PostgreSQL (65,535) bind. A batch is held in
/// memory until it is sent: 10,000 rows of orders are about 2 MB.
const ROWS_PER_STATEMENT: usize = 10_000;
const PARAMETERS_PER_STATEMENT: usize = 30_000;

/// What `system/load.sql` is rendered with in place of each value: any text that is
/// not a date prints as a bare parameter (a date would get a cast on PostgreSQL).
const PARAMETER: &str = "value";

/// The first and last date a source's changes were noted on (none: no notes).
#[derive(serde::Deserialize)]
struct NotesSpan {
    first_ds: Option<String>,
    last_ds: Option<String>,
}

/// A table of the database (`queries/*/tables.sql`).
#[derive(serde::Deserialize)]
struct Table {
    name: String,
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![
        RowShape::of::<NotesSpan, _>(&queries::SOURCE_NOTES_SPAN, dialect),
        RowShape::of::<Table, _>(&queries::TABLES, dialect),
    ]
}

/// The computed dates that show as changed now because a source of theirs has changes
/// noted (status's own judgement, over the span of the source's notes); empty for a
/// table that is no source.
pub fn changed_dates(db: &mut Db, pipeline: &Pipeline, table: &str) -> Result<Vec<Date>> {
    let noted = (pipeline.sources.iter().map(|s| &s.table))
        .chain(pipeline.lookups.iter().map(|l| &l.table));
    if !noted.into_iter().any(|t| t == table) {
        return Ok(Vec::new());
    }
    let span: NotesSpan = db.one_as(&queries::SOURCE_NOTES_SPAN, &[(":source", table.into())])?;
    let (Some(first), Some(last)) = (span.first_ds, span.last_ds) else {
        return Ok(Vec::new());
    };
    let span = Interval::new(parse_date(&first, "date")?, parse_date(&last, "date")?)?;
    Ok(crate::reservations::judge::date_states(db, pipeline, span)?
        .iter()
        .filter(|d| d.judged.changed)
        .filter_map(|d| parse_date(&d.ds, "date").ok())
        .collect())
}

/// Loads the CSV `file` (or stdin) into `table`, all rows in one transaction or none.
/// The database must be open with the pipeline synced: a source's change triggers are in
/// place before its rows go in. Returns how many rows went in.
pub fn load_file(db: &mut Db, pipeline: &Pipeline, table: &str, input: Input) -> Result<u64> {
    let columns = loadable_columns(db, pipeline, table)?;
    let mut rows = Rows::new(input, table, columns)?;
    let statements = Statements::new(pipeline, table, &rows.columns)?;
    load(db, &statements, &mut rows)
}

/// The rows' source: a file, or stdin; `name` is how messages call it.
pub struct Input {
    name: String,
    reader: Box<dyn Read>,
}

impl Input {
    /// Opens the file first: a missing file is bad input, before anything is written.
    pub fn open(file: &str) -> Result<Input> {
        if file == STDIN {
            return Ok(Input {
                name: "stdin".into(),
                reader: Box::new(std::io::stdin().lock()),
            });
        }
        let opened = std::fs::File::open(file).map_err(|e| {
            Error::bad(format!(
                "cannot read {file}: {e}; pass a CSV file, or - to read stdin"
            ))
        })?;
        Ok(Input {
            name: file.to_string(),
            reader: Box::new(opened),
        })
    }
}

/// A column of the table, as a file may fill it.
#[derive(Debug, Clone, PartialEq)]
struct Column {
    name: String,
    /// None: the column declares no usable type (SQLite); any text goes.
    kind: Option<Kind>,
    not_null: bool,
    /// A row that leaves it out gets a value (a default, an identity, the rowid).
    has_default: bool,
}

impl Column {
    /// Must the file give it? (Left out, it would be NULL, which it may not be.)
    fn required(&self) -> bool {
        self.not_null && !self.has_default
    }
}

/// A header field that holds the separator of another dialect of CSV (`a;b;c`, tabs):
/// the hint that the file must be comma-separated.
fn other_separator(field: &str) -> String {
    [(';', "semicolons"), ('\t', "tabs"), ('|', "bars")]
        .iter()
        .find(|(sep, _)| field.contains(*sep))
        .map(|(_, what)| {
            format!(
                " (the header seems separated by {what}: `sqlrun load` reads comma-separated \
                 CSV (RFC 4180); convert the file, e.g. export it again with commas)"
            )
        })
        .unwrap_or_default()
}

/// The columns of `table`, when rows may be loaded into it: a table that exists, not a
/// model's (apply fills those) nor sqlrun's own. A source's date column takes only dates.
fn loadable_columns(db: &mut Db, pipeline: &Pipeline, table: &str) -> Result<Vec<Column>> {
    let tables: Vec<String> = db
        .rows_as::<Table, _>(&queries::TABLES, &[])?
        .into_iter()
        .map(|t| t.name)
        .collect();
    let loadable: Vec<&str> = tables
        .iter()
        .map(String::as_str)
        .filter(|t| refusal(pipeline, t).is_none())
        .collect();
    let choice = match loadable.is_empty() {
        true => "there is no other table; create the table first".to_string(),
        false => format!("the tables you can load into: {}", loadable.join(", ")),
    };
    if let Some(why) = refusal(pipeline, table) {
        return Err(Error::bad(format!(
            "cannot load into {table}: {why}; {choice}"
        )));
    }
    let mut columns = table_columns(db, table)?;
    if !tables.iter().any(|t| t == table) {
        let what = match columns.is_empty() {
            true => format!("there is no table {table} in {}", db.target),
            false => format!("{table} is not a table of {} (a view?)", db.target),
        };
        return Err(Error::bad(format!("{what}; {choice}")));
    }
    // A source's rowid on PostgreSQL is sqlrun's arrival order (it fills itself, and a value
    // for it is refused row by row): not a column a file gives.
    let declared = pipeline.declared.iter().any(|d| d.name == table);
    if db.dialect() == crate::db::Dialect::Postgres
        && (declared || pipeline.sources.iter().any(|s| s.table == table))
    {
        columns.retain(|c| c.name != "rowid");
    }
    // SQLite declares orders.order_date TEXT; as a source's date column it holds dates.
    if let Some(source) = pipeline.sources.iter().find(|s| s.table == table) {
        for column in columns.iter_mut().filter(|c| c.name == source.date_column) {
            column.kind = Some(Kind::Date);
        }
    }
    Ok(columns)
}

/// Why rows may not be loaded into `table`, if they may not.
fn refusal(pipeline: &Pipeline, table: &str) -> Option<String> {
    if STATE_TABLES.contains(&table) {
        return Some(format!(
            "{table} is one of sqlrun's own state tables, which sqlrun writes as runs and \
             seals happen, never from a file"
        ));
    }
    let model = pipeline.models.iter().find(|m| {
        [
            &m.table,
            &m.corrections_table,
            &m.sent_table,
            &m.history_table,
        ]
        .iter()
        .any(|t| t.as_str() == table)
    })?;
    let what = if table == model.table {
        format!(
            "{table} is the table of model {}: its rows come from `sqlrun apply`, which \
             replaces a date whole",
            model.name
        )
    } else if table == model.corrections_table {
        format!(
            "{table} holds the corrections of model {}'s sealed dates, which `sqlrun apply` \
             writes",
            model.name
        )
    } else if table == model.history_table {
        format!(
            "{table} holds the rows `sqlrun apply` replaced in model {}'s table, which each \
             replace writes",
            model.name
        )
    } else {
        format!(
            "{table} holds what model {}'s sealed dates sent, which `sqlrun seal` writes",
            model.name
        )
    };
    let sources: Vec<&str> = model.sources.iter().map(|s| s.table.as_str()).collect();
    Some(match sources.is_empty() {
        true => format!("{what}; load the tables its SELECT reads, then run `sqlrun apply`"),
        false => format!(
            "{what}; load what it reads ({}), then `sqlrun apply --only changed --interval \
             START..END` recomputes the dates that changed",
            sources.join(", ")
        ),
    })
}

/// The table's columns in order (none: there is no such table or view).
fn table_columns(db: &mut Db, table: &str) -> Result<Vec<Column>> {
    Ok(store::table_columns(db, table)?
        .into_iter()
        .map(|c| Column {
            kind: Kind::parse(c.kind.as_deref()),
            name: c.name,
            not_null: c.not_null,
            has_default: c.has_default,
        })
        .collect())
}

/// The columns a header names, in its order: each one of the table's, once; and every
/// column the table cannot fill by itself among them.
fn header_columns(header: &[&str], table: &str, columns: &[Column]) -> Result<Vec<Column>, String> {
    fn names<'c>(cs: &[&'c Column]) -> Vec<&'c str> {
        cs.iter().map(|c| c.name.as_str()).collect()
    }
    let all: Vec<&Column> = columns.iter().collect();
    let required: Vec<&Column> = columns.iter().filter(|c| c.required()).collect();
    let example = match required.is_empty() {
        true => names(&all).join(","),
        false => names(&required).join(","),
    };
    if header.iter().all(|h| h.is_empty()) {
        return Err(format!(
            "there is no header; the first line must name the columns, e.g. `{example}`"
        ));
    }
    let mut named: Vec<Column> = Vec::new();
    for (i, name) in header.iter().enumerate() {
        if name.is_empty() {
            return Err(format!(
                "field {} of the header names no column; name every column, e.g. `{example}`",
                i + 1
            ));
        }
        let Some(column) = columns.iter().find(|c| c.name == *name) else {
            let separated = other_separator(name);
            let fix = match separated.is_empty() {
                true => format!(
                    "; name one of them in the header, leave the field out of the file, or \
                     add the column to {table} first"
                ),
                false => separated,
            };
            return Err(format!(
                "{table} has no column `{name}` (header field {}); its columns are: {}{fix}",
                i + 1,
                names(&all).join(", "),
            ));
        };
        if named.contains(column) {
            return Err(format!(
                "column {name} is named twice (header fields {} and {}); name each column once",
                header.iter().position(|h| h == name).map_or(0, |p| p + 1),
                i + 1
            ));
        }
        named.push(column.clone());
    }
    let missing: Vec<&Column> = required
        .into_iter()
        .filter(|c| !named.contains(c))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the header leaves out {}, which {table} cannot fill by itself (NOT NULL, no \
             default); add {} to the header, with a value on every line",
            names(&missing).join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        ));
    }
    Ok(named)
}

/// The file's rows, read one at a time and checked against their columns.
struct Rows {
    reader: csv::Reader<Box<dyn Read>>,
    record: csv::StringRecord,
    input: String,
    columns: Vec<Column>,
}

impl Rows {
    /// Reads the header, which names the columns.
    fn new(input: Input, table: &str, table_columns: Vec<Column>) -> Result<Rows> {
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::Headers)
            .from_reader(input.reader);
        let header = reader
            .headers()
            .map_err(|e| read_error(e, &input.name, &[]))?;
        let fields: Vec<&str> = header.iter().collect();
        let columns = header_columns(&fields, table, &table_columns).map_err(|why| {
            Error::bad(format!("{} line 1: {why}; nothing was loaded", input.name))
        })?;
        Ok(Rows {
            reader,
            record: csv::StringRecord::new(),
            input: input.name,
            columns,
        })
    }

    /// The next row's values, appended to `values`; its line number (None: no more rows).
    fn next_into(&mut self, values: &mut Vec<Value>) -> Result<Option<u64>> {
        let more = self
            .reader
            .read_record(&mut self.record)
            .map_err(|e| read_error(e, &self.input, &self.columns))?;
        if !more {
            return Ok(None);
        }
        let line = self.record.position().map_or(0, |p| p.line());
        for (field, column) in self.record.iter().zip(&self.columns) {
            let value = field_value(column, field).map_err(|why| {
                Error::bad(format!(
                    "{} line {line}, column {}: {why}; nothing was loaded",
                    self.input, column.name
                ))
            })?;
            values.push(value);
        }
        Ok(Some(line))
    }
}

/// A CSV error, said with its line and the fix.
fn read_error(e: csv::Error, input: &str, columns: &[Column]) -> Error {
    let line = e.position().map_or(0, |p| p.line());
    let why = match e.into_kind() {
        csv::ErrorKind::Io(io) => return Error::bad(format!("cannot read {input}: {io}")),
        csv::ErrorKind::Utf8 { err, .. } => format!(
            "field {} is not UTF-8 text; save the file as UTF-8",
            err.field() + 1
        ),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            format!(
                "{len} fields, but the header names {expected_len} columns ({}); a field that \
                 holds a comma must be in double quotes",
                names.join(", ")
            )
        }
        other => format!("{other:?}"),
    };
    Error::bad(format!("{input} line {line}: {why}; nothing was loaded"))
}

/// A field as the value its column takes; Err: what is wrong and what would be right.
fn field_value(column: &Column, field: &str) -> Result<Value, String> {
    if field.is_empty() {
        if !column.not_null {
            return Ok(Value::Null);
        }
        let or_default = match column.has_default {
            true => ", or leave the column out of the header to take its default",
            false => "",
        };
        return Err(format!(
            "the field is empty (NULL), and {} may not be NULL; give {}{or_default}",
            column.name,
            expected(column.kind)
        ));
    }
    let Some(kind) = column.kind else {
        return Ok(Value::Text(field.to_string()));
    };
    // Around a number, date or time, spaces mean nothing; in text they are kept.
    let trimmed = field.trim();
    let value = match kind {
        Kind::Text => Some(Value::Text(field.to_string())),
        Kind::Integer => trimmed.parse::<i64>().ok().map(Value::Int),
        // Sent as written: the database reads it at its column's precision.
        Kind::Number => trimmed
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(|_| Value::Text(trimmed.to_string())),
        Kind::Boolean => boolean(trimmed).map(Value::Bool),
        Kind::Date => date(trimmed).map(|d| Value::Text(d.to_string())),
        Kind::Timestamp => timestamp(trimmed).map(Value::Text),
    };
    value.ok_or_else(|| format!("`{}` is not {}", shown(field), expected(Some(kind))))
}

/// What a value of a kind looks like, for messages.
fn expected(kind: Option<Kind>) -> &'static str {
    match kind {
        None | Some(Kind::Text) => "a value",
        Some(Kind::Integer) => "a whole number, e.g. 120000",
        Some(Kind::Number) => "a number, e.g. 12.5",
        Some(Kind::Boolean) => "true or false (or t/f, yes/no, on/off, 1/0)",
        Some(Kind::Date) => "a date YYYY-MM-DD, e.g. 2026-02-03",
        Some(Kind::Timestamp) => {
            "a time YYYY-MM-DD HH:MM:SS in UTC, e.g. 2026-02-20 09:00:00 (a T before the \
             time, fractions of a second and an offset such as Z or +09:00 are taken too)"
        }
    }
}

/// A field as a message shows it: escaped, and cut short.
fn shown(field: &str) -> String {
    let escaped: String = field.escape_debug().collect();
    match escaped.char_indices().nth(60) {
        Some((at, _)) => format!("{}...", &escaped[..at]),
        None => escaped,
    }
}

fn boolean(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "on" | "1" => Some(true),
        "false" | "f" | "no" | "n" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// `YYYY-MM-DD`, a real calendar day, and nothing else.
fn date(text: &str) -> Option<&str> {
    crate::dates::interval::parse_date(text, "value")
        .ok()
        .map(|_| text)
}

/// A time in the contract's spelling, UTC `YYYY-MM-DD HH:MM:SS` (fractions kept): from
/// that spelling, with a `T` or an offset (`Z`, `+09:00`), or a date alone (midnight).
fn timestamp(text: &str) -> Option<String> {
    let (day, rest) = (date(text.get(..10)?)?, &text[10..]);
    if rest.is_empty() {
        return Some(format!("{day} 00:00:00"));
    }
    let time = rest.strip_prefix([' ', 'T', 't'])?;
    let spelled = format!("{day} {time}");
    let utc = match spelled.strip_suffix(['Z', 'z']) {
        Some(naive) => naive_time(naive)?,
        None => match zoned_time(&spelled) {
            Some(zoned) => zoned,
            None => naive_time(&spelled)?,
        },
    };
    Some(utc.format("%Y-%m-%d %H:%M:%S%.f").to_string())
}

fn naive_time(text: &str) -> Option<NaiveDateTime> {
    ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
}

fn zoned_time(text: &str) -> Option<NaiveDateTime> {
    ["%Y-%m-%d %H:%M:%S%.f%#z", "%Y-%m-%d %H:%M%#z"]
        .iter()
        .find_map(|f| DateTime::parse_from_str(text, f).ok())
        .map(|t| t.naive_utc())
}

/// The INSERT for the file's columns, rendered once for a full statement (and once more
/// for the last, shorter one).
struct Statements<'a> {
    pipeline: &'a Pipeline,
    table: &'a str,
    columns: Vec<String>,
    /// Rows per full statement.
    rows: usize,
    full: String,
}

impl<'a> Statements<'a> {
    fn new(pipeline: &'a Pipeline, table: &'a str, columns: &[Column]) -> Result<Self> {
        let mut statements = Statements {
            pipeline,
            table,
            columns: columns.iter().map(|c| c.name.clone()).collect(),
            rows: (PARAMETERS_PER_STATEMENT / columns.len().max(1)).clamp(1, ROWS_PER_STATEMENT),
            full: String::new(),
        };
        statements.full = statements.render(statements.rows)?;
        Ok(statements)
    }

    fn render(&self, rows: usize) -> Result<String> {
        let values = vec![vec![PARAMETER; self.columns.len()]; rows];
        let bound = self.pipeline.bind_system(
            "load",
            context! { table => self.table, columns => &self.columns, rows => values },
        )?;
        if bound.params.len() != rows * self.columns.len() {
            return Err(Error::Template {
                file: "system/load.sql".into(),
                message: "must print each value of each row once, in order".into(),
            });
        }
        Ok(bound.sql)
    }

    fn sql(&self, rows: usize) -> Result<Cow<'_, str>> {
        match rows == self.rows {
            true => Ok(Cow::Borrowed(&self.full)),
            false => self.render(rows).map(Cow::Owned),
        }
    }
}

/// Rows read but not inserted yet: their values, row after row, and their lines.
#[derive(Default)]
struct Batch {
    values: Vec<Value>,
    lines: Vec<u64>,
}

/// Every row in one transaction; how many. A statement the database refuses is looked
/// into after the rollback, to name the row.
fn load(db: &mut Db, statements: &Statements, rows: &mut Rows) -> Result<u64> {
    let mut refused = None;
    let loaded = db.transaction(TxKind::Plain, |db| {
        insert_all(db, statements, rows, &mut refused)
    });
    match (loaded, refused) {
        (Err(Error::Database(e)), Some(batch)) => Err(diagnose(db, statements, rows, &batch, e)),
        (loaded, _) => loaded,
    }
}

fn insert_all(
    db: &mut Db,
    statements: &Statements,
    rows: &mut Rows,
    refused: &mut Option<Batch>,
) -> Result<u64> {
    let mut batch = Batch::default();
    let mut loaded = 0;
    while let Some(line) = rows.next_into(&mut batch.values)? {
        batch.lines.push(line);
        if batch.lines.len() == statements.rows {
            loaded += insert(db, statements, &mut batch, refused)?;
        }
    }
    if !batch.lines.is_empty() {
        loaded += insert(db, statements, &mut batch, refused)?;
    }
    Ok(loaded)
}

/// Inserts the batch and empties it; a batch the database refuses is kept in `refused`.
fn insert(
    db: &mut Db,
    statements: &Statements,
    batch: &mut Batch,
    refused: &mut Option<Batch>,
) -> Result<u64> {
    let sql = statements.sql(batch.lines.len())?;
    match db.execute_in_order(&sql, &batch.values) {
        Ok(_) => {
            let n = batch.lines.len() as u64;
            batch.values.clear();
            batch.lines.clear();
            Ok(n)
        }
        Err(e) => {
            *refused = Some(std::mem::take(batch));
            Err(e.into())
        }
    }
}

/// Which row of a refused batch the database refuses: the batch's shortest refused
/// prefix, found by bisection, each try a statement in a transaction that is rolled
/// back (a row at a time would fire a source's statement trigger once per row). A
/// refusal that only the rows before the batch explain names the batch's lines.
fn diagnose(
    db: &mut Db,
    statements: &Statements,
    rows: &Rows,
    batch: &Batch,
    refused: DbError,
) -> Error {
    let (input, table) = (&rows.input, statements.table);
    match shortest_refused_prefix(db, statements, batch) {
        Ok(Some((n, e))) => {
            let width = statements.columns.len();
            let values = &batch.values[(n - 1) * width..n * width];
            Error::bad(format!(
                "{input} line {}: {table} refused the row ({}): {e}; fix it and load the file \
                 again (nothing was loaded)",
                batch.lines[n - 1],
                row_text(&statements.columns, values)
            ))
        }
        Ok(None) => Error::bad(format!(
            "{input} lines {}..{}: {table} refused these rows: {refused}; nothing was loaded",
            batch.lines.first().unwrap_or(&0),
            batch.lines.last().unwrap_or(&0)
        )),
        Err(_) => Error::Database(refused),
    }
}

/// The fewest first rows of the batch that the database refuses, and its words (None:
/// it takes the whole batch on its own).
fn shortest_refused_prefix(
    db: &mut Db,
    statements: &Statements,
    batch: &Batch,
) -> Result<Option<(usize, DbError)>> {
    let width = statements.columns.len();
    let refuses = |db: &mut Db, n: usize| -> Result<Option<DbError>> {
        let sql = statements.sql(n)?;
        db.rolled_back(TxKind::Plain, |db| {
            match db
                .execute_in_order(&sql, &batch.values[..n * width])
                .map_err(Error::from)
            {
                Ok(_) => Ok(None),
                Err(Error::Database(e)) => Ok(Some(e)),
                Err(other) => Err(other),
            }
        })
    };
    // Taken: `good` first rows; refused: `bad` first rows, with `error`.
    let (mut good, mut bad) = (0, batch.lines.len());
    let Some(mut error) = refuses(db, bad)? else {
        return Ok(None);
    };
    while bad - good > 1 {
        let mid = (good + bad) / 2;
        match refuses(db, mid)? {
            Some(e) => (bad, error) = (mid, e),
            None => good = mid,
        }
    }
    Ok(Some((bad, error)))
}

/// `order_id=a1, amount=5`: a row as a message shows it.
fn row_text(columns: &[String], values: &[Value]) -> String {
    let shown = |v: &Value| match v {
        Value::Null => "NULL".to_string(),
        Value::Int(n) => n.to_string(),
        Value::Real(f) => f.to_string(),
        Value::Text(s) => shown(s),
        Value::Bool(b) => b.to_string(),
    };
    columns
        .iter()
        .zip(values)
        .map(|(c, v)| format!("{c}={}", shown(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, kind: Option<Kind>, not_null: bool, has_default: bool) -> Column {
        Column {
            name: name.into(),
            kind,
            not_null,
            has_default,
        }
    }

    /// orders as SQLite declares it, order_date read as the source's date column.
    fn orders() -> Vec<Column> {
        vec![
            column("order_id", Some(Kind::Text), true, false),
            column("order_date", Some(Kind::Date), true, false),
            column("amount", Some(Kind::Integer), true, false),
            column("created_at", Some(Kind::Text), true, true),
        ]
    }

    #[test]
    fn values_are_checked_against_their_kind() {
        let c = |kind| column("c", Some(kind), false, false);
        assert_eq!(field_value(&c(Kind::Integer), " -42 "), Ok(Value::Int(-42)));
        let err = field_value(&c(Kind::Integer), "12.5").unwrap_err();
        assert!(err.contains("`12.5` is not a whole number"), "{err}");
        assert!(field_value(&c(Kind::Integer), "abc").is_err());
        assert_eq!(
            field_value(&c(Kind::Number), "1.50"),
            Ok(Value::Text("1.50".into()))
        );
        assert!(field_value(&c(Kind::Number), "NaN").is_err());
        assert_eq!(field_value(&c(Kind::Boolean), "Yes"), Ok(Value::Bool(true)));
        assert!(field_value(&c(Kind::Boolean), "maybe").is_err());
        assert_eq!(
            field_value(&c(Kind::Date), "2026-02-03"),
            Ok(Value::Text("2026-02-03".into()))
        );
        for bad in ["2026-02-30", "2026-2-3", "03/02/2026", "2026-02-03 10:00"] {
            let err = field_value(&c(Kind::Date), bad).unwrap_err();
            assert!(err.contains("YYYY-MM-DD"), "{bad}: {err}");
        }
        // Text is kept as written, spaces and all.
        assert_eq!(
            field_value(&c(Kind::Text), " a, b "),
            Ok(Value::Text(" a, b ".into()))
        );
        assert_eq!(
            field_value(&column("c", None, false, false), "x"),
            Ok(Value::Text("x".into()))
        );
    }

    #[test]
    fn an_empty_field_is_null() {
        let nullable = column("note", Some(Kind::Text), false, false);
        assert_eq!(field_value(&nullable, ""), Ok(Value::Null));
        let err = field_value(&orders()[3], "").unwrap_err();
        assert!(err.contains("created_at may not be NULL"), "{err}");
        assert!(err.contains("leave the column out"), "{err}");
        let err = field_value(&orders()[2], "").unwrap_err();
        assert!(
            err.contains("a whole number") && !err.contains("leave"),
            "{err}"
        );
    }

    #[test]
    fn times_are_stored_in_utc_as_the_contract_spells_them() {
        let t = |s: &str| timestamp(s);
        assert_eq!(
            t("2026-02-20 09:00:00").as_deref(),
            Some("2026-02-20 09:00:00")
        );
        assert_eq!(
            t("2026-02-20T09:00:00Z").as_deref(),
            Some("2026-02-20 09:00:00")
        );
        assert_eq!(
            t("2026-02-20 09:00:00+09:00").as_deref(),
            Some("2026-02-20 00:00:00")
        );
        assert_eq!(
            t("2026-02-20T01:30+0100").as_deref(),
            Some("2026-02-20 00:30:00")
        );
        assert_eq!(
            t("2026-02-20 09:00:00.25").as_deref(),
            Some("2026-02-20 09:00:00.250")
        );
        assert_eq!(t("2026-02-20").as_deref(), Some("2026-02-20 00:00:00"));
        for bad in [
            "2026-02-20 25:00:00",
            "2026-02-30 09:00:00",
            "yesterday",
            "2026-02-20x",
        ] {
            assert_eq!(t(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_header_names_known_columns_once_and_every_required_one() {
        let named = header_columns(&["amount", "order_id", "order_date"], "orders", &orders());
        let names: Vec<String> = named.unwrap().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["amount", "order_id", "order_date"]);
        let err = header_columns(&["order_id", "amout"], "orders", &orders()).unwrap_err();
        assert!(
            err.contains("no column `amout`") && err.contains("amount, created_at"),
            "{err}"
        );
        let err = header_columns(&["order_id", "order_id"], "orders", &orders()).unwrap_err();
        assert!(err.contains("named twice"), "{err}");
        let err = header_columns(&["order_id", "amount"], "orders", &orders()).unwrap_err();
        assert!(
            err.contains("leaves out order_date") && err.contains("add it"),
            "{err}"
        );
        let err = header_columns(&[""], "orders", &orders()).unwrap_err();
        assert!(err.contains("order_id,order_date,amount"), "{err}");
    }

    #[test]
    fn sqlrun_s_own_tables_are_every_table_of_the_migrations_but_the_pipeline_s() {
        let pipeline = ["orders", "daily_revenue", "daily_revenue_corrections"];
        for backend in ["sqlite", "postgres"] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("sql")
                .join(backend);
            for entry in std::fs::read_dir(dir).unwrap() {
                let sql = std::fs::read_to_string(entry.unwrap().path()).unwrap();
                for rest in sql.split("CREATE TABLE ").skip(1) {
                    let name = rest.split([' ', '(']).next().unwrap();
                    let moved = name.ends_with("_new") && sql.contains("RENAME TO");
                    assert!(
                        STATE_TABLES.contains(&name) || pipeline.contains(&name) || moved,
                        "{backend}: table {name} is neither in STATE_TABLES nor the pipeline's"
                    );
                }
            }
        }
    }

    #[test]
    fn the_insert_binds_every_value() {
        let pipeline = Pipeline::load(None, crate::db::Dialect::Postgres).unwrap();
        let statements = Statements::new(&pipeline, "orders", &orders()[..3]).unwrap();
        let two = statements.sql(2).unwrap();
        assert!(
            two.contains("INSERT INTO \"orders\" (\"order_id\", \"order_date\", \"amount\")"),
            "{two}"
        );
        assert!(
            two.contains("(:p1, :p2, :p3),\n    (:p4, :p5, :p6)\n"),
            "{two}"
        );
        assert!(!two.contains("CAST"), "{two}");
        assert_eq!(statements.rows, ROWS_PER_STATEMENT);
        assert!(statements
            .full
            .contains(&format!(":p{}", 3 * ROWS_PER_STATEMENT)));
    }
}
