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
    if is_sqlite() {
        return false;
    }
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("a test");
    let _ = writeln!(
        std::io::stderr(),
        "note: {name}: the rest is SQLite-only, not run on {BACKEND}: {reason}"
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
    /// SQLRUN_* from outside.
    pub fn cmd(&self, args: &[&str]) -> Command {
        match &self.schema {
            None => {
                let mut cmd = bin_cmd();
                cmd.arg("--db").arg(&self.db);
                cmd.args(args);
                cmd.stdin(Stdio::null());
                cmd
            }
            Some(schema) => cmd_with_url(&pg::server().url, schema, args),
        }
    }

    /// The `--db` URL and the `--schema` this sandbox gives the binary (PostgreSQL only),
    /// for a command built another way (see `cmd_with_url`).
    pub fn url(&self) -> (String, String) {
        let schema = self.schema.clone().expect("Sandbox::url is PostgreSQL's");
        (pg::server().url.clone(), schema)
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let out: Output = self.cmd(args).output().expect("run sqlrun");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
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
        "daily_revenue",
        "daily_revenue_corrections",
        "run_events",
        "template_versions",
        "run_templates",
        "orders",
    ]
    .iter()
    .map(|t| {
        (
            t.to_string(),
            sb.rows(&format!("SELECT * FROM {t} ORDER BY 1, 2")),
        )
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
mod pg {
    use std::error::Error;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::sync::{mpsc, Mutex, OnceLock};
    use std::time::{Duration, Instant};

    use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
    use postgres::types::{FromSql, Type};

    /// The database every sandbox of this binary gets a schema in.
    pub const DATABASE: &str = "sqlrun_test";
    /// The prefix of the server's folder in the temp dir; the test process's pid follows.
    const PREFIX: &str = "sqlrun-pg-";

    pub struct Server {
        /// Data dir, socket and log live here.
        pub base: PathBuf,
        pub url: String,
        pid: u32,
    }

    static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
    /// How the server process ended, once it has (set by the thread that started it).
    static ENDED: Mutex<Option<String>> = Mutex::new(None);

    /// The server, started the first time it is asked for. Panics (every time) if it
    /// cannot be started.
    pub fn server() -> &'static Server {
        match SERVER.get_or_init(start) {
            Ok(server) => server,
            Err(why) => panic!("the PostgreSQL test server is not available: {why}"),
        }
    }

    impl Server {
        /// A session on the test database with `search_path` set to `schema`.
        pub fn connect(&self, schema: &str) -> postgres::Client {
            let mut client = config(&self.base, DATABASE)
                .connect(postgres::NoTls)
                .unwrap_or_else(|e| {
                    panic!(
                        "cannot connect to the test server: {}{}",
                        error_text(&e),
                        server_state()
                    )
                });
            client
                .batch_execute(&format!(
                    "SET search_path TO \"{schema}\"; SET TimeZone TO 'UTC';"
                ))
                .unwrap();
            client
        }
    }

    fn config(sock: &Path, db: &str) -> postgres::Config {
        let mut config = postgres::Config::new();
        config
            .host_path(sock)
            .user("postgres")
            .dbname(db)
            .application_name("sqlrun-tests")
            .connect_timeout(Duration::from_secs(30));
        config
    }

    /// The message of a PostgreSQL error, with its detail and position if any.
    pub fn error_text(e: &postgres::Error) -> String {
        match e.as_db_error() {
            Some(db) => {
                let mut s = format!("{}: {}", db.severity(), db.message());
                if let Some(detail) = db.detail() {
                    s.push_str(&format!(" (detail: {detail})"));
                }
                if let Some(hint) = db.hint() {
                    s.push_str(&format!(" (hint: {hint})"));
                }
                s
            }
            None => match e.source() {
                Some(source) => format!("{e}: {source}"),
                None => e.to_string(),
            },
        }
    }

    /// "" while the server runs; else how it ended and the end of its log.
    pub fn server_state() -> String {
        let ended = ENDED.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match (ended, SERVER.get()) {
            (Some(how), Some(Ok(server))) => format!(
                "\nthe test server is gone ({how}); its log ends with:\n{}",
                log_tail(&server.base)
            ),
            (Some(how), _) => format!("\nthe test server is gone ({how})"),
            _ => String::new(),
        }
    }

    fn log_tail(base: &Path) -> String {
        let log = fs::read_to_string(base.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    const INSTALL: &str = "install PostgreSQL (Debian/Ubuntu: `apt-get install postgresql`; \
                           .ci/run does this when initdb is missing)";

    /// initdb and postgres: a folder holding both, from PATH (following the symlinks that
    /// Debian's postgresql-common puts there) or /usr/lib/postgresql/*/bin, newest first.
    pub fn bin_dir() -> Result<PathBuf, String> {
        let mut candidates = Vec::new();
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                let initdb = dir.join("initdb");
                if initdb.is_file() {
                    if let Some(real) = fs::canonicalize(&initdb)
                        .ok()
                        .and_then(|p| p.parent().map(Path::to_path_buf))
                    {
                        candidates.push(real);
                    }
                    candidates.push(dir);
                }
            }
        }
        let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let v = e.file_name().to_str()?.parse().ok()?;
                Some((v, e.path().join("bin")))
            })
            .collect();
        versions.sort_by_key(|v| std::cmp::Reverse(v.0));
        candidates.extend(versions.into_iter().map(|(_, p)| p));
        candidates
            .into_iter()
            .find(|d| d.join("initdb").is_file() && d.join("postgres").is_file())
            .ok_or_else(|| {
                format!(
                    "PostgreSQL is not installed: the PostgreSQL tests need `initdb` and \
                     `postgres` (on PATH or in /usr/lib/postgresql/*/bin): {INSTALL}"
                )
            })
    }

    /// initdb and postgres refuse to run as root: as root they run as the `postgres` user
    /// (uid, gid); as anyone else, as that user (None).
    pub fn server_user() -> Result<Option<(u32, u32)>, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Ok(None);
        }
        let id = |flag: &str| -> Result<u32, String> {
            let out = Command::new("id")
                .args([flag, "postgres"])
                .output()
                .map_err(|e| format!("cannot run `id`: {e}"))?;
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .map_err(|_| {
                    format!(
                        "the tests run as root and initdb/postgres refuse root, so the server \
                         runs as the `postgres` user, and there is none: {INSTALL} (it \
                         creates that user)"
                    )
                })
        };
        Ok(Some((id("-u")?, id("-g")?)))
    }

    /// Whether a process exists and is not a zombie (in a container whose init does not
    /// reap, a killed test process stays a zombie).
    pub fn alive(pid: i32) -> bool {
        if pid <= 0 {
            return false;
        }
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            // "pid (comm) state ...": the state follows the last ')'.
            Ok(stat) => stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state != "Z" && state != "X"),
            Err(_) if Path::new("/proc/self/stat").exists() => false,
            // SAFETY: signal 0 only checks that the process exists.
            Err(_) => {
                let found = unsafe { libc::kill(pid, 0) } == 0;
                found || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
            }
        }
    }

    /// Removes the folders of earlier test processes that are gone, whose server is gone
    /// too (a server is stopped with its test process; this is for a process that was
    /// killed before it could remove its folder). Anything still alive is left alone.
    fn remove_stale(tmp: &Path) {
        let Ok(entries) = fs::read_dir(tmp) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(PREFIX))
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            if pid as u32 == std::process::id() || alive(pid) {
                continue;
            }
            let postmaster = fs::read_to_string(entry.path().join("data/postmaster.pid"))
                .ok()
                .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<i32>().ok()));
            if postmaster.is_some_and(alive) {
                continue;
            }
            let _ = fs::remove_dir_all(entry.path());
        }
    }

    fn start() -> Result<Server, String> {
        let bin = bin_dir()?;
        let user = server_user()?;
        // The socket's path (this folder + "/.s.PGSQL.5432") must fit in 107 bytes.
        let mut tmp = std::env::temp_dir();
        if tmp.as_os_str().len() > 60 {
            tmp = PathBuf::from("/tmp");
        }
        remove_stale(&tmp);

        let base = tmp.join(format!("{PREFIX}{}", std::process::id()));
        if base.exists() {
            // left by an earlier process with this pid, which is gone since it is us now
            fs::remove_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
        }
        fs::create_dir(&base).map_err(|e| format!("{}: {e}", base.display()))?;
        fs::set_permissions(&base, fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("{}: {e}", base.display()))?;
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&base, Some(uid), Some(gid))
                .map_err(|e| format!("chown postgres {}: {e}", base.display()))?;
        }
        let as_server_user = |cmd: &mut Command| {
            if let Some((uid, gid)) = user {
                cmd.uid(uid).gid(gid);
            }
            cmd.current_dir(&base)
                .env_remove("PGDATA")
                .env("LC_ALL", "C")
                .stdin(Stdio::null());
        };

        let data = base.join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8"])
            .args(["--no-locale", "--no-sync", "--no-instructions"]);
        as_server_user(&mut initdb);
        die_with_parent(&mut initdb, libc::SIGKILL);
        let out = initdb
            .output()
            .map_err(|e| format!("cannot run {}: {e}", bin.join("initdb").display()))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }

        let log = fs::File::create(base.join("server.log")).map_err(|e| e.to_string())?;
        let mut postgres = Command::new(bin.join("postgres"));
        postgres.arg("-D").arg(&data).arg("-k").arg(&base);
        for setting in [
            "listen_addresses=",
            "max_connections=300",
            "fsync=off",
            "synchronous_commit=off",
            "full_page_writes=off",
            "TimeZone=UTC",
            "log_timezone=UTC",
        ] {
            postgres.args(["-c", setting]);
        }
        as_server_user(&mut postgres);
        postgres
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log);
        let pid = spawn_tied(postgres)?;
        let server = Server {
            url: format!(
                "postgresql:///{DATABASE}?host={}&user=postgres",
                base.display()
            ),
            base,
            pid,
        };
        // SAFETY: registers a plain extern "C" fn; see stop_at_exit.
        unsafe { libc::atexit(stop_at_exit) };

        // Ready when it takes a connection; then the test database.
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut client = loop {
            if let Some(how) = ENDED.lock().unwrap().clone() {
                return Err(format!(
                    "postgres exited at start ({how}); its log:\n{}",
                    log_tail(&server.base)
                ));
            }
            match config(&server.base, "postgres").connect(postgres::NoTls) {
                Ok(client) => break client,
                Err(e) if Instant::now() > deadline => {
                    return Err(format!(
                        "postgres did not take connections within 60 s: {}; its log:\n{}",
                        error_text(&e),
                        log_tail(&server.base)
                    ))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        client
            .batch_execute(&format!("CREATE DATABASE {DATABASE}"))
            .map_err(|e| format!("CREATE DATABASE {DATABASE}: {}", error_text(&e)))?;
        Ok(server)
    }

    /// Starts `cmd` from a thread that never ends, with the parent-death signal set to
    /// SIGQUIT (a PostgreSQL immediate shutdown): the kernel sends it when that thread
    /// ends, which is when the test process ends, however it ends. The thread waits for
    /// the server and records how it ended. Returns the pid.
    fn spawn_tied(mut cmd: Command) -> Result<u32, String> {
        die_with_parent(&mut cmd, libc::SIGQUIT);
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("postgres-server".into())
            .spawn(move || {
                match cmd.spawn() {
                    Ok(mut child) => {
                        let _ = tx.send(Ok(child.id()));
                        let how = match child.wait() {
                            Ok(status) => status.to_string(),
                            Err(e) => e.to_string(),
                        };
                        *ENDED.lock().unwrap_or_else(|e| e.into_inner()) = Some(how);
                    }
                    Err(e) => {
                        let _ = tx.send(Err(format!("cannot start postgres: {e}")));
                    }
                }
                // Never end: the server's parent-death signal is tied to this thread.
                loop {
                    std::thread::park();
                }
            })
            .map_err(|e| e.to_string())?;
        rx.recv().map_err(|e| e.to_string())?
    }

    /// Makes the kernel send `signal` to the process `cmd` starts when the thread that
    /// starts it ends.
    pub fn die_with_parent(cmd: &mut Command, signal: libc::c_int) {
        let parent = std::process::id();
        // SAFETY: the closure calls only async-signal-safe functions (prctl, getppid, _exit).
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The test process died between fork and prctl: no signal will come.
                if libc::getppid() as u32 != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }

    /// At the test process's normal exit: stop the server (immediate shutdown) and remove
    /// its folder. Should this not run (the process is killed), the parent-death signal
    /// still stops the server, and the next run removes the folder.
    extern "C" fn stop_at_exit() {
        let Some(Ok(server)) = SERVER.get() else {
            return;
        };
        // SAFETY: a plain signal to the server's pid, which this process started.
        unsafe { libc::kill(server.pid as i32, libc::SIGQUIT) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let ended = match ENDED.try_lock() {
                Ok(guard) => guard.is_some(),
                Err(_) => false,
            };
            if ended {
                let _ = fs::remove_dir_all(&server.base);
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every row as normalised text.
    pub fn render(rows: &[postgres::Row]) -> Result<Vec<Vec<String>>, postgres::Error> {
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| row.try_get::<_, Cell>(i).map(|c| c.0))
                    .collect()
            })
            .collect()
    }

    /// One value as backend-neutral text: date `YYYY-MM-DD`, timestamptz UTC
    /// `YYYY-MM-DD HH:MM:SS`, boolean `1`/`0`, numeric without a fraction as an integer,
    /// NULL as `NULL`.
    pub struct Cell(pub String);

    type BoxError = Box<dyn Error + Sync + Send>;

    impl<'a> FromSql<'a> for Cell {
        fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
            let text = if *ty == Type::BOOL {
                if bool::from_sql(ty, raw)? { "1" } else { "0" }.to_string()
            } else if *ty == Type::INT2 {
                i16::from_sql(ty, raw)?.to_string()
            } else if *ty == Type::INT4 {
                i32::from_sql(ty, raw)?.to_string()
            } else if *ty == Type::INT8 {
                i64::from_sql(ty, raw)?.to_string()
            } else if *ty == Type::OID {
                u32::from_sql(ty, raw)?.to_string()
            } else if *ty == Type::FLOAT4 {
                f32::from_sql(ty, raw)?.to_string()
            } else if *ty == Type::FLOAT8 {
                f64::from_sql(ty, raw)?.to_string()
            } else if *ty == Type::NUMERIC {
                numeric_text(raw)?
            } else if *ty == Type::DATE {
                NaiveDate::from_sql(ty, raw)?.format("%Y-%m-%d").to_string()
            } else if *ty == Type::TIMESTAMPTZ {
                DateTime::<Utc>::from_sql(ty, raw)?
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string()
            } else if *ty == Type::TIMESTAMP {
                NaiveDateTime::from_sql(ty, raw)?
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string()
            } else if *ty == Type::BYTEA {
                format!("{:?}", <Vec<u8>>::from_sql(ty, raw)?)
            } else if <String as FromSql>::accepts(ty) {
                String::from_sql(ty, raw)?
            } else {
                return Err(format!("the test harness cannot read a {ty} value").into());
            };
            Ok(Cell(text))
        }

        fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
            Ok(Cell("NULL".into()))
        }

        fn accepts(_: &Type) -> bool {
            true
        }
    }

    /// NUMERIC's binary form (ndigits, weight, sign, dscale, then base-10000 digits) as
    /// decimal text; no fraction, or a fraction of zeros, gives an integer.
    pub fn numeric_text(raw: &[u8]) -> Result<String, BoxError> {
        let word = |i: usize| -> Result<u16, BoxError> {
            raw.get(i..i + 2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]))
                .ok_or_else(|| "a short numeric value".into())
        };
        let ndigits = word(0)? as usize;
        let weight = i32::from(word(2)? as i16);
        let sign = word(4)?;
        let dscale = word(6)? as usize;
        match sign {
            0x0000 | 0x4000 => {}
            0xC000 => return Ok("NaN".into()),
            0xD000 => return Ok("Infinity".into()),
            0xF000 => return Ok("-Infinity".into()),
            other => return Err(format!("a numeric with sign {other:#x}").into()),
        }
        let digits = (0..ndigits)
            .map(|i| word(8 + 2 * i))
            .collect::<Result<Vec<u16>, _>>()?;
        let digit = |j: i32| -> u16 {
            if j >= 0 {
                digits.get(j as usize).copied().unwrap_or(0)
            } else {
                0
            }
        };
        let mut int = String::new();
        for j in 0..=weight {
            if int.is_empty() {
                if digit(j) != 0 {
                    int = digit(j).to_string();
                }
            } else {
                int.push_str(&format!("{:04}", digit(j)));
            }
        }
        if int.is_empty() {
            int.push('0');
        }
        let mut frac = String::new();
        let mut j = weight + 1;
        while frac.len() < dscale {
            frac.push_str(&format!("{:04}", digit(j)));
            j += 1;
        }
        frac.truncate(dscale);
        let frac = frac.trim_end_matches('0');
        let negative = sign == 0x4000 && (int != "0" || !frac.is_empty());
        Ok(format!(
            "{}{int}{}{frac}",
            if negative { "-" } else { "" },
            if frac.is_empty() { "" } else { "." }
        ))
    }
}

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
