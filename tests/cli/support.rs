//! The test harness: a scratch database, the real binary, and SQL to read rows.
//!
//! The same test files run on two backends, one per test binary: `tests/cli` (SQLite: a
//! temp dir with a database file) and `tests/pg` (PostgreSQL: one throwaway server per test
//! binary, one database on it, one schema per sandbox). Each binary says which in its
//! `backend` module. Rows read back are normalised so that assertions do not depend on the
//! backend: dates `YYYY-MM-DD`, times UTC `YYYY-MM-DD HH:MM:SS`, flags `1`/`0`, whole
//! numerics as integers, NULL as `NULL`.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{params_from_iter, Connection};
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_sqlrun");

/// Which database the tests of this binary run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The backend of this test binary (its `backend` module).
pub const BACKEND: Backend = crate::backend::BACKEND;

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        })
    }
}

pub fn is_sqlite() -> bool {
    BACKEND == Backend::Sqlite
}

pub fn is_postgres() -> bool {
    BACKEND == Backend::Postgres
}

/// The gate of a test (or of its rest) that only makes sense on SQLite: true on another
/// backend, after saying so on the terminal (past the test harness's output capture), so a
/// test that did not run is never silent. Use as `if sqlite_only("why") { return; }`.
pub fn sqlite_only(reason: &str) -> bool {
    only_on(Backend::Sqlite, reason)
}

/// The same for a test that only makes sense on PostgreSQL.
pub fn postgres_only(reason: &str) -> bool {
    only_on(Backend::Postgres, reason)
}

fn only_on(backend: Backend, reason: &str) -> bool {
    if BACKEND == backend {
        return false;
    }
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("a test");
    let _ = writeln!(
        std::io::stderr(),
        "note: {name}: the rest is {backend}-only, not run on {BACKEND}: {reason}"
    );
    true
}

/// A scratch database: a file in a temp dir (SQLite) or a schema of its own on the test
/// server (PostgreSQL). The temp dir exists on both, for templates and other files.
pub struct Sandbox {
    pub dir: TempDir,
    /// The SQLite file (on PostgreSQL: unused).
    pub db: PathBuf,
    /// The PostgreSQL schema (on SQLite: None).
    pub schema: Option<String>,
    pg: Mutex<Option<postgres::Client>>,
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Self {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// When a trigger fires relative to the insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Before,
    After,
}

impl When {
    fn sql(self) -> &'static str {
        match self {
            When::Before => "BEFORE",
            When::After => "AFTER",
        }
    }
}

static NEXT_SCHEMA: AtomicU32 = AtomicU32::new(1);

impl Sandbox {
    /// A new database, initialised with `sqlrun init`.
    pub fn new() -> Self {
        let sandbox = Self::empty();
        sandbox.ok(&["init"]);
        sandbox
    }

    /// A folder (and on PostgreSQL a schema name) without running anything yet: the
    /// database (schema) does not exist until the binary makes it.
    pub fn empty() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("sqlrun-test-")
            .tempdir()
            .unwrap();
        let db = dir.path().join("test.db");
        let schema = match BACKEND {
            Backend::Sqlite => None,
            Backend::Postgres => {
                pg::server(); // started here, once, so that a failure to start says why
                let n = NEXT_SCHEMA.fetch_add(1, Ordering::Relaxed);
                Some(format!("t{n}_{}", std::process::id()))
            }
        };
        Sandbox {
            dir,
            db,
            schema,
            pg: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Where the database is, for messages: the file, or the server and the schema.
    pub fn describe(&self) -> String {
        match &self.schema {
            None => self.db.display().to_string(),
            Some(schema) => format!("{} --schema {schema}", pg::server().url),
        }
    }

    /// The binary with `--db` (and on PostgreSQL `--schema`) set, a fixed $USER and no
    /// SQLRUN_* from outside, run in the sandbox's folder: no project file (sqlrun.toml)
    /// around the test run applies, only one a test writes there.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = match &self.schema {
            None => {
                let mut cmd = bin_cmd();
                cmd.arg("--db").arg(&self.db);
                cmd.args(args);
                cmd.stdin(Stdio::null());
                cmd
            }
            Some(schema) => cmd_with_url(&pg::server().url, schema, args),
        };
        cmd.current_dir(self.path());
        cmd
    }

    /// The `--db` URL and the `--schema` this sandbox gives the binary (PostgreSQL only),
    /// for a command built another way (see `cmd_with_url`).
    pub fn url(&self) -> (String, String) {
        let schema = self.schema.clone().expect("Sandbox::url is PostgreSQL's");
        (pg::server().url.clone(), schema)
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.cmd(args).output().expect("run sqlrun"))
    }

    /// Runs and asserts the exit code.
    pub fn expect(&self, code: i32, args: &[&str]) -> Run {
        let run = self.run(args);
        assert_eq!(
            run.code,
            code,
            "`sqlrun {}` exited {}, wanted {code} (on {BACKEND}: {})\nstdout: {}\nstderr: {}",
            args.join(" "),
            run.code,
            self.describe(),
            run.stdout,
            run.stderr
        );
        run
    }

    pub fn ok(&self, args: &[&str]) -> Run {
        self.expect(0, args)
    }

    /// A connection to the SQLite file (SQLite only).
    pub fn conn(&self) -> Connection {
        assert!(
            is_sqlite(),
            "Sandbox::conn is SQLite's; on {BACKEND} use rows/exec"
        );
        let conn = Connection::open(&self.db).unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .unwrap();
        conn
    }

    /// Runs `f` on this sandbox's PostgreSQL session (search_path = its schema, TimeZone
    /// UTC), connecting first if needed. A failed call drops the session.
    fn with_pg<R>(
        &self,
        what: &str,
        f: impl FnOnce(&mut postgres::Client) -> Result<R, postgres::Error>,
    ) -> R {
        let schema = self.schema.as_deref().expect("a PostgreSQL sandbox");
        let mut guard = self.pg.lock().unwrap_or_else(|e| e.into_inner());
        if guard.as_ref().is_none_or(|c| c.is_closed()) {
            *guard = Some(pg::server().connect(schema));
        }
        match f(guard.as_mut().unwrap()) {
            Ok(r) => r,
            Err(e) => {
                *guard = None;
                drop(guard);
                panic!(
                    "{what}\nfailed on PostgreSQL ({}): {}{}",
                    self.describe(),
                    pg::error_text(&e),
                    pg::server_state()
                );
            }
        }
    }

    /// A PostgreSQL session of its own on this sandbox's schema (PostgreSQL only), for a
    /// test that needs several sessions at once.
    pub fn pg_client(&self) -> postgres::Client {
        let schema = self.schema.as_deref().expect("a PostgreSQL sandbox");
        pg::server().connect(schema)
    }

    pub fn exec(&self, sql: &str) {
        match BACKEND {
            Backend::Sqlite => self.conn().execute_batch(sql).unwrap(),
            Backend::Postgres => self.with_pg(sql, |c| c.batch_execute(sql)),
        }
    }

    /// Every row of a query, each column rendered to a string ("NULL" for null, see the
    /// module doc for the rest): easy to compare.
    pub fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        match BACKEND {
            Backend::Sqlite => sqlite_rows(&self.conn(), sql),
            Backend::Postgres => self.with_pg(sql, |c| {
                let rows = c.query(sql, &[])?;
                pg::render(&rows)
            }),
        }
    }

    /// The single integer a query returns.
    pub fn count(&self, sql: &str) -> i64 {
        match BACKEND {
            Backend::Sqlite => self.conn().query_row(sql, [], |r| r.get(0)).unwrap(),
            Backend::Postgres => only_number(sql, &self.rows(sql)),
        }
    }

    /// daily_revenue as ds -> (revenue, order_count).
    pub fn daily(&self) -> BTreeMap<String, (i64, i64)> {
        self.daily_from("daily_revenue")
    }

    pub fn current(&self) -> BTreeMap<String, (i64, i64)> {
        self.daily_from("daily_revenue_current")
    }

    fn daily_from(&self, table: &str) -> BTreeMap<String, (i64, i64)> {
        self.rows(&format!("SELECT ds, revenue, order_count FROM {table}"))
            .into_iter()
            .map(|r| (r[0].clone(), (int(&r[1]), int(&r[2]))))
            .collect()
    }

    /// cumulative_revenue as (ds, revenue, cumulative_revenue), by date.
    pub fn cumulative(&self) -> Vec<(String, i64, i64)> {
        self.rows("SELECT ds, revenue, cumulative_revenue FROM cumulative_revenue ORDER BY ds")
            .into_iter()
            .map(|r| (r[0].clone(), int(&r[1]), int(&r[2])))
            .collect()
    }

    pub fn last_run_id(&self) -> i64 {
        self.count("SELECT max(run_id) FROM runs")
    }

    pub fn insert_orders(&self, rows: &[OrderRow]) {
        match BACKEND {
            Backend::Sqlite => {
                let mut conn = self.conn();
                let tx = conn.transaction().unwrap();
                for r in rows {
                    tx.execute(
                        "INSERT INTO orders(order_id, order_date, amount, created_at) VALUES (?1, ?2, ?3, ?4)",
                        params_from_iter([&r.order_id as &dyn rusqlite::ToSql, &r.order_date, &r.amount, &r.created_at]),
                    )
                    .unwrap();
                }
                tx.commit().unwrap();
            }
            Backend::Postgres => {
                self.with_pg("insert orders", |c| pg_insert_orders(c, "orders", rows))
            }
        }
    }

    /// Whether a table or view of that name exists in the sandbox's database (schema).
    pub fn table_exists(&self, name: &str) -> bool {
        let sql = match &self.schema {
            None => format!("SELECT count(*) FROM sqlite_schema WHERE name = '{name}'"),
            Some(schema) => format!(
                "SELECT count(*) FROM pg_catalog.pg_class AS c \
                 JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace \
                 WHERE n.nspname = '{schema}' AND c.relname = '{name}'"
            ),
        };
        self.count(&sql) == 1
    }

    /// The definition of a view as the database holds it (None if there is no such view).
    pub fn view_sql(&self, name: &str) -> Option<String> {
        let sql = match &self.schema {
            None => {
                format!("SELECT sql FROM sqlite_schema WHERE type = 'view' AND name = '{name}'")
            }
            Some(schema) => format!(
                "SELECT pg_catalog.pg_get_viewdef(c.oid, true) FROM pg_catalog.pg_class AS c \
                 JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace \
                 WHERE c.relkind = 'v' AND n.nspname = '{schema}' AND c.relname = '{name}'"
            ),
        };
        self.rows(&sql).into_iter().next().map(|mut r| r.remove(0))
    }

    /// A trigger `boom` that makes inserting a row for `ds` into `table` fail with
    /// "boom on purpose".
    pub fn fail_inserts(&self, table: &str, ds: &str, when: When) {
        let when = when.sql();
        self.exec(&match BACKEND {
            Backend::Sqlite => format!(
                "CREATE TRIGGER boom {when} INSERT ON {table} WHEN NEW.ds = '{ds}' \
                 BEGIN SELECT RAISE(ABORT, 'boom on purpose'); END;"
            ),
            Backend::Postgres => format!(
                "CREATE OR REPLACE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS \
                 $$ BEGIN RAISE EXCEPTION 'boom on purpose'; END $$; \
                 CREATE TRIGGER boom {when} INSERT ON {table} FOR EACH ROW \
                 WHEN (NEW.ds = '{ds}') EXECUTE FUNCTION boom();"
            ),
        });
    }

    /// Drops the trigger of `fail_inserts`.
    pub fn stop_failing(&self, table: &str) {
        self.exec(&match BACKEND {
            Backend::Sqlite => "DROP TRIGGER boom;".to_string(),
            Backend::Postgres => format!("DROP TRIGGER boom ON {table};"),
        });
    }

    /// Makes every insert into `table` cost time inside its transaction (a trigger
    /// `burn_time`): on SQLite by counting `rows` rows of a recursive CTE, on PostgreSQL by
    /// sleeping about as long as that takes SQLite (0.3 µs a row).
    pub fn slow_inserts(&self, table: &str, rows: u32) {
        self.exec(&match BACKEND {
            Backend::Sqlite => format!(
                "CREATE TRIGGER burn_time AFTER INSERT ON {table} BEGIN \
                   SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows}) SELECT x FROM c); \
                 END;"
            ),
            Backend::Postgres => pg_slow_inserts(table, f64::from(rows) * 0.3e-6),
        });
    }

    /// Runs `script` (e.g. `sqlrun render` output, with its own BEGIN and COMMIT) on the
    /// database as it is now, without keeping what it writes, and returns what `query` reads
    /// right after it. SQLite: on a copy of the file (VACUUM INTO). PostgreSQL: in a
    /// transaction rolled back afterwards (the script's COMMIT lines are left out; its
    /// BEGIN inside the open transaction is only a warning).
    pub fn rows_after_script(&self, script: &str, query: &str) -> Vec<Vec<String>> {
        match BACKEND {
            Backend::Sqlite => {
                let copy = self.path().join("copy.db");
                let _ = std::fs::remove_file(&copy);
                self.conn()
                    .execute("VACUUM INTO ?1", [copy.to_str().unwrap()])
                    .unwrap();
                let conn = Connection::open(&copy).unwrap();
                conn.execute_batch(script).expect("the script runs");
                sqlite_rows(&conn, query)
            }
            Backend::Postgres => {
                let body: String = script
                    .lines()
                    .filter(|l| {
                        let t = l.trim().trim_end_matches(';').trim();
                        !(t.eq_ignore_ascii_case("COMMIT") || t.eq_ignore_ascii_case("END"))
                    })
                    .map(|l| format!("{l}\n"))
                    .collect();
                self.with_pg(script, |c| {
                    let mut tx = c.transaction()?;
                    tx.batch_execute(&body)?;
                    let rows = tx.query(query, &[])?;
                    let out = pg::render(&rows)?;
                    tx.rollback()?;
                    Ok(out)
                })
            }
        }
    }
}

/// The binary with a fixed $USER, no colours and no SQLRUN_* from outside; no arguments yet.
fn bin_cmd() -> Command {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars() {
        if key.starts_with("SQLRUN_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("USER", "tester").env("NO_COLOR", "1");
    // A progress line every 30 s would come and go with the machine's speed: by count
    // only (tests/cli/progress.rs sets the count).
    cmd.env("SQLRUN_PROGRESS_SECONDS", "0");
    cmd
}

/// The binary as `Sandbox::cmd` starts it on PostgreSQL, against any server: `--db URL
/// --schema SCHEMA ARGS`, a fixed $USER, no colours, no SQLRUN_* and no libpq PG* variables
/// from outside, stdin closed.
pub fn cmd_with_url(url: &str, schema: &str, args: &[&str]) -> Command {
    let mut cmd = bin_cmd();
    // libpq's variables mean nothing to the tests' servers: none from outside.
    for (key, _) in std::env::vars() {
        if key.starts_with("PG") {
            cmd.env_remove(key);
        }
    }
    cmd.args(["--db", url, "--schema", schema]).args(args);
    cmd.stdin(Stdio::null());
    cmd
}

/// The single integer in the rows of `sql` (rendered as text); panics, naming the query,
/// unless there is exactly one value and it is an integer.
pub fn only_number(sql: &str, rows: &[Vec<String>]) -> i64 {
    assert!(
        rows.len() == 1 && rows[0].len() == 1,
        "{sql}: wanted one value, got {rows:?}"
    );
    rows[0][0]
        .parse()
        .unwrap_or_else(|_| panic!("{sql}: {:?} is not an integer", rows[0][0]))
}

/// PostgreSQL: inserts `rows` into the orders table `table` (`orders`, or
/// `"SCHEMA".orders`) in one transaction.
pub fn pg_insert_orders(
    c: &mut postgres::Client,
    table: &str,
    rows: &[OrderRow],
) -> Result<(), postgres::Error> {
    let mut tx = c.transaction()?;
    let stmt = tx.prepare(&format!(
        "INSERT INTO {table}(order_id, order_date, amount, created_at) \
         VALUES ($1::text, $2::text::date, $3::bigint, $4::text::timestamptz)"
    ))?;
    for r in rows {
        tx.execute(
            &stmt,
            &[&r.order_id, &r.order_date, &r.amount, &r.created_at],
        )?;
    }
    tx.commit()
}

/// PostgreSQL: a trigger `burn_time` that makes every insert into `table` sleep `secs`
/// seconds inside its transaction (see `Sandbox::slow_inserts`).
pub fn pg_slow_inserts(table: &str, secs: f64) -> String {
    format!(
        "CREATE OR REPLACE FUNCTION burn_time() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM pg_catalog.pg_sleep({secs}); RETURN NULL; END $$; \
         CREATE TRIGGER burn_time AFTER INSERT ON {table} FOR EACH ROW \
         EXECUTE FUNCTION burn_time();"
    )
}

/// For the tests that start PostgreSQL servers of their own (tests/pg/procs.rs): the folder
/// with `initdb` and `postgres`. Panics, saying what to install, if there is none.
pub fn pg_bin_dir() -> PathBuf {
    pg::bin_dir().unwrap_or_else(|why| panic!("{why}"))
}

/// The user (uid, gid) to run `initdb` and `postgres` as: as root, the `postgres` user
/// (they refuse root); otherwise None, ourselves. Panics, saying why, if there is none.
pub fn pg_server_user() -> Option<(u32, u32)> {
    pg::server_user().unwrap_or_else(|why| panic!("{why}"))
}

/// Whether a process exists and is not a zombie.
pub fn process_alive(pid: u32) -> bool {
    i32::try_from(pid).is_ok_and(pg::alive)
}

/// Makes the kernel send `signal` to the process `cmd` starts when the thread that starts
/// it ends (set after any change of user, which clears it).
pub fn die_with_parent(cmd: &mut Command, signal: libc::c_int) {
    pg::die_with_parent(cmd, signal);
}

/// Every row of the tables a command may write, to compare before and after.
pub fn snapshot(sb: &Sandbox) -> BTreeMap<String, Vec<Vec<String>>> {
    [
        "runs",
        "run_partitions",
        "reservations",
        "seals",
        "seal_events",
        "seal_coverage",
        "daily_revenue",
        "daily_revenue_corrections",
        "daily_revenue_sent",
        "run_events",
        "template_versions",
        "run_templates",
        "orders",
        "source_changes",
        "partition_sources",
        "source_tracking",
        "models",
        "model_events",
        "daily_revenue_history",
        "replaced_partitions",
    ]
    .iter()
    .map(|t| {
        // A pipeline table made by the first sync (daily_revenue_sent) may not exist yet.
        let rows = match sb.table_exists(t) {
            true => sb.rows(&format!("SELECT * FROM {t} ORDER BY 1, 2")),
            false => vec![vec!["(no such table)".to_string()]],
        };
        (t.to_string(), rows)
    })
    .collect()
}

/// The running total of a daily map, as cumulative_revenue should show it.
pub fn running(daily: &BTreeMap<String, (i64, i64)>) -> Vec<(String, i64, i64)> {
    let mut total = 0;
    daily
        .iter()
        .map(|(ds, (rev, _))| {
            total += rev;
            (ds.clone(), *rev, total)
        })
        .collect()
}

/// Asserts that `text` contains every one of `parts`.
pub fn contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "wanted {part:?} in:\n{text}");
    }
}

pub fn day(start: &str, offset: i64) -> String {
    let d = chrono::NaiveDate::parse_from_str(start, "%Y-%m-%d").unwrap();
    (d + chrono::Duration::days(offset))
        .format("%Y-%m-%d")
        .to_string()
}

#[derive(Debug, Clone)]
pub struct OrderRow {
    pub order_id: String,
    pub order_date: String,
    pub amount: i64,
    pub created_at: String,
}

/// Random orders with re-sent versions (later created_at wins; ties go to the row inserted
/// last; some move to another date), refunds, and one empty day. Knows the expected
/// daily numbers independently of sqlrun.
pub struct Orders {
    pub rows: Vec<OrderRow>,
    pub start: String,
    pub days: i64,
    pub empty_day: Option<String>,
    clock: i64,
    rng: ChaCha8Rng,
}

impl Orders {
    pub fn new(seed: u64, start: &str, days: i64, with_empty_day: bool) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let empty = if with_empty_day {
            Some(rng.random_range(0..days))
        } else {
            None
        };
        let mut o = Orders {
            rows: Vec::new(),
            start: start.to_string(),
            days,
            empty_day: empty.map(|e| day(start, e)),
            clock: 0,
            rng,
        };
        let mut n = 0;
        for i in 0..days {
            if Some(i) == empty {
                continue;
            }
            let count = o.rng.random_range(1..=20);
            for _ in 0..count {
                n += 1;
                let amount = if o.rng.random_bool(0.05) {
                    -o.rng.random_range(1..50_000)
                } else {
                    o.rng.random_range(1_000..500_000)
                };
                o.add(&format!("o{n}"), &day(start, i), amount);
            }
        }
        let ids: Vec<String> = o.rows.iter().map(|r| r.order_id.clone()).collect();
        let others: Vec<i64> = (0..days).filter(|i| Some(*i) != empty).collect();
        for id in ids.iter().step_by(17) {
            // amended: later created_at, new amount, sometimes another date
            let date = if o.rng.random_bool(0.3) {
                day(start, others[o.rng.random_range(0..others.len())])
            } else {
                o.latest()[id].order_date.clone()
            };
            let amount = o.rng.random_range(1_000..500_000);
            o.add(id, &date, amount);
        }
        for id in ids.iter().skip(5).step_by(37) {
            // a stale re-send: inserted later with an older created_at: it loses
            let date = day(start, others[o.rng.random_range(0..others.len())]);
            o.rows.push(OrderRow {
                order_id: id.clone(),
                order_date: date,
                amount: o.rng.random_range(1_000..500_000),
                created_at: "2029-12-31 00:00:00".into(),
            });
        }
        for id in ids.iter().skip(3).step_by(41) {
            // a tie on created_at: the row inserted last wins
            let latest = o.latest()[id].clone();
            o.rows.push(OrderRow {
                amount: o.rng.random_range(1_000..500_000),
                ..latest
            });
        }
        o
    }

    fn tick(&mut self) -> String {
        self.clock += 1;
        let t = chrono::NaiveDate::from_ymd_opt(2030, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
            + chrono::Duration::seconds(self.clock);
        t.format("%Y-%m-%d %H:%M:%S").to_string()
    }

    /// Adds a new version of an order (created now, on the test clock).
    pub fn add(&mut self, id: &str, date: &str, amount: i64) -> OrderRow {
        let row = OrderRow {
            order_id: id.to_string(),
            order_date: date.to_string(),
            amount,
            created_at: self.tick(),
        };
        self.rows.push(row.clone());
        row
    }

    /// The winning row per order_id.
    pub fn latest(&self) -> BTreeMap<String, OrderRow> {
        let mut win: BTreeMap<String, OrderRow> = BTreeMap::new();
        for r in &self.rows {
            match win.get(&r.order_id) {
                Some(w) if r.created_at < w.created_at => {}
                _ => {
                    win.insert(r.order_id.clone(), r.clone());
                }
            }
        }
        win
    }

    pub fn expected(&self) -> BTreeMap<String, (i64, i64)> {
        let mut out: BTreeMap<String, (i64, i64)> = (0..self.days)
            .map(|i| (day(&self.start, i), (0, 0)))
            .collect();
        for r in self.latest().values() {
            if let Some(e) = out.get_mut(&r.order_date) {
                e.0 += r.amount;
                e.1 += 1;
            }
        }
        out
    }

    pub fn interval(&self) -> String {
        format!("{}..{}", self.start, day(&self.start, self.days - 1))
    }

    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }
}

fn int(s: &str) -> i64 {
    s.parse()
        .unwrap_or_else(|_| panic!("{s:?} is not an integer"))
}

/// Every row of a query on a SQLite connection, normalised as `Sandbox::rows` does.
pub fn sqlite_rows(conn: &Connection, sql: &str) -> Vec<Vec<String>> {
    let mut stmt = conn.prepare(sql).unwrap();
    let n = stmt.column_count();
    let rows = stmt
        .query_map([], |r| {
            (0..n)
                .map(|i| {
                    Ok(match r.get::<_, rusqlite::types::Value>(i)? {
                        rusqlite::types::Value::Null => "NULL".to_string(),
                        rusqlite::types::Value::Integer(v) => v.to_string(),
                        rusqlite::types::Value::Real(v) => v.to_string(),
                        rusqlite::types::Value::Text(v) => v,
                        rusqlite::types::Value::Blob(v) => format!("{v:?}"),
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

/// The throwaway PostgreSQL server of a test binary, and reading its values.
#[path = "pg_server.rs"]
pub mod pg;

/// The harness itself: the backend's server and sandboxes, and that values read back are
/// normalised the same way on both backends.
#[test]
fn harness_reads_values_the_same_way_on_every_backend() {
    let sb = Sandbox::empty();
    let (setup, select) = match BACKEND {
        Backend::Sqlite => (
            "CREATE TABLE probe (ds TEXT, at TEXT, n INTEGER, flag INTEGER, x REAL, t TEXT, gap INTEGER);
             INSERT INTO probe VALUES ('2026-02-28', '2026-02-28 23:59:59', -42, 1, 2.5, 'it''s 김', NULL);",
            "SELECT ds, at, n, flag, x, t, gap, 7 * 6, 10000000000 FROM probe",
        ),
        Backend::Postgres => (
            "CREATE SCHEMA probe_schema_placeholder;
             CREATE TABLE probe (ds date, at timestamptz, n bigint, flag boolean, x float8, t text, gap integer);
             INSERT INTO probe VALUES ('2026-02-28', '2026-03-01 08:59:59.75+09', -42, true, 2.5, 'it''s 김', NULL);",
            "SELECT ds, at, n, flag, x, t, gap, (7 * 6)::numeric, sum(10000000000::bigint) FROM probe GROUP BY 1, 2, 3, 4, 5, 6, 7",
        ),
    };
    let setup = match &sb.schema {
        Some(schema) => setup.replace("probe_schema_placeholder", &format!("\"{schema}\"")),
        None => setup.to_string(),
    };
    sb.exec(&setup);
    assert_eq!(
        sb.rows(select),
        [[
            "2026-02-28",
            "2026-02-28 23:59:59",
            "-42",
            "1",
            "2.5",
            "it's 김",
            "NULL",
            "42",
            "10000000000"
        ]]
    );
    assert_eq!(sb.count("SELECT count(*) FROM probe"), 1);
    assert!(sb.table_exists("probe"));
    assert!(!sb.table_exists("no_such_table"));

    // A second sandbox sees none of the first one's tables.
    if is_postgres() {
        let other = Sandbox::empty();
        assert_ne!(other.schema, sb.schema);
        other.exec(&format!(
            "CREATE SCHEMA \"{}\"",
            other.schema.as_ref().unwrap()
        ));
        assert!(!other.table_exists("probe"));
        assert_eq!(
            other.rows("SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = 'probe'"),
            [["1"]]
        );
        // Numerics as text, whatever their scale and sign.
        let cases = [
            ("0::numeric", "0"),
            ("-0.000::numeric", "0"),
            ("123::numeric", "123"),
            ("-45.500::numeric", "-45.5"),
            ("0.00001::numeric", "0.00001"),
            ("10000::numeric", "10000"),
            ("100000000.0001::numeric", "100000000.0001"),
            ("-9223372036854775808::numeric", "-9223372036854775808"),
            (
                "12345678901234567890123::numeric",
                "12345678901234567890123",
            ),
            ("'NaN'::numeric", "NaN"),
        ];
        for (expr, want) in cases {
            assert_eq!(other.rows(&format!("SELECT {expr}")), [[want]], "{expr}");
        }
    }
}

/// Waits (bounded) until the child stopped itself (SIGSTOP: state `T`); false if it
/// ended first, or never did.
pub fn stopped_itself(child: &mut std::process::Child) -> bool {
    let stat = format!("/proc/{}/stat", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline && child.try_wait().unwrap().is_none() {
        let text = std::fs::read_to_string(&stat).unwrap_or_default();
        // The state follows the command name in parentheses.
        if text
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('T')
        {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    false
}

/// `cmd` started with `SQLRUN_STOP_AT=point`, once it stopped itself there (asserted).
pub fn stopped_at(mut cmd: Command, point: &str) -> std::process::Child {
    cmd.env("SQLRUN_STOP_AT", point)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn sqlrun");
    assert!(
        stopped_itself(&mut child),
        "sqlrun stopped itself at {point}"
    );
    child
}

/// A child `stopped_at` a point goes on (SIGCONT); how it ended.
pub fn resume(child: std::process::Child) -> Run {
    // SAFETY: kill has no preconditions; the pid is our child's.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGCONT) }, 0);
    Run::from(child.wait_with_output().unwrap())
}
