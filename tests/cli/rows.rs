//! Rows by name: each statement whose rows sqlrun reads (queries/, templates/system/) is
//! prepared against this backend's schema, as `sqlrun init` makes it, and must return
//! exactly the columns its struct reads (src/db/read.rs). A column added, dropped or
//! renamed on one side only fails here, on both backends, not in a run.

use serde::Deserialize;
use sqlrun::db::{Db, Dialect, RowShape, Sql, Target};
use sqlrun::pipeline::Pipeline;
use sqlrun::reservations::state::Skip;
use sqlrun::store::queries;

use crate::golden::BANDS;
use crate::support::*;
use crate::templates::copy_templates;

/// The sandbox's database as the library opens it.
fn open(sb: &Sandbox) -> Db {
    let target = match &sb.schema {
        None => Target::Sqlite(sb.db.clone()),
        Some(_) => {
            let (url, schema) = sb.url();
            Target::parse(&url, Some(&schema)).unwrap()
        }
    };
    Db::open(&target).unwrap()
}

/// Every (statement, struct) pair of the library: each module lists its own.
fn registry(pipeline: &Pipeline) -> Vec<RowShape> {
    let d = pipeline.dialect;
    let mut shapes = sqlrun::store::row_shapes(d);
    shapes.extend(sqlrun::pipeline::row_shapes(pipeline).unwrap());
    shapes.extend(sqlrun::reservations::row_shapes(pipeline).unwrap());
    shapes.extend(sqlrun::seals::row_shapes(pipeline).unwrap());
    shapes.extend(sqlrun::sources::row_shapes(d));
    shapes.extend(sqlrun::run::row_shapes(d));
    shapes.extend(sqlrun::run::template_row_shapes(pipeline).unwrap());
    shapes.extend(sqlrun::demo::row_shapes(d));
    shapes
}

/// How each shape differs from what its statement returns here; a statement that does
/// not prepare fails the test on the spot.
fn mismatches(db: &mut Db, shapes: &[RowShape]) -> Vec<String> {
    shapes
        .iter()
        .filter_map(|s| {
            db.shape_mismatch(s)
                .unwrap_or_else(|e| panic!("{} does not prepare on {BACKEND}: {e:?}", s.what))
        })
        .collect()
}

fn assert_match(db: &mut Db, shapes: &[RowShape]) {
    let found = mismatches(db, shapes);
    assert!(
        found.is_empty(),
        "on {BACKEND}, statements whose columns are not their struct's fields:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn every_statement_read_by_name_returns_the_columns_its_struct_reads() {
    let sb = Sandbox::new();
    let mut db = open(&sb);
    let pipeline = Pipeline::load(None, db.dialect()).unwrap();
    let shapes = registry(&pipeline);
    for what in [
        "template date_states",
        "template seal_check",
        "template known_span",
    ] {
        assert!(shapes.iter().any(|s| s.what == what), "{what} is listed");
    }
    assert!(
        shapes.iter().any(|s| s.kept.as_deref() == Some("checks")),
        "the built-in checks' counts are listed"
    );
    assert_match(&mut db, &shapes);
}

/// Every statement of queries/ that returns rows is listed (with its struct, or as read
/// as it comes): a new query cannot be read without a struct the test checks.
#[test]
fn every_query_that_returns_rows_is_listed() {
    let sb = Sandbox::new();
    let mut db = open(&sb);
    let pipeline = Pipeline::load(None, db.dialect()).unwrap();
    let listed: Vec<String> = registry(&pipeline).into_iter().map(|s| s.sql).collect();
    let mut unlisted = Vec::new();
    for query in queries::ALL {
        let sql = query.text(db.dialect());
        // COPY (a bulk load on PostgreSQL) does not prepare, and returns no rows.
        if sql.lines().any(|l| l.starts_with("COPY ")) {
            continue;
        }
        let columns = db.select_columns(sql).unwrap_or_else(|e| {
            panic!(
                "{} does not prepare on {BACKEND}: {e:?}",
                query.what(db.dialect())
            )
        });
        if !columns.is_empty() && !listed.iter().any(|s| s == sql) {
            unlisted.push(format!("{} returns {columns:?}", query.what(db.dialect())));
        }
    }
    assert!(
        unlisted.is_empty(),
        "queries that return rows but no module lists (row_shapes):\n  {}",
        unlisted.join("\n  ")
    );
}

/// A pipeline of two models, one of them with a `-- ready:` condition: the columns per
/// model come twice, and the readiness query is listed too.
#[test]
fn statements_with_a_column_per_model_match_for_two_models() {
    let sb = Sandbox::new();
    let tpl = copy_templates(&sb);
    std::fs::write(tpl.join("models/daily_amount_bands.sql"), BANDS).unwrap();
    let model = tpl.join("models/daily_revenue.sql");
    let text = std::fs::read_to_string(&model).unwrap();
    let version = text.lines().find(|l| l.starts_with("-- version:")).unwrap();
    let ready = text.replacen(version, &format!("{version}\n-- ready: 1 = 1"), 1);
    std::fs::write(&model, ready).unwrap();
    sb.ok(&["--templates", tpl.to_str().unwrap(), "init"]);
    let mut db = open(&sb);
    let pipeline = Pipeline::load(Some(&tpl), db.dialect()).unwrap();
    assert_eq!(pipeline.models.len(), 2);
    let shapes = registry(&pipeline);
    assert!(
        shapes.iter().any(|s| s.kept.as_deref() == Some("ready")),
        "the readiness query is listed"
    );
    let states = shapes.iter().find(|s| s.what == "template date_states");
    let columns = states.and_then(|s| s.columns.as_ref()).unwrap();
    assert!(columns.contains(&"model_2".to_string()), "{columns:?}");
    assert_match(&mut db, &shapes);
}

/// `Skip` as it is, and with one field renamed: the check sees the difference.
#[derive(Deserialize)]
#[allow(dead_code)]
struct RenamedSkip {
    ds: String,
    held_by: Option<i64>,
    holder_kind: Option<String>,
    holder_by: Option<String>,
    holder_status: Option<String>,
    held_from: Option<String>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Table {
    name: String,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct RenamedTable {
    table_name: String,
}

#[test]
fn a_struct_whose_fields_are_not_the_columns_fails_the_check_and_the_read() {
    let sb = Sandbox::new();
    let mut db = open(&sb);
    let d = db.dialect();
    let skipped = &queries::SKIPPED_OF_RUN;
    assert_eq!(
        mismatches(&mut db, &[RowShape::of::<Skip, _>(skipped, d)]),
        Vec::<String>::new()
    );
    let found = mismatches(&mut db, &[RowShape::of::<RenamedSkip, _>(skipped, d)]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains(r#"missing ["held_from"]"#)
            && found[0].contains(r#"not read ["held_since"]"#),
        "{}",
        found[0]
    );
    // Reading real rows the same way: the error names the statement and the column.
    let tables = &queries::TABLES;
    assert!(!db.rows_as::<Table, _>(tables, &[]).unwrap().is_empty());
    let e = match db.rows_as::<RenamedTable, _>(tables, &[]) {
        Ok(_) => panic!("a struct that reads no column `name` read the tables"),
        Err(e) => sqlrun::Error::from(e).to_string(),
    };
    assert!(
        e.contains("queries/") && e.contains("column `name`") && e.contains("RenamedTable"),
        "{e}"
    );
    let dialect_named = match d {
        Dialect::Sqlite => "sqlite/tables.sql",
        Dialect::Postgres => "postgres/tables.sql",
    };
    assert!(e.contains(dialect_named), "{e}");
}
