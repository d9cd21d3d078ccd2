//! Rows read by column name into typed structs, never by position: a `serde::Deserializer`
//! over a `Row` fills each field of a `#[derive(Deserialize)]` struct from the column of
//! its name, with the conversions both backends need (a flag from 0/1 or a boolean, text
//! from an integer, NULL as `None`). The columns and the fields must match both ways: a
//! column the struct does not read, or a field the statement does not return, is an
//! error naming the column, so a column added to a query cannot shift the meaning of the
//! others. `RowShape` states what a read expects, for the test that prepares every such
//! statement against a real schema (tests/cli/rows.rs).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::forward_to_deserialize_any;

use super::row::{Row, Value};
use super::{DbError, Dialect, Sql};

/// What is wrong with a read: of a column (`column` names it), or of the row.
#[derive(Debug)]
pub(super) struct ReadError(String);

impl de::Error for ReadError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ReadError(msg.to_string())
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

impl From<ReadError> for DbError {
    fn from(e: ReadError) -> Self {
        DbError::other(e.0)
    }
}

/// One column as a struct reads it: the field it fills (`key`; a numbered column
/// `model_2` fills `model`) and its name in the statement, for messages.
struct Column<'a> {
    key: &'a str,
    name: Cow<'a, str>,
    value: &'a Value,
}

/// The fields of struct `T` (none for `()`), as serde hands them to a deserializer.
pub fn fields<T: DeserializeOwned>() -> Result<&'static [&'static str], DbError> {
    let mut found = None;
    // The recorder stops at the struct's fields: the error it returns is expected.
    let _ = T::deserialize(Fields(&mut found));
    found.ok_or_else(|| {
        DbError::other(format!(
            "{} is not a struct of named fields: a row is read by column name",
            std::any::type_name::<T>()
        ))
    })
}

/// A deserializer that records the fields a struct asks for, and reads nothing.
struct Fields<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for Fields<'_> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ReadError> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, ReadError> {
        *self.0 = Some(fields);
        Err(de::Error::custom("fields recorded"))
    }

    fn deserialize_unit<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ReadError> {
        *self.0 = Some(&[]);
        Err(de::Error::custom("fields recorded"))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// A row's columns as one struct reads them.
struct RowDeserializer<'a> {
    columns: Vec<Column<'a>>,
}

impl RowDeserializer<'_> {
    /// The columns are the struct's fields, each once, and nothing else.
    fn expect(&self, name: &str, fields: &[&str]) -> Result<(), ReadError> {
        for (i, c) in self.columns.iter().enumerate() {
            if self.columns[..i].iter().any(|o| o.key == c.key) {
                return Err(ReadError(format!(
                    "returns column `{}` twice (columns are read by name: give each its own)",
                    c.name
                )));
            }
            if !fields.contains(&c.key) {
                return Err(ReadError(format!(
                    "returns column `{}`, which {name} does not read (a column added to the \
                     query needs its field)",
                    c.name
                )));
            }
        }
        match fields
            .iter()
            .find(|f| !self.columns.iter().any(|c| c.key == **f))
        {
            Some(missing) => Err(ReadError(format!(
                "returns no column `{missing}`, which {name} reads"
            ))),
            None => Ok(()),
        }
    }
}

impl<'de> Deserializer<'de> for RowDeserializer<'_> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ReadError> {
        Err(ReadError(
            "a row is read into a struct whose fields are its columns' names".into(),
        ))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.expect(name, fields)?;
        visitor.visit_map(Columns {
            columns: self.columns.into_iter(),
            next: None,
        })
    }

    /// `()`: a read of no columns (the fixed part of a row that is all numbered columns).
    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.expect("()", &[])?;
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The columns of a row, one field after the other.
struct Columns<'a, I> {
    columns: I,
    next: Option<Column<'a>>,
}

impl<'de, 'a, I: Iterator<Item = Column<'a>>> MapAccess<'de> for Columns<'a, I> {
    type Error = ReadError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        let Some(column) = self.columns.next() else {
            return Ok(None);
        };
        let key = seed.deserialize(de::value::StrDeserializer::<ReadError>::new(column.key))?;
        self.next = Some(column);
        Ok(Some(key))
    }

    fn next_value_seed<S: de::DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, ReadError> {
        let column = self.next.take().expect("a value follows its key");
        seed.deserialize(ValueDeserializer(column.value))
            .map_err(|e| ReadError(format!("column `{}` {e}", column.name)))
    }
}

/// One value, as the field that reads it wants it.
struct ValueDeserializer<'a>(&'a Value);

impl ValueDeserializer<'_> {
    fn mismatch(&self, want: &str) -> ReadError {
        ReadError(format!("is {:?}, not {want}", self.0))
    }

    fn integer(&self) -> Result<i64, ReadError> {
        match self.0 {
            Value::Int(n) => Ok(*n),
            Value::Bool(b) => Ok(i64::from(*b)),
            _ => Err(self.mismatch("an integer")),
        }
    }
}

macro_rules! integers {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            visitor.visit_i64(self.integer()?)
        }
    )*};
}

impl<'de> Deserializer<'de> for ValueDeserializer<'_> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            Value::Int(n) => visitor.visit_i64(*n),
            Value::Real(f) => visitor.visit_f64(*f),
            Value::Text(s) => visitor.visit_str(s),
            Value::Bool(b) => visitor.visit_bool(*b),
        }
    }

    /// A flag: a boolean, or 0/1 (SQLite); NULL is false, as a missing flag.
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(n) => visitor.visit_bool(*n != 0),
            Value::Null => visitor.visit_bool(false),
            _ => Err(self.mismatch("a flag")),
        }
    }

    integers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Real(f) => visitor.visit_f64(*f),
            Value::Int(n) => visitor.visit_f64(*n as f64),
            _ => Err(self.mismatch("a number")),
        }
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_f64(visitor)
    }

    /// Text; an integer reads as its digits (a key column that is a number).
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Text(s) => visitor.visit_str(s),
            Value::Int(n) => visitor.visit_string(n.to_string()),
            _ => Err(self.mismatch("text")),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        visitor.visit_newtype_struct(self)
    }

    forward_to_deserialize_any! {
        i128 u128 char bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        enum identifier ignored_any
    }
}

/// A value as it came: a field of type `Value` takes any column as it is.
impl<'de> de::Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        struct Any;
        impl Visitor<'_> for Any {
            type Value = Value;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a column's value")
            }

            fn visit_none<E>(self) -> Result<Value, E> {
                Ok(Value::Null)
            }

            fn visit_unit<E>(self) -> Result<Value, E> {
                Ok(Value::Null)
            }

            fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
                Ok(Value::Int(n))
            }

            fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
                Ok(Value::Real(f))
            }

            fn visit_str<E>(self, s: &str) -> Result<Value, E> {
                Ok(Value::Text(s.to_string()))
            }

            fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
                Ok(Value::Bool(b))
            }
        }
        d.deserialize_any(Any)
    }
}

/// The names of numbered columns: each field of `each` with `_1`, `_2`, ... `_n`
/// (`model_1`, `model_2`: one per model of a pipeline), in that order.
fn numbered(each: &[&str], n: usize) -> Vec<String> {
    (1..=n)
        .flat_map(|i| each.iter().map(move |f| format!("{f}_{i}")))
        .collect()
}

impl Row {
    fn all_columns(&self) -> Vec<Column<'_>> {
        self.columns()
            .map(|(name, value)| Column {
                key: name,
                name: Cow::Borrowed(name),
                value,
            })
            .collect()
    }

    /// The row as `T`: each field from the column of its name. Every column must be a
    /// field of `T`, and every field a column.
    pub fn read<T: DeserializeOwned>(&self) -> Result<T, DbError> {
        let columns = self.all_columns();
        Ok(T::deserialize(RowDeserializer { columns })?)
    }

    /// The row as `T` and `n` times `U`, for a statement with a column per model (or
    /// source, or check) of the pipeline: `U`'s fields numbered from 1 (`covered_1`,
    /// `covered_2`, ...) make the `U`s, in order; the other columns make `T` (`()`: there
    /// are none). Every column must be read, as by `read`.
    pub fn read_numbered<T: DeserializeOwned, U: DeserializeOwned>(
        &self,
        n: usize,
    ) -> Result<(T, Vec<U>), DbError> {
        let each = fields::<U>()?;
        let mut rest = self.all_columns();
        let mut items = Vec::with_capacity(n);
        for i in 1..=n {
            let mut columns = Vec::with_capacity(each.len());
            for field in each {
                let name = format!("{field}_{i}");
                let Some(at) = rest.iter().position(|c| c.key == name) else {
                    return Err(DbError::other(format!("returns no column `{name}`")));
                };
                let value = rest.remove(at).value;
                columns.push(Column {
                    key: field,
                    name: Cow::Owned(name),
                    value,
                });
            }
            items.push(U::deserialize(RowDeserializer { columns })?);
        }
        let fixed = T::deserialize(RowDeserializer { columns: rest })?;
        Ok((fixed, items))
    }

    /// One column by its name.
    pub fn get<T: DeserializeOwned>(&self, column: &str) -> Result<T, DbError> {
        let (name, value) = self
            .columns()
            .find(|(name, _)| *name == column)
            .ok_or_else(|| DbError::other(format!("returns no column `{column}`")))?;
        T::deserialize(ValueDeserializer(value))
            .map_err(|e| DbError::other(format!("column `{name}` {e}")))
    }

    /// The row as a JSON object keyed by column: what `--json` prints of it.
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        self.columns()
            .map(|(name, value)| (name.to_string(), value.to_json()))
            .collect()
    }
}

/// A read's error, said of the statement that returned the row.
pub(super) fn of_statement(what: &str, e: DbError) -> DbError {
    DbError {
        message: format!("{what}: {}", e.message),
        ..e
    }
}

/// What a typed read of a statement expects of its columns: the entries of the registry
/// (each module's `row_shapes`) that tests/cli/rows.rs prepares on both backends, so
/// that a query whose columns do not match its struct fails a test, not a run.
#[derive(Debug, Clone)]
pub struct RowShape {
    /// The statement, for messages (`queries/run_by_id.sql`, `template date_states`).
    pub what: String,
    pub sql: String,
    /// The column names it must return, in any order. None: any columns (a read that
    /// prints them as they are, or asks only whether there is a row).
    pub columns: Option<Vec<String>>,
    /// In a script, the statement whose rows are kept under this name (`-- sqlrun rows:`).
    pub kept: Option<String>,
}

impl RowShape {
    fn new<S: Sql + ?Sized>(sql: &S, dialect: Dialect, columns: Option<Vec<String>>) -> Self {
        RowShape {
            what: sql.what(dialect),
            sql: sql.text(dialect).to_string(),
            columns,
            kept: None,
        }
    }

    /// A statement read as `T` (`Row::read`).
    pub fn of<T: DeserializeOwned, S: Sql + ?Sized>(sql: &S, dialect: Dialect) -> Self {
        let columns = fields::<T>()
            .expect("a row struct")
            .iter()
            .map(|f| f.to_string())
            .collect();
        RowShape::new(sql, dialect, Some(columns))
    }

    /// A statement read as `T` and `n` numbered `U`s (`Row::read_numbered`).
    pub fn numbered<T: DeserializeOwned, U: DeserializeOwned, S: Sql + ?Sized>(
        sql: &S,
        dialect: Dialect,
        n: usize,
    ) -> Self {
        let mut shape = RowShape::of::<T, S>(sql, dialect);
        let each = fields::<U>().expect("a row struct");
        if let Some(columns) = shape.columns.as_mut() {
            columns.extend(numbered(each, n));
        }
        shape
    }

    /// A statement whose columns are read as they come (JSON output), or not at all.
    pub fn any<S: Sql + ?Sized>(sql: &S, dialect: Dialect) -> Self {
        RowShape::new(sql, dialect, None)
    }

    /// The same, of the statement of a script kept under `name`.
    pub fn kept(self, name: &str) -> Self {
        RowShape {
            kept: Some(name.to_string()),
            ..self
        }
    }

    /// How the columns `found` differ from the expected ones (None: they do not).
    pub fn mismatch(&self, found: &[String]) -> Option<String> {
        let expected = self.columns.as_ref()?;
        let missing: Vec<&String> = expected.iter().filter(|c| !found.contains(c)).collect();
        let extra: Vec<&String> = found.iter().filter(|c| !expected.contains(c)).collect();
        let twice: Vec<&String> = found
            .iter()
            .enumerate()
            .filter(|(i, c)| found[..*i].contains(c))
            .map(|(_, c)| c)
            .collect();
        if missing.is_empty() && extra.is_empty() && twice.is_empty() {
            return None;
        }
        Some(format!(
            "{}: returns {found:?}; its struct reads {expected:?} (missing {missing:?}, \
             not read {extra:?}, twice {twice:?})",
            self.what
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use serde::Deserialize;

    use super::*;

    fn row(columns: &[(&str, Value)]) -> Row {
        let names = columns.iter().map(|(n, _)| n.to_string()).collect();
        Row::new(
            Rc::new(names),
            columns.iter().map(|(_, v)| v.clone()).collect(),
        )
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Run {
        run_id: i64,
        status: String,
        reason: Option<String>,
        keep_going: bool,
    }

    fn run_row() -> Row {
        row(&[
            ("status", "running".into()),
            ("keep_going", Value::Int(1)),
            ("run_id", Value::Int(7)),
            ("reason", Value::Null),
        ])
    }

    #[test]
    fn fields_come_from_columns_of_their_name_in_any_order() {
        let run: Run = run_row().read().unwrap();
        let want = Run {
            run_id: 7,
            status: "running".into(),
            reason: None,
            keep_going: true,
        };
        assert_eq!(run, want);
        let pg = row(&[
            ("run_id", Value::Int(7)),
            ("status", "running".into()),
            ("reason", Value::Null),
            ("keep_going", Value::Bool(true)),
        ]);
        assert_eq!(
            pg.read::<Run>().unwrap(),
            want,
            "a boolean flag reads as 0/1 does"
        );
    }

    #[test]
    fn a_column_the_struct_lacks_is_an_error_naming_it() {
        let mut columns: Vec<(&str, Value)> = vec![
            ("run_id", Value::Int(7)),
            ("status", "running".into()),
            ("reason", Value::Null),
            ("keep_going", Value::Int(0)),
        ];
        columns.insert(1, ("kind", "backfill".into()));
        let e = row(&columns).read::<Run>().unwrap_err().to_string();
        assert!(e.contains("column `kind`") && e.contains("Run"), "{e}");
    }

    #[test]
    fn a_field_the_statement_does_not_return_is_an_error_even_if_optional() {
        let e = row(&[
            ("run_id", Value::Int(7)),
            ("status", "running".into()),
            ("keep_going", Value::Int(0)),
        ])
        .read::<Run>()
        .unwrap_err()
        .to_string();
        assert!(e.contains("no column `reason`"), "{e}");
    }

    #[test]
    fn a_column_named_twice_is_refused() {
        let e = row(&[
            ("run_id", Value::Int(7)),
            ("status", "running".into()),
            ("status", "failed".into()),
            ("reason", Value::Null),
            ("keep_going", Value::Int(0)),
        ])
        .read::<Run>()
        .unwrap_err()
        .to_string();
        assert!(e.contains("`status` twice"), "{e}");
    }

    #[test]
    fn a_value_of_the_wrong_kind_names_its_column() {
        let e = row(&[
            ("run_id", "seven".into()),
            ("status", "running".into()),
            ("reason", Value::Null),
            ("keep_going", Value::Int(0)),
        ])
        .read::<Run>()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("column `run_id` is Text(\"seven\"), not an integer"),
            "{e}"
        );
        let e = row(&[
            ("run_id", Value::Int(1)),
            ("status", Value::Null),
            ("reason", Value::Null),
            ("keep_going", Value::Int(0)),
        ])
        .read::<Run>()
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `status` is Null, not text"), "{e}");
    }

    #[test]
    fn conversions_match_what_rows_held_before() {
        #[derive(Deserialize)]
        struct Mixed {
            key: String,
            flag: bool,
            count: i64,
            ratio: f64,
            any: Value,
        }
        let m: Mixed = row(&[
            ("key", Value::Int(42)),
            ("flag", Value::Null),
            ("count", Value::Bool(true)),
            ("ratio", Value::Int(2)),
            ("any", Value::Real(0.5)),
        ])
        .read()
        .unwrap();
        assert_eq!(
            (m.key.as_str(), m.flag, m.count, m.ratio, m.any),
            ("42", false, 1, 2.0, Value::Real(0.5))
        );
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Day {
        ds: String,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct PerModel {
        computed: bool,
        covered: bool,
    }

    #[test]
    fn numbered_columns_make_one_value_each() {
        let r = row(&[
            ("ds", "2026-02-01".into()),
            ("computed_1", Value::Int(1)),
            ("covered_1", Value::Int(0)),
            ("computed_2", Value::Int(0)),
            ("covered_2", Value::Int(1)),
        ]);
        let (day, models) = r.read_numbered::<Day, PerModel>(2).unwrap();
        assert_eq!(day.ds, "2026-02-01");
        assert_eq!(
            models,
            [
                PerModel {
                    computed: true,
                    covered: false
                },
                PerModel {
                    computed: false,
                    covered: true
                }
            ]
        );
        let e = r.read_numbered::<Day, PerModel>(1).unwrap_err().to_string();
        assert!(e.contains("column `computed_2`"), "one model fewer: {e}");
        let e = r.read_numbered::<Day, PerModel>(3).unwrap_err().to_string();
        assert!(e.contains("no column `computed_3`"), "one model more: {e}");
        let counts = row(&[("check_1", Value::Int(0)), ("check_2", Value::Int(3))]);
        #[derive(Deserialize)]
        struct Count {
            check: i64,
        }
        let ((), found) = counts.read_numbered::<(), Count>(2).unwrap();
        assert_eq!(found.iter().map(|c| c.check).collect::<Vec<_>>(), [0, 3]);
    }

    #[test]
    fn one_column_reads_by_name() {
        let r = run_row();
        assert_eq!(r.get::<i64>("run_id").unwrap(), 7);
        assert_eq!(r.get::<Option<String>>("reason").unwrap(), None);
        let e = r.get::<i64>("nope").unwrap_err().to_string();
        assert!(e.contains("no column `nope`"), "{e}");
    }

    #[test]
    fn fields_are_read_from_the_struct() {
        assert_eq!(
            fields::<Run>().unwrap(),
            ["run_id", "status", "reason", "keep_going"]
        );
        assert!(fields::<()>().unwrap().is_empty());
        assert!(fields::<i64>().is_err(), "a row is not a number");
        let shape = RowShape::numbered::<Day, PerModel, str>("SELECT 1", Dialect::Sqlite, 2);
        assert_eq!(
            shape.columns.as_deref().unwrap(),
            ["ds", "computed_1", "covered_1", "computed_2", "covered_2"]
        );
    }

    #[test]
    fn a_shape_says_how_columns_differ() {
        let shape = RowShape::of::<Run, str>("SELECT 1", Dialect::Sqlite);
        let found = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            shape.mismatch(&found(&["keep_going", "run_id", "reason", "status"])),
            None
        );
        let renamed = shape
            .mismatch(&found(&["run_id", "status", "why", "keep_going"]))
            .unwrap();
        assert!(
            renamed.contains(r#"missing ["reason"]"#) && renamed.contains(r#"not read ["why"]"#),
            "{renamed}"
        );
        assert!(RowShape::any("SELECT 1", Dialect::Sqlite)
            .mismatch(&found(&["x"]))
            .is_none());
    }
}
