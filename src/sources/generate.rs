//! `sqlrun generate`: seeded synthetic orders, with re-sent records (same order_id, later
//! created_at, another amount, sometimes another date) and refunds, at any size.

use crate::dates::interval::{fmt_date, parse_date};
use crate::db::{Db, TxKind, Value};
use crate::error::{Error, Result};
use crate::store;
use crate::store::queries;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The table the orders go into (queries/insert_order.sql, queries/postgres/copy_orders.sql).
pub const TABLE: &str = "orders";

/// The columns generate fills: the contract's. A project's orders may have more (a
/// `customer_id`), which take their defaults; generate makes orders only (other sources are
/// loaded, `sqlrun load`).
const OWN_COLUMNS: [&str; 4] = ["order_id", "order_date", "amount", "created_at"];

/// `sqlrun generate` as asked.
#[derive(Debug, Clone)]
pub struct GenerateRequest {
    /// The first order date, as given.
    pub start: String,
    pub days: u32,
    pub per_day: u32,
    pub seed: u64,
}

/// What went in.
pub struct Generated {
    pub rows: u64,
    pub resent: u64,
    pub start: String,
    pub end: String,
    pub seed: u64,
}

/// The first date, checked with the sizes before anything is opened.
pub fn check(request: &GenerateRequest) -> Result<chrono::NaiveDate> {
    let start = parse_date(&request.start, "--start")?;
    if request.days == 0 || request.per_day == 0 {
        return Err(Error::bad("--days and --per-day must be at least 1"));
    }
    Ok(start)
}

/// Inserts the orders in one transaction.
pub fn generate(
    db: &mut Db,
    request: &GenerateRequest,
    start: chrono::NaiveDate,
) -> Result<Generated> {
    let others: Vec<String> = store::table_columns(db, TABLE)?
        .into_iter()
        .map(|c| c.name)
        .filter(|c| !OWN_COLUMNS.contains(&c.as_str()) && c != "rowid")
        .collect();
    let inserted = db.transaction(TxKind::Exclusive, |db| insert_orders(db, request, start));
    let (rows, resent) = inserted.map_err(|e| match (&e, others.is_empty()) {
        (Error::Database(_), false) => Error::bad(format!(
            "generate fills the contract's columns of orders ({}) and leaves the others ({}) to their defaults, which the table refused ({e}); nothing was inserted. Give them a default (or let them be NULL) in sources/orders.sql, or load rows of your own with `sqlrun load orders FILE`",
            OWN_COLUMNS.join(", "),
            others.join(", ")
        )),
        _ => e,
    })?;
    let end = start + chrono::Days::new(request.days as u64 - 1);
    Ok(Generated {
        rows,
        resent,
        start: fmt_date(start),
        end: fmt_date(end),
        seed: request.seed,
    })
}

/// Rows sent per `Db::insert_rows` (one COPY on PostgreSQL, whose source triggers fire
/// once per statement): about 10 MB of values held at a time.
const ROWS_PER_BATCH: usize = 50_000;

/// Orders made but not sent yet, four values a row.
struct Batch {
    values: Vec<Value>,
}

impl Batch {
    const WIDTH: usize = 4;

    fn new() -> Batch {
        Batch {
            values: Vec::with_capacity(ROWS_PER_BATCH * Batch::WIDTH),
        }
    }

    /// Adds a row; sent with the others once the batch is full.
    fn push(
        &mut self,
        db: &mut Db,
        id: &str,
        ds: &str,
        amount: i64,
        created: String,
    ) -> Result<()> {
        self.values
            .extend([id.into(), ds.into(), amount.into(), created.into()]);
        if self.values.len() >= ROWS_PER_BATCH * Batch::WIDTH {
            self.send(db)?;
        }
        Ok(())
    }

    fn send(&mut self, db: &mut Db) -> Result<()> {
        if !self.values.is_empty() {
            db.insert_rows(&queries::INSERT_ORDERS, Batch::WIDTH, &self.values)?;
            self.values.clear();
        }
        Ok(())
    }
}

/// The orders, in one transaction; how many rows, and how many of them re-sent.
fn insert_orders(
    db: &mut Db,
    args: &GenerateRequest,
    start: chrono::NaiveDate,
) -> Result<(u64, u64)> {
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let (mut rows, mut resent) = (0u64, 0u64);
    let mut batch = Batch::new();
    {
        for day in 0..args.days {
            let date = start + chrono::Days::new(day as u64);
            let ds = fmt_date(date);
            for n in 0..args.per_day {
                let id = format!("g{}-{}-{n}", args.seed, ds.replace('-', ""));
                let amount = if rng.random_bool(0.03) {
                    -rng.random_range(10..=500) * 100
                } else {
                    rng.random_range(10..=5000) * 100
                };
                let second = rng.random_range(0..86_400);
                let created = date.and_hms_opt(0, 0, 0).expect("midnight")
                    + chrono::Duration::seconds(second);
                batch.push(db, &id, &ds, amount, store::timestamp(created.and_utc()))?;
                rows += 1;
                // A re-sent record: later, another amount; one in five moves a day on.
                if rng.random_bool(0.05) {
                    let moved = rng.random_bool(0.2) && day + 1 < args.days;
                    let resent_date = if moved {
                        date + chrono::Days::new(1)
                    } else {
                        date
                    };
                    let later = created + chrono::Duration::seconds(rng.random_range(60..172_800));
                    let amount = rng.random_range(10..=5000) * 100;
                    batch.push(
                        db,
                        &id,
                        &fmt_date(resent_date),
                        amount,
                        store::timestamp(later.and_utc()),
                    )?;
                    rows += 1;
                    resent += 1;
                }
            }
        }
    }
    batch.send(db)?;
    Ok((rows, resent))
}
