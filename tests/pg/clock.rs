//! Whose clock says what day it is (issue 38): on PostgreSQL the server's. A runner whose
//! clock is a day, or thirty years, ahead (libfaketime's `faketime`) computes the server's
//! yesterday, never the server's unfinished today nor a day of its own future, and is
//! warned once with both times; a runner whose clock is right is told nothing. The
//! assertions read the rows: which run computed which dates, and which partitions exist.

use std::process::Command;

use crate::faults::wrapped;
use crate::support::*;

/// `cmd` under `faketime -f OFFSET` (`+1d`, `+30y`): its clock moved, the server's not.
fn ahead(offset: &str, cmd: &Command) -> Run {
    let found = Command::new("faketime").arg("--version").output().is_ok();
    assert!(
        found,
        "this test needs libfaketime's `faketime` command: apt-get install faketime (.ci/run does)"
    );
    let mut faketime = Command::new("faketime");
    faketime.args(["-f", offset]);
    Run::from(wrapped(faketime, cmd).output().expect("faketime sqlrun"))
}

/// The server's today (UTC), away from its midnight: within two minutes of it, the test
/// waits for the new day, so that "today" is the same for all its runs.
fn server_today(sb: &Sandbox) -> String {
    let left = sb.count(
        "SELECT CAST(ceil(extract(epoch FROM date_trunc('day', clock_timestamp() AT TIME ZONE 'UTC') \
         + interval '1 day' - clock_timestamp() AT TIME ZONE 'UTC')) AS bigint)",
    );
    if left < 120 {
        std::thread::sleep(std::time::Duration::from_secs(left as u64 + 2));
    }
    let today = sb.rows("SELECT CAST(CAST(clock_timestamp() AT TIME ZONE 'UTC' AS date) AS text)");
    today[0][0].clone()
}

/// The lines of `stderr` that warn about this runner's clock.
fn skew_warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("runner's clock"))
        .collect()
}

/// One order on each of `dates`, 1000 won more on each.
fn orders_on(sb: &Sandbox, dates: &[&str]) {
    for (i, ds) in dates.iter().enumerate() {
        sb.exec(&format!(
            "INSERT INTO orders (order_id, order_date, amount) VALUES ('o{i}', '{ds}', {})",
            1000 * (i + 1)
        ));
    }
}

fn runs_by(sb: &Sandbox, by: &str) -> Vec<Vec<String>> {
    sb.rows(&format!(
        "SELECT kind, CAST(interval_start AS text), CAST(interval_end AS text), status \
         FROM runs WHERE requested_by = '{by}' ORDER BY run_id"
    ))
}

fn dates_of(sb: &Sandbox, by: &str) -> Vec<Vec<String>> {
    sb.rows(&format!(
        "SELECT CAST(p.ds AS text), p.status FROM run_partitions p JOIN runs r USING (run_id) \
         WHERE r.requested_by = '{by}' ORDER BY p.ds"
    ))
}

#[test]
fn a_runner_a_day_ahead_computes_the_servers_yesterday_and_is_warned() {
    let sb = Sandbox::new();
    let today = server_today(&sb);
    let (yesterday, tomorrow) = (day(&today, -1), day(&today, 1));
    orders_on(&sb, &[&yesterday, &today]);

    // The dry run says what the run does: the server's yesterday.
    let plan = ahead("+1d", &sb.cmd(&["apply", "--dry-run"]));
    assert_eq!(plan.code, 0, "{plan:?}");
    assert!(
        plan.stdout
            .starts_with(&format!("dry run of {yesterday}; nothing is written")),
        "{}",
        plan.stdout
    );

    let run = ahead("+1d", &sb.cmd(&["apply", "--by", "ahead"]));
    assert_eq!(run.code, 0, "{run:?}");
    let warned = skew_warnings(&run.stderr);
    assert_eq!(warned.len(), 1, "one warning: {}", run.stderr);
    contains_all(
        warned[0],
        &[
            "warning: this runner's clock is 24 h 0 min ahead of the database server's",
            &format!("(runner {tomorrow} "),
            &format!("server {today} "),
            "UTC",
            "Sync this runner's clock (NTP: chrony",
        ],
    );
    assert_eq!(
        runs_by(&sb, "ahead"),
        [["regular", yesterday.as_str(), yesterday.as_str(), "success"]]
    );
    assert_eq!(dates_of(&sb, "ahead"), [[yesterday.as_str(), "success"]]);
    // The server's today, which has not ended, is not recorded as done.
    assert_eq!(
        sb.rows("SELECT CAST(ds AS text), revenue, order_count FROM daily_revenue ORDER BY ds"),
        [[yesterday.as_str(), "1000", "1"]]
    );

    // Asked for by a scheduler, the server's today is refused (the runner's clock says it
    // ended): exit 2, nothing written.
    let from_airflow = ahead(
        "+1d",
        sb.cmd(&["apply", "--interval", &today, "--by", "airflow"])
            .env("AIRFLOW_CTX_DAG_ID", "sqlrun_daily"),
    );
    assert_eq!(from_airflow.code, 2, "{from_airflow:?}");
    contains_all(
        &from_airflow.stderr,
        &[&format!("{today} has not ended yet"), "00:00 UTC"],
    );
    assert_eq!(runs_by(&sb, "airflow").len(), 0);
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0);
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM daily_revenue WHERE ds >= '{today}'"
        )),
        0
    );
}

#[test]
fn a_runner_thirty_years_ahead_computes_nothing_in_the_future() {
    let sb = Sandbox::new();
    let today = server_today(&sb);
    let yesterday = day(&today, -1);
    orders_on(&sb, &[&day(&today, -3), &yesterday, &today]);

    // The regular run with a week's look back, as the fault campaign ran it.
    let run = ahead(
        "+30y",
        &sb.cmd(&["apply", "--lookback", "7", "--by", "far"]),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let warned = skew_warnings(&run.stderr);
    assert_eq!(warned.len(), 1, "one warning: {}", run.stderr);
    contains_all(
        warned[0],
        &[
            " days ",
            "ahead of the database server's",
            &format!("server {today} "),
        ],
    );
    assert_eq!(
        runs_by(&sb, "far"),
        [[
            "regular",
            day(&today, -8).as_str(),
            yesterday.as_str(),
            "success"
        ]]
    );
    let computed = dates_of(&sb, "far");
    let want: Vec<[String; 2]> = (1..=8)
        .rev()
        .map(|n| [day(&today, -n), "success".to_string()])
        .collect();
    assert_eq!(computed, want);
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM daily_revenue WHERE ds >= '{today}'"
        )),
        0,
        "nothing of the server's today or later"
    );
    assert_eq!(
        sb.rows(&format!(
            "SELECT revenue FROM daily_revenue WHERE ds IN ('{}', '{yesterday}') ORDER BY ds",
            day(&today, -3)
        )),
        [["1000"], ["2000"]]
    );
}

#[test]
fn a_runner_whose_clock_is_right_is_not_warned() {
    let sb = Sandbox::new();
    let today = server_today(&sb);
    let yesterday = day(&today, -1);
    let run = sb.ok(&["apply", "--by", "right"]);
    assert_eq!(
        skew_warnings(&run.stderr),
        Vec::<&str>::new(),
        "{}",
        run.stderr
    );
    assert_eq!(dates_of(&sb, "right"), [[yesterday.as_str(), "success"]]);
    // `--as-of` given still wins over any clock.
    let as_of = ahead(
        "+1d",
        &sb.cmd(&["apply", "--as-of", &yesterday, "--by", "asof"]),
    );
    assert_eq!(as_of.code, 0, "{as_of:?}");
    assert_eq!(
        dates_of(&sb, "asof"),
        [[day(&today, -2).as_str(), "success"]]
    );
}
