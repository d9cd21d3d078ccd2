//! History: each replace keeps the rows it took out in `<table>_history` (with the run
//! that built them and the run that replaced them) and says so in `replaced_partitions`;
//! the project's `[history] keep` prunes both in the writing transactions.

use std::collections::BTreeMap;

use crate::support::*;

const ALL: &str = "2026-03-01..2026-03-03";

/// Three dates of orders, computed once (run 1 after `init`'s none).
fn built() -> (Sandbox, Orders) {
    let sb = Sandbox::new();
    let orders = Orders::new(41, "2026-03-01", 3, false);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", ALL]);
    (sb, orders)
}

/// `(ds, revenue, order_count, run_id, replaced_by)` of daily_revenue_history, in order.
fn history(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows(
        "SELECT CAST(ds AS TEXT), revenue, order_count, run_id, replaced_by \
         FROM daily_revenue_history ORDER BY replaced_by, ds",
    )
}

/// `(replaced_by, ds, run_id, row_count)` of replaced_partitions, in order.
fn replaced(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows(
        "SELECT replaced_by, CAST(ds AS TEXT), coalesce(CAST(run_id AS TEXT), '-'), row_count \
         FROM replaced_partitions WHERE model = 'models/daily_revenue' \
         ORDER BY replaced_by, ds",
    )
}

fn table(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows("SELECT CAST(ds AS TEXT), revenue, order_count, run_id FROM daily_revenue ORDER BY ds")
}

#[test]
fn each_replace_keeps_the_rows_it_replaced_with_both_runs() {
    let (sb, mut orders) = built();
    let first = sb.last_run_id();
    // The first build replaced nothing: it says so, with no rows kept.
    assert_eq!(history(&sb), Vec::<Vec<String>>::new());
    let dates = dates("2026-03-01", "2026-03-03");
    let want: Vec<Vec<String>> = dates
        .iter()
        .map(|d| vec![first.to_string(), d.clone(), "-".into(), "0".into()])
        .collect();
    assert_eq!(replaced(&sb), want);

    // A late order on the 2nd, then the interval again: each date's old row is kept.
    let before = table(&sb);
    let late = orders.add("late-h1", "2026-03-02", 123_400);
    sb.insert_orders(&[late]);
    sb.ok(&["apply", "--interval", ALL]);
    let second = sb.last_run_id();
    let kept: Vec<Vec<String>> = before
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.push(second.to_string());
            r
        })
        .collect();
    assert_eq!(history(&sb), kept, "the rows run {second} replaced");
    let mut want = want;
    want.extend(
        dates
            .iter()
            .map(|d| vec![second.to_string(), d.clone(), first.to_string(), "1".into()]),
    );
    assert_eq!(replaced(&sb), want);
    // What is in the table now is the recomputation, and the 2nd moved by the late order.
    let expected = orders.expected();
    let now: BTreeMap<String, (i64, i64)> = sb.daily();
    assert_eq!(now, expected);
    let old_2nd: i64 = before[1][1].parse().unwrap();
    assert_eq!(now["2026-03-02"].0, old_2nd + 123_400);

    // "What did the 2nd say before run R" is a query.
    let said = sb.rows(&format!(
        "SELECT revenue FROM daily_revenue_history \
         WHERE ds = '2026-03-02' AND replaced_by = {second}"
    ));
    assert_eq!(said, vec![vec![old_2nd.to_string()]]);
}

#[test]
fn a_failed_date_keeps_no_history_of_its_own() {
    let (sb, _) = built();
    sb.fail_inserts("daily_revenue", "2026-03-02", When::Before);
    sb.expect(1, &["apply", "--interval", ALL]);
    let failed = sb.last_run_id();
    sb.stop_failing("daily_revenue");
    // The 1st was replaced (and kept); the 2nd rolled back with its history; the 3rd was
    // never reached.
    let by_failed: Vec<String> = history(&sb)
        .into_iter()
        .filter(|r| r[4] == failed.to_string())
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(by_failed, vec!["2026-03-01".to_string()]);
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM replaced_partitions WHERE replaced_by = {failed}"
        )),
        1
    );
}

#[test]
fn retention_by_versions_keeps_the_newest_ones_of_each_partition() {
    let (sb, _) = built();
    std::fs::write(
        sb.path().join("sqlrun.toml"),
        "[history]\nkeep = \"2 versions\"\n",
    )
    .unwrap();
    for _ in 0..4 {
        sb.ok(&["apply", "--interval", ALL]);
    }
    let last = sb.last_run_id();
    // Five replaces of each date; the two newest are kept, in both tables.
    let runs: Vec<i64> = sb
        .rows(
            "SELECT DISTINCT replaced_by FROM replaced_partitions \
             WHERE model = 'models/daily_revenue' ORDER BY replaced_by",
        )
        .into_iter()
        .map(|r| r[0].parse().unwrap())
        .collect();
    assert_eq!(runs, vec![last - 1, last]);
    let kept: Vec<i64> = sb
        .rows("SELECT DISTINCT replaced_by FROM daily_revenue_history ORDER BY replaced_by")
        .into_iter()
        .map(|r| r[0].parse().unwrap())
        .collect();
    assert_eq!(kept, vec![last - 1, last]);
    assert_eq!(sb.count("SELECT count(*) FROM daily_revenue_history"), 6);
}

#[test]
fn retention_by_days_prunes_what_is_older() {
    let (sb, _) = built();
    sb.ok(&["apply", "--interval", ALL]);
    let second = sb.last_run_id();
    assert_eq!(sb.count("SELECT count(*) FROM daily_revenue_history"), 3);
    // Age the kept versions of the 1st by two days (the database's clock decides).
    let two_days_ago = match BACKEND {
        Backend::Sqlite => "datetime('now', '-2 days')",
        Backend::Postgres => "now() - interval '2 days'",
    };
    for table in ["daily_revenue_history", "replaced_partitions"] {
        sb.exec(&format!(
            "UPDATE {table} SET replaced_at = {two_days_ago} WHERE ds = '2026-03-01'"
        ));
    }
    std::fs::write(
        sb.path().join("sqlrun.toml"),
        "[history]\nkeep = \"1 day\"\n",
    )
    .unwrap();
    sb.ok(&["apply", "--interval", "2026-03-01..2026-03-02"]);
    let third = sb.last_run_id();
    // The 1st's old version went (with its note); the 2nd's is a day younger than a day.
    let kept = history(&sb)
        .into_iter()
        .map(|r| (r[0].clone(), r[4].clone()))
        .collect::<Vec<_>>();
    assert_eq!(
        kept,
        vec![
            ("2026-03-02".to_string(), second.to_string()),
            ("2026-03-03".to_string(), second.to_string()),
            ("2026-03-01".to_string(), third.to_string()),
            ("2026-03-02".to_string(), third.to_string()),
        ]
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM replaced_partitions \
             WHERE ds = '2026-03-01' AND replaced_by < {third}"
        )),
        0
    );
}

#[test]
fn a_retention_that_does_not_read_is_refused_with_what_would() {
    let (sb, _) = built();
    let before = snapshot(&sb);
    for bad in ["\"3 weeks\"", "\"0 days\"", "30", "\"forever\""] {
        std::fs::write(
            sb.path().join("sqlrun.toml"),
            format!("[history]\nkeep = {bad}\n"),
        )
        .unwrap();
        let out = sb.expect(2, &["apply", "--interval", ALL]);
        contains_all(&out.stderr, &["history.keep", "30 days", "versions"]);
    }
    assert_eq!(snapshot(&sb), before, "nothing written");
}

#[test]
fn history_is_sqlrun_s_own_and_not_loaded() {
    let (sb, _) = built();
    let csv = sb.path().join("h.csv");
    std::fs::write(
        &csv,
        "ds,revenue,order_count,run_id,replaced_by,replaced_at\n2026-03-01,1,1,1,1,x\n",
    )
    .unwrap();
    let out = sb.expect(2, &["load", "daily_revenue_history", csv.to_str().unwrap()]);
    contains_all(&out.stderr, &["daily_revenue_history", "replace"]);
}

fn dates(start: &str, end: &str) -> Vec<String> {
    let mut out = vec![start.to_string()];
    while out.last().unwrap() != end {
        out.push(day(out.last().unwrap(), 1));
    }
    out
}
