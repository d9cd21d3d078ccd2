//! `apply --stop-within SECONDS` (env `SQLRUN_STOP_WITHIN`): after a first SIGTERM the
//! date in progress may go on that long; then it is rolled back, as a second signal does,
//! and the run ends whole: recorded `interrupted`, its reservations released, exit 143.
//! A scheduler that kills after a grace period (Airflow: SIGKILL 5 s after SIGTERM) sets
//! the bound below it. Each test holds the run inside its first date's transaction
//! (`SQLRUN_STOP_AT=in-date`), sends SIGTERM there, then lets it go on.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

const START: &str = "2026-01-01";

fn kill(child: &Child, sig: libc::c_int) {
    // SAFETY: kill has no preconditions; the pid is our child's.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Three days of orders, the first computed; then `apply` of the other two with `args`
/// and `env`, a SIGTERM inside the first of them, with each date's insert costing
/// `slow_rows` (0: not slowed). Returns the run, how long it took after the SIGTERM, the
/// sandbox and the rows before the run.
fn sigterm_in_date(
    seed: u64,
    args: &[&str],
    env: &[(&str, &str)],
    slow_rows: u32,
) -> (Run, Duration, Sandbox, Vec<Vec<String>>) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, START, 3, false);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", START]);
    if slow_rows > 0 {
        sb.slow_inserts("daily_revenue", slow_rows);
    }
    let before = sb.rows("SELECT ds, revenue, order_count, run_id FROM daily_revenue ORDER BY ds");
    let interval = format!("{}..{}", day(START, 1), day(START, 2));
    let mut full = vec!["apply", "--interval", &interval];
    full.extend_from_slice(args);
    let mut cmd = sb.cmd(&full);
    cmd.env("SQLRUN_STOP_AT", "in-date")
        .env_remove("SQLRUN_STOP_WITHIN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn sqlrun");
    if !stopped_itself(&mut child) {
        let run = Run::from(child.wait_with_output().unwrap());
        panic!("sqlrun did not stop itself at SQLRUN_STOP_AT=in-date: {run:?}");
    }
    // Pending while it is stopped, handled as soon as it goes on: inside the date.
    kill(&child, libc::SIGTERM);
    let sent = Instant::now();
    kill(&child, libc::SIGCONT);
    let run = Run::from(child.wait_with_output().unwrap());
    (run, sent.elapsed(), sb, before)
}

/// The run was stopped by the bound: the date in progress rolled back, nothing of it
/// written, the run `interrupted`, its dates released, exit 143; well before the date
/// could have ended.
fn assert_rolled_back(run: &Run, took: Duration, sb: &Sandbox, before: &[Vec<String>]) {
    assert_eq!(run.code, 143, "exit code\nstderr: {}", run.stderr);
    assert!(
        took < Duration::from_secs(30),
        "stopped {took:?} after SIGTERM; the bound is 1 s (the date alone takes minutes)"
    );
    let run_id = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!("SELECT status FROM runs WHERE run_id = {run_id}")),
        vec![vec!["interrupted".to_string()]],
        "stderr: {}",
        run.stderr
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {run_id} AND status <> 'skipped'"
        )),
        0,
        "no date of the run recorded as computed or failed"
    );
    assert_eq!(
        sb.rows("SELECT ds, revenue, order_count, run_id FROM daily_revenue ORDER BY ds"),
        before,
        "the rows are as before the date"
    );
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0, "released");
}

#[test]
fn stop_within_rolls_back_a_date_still_running_when_the_bound_elapses() {
    // 10^9 rows of a recursive count on SQLite, 300 s of sleep on PostgreSQL: only the
    // bound can end this date in time.
    let (run, took, sb, before) = sigterm_in_date(41, &["--stop-within", "1"], &[], 1_000_000_000);
    assert_rolled_back(&run, took, &sb, &before);
}

#[test]
fn sqlrun_stop_within_in_the_environment_is_the_same_bound() {
    let (run, took, sb, before) =
        sigterm_in_date(42, &[], &[("SQLRUN_STOP_WITHIN", "1")], 1_000_000_000);
    assert_rolled_back(&run, took, &sb, &before);
}

#[test]
fn a_date_that_ends_within_the_bound_is_kept_and_the_run_stops_after_it() {
    let (run, _, sb, before) = sigterm_in_date(43, &["--stop-within", "60"], &[], 0);
    assert_eq!(run.code, 143, "exit code\nstderr: {}", run.stderr);
    let run_id = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT ds, status FROM run_partitions WHERE run_id = {run_id} ORDER BY ds"
        )),
        vec![vec![day(START, 1), "success".to_string()]],
        "the date in progress committed, the next not begun"
    );
    assert_eq!(
        sb.rows(&format!("SELECT status FROM runs WHERE run_id = {run_id}")),
        vec![vec!["interrupted".to_string()]]
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue"),
        before.len() as i64 + 1
    );
    assert_eq!(sb.count("SELECT count(*) FROM reservations"), 0, "released");
}
