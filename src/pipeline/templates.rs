//! Versioned SQL templates: loading (built in or from `--templates DIR`), header metadata,
//! checksums, and strict, safe rendering with minijinja.
//!
//! A template is a plain `.sql` file whose first lines are its metadata:
//!
//! ```sql
//! -- name: daily_revenue
//! -- version: 1
//! -- values: revenue, order_count
//! SELECT ...
//! ```
//!
//! Rendering is strict (an undefined variable is an error naming the file and line) and
//! safe: every value printed with `{{ ... }}` becomes a SQL literal (`'it''s'`, `42`,
//! `NULL`, `(a, b)`); identifiers go through the `ident` / `idents` filters, which quote
//! them. Text from a template or from `include` is SQL; text from a value never is.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Value, ValueKind};
use minijinja::{AutoEscape, Environment, ErrorKind, Output, State, UndefinedBehavior};
use sha2::{Digest, Sha256};

use crate::db::{Dialect, Value as DbValue};
use crate::error::{Error, Result};

include!(concat!(env!("OUT_DIR"), "/builtin_templates.rs"));

/// Which folder a template comes from, which says what it is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TemplateKind {
    /// `models/`: one partitioned table's per-date SELECT.
    Model,
    /// `views/`: a derived view over the models' `_current` views.
    View,
    /// `checks/`: a query over one model's rows of a date that returns what is wrong.
    Check,
    /// `system/`: the generic machinery (replacement, correction, reservation, seal).
    System,
    /// `sources/`: a table the pipeline reads and sqlrun does not compute: its header
    /// (key, the rule for its latest version, its date column if it has one) and its DDL.
    Source,
}

impl TemplateKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateKind::Model => "model",
            TemplateKind::View => "view",
            TemplateKind::Check => "check",
            TemplateKind::System => "system",
            TemplateKind::Source => "source",
        }
    }

    fn folder(self) -> &'static str {
        match self {
            TemplateKind::Model => "models",
            TemplateKind::View => "views",
            TemplateKind::Check => "checks",
            TemplateKind::System => "system",
            TemplateKind::Source => "sources",
        }
    }

    fn known_keys(self) -> &'static [&'static str] {
        match self {
            TemplateKind::Model => &[
                "name",
                "version",
                "table",
                "date_column",
                "key",
                "values",
                "depends_on",
                "create",
                "seal_values",
                "additive",
                "sources",
                "ready",
                "grain",
            ],
            TemplateKind::View => &["name", "version", "depends_on"],
            TemplateKind::Check => &["name", "version", "model", "severity"],
            TemplateKind::System => &["name", "version"],
            TemplateKind::Source => &[
                "name",
                "version",
                "key",
                "latest_by",
                "date_column",
                "create",
                "migrate",
                "fresh_within",
                "loaded_at",
            ],
        }
    }
}

/// One template file with its header parsed.
#[derive(Debug, Clone)]
pub struct TemplateFile {
    /// `models/daily_revenue`: the name recorded in the state store.
    pub name: String,
    /// `models/daily_revenue.sql`: the name templates `include`.
    pub include_name: String,
    /// Where it was read from, for messages.
    pub path: String,
    pub kind: TemplateKind,
    pub version: i64,
    pub checksum: String,
    pub source: String,
    pub header: BTreeMap<String, String>,
}

impl TemplateFile {
    /// A file whose header must be right: its problems, all of them, are one error.
    fn parse(kind: TemplateKind, file_name: &str, path: String, source: String) -> Result<Self> {
        let (file, problems) = Self::read(kind, file_name, path, source);
        match problems.is_empty() {
            true => Ok(file),
            false => Err(header_error(&file, problems)),
        }
    }

    /// A file and every problem of its header, each said with its fix (a header is
    /// fixed in one go, not one error per attempt). With problems, `version` may be 0.
    fn read(
        kind: TemplateKind,
        file_name: &str,
        path: String,
        source: String,
    ) -> (Self, Vec<String>) {
        let stem = file_name.strip_suffix(".sql").unwrap_or(file_name);
        let (header, mut problems) = parse_header(&source, kind);
        match header.get("name") {
            None => problems.push(format!(
                "no `-- name:` line in its header; start the file with `-- name: {stem}` and `-- version: 1`"
            )),
            Some(declared) if declared != stem => problems.push(format!(
                "its header says `-- name: {declared}` but the file is {file_name}; make them agree"
            )),
            Some(_) => {}
        }
        let version = match header.get("version") {
            None => {
                problems.push("no `-- version:` line in its header; add `-- version: 1`".into());
                0
            }
            Some(text) => match text.parse::<i64>().ok().filter(|v| *v >= 1) {
                Some(v) => v,
                None => {
                    problems.push(format!(
                        "`-- version: {text}` is not a whole number from 1 up"
                    ));
                    0
                }
            },
        };
        let file = TemplateFile {
            name: format!("{}/{stem}", kind.folder()),
            include_name: format!("{}/{file_name}", kind.folder()),
            path,
            kind,
            version,
            checksum: checksum(&source),
            source,
            header,
        };
        (file, problems)
    }

    /// A header list (`a, b, c`), empty when the key is absent.
    pub fn list(&self, key: &str) -> Vec<String> {
        self.header
            .get(key)
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The problems of a file's header as one error, each at its line: `models/x.sql:3:
/// unknown header key ...` for one, `line 3: ...` before each of several. A problem of
/// a key that is not there (a missing `-- version:`) has no line.
pub fn header_error(file: &TemplateFile, problems: Vec<String>) -> Error {
    let mut located: Vec<(Option<usize>, String)> = problems
        .into_iter()
        .map(|p| (problem_line(&file.source, &p), p))
        .collect();
    if let [(Some(line), message)] = located.as_mut_slice() {
        return Error::Template {
            file: format!("{}:{line}", file.path),
            message: std::mem::take(message),
        };
    }
    let lines = located
        .into_iter()
        .map(|(line, p)| match line {
            Some(n) => format!("line {n}: {p}"),
            None => p,
        })
        .collect();
    Error::problems(&file.path, "its header", lines)
}

/// The header line (from 1) a problem is about, by the key it names: an unknown key,
/// a key given twice (its second line), or a `-- key:` it quotes.
fn problem_line(source: &str, problem: &str) -> Option<usize> {
    let quoted = |after: &str| {
        let rest = problem.split_once(after)?.1;
        Some(rest.split(['`', ':']).next()?.trim().to_string())
    };
    let (key, nth) = if problem.starts_with("unknown header key `") {
        (quoted("unknown header key `")?, 0)
    } else if problem.starts_with("header key `") {
        (quoted("header key `")?, 1)
    } else {
        (quoted("`-- ")?, 0)
    };
    let prefix = format!("-- {key}:");
    source
        .lines()
        .take_while(|l| l.starts_with("--"))
        .enumerate()
        .filter(|(_, l)| l.starts_with(&prefix))
        .nth(nth)
        .map(|(i, _)| i + 1)
}

/// The SHA-256 of a template's text, as recorded in the state store.
pub fn checksum(source: &str) -> String {
    let digest = Sha256::digest(source.as_bytes());
    let mut out = String::with_capacity(64);
    for byte in digest {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// The text a template's version stands for: all of it but the `-- sources:` and
/// `-- ready:` header lines, which say which changes to track and when a date may be
/// built, not what a date computes. So declaring a source or a readiness condition calls
/// for no new version and leaves no date stale. A source's `-- fresh_within:` likewise:
/// how late its data may be is operations, not the table.
pub fn versioned_text(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let (mut in_header, mut skipping) = (true, false);
    for line in source.split_inclusive('\n') {
        in_header = in_header && line.starts_with("--");
        skipping = in_header
            && (line.starts_with("-- sources:")
                || line.starts_with("-- ready:")
                || line.starts_with("-- fresh_within:")
                || skipping && line.starts_with("--   "));
        if !skipping {
            out.push_str(line);
        }
    }
    out
}

/// The header of a model's recorded text (`template_versions.body`), as far as it
/// parses: what a database whose runs predate `models` knows of a model it ran.
pub fn model_header(source: &str) -> BTreeMap<String, String> {
    parse_header(source, TemplateKind::Model).0
}

/// Leading `-- key: value` lines; a line `--` followed by three or more spaces continues the
/// previous value (for multi-line DDL). The header ends at the first other line. Unknown
/// and repeated keys are problems (all of them), not the end of the header.
fn parse_header(source: &str, kind: TemplateKind) -> (BTreeMap<String, String>, Vec<String>) {
    let mut header = BTreeMap::new();
    let mut problems = Vec::new();
    // The key a continuation line adds to (None after a key that was not kept).
    let mut last: Option<Option<String>> = None;
    for line in source.lines() {
        let Some(rest) = line.strip_prefix("--") else {
            break;
        };
        if let Some(more) = rest.strip_prefix("   ") {
            match &last {
                Some(Some(key)) => {
                    let value: &mut String = header.get_mut(key).expect("key just inserted");
                    value.push('\n');
                    value.push_str(more.trim());
                    continue;
                }
                Some(None) => continue,
                None => break,
            }
        }
        let Some((key, value)) = rest.strip_prefix(' ').and_then(|r| r.split_once(':')) else {
            break;
        };
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
            break;
        }
        if !kind.known_keys().contains(&key) {
            problems.push(format!(
                "unknown header key `{key}`; a {} template's header knows: {}",
                kind.as_str(),
                kind.known_keys().join(", ")
            ));
            last = Some(None);
            continue;
        }
        if header.contains_key(key) {
            problems.push(format!("header key `{key}` is given twice; keep one"));
            last = Some(None);
            continue;
        }
        header.insert(key.to_string(), value.trim().to_string());
        last = Some(Some(key.to_string()));
    }
    (header, problems)
}

/// The pipeline's templates and the environment that renders them.
pub struct TemplateSet {
    /// `built-in`, or the `--templates` folder.
    pub origin: String,
    pub files: Vec<TemplateFile>,
    env: Environment<'static>,
}

impl TemplateSet {
    /// Models and views from `dir` (or the built-in pipeline); the machinery in `system/`
    /// always comes built in, because it must match this binary's schema. A file in
    /// `system/<dialect>/` replaces the `system/` file of the same name on that backend.
    /// `more`: further problems of each file's header (a model's own header keys, see
    /// pipeline/mod.rs): every problem of every file is said at once, one line each.
    pub fn load_checked(
        dir: Option<&Path>,
        dialect: Dialect,
        more: &dyn Fn(&TemplateFile) -> Vec<String>,
    ) -> Result<Self> {
        let mut files: Vec<TemplateFile> = Vec::new();
        for (rel, source) in BUILTIN_TEMPLATES {
            let (folder, mut file_name) = rel.split_once('/').unwrap_or(("", rel));
            if let Some((only_on, name)) = file_name.split_once('/') {
                if folder != "system" || only_on != dialect.as_str() {
                    continue;
                }
                file_name = name;
                files.retain(|f| f.include_name != format!("system/{name}"));
            } else if folder == "system"
                && files
                    .iter()
                    .any(|f| f.include_name == format!("system/{file_name}"))
            {
                continue;
            }
            let kind = match folder {
                "system" => TemplateKind::System,
                "models" if dir.is_none() => TemplateKind::Model,
                "views" if dir.is_none() => TemplateKind::View,
                "checks" if dir.is_none() => TemplateKind::Check,
                "sources" if dir.is_none() => TemplateKind::Source,
                _ => continue,
            };
            let path = format!("templates/{rel}");
            files.push(TemplateFile::parse(
                kind,
                file_name,
                path,
                source.to_string(),
            )?);
        }
        let origin = match dir {
            None => "built-in".to_string(),
            Some(dir) => {
                load_dir(dir, &mut files, more)?;
                dir.display().to_string()
            }
        };
        if dir.is_none() {
            let problems: Vec<Error> = files
                .iter()
                .filter(|f| f.kind != TemplateKind::System)
                .filter_map(|f| {
                    let found = more(f);
                    (!found.is_empty()).then(|| header_error(f, found))
                })
                .collect();
            if !problems.is_empty() {
                return Err(Error::all(problems));
            }
        }
        if !files.iter().any(|f| f.kind == TemplateKind::Model) {
            return Err(Error::Template {
                file: format!("{origin}/models"),
                message: "no model templates (*.sql) found; a pipeline needs at least one model"
                    .into(),
            });
        }
        let mut env = sql_environment(dialect);
        for file in &files {
            // A model or view is one SELECT that sqlrun wraps (in a subquery, a CTE, a
            // CREATE VIEW): a final `;` or a last comment line without a newline must not
            // break the statement around it.
            let source = match file.kind {
                TemplateKind::System | TemplateKind::Source => file.source.clone(),
                _ => one_statement(&file.source),
            };
            env.add_template_owned(file.include_name.clone(), source)
                .map_err(|e| template_error(&files, e))?;
        }
        Ok(TemplateSet { origin, files, env })
    }

    /// Adds a piece of a file as a template of its own (a model's `-- ready:` condition),
    /// named for messages as `name`; rendered as strictly as every template.
    pub fn add_fragment(&mut self, name: &str, source: &str) -> Result<()> {
        self.env
            .add_template_owned(name.to_string(), source.to_string())
            .map_err(|e| template_error(&self.files, e))
    }

    pub fn of_kind(&self, kind: TemplateKind) -> impl Iterator<Item = &TemplateFile> {
        self.files.iter().filter(move |f| f.kind == kind)
    }

    pub fn system(&self, name: &str) -> &TemplateFile {
        self.files
            .iter()
            .find(|f| f.kind == TemplateKind::System && f.name == format!("system/{name}"))
            .unwrap_or_else(|| panic!("built-in template system/{name}.sql is missing"))
    }

    /// Renders `include_name` (e.g. `system/date.sql`) with `context`.
    pub fn render(&self, include_name: &str, context: Value) -> Result<String> {
        let template = self
            .env
            .get_template(include_name)
            .map_err(|e| template_error(&self.files, e))?;
        template
            .render(context)
            .map_err(|e| template_error(&self.files, e))
    }

    /// Renders for execution: every printed value becomes a parameter (`:p1`, `:p2`, ...)
    /// instead of a literal, so the text is the same for every date and nothing a value
    /// holds is ever read as SQL. Template logic still sees the values themselves.
    pub fn render_bound(&self, include_name: &str, context: Value) -> Result<Bound> {
        BOUND.with(|b| *b.borrow_mut() = Some(Vec::new()));
        let sql = self.render(include_name, context);
        let values = BOUND.with(|b| b.borrow_mut().take()).unwrap_or_default();
        let params = values
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!(":p{}", i + 1), v))
            .collect();
        Ok(Bound { sql: sql?, params })
    }
}

/// SQL with its parameters, named `:p1`, `:p2`, ... in the text.
#[derive(Debug, Clone)]
pub struct Bound {
    pub sql: String,
    pub params: Vec<(String, DbValue)>,
}

/// The models and views of `dir`; the header problems of all its files in one error.
fn load_dir(
    dir: &Path,
    files: &mut Vec<TemplateFile>,
    more: &dyn Fn(&TemplateFile) -> Vec<String>,
) -> Result<()> {
    let mut problems = Vec::new();
    if !dir.is_dir() {
        return Err(Error::bad(format!(
            "--templates (or $SQLRUN_TEMPLATES) {}: no such folder; pass a folder laid out like the built-in templates/ \
             (models/*.sql, views/*.sql)",
            dir.display()
        )));
    }
    let kinds = [
        TemplateKind::Model,
        TemplateKind::View,
        TemplateKind::Check,
        TemplateKind::Source,
    ];
    for kind in kinds {
        let folder = dir.join(kind.folder());
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "sql"))
            .collect();
        paths.sort();
        for path in paths {
            let source = fs::read_to_string(&path).map_err(|e| Error::Template {
                file: path.display().to_string(),
                message: format!("cannot read it: {e}"),
            })?;
            let file_name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let (file, mut found) =
                TemplateFile::read(kind, file_name, path.display().to_string(), source);
            found.extend(more(&file));
            if found.is_empty() {
                files.push(file);
            } else {
                problems.push(header_error(&file, found));
            }
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(Error::all(problems)),
    }
}

/// A model's or view's text without what would break the statement sqlrun wraps it in: a
/// final `;` and any comment lines after it; ends with a newline.
fn one_statement(source: &str) -> String {
    let mut body = source.trim_end();
    loop {
        let last_line = body.rsplit('\n').next().unwrap_or("");
        if last_line.trim_start().starts_with("--") {
            body = body[..body.len() - last_line.len()].trim_end();
        } else if let Some(rest) = body.strip_suffix(';') {
            body = rest.trim_end();
        } else {
            break;
        }
    }
    let mut out = body.to_string();
    out.push('\n');
    out
}

/// Names the file (by its path, not its include name) and the line. An error inside an
/// included template (a model inside system/date.sql) is reported where it happened.
fn template_error(files: &[TemplateFile], outer: minijinja::Error) -> Error {
    let mut err = &outer;
    while let Some(inner) =
        std::error::Error::source(err).and_then(|s| s.downcast_ref::<minijinja::Error>())
    {
        err = inner;
    }
    let file = err
        .name()
        .map(|n| {
            files
                .iter()
                .find(|f| f.include_name == n)
                .map(|f| f.path.clone())
                .unwrap_or_else(|| n.to_string())
        })
        .unwrap_or_else(|| "(unknown)".to_string());
    let line = err
        .line()
        .map(|l| format!("line {l}: "))
        .unwrap_or_default();
    let what = match err.kind() {
        ErrorKind::UndefinedError => {
            "undefined variable (the time variables are ds, next_ds, prev_ds, ds_nodash, run_id; a check also has model, this, previous and sealed)"
                .to_string()
        }
        ErrorKind::SyntaxError => "syntax error".to_string(),
        kind => kind.to_string(),
    };
    let detail = err.detail().map(|d| format!(": {d}")).unwrap_or_default();
    Error::Template {
        file,
        message: format!("{line}{what}{detail}"),
    }
}

fn sql_environment(dialect: Dialect) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::Custom("sql".into()));
    env.set_formatter(move |out, state, value| sql_formatter(out, state, value, dialect));
    // A model that must say something differently on each backend can ask.
    env.add_global("dialect", dialect.as_str());
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("static syntax config"),
    );
    env.set_debug(true);
    env.add_filter("ident", ident);
    env.add_filter("idents", idents);
    // Both would print a value as SQL text unquoted (`{{ ds|safe }}` is the number 2023 on
    // SQLite); a value is always a literal, an identifier goes through |ident.
    env.add_filter("safe", refuse_unquoted("safe"));
    env.add_filter("tojson", refuse_unquoted("tojson"));
    env
}

/// Prints a value as a SQL literal, or, while `render_bound` runs, as a parameter; values
/// marked safe (include and macro output, quoted identifiers) are SQL already.
fn sql_formatter(
    out: &mut Output,
    _state: &mut State,
    value: &Value,
    dialect: Dialect,
) -> Result<(), minijinja::Error> {
    let binding = BOUND.with(|b| b.borrow().is_some());
    let text = if value.is_safe() {
        value.to_string()
    } else if binding {
        sql_parameter(value, dialect)?
    } else {
        sql_literal(value, dialect)?
    };
    out.write_str(&text)
        .map_err(|e| minijinja::Error::new(ErrorKind::WriteFailure, e.to_string()))
}

thread_local! {
    /// The values printed so far by a `render_bound` on this thread (None: print literals).
    static BOUND: std::cell::RefCell<Option<Vec<DbValue>>> = const { std::cell::RefCell::new(None) };
}

/// Binds a printed value: `:p1`, `:p2`, ... in print order. A date or a number is cast on
/// PostgreSQL, where a parameter in a SELECT list would otherwise be text; NULL and
/// booleans are constants and stay literals.
fn sql_parameter(value: &Value, dialect: Dialect) -> Result<String, minijinja::Error> {
    let (bound, cast) = if let Some(date) = as_date(value) {
        (DbValue::Text(date.to_string()), "date")
    } else if let Some(at) = as_timestamp(value, dialect) {
        (DbValue::Text(at), "timestamptz")
    } else {
        match value.kind() {
            ValueKind::None | ValueKind::Bool => return sql_literal(value, dialect),
            ValueKind::Seq | ValueKind::Iterable => {
                let items = value
                    .try_iter()?
                    .map(|v| sql_parameter(&v, dialect))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(format!("({})", items.join(", ")));
            }
            ValueKind::Number => match value.as_i64() {
                Some(n) => (DbValue::Int(n), "bigint"),
                None => (
                    DbValue::Real(f64::try_from(value.clone())?),
                    "double precision",
                ),
            },
            // Text goes as it is; anything else is refused exactly as sql_literal refuses it.
            ValueKind::String => {
                sql_literal(value, dialect)?;
                (
                    DbValue::Text(value.as_str().unwrap_or_default().to_string()),
                    "",
                )
            }
            _ => return sql_literal(value, dialect),
        }
    };
    let n = BOUND.with(|b| {
        let mut b = b.borrow_mut();
        let values = b.as_mut().expect("bound while binding");
        values.push(bound);
        values.len()
    });
    Ok(match (dialect, cast) {
        (Dialect::Postgres, cast) if !cast.is_empty() => format!("CAST(:p{n} AS {cast})"),
        _ => format!(":p{n}"),
    })
}

/// An instant printed into SQL: an hour's first instant, UTC (`2026-03-29 01:00:00`). On
/// SQLite it prints as that text (the contract's timestamps are UTC text); on PostgreSQL
/// as a `timestamptz` (`TIMESTAMPTZ '2026-03-29 01:00:00+00'`). Template logic sees the
/// text.
#[derive(Debug)]
pub struct Timestamp(pub String);

impl minijinja::value::Object for Timestamp {
    fn repr(self: &std::sync::Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Plain
    }

    fn render(self: &std::sync::Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The text of a [`Timestamp`] value, as PostgreSQL reads it (with its zone) or SQLite.
fn as_timestamp(value: &Value, dialect: Dialect) -> Option<String> {
    let t = value.downcast_object_ref::<Timestamp>()?;
    Some(match dialect {
        Dialect::Postgres => format!("{}+00", t.0),
        Dialect::Sqlite => t.0.clone(),
    })
}

/// A text value that is a calendar date (`2026-02-09`: ds, next_ds, prev_ds, or any
/// other): on PostgreSQL it prints as a date (`DATE '2026-02-09'`, or a parameter cast to
/// date), since an untyped literal in a model's SELECT list would be text. Template logic
/// sees plain text on both backends.
fn as_date(value: &Value) -> Option<&str> {
    let text = value.as_str()?;
    let shaped = text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-';
    (shaped && chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()).then_some(text)
}

/// The SQL literal for a value: `'text'` with quotes doubled, integers bare, `NULL`,
/// `1`/`0` for booleans, `(a, b)` for a sequence; on PostgreSQL a date is `DATE '...'`.
/// Maps and undefined values are refused.
pub fn sql_literal(value: &Value, dialect: Dialect) -> Result<String, minijinja::Error> {
    if let (Some(date), Dialect::Postgres) = (as_date(value), dialect) {
        return Ok(format!("DATE '{date}'"));
    }
    if let Some(at) = as_timestamp(value, dialect) {
        return Ok(match dialect {
            Dialect::Postgres => format!("TIMESTAMPTZ '{at}'"),
            Dialect::Sqlite => format!("'{at}'"),
        });
    }
    let refuse = |what: &str| {
        minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!("cannot print {what} into SQL; print its fields one by one"),
        )
    };
    Ok(match value.kind() {
        ValueKind::None => "NULL".to_string(),
        ValueKind::Bool => if value.is_true() { "1" } else { "0" }.to_string(),
        ValueKind::Number => {
            let text = if let Some(i) = value.as_i64() {
                i.to_string()
            } else {
                let f = f64::try_from(value.clone())?;
                if !f.is_finite() {
                    return Err(refuse("a number that is not finite"));
                }
                f.to_string()
            };
            // `10-{{ n }}` with n = -3 must not become `10--3`, the start of a comment.
            if text.starts_with('-') {
                format!("({text})")
            } else {
                text
            }
        }
        ValueKind::String => {
            let s = value.as_str().unwrap_or_default();
            if s.contains('\0') {
                return Err(refuse("a string with a NUL byte"));
            }
            let mut quoted = String::with_capacity(s.len() + 2);
            quoted.push('\'');
            quoted.push_str(&s.replace('\'', "''"));
            quoted.push('\'');
            quoted
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let items = value
                .try_iter()?
                .map(|v| sql_literal(&v, dialect))
                .collect::<Result<Vec<_>, _>>()?;
            let mut list = String::from("(");
            list.push_str(&items.join(", "));
            list.push(')');
            list
        }
        ValueKind::Undefined => return Err(minijinja::Error::from(ErrorKind::UndefinedError)),
        ValueKind::Map => return Err(refuse("a map")),
        _ => return Err(refuse("this value")),
    })
}

/// Quotes an identifier: `daily_revenue` -> `"daily_revenue"`, `a"b` -> `"a""b"` (the `ident` filter).
pub fn quote_ident(name: &str) -> Result<String, minijinja::Error> {
    if name.is_empty() || name.contains('\0') {
        return Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!("`{name}` is not a usable SQL identifier"),
        ));
    }
    let mut quoted = String::with_capacity(name.len() + 2);
    quoted.push('"');
    quoted.push_str(&name.replace('"', "\"\""));
    quoted.push('"');
    Ok(quoted)
}

fn refuse_unquoted(
    filter: &'static str,
) -> impl Fn(&Value) -> Result<Value, minijinja::Error> + Send + Sync + 'static {
    move |_| {
        Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "the |{filter} filter would print a value into SQL unquoted; sqlrun prints every \
                 value as a literal: write {{{{ value }}}} (or {{{{ name|ident }}}} for an identifier)"
            ),
        ))
    }
}

fn ident(name: String) -> Result<Value, minijinja::Error> {
    Ok(Value::from_safe_string(quote_ident(&name)?))
}

fn idents(names: Vec<String>) -> Result<Value, minijinja::Error> {
    let quoted = names
        .iter()
        .map(|n| quote_ident(n))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::from_safe_string(quoted.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use minijinja::context;

    fn render(source: &str, ctx: Value) -> Result<String, minijinja::Error> {
        let mut env = sql_environment(Dialect::Sqlite);
        env.add_template_owned("t.sql", source.to_string()).unwrap();
        env.get_template("t.sql").unwrap().render(ctx)
    }

    #[test]
    fn values_become_literals() {
        let out = render(
            "{{ s }} {{ n }} {{ b }} {{ none }} {{ list }}",
            context! { s => "x'); DROP TABLE orders; --", n => 42, b => true, none => (), list => vec!["a", "b'c"] },
        )
        .unwrap();
        assert_eq!(out, "'x''); DROP TABLE orders; --' 42 1 NULL ('a', 'b''c')");
    }

    #[test]
    fn non_ascii_text_is_kept_as_is() {
        let out = render("{{ s }}", context! { s => "주간 보고서; \"sent\"" }).unwrap();
        assert_eq!(out, "'주간 보고서; \"sent\"'");
    }

    #[test]
    fn identifiers_are_quoted() {
        let out = render(
            "{{ t|ident }} ({{ cols|idents }})",
            context! { t => "we\"ird", cols => vec!["ds", "revenue"] },
        )
        .unwrap();
        assert_eq!(out, "\"we\"\"ird\" (\"ds\", \"revenue\")");
    }

    #[test]
    fn undefined_variables_are_errors() {
        let err = render("SELECT {{ dss }}", context! { ds => "2026-02-09" }).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UndefinedError);
        assert_eq!(err.line(), Some(1));
    }

    #[test]
    fn no_value_reaches_sql_unquoted() {
        for source in ["{{ ds|safe }}", "{{ ds|tojson }}", "{{ [ds]|tojson }}"] {
            let err = render(source, context! { ds => "2026-02-09" }).unwrap_err();
            assert!(err.to_string().contains("unquoted"), "{source}: {err}");
        }
        let out = render("10-{{ n }} {{ f }}", context! { n => -3, f => -0.5 }).unwrap();
        assert_eq!(out, "10-(-3) (-0.5)");
        let out = render("{{ ds|e }}", context! { ds => "x'y" }).unwrap();
        assert_eq!(out, "'x''y'");
    }

    #[test]
    fn bound_rendering_prints_parameters_and_keeps_the_values() {
        let mut set = TemplateSet::load_checked(None, Dialect::Postgres, &|_| Vec::new()).unwrap();
        set.env
            .add_template_owned(
                "t.sql",
                "{% if ds == 'x' %}no{% endif %}SELECT {{ d }} AS ds, {{ n }}, {{ s }}, {{ none }}, {{ list }}"
                    .to_string(),
            )
            .unwrap();
        let ctx = context! {
            ds => "2026-02-09", d => "2026-02-09",
            n => -3, s => "it's", none => (), list => vec![1, 2],
        };
        let bound = set.render_bound("t.sql", ctx.clone()).unwrap();
        assert_eq!(
            bound.sql,
            "SELECT CAST(:p1 AS date) AS ds, CAST(:p2 AS bigint), :p3, NULL, (CAST(:p4 AS bigint), CAST(:p5 AS bigint))"
        );
        assert_eq!(
            bound.params[0],
            (":p1".to_string(), DbValue::Text("2026-02-09".into()))
        );
        assert_eq!(bound.params[1].1, DbValue::Int(-3));
        assert_eq!(bound.params[2].1, DbValue::Text("it's".into()));
        // Outside render_bound, literals as before.
        let literal = set.render("t.sql", ctx).unwrap();
        assert!(
            literal.starts_with("SELECT DATE '2026-02-09' AS ds, (-3), 'it''s'"),
            "{literal}"
        );
    }

    #[test]
    fn maps_are_refused() {
        let mut map = BTreeMap::new();
        map.insert("a", 1);
        assert!(render("{{ m }}", context! { m => map }).is_err());
    }

    #[test]
    fn declaring_sources_keeps_the_version() {
        let plain = "-- name: m\n-- version: 1\nSELECT 1\n";
        let tracked = "-- name: m\n-- version: 1\n-- sources: orders(order_date,\n--   key order_id)\nSELECT 1\n";
        assert_eq!(versioned_text(tracked), plain);
        let edited = "-- name: m\n-- version: 1\nSELECT 2 -- sources: x\n";
        assert_ne!(checksum(&versioned_text(edited)), checksum(plain));
    }

    #[test]
    fn header_is_parsed_and_checked() {
        let src = "-- name: x\n-- version: 3\n-- key: ds, region\n-- create: CREATE TABLE x (\n--     ds TEXT)\n--\n-- prose: not a key\nSELECT 1";
        let f =
            TemplateFile::parse(TemplateKind::Model, "x.sql", "x.sql".into(), src.into()).unwrap();
        assert_eq!(f.version, 3);
        assert_eq!(f.list("key"), ["ds", "region"]);
        assert_eq!(f.header["create"], "CREATE TABLE x (\nds TEXT)");
        assert_eq!(f.name, "models/x");

        let bad = TemplateFile::parse(
            TemplateKind::Model,
            "x.sql",
            "x.sql".into(),
            "-- name: x\n-- versoin: 1\n".into(),
        );
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("unknown header key `versoin`"));
        let bad = TemplateFile::parse(
            TemplateKind::Model,
            "y.sql",
            "y.sql".into(),
            "-- name: x\n-- version: 1\n".into(),
        );
        assert!(bad.unwrap_err().to_string().contains("make them agree"));
        let bad = TemplateFile::parse(
            TemplateKind::Model,
            "x.sql",
            "x.sql".into(),
            "-- name: x\n-- version: 0\n".into(),
        );
        assert!(bad.is_err());
        // Every problem of a header at once, one line each.
        let bad = TemplateFile::parse(
            TemplateKind::Model,
            "y.sql",
            "y.sql".into(),
            "-- name: x\n-- versoin: 1\n-- key: ds\n-- key: ds\n".into(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            bad.starts_with("template y.sql: 4 problems with its header:\n  - "),
            "{bad}"
        );
        for says in [
            "`versoin`",
            "given twice",
            "no `-- version:`",
            "make them agree",
        ] {
            assert!(bad.contains(says), "{says}: {bad}");
        }
    }

    #[test]
    fn a_model_is_one_statement() {
        assert_eq!(one_statement("SELECT 1;\n-- done\n\n"), "SELECT 1\n");
        assert_eq!(
            one_statement("-- name: x\nSELECT 1 -- one\n;"),
            "-- name: x\nSELECT 1 -- one\n"
        );
        assert_eq!(one_statement("SELECT ';'"), "SELECT ';'\n");
    }

    #[test]
    fn builtin_templates_load() {
        let set = TemplateSet::load_checked(None, Dialect::Sqlite, &|_| Vec::new()).unwrap();
        assert!(set
            .of_kind(TemplateKind::Model)
            .any(|f| f.name == "models/daily_revenue"));
        assert_eq!(set.system("date").kind, TemplateKind::System);
    }
}
