//! Where the database is (`--db`, `--schema`) and which SQL it speaks.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use super::{postgres, Error, Result};

/// Which SQL the database speaks. Templates and queries are chosen by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
        }
    }

    /// How a date's transaction begins, as `render` and `--dry-run` show it (on
    /// PostgreSQL own_date.sql runs first inside it and locks the date's
    /// reservation row).
    pub fn begin(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ",
        }
    }
}

/// A PostgreSQL URL without its password (anything else as it is): for messages and the
/// audit trail.
pub fn redact_url(text: &str) -> String {
    // Also `--db=postgresql://...`: the URL may follow a flag.
    match text
        .find("postgres://")
        .or_else(|| text.find("postgresql://"))
    {
        Some(at) => format!("{}{}", &text[..at], postgres::redact(&text[at..])),
        None => text.to_string(),
    }
}

/// Where the data and the state store live: `--db` and `--schema`.
#[derive(Debug, Clone)]
pub enum Target {
    Sqlite(PathBuf),
    Postgres { url: String, schema: String },
}

/// Whether `--db` names PostgreSQL (a `postgres://` or `postgresql://` URL) rather than a
/// SQLite file.
pub fn is_postgres_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// A schema name sqlrun takes: lowercase letters, digits and `_`, not starting with a
/// digit or `pg_`, at most 63 bytes (so it never needs quoting or truncating).
pub fn plain_schema(schema: &str) -> bool {
    !schema.is_empty()
        && schema.len() <= 63
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !schema.as_bytes()[0].is_ascii_digit()
        && !schema.starts_with("pg_")
}

impl Target {
    /// A `postgres://` or `postgresql://` URL is PostgreSQL; anything else a SQLite file.
    pub fn parse(db: &str, schema: Option<&str>) -> Result<Target> {
        if !is_postgres_url(db) {
            if schema.is_some_and(|s| s != "main") {
                return Err(Error::BadInput(format!(
                    "--schema is for PostgreSQL; --db {db} is a SQLite file, which holds one pipeline (use another file for another pipeline)"
                )));
            }
            return Ok(Target::Sqlite(PathBuf::from(db)));
        }
        let schema = schema.unwrap_or("public");
        if !plain_schema(schema) {
            return Err(Error::BadInput(format!(
                "--schema `{schema}` is not a plain schema name; use lowercase letters, digits and _ (not starting with a digit or pg_), e.g. --schema sales_pipeline"
            )));
        }
        Ok(Target::Postgres {
            url: db.to_string(),
            schema: schema.to_string(),
        })
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Target::Sqlite(_) => Dialect::Sqlite,
            Target::Postgres { .. } => Dialect::Postgres,
        }
    }
}

impl fmt::Display for Target {
    /// The database as messages name it: a file path, or the URL without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Sqlite(path) => write!(f, "{}", path.display()),
            Target::Postgres { url, schema } => {
                write!(f, "{} (schema {schema})", postgres::redact(url))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_stay_out_of_the_audit_trail() {
        assert_eq!(
            redact_url("--db=postgresql://etl:s3cret@db/w"),
            "--db=postgresql://etl:***@db/w"
        );
        assert_eq!(redact_url("postgres://etl@db/w"), "postgres://etl@db/w");
        assert_eq!(redact_url("--reason"), "--reason");
    }

    #[test]
    fn targets_by_their_spelling() {
        assert!(matches!(
            Target::parse("x.db", None).unwrap(),
            Target::Sqlite(_)
        ));
        let pg = Target::parse("postgresql://u:secret@h/db", Some("sales")).unwrap();
        assert_eq!(pg.dialect(), Dialect::Postgres);
        assert!(!pg.to_string().contains("secret"), "{pg}");
        assert!(Target::parse("postgres:///db", Some("Bad-Name")).is_err());
        assert!(Target::parse("x.db", Some("sales")).is_err());
    }
}
