//! Late data (issue 10): changes to a model's declared sources (`-- sources:`) mark exactly
//! the dates they touch as `changed`; `apply --only changed` recomputes just those, and a
//! regular run with `--lookback N` also heals the missing, failed and changed dates of the
//! N days before yesterday (a sealed one becomes a correction, once).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::support::*;
use crate::templates::{copy_templates, edit};

const START: &str = "2026-03-01";

/// The `n` dates from `start`.
fn dates(start: &str, n: i64) -> Vec<String> {
    (0..n).map(|i| day(start, i)).collect()
}

fn interval(start: &str, n: i64) -> String {
    format!("{start}..{}", day(start, n - 1))
}

fn set(dates: &[&str]) -> BTreeSet<String> {
    dates.iter().map(|d| d.to_string()).collect()
}

/// `sqlrun --json status --interval I`: one object per date.
fn status(sb: &Sandbox, interval: &str) -> Vec<serde_json::Value> {
    let out = sb.ok(&["--json", "status", "--interval", interval]);
    serde_json::from_str::<serde_json::Value>(&out.stdout)
        .unwrap_or_else(|e| panic!("status --json is JSON ({e}): {}", out.stdout))["dates"]
        .as_array()
        .expect("status --json has an array of dates")
        .clone()
}

/// The dates `status --json` shows as changed; `changed` and `state_name` must agree.
fn changed(sb: &Sandbox, interval: &str) -> BTreeSet<String> {
    status(sb, interval)
        .iter()
        .filter(|r| {
            let flag = r["changed"] == true;
            assert_eq!(
                flag,
                r["state_name"] == "changed",
                "`changed` and `state_name` disagree: {r}"
            );
            flag
        })
        .map(|r| r["ds"].as_str().unwrap().to_string())
        .collect()
}

/// The dates the text table of `sqlrun status` shows in state `changed`.
fn changed_in_text(sb: &Sandbox, interval: &str) -> BTreeSet<String> {
    let out = sb.ok(&["status", "--list", "--interval", interval]).stdout;
    let mut lines = out.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(header.get(1), Some(&"state"), "{out}");
    lines
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|cols| cols.get(1) == Some(&"changed"))
        .map(|cols| cols[0].to_string())
        .collect()
}

/// Dates whose partition_sources row was not written by the run that built their
/// daily_revenue row (the two commit together; sealed dates keep the sent row, so they
/// are left out).
fn sources_of_another_build(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows(
        "SELECT d.ds, d.run_id, p.run_id FROM daily_revenue AS d \
         LEFT JOIN partition_sources AS p ON p.ds = d.ds AND p.source = 'orders' \
         WHERE (p.run_id IS NULL OR p.run_id <> d.run_id) \
           AND NOT EXISTS (SELECT 1 FROM seals AS s WHERE s.ds = d.ds)",
    )
}

/// The computed dates that have change notes left in the state store (what `changed`
/// means, read from the rows themselves).
fn changed_in_store(sb: &Sandbox) -> BTreeSet<String> {
    sb.rows(
        "SELECT DISTINCT n.ds FROM source_changes AS n \
         WHERE n.source = 'orders' \
           AND EXISTS (SELECT 1 FROM run_partitions AS rp \
                       WHERE rp.ds = n.ds AND rp.status IN ('success', 'corrected', 'unchanged'))",
    )
    .into_iter()
    .map(|r| r[0].clone())
    .collect()
}

/// The dates a run has `run_partitions` rows for, with their status.
fn partitions(sb: &Sandbox, run_id: i64) -> BTreeMap<String, String> {
    sb.rows(&format!(
        "SELECT ds, status FROM run_partitions WHERE run_id = {run_id}"
    ))
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

/// How many `run_partitions` rows each date has (over all runs).
fn attempts(sb: &Sandbox) -> BTreeMap<String, i64> {
    sb.rows("SELECT ds, count(*) FROM run_partitions GROUP BY ds")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect()
}

/// One row of `orders`, inserted with plain SQL (one transaction).
fn insert(sb: &Sandbox, id: &str, date: &str, amount: i64, created_at: &str) {
    sb.exec(&format!(
        "INSERT INTO orders(order_id, order_date, amount, created_at) \
         VALUES ('{id}', '{date}', {amount}, '{created_at}')"
    ));
}

/// What the model should compute for `dates` from `orders` as it is now, worked out here
/// from the rows: per order_id the row with the greatest created_at wins, ties going to
/// the row inserted last; the order counts on its winning row's date.
fn expected_from_orders(sb: &Sandbox, dates: &[String]) -> BTreeMap<String, (i64, i64)> {
    let rows =
        sb.rows("SELECT order_id, order_date, amount, created_at FROM orders ORDER BY rowid");
    let mut win: BTreeMap<String, (String, i64, String)> = BTreeMap::new();
    for r in rows {
        let (id, date, amount, at) = (&r[0], &r[1], r[2].parse::<i64>().unwrap(), &r[3]);
        match win.get(id) {
            Some((_, _, best)) if at < best => {}
            _ => {
                win.insert(id.clone(), (date.clone(), amount, at.clone()));
            }
        }
    }
    let mut out: BTreeMap<String, (i64, i64)> = dates.iter().map(|d| (d.clone(), (0, 0))).collect();
    for (date, amount, _) in win.values() {
        if let Some(e) = out.get_mut(date) {
            e.0 += amount;
            e.1 += 1;
        }
    }
    out
}

/// daily_revenue for `dates` only.
fn daily_of(sb: &Sandbox, dates: &[String]) -> BTreeMap<String, (i64, i64)> {
    sb.daily()
        .into_iter()
        .filter(|(ds, _)| dates.contains(ds))
        .collect()
}

/// The `looked back ...` line of a lookback run's stderr.
fn lookback_line(run: &Run) -> String {
    run.stderr
        .lines()
        .find(|l| l.starts_with("looked back"))
        .unwrap_or_else(|| panic!("no `looked back` line on stderr:\n{}", run.stderr))
        .to_string()
}

/// Ten dates from START, each with an order `x0`..`x9` (and `y0`..`y9`), computed.
fn ten_computed_dates() -> (Sandbox, Vec<String>, String) {
    let sb = Sandbox::new();
    let days = dates(START, 10);
    for (i, ds) in days.iter().enumerate() {
        let i = i as i64;
        insert(
            &sb,
            &format!("x{i}"),
            ds,
            1_000 * (i + 1),
            "2026-03-20 10:00:00",
        );
        insert(
            &sb,
            &format!("y{i}"),
            ds,
            7 * (i + 1),
            "2026-03-20 11:00:00",
        );
    }
    let all = interval(START, 10);
    sb.ok(&["apply", "--interval", &all]);
    assert_eq!(daily_of(&sb, &days), expected_from_orders(&sb, &days));
    assert!(changed(&sb, &all).is_empty(), "nothing changed yet");
    assert!(changed_in_store(&sb).is_empty());
    (sb, days, all)
}

/// After a change: exactly `want` shows as changed (in status and in the store), then
/// `apply --only changed` recomputes exactly those dates, after which nothing is changed
/// and every date has what the orders say.
fn changed_exactly_then_heal(sb: &Sandbox, all: &str, days: &[String], want: &[&str], what: &str) {
    let want = set(want);
    assert_eq!(changed(sb, all), want, "{what}: status --json");
    assert_eq!(changed_in_text(sb, all), want, "{what}: status");
    assert_eq!(changed_in_store(sb), want, "{what}: the state store");
    sb.ok(&["apply", "--interval", all, "--only", "changed"]);
    let run = sb.last_run_id();
    let got = partitions(sb, run);
    assert_eq!(
        got.keys().cloned().collect::<BTreeSet<_>>(),
        want,
        "{what}: `--only changed` wrote run_partitions rows for exactly the changed dates"
    );
    assert!(got.values().all(|s| s == "success"), "{what}: {got:?}");
    assert_eq!(
        sb.rows(&format!(
            "SELECT only_filter FROM runs WHERE run_id = {run}"
        )),
        [["changed"]]
    );
    assert!(changed(sb, all).is_empty(), "{what}: nothing changed after");
    assert_eq!(
        sources_of_another_build(sb),
        Vec::<Vec<String>>::new(),
        "{what}"
    );
    assert!(
        changed_in_store(sb).is_empty(),
        "{what}: nothing changed after"
    );
    assert_eq!(
        daily_of(sb, days),
        expected_from_orders(sb, days),
        "{what}: daily_revenue after --only changed"
    );
}

#[test]
fn each_kind_of_change_marks_exactly_the_dates_it_touches() {
    let (sb, days, all) = ten_computed_dates();
    let d = |i: usize| days[i].as_str();

    // An inserted row (a new order) on one date.
    insert(&sb, "new-1", d(1), 5_000, "2026-03-21 09:00:00");
    changed_exactly_then_heal(&sb, &all, &days, &[d(1)], "an inserted row");

    // A deleted row.
    sb.exec("DELETE FROM orders WHERE order_id = 'x2'");
    changed_exactly_then_heal(&sb, &all, &days, &[d(2)], "a deleted row");

    // An in-place UPDATE of the amount.
    sb.exec("UPDATE orders SET amount = amount + 1 WHERE order_id = 'x3'");
    changed_exactly_then_heal(&sb, &all, &days, &[d(3)], "an updated amount");

    // An UPDATE that changes no value: nothing is noted.
    let notes = sb.rows("SELECT source, ds, changed_at FROM source_changes ORDER BY ds");
    sb.exec("UPDATE orders SET amount = amount WHERE order_id = 'x4'");
    sb.exec(
        "UPDATE orders SET order_date = order_date, created_at = created_at WHERE order_id = 'y5'",
    );
    assert_eq!(
        sb.rows("SELECT source, ds, changed_at FROM source_changes ORDER BY ds"),
        notes,
        "an UPDATE that changes nothing notes nothing"
    );
    changed_exactly_then_heal(&sb, &all, &days, &[], "an update to the same value");

    // A re-sent record: the same order_id, later created_at, another date: A and B.
    insert(&sb, "x5", d(8), 55_555, "2026-03-21 10:00:00");
    changed_exactly_then_heal(
        &sb,
        &all,
        &days,
        &[d(5), d(8)],
        "a re-sent order moving A to B",
    );
    // x5 now counts on d(8) only.
    assert_eq!(sb.daily()[d(5)], (7 * 6, 1));

    // An UPDATE of order_date from G to H: G and H.
    sb.exec(&format!(
        "UPDATE orders SET order_date = '{}' WHERE order_id = 'x7'",
        d(9)
    ));
    changed_exactly_then_heal(
        &sb,
        &all,
        &days,
        &[d(7), d(9)],
        "an order_date moved G to H",
    );
    assert_eq!(sb.daily()[d(7)], (7 * 8, 1));

    // A re-send with an older created_at (it loses) still touches its record's dates:
    // the dates are noted, and recomputing them gives the same numbers.
    insert(&sb, "x0", d(6), 1, "2020-01-01 00:00:00");
    changed_exactly_then_heal(&sb, &all, &days, &[d(0), d(6)], "a losing re-send");

    // A date outside the computed interval: marked in the store, but no date of the
    // interval is changed (and a never-computed date is missing, not changed).
    let outside = day(START, 20);
    insert(&sb, "far-1", &outside, 9, "2026-03-21 11:00:00");
    assert!(changed(&sb, &all).is_empty());
    let st = status(&sb, &outside);
    assert_eq!(st.len(), 1);
    assert_eq!(st[0]["state_name"], "missing", "{}", st[0]);
    assert_eq!(st[0]["changed"], false, "{}", st[0]);
}

/// A sandbox with generated orders on the 16 dates from START (nothing computed yet).
fn sixteen_days_of_orders() -> (Sandbox, Vec<String>) {
    let sb = Sandbox::new();
    let orders = Orders::new(1001, START, 16, false);
    sb.insert_orders(&orders.rows);
    let days = dates(START, 16);
    (sb, days)
}

#[test]
fn a_date_left_missing_in_the_window_is_computed_by_the_next_lookback() {
    let (sb, days) = sixteen_days_of_orders();
    // Computed: 03-01..03-13. A planned backfill holds 03-14.
    sb.ok(&["apply", "--interval", &interval(START, 13)]);
    let holder: i64 = sb
        .ok(&["reserve", "--interval", &days[13], "--by", "bob"])
        .stdout
        .trim()
        .parse()
        .unwrap();

    // The regular run for 03-14 skips it: exit 99, recorded as skipped.
    sb.expect(99, &["apply", "--as-of", &days[14]]);
    let skipped_by = sb.last_run_id();
    assert_eq!(
        partitions(&sb, skipped_by),
        BTreeMap::from([(days[13].clone(), "skipped".to_string())])
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT held_by FROM run_partitions WHERE run_id = {skipped_by}"
        )),
        holder
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, status, lookback FROM runs WHERE run_id = {skipped_by}"
        )),
        [["regular", "partial", "NULL"]]
    );

    // A regular run with a look back while bob still holds 03-14: it leaves the date to
    // bob (said on stderr, not a skip), computes yesterday, exit 0.
    let run = sb.ok(&["apply", "--as-of", &days[15], "--lookback", "3"]);
    let left = sb.last_run_id();
    assert_eq!(
        partitions(&sb, left),
        BTreeMap::from([(days[14].clone(), "success".to_string())]),
        "the held date gets no run_partitions row"
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains(&days[13]) && l.contains(&format!("run {holder}"))),
        "stderr names the held date and its holder:\n{}",
        run.stderr
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, status, lookback, interval_start, interval_end FROM runs WHERE run_id = {left}"
        )),
        [["regular", "success", "3", &days[11], &days[14]]]
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT run_id FROM reservations WHERE ds = '{}'",
            days[13]
        )),
        holder,
        "still bob's"
    );

    // Bob gives up; 03-14 is missing.
    sb.ok(&["release", &holder.to_string()]);
    let st = status(&sb, &days[13]);
    assert_eq!(st[0]["state_name"], "missing", "{}", st[0]);

    // The next regular run looks back and computes it, besides yesterday.
    let run = sb.ok(&["apply", "--as-of", &day(START, 16), "--lookback", "3"]);
    let healed = sb.last_run_id();
    assert_eq!(
        partitions(&sb, healed),
        BTreeMap::from([
            (days[13].clone(), "success".to_string()),
            (days[15].clone(), "success".to_string()),
        ]),
        "the missing date and yesterday, nothing else"
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, status, lookback, interval_start, interval_end FROM runs WHERE run_id = {healed}"
        )),
        [["regular", "success", "3", &days[12], &days[15]]]
    );
    let line = lookback_line(&run);
    assert!(
        line.contains(&format!("{}..{}", days[12], days[15]))
            && line.contains(&format!("{} (missing)", days[13])),
        "{line}"
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT run_id FROM daily_revenue WHERE ds = '{}'",
            days[13]
        )),
        [[healed.to_string()]]
    );
    assert_eq!(sb.daily(), expected_from_orders(&sb, &days));
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
}

#[test]
fn a_failed_date_in_the_window_is_retried_by_the_next_lookback() {
    let (sb, days) = sixteen_days_of_orders();
    sb.fail_inserts("daily_revenue", &days[4], When::Before);
    sb.expect(
        1,
        &["apply", "--interval", &interval(START, 10), "--keep-going"],
    );
    sb.stop_failing("daily_revenue");
    assert_eq!(status(&sb, &days[4])[0]["state_name"], "failed");

    let run = sb.ok(&["apply", "--as-of", &days[10], "--lookback", "9"]);
    let id = sb.last_run_id();
    assert_eq!(
        partitions(&sb, id),
        BTreeMap::from([
            (days[4].clone(), "success".to_string()),
            (days[9].clone(), "success".to_string()),
        ])
    );
    let line = lookback_line(&run);
    assert!(
        line.contains(&format!("{}..{}", days[0], days[9]))
            && line.contains(&format!("{} (", days[4])),
        "{line}"
    );
    let first = dates(START, 10);
    assert_eq!(daily_of(&sb, &first), expected_from_orders(&sb, &first));
}

#[test]
fn an_unchanged_date_is_recomputed_neither_by_only_changed_nor_by_lookback() {
    let (sb, days, all) = ten_computed_dates();
    let one_each: BTreeMap<String, i64> = days.iter().map(|d| (d.clone(), 1)).collect();
    assert_eq!(attempts(&sb), one_each);

    // One date changes; --only changed recomputes it alone.
    insert(&sb, "late-1", &days[3], 300, "2026-03-22 00:00:00");
    sb.ok(&["apply", "--interval", &all, "--only", "changed"]);
    let mut want = one_each.clone();
    *want.get_mut(&days[3]).unwrap() += 1;
    assert_eq!(attempts(&sb), want, "--only changed");

    // Nothing changed: --only changed recomputes nothing (the run is still recorded).
    let runs_before = sb.count("SELECT count(*) FROM runs");
    sb.ok(&["apply", "--interval", &all, "--only", "changed"]);
    assert_eq!(sb.count("SELECT count(*) FROM runs"), runs_before + 1);
    assert_eq!(attempts(&sb), want, "--only changed with nothing changed");

    // Another date changes; a regular run looking back over the whole interval computes
    // it and yesterday, nothing else.
    insert(&sb, "late-2", &days[6], 600, "2026-03-22 00:00:01");
    let as_of = day(START, 10);
    let run = sb.ok(&["apply", "--as-of", &as_of, "--lookback", "9"]);
    *want.get_mut(&days[6]).unwrap() += 1;
    *want.get_mut(&days[9]).unwrap() += 1;
    assert_eq!(attempts(&sb), want, "--lookback");
    assert!(
        lookback_line(&run).contains(&format!("also computing {} (changed)", days[6])),
        "{}",
        run.stderr
    );

    // Again, with nothing changed: yesterday only.
    let run = sb.ok(&["apply", "--as-of", &as_of, "--lookback", "9"]);
    *want.get_mut(&days[9]).unwrap() += 1;
    assert_eq!(attempts(&sb), want, "--lookback with nothing changed");
    assert!(
        lookback_line(&run).contains("nothing missing, failed or changed"),
        "{}",
        run.stderr
    );
    assert_eq!(daily_of(&sb, &days), expected_from_orders(&sb, &days));
}

#[test]
fn a_sealed_changed_date_becomes_exactly_one_correction() {
    let (sb, days, _) = ten_computed_dates();
    sb.ok(&[
        "seal",
        "--interval",
        &interval(START, 7),
        "--reason",
        "week 1",
    ]);
    let sent = sb.daily()[&days[2]];

    insert(&sb, "voucher", &days[2], 350_000, "2026-03-25 09:00:00");
    let st = status(&sb, &days[2]);
    assert_eq!(st[0]["state_name"], "changed", "{}", st[0]);
    assert_eq!(st[0]["sealed"], true, "{}", st[0]);

    let as_of = day(START, 10);
    let run = sb.ok(&["apply", "--as-of", &as_of, "--lookback", "9"]);
    let first = sb.last_run_id();
    assert_eq!(
        lookback_line(&run),
        format!(
            "looked back 9 days ({}..{}): also computing {} (changed)",
            days[0], days[9], days[2]
        )
    );
    assert_eq!(
        partitions(&sb, first),
        BTreeMap::from([
            (days[2].clone(), "corrected".to_string()),
            (days[9].clone(), "success".to_string()),
        ])
    );
    assert_eq!(
        sb.rows(
            "SELECT ds, revenue, order_count, previous_revenue, previous_order_count, run_id \
             FROM daily_revenue_corrections"
        ),
        [[
            days[2].clone(),
            (sent.0 + 350_000).to_string(),
            (sent.1 + 1).to_string(),
            sent.0.to_string(),
            sent.1.to_string(),
            first.to_string()
        ]]
    );
    assert_eq!(
        sb.daily()[&days[2]],
        sent,
        "the sealed row keeps what was sent"
    );
    assert_eq!(sb.current()[&days[2]], (sent.0 + 350_000, sent.1 + 1));
    let st = status(&sb, &days[2]);
    assert_eq!(st[0]["changed"], false, "{}", st[0]);
    assert_eq!(st[0]["corrections"], 1, "{}", st[0]);

    // The same regular run again: yesterday only, no second correction.
    sb.ok(&["apply", "--as-of", &as_of, "--lookback", "9"]);
    let second = sb.last_run_id();
    assert_eq!(
        partitions(&sb, second),
        BTreeMap::from([(days[9].clone(), "success".to_string())])
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue_corrections"),
        1
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE ds = '{}'",
            days[2]
        )),
        2
    );
}

/// A writer of `orders` beside sqlrun, one transaction per row. On SQLite its own
/// connection, retrying a busy lock every 100 µs (as sqlrun does) rather than with
/// SQLite's backing-off sleeps, so that it gets in between two dates of a backfill; on
/// PostgreSQL the sandbox's session.
enum Inserter<'a> {
    Sqlite(rusqlite::Connection),
    Shared(&'a Sandbox),
}

impl<'a> Inserter<'a> {
    fn new(sb: &'a Sandbox) -> Self {
        if !is_sqlite() {
            return Inserter::Shared(sb);
        }
        let mut conn = rusqlite::Connection::open(&sb.db).unwrap();
        conn.busy_handler(Some(|tries| {
            std::thread::sleep(std::time::Duration::from_micros(100));
            tries < 1_200_000
        }))
        .unwrap();
        Inserter::Sqlite(conn)
    }

    fn row(&mut self, r: &OrderRow) {
        match self {
            Inserter::Sqlite(conn) => {
                conn.execute(
                    "INSERT INTO orders(order_id, order_date, amount, created_at) \
                     VALUES (?1, ?2, ?3, ?4)",
                    rusqlite::params![r.order_id, r.order_date, r.amount, r.created_at],
                )
                .unwrap();
            }
            Inserter::Shared(sb) => sb.insert_orders(std::slice::from_ref(r)),
        }
    }
}

#[test]
fn concurrent_inserts_during_a_backfill_leave_every_unchanged_date_exact() {
    const DAYS: i64 = 60;
    let sb = Sandbox::new();
    let orders = Orders::new(4242, START, DAYS, false);
    sb.insert_orders(&orders.rows);
    let days = dates(START, DAYS);
    let all = interval(START, DAYS);
    sb.slow_inserts("daily_revenue", 20_000);

    let ids: Vec<String> = orders.latest().keys().cloned().collect();
    let stop = AtomicBool::new(false);
    let inserted = AtomicUsize::new(0);
    let backfill = std::thread::scope(|s| {
        let inserter = s.spawn(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(99);
            // The latest created_at the inserter gave each order id (to make ties).
            let mut latest: BTreeMap<String, String> = BTreeMap::new();
            let mut insert = Inserter::new(&sb);
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) || n < 40 {
                n += 1;
                let date = days[rng.random_range(0..days.len())].clone();
                let at = format!(
                    "2031-01-{:02} {:02}:{:02}:{:02}",
                    1 + n / 86_400,
                    n / 3_600 % 24,
                    n / 60 % 60,
                    n % 60
                );
                let row = match rng.random_range(0..10) {
                    // a re-send of an existing order, possibly to another date
                    0..=2 => {
                        let id = ids[rng.random_range(0..ids.len())].clone();
                        latest.insert(id.clone(), at.clone());
                        OrderRow {
                            order_id: id,
                            order_date: date,
                            amount: rng.random_range(1_000..500_000),
                            created_at: at,
                        }
                    }
                    // a tie on created_at with an earlier re-send: inserted last, it wins
                    3 if !latest.is_empty() => {
                        let k = rng.random_range(0..latest.len());
                        let (id, at) = latest.iter().nth(k).unwrap();
                        OrderRow {
                            order_id: id.clone(),
                            order_date: date,
                            amount: rng.random_range(1_000..500_000),
                            created_at: at.clone(),
                        }
                    }
                    // a new order
                    _ => OrderRow {
                        order_id: format!("live-{n}"),
                        order_date: date,
                        amount: rng.random_range(-50_000..500_000),
                        created_at: at,
                    },
                };
                insert.row(&row);
                inserted.fetch_add(1, Ordering::SeqCst);
            }
            n
        });
        // The inserter is under way before the backfill starts.
        while inserted.load(Ordering::SeqCst) < 5 && !inserter.is_finished() {
            std::thread::yield_now();
        }
        let run = sb.run(&["apply", "--interval", &all]);
        stop.store(true, Ordering::SeqCst);
        let n = inserter.join().expect("the inserter");
        assert!(n >= 40);
        run
    });
    assert_eq!(
        backfill.code, 0,
        "the backfill: {}\n{}",
        backfill.stdout, backfill.stderr
    );
    let run_id = sb.last_run_id();
    assert_eq!(partitions(&sb, run_id).len(), days.len());

    // Every date the state store does not call changed has what its orders say now.
    let expected = expected_from_orders(&sb, &days);
    let daily = sb.daily();
    let st = status(&sb, &all);
    assert_eq!(st.len(), days.len());
    let mut changed_dates = BTreeSet::new();
    for r in &st {
        let ds = r["ds"].as_str().unwrap().to_string();
        match r["state_name"].as_str().unwrap() {
            "changed" => {
                changed_dates.insert(ds);
            }
            "computed" => assert_eq!(
                daily.get(&ds),
                expected.get(&ds),
                "{ds} is not changed, so it must match its orders as they are now"
            ),
            other => panic!("{ds} is {other} after a successful backfill: {r}"),
        }
    }
    assert_eq!(changed_in_store(&sb), changed_dates);
    assert_eq!(sources_of_another_build(&sb), Vec::<Vec<String>>::new());

    // Recomputing the changed dates leaves nothing changed and every date exact.
    sb.ok(&["apply", "--interval", &all, "--only", "changed"]);
    let again = sb.last_run_id();
    assert_eq!(
        partitions(&sb, again)
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>(),
        changed_dates
    );
    assert!(changed(&sb, &all).is_empty());
    assert!(changed_in_store(&sb).is_empty());
    assert_eq!(sb.daily(), expected);
}

#[test]
fn lookback_with_only_or_run_is_refused_and_writes_nothing() {
    let (sb, _days, all) = ten_computed_dates();
    insert(&sb, "late-1", START, 1, "2026-03-22 00:00:00");
    let before = snapshot(&sb);
    for args in [
        &[
            "apply",
            "--as-of",
            "2026-03-11",
            "--lookback",
            "3",
            "--only",
            "changed",
        ][..],
        &[
            "apply",
            "--interval",
            &all,
            "--lookback",
            "3",
            "--only",
            "missing",
        ],
        &["apply", "--run", "1", "--lookback", "3"],
        &["apply", "--as-of", "2026-03-11", "--lookback=-1"],
        &["apply", "--as-of", "2026-03-11", "--lookback", "many"],
    ] {
        let run = sb.expect(2, args);
        assert!(
            run.stderr.contains("--lookback") || run.stderr.contains("--as-of"),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(snapshot(&sb), before, "{args:?} wrote something");
    }
    // --only with --lookback says the two requests that work.
    let run = sb.expect(2, &["apply", "--lookback", "3", "--only", "changed"]);
    contains_all(
        &run.stderr,
        &[
            "--interval START..END --only changed",
            "`--lookback 3` alone",
        ],
    );
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 1);
}

/// `--interval I --lookback N`: every date of I as asked (an unchanged one too), plus
/// the missing, failed or changed dates of the N days before I; a held one of those is
/// left to its holder, and nothing older than the window is touched.
#[test]
fn an_interval_with_a_lookback_computes_its_dates_and_heals_the_days_before() {
    let (sb, days) = sixteen_days_of_orders();
    // Computed: 03-01..03-05 and 03-07..03-12; 03-06 never (missing).
    sb.ok(&["apply", "--interval", &interval(START, 5)]);
    sb.ok(&["apply", "--interval", &format!("{}..{}", days[6], days[11])]);
    // Late orders: 03-02 (before the window), 03-04 and 03-09 (in it); bob's backfill
    // holds 03-09.
    for (id, ds) in [
        ("late-a", &days[1]),
        ("late-b", &days[3]),
        ("late-c", &days[8]),
    ] {
        insert(&sb, id, ds, 500, "2026-03-25 08:00:00");
    }
    let holder = sb
        .ok(&["reserve", "--interval", &days[8], "--by", "bob"])
        .stdout
        .trim()
        .to_string();
    // (03-09 shows as held: `changed` is its flag.)
    let flagged = |sb: &Sandbox| -> BTreeSet<String> {
        status(sb, &interval(START, 16))
            .iter()
            .filter(|r| r["changed"] == true)
            .map(|r| r["ds"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(flagged(&sb), set(&[&days[1], &days[3], &days[8]]));

    // 03-11..03-13 asked, looking back 8 days: the window is 03-03..03-13.
    let asked = format!("{}..{}", days[10], days[12]);
    let run = sb.ok(&["apply", "--interval", &asked, "--lookback", "8"]);
    let id = sb.last_run_id();
    let success = |ds: &String| (ds.clone(), "success".to_string());
    assert_eq!(
        partitions(&sb, id),
        BTreeMap::from([
            success(&days[3]),  // changed
            success(&days[5]),  // missing
            success(&days[10]), // asked, computed and unchanged: recomputed all the same
            success(&days[11]),
            success(&days[12]), // asked, never computed
        ]),
        "the asked dates and the window's dates that need work; 03-09 is bob's, 03-02 is \
         before the window"
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, status, lookback, only_filter, interval_start, interval_end \
             FROM runs WHERE run_id = {id}"
        )),
        [["backfill", "success", "8", "NULL", &days[2], &days[12]]]
    );
    let line = lookback_line(&run);
    contains_all(
        &line,
        &[
            &format!("{}..{}", days[2], days[12]),
            &format!("{} (changed)", days[3]),
            &format!("{} (missing)", days[5]),
        ],
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains(&days[8]) && l.contains(&format!("run {holder}"))),
        "stderr leaves 03-09 to its holder:\n{}",
        run.stderr
    );
    assert_eq!(
        flagged(&sb),
        set(&[&days[1], &days[8]]),
        "what the window did not take is still changed"
    );
    let healed = dates(START, 13);
    let mut want = expected_from_orders(&sb, &healed);
    want.remove(&days[1]);
    want.remove(&days[8]);
    let mut got = daily_of(&sb, &healed);
    got.remove(&days[1]);
    got.remove(&days[8]);
    assert_eq!(got, want);
    contains_all(
        &sb.ok(&["runs", &id.to_string()]).stdout,
        &[&format!("looked back 8 days before {}", days[10])],
    );

    // --kind regular records it as the regular run it stands for.
    sb.ok(&[
        "apply",
        "--interval",
        &days[13],
        "--lookback",
        "1",
        "--kind",
        "regular",
    ]);
    let id = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, lookback, interval_start, interval_end FROM runs WHERE run_id = {id}"
        )),
        [["regular", "1", &days[12], &days[13]]]
    );
    assert_eq!(partitions(&sb, id), BTreeMap::from([success(&days[13])]));
}

/// `--only STATE` without `--interval` looks at every date sqlrun knows (as `status`
/// shows them) up to yesterday, says so, and is recorded as a backfill of that span.
#[test]
fn only_without_an_interval_looks_at_every_date_sqlrun_knows() {
    let (sb, days, _all) = ten_computed_dates();
    insert(&sb, "late-a", &days[1], 5, "2026-03-25 08:00:00");
    insert(&sb, "late-b", &days[6], 5, "2026-03-25 08:00:00");
    // What `status` shows without an interval...
    let status_text = sb.ok(&["status"]).stdout;
    assert!(
        status_text
            .lines()
            .any(|l| l.starts_with("changed") && l.contains(&format!("{}, {}", days[1], days[6]))),
        "{status_text}"
    );

    let as_of = day(START, 11); // yesterday: 03-11
    let run = sb.ok(&["apply", "--as-of", &as_of, "--only", "changed"]);
    let id = sb.last_run_id();
    assert_eq!(
        partitions(&sb, id).keys().cloned().collect::<BTreeSet<_>>(),
        set(&[&days[1], &days[6]])
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT kind, only_filter, lookback, interval_start, interval_end \
             FROM runs WHERE run_id = {id}"
        )),
        [["backfill", "changed", "NULL", START, &day(START, 10)]]
    );
    contains_all(
        &run.stderr,
        &[&format!(
            "--only changed: looking at {START}..{}",
            day(START, 10)
        )],
    );
    assert!(changed(&sb, &interval(START, 10)).is_empty());
    assert_eq!(daily_of(&sb, &days), expected_from_orders(&sb, &days));

    // --only missing fills up to yesterday: 03-11 and 03-12, never computed.
    sb.ok(&["apply", "--as-of", &day(START, 12), "--only", "missing"]);
    let id = sb.last_run_id();
    assert_eq!(
        partitions(&sb, id).keys().cloned().collect::<BTreeSet<_>>(),
        set(&[&day(START, 10), &day(START, 11)])
    );
}

#[test]
fn only_without_an_interval_on_a_new_database_is_refused_with_the_way_out() {
    let sb = Sandbox::new();
    let before = snapshot(&sb);
    let run = sb.expect(2, &["apply", "--only", "failed"]);
    contains_all(
        &run.stderr,
        &["knows none yet", "--interval START..END --only failed"],
    );
    assert_eq!(snapshot(&sb), before);
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 0);
}

#[test]
fn a_declared_source_that_does_not_exist_is_refused() {
    let cases = [
        ("orders(order_date, key order_id)", "nosuch(ds)", "nosuch"),
        (
            "orders(order_date, key order_id)",
            "orders(no_such_date, key order_id)",
            "no_such_date",
        ),
        (
            "orders(order_date, key order_id)",
            "orders(order_date, key no_such_key)",
            "no_such_key",
        ),
    ];
    for (from, to, named) in cases {
        let sb = Sandbox::new();
        insert(&sb, "a", START, 10, "2026-03-20 00:00:00");
        sb.ok(&["apply", "--interval", START]);
        let dir = copy_templates(&sb);
        let model = dir.join("models/daily_revenue.sql");
        edit(
            &model,
            &format!("-- sources: {from}"),
            &format!("-- sources: {to}"),
        );
        let tpl = dir.to_str().unwrap();
        let before = snapshot(&sb);
        for args in [
            &["--templates", tpl, "apply", "--interval", "2026-03-02"][..],
            &["--templates", tpl, "init"],
        ] {
            let run = sb.expect(2, args);
            assert!(
                run.stderr.contains(named) && run.stderr.contains("daily_revenue.sql"),
                "`{to}`: names {named} and the model file:\n{}",
                run.stderr
            );
            assert_eq!(snapshot(&sb), before, "`{to}`: {args:?} wrote something");
        }
        // The built-in pipeline still works on the same database.
        sb.ok(&["apply", "--interval", "2026-03-02"]);
    }
}

/// A source whose triggers went missing (dropped by hand, or the table made again) changed
/// without being counted: the next command installs them again and marks every date built
/// from it changed, so nothing that happened meanwhile is taken for unchanged.
#[test]
fn missing_triggers_are_put_back_and_every_built_date_counts_as_changed() {
    let (sb, days, all) = ten_computed_dates();
    sb.exec(match BACKEND {
        Backend::Sqlite => "DROP TRIGGER sqlrun_orders_insert;",
        Backend::Postgres => "DROP TRIGGER sqlrun_insert ON orders;",
    });
    // Not counted: the trigger is gone.
    insert(&sb, "untracked", &days[4], 123_456, "2026-03-21 09:00:00");
    assert!(changed_in_store(&sb).is_empty(), "nothing counted it");

    let marked = changed(&sb, &all);
    assert_eq!(
        marked,
        days.iter().cloned().collect::<BTreeSet<_>>(),
        "every built date is changed once the gap is found"
    );
    let triggers = match BACKEND {
        Backend::Sqlite => sb.count(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'sqlrun%'",
        ),
        Backend::Postgres => sb.count(
            "SELECT count(*) FROM pg_catalog.pg_trigger \
             WHERE tgrelid = to_regclass('orders') AND tgname LIKE 'sqlrun%'",
        ),
    };
    assert_eq!(
        triggers,
        sb.count("SELECT triggers FROM source_tracking WHERE source = 'orders'"),
        "the triggers are back, as many as recorded"
    );
    assert!(triggers >= 3, "{triggers}");

    // Tracked again from here on; --only changed heals every date, with the untracked row.
    sb.ok(&["apply", "--interval", &all, "--only", "changed"]);
    assert!(changed(&sb, &all).is_empty());
    assert_eq!(daily_of(&sb, &days), expected_from_orders(&sb, &days));
    insert(&sb, "tracked", &days[6], 1, "2026-03-22 09:00:00");
    assert_eq!(changed(&sb, &all), set(&[&days[6]]));
}

/// PostgreSQL: a loader in another session, with another search_path and another role
/// without any right on the state store, is tracked all the same (the trigger function
/// runs as its owner, in the pipeline's schema).
#[test]
fn a_loader_with_another_search_path_and_role_is_tracked() {
    if postgres_only("search_path, roles and SECURITY DEFINER are PostgreSQL's") {
        return;
    }
    let (sb, days, all) = ten_computed_dates();
    let schema = sb.schema.clone().unwrap();
    let role = format!("loader_{schema}");
    sb.exec(&format!(
        "CREATE ROLE {role}; \
         GRANT USAGE ON SCHEMA \"{schema}\" TO {role}; \
         GRANT INSERT, SELECT ON \"{schema}\".orders TO {role}; \
         BEGIN; SET LOCAL ROLE {role}; SET LOCAL search_path = pg_catalog; \
         INSERT INTO \"{schema}\".orders (order_id, order_date, amount, created_at) \
         VALUES ('from-a-loader', '{}', 500, '2026-03-21 09:00:00'); \
         COMMIT; \
         REVOKE ALL ON \"{schema}\".orders FROM {role}; \
         REVOKE ALL ON SCHEMA \"{schema}\" FROM {role}; DROP ROLE {role};",
        days[2]
    ));
    assert_eq!(changed(&sb, &all), set(&[&days[2]]));
    sb.ok(&["apply", "--interval", &all, "--only", "changed"]);
    assert_eq!(daily_of(&sb, &days), expected_from_orders(&sb, &days));
}

/// A trigger of the user's own whose name happens to start with `sqlrun_` is none of
/// sqlrun's business: it is not taken for a missing or extra change trigger.
#[test]
fn a_users_own_sqlrun_named_trigger_marks_nothing() {
    let (sb, _, all) = ten_computed_dates();
    sb.exec(match BACKEND {
        Backend::Sqlite => {
            "CREATE TRIGGER sqlrun_audit AFTER INSERT ON orders BEGIN SELECT 1; END;"
        }
        Backend::Postgres => {
            "CREATE FUNCTION sqlrun_audit() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RETURN NULL; END $$; \
             CREATE TRIGGER sqlrun_audit AFTER INSERT ON orders \
             FOR EACH STATEMENT EXECUTE FUNCTION sqlrun_audit();"
        }
    });
    assert!(changed(&sb, &all).is_empty());
    sb.exec(match BACKEND {
        Backend::Sqlite => "DROP TRIGGER sqlrun_audit;",
        Backend::Postgres => "DROP TRIGGER sqlrun_audit ON orders;",
    });
    assert!(changed(&sb, &all).is_empty());
}

/// PostgreSQL: loaders only ever insert change notes, so two loaders writing the same
/// dates never wait for each other, and a date computed meanwhile waits for neither; the
/// open loader's rows, committed after the date, leave it changed.
#[test]
fn loaders_and_dates_never_wait_for_each_other_on_postgresql() {
    if postgres_only("SQLite's writers take turns by design") {
        return;
    }
    let (sb, days, all) = ten_computed_dates();
    let mut a = sb.pg_client();
    let mut b = sb.pg_client();
    let mut open = a.transaction().unwrap();
    open.batch_execute(&format!(
        "INSERT INTO orders (order_id, order_date, amount, created_at) VALUES \
         ('open-1', '{}', 100, '2026-03-21 09:00:00'), ('open-2', '{}', 200, '2026-03-21 09:00:00'); \
         UPDATE orders SET amount = amount + 1 WHERE order_id IN ('x3', 'y2');",
        days[1], days[2]
    ))
    .unwrap();
    // The other loader, other rows of the same dates, in the other order: no wait (a wait
    // would end in this statement_timeout), no deadlock.
    b.batch_execute(&format!(
        "SET statement_timeout = '5s'; BEGIN; \
         UPDATE orders SET amount = amount + 1 WHERE order_id IN ('y3', 'x2'); \
         INSERT INTO orders (order_id, order_date, amount, created_at) VALUES \
         ('other-2', '{}', 20, '2026-03-21 10:00:00'), ('other-1', '{}', 10, '2026-03-21 10:00:00'); \
         COMMIT;",
        days[2], days[1]
    ))
    .unwrap();
    // A date computed while the first loader is still open.
    let interval = format!("{}..{}", days[1], days[3]);
    sb.ok(&["apply", "--interval", &interval]);
    assert!(
        changed(&sb, &all).is_empty(),
        "the open loader is not seen yet"
    );
    open.commit().unwrap();
    assert_eq!(changed(&sb, &all), set(&[&days[1], &days[2], &days[3]]));
    sb.ok(&["apply", "--interval", &all, "--only", "changed"]);
    assert_eq!(daily_of(&sb, &days), expected_from_orders(&sb, &days));
}

#[test]
fn an_interval_with_a_lookback_stops_at_a_failed_date_it_asked_for() {
    let (sb, days) = sixteen_days_of_orders();
    // 03-08..03-10 asked, looking back 2 days (03-06, 03-07: never computed).
    let asked = format!("{}..{}", days[7], days[9]);
    sb.fail_inserts("daily_revenue", &days[8], When::Before);
    sb.expect(1, &["apply", "--interval", &asked, "--lookback", "2"]);
    let id = sb.last_run_id();
    let done = |ds: &String, status: &str| (ds.clone(), status.to_string());
    // Without --keep-going a backfill stops at its first failed date, look back or not.
    assert_eq!(
        partitions(&sb, id),
        BTreeMap::from([
            done(&days[5], "success"),
            done(&days[6], "success"),
            done(&days[7], "success"),
            done(&days[8], "failed"),
        ])
    );
    assert!(!sb.daily().contains_key(&days[9]), "03-10 was not computed");

    // A failed date the look back heals does not stop it: the dates asked for go on.
    sb.stop_failing("daily_revenue");
    sb.fail_inserts("daily_revenue", &days[8], When::Before);
    let later = format!("{}..{}", days[10], days[11]);
    sb.expect(1, &["apply", "--interval", &later, "--lookback", "3"]);
    let id = sb.last_run_id();
    assert_eq!(
        partitions(&sb, id),
        BTreeMap::from([
            done(&days[8], "failed"),
            done(&days[9], "success"),
            done(&days[10], "success"),
            done(&days[11], "success"),
        ])
    );
}
