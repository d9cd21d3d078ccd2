//! What a new user meets in the first hour: a run whose sources have no rows in its
//! interval says so; months and years are intervals; a CSV split by semicolons gets the
//! hint that load reads commas; `demo --keep` leaves a project to look at. (The wrong
//! folder, which needs no database of the sandbox, is in project.rs.)

use crate::support::*;

fn row(fields: &[&str]) -> Vec<String> {
    fields.iter().map(|f| f.to_string()).collect()
}

#[test]
fn a_run_over_dates_without_source_rows_says_so() {
    let sb = Sandbox::new();
    let run = sb.ok(&["apply", "--interval", "2026-11-01..2026-11-03"]);
    contains_all(
        &run.stderr,
        &[
            "orders (by order_date) has no rows dated 2026-11-01..2026-11-03",
            "computed from no source rows",
        ],
    );
    // It says so and computes them all the same: each date a row of zeros.
    let daily = sb.daily();
    assert_eq!(daily.len(), 3, "{daily:?}");
    assert!(daily.values().all(|v| *v == (0, 0)), "{daily:?}");

    // One order in the interval, and it is quiet.
    let mut orders = Orders::new(3, "2026-11-02", 1, false);
    orders.add("one", "2026-11-02", 500);
    sb.insert_orders(&orders.rows);
    let run = sb.ok(&["apply", "--interval", "2026-11-01..2026-11-03"]);
    assert!(!run.stderr.contains("no rows dated"), "{}", run.stderr);
    assert_eq!(sb.daily()["2026-11-02"], orders.expected()["2026-11-02"]);
}

#[test]
fn months_and_years_are_intervals() {
    let sb = Sandbox::new();
    let orders = Orders::new(5, "2028-02-01", 29, false);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", "2028-02"]);
    assert_eq!(
        sb.rows("SELECT CAST(interval_start AS TEXT), CAST(interval_end AS TEXT) FROM runs"),
        [row(&["2028-02-01", "2028-02-29"])]
    );
    assert_eq!(sb.daily(), orders.expected());
    let list = sb.ok(&["status", "--list", "--interval", "2028"]);
    assert_eq!(
        list.stdout.lines().count(),
        1 + 366,
        "a line per day of 2028 and a header"
    );
    sb.ok(&["reserve", "--interval", "2028-03..2028-04", "--by", "bob"]);
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations"),
        31 + 30,
        "March and April"
    );

    // A month that is not on the calendar: exit 2, nothing written.
    let before = snapshot(&sb);
    let run = sb.expect(2, &["apply", "--interval", "2028-13"]);
    assert!(
        run.stderr.contains("not a period on the calendar"),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot(&sb), before);
}

#[test]
fn a_csv_split_by_semicolons_gets_the_hint() {
    let sb = Sandbox::new();
    let path = sb.path().join("semi.csv");
    std::fs::write(&path, "order_id;order_date;amount\na;2026-02-01;100\n").unwrap();
    let run = sb.expect(2, &["load", "orders", &path.display().to_string()]);
    contains_all(
        &run.stderr,
        &[
            "orders has no column `order_id;order_date;amount`",
            "separated by semicolons",
            "comma-separated",
        ],
    );
    assert_eq!(sb.count("SELECT count(*) FROM orders"), 0);
}

#[test]
fn demo_keep_leaves_a_project_to_look_at() {
    let sb = Sandbox::empty();
    let dir = sb.path().join("story");
    let dir_arg = dir.display().to_string();
    if is_postgres() {
        // The PostgreSQL demo runs in a scratch schema; keeping it in a folder is refused.
        let run = sb.expect(2, &["demo", "--keep", &dir_arg]);
        assert!(run.stderr.contains("leave --db out"), "{}", run.stderr);
        assert!(!dir.exists());
        return;
    }
    let run = sb.ok(&["demo", "--keep", &dir_arg]);
    assert!(
        run.stdout
            .contains(&format!("cd {dir_arg} && sqlrun status")),
        "{}",
        run.stdout
    );
    assert!(dir.join("sqlrun.toml").is_file() && dir.join("templates/models").is_dir());
    let conn = rusqlite::Connection::open(dir.join("sqlrun.db")).unwrap();
    let sent: i64 = conn
        .query_row(
            "SELECT revenue FROM daily_revenue_sent WHERE ds = '2026-02-03' AND seal_id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sent, 4_150_000, "the first report of the story");
    // The folder is a project: a command there reads it without --db.
    let status = std::process::Command::new(BIN)
        .args(["status", "--list", "--interval", "2026-02-03"])
        .current_dir(&dir)
        .env_remove("SQLRUN_DB")
        .env_remove("SQLRUN_TEMPLATES")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.status.success() && text.contains("2026-02-03"),
        "{text}"
    );
    assert!(
        !sb.path().join("sqlrun.db").exists(),
        "nothing in the current folder"
    );
    // A folder that holds something is not written into.
    let again = sb.expect(2, &["demo", "--keep", &dir_arg]);
    assert!(again.stderr.contains("is not empty"), "{}", again.stderr);
}
