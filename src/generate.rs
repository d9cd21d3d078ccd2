//! `sqlrun generate`: seeded synthetic orders, with re-sent records (same order_id, later
//! created_at, another amount, sometimes another date) and refunds, at any size.

use crate::db::{Db, TxKind};
use crate::error::{Error, Result};
use crate::interval::{fmt_date, parse_date};
use crate::queries;
use crate::store;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
    let (rows, resent) =
        db.transaction(TxKind::Exclusive, |db| insert_orders(db, request, start))?;
    let end = start + chrono::Days::new(request.days as u64 - 1);
    Ok(Generated {
        rows,
        resent,
        start: fmt_date(start),
        end: fmt_date(end),
        seed: request.seed,
    })
}

fn insert_order(db: &mut Db, id: &str, ds: &str, amount: i64, created: String) -> Result<()> {
    db.execute(
        &queries::INSERT_ORDER,
        &[
            (":order_id", id.into()),
            (":order_date", ds.into()),
            (":amount", amount.into()),
            (":created_at", created.into()),
        ],
    )?;
    Ok(())
}

/// The orders, in one transaction; how many rows, and how many of them re-sent.
fn insert_orders(
    db: &mut Db,
    args: &GenerateRequest,
    start: chrono::NaiveDate,
) -> Result<(u64, u64)> {
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let (mut rows, mut resent) = (0u64, 0u64);
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
                insert_order(db, &id, &ds, amount, store::timestamp(created.and_utc()))?;
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
                    insert_order(
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
    Ok((rows, resent))
}
