//! What scripts and schedulers rely on: with `--json` one JSON document on one line,
//! errors included; `--by` without `$USER`; the scheduler's context in the audit trail;
//! a day that has not ended refused.

use chrono::{Duration, Utc};
use chrono_tz::Tz;

use crate::support::*;

/// stdout as exactly one JSON document on one line.
fn one_json_line(run: &Run, what: &str) -> serde_json::Value {
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: one line of JSON on stdout\nstdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("{what}: {e}: {}", lines[0]))
}

/// The error document of a failed command, checked against its exit code and stderr.
fn json_error(run: &Run, what: &str) -> serde_json::Value {
    let doc = one_json_line(run, what);
    let error = doc["error"].clone();
    assert_eq!(
        error["exit_code"].as_i64(),
        Some(run.code as i64),
        "{what}: {doc}"
    );
    let message = error["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "{what}: {doc}");
    assert!(
        run.stderr.contains(message.lines().next().unwrap()),
        "{what}: {doc}\n{}",
        run.stderr
    );
    error
}

fn today() -> String {
    Utc::now().date_naive().format("%Y-%m-%d").to_string()
}

#[test]
fn with_json_an_error_is_a_document_and_nothing_is_written() {
    let sb = Sandbox::new();
    let cases: [&[&str]; 5] = [
        &["--json", "apply", "--interval", "2026-02-30"],
        &["--json", "apply", "--bogus"],
        &["apply", "--json", "--interval", "2026-02-10..2026-02-01"],
        &["--json", "runs", "987654"],
        &[
            "--json",
            "seal",
            "--interval",
            "2026-02-01",
            "--reason",
            "sent",
        ],
    ];
    for args in cases {
        let run = sb.expect(2, args);
        let error = json_error(&run, &args.join(" "));
        assert!(error["kind"].is_string(), "{error}");
    }
    let usage = json_error(&sb.expect(2, &["--json", "apply", "--bogus"]), "usage");
    assert_eq!(usage["kind"], "usage");
    assert!(
        usage["message"].as_str().unwrap().contains("--bogus"),
        "{usage}"
    );
    for table in [
        "runs",
        "reservations",
        "run_partitions",
        "seals",
        "daily_revenue",
    ] {
        assert_eq!(
            sb.count(&format!("SELECT count(*) FROM {table}")),
            0,
            "{table}"
        );
    }
    // Without --json an error leaves stdout empty, as before.
    let plain = sb.expect(2, &["apply", "--interval", "2026-02-30"]);
    assert_eq!(plain.stdout, "");
    // `--json` after `--` is a value, not the flag: no document.
    let after = sb.expect(2, &["render", "--date", "2026-02-01", "--", "--json"]);
    assert_eq!(after.stdout, "", "{}", after.stderr);
}

#[test]
fn every_command_prints_one_json_document_on_one_line() {
    let sb = Sandbox::new();
    let orders = Orders::new(12, "2026-03-01", 6, false);
    sb.insert_orders(&orders.rows);
    let interval = orders.interval();
    let commands: Vec<Vec<&str>> = vec![
        vec!["init"],
        vec!["apply", "--interval", &interval],
        vec!["apply", "--interval", &interval, "--dry-run"],
        vec!["status"],
        vec!["status", "--interval", &interval],
        vec!["runs"],
        vec!["runs", "1"],
        vec!["seal", "--interval", "2026-03-01", "--reason", "sent"],
        vec!["corrections"],
        vec!["render", "--date", "2026-03-02"],
        vec!["templates"],
        vec!["templates", "--show", "models/daily_revenue@2"],
        vec![
            "generate",
            "--start",
            "2026-05-01",
            "--days",
            "2",
            "--per-day",
            "3",
        ],
    ];
    for args in commands {
        let mut with_json = vec!["--json"];
        with_json.extend(&args);
        let run = sb.ok(&with_json);
        let doc = one_json_line(&run, &args.join(" "));
        assert!(doc.get("error").is_none(), "{}: {doc}", args.join(" "));
    }
    let reserved = one_json_line(
        &sb.ok(&["--json", "reserve", "--interval", "2026-04-01..2026-04-02"]),
        "reserve",
    );
    let run_id = reserved["run_id"].as_i64().unwrap().to_string();
    let released = one_json_line(&sb.ok(&["--json", "release", &run_id]), "release");
    assert_eq!(released["status"], "released");
    let apply = one_json_line(
        &sb.ok(&["--json", "apply", "--interval", &interval]),
        "apply",
    );
    assert_eq!(apply["exit_code"], 0);
    assert_eq!(apply["dates"].as_array().unwrap().len(), 6);
}

/// The account this test runs as, as the operating system names it.
fn account() -> String {
    let out = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn without_user_the_run_is_by_the_account_and_airflow_context_is_recorded() {
    let sb = Sandbox::new();
    let airflow = [
        ("AIRFLOW_CTX_DAG_ID", "revenue_daily"),
        ("AIRFLOW_CTX_TASK_ID", "apply"),
        (
            "AIRFLOW_CTX_DAG_RUN_ID",
            "scheduled__2026-02-16T00:00:00+00:00",
        ),
        ("AIRFLOW_CTX_TRY_NUMBER", "3"),
    ];
    let mut cmd = sb.cmd(&["apply", "--as-of", "2026-02-16"]);
    cmd.env_remove("USER").envs(airflow);
    assert!(cmd.status().unwrap().success());
    let mut cmd = sb.cmd(&["reserve", "--interval", "2026-01-01..2026-01-02"]);
    cmd.env_remove("USER").envs(airflow);
    assert!(cmd.status().unwrap().success());
    // By hand, with $USER: no scheduler.
    sb.ok(&["apply", "--as-of", "2026-02-17"]);

    let me = account();
    assert_eq!(
        sb.rows(
            "SELECT requested_by, scheduler, scheduler_job, scheduler_task, scheduler_run, \
             scheduler_try FROM runs ORDER BY run_id"
        ),
        vec![
            vec![
                me.as_str(),
                "airflow",
                "revenue_daily",
                "apply",
                airflow[2].1,
                "3"
            ],
            vec![
                me.as_str(),
                "airflow",
                "revenue_daily",
                "apply",
                airflow[2].1,
                "3"
            ],
            vec!["tester", "NULL", "NULL", "NULL", "NULL", "NULL"],
        ]
    );
    let shown = sb.ok(&["runs", "1"]).stdout;
    assert!(
        shown.contains(
            "started by airflow: dag revenue_daily, task apply, run \
             scheduled__2026-02-16T00:00:00+00:00, try 3"
        ),
        "{shown}"
    );
    let doc = one_json_line(&sb.ok(&["--json", "runs", "1"]), "runs 1");
    assert_eq!(doc["run"]["scheduler"]["job"], "revenue_daily");
    assert_eq!(doc["run"]["scheduler"]["attempt"], 3);
    let by_hand = one_json_line(&sb.ok(&["--json", "runs", "3"]), "runs 3");
    assert!(by_hand["run"]["scheduler"].is_null(), "{by_hand}");
}

/// `sqlrun ARGS` as Airflow starts it (its context variables set), with `code` expected.
fn from_airflow(sb: &Sandbox, code: i32, args: &[&str]) -> Run {
    let out = sb
        .cmd(args)
        .env("AIRFLOW_CTX_DAG_ID", "sqlrun_daily")
        .env(
            "AIRFLOW_CTX_DAG_RUN_ID",
            "scheduled__2026-11-30T00:00:00+00:00",
        )
        .output()
        .unwrap();
    let run = Run::from(out);
    assert_eq!(
        run.code,
        code,
        "`sqlrun {}` from Airflow: {run:?}",
        args.join(" ")
    );
    run
}

#[test]
fn a_day_that_has_not_ended_is_refused_from_a_scheduler_and_warned_by_hand() {
    let sb = Sandbox::new();
    let today = today();
    let tomorrow = (Utc::now().date_naive() + Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    let yesterday = (Utc::now().date_naive() - Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    let through_today = format!("{yesterday}..{today}");
    for args in [
        vec!["apply", "--interval", today.as_str()],
        vec!["apply", "--interval", through_today.as_str()],
        vec!["apply", "--as-of", tomorrow.as_str()],
        vec!["apply", "--interval", today.as_str(), "--dry-run"],
    ] {
        let run = from_airflow(&sb, 2, &args);
        contains_all(
            &run.stderr,
            &[
                &format!("{today} has not ended yet"),
                "00:00 UTC",
                "partial day",
                "macros.ds_add(ds, -1)",
                "`--as-of {{ ds }}`",
                "--allow-partial-day",
            ],
        );
    }
    let future = from_airflow(&sb, 2, &["apply", "--interval", "2099-01-01..2099-01-02"]);
    contains_all(
        &future.stderr,
        &[
            "2099-01-01 is in the future",
            &format!("Compute dates up to {yesterday}"),
        ],
    );
    for table in ["runs", "reservations", "run_partitions", "daily_revenue"] {
        assert_eq!(
            sb.count(&format!("SELECT count(*) FROM {table}")),
            0,
            "{table}"
        );
    }
    // A reserved run that reaches into today is refused when a scheduler carries it out,
    // and stays reserved.
    let run_id = sb.ok(&["reserve", "--interval", &through_today]).stdout;
    let run_id = run_id.trim();
    let refused = from_airflow(&sb, 2, &["apply", "--run", run_id]);
    assert!(
        refused.stderr.contains("has not ended yet"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        sb.rows(&format!("SELECT status FROM runs WHERE run_id = {run_id}")),
        vec![vec!["reserved"]]
    );
    sb.ok(&["release", run_id]);
    // Asked for: computed like any date, and nothing said.
    let asked = from_airflow(
        &sb,
        0,
        &["apply", "--interval", &through_today, "--allow-partial-day"],
    );
    assert!(!asked.stderr.contains("warning"), "{}", asked.stderr);
    assert_eq!(
        sb.rows("SELECT ds FROM daily_revenue ORDER BY ds"),
        vec![vec![yesterday.as_str()], vec![today.as_str()]]
    );
    // By hand, a backfill that reaches into today is a request: computed, with a warning.
    let by_hand = sb.ok(&["apply", "--interval", &through_today]);
    contains_all(
        &by_hand.stderr,
        &[
            &format!("warning: {today} has not ended yet"),
            "shows as changed when more arrive",
        ],
    );
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 3);
    // The regular run (yesterday) needs no flag and says nothing of it.
    let regular = from_airflow(&sb, 0, &["apply"]);
    assert!(!regular.stderr.contains("warning"), "{}", regular.stderr);
}

#[test]
fn a_project_time_zone_decides_yesterday_and_when_a_day_ends() {
    let sb = Sandbox::new();
    // UTC+14: its yesterday is UTC's today or yesterday, depending on the hour.
    let zone: Tz = "Pacific/Kiritimati".parse().unwrap();
    std::fs::write(
        sb.path().join("sqlrun.toml"),
        "timezone = \"Pacific/Kiritimati\"\n",
    )
    .unwrap();
    let local_yesterday = (Utc::now().with_timezone(&zone).date_naive() - Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    sb.ok(&["apply"]);
    assert_eq!(
        sb.rows("SELECT interval_start, interval_end FROM runs"),
        vec![vec![local_yesterday.as_str(), local_yesterday.as_str()]]
    );
    // The environment beats the file; a bad name is refused before anything is written.
    let mut cmd = sb.cmd(&["apply", "--interval", &today()]);
    cmd.env("SQLRUN_TIMEZONE", "Mars/Olympus");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("SQLRUN_TIMEZONE is `Mars/Olympus`, not a time zone name"),
        "{stderr}"
    );
    std::fs::write(sb.path().join("sqlrun.toml"), "timezone = \"Seoul\"\n").unwrap();
    let bad = sb.expect(2, &["apply", "--interval", "2026-02-01"]);
    contains_all(
        &bad.stderr,
        &["sqlrun.toml", "`timezone` is `Seoul`", "Asia/Seoul"],
    );
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 1);
}

#[test]
fn help_teaches_and_writes_nothing() {
    let sb = Sandbox::empty();
    let help = sb.ok(&["help", "--help"]).stdout;
    assert!(help.contains("Usage: sqlrun help"), "{help}");
    for command in ["apply", "reserve", "seal", "status"] {
        let long = sb.ok(&[command, "--help"]).stdout;
        assert!(
            long.contains("Examples:\n  sqlrun") || long.contains("Examples:\n  run=$(sqlrun"),
            "{command}: {long}"
        );
        assert_eq!(
            sb.ok(&["help", command]).stdout,
            long,
            "`help {command}` is `{command} --help`"
        );
        // Global flags are grouped apart from the command's own.
        assert!(
            long.contains("Global options:\n      --db <PATH|URL>"),
            "{long}"
        );
    }
    // With --json, help and the version are documents too.
    let doc = one_json_line(
        &sb.ok(&["--json", "apply", "--help"]),
        "--json apply --help",
    );
    assert!(doc["help"].as_str().unwrap().contains("Examples:"), "{doc}");
    let doc = one_json_line(&sb.ok(&["--json", "help", "seal"]), "--json help seal");
    assert!(
        doc["help"]
            .as_str()
            .unwrap()
            .starts_with("Mark dates as sent"),
        "{doc}"
    );
    let doc = one_json_line(&sb.ok(&["--json", "--version"]), "--json --version");
    assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
    let unknown = sb.expect(2, &["help", "nope"]);
    assert!(
        unknown
            .stderr
            .contains("no command `nope`; the commands are: new, init, apply"),
        "{}",
        unknown.stderr
    );
    assert!(!sb.db.exists(), "help opened the database");
}
