//! What a server does to sqlrun's sessions, and what sqlrun says about it (PostgreSQL
//! only: SQLite has no server): a server that ends idle sessions (`idle_session_timeout`,
//! as managed services set it), a session the server ends before anything was written,
//! and a server that cannot be reached at all. The assertions read the rows: what was
//! computed, that nothing was written where the message says so.

use std::process::Command;
use std::time::Duration;

use crate::faults::{app_name, with_app};
use crate::procs::*;
use crate::support::*;

const MINUTE: Duration = Duration::from_secs(60);

/// A login role of this sandbox whose sessions the server ends after 1 s idle (`ALTER
/// ROLE ... SET`, as a managed service's defaults would), and the URL that logs in as it.
fn idle_role(sb: &Sandbox, tag: &str) -> String {
    let role = app_name(sb, tag);
    sb.exec(&format!(
        "CREATE ROLE \"{role}\" LOGIN SUPERUSER; \
         ALTER ROLE \"{role}\" SET idle_session_timeout = '1s';"
    ));
    let (url, _) = sb.url();
    assert!(
        url.contains("user=postgres"),
        "the test URL names its user: {url}"
    );
    url.replace("user=postgres", &format!("user={role}"))
}

/// Every date a worker of `--jobs` computes takes 2 s, and the run's own session (the one
/// that holds the run's lock, hold_run.sql) computes its dates at once: it then waits idle
/// for the others, well past a 1 s idle-session timeout.
fn slow_workers(sb: &Sandbox) {
    sb.exec(
        "CREATE FUNCTION slow_unless_own() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN \
           IF NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
                          AND pid = pg_backend_pid() AND mode = 'ExclusiveLock' AND objid <> 0) THEN \
             PERFORM pg_sleep(2); \
           END IF; \
           RETURN NEW; \
         END $$; \
         CREATE TRIGGER slow_unless_own AFTER INSERT ON daily_revenue \
           FOR EACH ROW EXECUTE FUNCTION slow_unless_own();",
    );
}

fn run(what: &str, cmd: Command, code: i32) -> Run {
    Proc::spawn(what, cmd).expect(code, MINUTE)
}

fn statuses_of_last_run(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows(
        "SELECT status, count(*) FROM run_partitions \
         WHERE run_id = (SELECT max(run_id) FROM runs) GROUP BY status ORDER BY status",
    )
}

#[test]
fn a_server_that_ends_idle_sessions_does_not_end_a_run() {
    let sb = Sandbox::new();
    let orders = Orders::new(3801, "2025-01-14", 9, false);
    sb.insert_orders(&orders.rows);
    slow_workers(&sb);
    let url = idle_role(&sb, "idle");
    let (_, schema) = sb.url();
    let interval = orders.interval();
    let args = ["apply", "--interval", &interval, "--jobs", "3"];

    let done = run(
        "apply --jobs 3 as a role with idle_session_timeout = 1s",
        cmd_with_url(&url, &schema, &args),
        0,
    );
    assert!(!done.stderr.contains("idle"), "{}", done.stderr);
    assert_eq!(sb.daily(), orders.expected(), "every date right");
    assert_eq!(statuses_of_last_run(&sb), [["success", "9"]]);
}

#[test]
fn a_session_the_server_ends_says_why_and_a_rerun_finishes() {
    let sb = Sandbox::new();
    let orders = Orders::new(3802, "2025-02-03", 9, false);
    sb.insert_orders(&orders.rows);
    slow_workers(&sb);
    // The URL's options win over sqlrun's defaults: here they keep the server's bound.
    let (url, schema) = sb.url();
    let bounded = format!("{url}&options=-c%20idle_session_timeout%3D1s");
    let interval = orders.interval();
    let args = ["apply", "--interval", &interval, "--jobs", "3"];

    let ended = run(
        "apply --jobs 3 with idle_session_timeout = 1s in the URL's options",
        cmd_with_url(&bounded, &schema, &args),
        1,
    );
    contains_all(
        &ended.stderr,
        &["terminating connection due to idle-session timeout"],
    );
    let daily = sb.daily();
    for (ds, numbers) in &daily {
        assert_eq!(
            Some(numbers),
            orders.expected().get(ds),
            "{ds} as committed"
        );
    }
    assert!(daily.len() < 9, "the run stopped short: {daily:?}");

    let rerun = ["apply", "--interval", &interval, "--only", "missing"];
    run("the rerun", cmd_with_url(&url, &schema, &rerun), 0);
    assert_eq!(
        sb.daily(),
        orders.expected(),
        "every date right after the rerun"
    );
}

#[test]
fn a_session_ended_before_any_date_is_retried_and_wrote_nothing() {
    let sb = Sandbox::new();
    let orders = Orders::new(3803, "2025-03-03", 3, false);
    sb.insert_orders(&orders.rows);
    let (url, schema) = sb.url();
    let app = app_name(&sb, "ended");
    let runs_before = sb.count("SELECT count(*) FROM runs");

    // The run waits for a lock the test holds, then the server ends its session.
    let mut holder = sb.pg_client();
    let mut tx = holder.transaction().expect("a transaction");
    tx.batch_execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
        .expect("lock runs");
    let interval = orders.interval();
    let mut victim = Proc::spawn(
        "apply that waits for a lock",
        cmd_with_url(
            &with_app(&url, &app),
            &schema,
            &["--json", "apply", "--interval", &interval],
        ),
    );
    let waiting = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}' \
         AND wait_event_type = 'Lock'"
    );
    wait_until("sqlrun waits for the lock", MINUTE, || {
        victim.assert_running("it waits for the lock");
        sb.count(&waiting) == 1
    });
    sb.exec(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{app}'"
    ));
    let ended = victim.expect(1, MINUTE);
    tx.rollback().expect("let go of the lock");

    contains_all(
        &ended.stderr,
        &[
            "lost the connection to the database",
            "terminating connection due to administrator command",
            "no date was written",
            "run the command again",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&ended.stdout).expect("--json");
    assert_eq!(json["error"]["kind"], "connection_lost", "{json}");
    assert_eq!(json["error"]["exit_code"], 1, "{json}");
    assert_eq!(sb.count("SELECT count(*) FROM runs"), runs_before, "no run");
    assert_eq!(
        sb.count("SELECT count(*) FROM reservations"),
        0,
        "nothing held"
    );
    assert!(sb.daily().is_empty(), "no date");
}

#[test]
fn a_server_that_cannot_be_reached_is_retried_and_nothing_is_written() {
    let schema = "unreachable";
    let mut server = PrivateServer::start("sessions", schema);
    server.expect(schema, 0, &["init"]);
    let orders = Orders::new(3804, "2025-04-01", 3, false);
    server.insert_orders(schema, &orders.rows);
    let interval = orders.interval();
    server.stop(libc::SIGINT);

    let refused = server.expect(schema, 1, &["--json", "apply", "--interval", &interval]);
    contains_all(
        &refused.stderr,
        &[
            "cannot reach database",
            "nothing was written",
            "check that the server is up",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&refused.stdout).expect("--json");
    assert_eq!(json["error"]["kind"], "unreachable", "{json}");
    assert_eq!(json["error"]["exit_code"], 1, "{json}");

    // A wrong password or database name is not a fault a retry outlives: still exit 2.
    server.run();
    let wrong_db = server
        .url
        .replace("postgresql:///postgres", "postgresql:///no_such_db");
    let bad = run(
        "apply on a database that does not exist",
        cmd_with_url(&wrong_db, schema, &["apply", "--interval", &interval]),
        2,
    );
    contains_all(&bad.stderr, &["does not exist", "createdb"]);

    assert_eq!(
        server.query(&format!("SELECT count(*) FROM {schema}.runs")),
        [["0"]],
        "nothing was written"
    );
    server.expect(schema, 0, &["apply", "--interval", &interval]);
    assert_eq!(
        server.query(&format!("SELECT count(*) FROM {schema}.daily_revenue")),
        [["3"]]
    );
}
