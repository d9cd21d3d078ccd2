//! The pipeline: the models and views of a template folder, in dependency order, and the
//! database objects they need (tables, `<table>_corrections`, `<table>_current`, views).

pub mod cascade;
pub mod checks;
pub mod declare;
pub mod declared;
pub mod grains;
pub mod measures;
pub mod model_sql;
pub mod models;
pub mod ready;
pub mod retention;
pub mod source_map;
pub mod sync;
pub mod templates;
pub mod versions;
pub mod waits;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use chrono_tz::Tz;
use minijinja::context;
use minijinja::value::Value;
use serde::Serialize;

use crate::db::Dialect;
use crate::error::{Error, Result};
use crate::pipeline::checks::Check;
use crate::pipeline::templates::{Bound, TemplateFile, TemplateKind, TemplateSet};
use crate::text::words::Severity;

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
    /// `<table>_sent_history`: every version sent, per key, with who sent it.
    pub history_view: String,
    /// `<table>_history`: the rows each replace took out, with the run that built them
    /// and the run that replaced them (system/history_table.sql).
    pub history_table: String,
    /// `<table>_corrections_feed`: each correction with its seal version, cause and author.
    pub feed_view: String,
    pub depends_on: Vec<String>,
    /// `-- grain:`: how long its partitions are (a day by default).
    pub grain: crate::dates::period::Grain,
    /// What each of its partitions reads of other models' and sources' periods
    /// (`-- depends_on: M window -6..0`, `-- sources: S(...) window -6..0`).
    pub reads: Vec<grains::Read>,
    /// Values copied into `seals` when a date is sealed.
    pub seal_values: Vec<String>,
    /// `-- additive:`: the value columns whose numbers add up across keys and dates (None:
    /// the rule of `measures.rs` decides, by kind and name).
    pub additive: Option<Vec<String>>,
    /// DDL from the header, run when the table does not exist yet.
    pub create: Option<String>,
    /// The tables outside the pipeline it reads (`-- sources:`), by their dates.
    pub sources: Vec<Source>,
    /// The lookup tables it reads (`-- sources: customers(via orders.customer_id)`).
    pub lookups: Vec<Lookup>,
    /// `-- sources:` as written (the two above are made from it and `sources/`).
    #[serde(skip)]
    pub source_refs: Vec<SourceRef>,
    /// `-- ready:`: the condition, as written, under which a date's sources are ready
    /// (a date where it is false is not built); rendered as the template [`ready_name`].
    pub ready: Option<String>,
}

/// The name a model's `-- ready:` condition is rendered under: its file's, for messages.
pub fn ready_name(model: &Model) -> String {
    format!("{} (its `-- ready:` line)", model.file)
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
        Source {
            function: trigger_function(&table),
            table,
            date_column,
            key,
        }
    }
}

/// The name of a tracked table's trigger function on PostgreSQL: `sqlrun_changes_<table>`,
/// shortened with a hash of the table's name where that would pass PostgreSQL's 63 bytes
/// (two long names must not end up sharing one function).
fn trigger_function(table: &str) -> String {
    let function = format!("sqlrun_changes_{table}");
    if function.len() <= 63 {
        return function;
    }
    let digest = crate::pipeline::templates::checksum(table);
    let mut cut = 30;
    while !table.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("sqlrun_changes_{}_{}", &table[..cut], &digest[..12])
}

/// A lookup table a model reads (customers, products: rows without dates), reached from
/// one of its dated sources by a column that holds the lookup's key
/// (`-- sources: orders(order_date), customers(key customer_id via orders.customer_id)`).
/// A change of a lookup row notes the dates of the fact rows that hold its key
/// (system/lookup_tracking.sql), so exactly those dates show as `changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lookup {
    pub table: String,
    pub key: String,
    /// The dated source whose rows hold the key, and the column they hold it in.
    pub fact: String,
    pub fact_column: String,
    /// The fact's date column: the dates the notes are on.
    pub fact_date: String,
    /// What the notes join: the fact's current rows (its `_latest` view when it is
    /// declared with `-- latest_by:`), else the fact table itself.
    pub fact_rows: String,
    /// Its trigger function's name on PostgreSQL.
    pub function: String,
}

/// A table whose change notes a date takes (a dated source or a lookup): what
/// system/record_sources.sql and the date states read.
#[derive(Debug, Clone, Serialize)]
struct Noted<'a> {
    table: &'a str,
    /// The days around a date whose notes also mark it changed: the widest `window` a
    /// model declares on this source (None: the date's own notes only).
    window: Option<grains::Window>,
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
    /// Every lookup the models declare, once each.
    pub lookups: Vec<Lookup>,
    /// The sources declared in `sources/` (created, tracked and given a `_latest` view).
    pub declared: Vec<declared::Declared>,
    /// `--select`: the models a date computes (those named and everything downstream of
    /// them); None: every model.
    pub selected: Option<BTreeSet<String>>,
    /// Every model's checks (`checks/`).
    pub checks: Vec<Check>,
    /// What every date renders with alike (its models, checks and sources), made once:
    /// serializing them for each date cost more than the date's checks.
    date_values: OnceLock<Value>,
    /// How long `<table>_history` keeps what a replace took out (`[history] keep`).
    pub retention: retention::Retention,
}

/// The model or check a statement of a date's SQL belongs to.
pub enum Owner<'a> {
    Model(&'a Model),
    Check(&'a Check),
}

/// A check as a date's SQL includes it: with its model.
#[derive(Serialize)]
struct CheckOfDate<'a> {
    #[serde(flatten)]
    check: &'a Check,
    model: &'a Model,
}

/// What `run_id` prints as in SQL shown before a run exists: a named parameter, which
/// both sqlite3 (`.parameter set :run_id 5`) and psql (`\set run_id 5`) can bind.
pub const RUN_ID_PLACEHOLDER: &str = ":run_id";

/// The time variables and run facts a date is rendered with.
pub struct DateVars<'a> {
    pub ds: &'a str,
    pub run_id: i64,
    pub sealed: bool,
    /// On a sealed date, the models its seal does not cover (first computed there after
    /// the seal): they are replaced, the others corrected. Read by the run just before the
    /// date's transaction; it cannot change meanwhile (the run holds the date).
    pub uncovered: &'a [String],
    pub started_at: &'a str,
    /// The lease each date's commit renews on the dates the run still holds.
    pub lease_seconds: i64,
    /// `sqlrun undo`: the models whose rows this date puts back from history (None: an
    /// ordinary date, every model computed by its SELECT).
    pub undo: Option<&'a DateUndo>,
    /// The partitions the date builds, when the cascade planned them (a pipeline with
    /// other grains or windows); None: every model computed, at the date.
    pub parts: Option<&'a [DatePart]>,
}

/// One partition a date builds, as its SQL is rendered: the model, the first day of its
/// period (`ds`, what the bookkeeping is keyed by), the partition column's value at its
/// start and at its (half-open) end, and whether its first day is sealed and which models
/// that seal leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatePart {
    pub model: String,
    pub ds: String,
    pub start: PartitionKey,
    pub end: PartitionKey,
    /// The half-open span its windows read (`window_start`, `window_end`): the first
    /// upstream period's start and the last one's end; the period itself without a window.
    pub window: (PartitionKey, PartitionKey),
    /// Built before its period ended (`--allow-partial`): never sealed.
    pub provisional: bool,
    pub sealed: bool,
    pub uncovered: Vec<String>,
    /// `sqlrun undo RUN`: its rows are those RUN replaced (system/undo_rows.sql), not its
    /// SELECT's. Per part: a cascaded date may put back a month whose first day is another.
    pub restored: bool,
}

/// A partition column's value: a date, or an hour's first instant (UTC text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionKey {
    Date(String),
    Instant(String),
}

impl PartitionKey {
    /// The partition column's value at the start of `period`.
    pub fn of(period: crate::dates::period::Period) -> PartitionKey {
        match period {
            crate::dates::period::Period::Hour(_) => PartitionKey::Instant(period.key()),
            crate::dates::period::Period::Days(..) => PartitionKey::Date(period.key()),
        }
    }

    /// As a template variable: a date is text (printed as a date), an instant a
    /// [`templates::Timestamp`].
    pub fn value(&self) -> Value {
        match self {
            PartitionKey::Date(d) => Value::from(d.as_str()),
            PartitionKey::Instant(t) => Value::from_object(templates::Timestamp(t.clone())),
        }
    }
}

/// One date of `sqlrun undo RUN`: the models whose rows RUN replaced there and that still
/// hold them; the date computes those (their rows from `<table>_history`, by
/// system/undo_rows.sql) and the models downstream of them (by their own SQL: the
/// cascade), and no other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateUndo {
    /// RUN, the run undone.
    pub of: i64,
    pub restored: Vec<String>,
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
            .map(|f| model_from(f).map_err(|p| templates::header_error(f, p)))
            .collect::<Result<Vec<_>>>()?;
        grain_problems(&models, &templates)?;
        let models = dependency_order(models, |m| &m.name, |m| &m.depends_on, "model")?;
        let mut templates = templates;
        for model in &models {
            if let Some(ready) = &model.ready {
                templates.add_fragment(&ready_name(model), ready)?;
            }
        }
        let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
        let hourly: Vec<&str> = (models.iter())
            .filter(|m| m.grain == crate::dates::period::Grain::Hour)
            .map(|m| m.name.as_str())
            .collect();
        let checks = checks_from(&templates, &names, &hourly)?;
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
        let declared = declared_sources(&templates)?;
        let mut models = models;
        resolve_models_sources(&mut models, &declared, &templates)?;
        let sources = pipeline_sources(&models)?;
        let lookups = pipeline_lookups(&models, &sources, &templates)?;
        let views = templates
            .of_kind(TemplateKind::View)
            .map(|f| View {
                name: f.name.trim_start_matches("views/").to_string(),
                template: f.include_name.clone(),
                depends_on: f.list("depends_on"),
            })
            .collect::<Vec<_>>();
        let views = dependency_order(views, |v| &v.name, |v| &v.depends_on, "view")?;
        refuse_generated_view_files(&views, &declared)?;
        Ok(Pipeline {
            dialect,
            templates,
            models,
            views,
            sources,
            lookups,
            declared,
            selected: None,
            checks,
            date_values: OnceLock::new(),
            retention: retention::Retention::default(),
        })
    }

    /// `--select`: a date computes the named models and every model downstream of them
    /// (that depends on them, directly or not), in dependency order; the others keep their
    /// rows. An unknown name is bad input.
    pub fn select(&mut self, names: &[String]) -> Result<()> {
        // `M+` (dbt's spelling) is what `M` always meant here: M and its downstream.
        let names: Vec<String> = names
            .iter()
            .map(|n| n.strip_suffix('+').unwrap_or(n).to_string())
            .collect();
        self.known_models(&names)?;
        let mut chosen: BTreeSet<String> = names.into_iter().collect();
        // Models come in dependency order, so one pass finds everything downstream.
        for model in &self.models {
            if model.depends_on.iter().any(|d| chosen.contains(d)) {
                chosen.insert(model.name.clone());
            }
        }
        self.selected = Some(chosen);
        self.date_values = OnceLock::new();
        Ok(())
    }

    /// Every name in `--select` is a model of the pipeline (an unknown one is bad input).
    pub fn known_models(&self, names: &[String]) -> Result<()> {
        match names.iter().find(|name| self.model(name).is_none()) {
            None => Ok(()),
            Some(name) => {
                let known: Vec<&str> = self.models.iter().map(|m| m.name.as_str()).collect();
                Err(Error::bad(format!(
                    "--select {name}: no such model; this pipeline's models are: {}",
                    known.join(", ")
                )))
            }
        }
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
    fn recorded_sources(&self) -> Vec<Noted<'_>> {
        let computed = self.computed_models();
        let all_computed = |reads: &dyn Fn(&Model) -> bool| {
            self.models
                .iter()
                .filter(|m| reads(m))
                .all(|m| computed.iter().any(|c| c.name == m.name))
        };
        let sources = self
            .sources
            .iter()
            .filter(|source| all_computed(&|m: &Model| m.sources.contains(source)))
            .map(|s| self.noted_source(&s.table));
        let lookups = self
            .lookups
            .iter()
            .filter(|lookup| all_computed(&|m: &Model| m.lookups.contains(lookup)))
            .map(|l| Noted {
                table: &l.table,
                window: None,
            });
        sources.chain(lookups).collect()
    }

    /// The sources whose notes of day `ds` a cascaded date takes: those every reader of
    /// which it rebuilds on that very day.
    fn date_sources(&self, parts: &[DatePart], ds: &str) -> Vec<Noted<'_>> {
        let rebuilt = |m: &Model| parts.iter().any(|p| p.model == m.name && p.ds == ds);
        self.recorded_sources()
            .into_iter()
            .filter(|noted| {
                self.computed_models()
                    .into_iter()
                    .filter(|m| {
                        m.sources.iter().any(|s| s.table == noted.table)
                            || m.lookups.iter().any(|l| l.table == noted.table)
                    })
                    .all(rebuilt)
            })
            .collect()
    }

    /// A dated source as the date states read its notes, with the widest window a model
    /// reads it through (a 7-day rolling model over orders: a late order marks the seven
    /// dates that read its day).
    fn noted_source<'a>(&self, table: &'a str) -> Noted<'a> {
        let window = self
            .models
            .iter()
            .flat_map(|m| &m.reads)
            .filter(|r| r.source && r.from == table && r.window != (0, 0))
            .map(|r| r.window)
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
        Noted { table, window }
    }

    /// Every table whose change notes mark dates `changed` (the dated sources and the
    /// lookups), as the date states read them.
    pub fn noted_value(&self) -> Value {
        let noted: Vec<Noted> = (self.sources.iter().map(|s| self.noted_source(&s.table)))
            .chain(self.lookups.iter().map(|l| Noted {
                table: &l.table,
                window: None,
            }))
            .collect();
        to_value(&noted)
    }

    /// The checks a date runs: those of the models it computes, in the models' order.
    pub fn computed_checks(&self) -> Vec<&Check> {
        let models = self.computed_models();
        models
            .iter()
            .flat_map(|m| self.checks.iter().filter(|c| c.model == m.name))
            .collect()
    }

    pub fn check(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// What a statement of a date's SQL belongs to, by the name its `-- sqlrun context:`
    /// line gives (a model's, or `checks/NAME`): what an error in it names.
    pub fn owner(&self, context: &str) -> Option<Owner<'_>> {
        match self.model(context) {
            Some(model) => Some(Owner::Model(model)),
            None => context
                .strip_prefix("checks/")
                .and_then(|c| self.check(c))
                .map(Owner::Check),
        }
    }

    fn checks_value(&self, checks: &[&Check]) -> Value {
        let of_date: Vec<CheckOfDate> = checks
            .iter()
            .map(|check| CheckOfDate {
                check,
                model: self.model(&check.model).expect("a check names a model"),
            })
            .collect();
        to_value(&of_date)
    }

    /// One check's SQL for a date (`system/check.sql`), values as literals, as
    /// `render --date D CHECK` shows it.
    pub fn render_check(&self, check: &Check, ds: &str, sealed: bool) -> Result<String> {
        self.templates.render(
            "system/check.sql",
            self.check_context(check, (ds, sealed), 0),
        )
    }

    /// The same with its values as parameters, as `sqlrun check` runs it, and a date of
    /// `run_id` reads a check that found rows.
    pub fn bind_check(&self, check: &Check, ds: &str, sealed: bool, run_id: i64) -> Result<Bound> {
        self.templates.render_bound(
            "system/check.sql",
            self.check_context(check, (ds, sealed), run_id),
        )
    }

    fn check_context(&self, check: &Check, (ds, sealed): (&str, bool), run_id: i64) -> Value {
        let checks = self.checks_value(&[check]);
        context! {
            check => checks.get_item(&Value::from(0)).expect("one check"),
            sealed => sealed,
            sample_rows => crate::pipeline::checks::SAMPLE_ROWS,
            ..time_vars(ds, run_id)
        }
    }

    /// The models of a date whose `-- ready:` condition is false, as one query
    /// (`system/ready.sql`), values as parameters; None when no model it computes has one.
    pub fn bind_ready(&self, ds: &str) -> Result<Option<Bound>> {
        self.ready_context(ds)
            .map(|c| self.templates.render_bound("system/ready.sql", c))
            .transpose()
    }

    /// The same with its values as literals, for review (and the row shapes' test).
    pub fn render_ready(&self, ds: &str) -> Result<Option<String>> {
        self.ready_context(ds)
            .map(|c| self.templates.render("system/ready.sql", c))
            .transpose()
    }

    /// What `system/ready.sql` renders with: the computed models that declare `-- ready:`.
    fn ready_context(&self, ds: &str) -> Option<Value> {
        let waiting: Vec<&Model> = self
            .computed_models()
            .into_iter()
            .filter(|m| m.ready.is_some())
            .collect();
        (!waiting.is_empty())
            .then(|| context! { waiting => self.ready_models(&waiting), ..time_vars(ds, 0) })
    }

    fn ready_models(&self, models: &[&Model]) -> Value {
        let listed: Vec<Value> = models
            .iter()
            .map(|m| context! { name => &m.name, condition => ready_name(m), model => to_value(m) })
            .collect();
        Value::from(listed)
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

    /// The date's SQL for review (`render --date D`, `system/review_date.sql`): the
    /// readiness query, when a model it computes declares `-- ready:`, then the
    /// transaction.
    pub fn review_date(&self, vars: &DateVars) -> Result<String> {
        self.templates.render(
            "system/review_date.sql",
            context! { waiting => self.waiting(vars.ds), ..self.date_context(vars) },
        )
    }

    /// The same for a date no run owns (`render --dialect` for the other backend): `run_id`
    /// prints as the placeholder [`RUN_ID_PLACEHOLDER`].
    pub fn review_date_unclaimed(&self, vars: &DateVars) -> Result<String> {
        let run_id = Value::from_safe_string(RUN_ID_PLACEHOLDER.to_string());
        self.templates.render(
            "system/review_date.sql",
            context! { run_id => run_id, waiting => self.waiting(vars.ds), ..self.date_context(vars) },
        )
    }

    /// The models of a date that declare `-- ready:` (false: none), as review_date.sql
    /// takes them.
    fn waiting(&self, ds: &str) -> Value {
        self.ready_context(ds)
            .and_then(|c| c.get_attr("waiting").ok())
            .unwrap_or_else(|| Value::from(false))
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

    /// Another system template of one date (`apply --diff`'s system/preview.sql), values
    /// as parameters: what a date renders with (its models, checks, sources, time
    /// variables), and `extra`.
    pub fn bind_date_system(&self, name: &str, vars: &DateVars, extra: Value) -> Result<Bound> {
        let file = self.templates.system(name);
        let context = minijinja::value::merge_maps([self.date_context(vars), extra]);
        self.templates.render_bound(&file.include_name, context)
    }

    /// The same with its values as literals, for review (and the row shapes' test).
    pub fn render_date_system(&self, name: &str, vars: &DateVars, extra: Value) -> Result<String> {
        let file = self.templates.system(name);
        let context = minijinja::value::merge_maps([self.date_context(vars), extra]);
        self.templates.render(&file.include_name, context)
    }

    fn date_context(&self, vars: &DateVars) -> Value {
        let alike = self.date_values.get_or_init(|| {
            context! {
                models => to_value(&self.computed_models()),
                checks => self.checks_value(&self.computed_checks()),
                sources => to_value(&self.recorded_sources()),
                keep_seconds => self.retention.seconds(),
                keep_versions => self.retention.versions(),
            }
        });
        let no_models: &[String] = &[];
        let this_date = context! {
            sealed => vars.sealed,
            uncovered => to_value(&vars.uncovered),
            started_at => vars.started_at,
            lease_seconds => vars.lease_seconds,
            undo_of => vars.undo.map(|u| u.of),
            restored => to_value(&vars.undo.map_or(no_models, |u| &u.restored)),
            ..time_vars(vars.ds, vars.run_id)
        };
        // An undo's date computes fewer models than the run's selection, a cascaded date
        // its parts: the last map wins (minijinja's merge_maps).
        let models: Vec<&Model> = match (vars.parts, vars.undo) {
            (Some(parts), _) => self
                .models
                .iter()
                .filter(|m| parts.iter().any(|p| p.model == m.name))
                .collect(),
            (None, Some(u)) => self.undo_models(&u.restored),
            (None, None) => self.computed_models(),
        };
        let parts = self.parts_value(vars, &models);
        let first = match vars.parts {
            // A cascaded date takes a source's notes of its day only when it rebuilds, on
            // that day, every model that reads the source: a date that builds only a week or
            // a rolling day must leave them for the day's own models.
            Some(own) => context! {
                models => to_value(&models), parts => parts, cascaded => true,
                sources => to_value(&self.date_sources(own, vars.ds)),
            },
            None => context! { models => to_value(&models), parts => parts },
        };
        let maps = [alike.clone(), this_date, first];
        minijinja::value::merge_maps(maps)
    }

    /// The date's partitions as date.sql takes them: the cascade's, or each model at the
    /// date.
    fn parts_value(&self, vars: &DateVars, models: &[&Model]) -> Value {
        let parts: Vec<Value> = match vars.parts {
            Some(parts) => parts
                .iter()
                .filter_map(|p| Some(part_value(self.model(&p.model)?, p)))
                .collect(),
            None => models
                .iter()
                .map(|m| {
                    let at = || PartitionKey::Date(vars.ds.to_string());
                    let next = time_vars(vars.ds, 0)
                        .get_attr("next_ds")
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default();
                    let end = || PartitionKey::Date(next.clone());
                    let part = DatePart {
                        model: m.name.clone(),
                        ds: vars.ds.to_string(),
                        start: at(),
                        end: end(),
                        window: (at(), end()),
                        provisional: false,
                        sealed: vars.sealed,
                        uncovered: vars.uncovered.to_vec(),
                        restored: vars.undo.is_some_and(|u| u.restored.contains(&m.name)),
                    };
                    part_value(m, &part)
                })
                .collect(),
        };
        Value::from(parts)
    }

    /// The models an undo's date computes, in dependency order: those `restored` and every
    /// model downstream of them.
    pub fn undo_models(&self, restored: &[String]) -> Vec<&Model> {
        let mut chosen: BTreeSet<&str> = restored.iter().map(String::as_str).collect();
        let mut models = Vec::new();
        for model in self.computed_models() {
            if chosen.contains(model.name.as_str())
                || model.depends_on.iter().any(|d| chosen.contains(d.as_str()))
            {
                chosen.insert(&model.name);
                models.push(model);
            }
        }
        models
    }

    /// One model's SELECT for a date, as `render --date D MODEL` shows it.
    /// A model's SELECT as the run renders it for the partition that holds day `ds`: a
    /// day's, or for a week, a month, an hour or a window that partition's own period and
    /// span (`render --date D MODEL`; an hourly model: the day's first hour).
    pub fn render_model(&self, model: &Model, ds: &str, run_id: i64, zone: Tz) -> Result<String> {
        let own = context! { run_id => run_id };
        let vars = match self.model_part(model, ds, zone)? {
            Some(part) => minijinja::value::merge_maps([part_value(model, &part), own]),
            None => context! { model => to_value(model), ..time_vars(ds, run_id) },
        };
        self.templates.render(&model.template, vars)
    }

    /// The partition of `model` that holds day `ds`, for a model of another grain or with
    /// a window (None: a day's, the day's variables say it).
    fn model_part(&self, model: &Model, ds: &str, zone: Tz) -> Result<Option<DatePart>> {
        use crate::dates::period::{Grain, Period};
        let windowed = model.reads.iter().any(|r| r.window != (0, 0));
        if model.grain == Grain::Day && !windowed {
            return Ok(None);
        }
        let day = crate::dates::interval::parse_date(ds, "--date")?;
        let period = Period::of_date(model.grain, day, zone);
        let (from, to) = cascade::window(self, model, period, zone);
        Ok(Some(DatePart {
            model: model.name.clone(),
            ds: crate::dates::interval::fmt_date(period.first_day(zone)),
            start: PartitionKey::of(period),
            end: PartitionKey::of(period.next()),
            window: (PartitionKey::of(from), PartitionKey::of(to.next())),
            provisional: false,
            sealed: false,
            uncovered: Vec::new(),
            restored: false,
        }))
    }

    /// The same with its values as parameters, as a date's SQL includes it.
    pub fn bind_model(&self, model: &Model, ds: &str) -> Result<Bound> {
        self.templates.render_bound(
            &model.template,
            context! { model => to_value(model), ..time_vars(ds, 0) },
        )
    }

    /// The text of a template file as written (its source, for pointing into it).
    pub fn source_of(&self, include_name: &str) -> Option<&str> {
        let file = self
            .templates
            .files
            .iter()
            .find(|f| f.include_name == include_name);
        file.map(|f| f.source.as_str())
    }

    /// Renders a system template with `context`, values as literals (DDL, and reads).
    /// Where a model's file is, for messages.
    pub fn path_of<'a>(&'a self, model: &'a Model) -> &'a str {
        &model.file
    }

    pub fn render_system(&self, name: &str, context: Value) -> Result<String> {
        let file = self.templates.system(name);
        self.templates.render(&file.include_name, context)
    }

    /// Renders a system template that writes, values as parameters (`Db::run_script`).
    pub fn bind_system(&self, name: &str, context: Value) -> Result<Bound> {
        let file = self.templates.system(name);
        self.templates.render_bound(&file.include_name, context)
    }
}

/// A serializable value as a template variable.
pub fn to_value<T: Serialize>(value: &T) -> Value {
    Value::from(minijinja::value::Serde(value))
}

/// The time variables every template may use: ds, next_ds, prev_ds, ds_nodash, run_id.
/// (On PostgreSQL a date prints as a date: see `templates::sql_literal`.)
/// One part as date.sql takes it: its model, seal, and the time variables of its own
/// period (`ds`, `next_ds`, `prev_ds`, `ds_nodash` of its first day, which for a cascaded
/// part may not be the transaction's date).
fn part_value(model: &Model, part: &DatePart) -> Value {
    let day = time_vars(&part.ds, 0);
    let own = context! {
        model => to_value(model),
        period_start => part.start.value(),
        period_end => part.end.value(),
        window_start => part.window.0.value(),
        window_end => part.window.1.value(),
        provisional => part.provisional,
        sealed => part.sealed,
        uncovered => to_value(&part.uncovered),
        restored => part.restored,
    };
    minijinja::value::merge_maps([day, own])
}

pub fn time_vars(ds: &str, run_id: i64) -> Value {
    let date = crate::dates::interval::parse_date(ds, "date")
        .expect("dates are validated before rendering");
    let next = date.succ_opt().map(crate::dates::interval::fmt_date);
    let prev = date.pred_opt().map(crate::dates::interval::fmt_date);
    context! {
        ds => ds,
        next_ds => next.clone(),
        prev_ds => prev,
        // A day's period, which a cascaded date's partitions replace with their own.
        period_start => ds,
        period_end => next.clone(),
        window_start => ds,
        window_end => next,
        ds_nodash => ds.replace('-', ""),
        run_id => run_id,
    }
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
    problems.extend(seal_values_problems(
        &seal_values,
        &values,
        &key,
        &date_column,
    ));
    let (additive, wrong) = measures::additive(file, &values);
    problems.extend(wrong);
    let mut columns = key.clone();
    columns.extend(values.iter().cloned());
    problems.extend(column_problems(&columns));
    let (grain, reads) = grains::of_header(file.header.get("grain"), &file.list("depends_on"))
        .unwrap_or_else(|mut p| {
            problems.append(&mut p);
            (crate::dates::period::Grain::Day, Vec::new())
        });
    let source_refs = header_sources(file, &mut problems);
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Model {
        corrections_table: format!("{table}_corrections"),
        current_view: format!("{table}_current"),
        sent_table: format!("{table}_sent"),
        sent_view: format!("{table}_sent_vs_now"),
        history_view: format!("{table}_sent_history"),
        history_table: format!("{table}_history"),
        feed_view: format!("{table}_corrections_feed"),
        name,
        template: file.include_name.clone(),
        file: file.path.clone(),
        version: file.version,
        table,
        date_column,
        key,
        values,
        columns,
        depends_on: reads.iter().map(|r| r.from.clone()).collect(),
        grain,
        reads: grains::with_sources(reads, &source_refs),
        seal_values,
        additive,
        create: file.header.get("create").cloned(),
        sources: Vec::new(),
        lookups: Vec::new(),
        source_refs,
        ready: file.header.get("ready").cloned(),
    })
}

/// A model header's `-- sources:`, parsed; a problem joins `problems`.
fn header_sources(file: &TemplateFile, problems: &mut Vec<String>) -> Vec<SourceRef> {
    match file.header.get("sources").map(|text| parse_sources(text)) {
        None => Vec::new(),
        Some(Ok(sources)) => sources,
        Some(Err(problem)) => {
            problems.push(problem);
            Vec::new()
        }
    }
}

/// The checks of a template set, each naming one of `models`; every problem of every
/// check's header at once.
fn checks_from(templates: &TemplateSet, models: &[&str], hourly: &[&str]) -> Result<Vec<Check>> {
    let mut checks = Vec::new();
    let mut problems = Vec::new();
    for file in templates.of_kind(TemplateKind::Check) {
        match check_from(file, models) {
            // Refused rather than passing vacuously: the generic checks read a date's rows
            // by `ds`, and an hour's rows are keyed by its instant.
            Ok(check) if hourly.contains(&check.model.as_str()) => {
                problems.push(templates::header_error(file, vec![format!(
                    "`-- model: {}` is an hourly model, and checks of hourly models are not supported yet (a check reads a date's rows by `ds`; an hour's are keyed by its start); check a daily model over it instead, or leave the check out",
                    check.model
                )]));
            }
            Ok(check) => checks.push(check),
            Err(found) => problems.push(templates::header_error(file, found)),
        }
    }
    match problems.is_empty() {
        true => Ok(checks),
        false => Err(Error::all(problems)),
    }
}

fn check_from(file: &TemplateFile, models: &[&str]) -> std::result::Result<Check, Vec<String>> {
    let mut problems = Vec::new();
    let name = file.name.trim_start_matches("checks/");
    if models.contains(&name) {
        problems.push(format!(
            "a check named like the model {name} would hide it in `sqlrun render --date D {name}`; name it for what it checks, e.g. `{name}_one_row`"
        ));
    }
    let model = match file.header.get("model") {
        Some(m) if models.contains(&m.as_str()) => m.clone(),
        Some(m) => {
            problems.push(format!(
                "`-- model: {m}` is not a model of this pipeline; its models are: {}",
                models.join(", ")
            ));
            String::new()
        }
        None => {
            problems.push(format!(
                "no `-- model:` line in its header; name the model whose rows it checks, e.g. `-- model: {}`",
                models.first().copied().unwrap_or("daily_revenue")
            ));
            String::new()
        }
    };
    let severity = match file.header.get("severity").map(String::as_str) {
        None => Severity::Error,
        Some(text) => Severity::parse(text).unwrap_or_else(|| {
            problems.push(format!(
                "`-- severity: {text}` is not error or warn; write `-- severity: error` (the date rolls back when it fails) or `-- severity: warn` (recorded, the date commits)"
            ));
            Severity::Error
        }),
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Check {
        name: file.name.trim_start_matches("checks/").to_string(),
        template: file.include_name.clone(),
        file: file.path.clone(),
        version: file.version,
        model,
        severity,
        reads_previous: file.source.contains("previous"),
    })
}

/// What is wrong with `-- seal_values:`: each must be a value, one of the contract's
/// `seals` columns, on a model with one row per date.
fn seal_values_problems(
    seal_values: &[String],
    values: &[String],
    key: &[String],
    date_column: &str,
) -> Vec<String> {
    let mut problems = Vec::new();
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
    if !seal_values.is_empty() && key != [date_column] {
        problems.push(format!(
            "`-- seal_values:` needs one row per date: its key must be the date column only (`-- key: {date_column}`), or leave `-- seal_values:` out"
        ));
    }
    problems
}

/// Key and value columns are distinct, and none is sqlrun's own run_id.
fn column_problems(columns: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for c in columns {
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
    problems
}

/// One entry of `-- sources:` as written, before the declarations in `sources/` fill in
/// what it leaves out: `orders`, `orders(order_date)`, `orders(order_date, key order_id)`,
/// `customers(key customer_id via orders.customer_id)`, `customers(via orders.customer_id)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceRef {
    pub table: String,
    pub date_column: Option<String>,
    pub key: Option<String>,
    /// A lookup's path: the dated source and its column that holds the lookup's key.
    pub via: Option<(String, String)>,
    /// `window A..B` after it: the days around each partition it reads.
    pub window: Option<(i64, i64)>,
}

const SOURCES_USAGE: &str = "write `-- sources: TABLE(DATE_COLUMN)` or `TABLE(DATE_COLUMN, key KEY_COLUMN)` \
     (or just `TABLE` for one declared in sources/), and a lookup as `TABLE(key KEY via FACT.COLUMN)`, \
     several separated by commas, e.g. `-- sources: orders(order_date, key order_id)`";

/// `-- sources: orders(order_date, key order_id), customers(via orders.customer_id)`.
fn parse_sources(text: &str) -> std::result::Result<Vec<SourceRef>, String> {
    let usage = SOURCES_USAGE;
    let mut sources = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let end = rest.find([',', '(']).unwrap_or(rest.len());
        let table = rest[..end].trim().to_string();
        let mut source = SourceRef {
            table: table.clone(),
            ..SourceRef::default()
        };
        rest = &rest[end..];
        if let Some(after) = rest.strip_prefix('(') {
            let (inside, after) = after
                .split_once(')')
                .ok_or_else(|| format!("`-- sources: {text}` has an unclosed `(`; {usage}"))?;
            source = parse_source_args(source, inside)?;
            rest = after;
        }
        if let Some(after) = rest.trim_start().strip_prefix("window") {
            let end = after.find(',').unwrap_or(after.len());
            let entry = format!("{} window{}", table, &after[..end]);
            source.window = grains::split_window(&entry, "sources")?.1;
            rest = &after[end..];
        }
        if table.is_empty() || table.contains(char::is_whitespace) {
            return Err(format!("`-- sources: {text}` is not understood; {usage}"));
        }
        sources.push(source);
        rest = rest.trim_start();
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

/// The words inside `TABLE(...)`: a date column first, then `key K` and `via FACT.COLUMN`.
fn parse_source_args(
    mut source: SourceRef,
    inside: &str,
) -> std::result::Result<SourceRef, String> {
    let usage = SOURCES_USAGE;
    let table = source.table.clone();
    let words: Vec<&str> = inside
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let mut i = 0;
    while i < words.len() {
        let next = words.get(i + 1).copied();
        match (words[i], next) {
            ("key", Some(k)) if source.key.is_none() => source.key = Some(k.to_string()),
            ("via", Some(path)) if source.via.is_none() => match path.split_once('.') {
                Some((fact, column)) if !fact.is_empty() && !column.is_empty() => {
                    source.via = Some((fact.to_string(), column.to_string()))
                }
                _ => {
                    return Err(format!(
                        "`-- sources:` for {table}: `via {path}` is not `via FACT.COLUMN`; {usage}"
                    ))
                }
            },
            ("key" | "via", _) => {
                return Err(format!(
                "`-- sources:` for {table}: `{}` is not `key COLUMN` or `via FACT.COLUMN`; {usage}",
                words[i..].join(" ")
            ))
            }
            (column, _) if i == 0 => {
                source.date_column = Some(column.to_string());
                i += 1;
                continue;
            }
            _ => {
                return Err(format!(
                    "`-- sources:` for {table}: `{}` is not `key COLUMN`; {usage}",
                    words[i..].join(" ")
                ))
            }
        }
        i += 2;
    }
    Ok(source)
}

/// Each model's `-- sources:` with what the declarations in `sources/` say: its dated
/// sources and its lookups, or what is wrong, said at the model's `-- sources:` line.
fn resolve_sources(
    refs: &[SourceRef],
    declared: &[declared::Declared],
) -> std::result::Result<(Vec<Source>, Vec<Lookup>), String> {
    let sources = resolve_dated(refs, declared)?;
    let lookups = resolve_lookups(refs, declared, &sources)?;
    Ok((sources, lookups))
}

/// The dated sources of `-- sources:`, with what their declarations fill in.
fn resolve_dated(
    refs: &[SourceRef],
    declared: &[declared::Declared],
) -> std::result::Result<Vec<Source>, String> {
    let usage = SOURCES_USAGE;
    let declaration = |table: &str| declared.iter().find(|d| d.name == table);
    let mut sources = Vec::new();
    for r in refs.iter().filter(|r| r.via.is_none()) {
        let d = declaration(&r.table);
        if let Some(d) = d.filter(|d| d.is_lookup()) {
            return Err(format!(
                "`-- sources:` names {}, a lookup ({} declares no date column): say how the model reaches it, e.g. `{}(via FACT.COLUMN)` with FACT one of its dated sources",
                r.table, d.file, r.table
            ));
        }
        let date_column = match (&r.date_column, d.and_then(|d| d.date_column.as_ref())) {
            (Some(given), Some(declared)) if given != declared => {
                return Err(format!(
                    "`-- sources:` gives {} the date column {given}, but {} declares {declared}; write `{}` alone or make them agree",
                    r.table,
                    d.map_or("", |d| d.file.as_str()),
                    r.table
                ))
            }
            (Some(given), _) => given.clone(),
            (None, Some(declared)) => declared.clone(),
            (None, None) => {
                return Err(format!(
                    "`-- sources:` names {} with no date column, and no sources/{}.sql declares it; {usage}",
                    r.table, r.table
                ))
            }
        };
        let key = match (&r.key, d.and_then(|d| d.key.as_ref())) {
            (Some(given), Some(declared)) if given != declared => {
                return Err(format!(
                    "`-- sources:` gives {} the key {given}, but {} declares {declared}; make them agree",
                    r.table,
                    d.map_or("", |d| d.file.as_str())
                ))
            }
            (given, declared) => given.clone().or_else(|| declared.cloned()),
        };
        sources.push(Source::new(r.table.clone(), date_column, key));
    }
    Ok(sources)
}

/// The lookups of `-- sources:`, each reached from one of `sources`.
fn resolve_lookups(
    refs: &[SourceRef],
    declared: &[declared::Declared],
    sources: &[Source],
) -> std::result::Result<Vec<Lookup>, String> {
    let declaration = |table: &str| declared.iter().find(|d| d.name == table);
    let mut lookups = Vec::new();
    for r in refs.iter().filter(|r| r.via.is_some()) {
        let (fact, column) = r.via.clone().expect("filtered on via");
        let d = declaration(&r.table);
        if let Some(d) = d.filter(|d| !d.is_lookup()) {
            return Err(format!(
                "`-- sources:` reaches {} `via {fact}.{column}`, but {} gives it dates ({}); list it as `{}` (a dated source) instead",
                r.table,
                d.file,
                d.date_column.as_deref().unwrap_or_default(),
                r.table
            ));
        }
        if r.date_column.is_some() {
            return Err(format!(
                "`-- sources:` for {}: a lookup reached `via {fact}.{column}` has no date column of its own; write `{}(key KEY via {fact}.{column})`",
                r.table, r.table
            ));
        }
        let key = match (&r.key, d.and_then(|d| d.key.as_ref())) {
            (Some(given), Some(declared)) if given != declared => {
                return Err(format!(
                    "`-- sources:` gives lookup {} the key {given}, but {} declares {declared}; make them agree",
                    r.table,
                    d.map_or("", |d| d.file.as_str())
                ))
            }
            (Some(key), _) | (None, Some(key)) => key.clone(),
            (None, None) => {
                return Err(format!(
                    "`-- sources:` reaches lookup {} `via {fact}.{column}` but names no key, and no sources/{}.sql declares one; write `{}(key KEY via {fact}.{column})`",
                    r.table, r.table, r.table
                ))
            }
        };
        let Some(fact_source) = sources.iter().find(|s| s.table == fact) else {
            return Err(format!(
                "`-- sources:` reaches {} `via {fact}.{column}`, but {fact} is not one of this model's dated sources; list {fact} in `-- sources:` too (the dates a change of {} marks are {fact}'s)",
                r.table, r.table
            ));
        };
        let fact_rows = declaration(&fact)
            .map(|d| d.current_rows().to_string())
            .unwrap_or_else(|| fact.clone());
        lookups.push(Lookup {
            function: trigger_function(&r.table),
            table: r.table.clone(),
            key,
            fact_date: fact_source.date_column.clone(),
            fact,
            fact_column: column,
            fact_rows,
        });
    }
    Ok(lookups)
}

/// The declarations of `sources/`, every header problem of every file at once.
fn declared_sources(templates: &TemplateSet) -> Result<Vec<declared::Declared>> {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for file in templates.of_kind(TemplateKind::Source) {
        match declared::declared_from(file) {
            Ok(d) => found.push(d),
            Err(p) => problems.push(templates::header_error(file, p)),
        }
    }
    match problems.is_empty() {
        true => Ok(found),
        false => Err(Error::all(problems)),
    }
}

/// Each model's sources and lookups from its `-- sources:` and the declarations; then
/// no model may read a declared lookup it does not declare (its changes would go
/// unnoticed there). Every problem of every model at once, each at its file and line.
fn resolve_models_sources(
    models: &mut [Model],
    declared: &[declared::Declared],
    templates: &TemplateSet,
) -> Result<()> {
    let mut problems = Vec::new();
    for model in models.iter_mut() {
        let file = templates
            .files
            .iter()
            .find(|f| f.include_name == model.template)
            .expect("a model comes from a file");
        match resolve_sources(&model.source_refs, declared) {
            Ok((sources, lookups)) => {
                model.sources = sources;
                model.lookups = lookups;
            }
            Err(problem) => {
                problems.push(templates::header_error(file, vec![problem]));
                continue;
            }
        }
        for lookup in declared.iter().filter(|d| d.is_lookup()) {
            if model.lookups.iter().any(|l| l.table == lookup.name) {
                continue;
            }
            if let Some((line, name)) = reads_table(&file.source, lookup) {
                problems.push(Error::Template {
                    file: format!("{}:{line}", file.path),
                    message: format!(
                        "it reads {name}, the lookup {} declares, without saying how it reaches it, so a change of a {} row would not mark its dates changed; add it to `-- sources:`, e.g. `{}(via FACT.COLUMN)` with FACT one of its dated sources and COLUMN the one holding {}",
                        lookup.file,
                        lookup.name,
                        lookup.name,
                        lookup.key.as_deref().unwrap_or("the key")
                    ),
                });
            }
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(Error::all(problems)),
    }
}

/// The first line (from 1) of a model's SQL, after its header and outside comments, that
/// names the declared source's table or its `_latest` view, and the name it uses.
fn reads_table(source: &str, declared: &declared::Declared) -> Option<(usize, String)> {
    let names: Vec<&str> = std::iter::once(declared.name.as_str())
        .chain(declared.latest_view.as_deref())
        .collect();
    let header = source.lines().take_while(|l| l.starts_with("--")).count();
    // Each word of the SQL with its line, outside comments and string literals.
    let mut words: Vec<(usize, String)> = Vec::new();
    for (i, line) in source.lines().enumerate().skip(header) {
        let code = line.split("--").next().unwrap_or_default();
        let code: Vec<&str> = code.split('\'').step_by(2).collect();
        let code = code.join(" ");
        let found = code
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '"'))
            .map(|w| w.trim_matches('"'))
            .filter(|w| !w.is_empty())
            .map(|w| (i + 1, w.to_string()));
        words.extend(found);
    }
    // A table is read after FROM or JOIN (`count(*) AS customers` reads none).
    words
        .windows(2)
        .find(|pair| {
            ["from", "join"].contains(&pair[0].1.to_ascii_lowercase().as_str())
                && names.iter().any(|n| n.eq_ignore_ascii_case(&pair[1].1))
        })
        .map(|pair| pair[1].clone())
}

/// The declarations' `_latest` views are made by sqlrun; a view file of the same name
/// would make the same view twice, by other SQL.
fn refuse_generated_view_files(views: &[View], declared: &[declared::Declared]) -> Result<()> {
    for view in views {
        if let Some(d) = declared
            .iter()
            .find(|d| d.latest_view.as_deref() == Some(view.name.as_str()))
        {
            return Err(Error::Template {
                file: format!("views/{}.sql", view.name),
                message: format!(
                    "view {} is made from {}'s `-- key:` and `-- latest_by:` (system/source_latest.sql); delete views/{}.sql, or take `-- latest_by:` out of {} to keep writing the view yourself",
                    view.name, d.file, view.name, d.file
                ),
            });
        }
    }
    Ok(())
}

/// A model's file and the line of its `-- sources:` (`models/x.sql:5`), for a problem of
/// what that line declares; the file alone when there is no such line.
pub fn sources_at(file: &str, text: Option<&str>) -> String {
    let line = text.and_then(|text| {
        text.lines()
            .take_while(|l| l.starts_with("--"))
            .position(|l| l.starts_with("-- sources:"))
    });
    match line {
        Some(i) => format!("{file}:{}", i + 1),
        None => file.to_string(),
    }
}

/// The lookups of all models, once each: two models reach a lookup the same way.
fn pipeline_lookups(
    models: &[Model],
    sources: &[Source],
    templates: &TemplateSet,
) -> Result<Vec<Lookup>> {
    let mut lookups: Vec<Lookup> = Vec::new();
    for model in models {
        for lookup in &model.lookups {
            let text = templates
                .files
                .iter()
                .find(|f| f.include_name == model.template)
                .map(|f| f.source.as_str());
            let bad = |message: String| Error::Template {
                file: sources_at(&model.file, text),
                message,
            };
            if sources.iter().any(|s| s.table == lookup.table)
                || models.iter().any(|m| m.table == lookup.table)
            {
                return Err(bad(format!(
                    "`-- sources:` reaches {} as a lookup, but it is a dated source or a model's table elsewhere in the pipeline; a table is one of the three",
                    lookup.table
                )));
            }
            match lookups.iter().find(|l| l.table == lookup.table) {
                Some(seen) if seen != lookup => {
                    return Err(bad(format!(
                        "`-- sources:` reaches lookup {} `via {}.{}`, another model `via {}.{}`; every model must reach a lookup the same way",
                        lookup.table, lookup.fact, lookup.fact_column, seen.fact, seen.fact_column
                    )))
                }
                Some(_) => {}
                None => lookups.push(lookup.clone()),
            }
        }
    }
    Ok(lookups)
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

/// What models read of each other that cannot hold, each said at its file's line: a
/// model that is not there, or grains that do not nest (weeks and months).
fn grain_problems(models: &[Model], templates: &TemplateSet) -> Result<()> {
    let mut errors = Vec::new();
    for model in models {
        let mut problems = Vec::new();
        for read in model.reads.iter().filter(|r| !r.source) {
            let Some(upstream) = models.iter().find(|m| m.name == read.from) else {
                let known: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
                problems.push(format!(
                    "`-- depends_on: {}` names a model this pipeline does not have; its models are: {}",
                    read.from,
                    known.join(", ")
                ));
                continue;
            };
            problems.extend(grains::mapping_problem(
                model.grain,
                &read.from,
                upstream.grain,
            ));
        }
        if problems.is_empty() {
            continue;
        }
        let file = templates
            .files
            .iter()
            .find(|f| f.include_name == model.template)
            .expect("a model has its file");
        errors.push(templates::header_error(file, problems));
    }
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.remove(0)),
        _ => Err(Error::all(errors)),
    }
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

/// The rows the pipeline's own bookkeeping reads, rendered for `pipeline`, for the test
/// that prepares each statement against a real schema (each file keeps its own list
/// beside its row structs).
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<crate::db::RowShape>> {
    let mut shapes = models::row_shapes(pipeline.dialect);
    shapes.extend(sync::row_shapes(pipeline.dialect));
    shapes.extend(declare::row_shapes(pipeline.dialect));
    shapes.extend(versions::row_shapes(pipeline.dialect));
    shapes.extend(ready::row_shapes(pipeline)?);
    Ok(shapes)
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
            uncovered: &[],
            started_at: "2026-11-29 00:00:00",
            lease_seconds: 900,
            undo: None,
            parts: None,
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
        // On a sealed date, a model its seal does not cover is replaced.
        let uncovered = ["daily_revenue".to_string()];
        let first_seen = p
            .render_date(&DateVars {
                sealed: true,
                uncovered: &uncovered,
                ..vars
            })
            .unwrap();
        assert!(
            first_seen.contains("DELETE FROM \"daily_revenue\" WHERE \"ds\" = '2026-02-09';")
                && !first_seen.contains("INSERT INTO \"daily_revenue_corrections\""),
            "{first_seen}"
        );
    }

    #[test]
    fn a_date_runs_its_models_checks_after_the_models_and_before_its_record() {
        let p = Pipeline::load(None, Dialect::Sqlite).unwrap();
        assert!(p
            .checks
            .iter()
            .any(|c| c.name == "daily_revenue_one_row" && c.severity == Severity::Error));
        let sql = p
            .render_date(&DateVars {
                ds: "2026-02-09",
                run_id: 7,
                sealed: false,
                uncovered: &[],
                started_at: "2026-11-29 00:00:00",
                lease_seconds: 900,
                undo: None,
                parts: None,
            })
            .unwrap();
        let model = sql.find("INSERT INTO \"daily_revenue\"").unwrap();
        let check = sql.find("-- sqlrun rows: \"checks\"").unwrap();
        let last = format!(") AS f) AS \"check_{}\"", p.computed_checks().len());
        assert!(sql.contains(&last), "{sql}");
        let record = sql.find("INSERT INTO run_partitions").unwrap();
        assert!(model < check && check < record, "{sql}");
        let sealed = p
            .render_check(
                p.check("daily_revenue_one_row").unwrap(),
                "2026-02-09",
                true,
            )
            .unwrap();
        assert!(
            sealed.contains("FROM \"daily_revenue_current\" AS t"),
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
                uncovered: &[],
                started_at: "2026-11-29 00:00:00",
                lease_seconds: 900,
                undo: None,
                parts: None,
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
    fn a_lookup_read_is_found_outside_comments_and_strings() {
        let file = TemplateFile {
            name: "sources/customers".into(),
            include_name: "sources/customers.sql".into(),
            path: "sources/customers.sql".into(),
            kind: TemplateKind::Source,
            version: 1,
            checksum: String::new(),
            source: "-- name: customers\n-- version: 1\n".into(),
            header: [("key", "customer_id"), ("latest_by", "updated_at")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let lookup = declared::declared_from(&file).unwrap();
        let model = "-- name: m\n-- version: 1\nSELECT 1 AS customers -- FROM customers\nFROM x WHERE k = 'FROM customers'\nJOIN \"customers_latest\" AS c ON true\n";
        assert_eq!(
            reads_table(model, &lookup),
            Some((5, "customers_latest".into()))
        );
        let other = "-- name: m\nSELECT 1 FROM customer_notes\n";
        assert_eq!(reads_table(other, &lookup), None);
    }

    #[test]
    fn sources_parse_dated_bare_and_lookups() {
        let text = "orders, customers(key customer_id via orders.customer_id), refunds(refund_date, key id)";
        let refs = parse_sources(text).unwrap();
        assert_eq!(refs[0].table, "orders");
        assert_eq!(refs[0].date_column, None);
        assert_eq!(refs[1].via, Some(("orders".into(), "customer_id".into())));
        assert_eq!(refs[1].key.as_deref(), Some("customer_id"));
        assert_eq!(refs[2].date_column.as_deref(), Some("refund_date"));
        assert!(parse_sources("customers(via orders)").is_err());
        assert!(parse_sources("orders(order_date, key)").is_err());
        // Without declarations a bare name has no date column, and a lookup needs a key.
        assert!(resolve_sources(&refs[..1], &[]).is_err());
        let orders = parse_sources("orders(order_date, key order_id)").unwrap();
        let refs = [orders[0].clone(), refs[1].clone()];
        let (dated, lookups) = resolve_sources(&refs, &[]).unwrap();
        assert_eq!(dated.len(), 1);
        assert_eq!(lookups[0].fact, "orders");
        assert_eq!(lookups[0].fact_rows, "orders");
        assert_eq!(lookups[0].fact_date, "order_date");
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
