//! The project file (`sqlrun.toml`) and `sqlrun new`: commands run in a project folder, or
//! below it, with no `--db` and no `--templates`; flags beat the environment, which beats
//! the file; a bad file is refused before anything is written.
//!
//! On SQLite the project's database is its `sqlrun.db`; on PostgreSQL the file holds the
//! test server's URL and the sandbox's schema.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rusqlite::Connection;

use crate::support::*;

/// `sqlrun ARGS` in `dir` with nothing from outside that names a database or templates
/// (no SQLRUN_*, no PG*), and `env` set: only a project file (or `env`) can name them.
fn bare(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars() {
        if key.starts_with("SQLRUN_") || key.starts_with("PG") {
            cmd.env_remove(key);
        }
    }
    cmd.env("USER", "tester").env("NO_COLOR", "1");
    cmd.envs(env.iter().copied());
    cmd.current_dir(dir).args(args).stdin(Stdio::null());
    cmd
}

fn run_in_with(dir: &Path, env: &[(&str, &str)], code: i32, args: &[&str]) -> Run {
    let out = bare(dir, env, args).output().expect("run sqlrun");
    let run = Run::from(out);
    assert_eq!(
        run.code,
        code,
        "`sqlrun {}` in {} exited {}, wanted {code} (on {BACKEND})\nstdout: {}\nstderr: {}",
        args.join(" "),
        dir.display(),
        run.code,
        run.stdout,
        run.stderr
    );
    run
}

/// Runs in `dir` and wants `code`.
fn run_in(dir: &Path, code: i32, args: &[&str]) -> Run {
    run_in_with(dir, &[], code, args)
}

/// A TOML string, quoted by the TOML writer.
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// `sqlrun new NAME` in the sandbox's folder; on PostgreSQL with the sandbox's URL and
/// schema, which go into the project file.
fn new_project(sb: &Sandbox, name: &str) -> (PathBuf, Run) {
    let mut args = vec!["new".to_string(), name.to_string()];
    if is_postgres() {
        let (url, schema) = sb.url();
        args.extend(["--db".into(), url, "--schema".into(), schema]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = run_in(sb.path(), 0, &args);
    (sb.path().join(name), run)
}

/// The `db = ...` (and `schema = ...`) lines of a project file on this sandbox: on SQLite
/// the file `sqlite_db` (as written, relative to the file's folder), on PostgreSQL the
/// server's URL and `schema`.
fn db_lines(sb: &Sandbox, sqlite_db: &str, schema: Option<&str>) -> String {
    match BACKEND {
        Backend::Sqlite => format!("db = {}\n", toml_str(sqlite_db)),
        Backend::Postgres => {
            let (url, own) = sb.url();
            format!(
                "db = {}\nschema = {}\n",
                toml_str(&url),
                toml_str(schema.unwrap_or(&own))
            )
        }
    }
}

/// Rows of `sql` in the project's database: on SQLite the file `db`, on PostgreSQL the
/// sandbox's schema.
fn rows_at(sb: &Sandbox, db: &Path, sql: &str) -> Vec<Vec<String>> {
    match BACKEND {
        Backend::Sqlite => {
            assert!(db.is_file(), "no database {}", db.display());
            sqlite_rows(&Connection::open(db).unwrap(), sql)
        }
        Backend::Postgres => sb.rows(sql),
    }
}

fn insert_at(sb: &Sandbox, db: &Path, rows: &[OrderRow]) {
    match BACKEND {
        Backend::Sqlite => {
            let mut conn = Connection::open(db).unwrap();
            let tx = conn.transaction().unwrap();
            for r in rows {
                tx.execute(
                    "INSERT INTO orders(order_id, order_date, amount, created_at) VALUES (?1, ?2, ?3, ?4)",
                    rusqlite::params![r.order_id, r.order_date, r.amount, r.created_at],
                )
                .unwrap();
            }
            tx.commit().unwrap();
        }
        Backend::Postgres => sb.insert_orders(rows),
    }
}

fn daily_at(sb: &Sandbox, db: &Path) -> std::collections::BTreeMap<String, (i64, i64)> {
    rows_at(sb, db, "SELECT ds, revenue, order_count FROM daily_revenue")
        .into_iter()
        .map(|r| (r[0].clone(), (r[1].parse().unwrap(), r[2].parse().unwrap())))
        .collect()
}

/// Whether the pipeline's state store exists where the sandbox keeps it: on SQLite the
/// file `db`, on PostgreSQL a `runs` table in the sandbox's schema.
fn store_exists(sb: &Sandbox, db: &Path) -> bool {
    match BACKEND {
        Backend::Sqlite => db.exists(),
        Backend::Postgres => sb.table_exists("runs"),
    }
}

fn real(path: &Path) -> String {
    path.canonicalize().unwrap().display().to_string()
}

/// The files in `dir` and below, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            out.push(path.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

#[test]
fn a_new_project_works_without_db_or_templates_flags() {
    let sb = Sandbox::empty();
    let (dir, made) = new_project(&sb, "shop");
    let db = dir.join("sqlrun.db");

    // The layout, with the built-in pipeline byte for byte; no database yet.
    assert_eq!(
        tree(&dir),
        [
            ".gitignore",
            "README.md",
            "checks",
            "checks/daily_revenue_change.sql",
            "checks/daily_revenue_not_null.sql",
            "checks/daily_revenue_one_row.sql",
            "checks/daily_revenue_order_count_not_negative.sql",
            "checks/daily_revenue_revenue_not_negative.sql",
            "models",
            "models/daily_revenue.sql",
            "sources",
            "sources/orders.sql",
            "sqlrun.toml",
            "views",
            "views/cumulative_revenue.sql",
            "views/cumulative_revenue_as_sent.sql",
        ]
    );
    let builtin = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    for file in [
        "models/daily_revenue.sql",
        "views/cumulative_revenue.sql",
        "views/cumulative_revenue_as_sent.sql",
        "checks/daily_revenue_one_row.sql",
    ] {
        assert_eq!(
            fs::read(dir.join(file)).unwrap(),
            fs::read(builtin.join(file)).unwrap(),
            "{file} is not the built-in one"
        );
    }
    for said in [
        "sqlrun.toml",
        "models/daily_revenue.sql",
        "sqlrun init",
        "cd ",
    ] {
        assert!(
            made.stdout.contains(said),
            "new should say {said:?}:\n{}",
            made.stdout
        );
    }
    assert!(!store_exists(&sb, &db), "sqlrun new made the database");
    assert!(!sb.path().join("sqlrun.db").exists());

    // init says which project file it used; the database is the project's.
    let init = run_in(&dir, 0, &["init"]);
    assert!(
        init.stdout.contains(&real(&dir.join("sqlrun.toml"))),
        "init should name the project file:\n{}",
        init.stdout
    );
    assert!(store_exists(&sb, &db));
    if is_sqlite() {
        assert!(!sb.db.exists() && !dir.join("models/sqlrun.db").exists());
    }

    let orders = Orders::new(7, "2026-02-01", 5, true);
    insert_at(&sb, &db, &orders.rows);
    run_in(&dir, 0, &["apply", "--interval", &orders.interval()]);
    run_in(&dir, 0, &["apply", "--as-of", "2026-02-06"]);
    // Its look back of 7 days also filled the three never computed days before February.
    let mut expected = orders.expected();
    for ds in ["2026-01-29", "2026-01-30", "2026-01-31"] {
        expected.insert(ds.to_string(), (0, 0));
    }
    assert_eq!(daily_at(&sb, &db), expected);
    assert_eq!(
        rows_at(
            &sb,
            &db,
            "SELECT run_id, kind, templates_from, lookback FROM runs ORDER BY run_id"
        ),
        [
            ["1", "backfill", &real(&dir), "NULL"],
            // `sqlrun new` writes `lookback = 7`: the regular run heals from the start.
            ["2", "regular", &real(&dir), "7"],
        ]
    );
    assert_eq!(
        rows_at(&sb, &db, "SELECT count(*) FROM run_partitions")[0][0],
        "9"
    );

    // The read commands, and generate, find the project too.
    let status = run_in(&dir, 0, &["status"]);
    assert!(status.stdout.contains("2026-02-05"), "{}", status.stdout);
    let runs = run_in(&dir, 0, &["runs"]);
    assert!(
        runs.stdout.contains("2026-02-01..2026-02-05"),
        "{}",
        runs.stdout
    );
    let render = run_in(&dir, 0, &["render", "--date", "2026-02-03"]);
    assert!(render.stdout.contains("daily_revenue"), "{}", render.stdout);
    run_in(
        &dir,
        0,
        &[
            "generate",
            "--start",
            "2026-03-01",
            "--days",
            "2",
            "--per-day",
            "5",
        ],
    );
    assert!(
        rows_at(
            &sb,
            &db,
            "SELECT count(*) FROM orders WHERE order_date >= '2026-03-01'"
        )[0][0]
            .parse::<i64>()
            .unwrap()
            >= 10
    );
    // -v names the project file.
    let verbose = run_in(&dir, 0, &["-v", "status"]);
    assert!(
        verbose.stderr.contains(&real(&dir.join("sqlrun.toml"))),
        "-v should name the project file:\n{}",
        verbose.stderr
    );
}

#[test]
fn a_subfolder_uses_the_project_and_paths_relative_to_its_file() {
    let sb = Sandbox::empty();
    let dir = sb.path().join("proj");
    let pipeline = dir.join("pipeline");
    let builtin = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    for sub in ["models", "views", "sources"] {
        fs::create_dir_all(pipeline.join(sub)).unwrap();
        for entry in fs::read_dir(builtin.join(sub)).unwrap().flatten() {
            fs::copy(entry.path(), pipeline.join(sub).join(entry.file_name())).unwrap();
        }
    }
    fs::create_dir_all(dir.join("data")).unwrap();
    fs::write(
        dir.join("sqlrun.toml"),
        format!(
            "{}templates = \"pipeline\"\n",
            db_lines(&sb, "data/p.db", None)
        ),
    )
    .unwrap();
    let deep = dir.join("reports/2026/feb");
    fs::create_dir_all(&deep).unwrap();
    let db = dir.join("data/p.db");

    run_in(&deep, 0, &["init"]);
    let orders = Orders::new(8, "2026-02-01", 3, false);
    insert_at(&sb, &db, &orders.rows);
    run_in(&deep, 0, &["apply", "--interval", &orders.interval()]);
    assert_eq!(daily_at(&sb, &db), orders.expected());
    assert_eq!(
        rows_at(&sb, &db, "SELECT templates_from FROM runs"),
        [[real(&pipeline)]]
    );
    // Nothing landed where the commands ran.
    assert_eq!(tree(&deep), Vec::<String>::new());
    let status = run_in(&deep.join(".."), 0, &["status"]);
    assert!(status.stdout.contains("2026-02-03"), "{}", status.stdout);
    if is_sqlite() {
        // The database is the one beside the file, not one in the current folder.
        assert_eq!(tree(&dir.join("data"))[0], "p.db");
    }
}

/// Where a run lands, per backend: a SQLite file named `name` in `dir`, or a schema
/// `<sandbox schema>_name` (the sandbox's own for "file").
struct Places<'a> {
    sb: &'a Sandbox,
    dir: &'a Path,
}

impl Places<'_> {
    /// The value to give --db (SQLite) or --schema (PostgreSQL) for place `name`.
    fn value(&self, name: &str) -> String {
        match BACKEND {
            Backend::Sqlite => self.dir.join(format!("{name}.db")).display().to_string(),
            Backend::Postgres => {
                let own = self.sb.schema.clone().unwrap();
                if name == "file" {
                    own
                } else {
                    format!("{own}_{name}")
                }
            }
        }
    }

    /// The flag or variable that names place `name`: `--db`/`SQLRUN_DB` or
    /// `--schema`/`SQLRUN_SCHEMA`.
    fn flag(&self) -> &'static str {
        if is_sqlite() {
            "--db"
        } else {
            "--schema"
        }
    }

    fn var(&self) -> &'static str {
        if is_sqlite() {
            "SQLRUN_DB"
        } else {
            "SQLRUN_SCHEMA"
        }
    }

    /// How many runs place `name` holds (0 if it does not exist).
    fn runs(&self, name: &str) -> i64 {
        match BACKEND {
            Backend::Sqlite => {
                let path = PathBuf::from(self.value(name));
                if !path.exists() {
                    return 0;
                }
                sqlite_rows(
                    &Connection::open(path).unwrap(),
                    "SELECT count(*) FROM runs",
                )[0][0]
                    .parse()
                    .unwrap()
            }
            Backend::Postgres => {
                let schema = self.value(name);
                let exists = self.sb.count(&format!(
                    "SELECT count(*) FROM pg_catalog.pg_tables \
                     WHERE schemaname = '{schema}' AND tablename = 'runs'"
                ));
                if exists == 0 {
                    return 0;
                }
                self.sb
                    .count(&format!("SELECT count(*) FROM \"{schema}\".runs"))
            }
        }
    }

    fn templates_from(&self, name: &str) -> String {
        let sql = "SELECT templates_from FROM runs ORDER BY run_id DESC LIMIT 1";
        let rows = match BACKEND {
            Backend::Sqlite => sqlite_rows(&Connection::open(self.value(name)).unwrap(), sql),
            Backend::Postgres => self.sb.rows(&format!(
                "SELECT templates_from FROM \"{}\".runs ORDER BY run_id DESC LIMIT 1",
                self.value(name)
            )),
        };
        rows[0][0].clone()
    }
}

#[test]
fn a_flag_beats_the_environment_which_beats_the_file() {
    let sb = Sandbox::empty();
    let (dir, _) = new_project(&sb, "proj");
    let places = Places { sb: &sb, dir: &dir };
    if is_sqlite() {
        fs::write(
            dir.join("sqlrun.toml"),
            format!("db = {}\ntemplates = \".\"\n", toml_str("file.db")),
        )
        .unwrap();
    }
    // Another pipeline folder, for SQLRUN_TEMPLATES and --templates.
    let other = sb.path().join("other");
    for sub in ["models", "views", "sources"] {
        fs::create_dir_all(other.join(sub)).unwrap();
        for entry in fs::read_dir(dir.join(sub)).unwrap().flatten() {
            fs::copy(entry.path(), other.join(sub).join(entry.file_name())).unwrap();
        }
    }
    let counts = || ["file", "env", "flag"].map(|p| places.runs(p)).to_vec();
    let apply = ["apply", "--interval", "2026-02-01"];

    // The project's database is created by the first apply only when it says so.
    run_in(&dir, 0, &["apply", "--create", "--interval", "2026-02-01"]);
    assert_eq!(counts(), [1, 0, 0]);
    assert_eq!(places.templates_from("file"), real(&dir));

    let env_place = places.value("env");
    let other_text = other.display().to_string();
    let env = [
        (places.var(), env_place.as_str()),
        ("SQLRUN_TEMPLATES", other_text.as_str()),
    ];
    run_in_with(&dir, &env, 0, &apply);
    assert_eq!(counts(), [1, 1, 0]);
    assert_eq!(places.templates_from("env"), other_text);

    let flag_place = places.value("flag");
    let mut with_flag = vec![places.flag(), flag_place.as_str(), "--templates", ".."];
    with_flag.extend(apply);
    run_in_with(&dir.join("models"), &env, 0, &with_flag);
    assert_eq!(counts(), [1, 1, 1]);
    // --templates is relative to the current folder, as a flag always was.
    assert_eq!(places.templates_from("flag"), "..");

    // An empty variable is no setting: the file's database again.
    run_in_with(&dir, &[(places.var(), "")], 0, &apply);
    assert_eq!(counts(), [2, 1, 1]);
}

#[test]
fn the_project_lookback_applies_to_regular_runs_only() {
    let sb = Sandbox::empty();
    let (dir, _) = new_project(&sb, "proj");
    let file = dir.join("sqlrun.toml");
    let text = fs::read_to_string(&file).unwrap();
    assert!(text.contains("\nlookback = 7\n"), "{text}");
    fs::write(&file, text.replace("\nlookback = 7\n", "\nlookback = 3\n")).unwrap();
    let db = dir.join("sqlrun.db");
    run_in(&dir, 0, &["init"]);
    let orders = Orders::new(9, "2026-02-01", 9, false);
    insert_at(&sb, &db, &orders.rows);

    let run_of = |run_id: i64| {
        let run = rows_at(
            &sb,
            &db,
            &format!("SELECT kind, lookback FROM runs WHERE run_id = {run_id}"),
        );
        let dates: Vec<String> = rows_at(
            &sb,
            &db,
            &format!("SELECT ds FROM run_partitions WHERE run_id = {run_id} ORDER BY ds"),
        )
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
        (run[0][0].clone(), run[0][1].clone(), dates)
    };
    let last = || {
        rows_at(&sb, &db, "SELECT max(run_id) FROM runs")[0][0]
            .parse::<i64>()
            .unwrap()
    };

    // A backfill ignores it.
    run_in(&dir, 0, &["apply", "--interval", "2026-02-02"]);
    assert_eq!(
        run_of(last()),
        ("backfill".into(), "NULL".into(), vec!["2026-02-02".into()])
    );
    // A regular run looks back 3 days before yesterday (2026-02-05): 02-02 is done,
    // 02-03 and 02-04 are missing.
    run_in(&dir, 0, &["apply", "--as-of", "2026-02-06"]);
    assert_eq!(
        run_of(last()),
        (
            "regular".into(),
            "3".into(),
            vec![
                "2026-02-03".into(),
                "2026-02-04".into(),
                "2026-02-05".into()
            ]
        )
    );
    // --lookback on the command line wins; --only and --run take no look back.
    run_in(
        &dir,
        0,
        &["apply", "--as-of", "2026-02-08", "--lookback", "0"],
    );
    assert_eq!(
        run_of(last()),
        ("regular".into(), "0".into(), vec!["2026-02-07".into()])
    );
    let reserved = run_in(&dir, 0, &["reserve", "--interval", "2026-02-09"]);
    let run_id: i64 = reserved.stdout.trim().parse().unwrap();
    run_in(&dir, 0, &["apply", "--run", &run_id.to_string()]);
    assert_eq!(
        run_of(run_id),
        ("backfill".into(), "NULL".into(), vec!["2026-02-09".into()])
    );
    // 2026-02-01, 02-06 and 02-08 were never asked for: no look back reached them.
    let mut want = orders.expected();
    let left = ["2026-02-01", "2026-02-06", "2026-02-08"];
    for ds in left {
        want.remove(ds);
    }
    assert_eq!(daily_at(&sb, &db), want);
    // --only without --interval looks at every date known up to yesterday (a backfill of
    // that span), not back from yesterday, and no project look back applies to it.
    run_in(
        &dir,
        0,
        &["apply", "--as-of", "2026-02-09", "--only", "missing"],
    );
    assert_eq!(
        run_of(last()),
        (
            "backfill".into(),
            "NULL".into(),
            left.map(String::from).to_vec()
        )
    );
    assert_eq!(daily_at(&sb, &db), orders.expected());
}

#[test]
fn a_bad_project_file_exits_2_and_writes_nothing() {
    // A database with rows, used with flags as always; then a project file in the folder
    // the commands run in.
    let sb = Sandbox::new();
    let orders = Orders::new(10, "2026-02-01", 3, false);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let file = sb.path().join("sqlrun.toml");
    let shown = real(sb.path()).to_string() + "/sqlrun.toml";
    let cases: [(&str, &[&str]); 6] = [
        (
            "colour = \"red\"\n",
            &[
                "line 1",
                "unknown key `colour`",
                "`db`, `schema`, `templates`",
            ],
        ),
        (
            "[apply]\nlookback = \"7\"\n",
            &["line 2", "`apply.lookback`", "a whole number of days"],
        ),
        ("[apply]\nlookback = -2\n", &["line 2", "`apply.lookback`"]),
        (
            "[apply]\nkeep_going = true\n",
            &["line 2", "unknown key `keep_going`", "`lookback`"],
        ),
        ("db = 42\n", &["line 1", "`db`", "a string"]),
        (
            "templates = \"no-such-folder\"\n",
            &["`templates = \"no-such-folder\"`", "not a folder"],
        ),
    ];
    for (text, needles) in cases {
        fs::write(&file, text).unwrap();
        let before = snapshot(&sb);
        for args in [
            &["apply", "--interval", "2026-02-04"][..],
            &["apply", "--as-of", "2026-02-05"],
            &["init"],
            &["status"],
        ] {
            let run = sb.expect(2, args);
            assert!(run.stderr.contains(&shown), "{text:?}: {}", run.stderr);
            for needle in needles {
                assert!(
                    run.stderr.contains(needle),
                    "{text:?}: stderr should mention {needle:?}:\n{}",
                    run.stderr
                );
            }
        }
        assert_eq!(snapshot(&sb), before, "{text:?}: something was written");
    }

    // In a fresh folder, a bad file leaves no database behind.
    let fresh = Sandbox::empty();
    let dir = fresh.path().join("proj");
    fs::create_dir(&dir).unwrap();
    fs::write(
        dir.join("sqlrun.toml"),
        format!(
            "{}[apply]\nlookback = 1.5\n",
            db_lines(&fresh, "sqlrun.db", None)
        ),
    )
    .unwrap();
    let run = run_in(&dir, 2, &["init"]);
    assert!(run.stderr.contains("`apply.lookback`"), "{}", run.stderr);
    run_in(&dir, 2, &["apply", "--interval", "2026-02-01"]);
    assert!(!store_exists(&fresh, &dir.join("sqlrun.db")));
    assert_eq!(tree(&dir), ["sqlrun.toml"]);
}

#[test]
fn new_refuses_a_folder_that_is_not_empty() {
    let sb = Sandbox::empty();
    let dir = sb.path().join("taken");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("notes.txt"), "mine").unwrap();
    let run = run_in(sb.path(), 2, &["new", "taken"]);
    assert!(
        run.stderr.contains("taken") && run.stderr.contains("not empty"),
        "{}",
        run.stderr
    );
    assert_eq!(tree(&dir), ["notes.txt"]);
    // A file is not a folder to write into.
    let run = run_in(sb.path(), 2, &["new", "taken/notes.txt"]);
    assert!(run.stderr.contains("not a folder"), "{}", run.stderr);
    assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
    // An empty folder, or one to make (with its parents), is fine.
    fs::create_dir(sb.path().join("empty")).unwrap();
    run_in(sb.path(), 0, &["new", "empty"]);
    run_in(sb.path(), 0, &["new", "a/b/c"]);
    assert!(sb.path().join("empty/sqlrun.toml").is_file());
    assert!(sb.path().join("a/b/c/models/daily_revenue.sql").is_file());
    // --templates makes no sense for a project that brings its own.
    run_in(sb.path(), 2, &["new", "d", "--templates", "empty"]);
    assert!(!sb.path().join("d").exists());
}

#[test]
fn the_demo_ignores_the_project() {
    let sb = Sandbox::empty();
    let (dir, _) = new_project(&sb, "proj");
    // A project whose models would not even load: the demo does not read them.
    fs::write(dir.join("models/daily_revenue.sql"), "not a template").unwrap();
    let demo = run_in(&dir, 0, &["demo"]);
    assert!(demo.stdout.contains("51,820,000"), "{}", demo.stdout);
    assert!(!store_exists(&sb, &dir.join("sqlrun.db")));
}

#[test]
fn new_writes_a_given_database_into_the_file() {
    if sqlite_only(
        "a relative SQLite path given to new; new --db URL --schema S is in every other test",
    ) {
        return;
    }
    let sb = Sandbox::empty();
    // On the command line a relative path means the current folder: the file gets it
    // absolute, so the project's commands find that same database from anywhere.
    run_in(sb.path(), 0, &["new", "proj", "--db", "shared.db"]);
    let text = fs::read_to_string(sb.path().join("proj/sqlrun.toml")).unwrap();
    let shared = sb.path().join("shared.db");
    assert!(
        text.contains(&format!("db = {}", toml_str(&shared.display().to_string()))),
        "{text}"
    );
    run_in(
        &sb.path().join("proj/models"),
        0,
        &["apply", "--create", "--interval", "2026-02-01"],
    );
    assert_eq!(
        sqlite_rows(
            &Connection::open(&shared).unwrap(),
            "SELECT count(*) FROM daily_revenue"
        ),
        [["1"]]
    );
    assert!(!sb.path().join("proj/sqlrun.db").exists());
    // A schema goes with PostgreSQL only; nothing is written.
    let run = run_in(sb.path(), 2, &["new", "other", "--schema", "sales"]);
    assert!(
        run.stderr.contains("`schema` is for PostgreSQL"),
        "{}",
        run.stderr
    );
    assert!(!sb.path().join("other").exists());
}

#[test]
fn the_wrong_folder_creates_the_default_database_and_says_so() {
    if sqlite_only("the default database, ./sqlrun.db, is a SQLite file") {
        return;
    }
    let sb = Sandbox::empty();
    let dir = sb.path().join("not-a-project");
    fs::create_dir(&dir).unwrap();
    let run = run_in(&dir, 0, &["apply", "--interval", "2026-11-01..2026-11-03"]);
    contains_all(
        &run.stderr,
        &[
            "no sqlrun.toml in",
            "created ./sqlrun.db there, with the built-in pipeline",
            "`sqlrun new DIR`",
            "--db or set SQLRUN_DB",
            "orders (by order_date) has no rows dated 2026-11-01..2026-11-03",
        ],
    );
    // The contract's default holds: the file is made, and a script that relies on it
    // finds its dates there (zeros, said above).
    let db = dir.join("sqlrun.db");
    assert_eq!(
        rows_at(
            &sb,
            &db,
            "SELECT ds, revenue FROM daily_revenue ORDER BY ds"
        ),
        [
            ["2026-11-01", "0"],
            ["2026-11-02", "0"],
            ["2026-11-03", "0"]
        ]
    );
    // Once it exists it is simply the database: nothing more to say.
    let again = run_in(&dir, 0, &["status"]);
    assert!(!again.stderr.contains("no sqlrun.toml"), "{}", again.stderr);
    // Named, it is never a surprise.
    let named = run_in(&dir, 0, &["--db", "other.db", "status"]);
    assert!(!named.stderr.contains("no sqlrun.toml"), "{}", named.stderr);
}

/// Whether the project's database exists at all: on SQLite the file, on PostgreSQL the
/// sandbox's schema.
fn database_made(sb: &Sandbox, db: &Path) -> bool {
    match &sb.schema {
        None => db.exists(),
        Some(schema) => {
            sb.count(&format!(
                "SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = '{schema}'"
            )) == 1
        }
    }
}

#[test]
fn a_projects_missing_database_is_refused_and_not_created() {
    let sb = Sandbox::empty();
    let (dir, _) = new_project(&sb, "proj");
    // A typo in `db` (SQLite), a schema nobody created (PostgreSQL: the sandbox's).
    if is_sqlite() {
        fs::write(
            dir.join("sqlrun.toml"),
            format!("db = {}\ntemplates = \".\"\n", toml_str("sqlrn.db")),
        )
        .unwrap();
    }
    let db = dir.join("sqlrn.db");
    let missing = match &sb.schema {
        None => format!("database {} does not exist", real(&dir) + "/sqlrn.db"),
        Some(schema) => format!("schema {schema} does not exist"),
    };
    for args in [
        &["status"][..],
        &["apply", "--interval", "2026-02-01..2026-02-08"],
        &["apply", "--interval", "2026-02-01", "--dry-run"],
        &["runs"],
        &["render", "--date", "2026-02-01"],
        &["generate", "--start", "2026-02-01", "--days", "1"],
        &["seal", "--interval", "2026-02-01", "--reason", "sent"],
        &["templates"],
    ] {
        let run = run_in(&dir.join("models"), 2, args);
        assert!(
            run.stderr.contains(&missing)
                && run.stderr.contains("sqlrun.toml")
                && run.stderr.contains("`sqlrun init`"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(!database_made(&sb, &db), "{args:?} created the database");
    }
    // `init` creates it, and then the project works.
    run_in(&dir, 0, &["init"]);
    assert!(database_made(&sb, &db));
    run_in(&dir, 0, &["apply", "--interval", "2026-02-01"]);
    assert_eq!(
        rows_at(&sb, &db, "SELECT count(*) FROM daily_revenue"),
        [["1"]]
    );
}

#[test]
fn apply_create_makes_the_projects_database_on_its_first_run() {
    let sb = Sandbox::empty();
    let (dir, _) = new_project(&sb, "proj");
    let db = dir.join("sqlrun.db");
    run_in(&dir, 2, &["apply", "--interval", "2026-02-01..2026-02-02"]);
    assert!(!database_made(&sb, &db));
    run_in(
        &dir,
        0,
        &["apply", "--create", "--interval", "2026-02-01..2026-02-02"],
    );
    assert_eq!(
        rows_at(&sb, &db, "SELECT count(*), max(run_id) FROM daily_revenue"),
        [["2", "1"]]
    );
    // Outside a project the contract's default stays: created on first use.
    let outside = sb.path().join("elsewhere");
    fs::create_dir_all(&outside).unwrap();
    if is_sqlite() {
        run_in(&outside, 0, &["status"]);
        assert!(outside.join("sqlrun.db").exists());
    }
}
