//! A result row and its values, as every backend hands them over, and the values bound
//! as parameters.

use std::rc::Rc;

use super::DbError;

/// A column read as the wrong type: an error of the SQL that read it.
type Result<T> = std::result::Result<T, DbError>;

/// One value of a result row, or one bound parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
}

impl Value {
    pub fn opt_text(v: Option<&str>) -> Value {
        v.map_or(Value::Null, |s| Value::Text(s.to_string()))
    }

    pub fn opt_int(v: Option<i64>) -> Value {
        v.map_or(Value::Null, Value::Int)
    }

    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Int(n) => (*n).into(),
            Value::Real(f) => (*f).into(),
            Value::Text(s) => s.clone().into(),
            // Flags read alike on both backends: 1 or 0.
            Value::Bool(b) => i64::from(*b).into(),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Self {
        Value::Text(s.clone())
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

/// Named parameters, as `:name` in the SQL.
pub type Params<'a> = &'a [(&'a str, Value)];

/// One result row. Outside `src/db/` it is read by column name (`read.rs`: `Row::read`
/// into a struct, `Row::get`); by position only here, in the backends' own statements.
#[derive(Debug, Clone)]
pub struct Row {
    names: Rc<Vec<String>>,
    values: Vec<Value>,
}

impl Row {
    pub fn new(names: Rc<Vec<String>>, values: Vec<Value>) -> Row {
        Row { names, values }
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Each column's name and value, in the statement's order.
    pub fn columns(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.values.iter())
    }

    pub(in crate::db) fn value(&self, i: usize) -> &Value {
        self.values.get(i).unwrap_or(&Value::Null)
    }

    fn mismatch(&self, i: usize, want: &str) -> DbError {
        DbError::other(format!(
            "column {} ({}) is {:?}, not {want}",
            i,
            self.names.get(i).map(String::as_str).unwrap_or("?"),
            self.value(i)
        ))
    }

    pub(in crate::db) fn opt_i64(&self, i: usize) -> Result<Option<i64>> {
        match self.value(i) {
            Value::Null => Ok(None),
            Value::Int(n) => Ok(Some(*n)),
            Value::Bool(b) => Ok(Some(i64::from(*b))),
            _ => Err(self.mismatch(i, "an integer")),
        }
    }

    pub(in crate::db) fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match self.value(i) {
            Value::Null => Ok(None),
            Value::Text(s) => Ok(Some(s.clone())),
            Value::Int(n) => Ok(Some(n.to_string())),
            _ => Err(self.mismatch(i, "text")),
        }
    }

    pub(in crate::db) fn text(&self, i: usize) -> Result<String> {
        self.opt_text(i)?.ok_or_else(|| self.mismatch(i, "text"))
    }

    pub(in crate::db) fn bool(&self, i: usize) -> Result<bool> {
        match self.value(i) {
            Value::Bool(b) => Ok(*b),
            Value::Int(n) => Ok(*n != 0),
            Value::Null => Ok(false),
            _ => Err(self.mismatch(i, "a flag")),
        }
    }
}
