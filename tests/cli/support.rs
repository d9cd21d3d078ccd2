//! The test harness: a temp dir with a database, the real binary, and SQL to read rows.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{params_from_iter, Connection};
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_sqlrun");

/// A scratch folder with one database.
pub struct Sandbox {
    pub dir: TempDir,
    pub db: PathBuf,
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Sandbox {
    /// A new database, initialised with `sqlrun init`.
    pub fn new() -> Self {
        let sandbox = Self::empty();
        sandbox.ok(&["init"]);
        sandbox
    }

    /// A folder without running anything yet.
    pub fn empty() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("sqlrun-test-")
            .tempdir()
            .unwrap();
        let db = dir.path().join("test.db");
        Sandbox { dir, db }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The binary with `--db` set, a fixed $USER and no SQLRUN_* from outside.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        for (key, _) in std::env::vars() {
            if key.starts_with("SQLRUN_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("USER", "tester").env("NO_COLOR", "1");
        cmd.arg("--db").arg(&self.db).args(args);
        cmd.stdin(Stdio::null());
        cmd
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
            "`sqlrun {}` exited {}, wanted {code}\nstdout: {}\nstderr: {}",
            args.join(" "),
            run.code,
            run.stdout,
            run.stderr
        );
        run
    }

    pub fn ok(&self, args: &[&str]) -> Run {
        self.expect(0, args)
    }

    pub fn conn(&self) -> Connection {
        let conn = Connection::open(&self.db).unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .unwrap();
        conn
    }

    pub fn exec(&self, sql: &str) {
        self.conn().execute_batch(sql).unwrap();
    }

    /// Every row of a query, each column as text or integer rendered to a string
    /// ("NULL" for null): easy to compare.
    pub fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        let conn = self.conn();
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

    pub fn count(&self, sql: &str) -> i64 {
        self.conn().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// daily_revenue as ds -> (revenue, order_count).
    pub fn daily(&self) -> BTreeMap<String, (i64, i64)> {
        self.daily_from("daily_revenue")
    }

    pub fn current(&self) -> BTreeMap<String, (i64, i64)> {
        self.daily_from("daily_revenue_current")
    }

    fn daily_from(&self, table: &str) -> BTreeMap<String, (i64, i64)> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&format!("SELECT ds, revenue, order_count FROM {table}"))
            .unwrap();
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
            .unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    }

    /// cumulative_revenue as (ds, revenue, cumulative_revenue), by date.
    pub fn cumulative(&self) -> Vec<(String, i64, i64)> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT ds, revenue, cumulative_revenue FROM cumulative_revenue ORDER BY ds")
            .unwrap();
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    }

    pub fn last_run_id(&self) -> i64 {
        self.count("SELECT max(run_id) FROM runs")
    }

    pub fn insert_orders(&self, rows: &[OrderRow]) {
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
