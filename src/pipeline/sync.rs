//! The pipeline's objects in a database: model tables, `<table>_corrections`,
//! `<table>_current`, views and source triggers, created or brought up to date in one
//! transaction. Apart from pipeline.rs, which only loads and renders, so that the record of models (models.rs) can sit between them.

use minijinja::context;

use crate::dates::clock::{today, Clock};
use crate::dates::interval::fmt_date;
use crate::db::{Db, DbErrorKind, Dialect, RowShape, TxKind};
use crate::error::{Error, Result};
use crate::pipeline::declare::{How, Step};
use crate::pipeline::{to_value, DateVars, Lookup, Model, Owner, Pipeline, Source};
use crate::store::{self, queries};

impl Pipeline {
    /// Creates what the pipeline needs and is missing: model tables (from `-- create:`,
    /// with a run_id column when the DDL has none), corrections tables, views whose SQL
    /// differs from their template's, source triggers; and records the models in
    /// `models`. Reads first, so that the usual case (nothing to do) takes no write lock.
    /// The objects and the checks are one transaction (the templates are this database's
    /// pipeline, every model table has its columns, a date's statements prepare against
    /// the new objects): a refusal leaves nothing behind, so the fixed header then just
    /// works. Returns what is worth saying (a model added, or back from a retirement).
    pub fn sync(&self, db: &mut Db) -> Result<Vec<String>> {
        self.sync_checking(db, None)
    }

    /// `sync`, checking that the statements of date `ds` prepare (apply: its first date),
    /// also when nothing needed creating. Without `ds`, a creating sync checks today's
    /// (UTC, by the database's clock).
    pub fn sync_checking(&self, db: &mut Db, ds: Option<&str>) -> Result<Vec<String>> {
        if self.is_current(db)? {
            if let Some(ds) = ds {
                self.check_tables(db)?;
                self.check_date(db, ds)?;
            }
            return Ok(Vec::new());
        }
        db.transaction(TxKind::Exclusive, |db| self.sync_in(db, ds))
    }

    /// `sync_checking`'s work, in the caller's transaction (`apply --dry-run` rolls it
    /// back).
    pub fn sync_in(&self, db: &mut Db, ds: Option<&str>) -> Result<Vec<String>> {
        let ds = match ds {
            Some(ds) => ds.to_string(),
            None => fmt_date(today(Clock::read(db)?.now(), chrono_tz::UTC)),
        };
        // Again under the lock: another process may have changed things meanwhile.
        let notes = crate::pipeline::models::record(db, self, None)?;
        let (tables, rest) = self.pending_ddl(db)?;
        if db.dialect() == Dialect::Postgres && !(tables.is_empty() && rest.is_empty()) {
            // DDL waits for every date that reads the object, and while it waits every new
            // reader queues behind it: a short bound, not the bookkeeping turn's.
            db.batch(include_str!("../../queries/postgres/ddl_lock_bound.sql"))?;
        }
        for step in &tables {
            self.run_step(db, step)?;
        }
        // Before anything is built on the tables (PostgreSQL's corrections tables copy
        // their columns).
        self.check_tables(db)?;
        for step in &rest {
            self.run_step(db, step)?;
        }
        self.check_date(db, &ds)?;
        Ok(notes)
    }

    fn run_step(&self, db: &mut Db, step: &Ddl) -> Result<()> {
        if let Ddl::Declare(declaration) = step {
            return self.run_declaration(db, declaration);
        }
        let dialect = db.dialect();
        db.batch(step.sql())
            .map_err(|e| step.failed(e.into(), dialect))?;
        match step {
            Ddl::Plain { .. } => {}
            Ddl::Table { table, .. } => {
                // sqlrun's own column, which a `-- create:` need not spell out. No
                // table at all is said by check_tables, with the model's other problems.
                let columns = table_columns(db, table)?;
                if !columns.is_empty() && !columns.iter().any(|c| c == "run_id") {
                    let sql = self.render_system("add_run_id", context! { table => table })?;
                    db.batch(&sql).map_err(|e| step.failed(e.into(), dialect))?;
                }
            }
            Ddl::View { name, sql } => db.record_view(name, create_statement(sql))?,
            Ddl::Tracking { source, sql, gap } => self.record_tracking(db, source, sql, *gap)?,
            Ddl::Declare(_) => {}
        }
        Ok(())
    }

    /// Every model's table has the columns its header names, and run_id: all the
    /// problems at once, per model file, each with its fix.
    fn check_tables(&self, db: &mut Db) -> Result<()> {
        let mut errors = Vec::new();
        for model in &self.models {
            let columns = table_columns(db, &model.table)?;
            let mut problems = Vec::new();
            if columns.is_empty() {
                problems.push(format!(
                    "there is no table {} after its `-- create:` ran; the DDL must create the table the model fills (`-- table:`, by default the model's name)",
                    model.table
                ));
            }
            let named = (model.key.iter().map(|c| (c, "key")))
                .chain(model.values.iter().map(|c| (c, "values")));
            for (column, line) in named.filter(|_| !columns.is_empty()) {
                if !columns.contains(column) {
                    problems.push(format!(
                        "table {} has no column {column}, which `-- {line}:` names; add the column to the table (it has: {}) or fix the header",
                        model.table,
                        columns.join(", ")
                    ));
                }
            }
            if !columns.is_empty() && !columns.iter().any(|c| c == "run_id") {
                let alter = self.render_system("add_run_id", context! { table => &model.table })?;
                problems.push(format!(
                    "table {} has no run_id column, which sqlrun fills with the run that computed each row; add it: `{}`",
                    model.table,
                    statement_text(&alter)
                ));
            }
            if db.dialect() == Dialect::Postgres && columns.contains(&model.date_column) {
                problems.extend(date_column_problem(db, model)?);
            }
            if !problems.is_empty() {
                errors.push(Error::problems(self.path_of(model), "its table", problems));
            }
        }
        match errors.is_empty() {
            true => Ok(()),
            false => Err(Error::all(errors)),
        }
    }

    /// The statements of one date, replaced and sealed, prepare against the database as
    /// it is: SQL syntax errors and unknown tables or columns show before anything is
    /// written (bad input, exit 2, not a failed date). They are prepared as they run,
    /// their values as parameters: on PostgreSQL a parameter's type is the server's guess
    /// from the statement (a literal's would be its own), so what prepares here runs.
    pub fn check_date(&self, db: &mut Db, ds: &str) -> Result<()> {
        // Each model's SELECT alone first: it returns the columns its header names, and an
        // error there is said in the model's lines.
        self.check_models(db, ds)?;
        self.check_readiness(db, ds)?;
        // The date's whole SQL, replaced and sealed: all of it prepares, mostly (on
        // PostgreSQL in one round trip, and the prepared statements are the ones the
        // run's dates use).
        if self.check_date_sql(db, ds).is_ok() {
            return Ok(());
        }
        // Something does not: each check alone, so that the one that does not prepare is
        // named (on PostgreSQL the first error aborts the transaction: nothing after it can
        // tell); then the date's SQL again, for what is left.
        for sealed in [false, true] {
            if let Some(e) = self.failing_check(db, ds, sealed) {
                return Err(e);
            }
        }
        self.check_date_sql(db, ds)
    }

    /// The date's SQL, replaced and sealed, prepares; the first statement that does not,
    /// named by its model or check.
    fn check_date_sql(&self, db: &mut Db, ds: &str) -> Result<()> {
        // Statements are prepared, not run: any time stands in for the date's start.
        let started_at = store::timestamp(chrono::DateTime::UNIX_EPOCH);
        for sealed in [false, true] {
            let sql = self
                .bind_date(&DateVars {
                    ds,
                    run_id: 0,
                    sealed,
                    uncovered: &[],
                    started_at: &started_at,
                    lease_seconds: 0,
                    undo: None,
                    parts: None,
                })?
                .sql;
            let checked = db.check_statements(&sql).map_err(Error::from);
            checked.map_err(|e| match e {
                Error::Database(e) => match e.context.as_deref().and_then(|c| self.model(c)) {
                    Some(model) => self.date_statement_error(model, ds, e),
                    None => Error::PipelineSql {
                        file: self.statement_owner(e.context.as_deref(), ds),
                        message: format!("{e} (`sqlrun render --date {ds}` prints it all)"),
                    },
                },
                other => other,
            })?;
        }
        Ok(())
    }

    /// The models' `-- ready:` conditions render and prepare, named by their models'
    /// files when they do not.
    fn check_readiness(&self, db: &mut Db, ds: &str) -> Result<()> {
        let Some(ready) = self.bind_ready(ds)? else {
            return Ok(());
        };
        let Err(e) = db.check_statements(&ready.sql) else {
            return Ok(());
        };
        let files: Vec<String> = self
            .computed_models()
            .iter()
            .filter(|m| m.ready.is_some())
            .map(|m| crate::pipeline::ready_name(m))
            .collect();
        Err(Error::PipelineSql {
            file: files.join(", "),
            message: format!(
                "{} (`sqlrun render --date {ds}` prints it first)",
                Error::from(e)
            ),
        })
    }

    /// The date's checks run as one statement: the first of them that does not prepare
    /// alone, named by its file (None: each prepares).
    fn failing_check(&self, db: &mut Db, ds: &str, sealed: bool) -> Option<Error> {
        self.computed_checks().into_iter().find_map(|check| {
            let sql = match self.bind_check(check, ds, sealed, 0) {
                Ok(bound) => bound.sql,
                Err(e) => return Some(e),
            };
            let e = Error::from(db.check_statements(&sql).err()?);
            Some(Error::PipelineSql {
                file: format!(
                    "{} (check {} of model {}, as rendered for {ds})",
                    check.file, check.name, check.model
                ),
                message: format!("{e} (`sqlrun render --date {ds} {}` prints it)", check.name),
            })
        })
    }

    /// What a statement of a date's SQL belongs to, by its `-- sqlrun context:`: a model's
    /// or a check's file, or the date's SQL as a whole.
    fn statement_owner(&self, context: Option<&str>, ds: &str) -> String {
        match context.and_then(|c| self.owner(c)) {
            Some(Owner::Model(m)) => format!("{} (model {}, as rendered for {ds})", m.file, m.name),
            Some(Owner::Check(c)) => format!(
                "{} (check {} of model {}, as rendered for {ds})",
                c.file, c.name, c.model
            ),
            None => format!("SQL rendered for {ds}"),
        }
    }

    /// After a source's triggers are (re)installed: if they had gone missing, its dates are
    /// marked changed; then what was installed is remembered.
    fn record_tracking(&self, db: &mut Db, source: &str, sql: &str, gap: bool) -> Result<()> {
        if gap {
            let script = self.bind_system("source_untracked", context! { source => source })?;
            db.run_script(&script.sql, &script.params)?;
        }
        let triggers = db
            .one_as::<Triggers, _>(&queries::SOURCE_TRIGGERS, &[(":table", source.into())])?
            .triggers;
        db.execute(
            &queries::RECORD_SOURCE_TRACKING,
            &[
                (":source", source.into()),
                (":triggers", triggers.into()),
                (":install_sql", sql.into()),
            ],
        )?;
        Ok(())
    }

    /// Whether every object the pipeline needs is there as its template says and its
    /// models are recorded, so that nothing needs writing (reads only). Templates that
    /// are not this database's pipeline, and an edited template, are refused here, before
    /// they change anything, views included.
    pub fn is_current(&self, db: &mut Db) -> Result<bool> {
        crate::pipeline::versions::verify_versions(db, &self.templates)?;
        let unrecorded = crate::pipeline::models::check(db, self)?;
        let (tables, rest) = self.pending_ddl(db)?;
        Ok(!unrecorded && tables.is_empty() && rest.is_empty())
    }

    /// What is missing: the model tables to create, then everything else.
    fn pending_ddl(&self, db: &mut Db) -> Result<(Vec<Ddl>, Vec<Ddl>)> {
        let declarations = self.declaration_steps(db)?;
        let made = columns_after(&declarations);
        let remade = declarations.iter().any(|d| d.how == How::Remade);
        let mut tables: Vec<Ddl> = declarations.into_iter().map(Ddl::Declare).collect();
        let (mut out, mut missing) = (Vec::new(), Vec::new());
        for model in &self.models {
            if db.object(&model.table)?.is_none() {
                match &model.create {
                    Some(ddl) => tables.push(Ddl::Table {
                        file: self.path_of(model).to_string(),
                        table: model.table.clone(),
                        sql: ddl.clone(),
                    }),
                    None => missing.push(Error::Template {
                        file: self.path_of(model).to_string(),
                        message: format!(
                            "table {} does not exist; declare it in the header (`-- create: CREATE TABLE {} (...)`) or in a migration",
                            model.table, model.table
                        ),
                    }),
                }
            }
            // The tables sqlrun keeps beside each model's own.
            let beside = [
                (&model.corrections_table, "corrections_table"),
                (&model.sent_table, "sent_table"),
                (&model.history_table, "history_table"),
            ];
            for (table, template) in beside {
                if db.object(table)?.is_none() {
                    let sql =
                        self.render_system(template, context! { model => to_value(model) })?;
                    out.push(Ddl::plain(sql, template, model));
                }
            }
            out.extend(self.upgrades(db, model)?);
        }
        if !missing.is_empty() {
            return Err(Error::all(missing));
        }
        out.extend(self.pending_views(db, remade)?);
        for source in &self.sources {
            let made = made.iter().find(|(t, _, _)| *t == source.table);
            out.extend(self.tracking_ddl(db, source, made.map(|(_, c, new)| (c, *new)))?);
        }
        for lookup in &self.lookups {
            out.extend(self.lookup_tracking_ddl(db, lookup, &made)?);
        }
        Ok((tables, out))
    }

    /// The views to make again, all of them (dependents dropped first) when any differs
    /// from its template's SQL or a source table was made again (`remade`).
    fn pending_views(&self, db: &mut Db, remade: bool) -> Result<Vec<Ddl>> {
        let mut out = Vec::new();
        let mut stored = |name: &str| db.object(name);
        // The declared sources' `_latest` views first: models and views read them.
        let mut views: Vec<(String, String)> = self.latest_views()?;
        for model in &self.models {
            let each = [
                (&model.current_view, "current_view"),
                (&model.sent_view, "sent_view"),
                (&model.history_view, "sent_history"),
                (&model.feed_view, "corrections_feed"),
            ];
            for (name, template) in each {
                let sql = self.render_system(template, context! { model => to_value(model) })?;
                views.push((name.clone(), sql));
            }
        }
        for view in &self.views {
            let sql = self.render_system("view", context! { view => to_value(view) })?;
            views.push((view.name.clone(), sql));
        }
        views.extend(self.freshness_view()?);
        // Views are dropped and created again all together, dependents first, when any
        // of them changed: PostgreSQL refuses to drop a view another view reads.
        let mut stale = remade;
        for (name, sql) in &views {
            stale |= stored(name)?.as_deref() != Some(create_statement(sql));
        }
        if stale {
            for (name, _) in views.iter().rev() {
                out.push(Ddl::Plain {
                    sql: self.render_system("drop_view", context! { name => name })?,
                    what: format!("dropping view {name} (templates/system/drop_view.sql)"),
                });
            }
            for (name, sql) in views {
                out.push(Ddl::View { name, sql });
            }
        }
        Ok(out)
    }

    /// A model's `<table>_sent` and `<table>_corrections` made before seals had versions
    /// get their columns (system/upgrade_*.sql), filled from the seals recorded then.
    fn upgrades(&self, db: &mut Db, model: &Model) -> Result<Vec<Ddl>> {
        let mut out = Vec::new();
        let steps = [
            (&model.sent_table, "seal_id", "upgrade_sent"),
            (
                &model.corrections_table,
                "settled_by",
                "upgrade_corrections",
            ),
        ];
        for (table, column, upgrade) in steps {
            let columns = table_columns(db, table)?;
            if !columns.is_empty() && !columns.iter().any(|c| c == column) {
                let sql = self.render_system(upgrade, context! { model => to_value(model) })?;
                out.push(Ddl::plain(sql, upgrade, model));
            }
        }
        Ok(out)
    }

    /// A source's change triggers, when they are not installed as this sqlrun would
    /// install them: never installed, installed from other SQL, or some gone missing
    /// since (then its changes meanwhile went untracked: `gap`).
    /// `made`: the columns of a declared table this sync creates, makes again or
    /// migrates, and whether it is new (then it has no triggers yet).
    fn tracking_ddl(
        &self,
        db: &mut Db,
        source: &Source,
        made: Option<(&Vec<String>, bool)>,
    ) -> Result<Option<Ddl>> {
        let columns = match made {
            Some((columns, _)) => columns.clone(),
            None => table_columns(db, &source.table)?,
        };
        self.check_source(source, &columns)?;
        let sql = self.render_system(
            "source_tracking",
            context! { source => to_value(source), columns => columns },
        )?;
        self.tracking_step(db, &source.table, sql, made.is_some_and(|(_, new)| new))
    }

    /// A lookup's change triggers (system/lookup_tracking.sql), as for a source.
    fn lookup_tracking_ddl(
        &self,
        db: &mut Db,
        lookup: &Lookup,
        made: &[(String, Vec<String>, bool)],
    ) -> Result<Option<Ddl>> {
        let mut columns_of = |table: &str| match made.iter().find(|(t, _, _)| t == table) {
            Some((_, columns, _)) => Ok(columns.clone()),
            None => table_columns(db, table),
        };
        let columns = columns_of(&lookup.table)?;
        // A declared fact is read through its `_latest` view, which has the declared
        // columns: the column must be declared, whatever the table has besides.
        let fact = match self.declared.iter().find(|d| d.name == lookup.fact) {
            Some(d) => self.declared_columns(d)?,
            None => columns_of(&lookup.fact)?,
        };
        self.check_lookup(lookup, &columns, &fact)?;
        let sql = self.render_system(
            "lookup_tracking",
            context! { lookup => to_value(lookup), columns => columns },
        )?;
        let new_table = made.iter().any(|(t, _, new)| *new && *t == lookup.table);
        self.tracking_step(db, &lookup.table, sql, new_table)
    }

    /// Installs `sql` on `table` unless it is installed as it is. `new_table`: a table this
    /// sync makes has none, and missed no change.
    fn tracking_step(
        &self,
        db: &mut Db,
        table: &str,
        sql: String,
        new_table: bool,
    ) -> Result<Option<Ddl>> {
        let triggers =
            db.one_as::<Triggers, _>(&queries::SOURCE_TRIGGERS, &[(":table", table.into())])?;
        let installed: Option<Tracking> =
            db.row_as(&queries::SOURCE_TRACKING_OF, &[(":source", table.into())])?;
        let (gap, same) = match installed {
            None => (false, false),
            Some(_) if new_table => (false, false),
            Some(t) => {
                let gap = t.triggers != triggers.triggers;
                (gap, !gap && t.install_sql == sql)
            }
        };
        Ok((!same).then(|| Ddl::Tracking {
            source: table.to_string(),
            sql,
            gap,
        }))
    }

    /// A lookup must exist with its key, and its fact with the column that holds the key.
    fn check_lookup(&self, lookup: &Lookup, columns: &[String], fact: &[String]) -> Result<()> {
        let model = self
            .models
            .iter()
            .find(|m| m.lookups.contains(lookup))
            .expect("every lookup comes from a model");
        let bad = |message: String| Error::Template {
            file: crate::pipeline::sources_at(&model.file, self.source_of(&model.template)),
            message,
        };
        if columns.is_empty() {
            return Err(bad(format!(
                "`-- sources:` names lookup {}, which does not exist; declare it in sources/{}.sql (sqlrun creates it) or create the table first",
                lookup.table, lookup.table
            )));
        }
        if !columns.contains(&lookup.key) {
            return Err(bad(format!(
                "`-- sources:` gives lookup {} the key {}, which it lacks; it has: {}",
                lookup.table,
                lookup.key,
                columns.join(", ")
            )));
        }
        if !fact.contains(&lookup.fact_column) {
            return Err(bad(format!(
                "`-- sources:` reaches {} `via {}.{}`, but {} has no column {} (it has: {}); add it to {} (declared in sources/: a new version of its declaration with `-- migrate:`; else ALTER TABLE) or name the column that holds {}",
                lookup.table,
                lookup.fact,
                lookup.fact_column,
                lookup.fact,
                lookup.fact_column,
                fact.join(", "),
                lookup.fact,
                lookup.key
            )));
        }
        Ok(())
    }

    /// A declared source must exist with the columns its declaration names.
    fn check_source(&self, source: &Source, columns: &[String]) -> Result<()> {
        let model = self
            .models
            .iter()
            .find(|m| m.sources.contains(source))
            .expect("every source comes from a model");
        let bad = |message: String| Error::Template {
            file: model.template.clone(),
            message,
        };
        if columns.is_empty() {
            return Err(bad(format!(
                "`-- sources:` names {}, which does not exist; create the table first (a \
                 migration, or by hand) or leave it out of `-- sources:`",
                source.table
            )));
        }
        let named = std::iter::once(&source.date_column).chain(source.key.as_ref());
        for column in named {
            if !columns.contains(column) {
                return Err(bad(format!(
                    "`-- sources:` names column {column} of {}, which has: {}",
                    source.table,
                    columns.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// One step of bringing the pipeline's objects up to date.
enum Ddl {
    /// `what` it makes, for a message: the template and the model it is for.
    Plain { sql: String, what: String },
    /// A model's table, from its `-- create:` in `file`.
    Table {
        file: String,
        table: String,
        sql: String,
    },
    /// A view, whose SQL is remembered.
    View { name: String, sql: String },
    /// A declared source's table brought to its version (pipeline/declare.rs).
    Declare(Step),
    /// A source's change triggers (`gap`: some had gone missing).
    Tracking {
        source: String,
        sql: String,
        gap: bool,
    },
}

impl Ddl {
    /// A system template's object for a model.
    fn plain(sql: String, template: &str, model: &Model) -> Ddl {
        Ddl::Plain {
            sql,
            what: format!(
                "templates/system/{template}.sql, for model {} ({})",
                model.name, model.file
            ),
        }
    }

    fn sql(&self) -> &str {
        match self {
            Ddl::Plain { sql, .. }
            | Ddl::Table { sql, .. }
            | Ddl::View { sql, .. }
            | Ddl::Tracking { sql, .. } => sql,
            Ddl::Declare(step) => step.sql.first().map_or("", String::as_str),
        }
    }

    /// A step that failed, said as the pipeline's problem, unless the database itself is
    /// the problem (a read-only file, a full disk: said on one line).
    fn failed(&self, e: Error, dialect: Dialect) -> Error {
        if let (
            Error::Environment {
                kind: DbErrorKind::Timeout,
                cause,
                ..
            },
            Dialect::Postgres,
        ) = (&e, dialect)
        {
            let line = format!(
                "creating or replacing the pipeline's objects waits for the dates of other \
                 runs that read them ({cause}; at most 2 s, so that no run's dates queue \
                 behind it): nothing was changed; run it again when no date is being \
                 computed (`sqlrun status` shows who holds dates)\n{}",
                self.sql()
            );
            let cause = cause.clone();
            return Error::Environment {
                kind: DbErrorKind::Timeout,
                cause,
                line,
            };
        }
        if let Error::Environment { .. } = e {
            return e;
        }
        let message = match self {
            Ddl::Tracking { source, .. } => format!(
                "installing the change triggers on source {source} failed: {e}; sqlrun must be \
                 allowed to create triggers on it (own it, or hold the TRIGGER privilege)"
            ),
            Ddl::Table { file, table, .. } => {
                return Error::PipelineSql {
                    file: file.clone(),
                    message: format!(
                        "creating table {table} from its `-- create:` failed: {e}; fix the DDL \
                         (nothing was created)\n{}",
                        self.sql()
                    ),
                }
            }
            Ddl::Plain { what, .. } => format!(
                "{what}: {e}; this is sqlrun's own SQL over the model's table, so a type of \
                 one of its columns is the likely cause (see its `-- create:`); nothing was \
                 created"
            ),
            Ddl::View { name, .. } => {
                format!("creating view {name} failed: {e}; nothing was created")
            }
            Ddl::Declare(step) => format!("declaring source {}: {e}", step.source),
        };
        Error::PipelineSql {
            file: "pipeline objects".into(),
            message,
        }
    }
}

/// A rendered one-statement template as a person would type it: without its header
/// comments, blank lines and final semicolon.
fn statement_text(rendered: &str) -> String {
    let lines: Vec<&str> = rendered
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.trim_start().starts_with("--"))
        .collect();
    lines.join(" ").trim_end_matches(';').trim_end().to_string()
}

/// PostgreSQL: a model's date column must be a `date`, which sqlrun's statements compare
/// with the date (`ds = DATE '2026-02-09'`; `text = date` has no operator there). Said
/// here, naming the column and the type, before any of sqlrun's own DDL over the table
/// fails on it. (SQLite keeps a date as text whatever the column's declared type.)
fn date_column_problem(db: &mut Db, model: &Model) -> Result<Option<String>> {
    let kind = store::table_columns(db, &model.table)?
        .into_iter()
        .find(|c| c.name == model.date_column)
        .and_then(|c| c.kind);
    let hours = model.grain == crate::dates::period::Grain::Hour;
    Ok(match kind.as_deref() {
        None => None,
        Some("date") if !hours => None,
        Some("timestamp") if hours => None,
        Some(kind) if hours => Some(format!(
            "column {column} of table {table} holds {kind}, but on PostgreSQL an hourly model's partition column must be of type timestamptz (it holds each hour's start, an instant); declare it `{column} TIMESTAMPTZ NOT NULL` in `-- create:` (on SQLite, TEXT: the start as UTC text 'YYYY-MM-DD HH:MM:SS'), or `ALTER TABLE {table} ALTER COLUMN {column} TYPE timestamptz` for a table that exists",
            column = model.date_column,
            table = model.table,
        )),
        Some(kind) => Some(format!(
            "column {column} of table {table} holds {kind}, but on PostgreSQL a model's date column must be of type date (sqlrun compares it with dates); declare it `{column} DATE NOT NULL` in `-- create:`, which works on SQLite too (it keeps the dates as 'YYYY-MM-DD' text), or `ALTER TABLE {table} ALTER COLUMN {column} TYPE date USING {column}::date` for a table that exists",
            column = model.date_column,
            table = model.table,
        )),
    })
}

/// The columns of a table, in order (none: there is no such table).
fn table_columns(db: &mut Db, table: &str) -> Result<Vec<String>> {
    let columns = store::table_columns(db, table)?;
    Ok(columns.into_iter().map(|c| c.name).collect())
}

/// The columns of each table a sync's declarations create, make again or migrate (its
/// triggers are rendered with them, not with the columns it has before the sync), and
/// whether it is new: a table made (again) has no triggers and may have lost the views
/// over it; a migrated one keeps its triggers (and any gap in them).
fn columns_after(declarations: &[Step]) -> Vec<(String, Vec<String>, bool)> {
    declarations
        .iter()
        .filter(|d| matches!(d.how, How::Created | How::Remade | How::Migrated))
        .map(|d| {
            let new = d.how != How::Migrated && !d.again;
            (d.source.clone(), d.columns.clone(), new)
        })
        .collect()
}

/// How many of its change triggers a source has (`queries/*/source_triggers.sql`).
#[derive(serde::Deserialize)]
struct Triggers {
    triggers: i64,
}

/// What was installed to track a source's changes (`queries/source_tracking_of.sql`).
#[derive(serde::Deserialize)]
struct Tracking {
    triggers: i64,
    install_sql: String,
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![
        RowShape::of::<Triggers, _>(&queries::SOURCE_TRIGGERS, dialect),
        RowShape::of::<Tracking, _>(&queries::SOURCE_TRACKING_OF, dialect),
    ]
}

/// The text SQLite keeps in sqlite_schema for a rendered CREATE: from CREATE to the end,
/// without the header comments and the final semicolon.
fn create_statement(rendered: &str) -> &str {
    let start = rendered.find("CREATE ").unwrap_or(0);
    rendered[start..]
        .trim_end()
        .trim_end_matches(';')
        .trim_end()
}
