//! The pipeline: the models and views of a template folder, in dependency order, and the
//! database objects they need (tables, `<table>_corrections`, `<table>_current`, views).

use std::collections::{BTreeMap, BTreeSet};

use minijinja::context;
use minijinja::value::Value;
use serde::Serialize;

use crate::db::{Db, DbErrorKind, Dialect, TxKind};
use crate::error::{Error, Result};
use crate::queries;
use crate::templates::{versioned_text, Bound, TemplateFile, TemplateKind, TemplateSet};

/// A partitioned model: one table, one row set per date, from one SELECT.
#[derive(Debug, Clone, Serialize)]
pub struct Model {
    /// `daily_revenue` (the file stem).
    pub name: String,
    /// `models/daily_revenue.sql`, as templates include it.
    pub template: String,
    /// Where it was read from (`templates/models/daily_revenue.sql`, or in `--templates`).
    pub file: String,
    pub version: i64,
    pub table: String,
    pub date_column: String,
    /// The columns that identify a row within the table (the date column among them).
    pub key: Vec<String>,
    /// The columns corrections compare.
    pub values: Vec<String>,
    /// `key` then `values`: what the model's SELECT returns.
    pub columns: Vec<String>,
    pub corrections_table: String,
    pub current_view: String,
    /// `<table>_sent`: what went out, per key (system/sent_table.sql).
    pub sent_table: String,
    /// `<table>_sent_vs_now`: what went out beside what is true now, per key.
    pub sent_view: String,
    pub depends_on: Vec<String>,
    /// Values copied into `seals` when a date is sealed.
    pub seal_values: Vec<String>,
    /// DDL from the header, run when the table does not exist yet.
    pub create: Option<String>,
    /// The tables outside the pipeline it reads (`-- sources:`).
    pub sources: Vec<Source>,
}

/// A table that models read and that sqlrun does not compute: its changes are tracked per
/// date (`-- sources:` in a model's header), so a date whose rows changed after it was
/// built shows as `changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    pub table: String,
    /// The column that says which date a row belongs to.
    pub date_column: String,
    /// The column the versions of one record share (a re-sent order's `order_id`): a
    /// change to one version touches every date the record's other versions are on.
    pub key: Option<String>,
    /// The name of its trigger function on PostgreSQL: `sqlrun_changes_<table>`, shortened
    /// with a hash of the table's name where that would pass PostgreSQL's 63 bytes (two
    /// long names must not end up sharing one function).
    pub function: String,
}

impl Source {
    fn new(table: String, date_column: String, key: Option<String>) -> Source {
        let mut function = format!("sqlrun_changes_{table}");
        if function.len() > 63 {
            let digest = crate::templates::checksum(&table);
            let mut cut = 30;
            while !table.is_char_boundary(cut) {
                cut -= 1;
            }
            function = format!("sqlrun_changes_{}_{}", &table[..cut], &digest[..12]);
        }
        Source {
            table,
            date_column,
            key,
            function,
        }
    }
}

/// A derived view over the models.
#[derive(Debug, Clone, Serialize)]
pub struct View {
    pub name: String,
    pub template: String,
    pub depends_on: Vec<String>,
}

pub struct Pipeline {
    pub dialect: Dialect,
    pub templates: TemplateSet,
    /// In dependency order: a model comes after the models it depends on.
    pub models: Vec<Model>,
    pub views: Vec<View>,
    /// Every source the models declare, once each.
    pub sources: Vec<Source>,
    /// `--select`: the models a date computes (those named and everything downstream of
    /// them); None: every model.
    pub selected: Option<BTreeSet<String>>,
}

/// What `run_id` prints as in SQL shown before a run exists: a named parameter, which
/// both sqlite3 (`.parameter set :run_id 5`) and psql (`\set run_id 5`) can bind.
pub const RUN_ID_PLACEHOLDER: &str = ":run_id";

/// The time variables and run facts a date is rendered with.
pub struct DateVars<'a> {
    pub ds: &'a str,
    pub run_id: i64,
    pub sealed: bool,
    pub started_at: &'a str,
    /// The lease each date's commit renews on the dates the run still holds.
    pub lease_seconds: i64,
}

impl Pipeline {
    pub fn load(dir: Option<&std::path::Path>, dialect: Dialect) -> Result<Self> {
        // A model's header problems are said with those of the file itself, all at once.
        let model_problems = |f: &TemplateFile| match f.kind {
            TemplateKind::Model => model_from(f).err().unwrap_or_default(),
            _ => Vec::new(),
        };
        let templates = TemplateSet::load_checked(dir, dialect, &model_problems)?;
        let models = templates
            .of_kind(TemplateKind::Model)
            .map(|f| model_from(f).map_err(|p| Error::problems(&f.path, "its header", p)))
            .collect::<Result<Vec<_>>>()?;
        let models = dependency_order(models, |m| &m.name, |m| &m.depends_on, "model")?;
        let mut tables = BTreeSet::new();
        for m in &models {
            if !tables.insert(m.table.clone()) {
                return Err(Error::Template {
                    file: m.template.clone(),
                    message: format!(
                        "table {} is already another model's; one table per model",
                        m.table
                    ),
                });
            }
        }
        if models.iter().filter(|m| !m.seal_values.is_empty()).count() > 1 {
            return Err(Error::Template {
                file: "models/".into(),
                message: "more than one model declares `seal_values`; seals has one row per date and the contract's two value columns, so only one model can fill them. Every model's sent values are kept per key in its <table>_sent without it: remove `-- seal_values:` from all models but one".into(),
            });
        }
        let sources = pipeline_sources(&models)?;
        let views = templates
            .of_kind(TemplateKind::View)
            .map(|f| View {
                name: f.name.trim_start_matches("views/").to_string(),
                template: f.include_name.clone(),
                depends_on: f.list("depends_on"),
            })
            .collect::<Vec<_>>();
        let views = dependency_order(views, |v| &v.name, |v| &v.depends_on, "view")?;
        Ok(Pipeline {
            dialect,
            templates,
            models,
            views,
            sources,
            selected: None,
        })
    }

    /// `--select`: a date computes the named models and every model downstream of them
    /// (that depends on them, directly or not), in dependency order; the others keep their
    /// rows. An unknown name is bad input.
    pub fn select(&mut self, names: &[String]) -> Result<()> {
        let mut chosen = BTreeSet::new();
        for name in names {
            if self.model(name).is_none() {
                let known: Vec<&str> = self.models.iter().map(|m| m.name.as_str()).collect();
                return Err(Error::bad(format!(
                    "--select {name}: no such model; this pipeline's models are: {}",
                    known.join(", ")
                )));
            }
            chosen.insert(name.clone());
        }
        // Models come in dependency order, so one pass finds everything downstream.
        for model in &self.models {
            if model.depends_on.iter().any(|d| chosen.contains(d)) {
                chosen.insert(model.name.clone());
            }
        }
        self.selected = Some(chosen);
        Ok(())
    }

    /// The models a date computes, in dependency order.
    pub fn computed_models(&self) -> Vec<&Model> {
        self.models
            .iter()
            .filter(|m| self.selected.as_ref().is_none_or(|s| s.contains(&m.name)))
            .collect()
    }

    /// The versions of the models a date computes, as `date_states.sql` lists those that
    /// built a date (`models/NAME@VERSION,...`): a date built by other versions is stale.
    pub fn signature(&self) -> String {
        let mut names: Vec<String> = self
            .computed_models()
            .iter()
            .map(|m| format!("models/{}@{}", m.name, m.version))
            .collect();
        names.sort();
        names.join(",")
    }

    /// The sources a date records: those read only by models it computes (a source that
    /// a model left out also reads must keep telling that model's rows are behind).
    fn recorded_sources(&self) -> Vec<&Source> {
        let computed = self.computed_models();
        self.sources
            .iter()
            .filter(|source| {
                self.models
                    .iter()
                    .filter(|m| m.sources.contains(source))
                    .all(|m| computed.iter().any(|c| c.name == m.name))
            })
            .collect()
    }

    pub fn model(&self, name: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.name == name)
    }

    pub fn models_value(&self) -> Value {
        to_value(&self.models)
    }

    pub fn sources_value(&self) -> Value {
        to_value(&self.sources)
    }

    /// The body of one date's transaction (`system/date.sql`) with its values as
    /// literals, for review (`render`, `--dry-run`) and for the checks before a run.
    pub fn render_date(&self, vars: &DateVars) -> Result<String> {
        self.templates
            .render("system/date.sql", self.date_context(vars))
    }

    /// The same for a plan that no run owns yet (`apply --dry-run --sql`): `run_id` prints
    /// as the placeholder [`RUN_ID_PLACEHOLDER`] (`vars.run_id` is not used), so the text
    /// claims no run id and runs by hand only once one is bound.
    pub fn render_date_unclaimed(&self, vars: &DateVars) -> Result<String> {
        let run_id = Value::from_safe_string(RUN_ID_PLACEHOLDER.to_string());
        self.templates.render(
            "system/date.sql",
            context! { run_id => run_id, ..self.date_context(vars) },
        )
    }

    /// The same, as it is executed: the values as parameters.
    pub fn bind_date(&self, vars: &DateVars) -> Result<Bound> {
        self.templates
            .render_bound("system/date.sql", self.date_context(vars))
    }

    fn date_context(&self, vars: &DateVars) -> Value {
        context! {
            models => to_value(&self.computed_models()),
            sources => to_value(&self.recorded_sources()),
            sealed => vars.sealed,
            started_at => vars.started_at,
            lease_seconds => vars.lease_seconds,
            ..time_vars(vars.ds, vars.run_id)
        }
    }

    /// One model's SELECT for a date, as `render --date D MODEL` shows it.
    pub fn render_model(&self, model: &Model, ds: &str, run_id: i64) -> Result<String> {
        self.templates.render(
            &model.template,
            context! { model => to_value(model), ..time_vars(ds, run_id) },
        )
    }

    /// Renders a system template with `context`, values as literals (DDL, and reads).
    pub fn render_system(&self, name: &str, context: Value) -> Result<String> {
        let file = self.templates.system(name);
        self.templates.render(&file.include_name, context)
    }

    /// Renders a system template that writes, values as parameters (`Db::run_script`).
    pub fn bind_system(&self, name: &str, context: Value) -> Result<Bound> {
        let file = self.templates.system(name);
        self.templates.render_bound(&file.include_name, context)
    }

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
    /// also when nothing needed creating. Without `ds`, a creating sync checks today's.
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
        let ds = ds.map_or_else(
            || crate::interval::fmt_date(crate::interval::today_utc()),
            str::to_string,
        );
        // Again under the lock: another process may have changed things meanwhile.
        let notes = crate::models::record(db, self, None)?;
        let (tables, rest) = self.pending_ddl(db)?;
        if db.dialect() == Dialect::Postgres && !(tables.is_empty() && rest.is_empty()) {
            // DDL waits for every date that reads the object, and while it waits every new
            // reader queues behind it: a short bound, not the bookkeeping turn's.
            db.batch(include_str!("../queries/postgres/ddl_lock_bound.sql"))?;
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
        let dialect = db.dialect();
        db.batch(step.sql())
            .map_err(|e| step.failed(e.into(), dialect))?;
        match step {
            Ddl::Plain(_) => {}
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
    /// written (bad input, exit 2, not a failed date).
    pub fn check_date(&self, db: &mut Db, ds: &str) -> Result<()> {
        let started_at = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S").to_string();
        for sealed in [false, true] {
            let sql = self.render_date(&DateVars {
                ds,
                run_id: 0,
                sealed,
                started_at: &started_at,
                lease_seconds: 0,
            })?;
            let checked = db.check_statements(&sql).map_err(Error::from);
            checked.map_err(|e| match e {
                Error::Database(e) => {
                    let model = e.context.as_deref().and_then(|m| self.model(m));
                    Error::Template {
                        file: match model {
                            Some(m) => {
                                format!("{} (model {}, as rendered for {ds})", m.file, m.name)
                            }
                            None => format!("SQL rendered for {ds}"),
                        },
                        message: format!("{e} (`sqlrun render --date {ds}` prints it all)"),
                    }
                }
                other => other,
            })?;
        }
        Ok(())
    }

    /// Where a model's file is, for messages.
    pub fn path_of<'a>(&'a self, model: &'a Model) -> &'a str {
        &model.file
    }

    /// After a source's triggers are (re)installed: if they had gone missing, its dates are
    /// marked changed; then what was installed is remembered.
    fn record_tracking(&self, db: &mut Db, source: &str, sql: &str, gap: bool) -> Result<()> {
        if gap {
            let script = self.bind_system("source_untracked", context! { source => source })?;
            db.run_script(&script.sql, &script.params)?;
        }
        let triggers = db
            .one(&queries::SOURCE_TRIGGERS, &[(":table", source.into())])?
            .i64(0)?;
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
        verify_versions(db, &self.templates)?;
        let unrecorded = crate::models::check(db, self)?;
        let (tables, rest) = self.pending_ddl(db)?;
        Ok(!unrecorded && tables.is_empty() && rest.is_empty())
    }

    /// What is missing: the model tables to create, then everything else.
    fn pending_ddl(&self, db: &mut Db) -> Result<(Vec<Ddl>, Vec<Ddl>)> {
        let mut tables = Vec::new();
        let mut out = Vec::new();
        let mut missing = Vec::new();
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
            if db.object(&model.corrections_table)?.is_none() {
                out.push(Ddl::Plain(self.render_system(
                    "corrections_table",
                    context! { model => to_value(model) },
                )?));
            }
            if db.object(&model.sent_table)?.is_none() {
                out.push(Ddl::Plain(self.render_system(
                    "sent_table",
                    context! { model => to_value(model) },
                )?));
            }
        }
        if !missing.is_empty() {
            return Err(Error::all(missing));
        }
        let mut stored = |name: &str| db.object(name);
        let mut views: Vec<(String, String)> = Vec::new();
        for model in &self.models {
            let sql = self.render_system("current_view", context! { model => to_value(model) })?;
            views.push((model.current_view.clone(), sql));
            let sql = self.render_system("sent_view", context! { model => to_value(model) })?;
            views.push((model.sent_view.clone(), sql));
        }
        for view in &self.views {
            let sql = self.render_system("view", context! { view => to_value(view) })?;
            views.push((view.name.clone(), sql));
        }
        // Views are dropped and created again all together, dependents first, when any
        // of them changed: PostgreSQL refuses to drop a view another view reads.
        let mut stale = false;
        for (name, sql) in &views {
            stale |= stored(name)?.as_deref() != Some(create_statement(sql));
        }
        if stale {
            for (name, _) in views.iter().rev() {
                out.push(Ddl::Plain(
                    self.render_system("drop_view", context! { name => name })?,
                ));
            }
            for (name, sql) in views {
                out.push(Ddl::View { name, sql });
            }
        }
        for source in &self.sources {
            out.extend(self.tracking_ddl(db, source)?);
        }
        Ok((tables, out))
    }

    /// A source's change triggers, when they are not installed as this sqlrun would
    /// install them: never installed, installed from other SQL, or some gone missing
    /// since (then its changes meanwhile went untracked: `gap`).
    fn tracking_ddl(&self, db: &mut Db, source: &Source) -> Result<Option<Ddl>> {
        let table = [(":table", source.table.as_str().into())];
        let columns = table_columns(db, &source.table)?;
        self.check_source(source, &columns)?;
        let sql = self.render_system(
            "source_tracking",
            context! { source => to_value(source), columns => columns },
        )?;
        let triggers = db.one(&queries::SOURCE_TRIGGERS, &table)?.i64(0)?;
        let installed = db.row(
            &queries::SOURCE_TRACKING_OF,
            &[(":source", source.table.as_str().into())],
        )?;
        let (gap, same) = match installed {
            None => (false, false),
            Some(row) => {
                let gap = row.i64(0)? != triggers;
                (gap, !gap && row.text(1)? == sql)
            }
        };
        Ok((!same).then(|| Ddl::Tracking {
            source: source.table.clone(),
            sql,
            gap,
        }))
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
    Plain(String),
    /// A model's table, from its `-- create:` in `file`.
    Table {
        file: String,
        table: String,
        sql: String,
    },
    /// A view, whose SQL is remembered.
    View {
        name: String,
        sql: String,
    },
    /// A source's change triggers (`gap`: some had gone missing).
    Tracking {
        source: String,
        sql: String,
        gap: bool,
    },
}

impl Ddl {
    fn sql(&self) -> &str {
        match self {
            Ddl::Plain(sql)
            | Ddl::Table { sql, .. }
            | Ddl::View { sql, .. }
            | Ddl::Tracking { sql, .. } => sql,
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
                return Error::Template {
                    file: file.clone(),
                    message: format!(
                        "creating table {table} from its `-- create:` failed: {e}; fix the DDL \
                         (nothing was created)\n{}",
                        self.sql()
                    ),
                }
            }
            _ => format!("creating them failed: {e}"),
        };
        Error::Template {
            file: "pipeline objects".into(),
            message: format!("{message}\n{}", self.sql()),
        }
    }
}

/// Refuses a template whose text changed while its version did not, as a migration tool
/// refuses an edited migration.
pub fn verify_versions(db: &mut Db, templates: &TemplateSet) -> Result<()> {
    for file in &templates.files {
        let recorded = db.row(
            &queries::TEMPLATE_VERSION,
            &[
                (":name", file.name.as_str().into()),
                (":version", file.version.into()),
            ],
        )?;
        if let Some(row) = recorded {
            let (checksum, first_used, body) = (row.text(0)?, row.text(1)?, row.text(2)?);
            let same_sql = || versioned_text(&body) == versioned_text(&file.source);
            if checksum != file.checksum && !same_sql() {
                return Err(Error::EditedTemplate(Box::new(
                    crate::error::EditedTemplate {
                        file: file.path.clone(),
                        name: file.name.clone(),
                        version: file.version,
                        next: file.version + 1,
                        recorded: checksum[..12.min(checksum.len())].to_string(),
                        found: file.checksum[..12].to_string(),
                        first_used,
                    },
                )));
            }
        }
    }
    Ok(())
}

/// Records the template versions a run uses (and each version's text the first time).
pub fn record_versions(db: &mut Db, templates: &TemplateSet, run_id: i64) -> Result<()> {
    verify_versions(db, templates)?;
    for file in &templates.files {
        db.execute(
            &queries::RECORD_TEMPLATE_VERSION,
            &[
                (":name", file.name.as_str().into()),
                (":version", file.version.into()),
                (":kind", file.kind.as_str().into()),
                (":checksum", file.checksum.as_str().into()),
                (":body", file.source.as_str().into()),
                (":run_id", run_id.into()),
            ],
        )?;
        db.execute(
            &queries::RECORD_RUN_TEMPLATE,
            &[
                (":run_id", run_id.into()),
                (":name", file.name.as_str().into()),
                (":version", file.version.into()),
                (":kind", file.kind.as_str().into()),
            ],
        )?;
    }
    Ok(())
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

/// The columns of a table, in order (none: there is no such table).
fn table_columns(db: &mut Db, table: &str) -> Result<Vec<String>> {
    db.rows(&queries::COLUMN_TYPES, &[(":table", table.into())])?
        .iter()
        .map(|r| Ok(r.text(0)?))
        .collect()
}

/// A serializable value as a template variable.
pub fn to_value<T: Serialize>(value: &T) -> Value {
    Value::from(minijinja::value::Serde(value))
}

/// The time variables every template may use: ds, next_ds, prev_ds, ds_nodash, run_id.
/// (On PostgreSQL a date prints as a date: see `templates::sql_literal`.)
pub fn time_vars(ds: &str, run_id: i64) -> Value {
    let date =
        crate::interval::parse_date(ds, "date").expect("dates are validated before rendering");
    let next = date.succ_opt().map(crate::interval::fmt_date);
    let prev = date.pred_opt().map(crate::interval::fmt_date);
    context! {
        ds => ds,
        next_ds => next,
        prev_ds => prev,
        ds_nodash => ds.replace('-', ""),
        run_id => run_id,
    }
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

/// A model from its file's header, or every problem of the header, each with its fix.
fn model_from(file: &TemplateFile) -> std::result::Result<Model, Vec<String>> {
    let mut problems = Vec::new();
    let name = file.name.trim_start_matches("models/").to_string();
    let table = file
        .header
        .get("table")
        .cloned()
        .unwrap_or_else(|| name.clone());
    let date_column = file
        .header
        .get("date_column")
        .cloned()
        .unwrap_or_else(|| "ds".into());
    let mut key = file.list("key");
    if key.is_empty() {
        key.push(date_column.clone());
    }
    if !key.contains(&date_column) {
        problems.push(format!(
            "`-- key: {}` must include the date column {date_column}: write `-- key: {date_column}, {}`",
            key.join(", "),
            key.join(", ")
        ));
    }
    let values = file.list("values");
    if values.is_empty() {
        problems.push(
            "no `-- values:` in its header; list the value columns its SELECT returns besides the key (corrections compare them), e.g. `-- values: revenue, order_count`".into(),
        );
    }
    let seal_values = file.list("seal_values");
    for v in seal_values.iter().filter(|v| !values.contains(v)) {
        problems.push(format!(
            "`-- seal_values:` names {v}, which is not one of its values; add it to `-- values:` or leave it out"
        ));
    }
    // The contract's `seals` has these two value columns; seal.sql copies into them by name.
    const SEALS_COLUMNS: [&str; 2] = ["revenue", "order_count"];
    for v in seal_values
        .iter()
        .filter(|v| !SEALS_COLUMNS.contains(&v.as_str()))
    {
        problems.push(format!(
            "`-- seal_values:` names {v}, but seals has only the columns revenue and order_count; \
             every model's sent values are kept in its <table>_sent anyway, so leave `-- seal_values:` out"
        ));
    }
    if !seal_values.is_empty() && key != [date_column.clone()] {
        problems.push(format!(
            "`-- seal_values:` needs one row per date: its key must be the date column only (`-- key: {date_column}`), or leave `-- seal_values:` out"
        ));
    }
    let mut columns = key.clone();
    columns.extend(values.iter().cloned());
    let mut seen = BTreeSet::new();
    for c in &columns {
        if !seen.insert(c) {
            problems.push(format!(
                "column {c} is listed twice in `-- key:` and `-- values:`; key and values must be distinct columns"
            ));
        }
    }
    if columns.iter().any(|c| c == "run_id") {
        problems.push(
            "run_id is sqlrun's own column (it fills it with the run that computed each row); leave it out of `-- key:` and `-- values:`".into(),
        );
    }
    let sources = match file.header.get("sources").map(|text| parse_sources(text)) {
        None => Vec::new(),
        Some(Ok(sources)) => sources,
        Some(Err(problem)) => {
            problems.push(problem);
            Vec::new()
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Model {
        corrections_table: format!("{table}_corrections"),
        current_view: format!("{table}_current"),
        sent_table: format!("{table}_sent"),
        sent_view: format!("{table}_sent_vs_now"),
        name,
        template: file.include_name.clone(),
        file: file.path.clone(),
        version: file.version,
        table,
        date_column,
        key,
        values,
        columns,
        depends_on: file.list("depends_on"),
        seal_values,
        create: file.header.get("create").cloned(),
        sources,
    })
}

/// `-- sources: orders(order_date, key order_id), refunds(refund_date)`: each source table
/// with the column that dates its rows and, optionally, the key its records share.
fn parse_sources(text: &str) -> std::result::Result<Vec<Source>, String> {
    let usage = "write `-- sources: TABLE(DATE_COLUMN)` or `TABLE(DATE_COLUMN, key KEY_COLUMN)`, \
                 several separated by commas, e.g. `-- sources: orders(order_date, key order_id)`";
    let mut sources = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (table, after) = rest
            .split_once('(')
            .ok_or_else(|| format!("`-- sources: {text}` names no date column; {usage}"))?;
        let (inside, after) = after
            .split_once(')')
            .ok_or_else(|| format!("`-- sources: {text}` has an unclosed `(`; {usage}"))?;
        let mut parts = inside.split(',').map(str::trim);
        let date_column = parts.next().unwrap_or_default().to_string();
        let key = match parts
            .next()
            .map(|p| p.split_whitespace().collect::<Vec<_>>())
        {
            None => None,
            Some(words) if words.len() == 2 && words[0] == "key" => Some(words[1].to_string()),
            Some(words) => {
                return Err(format!(
                    "`-- sources:` for {}: `{}` is not `key COLUMN`; {usage}",
                    table.trim(),
                    words.join(" ")
                ))
            }
        };
        let table = table.trim().to_string();
        if table.is_empty() || date_column.is_empty() || parts.next().is_some() {
            return Err(format!("`-- sources: {text}` is not understood; {usage}"));
        }
        sources.push(Source::new(table, date_column, key));
        rest = after.trim_start();
        if let Some(next) = rest.strip_prefix(',') {
            rest = next.trim_start();
        } else if !rest.is_empty() {
            return Err(format!(
                "`-- sources: {text}`: expected `,` before `{rest}`; {usage}"
            ));
        }
    }
    Ok(sources)
}

/// The sources of all models, once each. A source is not a model's table (those are
/// recomputed with the date), and two models that read one source see it alike.
fn pipeline_sources(models: &[Model]) -> Result<Vec<Source>> {
    let mut sources: Vec<Source> = Vec::new();
    for model in models {
        for source in &model.sources {
            let bad = |message: String| Error::Template {
                file: model.template.clone(),
                message,
            };
            if let Some(other) = models.iter().find(|m| m.table == source.table) {
                return Err(bad(format!(
                    "`-- sources:` names {}, the table of model {}: models are recomputed with \
                     each date, so list it in `-- depends_on: {}` instead",
                    source.table, other.name, other.name
                )));
            }
            match sources.iter().find(|s| s.table == source.table) {
                Some(seen) if seen != source => {
                    return Err(bad(format!(
                        "`-- sources:` declares {} differently from another model; every model \
                         must give a source the same date column and key",
                        source.table
                    )))
                }
                Some(_) => {}
                None => sources.push(source.clone()),
            }
        }
    }
    Ok(sources)
}

/// Orders items so that each comes after what it depends on; ties by name.
fn dependency_order<T>(
    items: Vec<T>,
    name: impl Fn(&T) -> &String,
    deps: impl Fn(&T) -> &Vec<String>,
    what: &str,
) -> Result<Vec<T>> {
    let names: BTreeSet<String> = items.iter().map(|i| name(i).clone()).collect();
    for item in &items {
        if let Some(missing) = deps(item).iter().find(|d| !names.contains(*d)) {
            return Err(Error::Template {
                file: format!("{what}s/{}.sql", name(item)),
                message: format!(
                    "`-- depends_on:` names {missing}, which is not a {what} of this pipeline"
                ),
            });
        }
    }
    let mut pending: BTreeMap<String, T> =
        items.into_iter().map(|i| (name(&i).clone(), i)).collect();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    while !pending.is_empty() {
        let ready: Vec<String> = pending
            .iter()
            .filter(|(_, i)| deps(i).iter().all(|d| done.contains(d)))
            .map(|(n, _)| n.clone())
            .collect();
        if ready.is_empty() {
            let cycle: Vec<String> = pending.keys().cloned().collect();
            return Err(Error::Template {
                file: format!("{what}s/"),
                message: format!("`-- depends_on:` forms a cycle among {}", cycle.join(", ")),
            });
        }
        for n in ready {
            out.push(pending.remove(&n).expect("ready names are pending"));
            done.insert(n);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_pipeline_renders_a_date() {
        let p = Pipeline::load(None, Dialect::Sqlite).unwrap();
        assert_eq!(p.signature(), "models/daily_revenue@2");
        let vars = DateVars {
            ds: "2026-02-09",
            run_id: 7,
            sealed: false,
            started_at: "2026-11-29 00:00:00",
            lease_seconds: 900,
        };
        let sql = p.render_date(&vars).unwrap();
        assert!(
            sql.contains("DELETE FROM \"daily_revenue\" WHERE \"ds\" = '2026-02-09';"),
            "{sql}"
        );
        assert!(sql.contains("o.order_date = '2026-02-09'"), "{sql}");
        assert!(sql.contains("FROM orders_latest AS o"), "{sql}");
        assert!(sql.contains("VALUES (7, '2026-02-09',"), "{sql}");
        let sealed = p
            .render_date(&DateVars {
                sealed: true,
                ..vars
            })
            .unwrap();
        assert!(
            sealed.contains("INSERT INTO \"daily_revenue_corrections\""),
            "{sealed}"
        );
        assert!(
            !sealed.contains("DELETE FROM \"daily_revenue\""),
            "{sealed}"
        );
    }

    #[test]
    fn a_date_executes_the_same_text_for_every_date() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let p = Pipeline::load(None, dialect).unwrap();
            let vars = |ds| DateVars {
                ds,
                run_id: 7,
                sealed: false,
                started_at: "2026-11-29 00:00:00",
                lease_seconds: 900,
            };
            let (a, b) = (
                p.bind_date(&vars("2026-02-09")).unwrap(),
                p.bind_date(&vars("2031-12-31")).unwrap(),
            );
            assert_eq!(a.sql, b.sql, "{dialect:?}");
            assert!(!a.sql.contains("2026-02-09"), "{}", a.sql);
            assert!(a
                .params
                .iter()
                .any(|(_, v)| *v == crate::db::Value::Text("2026-02-09".into())));
            assert_ne!(a.params, b.params);
        }
    }

    #[test]
    fn time_vars_cover_month_ends() {
        let v = time_vars("2028-03-01", 1);
        assert_eq!(v.get_attr("prev_ds").unwrap().as_str(), Some("2028-02-29"));
        assert_eq!(v.get_attr("ds_nodash").unwrap().as_str(), Some("20280301"));
    }

    #[test]
    fn dependency_cycles_are_refused() {
        let items = vec![
            ("a".to_string(), vec!["b".to_string()]),
            ("b".to_string(), vec!["a".to_string()]),
        ];
        let err = dependency_order(items, |i| &i.0, |i| &i.1, "model")
            .err()
            .unwrap();
        assert!(err.to_string().contains("cycle"), "{err}");
        let items = vec![
            ("b".to_string(), vec!["a".to_string()]),
            ("a".to_string(), vec![]),
        ];
        let sorted = dependency_order(items, |i| &i.0, |i| &i.1, "model").unwrap();
        assert_eq!(sorted[0].0, "a");
    }
}
