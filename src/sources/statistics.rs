//! Planner statistics (PostgreSQL) for what sqlrun loads and what a run reads. Without
//! them the planner guesses: the first backfill after a bulk load of 383k orders took
//! 33 s, the next (after autovacuum had analyzed `orders`) 2.9 s.
//!
//! - `load` and `generate` analyze the table they filled, once they committed;
//! - `apply` analyzes a source whose statistics the server's own counters call stale
//!   (`queries/postgres/stale_statistics.sql`, autovacuum's rule) before its first date:
//!   one lookup for all sources when they are fresh.
//!
//! A role that may not analyze a table gets a one-line note and the command goes on, and
//! so does an ANALYZE that fails. ANALYZE skips a table another ANALYZE or VACUUM holds
//! (SKIP_LOCKED): a run never waits for autovacuum.
//! SQLite is left as it is: its planner picks the date indexes by their shape, and an
//! ANALYZE there changed no plan sqlrun runs (see docs/postgres/loaders.md).

use crate::db::{Db, Dialect, Query, RowShape};
use crate::error::{Error, Result};

/// The sources whose statistics are stale, and how many rows changed since their last
/// ANALYZE. PostgreSQL only, as the next.
const STALE_STATISTICS: Query = Query {
    name: "postgres/stale_statistics.sql",
    postgres_name: "postgres/stale_statistics.sql",
    sqlite: "",
    postgres: include_str!("../../queries/postgres/stale_statistics.sql"),
};

/// The ANALYZE of a table, and whether this role may run it.
const ANALYZE_STATEMENT: Query = Query {
    name: "postgres/analyze_statement.sql",
    postgres_name: "postgres/analyze_statement.sql",
    sqlite: "",
    postgres: include_str!("../../queries/postgres/analyze_statement.sql"),
};

#[derive(serde::Deserialize)]
struct Stale {
    name: String,
    changed: Option<i64>,
}

#[derive(serde::Deserialize)]
struct Analyze {
    statement: String,
    may_analyze: bool,
}

/// The rows this file reads (on PostgreSQL; none on SQLite), for the test that prepares
/// each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    match dialect {
        Dialect::Postgres => vec![
            RowShape::of::<Stale, _>(&STALE_STATISTICS, dialect),
            RowShape::of::<Analyze, _>(&ANALYZE_STATEMENT, dialect),
        ],
        Dialect::Sqlite => Vec::new(),
    }
}

/// Analyzes `table` after a load (PostgreSQL); a note when this role may not.
pub fn analyze_loaded(db: &mut Db, table: &str) -> Result<Option<String>> {
    if db.dialect() != Dialect::Postgres {
        return Ok(None);
    }
    analyze(db, table, "it was just loaded")
}

/// Analyzes the sources among `tables` whose statistics are stale (PostgreSQL): one
/// lookup, and an ANALYZE only of those. A note for each this role may not analyze.
pub fn refresh_stale(db: &mut Db, tables: &[&str]) -> Result<Vec<String>> {
    if db.dialect() != Dialect::Postgres || tables.is_empty() {
        return Ok(Vec::new());
    }
    let names = serde_json::to_string(tables).expect("names serialize");
    let stale: Vec<Stale> = db.rows_as(&STALE_STATISTICS, &[(":tables", names.into())])?;
    let mut notes = Vec::new();
    for Stale { name, changed } in stale {
        let why = format!(
            "{} rows changed since its last ANALYZE",
            changed.unwrap_or(0)
        );
        notes.extend(analyze(db, &name, &why)?);
    }
    Ok(notes)
}

/// ANALYZE of one table, or the note that says why not and who can.
fn analyze(db: &mut Db, table: &str, why: &str) -> Result<Option<String>> {
    let found: Option<Analyze> = db.row_as(&ANALYZE_STATEMENT, &[(":table", table.into())])?;
    let Some(found) = found else {
        return Ok(None);
    };
    if !found.may_analyze {
        return Ok(Some(format!(
            "note: ANALYZE {table} skipped ({why}): this role may not analyze it; its owner \
             may (on PostgreSQL 17 also a role granted MAINTAIN ON {table}), and until then \
             the planner works from older statistics"
        )));
    }
    // Two round trips: the counts are handed over when the session idles in between.
    db.batch(include_str!("../../queries/postgres/flush_statistics.sql"))?;
    // What was loaded is committed by now: a failed ANALYZE is news, not a failure.
    Ok(db.batch(&found.statement).err().map(|e| {
        let e = Error::from(e);
        format!("note: ANALYZE {table} failed ({why}): {e}; the planner works from older statistics until it runs")
    }))
}
