//! Declared sources in a database: each `sources/NAME.sql` brings its table to the
//! declaration's version, in the sync's transaction, and says how in
//! `source_declarations`:
//!
//! - no table: created from the declaration's DDL (`created`);
//! - a table with the declared columns (and maybe more), never declared here: taken as it
//!   is (`adopted`: every sqlrun database has `orders`, made by its schema);
//! - a table that lacks declared columns, empty: made again from the DDL (`remade`), so a
//!   project that adds a column to `orders` before loading anything just works;
//! - with rows: refused, naming the columns, with the SQL that would fix it;
//! - a newer version: its `-- migrate:` SQL runs first (`migrated`), from the version
//!   before it only; the same version with another text is refused, as an edited
//!   migration is.
//!
//! On PostgreSQL a source with `-- latest_by:` also gets the arrival order its `_latest`
//! view breaks ties with (system/source_arrival.sql).

use minijinja::context;

use crate::db::{Db, Dialect};
use crate::error::{Error, Result};
use crate::pipeline::declared::{created_columns, Declared};
use crate::pipeline::{to_value, Pipeline};
use crate::store::{self, queries};

/// How a declaration's table got to its version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    Created,
    Adopted,
    Remade,
    Migrated,
}

impl How {
    pub fn as_str(self) -> &'static str {
        match self {
            How::Created => "created",
            How::Adopted => "adopted",
            How::Remade => "remade",
            How::Migrated => "migrated",
        }
    }
}

/// One declaration to bring about: the SQL to run (none to adopt), then the record.
#[derive(Debug, Clone)]
pub struct Step {
    pub source: String,
    pub file: String,
    pub version: i64,
    pub checksum: String,
    pub body: String,
    pub how: How,
    /// What runs, in order: a drop (remade), the DDL or the migration, the arrival column.
    pub sql: Vec<String>,
    /// The columns the declaration names, which the table must have after.
    pub columns: Vec<String>,
    /// The table was declared here before and is gone (dropped): made again, empty, and
    /// every date built from it is marked changed, as for triggers gone missing.
    pub again: bool,
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<crate::db::RowShape> {
    vec![crate::db::RowShape::of::<Recorded, _>(
        &queries::SOURCE_DECLARED,
        dialect,
    )]
}

/// A row of `queries/source_declared.sql`.
#[derive(serde::Deserialize)]
struct Recorded {
    version: i64,
    checksum: String,
}

/// A row of `system/source_has_rows.sql`.
#[derive(serde::Deserialize)]
struct HasRows {
    has_rows: bool,
}

impl Pipeline {
    /// The declaration's DDL: `-- create:`, else the file rendered (it may ask `dialect`).
    pub fn source_ddl(&self, declared: &Declared) -> Result<String> {
        match &declared.create {
            Some(ddl) => Ok(ddl.clone()),
            None => self.templates.render(&declared.template, context! {}),
        }
    }

    /// The columns a declaration's DDL gives its table, or why they cannot be read.
    pub fn declared_columns(&self, declared: &Declared) -> Result<Vec<String>> {
        let ddl = self.source_ddl(declared)?;
        created_columns(&ddl, &declared.name).ok_or_else(|| Error::Template {
            file: declared.file.clone(),
            message: format!(
                "its DDL has no `CREATE TABLE {} (...)`; declare the table, e.g. `-- create: CREATE TABLE {} (...)` or the statement as the file's body",
                declared.name, declared.name
            ),
        })
    }

    /// What each declared source needs done (reads only); refusals name the file.
    pub(super) fn declaration_steps(&self, db: &mut Db) -> Result<Vec<Step>> {
        let mut steps = Vec::new();
        for declared in &self.declared {
            if let Some(step) = self.declaration_step(db, declared)? {
                steps.push(step);
            }
        }
        Ok(steps)
    }

    fn declaration_step(&self, db: &mut Db, declared: &Declared) -> Result<Option<Step>> {
        let recorded: Option<Recorded> = db.row_as(
            &queries::SOURCE_DECLARED,
            &[(":source", declared.name.as_str().into())],
        )?;
        let columns = self.declared_columns(declared)?;
        named_columns_declared(declared, &columns)?;
        let existing = table_columns(db, &declared.name)?;
        let ddl = self.source_ddl(declared)?;
        let bad = |message: String| Error::Template {
            file: declared.file.clone(),
            message,
        };
        let step = |how: How, sql: Vec<String>| Step {
            source: declared.name.clone(),
            file: declared.file.clone(),
            version: declared.version,
            checksum: declared.checksum.clone(),
            body: self
                .source_of(&declared.template)
                .unwrap_or_default()
                .into(),
            how,
            sql,
            columns: columns.clone(),
            again: false,
        };
        let how = match recorded {
            Some(r) => return self.recorded_step(declared, r, existing.is_empty(), ddl, &step),
            None if existing.is_empty() => How::Created,
            None if has_declared_columns(&columns, &existing) => How::Adopted,
            None => {
                if self.has_rows(db, &declared.name)? {
                    return Err(bad(differs_with_rows(declared, &columns, &existing)));
                }
                How::Remade
            }
        };
        let mut sql = Vec::new();
        if how == How::Remade {
            sql.push(self.render_system("remake_source", context! { table => &declared.name })?);
        }
        if how != How::Adopted {
            sql.push(ddl);
        }
        Ok(Some(step(how, sql)))
    }

    /// A declaration of a source this database has a version of: nothing to do, the
    /// table made again (it was dropped), a migration, or a refusal.
    fn recorded_step(
        &self,
        declared: &Declared,
        r: Recorded,
        gone: bool,
        ddl: String,
        step: &dyn Fn(How, Vec<String>) -> Step,
    ) -> Result<Option<Step>> {
        let bad = |message: String| Error::Template {
            file: declared.file.clone(),
            message,
        };
        let name = &declared.name;
        let version = declared.version;
        if r.version == version && r.checksum != declared.checksum {
            return Err(bad(format!(
                "its text changed, but its version did not: this database's {name} was declared as version {} with other text. A change of a source is a new version (`-- version: {}`) with the SQL that brings the table there in `-- migrate:` (e.g. `-- migrate: ALTER TABLE {name} ADD COLUMN ...`); or put the text back",
                r.version,
                r.version + 1
            )));
        }
        if r.version == version {
            return Ok(gone.then(|| Step {
                again: true,
                ..step(How::Created, vec![ddl])
            }));
        }
        if r.version > version {
            return Err(bad(format!(
                "it is version {version}, but this database's {name} is at version {} already: these are older templates than the ones it was built with; use the templates of version {}",
                r.version, r.version
            )));
        }
        match &declared.migrate {
            Some(migrate) if r.version + 1 == version => {
                Ok(Some(step(How::Migrated, vec![migrate.clone()])))
            }
            Some(_) => Err(bad(format!(
                "its `-- migrate:` brings {name} from version {} to {version}, but this database's {name} is at version {}: bring it to version {} first (with that version's declaration), then this one",
                version - 1,
                r.version,
                version - 1
            ))),
            None => Err(bad(format!(
                "it is version {version}, but this database's {name} is at version {}, and it has no `-- migrate:` saying how the table gets from one to the other; add the SQL, e.g. `-- migrate: ALTER TABLE {name} ADD COLUMN ...`",
                r.version
            ))),
        }
    }

    fn has_rows(&self, db: &mut Db, table: &str) -> Result<bool> {
        let sql = self.render_system("source_has_rows", context! { table => table })?;
        Ok(db.one_as::<HasRows, _>(sql.as_str(), &[])?.has_rows)
    }

    /// Runs a step in the sync's transaction: its SQL, the arrival column a `_latest` view
    /// needs on PostgreSQL, a check of the columns, the record.
    pub(super) fn run_declaration(&self, db: &mut Db, step: &Step) -> Result<()> {
        let failed = |e: Error| Error::PipelineSql {
            file: step.file.clone(),
            message: format!(
                "{} table {} failed: {e}; fix the declaration (nothing was changed)",
                match step.how {
                    How::Migrated => "migrating",
                    How::Remade => "making again",
                    _ => "creating",
                },
                step.source
            ),
        };
        for sql in &step.sql {
            db.batch(sql).map_err(|e| failed(e.into()))?;
        }
        let declared = self
            .declared
            .iter()
            .find(|d| d.name == step.source)
            .expect("a step comes from a declaration");
        let columns = table_columns(db, &step.source)?;
        if db.dialect() == Dialect::Postgres
            && declared.latest_by.is_some()
            && !columns.iter().any(|c| c == "rowid")
        {
            let sql = self.render_system("source_arrival", context! { table => &step.source })?;
            db.batch(&sql).map_err(|e| failed(e.into()))?;
        }
        let missing: Vec<&String> = step
            .columns
            .iter()
            .filter(|c| !columns.iter().any(|t| t.eq_ignore_ascii_case(c)))
            .collect();
        if !missing.is_empty() || columns.is_empty() {
            return Err(Error::Template {
                file: step.file.clone(),
                message: format!(
                    "after its SQL ran, table {} has the columns ({}), not the declared ones ({}); make the DDL{} create what the declaration names",
                    step.source,
                    columns.join(", "),
                    step.columns.join(", "),
                    if step.how == How::Migrated { " and `-- migrate:`" } else { "" }
                ),
            });
        }
        db.execute(
            &queries::RECORD_SOURCE_DECLARATION,
            &[
                (":source", step.source.as_str().into()),
                (":version", step.version.into()),
                (":checksum", step.checksum.as_str().into()),
                (":body", step.body.as_str().into()),
                (":how", step.how.as_str().into()),
            ],
        )?;
        Ok(())
    }

    /// Each declared source's `<name>_latest` view: (name, CREATE VIEW).
    pub(super) fn latest_views(&self) -> Result<Vec<(String, String)>> {
        let mut views = Vec::new();
        for declared in &self.declared {
            let Some(view) = &declared.latest_view else {
                continue;
            };
            let mut columns = self.declared_columns(declared)?;
            columns.retain(|c| c != "rowid");
            let sql = self.render_system(
                "source_latest",
                context! { source => to_value(declared), columns => columns },
            )?;
            views.push((view.clone(), sql));
        }
        Ok(views)
    }
}

/// One source as system/source_freshness.sql lists it.
#[derive(serde::Serialize)]
struct Freshness<'a> {
    name: &'a str,
    loaded_at: Option<&'a str>,
    fresh_within_seconds: Option<u64>,
}

impl Pipeline {
    /// The view `source_freshness` (name, CREATE VIEW) over every declared source and
    /// every tracked one; None when there is none.
    pub(super) fn freshness_view(&self) -> Result<Option<(String, String)>> {
        let mut entries: Vec<Freshness> = self
            .declared
            .iter()
            .map(|d| Freshness {
                name: &d.name,
                loaded_at: d.loaded_at.as_deref(),
                fresh_within_seconds: d.fresh_within_seconds,
            })
            .collect();
        let tracked =
            (self.sources.iter().map(|s| &s.table)).chain(self.lookups.iter().map(|l| &l.table));
        for table in tracked {
            if !entries.iter().any(|e| e.name == table) {
                entries.push(Freshness {
                    name: table,
                    loaded_at: None,
                    fresh_within_seconds: None,
                });
            }
        }
        if entries.is_empty() {
            return Ok(None);
        }
        let sql = self.render_system(
            "source_freshness",
            context! { entries => to_value(&entries) },
        )?;
        Ok(Some(("source_freshness".to_string(), sql)))
    }
}

/// The header's columns (key, latest_by, date_column, loaded_at) are among the DDL's.
fn named_columns_declared(declared: &Declared, columns: &[String]) -> Result<()> {
    let named = [
        ("key", &declared.key),
        ("latest_by", &declared.latest_by),
        ("date_column", &declared.date_column),
        ("loaded_at", &declared.loaded_at),
    ];
    for (line, column) in named {
        let Some(column) = column else { continue };
        if !columns.iter().any(|c| c.eq_ignore_ascii_case(column)) {
            return Err(Error::Template {
                file: declared.file.clone(),
                message: format!(
                    "`-- {line}: {column}` names a column its DDL does not declare (it declares: {}); name one of those, or add the column to the DDL",
                    columns.join(", ")
                ),
            });
        }
    }
    Ok(())
}

/// Whether the table has every declared column (whatever their order and case). Columns
/// it has besides are left alone: a loader may fill them, and `<name>_latest` shows the
/// declared ones.
fn has_declared_columns(declared: &[String], existing: &[String]) -> bool {
    declared
        .iter()
        .all(|c| existing.iter().any(|e| e.eq_ignore_ascii_case(c)))
}

fn differs_with_rows(declared: &Declared, columns: &[String], existing: &[String]) -> String {
    let missing: Vec<&String> = columns
        .iter()
        .filter(|c| !existing.iter().any(|e| e.eq_ignore_ascii_case(c)))
        .collect();
    format!(
        "table {name} exists with rows, and lacks {} of the declared columns ({}); it has: {}. sqlrun makes a table again from its declaration only while it is empty: add the columns (e.g. `ALTER TABLE {name} ADD COLUMN {} ...`), then run again",
        join(&missing),
        columns.join(", "),
        existing.join(", "),
        missing.first().map_or("", |c| c.as_str()),
        name = declared.name,
    )
}

fn join(columns: &[&String]) -> String {
    let names: Vec<&str> = columns.iter().map(|c| c.as_str()).collect();
    names.join(", ")
}

fn table_columns(db: &mut Db, table: &str) -> Result<Vec<String>> {
    let columns = store::table_columns(db, table)?;
    Ok(columns.into_iter().map(|c| c.name).collect())
}
