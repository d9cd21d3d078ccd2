//! The project file, `sqlrun.toml`: where a pipeline's database and templates are, and the
//! defaults its team shares, so that nobody has to repeat `--db` and `--templates` on every
//! command (and a forgotten `--templates` cannot run the built-in pipeline on a project's
//! database). Found from the current folder upward, as Cargo finds Cargo.toml.
//!
//! ```toml
//! db = "sqlrun.db"          # a SQLite file (relative to this file's folder) or a postgres:// URL
//! schema = "sales"          # PostgreSQL only
//! templates = "."           # the folder with models/ and views/, relative to this file's folder
//! timezone = "Asia/Seoul"   # the zone whose calendar days the dates are (default UTC)
//!
//! [apply]
//! lookback = 7              # a regular run's --lookback when none is given
//! jobs = 4                  # apply --jobs when none is given (PostgreSQL only)
//!
//! [history]
//! keep = "30 days"          # how long <table>_history keeps replaced rows ("10 versions")
//! ```
//!
//! Each setting comes from the first of: the command line, the environment (`SQLRUN_DB`,
//! `SQLRUN_SCHEMA`, `SQLRUN_TEMPLATES`, `SQLRUN_TIMEZONE`), the project file, the built-in default. Paths in
//! the file are relative to the file's folder, so the project works from any subfolder;
//! paths on the command line or in the environment are relative to the current folder.

pub mod scaffold;
pub mod settings;

use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use chrono_tz::Tz;
use serde::Deserialize;

use crate::db::{is_postgres_url, plain_schema};
use crate::error::{Error, Result};
use crate::pipeline::retention::Retention;
use crate::project::settings::{ApplyDefaults, DbFrom, Flags, HistoryDefaults, Settings};

pub const FILE_NAME: &str = "sqlrun.toml";

/// The database when nothing names one: a SQLite file in the current folder.
pub const DEFAULT_DB: &str = "sqlrun.db";

/// The project file as written.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectFile {
    pub db: Option<String>,
    pub schema: Option<String>,
    pub templates: Option<String>,
    pub timezone: Option<String>,
    #[serde(default)]
    pub apply: ApplyDefaults,
    #[serde(default)]
    pub history: HistoryDefaults,
}

/// A project file, found and read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub path: PathBuf,
    pub file: ProjectFile,
}

impl Project {
    /// The folder its relative paths start from.
    pub fn folder(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }
}

/// The settings the environment gives.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Env {
    pub db: Option<String>,
    pub schema: Option<String>,
    pub templates: Option<String>,
    pub timezone: Option<String>,
}

impl Env {
    pub fn from_process() -> Self {
        Self::from_lookup(|key| std::env::var(key).ok())
    }

    /// An empty variable counts as unset, as clap treated an empty `SQLRUN_DB` before.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let get = |key: &str| get(key).filter(|v| !v.is_empty());
        Env {
            db: get("SQLRUN_DB"),
            schema: get("SQLRUN_SCHEMA"),
            templates: get("SQLRUN_TEMPLATES"),
            timezone: get("SQLRUN_TIMEZONE"),
        }
    }
}

/// The project file that applies in `start`: `start/sqlrun.toml`, else its parent's, and
/// so on up to the root.
pub fn find(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(FILE_NAME))
        .find(|path| path.is_file())
}

/// Reads and checks the project file at `path`.
pub fn load(path: &Path) -> Result<Project> {
    let text = fs::read_to_string(path).map_err(|e| {
        Error::bad(format!(
            "project file {}: cannot read it ({e}); fix its permissions, or remove it to \
             run without a project",
            path.display()
        ))
    })?;
    Ok(Project {
        path: path.to_path_buf(),
        file: parse(path, &text)?,
    })
}

/// What each key takes, for messages.
const KEYS: &[(&str, &str)] = &[
    (
        "db",
        "a string: a SQLite file, relative to this file's folder (db = \"sqlrun.db\"), or a \
         postgres:// or postgresql:// URL",
    ),
    (
        "schema",
        "a string: the PostgreSQL schema that holds the pipeline (schema = \"sales\"): \
         lowercase letters, digits and _, not starting with a digit or pg_",
    ),
    (
        "templates",
        "a string: the folder with models/ and views/, relative to this file's folder \
         (templates = \".\")",
    ),
    (
        "timezone",
        "a string: an IANA time zone (timezone = \"Asia/Seoul\"), whose calendar days the \
         dates are: a regular run's yesterday, and when a day has ended",
    ),
    ("apply", "a table: [apply], with lookback = N and jobs = N"),
    (
        "history",
        "a table: [history], with keep = \"30 days\" or keep = \"10 versions\"",
    ),
    (
        "history.keep",
        "a string: a whole number from 1 up and days or versions (keep = \"30 days\", the \
         default, or keep = \"10 versions\"): how long each model's <table>_history keeps \
         the rows a replace took out",
    ),
    (
        "apply.lookback",
        "a whole number of days from 0 up (lookback = 7): a regular run's --lookback when \
         none is given",
    ),
    (
        "apply.jobs",
        "a whole number from 1 to 64 (jobs = 4): how many dates `apply` computes at once \
         when --jobs is not given, on PostgreSQL",
    ),
];

/// The project file's text, checked: TOML, only known keys, values of the right type and
/// shape. A message names the file, the line and the key, and what the key takes.
pub fn parse(path: &Path, text: &str) -> Result<ProjectFile> {
    let file: ProjectFile = toml::from_str(text).map_err(|e| {
        let (line, key) = e
            .span()
            .map(|span| locate(text, span))
            .unwrap_or((None, None));
        let at = line.map(|n| format!(", line {n}")).unwrap_or_default();
        // serde's "field" is TOML's "key"; its message then lists the keys allowed there.
        let message = e
            .message()
            .trim_end()
            .replace("unknown field", "unknown key");
        let takes = key
            .as_deref()
            .and_then(|key| KEYS.iter().find(|(k, _)| *k == key))
            .filter(|_| !message.starts_with("unknown key"));
        let message = match takes {
            Some((key, takes)) => format!("`{key}`: {message}; it takes {takes}"),
            None => message,
        };
        Error::bad(format!("project file {}{at}: {message}", path.display()))
    })?;
    let bad = |key: &str, what: String| {
        Error::bad(format!("project file {}: `{key}` {what}", path.display()))
    };
    let takes = |key: &str| KEYS.iter().find(|(k, _)| *k == key).map_or("", |(_, t)| *t);
    for (key, value) in [
        ("db", &file.db),
        ("schema", &file.schema),
        ("templates", &file.templates),
        ("timezone", &file.timezone),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(bad(key, format!("is empty; it takes {}", takes(key))));
        }
    }
    if let Some(schema) = &file.schema {
        if !plain_schema(schema) {
            return Err(bad(
                "schema",
                format!(
                    "is `{schema}`, not a plain schema name; it takes {}",
                    takes("schema")
                ),
            ));
        }
        if let Some(db) = file.db.as_deref().filter(|db| !is_postgres_url(db)) {
            return Err(bad(
                "schema",
                format!(
                    "is for PostgreSQL, but `db` is the SQLite file {db}; remove `schema`, or \
                     set `db` to a postgres:// URL"
                ),
            ));
        }
    }
    if let Some(zone) = &file.timezone {
        time_zone(zone)
            .map_err(|why| bad("timezone", format!("{why}; it takes {}", takes("timezone"))))?;
    }
    check_jobs(&file).map_err(|what| bad("apply.jobs", what))?;
    if let Some(keep) = &file.history.keep {
        Retention::parse(keep).map_err(|why| {
            bad(
                "history.keep",
                format!("{why}; it takes {}", takes("history.keep")),
            )
        })?;
    }
    Ok(file)
}

/// `[apply] jobs`: within 1..=64, and more than 1 only beside a database that can take
/// it (not the file's own SQLite `db`).
fn check_jobs(file: &ProjectFile) -> std::result::Result<(), String> {
    let Some(jobs) = file.apply.jobs else {
        return Ok(());
    };
    if !(1..=crate::project::settings::MAX_JOBS).contains(&i64::from(jobs)) {
        return Err(format!(
            "is {jobs}; it takes {}",
            KEYS.iter()
                .find(|(k, _)| *k == "apply.jobs")
                .map_or("", |(_, t)| *t)
        ));
    }
    match file.db.as_deref().filter(|db| !is_postgres_url(db)) {
        Some(db) if jobs > 1 => Err(format!(
            "is {jobs}, but `db` is the SQLite file {db}, which commits one transaction at a \
             time: workers would only wait for each other; remove `jobs`, or set `db` to a \
             postgres:// URL"
        )),
        _ => Ok(()),
    }
}

/// An IANA time zone by name (`Asia/Seoul`, `UTC`).
pub fn time_zone(name: &str) -> std::result::Result<Tz, String> {
    name.parse::<Tz>().map_err(|_| {
        format!("is `{name}`, not a time zone name (like UTC, Asia/Seoul or Europe/Berlin)")
    })
}

/// The line (from 1) that `span` starts on, and the dotted key there: the key of a
/// `key = value` line (or a `[table]` header) under the last `[table]` header above it.
fn locate(text: &str, span: Range<usize>) -> (Option<usize>, Option<String>) {
    let start = span.start.min(text.len());
    let before = &text[..start];
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("").trim();
    let header = |l: &str| {
        l.strip_prefix('[')
            .and_then(|l| l.split(']').next())
            .map(|name| name.trim().to_string())
    };
    if let Some(table) = header(line) {
        return (Some(line_no), Some(table));
    }
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .filter(|k| !k.is_empty());
    let table = before[..line_start]
        .lines()
        .rev()
        .find_map(|l| header(l.trim()));
    let key = match (table, key) {
        (Some(table), Some(key)) => Some(format!("{table}.{key}")),
        (None, key) => key,
        (Some(_), None) => None,
    };
    (Some(line_no), key)
}

/// The settings of this invocation: the project file that applies in the current folder
/// (if any) under the command line and the environment.
pub fn resolve_here(args: &Flags) -> Result<Settings> {
    // A current folder that is gone has no project; the default database then fails to
    // open with its own message.
    let project = std::env::current_dir()
        .ok()
        .and_then(|cwd| find(&cwd))
        .map(|path| load(&path))
        .transpose()?;
    resolve(args, &Env::from_process(), project)
}

/// Each setting from the first that gives it: `args` (the command line), `env`, the
/// project file, the built-in default.
pub fn resolve(args: &Flags, env: &Env, project: Option<Project>) -> Result<Settings> {
    let file = project.as_ref().map(|p| &p.file);
    let folder = project.as_ref().map(Project::folder);
    let db_from = match (&args.db, &env.db, file.and_then(|f| f.db.as_ref())) {
        (Some(_), _, _) => DbFrom::Flag,
        (None, Some(_), _) => DbFrom::Env,
        (None, None, Some(_)) => DbFrom::ProjectFile,
        (None, None, None) => DbFrom::Default,
    };
    let db = args
        .db
        .clone()
        .or_else(|| env.db.clone())
        .or_else(|| {
            let db = file?.db.as_deref()?;
            if is_postgres_url(db) {
                Some(db.to_string())
            } else {
                Some(in_folder(folder?, db).display().to_string())
            }
        })
        .unwrap_or_else(|| DEFAULT_DB.to_string());
    // The file's schema belongs with a PostgreSQL database: a SQLite file named on the
    // command line or in the environment does not inherit it (and would refuse it).
    let schema = args
        .schema
        .clone()
        .or_else(|| env.schema.clone())
        .or_else(|| file?.schema.clone().filter(|_| is_postgres_url(&db)));
    let templates = match (&args.templates, &env.templates, &project) {
        (Some(dir), _, _) => Some(dir.clone()),
        (None, Some(dir), _) => Some(PathBuf::from(dir)),
        (None, None, Some(p)) => p
            .file
            .templates
            .as_deref()
            .map(|dir| project_templates(p, dir))
            .transpose()?,
        (None, None, None) => None,
    };
    let timezone = match (&env.timezone, file.and_then(|f| f.timezone.as_deref())) {
        (Some(zone), _) => {
            time_zone(zone).map_err(|why| Error::bad(format!("SQLRUN_TIMEZONE {why}")))?
        }
        (None, Some(zone)) => time_zone(zone).map_err(Error::bad)?,
        (None, None) => Tz::UTC,
    };
    // As `schema`: the file's jobs belong with a PostgreSQL database.
    let apply = ApplyDefaults {
        jobs: file
            .and_then(|f| f.apply.jobs)
            .filter(|_| is_postgres_url(&db)),
        ..file.map(|f| f.apply).unwrap_or_default()
    };
    // Only what the project file names is refused when missing: on PostgreSQL a schema
    // the command line or the environment names is created as always.
    let create_db = db_from != DbFrom::ProjectFile
        || (is_postgres_url(&db) && (args.schema.is_some() || env.schema.is_some()));
    let retention = file
        .and_then(|f| f.history.keep.as_deref())
        .map(|keep| Retention::parse(keep).map_err(Error::bad))
        .transpose()?
        .unwrap_or_default();
    Ok(Settings {
        db,
        schema,
        templates,
        timezone,
        apply,
        retention,
        project: project.map(|p| p.path),
        db_from,
        create_db,
    })
}

/// What to say when a command creates the default database outside any project: most
/// often a command run in the wrong folder, which would otherwise succeed quietly on an
/// empty pipeline (None: a project, a named database, or one that exists already). The
/// contract's default stays: the database is created, and this says so.
pub fn new_default_db(settings: &Settings, here: &Path) -> Option<String> {
    let creates =
        settings.default_db() && settings.project.is_none() && !Path::new(&settings.db).exists();
    let pipeline = match &settings.templates {
        None => "the built-in pipeline (orders -> daily_revenue)".to_string(),
        Some(dir) => format!("the pipeline in {}", dir.display()),
    };
    creates.then(|| {
        format!(
            "note: no {FILE_NAME} in {} or a folder above it, and nothing named a database \
             (--db, SQLRUN_DB): created ./{DEFAULT_DB} there, with {pipeline}. For a \
             project of your own, cd into it or start one with `sqlrun new DIR`; to use \
             another database, pass --db or set SQLRUN_DB.",
            here.display()
        )
    })
}

/// The project file's `templates`: a folder, relative to the file's.
fn project_templates(project: &Project, dir: &str) -> Result<PathBuf> {
    let full = in_folder(project.folder(), dir);
    if !full.is_dir() {
        return Err(Error::bad(format!(
            "project file {}: `templates = {dir:?}` names {}, which is not a folder; point it \
             at the folder that holds models/ and views/, relative to the file's folder \
             (\".\" for the project's own)",
            project.path.display(),
            full.display()
        )));
    }
    Ok(full)
}

/// `path` relative to `folder` (an absolute `path` stays as it is), without `.` parts:
/// `templates = "."` is recorded as the project's folder itself.
fn in_folder(folder: &Path, path: &str) -> PathBuf {
    folder.join(path).components().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> Result<ProjectFile> {
        parse(Path::new("/p/sqlrun.toml"), text)
    }

    fn message(text: &str) -> String {
        file(text).unwrap_err().to_string()
    }

    fn args() -> Flags {
        Flags::default()
    }

    fn project(text: &str) -> Project {
        Project {
            path: PathBuf::from("/p/sqlrun.toml"),
            file: file(text).unwrap(),
        }
    }

    #[test]
    fn a_full_file_parses() {
        let f = file(
            "db = \"postgresql://etl@db/warehouse\"\nschema = \"sales\"\ntemplates = \"pipeline\"\n\n[apply]\nlookback = 7\n",
        )
        .unwrap();
        assert_eq!(f.db.as_deref(), Some("postgresql://etl@db/warehouse"));
        assert_eq!(f.schema.as_deref(), Some("sales"));
        assert_eq!(f.templates.as_deref(), Some("pipeline"));
        assert_eq!(f.apply.lookback, Some(7));
        assert_eq!(file("").unwrap(), ProjectFile::default());
        assert_eq!(
            file("# only comments\n[apply]\n").unwrap(),
            ProjectFile::default()
        );
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line_and_what_is_known() {
        let m = message("db = \"x.db\"\ncolour = \"red\"\n");
        assert!(m.contains("/p/sqlrun.toml, line 2"), "{m}");
        assert!(m.contains("colour"), "{m}");
        assert!(
            m.contains("unknown key `colour`, expected one of `db`, `schema`"),
            "{m}"
        );
        let m = message("[apply]\nkeep_going = true\n");
        assert!(m.contains("line 2") && m.contains("keep_going"), "{m}");
        assert!(m.contains("lookback"), "{m}");
        let m = message("[aply]\nlookback = 1\n");
        assert!(m.contains("line 1") && m.contains("aply"), "{m}");
    }

    #[test]
    fn a_wrong_type_names_the_key_and_what_it_takes() {
        let m = message("[apply]\nlookback = \"7\"\n");
        assert!(m.contains("line 2"), "{m}");
        assert!(m.contains("`apply.lookback`: invalid type"), "{m}");
        assert!(m.contains("it takes a whole number of days"), "{m}");
        let m = message("[apply]\nlookback = -1\n");
        assert!(m.contains("`apply.lookback`: invalid value"), "{m}");
        let m = message("db = 3\n");
        assert!(
            m.contains("`db`: invalid type") && m.contains("takes a string"),
            "{m}"
        );
        let m = message("apply = 3\n");
        assert!(
            m.contains("`apply`: invalid type: integer `3`, expected a table"),
            "{m}"
        );
        let m = message("db = \"x.db\n");
        assert!(m.contains("/p/sqlrun.toml, line 1"), "{m}");
    }

    #[test]
    fn values_are_checked() {
        assert!(message("db = \"\"\n").contains("`db` is empty"));
        let m = message("db = \"postgres://h/d\"\nschema = \"Sales\"\n");
        assert!(
            m.contains("`schema` is `Sales`, not a plain schema name"),
            "{m}"
        );
        let m = message("db = \"x.db\"\nschema = \"sales\"\n");
        assert!(m.contains("`schema` is for PostgreSQL"), "{m}");
    }

    #[test]
    fn the_file_is_found_here_or_above() {
        let tmp = tempfile::tempdir().unwrap();
        let sub = tmp.path().join("a/b");
        fs::create_dir_all(&sub).unwrap();
        assert_eq!(find(&sub).filter(|p| p.starts_with(tmp.path())), None);
        fs::write(tmp.path().join(FILE_NAME), "").unwrap();
        assert_eq!(find(&sub), Some(tmp.path().join(FILE_NAME)));
        fs::write(tmp.path().join("a").join(FILE_NAME), "").unwrap();
        assert_eq!(find(&sub), Some(tmp.path().join("a").join(FILE_NAME)));
        // A folder of that name is not a project file.
        fs::create_dir(sub.join(FILE_NAME)).unwrap();
        assert_eq!(find(&sub), Some(tmp.path().join("a").join(FILE_NAME)));
    }

    #[test]
    fn flags_then_environment_then_file_then_defaults() {
        let none = resolve(&args(), &Env::default(), None).unwrap();
        assert_eq!(none.db, "sqlrun.db");
        assert_eq!(
            (none.schema, none.templates, none.project),
            (None, None, None)
        );

        let p = project("db = \"data/p.db\"\n[apply]\nlookback = 3\n");
        let from_file = resolve(&args(), &Env::default(), Some(p.clone())).unwrap();
        assert_eq!(from_file.db, "/p/data/p.db");
        assert_eq!(from_file.project, Some(PathBuf::from("/p/sqlrun.toml")));
        assert_eq!(from_file.apply.lookback, Some(3));

        let env = Env::from_lookup(|k| (k == "SQLRUN_DB").then(|| "env.db".to_string()));
        assert_eq!(
            resolve(&args(), &env, Some(p.clone())).unwrap().db,
            "env.db"
        );
        let flag = Flags {
            db: Some("flag.db".into()),
            ..args()
        };
        let both = resolve(&flag, &env, Some(p)).unwrap();
        assert_eq!(both.db, "flag.db");
        // The other settings still come from the file.
        assert_eq!(both.apply.lookback, Some(3));
    }

    #[test]
    fn an_empty_variable_is_unset() {
        let env = Env::from_lookup(|_| Some(String::new()));
        assert_eq!(env, Env::default());
    }

    #[test]
    fn the_schema_of_the_file_goes_with_its_postgresql_database() {
        let p = project("db = \"postgresql://h/d\"\nschema = \"sales\"\n");
        let g = resolve(&args(), &Env::default(), Some(p.clone())).unwrap();
        assert_eq!(
            (g.db.as_str(), g.schema.as_deref()),
            ("postgresql://h/d", Some("sales"))
        );
        let env = Env {
            db: Some("postgres://other/d".into()),
            ..Env::default()
        };
        let g = resolve(&args(), &env, Some(p.clone())).unwrap();
        assert_eq!(g.schema.as_deref(), Some("sales"));
        let sqlite = Flags {
            db: Some("local.db".into()),
            ..args()
        };
        let g = resolve(&sqlite, &Env::default(), Some(p.clone())).unwrap();
        assert_eq!((g.db.as_str(), g.schema), ("local.db", None));
        let env = Env {
            schema: Some("other".into()),
            ..Env::default()
        };
        let g = resolve(&args(), &env, Some(p)).unwrap();
        assert_eq!(g.schema.as_deref(), Some("other"));
    }

    #[test]
    fn templates_are_relative_to_the_file_and_must_be_a_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE_NAME);
        let with = |text: &str| Project {
            path: path.clone(),
            file: file(text).unwrap(),
        };
        let g = resolve(&args(), &Env::default(), Some(with("templates = \".\"\n"))).unwrap();
        assert_eq!(g.templates.as_deref(), Some(tmp.path()));
        let m = resolve(
            &args(),
            &Env::default(),
            Some(with("templates = \"nope\"\n")),
        )
        .unwrap_err()
        .to_string();
        assert!(
            m.contains(&path.display().to_string()) && m.contains("not a folder"),
            "{m}"
        );
        // A flag or the environment wins, and is taken as given (relative to the current folder).
        let env = Env {
            templates: Some("env-dir".into()),
            ..Env::default()
        };
        let g = resolve(&args(), &env, Some(with("templates = \"nope\"\n"))).unwrap();
        assert_eq!(g.templates, Some(PathBuf::from("env-dir")));
        let flag = Flags {
            templates: Some("flag-dir".into()),
            ..args()
        };
        let g = resolve(&flag, &env, Some(with("templates = \".\"\n"))).unwrap();
        assert_eq!(g.templates, Some(PathBuf::from("flag-dir")));
    }

    #[test]
    fn jobs_are_checked_and_go_with_a_postgresql_database() {
        let f = file("db = \"postgresql://h/d\"\n[apply]\njobs = 4\n").unwrap();
        assert_eq!(f.apply.jobs, Some(4));
        let m = message("[apply]\njobs = 0\n");
        assert!(
            m.contains("`apply.jobs` is 0; it takes a whole number from 1 to 64"),
            "{m}"
        );
        assert!(message("[apply]\njobs = 65\n").contains("`apply.jobs` is 65"));
        let m = message("[apply]\njobs = -1\n");
        assert!(
            m.contains("line 2") && m.contains("`apply.jobs`: invalid value"),
            "{m}"
        );
        let m = message("db = \"x.db\"\n[apply]\njobs = 2\n");
        assert!(
            m.contains("`apply.jobs` is 2, but `db` is the SQLite file x.db")
                && m.contains("postgres:// URL"),
            "{m}"
        );
        assert!(file("db = \"x.db\"\n[apply]\njobs = 1\n").is_ok());

        let p = project("db = \"postgresql://h/d\"\n[apply]\njobs = 4\nlookback = 2\n");
        let g = resolve(&args(), &Env::default(), Some(p.clone())).unwrap();
        assert_eq!((g.apply.jobs, g.apply.lookback), (Some(4), Some(2)));
        // A SQLite file named on the command line does not inherit them: it has one writer.
        let sqlite = Flags {
            db: Some("local.db".into()),
            ..args()
        };
        let g = resolve(&sqlite, &Env::default(), Some(p)).unwrap();
        assert_eq!((g.apply.jobs, g.apply.lookback), (None, Some(2)));
    }
}
