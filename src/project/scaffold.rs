//! `sqlrun new DIR`: a working project to start from, as `cargo new` and `dbt init` make
//! one: the project file, the built-in pipeline's models and views (byte for byte the ones
//! in this binary), a README of the layout and a .gitignore for the database files. The
//! database itself is `sqlrun init`'s to make.

use std::fs;
use std::path::{Path, PathBuf};

use crate::db::is_postgres_url;
use crate::error::{Error, Result};
use crate::pipeline::templates::BUILTIN_TEMPLATES;
use crate::project::settings::Flags;
use crate::project::{self, FILE_NAME};

/// The project file `new` writes; `{db}` and `{schema}` are filled in by `project_file`.
const PROJECT_FILE: &str = r#"# The sqlrun project file. sqlrun finds it from the current folder upward, as Cargo finds
# Cargo.toml, so every command below this folder uses this project without --db or
# --templates. A flag, else $SQLRUN_DB / $SQLRUN_SCHEMA / $SQLRUN_TEMPLATES, overrides a
# setting here.

# The database: a SQLite file, relative to this file's folder, or a PostgreSQL URL
# (postgresql://USER@HOST/DB), with the schema that holds the pipeline (default public).
db = {db}
{schema}

# The pipeline: models/*.sql, views/*.sql and checks/*.sql, relative to this file's folder.
templates = "."

# Defaults for `sqlrun apply` that everyone who runs this project shares.
[apply]
# A regular run (`sqlrun apply`, no --interval) also looks back this many days before
# yesterday and computes those that are missing, failed or changed (late data, a date a
# backfill held); --lookback N overrides, --lookback 0 computes yesterday alone.
lookback = 7
"#;

const README: &str = r#"# A sqlrun project

```text
sqlrun.toml   the project file: the database, the templates folder, defaults for apply
models/       one SQL file per partitioned table: the SELECT that computes one date
views/        views derived from the models (e.g. a cumulative total)
checks/       queries that return a date's wrong rows; a failing `error` check rolls the date back
sources/      the tables the models read: key, latest-version rule, date column, DDL
```

Every `sqlrun` command run in this folder (or below it) uses `sqlrun.toml`: no `--db` or
`--templates` to remember. A flag or `SQLRUN_DB` / `SQLRUN_SCHEMA` / `SQLRUN_TEMPLATES`
overrides it for one command.

First commands, and what they print (stdout, and stderr with each date's progress; `[CWD]`
is this folder, `[..]` what differs from run to run):

```console
$ sqlrun init                                     # create the database and the pipeline's tables
[CWD]/sqlrun.db is ready: state store and pipeline ([CWD] templates; models: daily_revenue)
settings from project file [CWD]/sqlrun.toml

$ sqlrun generate --start 2026-02-01 --days 14    # some synthetic orders to compute
inserted 14679 order rows (679 re-sent) for 2026-02-01..2026-02-14 (seed 1)

$ sqlrun apply --interval 2026-02-01..2026-02-14  # a backfill: each date in its own transaction
2026-02-01  success  ([..] ms)
2026-02-02  success  ([..] ms)
2026-02-03  success  ([..] ms)
2026-02-04  success  ([..] ms)
2026-02-05  success  ([..] ms)
2026-02-06  success  ([..] ms)
2026-02-07  success  ([..] ms)
2026-02-08  success  ([..] ms)
2026-02-09  success  ([..] ms)
2026-02-10  success  ([..] ms)
2026-02-11  success  ([..] ms)
2026-02-12  success  ([..] ms)
2026-02-13  success  ([..] ms)
2026-02-14  success  ([..] ms)
run 1 (backfill 2026-02-01..2026-02-14): 14 success -> success
2026-02-01..2026-02-14  success  14 dates

$ sqlrun apply --as-of 2026-02-15                 # the regular run: yesterday, and a look back (lookback)
looked back 7 days (2026-02-07..2026-02-14): nothing missing, failed or changed
2026-02-14  success  ([..] ms)
run 2 (regular 2026-02-07..2026-02-14): 1 success -> success
2026-02-14  success  1 date

$ sqlrun status                                   # the dates at a glance: computed, sealed, held
2026-02-01..2026-02-14: 14 dates, from the first to the last date known

  # computed  14    S sealed     0    C corrected  0    ! changed    0
  ~ stale      0    . missing    0    X failed     0    H held       0

every date computed and current

2026     1       5         10        15        20        25        30
2026-02  # # # # # # # # # # # # # #

$ sqlrun render --date 2026-02-03 daily_revenue   # a model's SQL for one date
-- name: daily_revenue
-- version: 2
-- table: daily_revenue
-- date_column: ds
-- key: ds
-- values: revenue, order_count
-- seal_values: revenue, order_count
-- sources: orders(order_date, key order_id)
--
-- One row per date, also for a date with no orders (revenue 0, order_count 0). Each
-- order counts once, in its latest version, on that version's date: the rule is the
-- view orders_latest (views/orders_latest.sql), shared by every model over orders.
-- (Version 1 wrote the same rule inline; the numbers are the same.)
SELECT '2026-02-03' AS ds,
       coalesce(sum(o.amount), 0) AS revenue,
       count(*) AS order_count
FROM orders_latest AS o
WHERE o.order_date = '2026-02-03'


$ sqlrun check --interval 2026-02-01..2026-02-14  # the checks over the computed dates, read-only
checked 14 dates of 2026-02-01..2026-02-14 with 5 checks: all passed

```

`sqlrun render --date 2026-02-03` (without a model) prints the whole transaction the date
executes.

A model's header (`-- name:`, `-- version:`, ...) is its metadata; change its SQL only with a
new `-- version:`.

To add a model: copy `models/daily_revenue.sql` to `models/<name>.sql`, set `-- name:` to
the file's name and `-- version: 1`, give it a `-- create:` for its table and its `-- key:`
and `-- values:` columns, and write the SELECT for one date, `{{ ds }}`, reading
`orders_latest` (the latest version of each order), not `orders`. Then:

```sh
sqlrun render --date 2026-02-03 <name>                           # its SQL for one date
sqlrun apply --interval 2026-02-01..2026-02-14 --select <name>   # compute it alone
```

To add a check: a file `checks/<name>.sql` with `-- name: <name>`, `-- version: 1`,
`-- model: <model>` and `-- severity: error` (the date rolls back when it finds rows) or
`warn` (recorded, the date commits), then a SELECT of the rows that are wrong on `{{ ds }}`,
reading `{{ this }}` (the model's rows as they stand). The files in checks/ show the
generic ones (`{% import "system/checks.sql" as check %}`).

See `sqlrun --help` and sqlrun's README ("Adding a model, step by step") for the rest.
"#;

const GITIGNORE: &str = "# The SQLite database and its journal files: data, not source.\n\
                         *.db\n*.db-wal\n*.db-shm\n*.db-journal\n";

/// What `new` writes into a project folder, by relative path.
pub fn files(db: &str, schema: Option<&str>) -> Vec<(PathBuf, String)> {
    let mut files = vec![(PathBuf::from(FILE_NAME), project_file(db, schema))];
    for (rel, source) in BUILTIN_TEMPLATES {
        // The pipeline's own files; system/ is the machinery, which stays in the binary.
        let pipeline = ["models/", "views/", "checks/", "sources/"]
            .iter()
            .any(|folder| rel.starts_with(folder));
        if pipeline && rel.matches('/').count() == 1 {
            files.push((PathBuf::from(rel), source.to_string()));
        }
    }
    files.push((PathBuf::from("README.md"), README.to_string()));
    files.push((PathBuf::from(".gitignore"), GITIGNORE.to_string()));
    files
}

/// The project file with `db` (and `schema`) as TOML strings, quoted by the TOML writer.
fn project_file(db: &str, schema: Option<&str>) -> String {
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let schema = match schema {
        Some(schema) => format!("schema = {}\n", quote(schema)),
        None => "# schema = \"sales\"\n".to_string(),
    };
    PROJECT_FILE
        .replace("{db}", &quote(db))
        .replace("{schema}\n", &schema)
}

/// What `sqlrun new` wrote: the project file, the database it names, every file.
pub struct Scaffolded {
    pub project_file: PathBuf,
    /// The database as the file names it, its password left out.
    pub db: String,
    pub files: Vec<PathBuf>,
}

/// Writes a new project into `dir` (new, or empty). --db and --schema, when given, go
/// into its sqlrun.toml.
pub fn write_project(args: &Flags, dir: &Path) -> Result<Scaffolded> {
    if args.templates.is_some() {
        return Err(Error::bad(
            "sqlrun new writes the project's own templates (models/, views/); --templates does \
             not go with it: to use another folder, set `templates` in the new sqlrun.toml",
        ));
    }
    // --db and --schema, when given, go into the file (a relative SQLite path made
    // absolute: on the command line it meant the current folder, in the file it would
    // mean the project's); otherwise the project keeps its database in its own folder.
    let db = match args.db.as_deref() {
        None => project::DEFAULT_DB.to_string(),
        Some(db) if is_postgres_url(db) => db.to_string(),
        Some(db) => std::path::absolute(db)?.display().to_string(),
    };
    // The same checks as reading the file: `new` never writes one that sqlrun refuses.
    let files = files(&db, args.schema.as_deref());
    project::parse(&dir.join(FILE_NAME), &files[0].1)?;
    refuse_used_folder(dir)?;
    for (rel, text) in &files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, text)?;
    }
    Ok(Scaffolded {
        project_file: dir.join(FILE_NAME),
        db: crate::db::redact_url(&db),
        files: files.iter().map(|(rel, _)| dir.join(rel)).collect(),
    })
}

/// A folder that exists and holds anything is not written into (sqlrun new, demo --keep).
pub fn refuse_used_folder(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.is_dir() {
        return Err(Error::bad(format!(
            "{} exists and is not a folder; give sqlrun new a new folder or an empty one",
            dir.display()
        )));
    }
    if fs::read_dir(dir)?.next().is_some() {
        return Err(Error::bad(format!(
            "{} exists and is not empty; sqlrun writes a project only into a new folder or \
             an empty one (to use a folder you have, write its sqlrun.toml by hand: see \
             `sqlrun --help`)",
            dir.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::parse;

    #[test]
    fn the_project_file_reads_back() {
        let path = Path::new("p/sqlrun.toml");
        let f = parse(path, &project_file("sqlrun.db", None)).unwrap();
        assert_eq!(f.db.as_deref(), Some("sqlrun.db"));
        assert_eq!(f.templates.as_deref(), Some("."));
        // A regular run heals late data from the start, as the README's example project.
        assert_eq!((f.schema, f.apply.lookback), (None, Some(7)));
        let url = "postgresql://etl:p\"w@db/warehouse";
        let f = parse(path, &project_file(url, Some("sales"))).unwrap();
        assert_eq!(f.db.as_deref(), Some(url));
        assert_eq!(f.schema.as_deref(), Some("sales"));
    }

    #[test]
    fn the_pipeline_files_are_the_built_in_ones() {
        let files = files("sqlrun.db", None);
        let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        assert!(names.contains(&"models/daily_revenue.sql".to_string()));
        assert!(names.contains(&"views/cumulative_revenue.sql".to_string()));
        assert!(names.contains(&"checks/daily_revenue_one_row.sql".to_string()));
        assert!(!names.iter().any(|n| n.starts_with("system")), "{names:?}");
        for (rel, text) in &files {
            if let Some((_, builtin)) = BUILTIN_TEMPLATES
                .iter()
                .find(|(r, _)| Path::new(r) == rel.as_path())
            {
                assert_eq!(text, builtin);
            }
        }
    }
}
