//! Restricted roles (PostgreSQL 15: no role creates in `public` by default). A pipeline's
//! role that owns one schema and has no other right runs every command; a read-only role
//! (USAGE on the schema, SELECT on its tables) reads; a missing right is named with the
//! statement that grants it, and that statement, run by the admin, fixes it. The admin is
//! the test server's superuser; the roles log in over its socket (trust).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::support::*;

const START: &str = "2026-03-01";

static NEXT_ROLE: AtomicU32 = AtomicU32::new(1);

/// A new LOGIN role with no other right, named `prefix_<unique>`.
fn new_role(prefix: &str) -> String {
    let role = format!(
        "{prefix}_{}_{}",
        std::process::id(),
        NEXT_ROLE.fetch_add(1, Ordering::Relaxed)
    );
    admin(&format!("CREATE ROLE \"{role}\" LOGIN"));
    role
}

/// Runs `sql` as the test server's superuser.
fn admin(sql: &str) {
    pg::server()
        .connect("public")
        .batch_execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {}", pg::error_text(&e)));
}

/// `sqlrun ARGS` on the sandbox's schema, logged in as `role`.
fn as_role(sb: &Sandbox, role: &str, args: &[&str]) -> Run {
    let (url, schema) = sb.url();
    let url = url.replace("user=postgres", &format!("user={role}"));
    assert!(
        url.contains(role),
        "the test server's URL names its user: {url}"
    );
    let mut cmd = cmd_with_url(&url, &schema, args);
    cmd.current_dir(sb.path());
    Run::from(cmd.output().expect("run sqlrun"))
}

fn expect_as(sb: &Sandbox, role: &str, code: i32, args: &[&str]) -> Run {
    let run = as_role(sb, role, args);
    assert_eq!(
        run.code,
        code,
        "`sqlrun {}` as role {role} exited {}, wanted {code}\nstdout: {}\nstderr: {}",
        args.join(" "),
        run.code,
        run.stdout,
        run.stderr
    );
    run
}

/// Orders as a CSV file in the sandbox's folder, for `sqlrun load orders FILE`.
fn csv(sb: &Sandbox, name: &str, rows: &[OrderRow]) -> String {
    let mut text = String::from("order_id,order_date,amount,created_at\n");
    for r in rows {
        text.push_str(&format!(
            "{},{},{},{}\n",
            r.order_id, r.order_date, r.amount, r.created_at
        ));
    }
    let path = sb.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A sandbox whose schema an admin made for a new role that owns it (and has no other
/// right): the sandbox and the role.
fn owned_schema() -> (Sandbox, String) {
    let sb = Sandbox::empty();
    let role = new_role("etl");
    let schema = sb.schema.clone().unwrap();
    admin(&format!(
        "CREATE SCHEMA \"{schema}\" AUTHORIZATION \"{role}\""
    ));
    (sb, role)
}

/// Objects the role owns outside the sandbox's schema (none, if it needed no right there).
fn owned_elsewhere(sb: &Sandbox, role: &str) -> i64 {
    sb.count(&format!(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE pg_get_userbyid(c.relowner) = '{role}' AND n.nspname <> '{}' \
           AND n.nspname <> 'pg_toast'",
        sb.schema.as_deref().unwrap()
    ))
}

#[test]
fn a_role_that_owns_one_schema_runs_the_whole_story() {
    let (sb, etl) = owned_schema();
    let mut orders = Orders::new(231, START, 10, false);
    expect_as(&sb, &etl, 0, &["init"]);
    let file = csv(&sb, "orders.csv", &orders.rows);
    expect_as(&sb, &etl, 0, &["load", "orders", &file]);
    expect_as(&sb, &etl, 0, &["apply", "--interval", &orders.interval()]);
    assert_eq!(sb.daily(), orders.expected());

    let week = format!("{START}..{}", day(START, 6));
    expect_as(
        &sb,
        &etl,
        0,
        &["seal", "--interval", &week, "--reason", "W1"],
    );
    let late = orders.add("late-1", &day(START, 2), 700);
    let file = csv(&sb, "late.csv", &[late]);
    expect_as(&sb, &etl, 0, &["load", "orders", &file]);
    let changed = [
        "apply",
        "--interval",
        &orders.interval(),
        "--only",
        "changed",
    ];
    let run = expect_as(&sb, &etl, 0, &changed);
    assert!(run.stdout.contains("corrected"), "{}", run.stdout);
    assert_eq!(sb.current(), orders.expected());
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue_corrections WHERE settled_by IS NULL"),
        1,
        "the late order corrects the sealed date"
    );

    let third = day(START, 2);
    let reissue = ["seal", "--reissue", "--interval", &third, "--reason", "re"];
    expect_as(&sb, &etl, 0, &reissue);
    let last = day(START, 6);
    expect_as(
        &sb,
        &etl,
        0,
        &["unseal", "--interval", &last, "--reason", "oops"],
    );
    let report = sb.path().join("report.html").display().to_string();
    for read in [
        vec!["status"],
        vec!["runs"],
        vec!["seals"],
        vec!["corrections"],
        vec!["report", "--html", &report],
        vec!["check", "--interval", &week],
    ] {
        expect_as(&sb, &etl, 0, &read);
    }
    assert!(std::fs::metadata(&report).unwrap().len() > 1000);
    assert_eq!(
        sb.rows("SELECT action FROM seal_events ORDER BY seal_id"),
        [["seal"], ["reissue"], ["unseal"]]
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue_corrections WHERE settled_by IS NULL"),
        0,
        "the reissue settles the corrections"
    );
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 2);
    assert_eq!(owned_elsewhere(&sb, &etl), 0);
}

/// The admin's setup of docs/parts/access.md for a read-only role, before and after the
/// pipeline's tables exist.
fn reader_of(sb: &Sandbox, owner: &str) -> String {
    let reader = new_role("analyst");
    let schema = sb.schema.as_deref().unwrap();
    admin(&format!(
        "GRANT USAGE ON SCHEMA \"{schema}\" TO \"{reader}\"; \
         GRANT SELECT ON ALL TABLES IN SCHEMA \"{schema}\" TO \"{reader}\"; \
         ALTER DEFAULT PRIVILEGES FOR ROLE \"{owner}\" IN SCHEMA \"{schema}\" \
           GRANT SELECT ON TABLES TO \"{reader}\";"
    ));
    reader
}

#[test]
fn a_read_only_role_reads_and_a_write_names_its_grant() {
    let (sb, etl) = owned_schema();
    // Granted before the tables exist: the default privileges give it the new ones.
    let reader = reader_of(&sb, &etl);
    let orders = Orders::new(232, START, 5, false);
    expect_as(&sb, &etl, 0, &["init"]);
    let file = csv(&sb, "orders.csv", &orders.rows);
    expect_as(&sb, &etl, 0, &["load", "orders", &file]);
    expect_as(&sb, &etl, 0, &["apply", "--interval", &orders.interval()]);
    let first = START.to_string();
    expect_as(
        &sb,
        &etl,
        0,
        &["seal", "--interval", &first, "--reason", "W1"],
    );

    let before = snapshot(&sb);
    let status = expect_as(&sb, &reader, 0, &["status", "--list"]);
    assert!(status.stdout.contains(&day(START, 4)), "{}", status.stdout);
    let runs = expect_as(&sb, &reader, 0, &["runs"]);
    assert!(runs.stdout.contains("backfill"), "{}", runs.stdout);
    let report = sb.path().join("report.html").display().to_string();
    for read in [
        vec!["seals"],
        vec!["corrections"],
        vec!["templates"],
        vec!["report", "--html", &report],
        vec!["render", "--date", &first],
        vec!["check", "--interval", &orders.interval()],
    ] {
        expect_as(&sb, &reader, 0, &read);
    }
    assert_eq!(snapshot(&sb), before, "reading wrote nothing");

    let second = day(START, 1);
    let seal = ["seal", "--interval", &second, "--reason", "W1"];
    let refused = expect_as(&sb, &reader, 2, &seal);
    let schema = sb.schema.clone().unwrap();
    let grant = format!(
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \"{schema}\" TO \
         \"{reader}\"; GRANT USAGE ON ALL SEQUENCES IN SCHEMA \"{schema}\" TO \"{reader}\";"
    );
    contains_all(&refused.stderr, &[&format!("role \"{reader}\""), &grant]);
    expect_as(
        &sb,
        &reader,
        2,
        &["apply", "--interval", &orders.interval()],
    );
    assert_eq!(snapshot(&sb), before, "the refused writes wrote nothing");

    // The statement named is the one that fixes it.
    admin(&grant);
    expect_as(&sb, &reader, 0, &seal);
    assert_eq!(sb.count("SELECT count(*) FROM seal_events"), 2);
}

#[test]
fn a_missing_schema_or_right_names_the_statement_that_gives_it() {
    let sb = Sandbox::empty();
    let schema = sb.schema.clone().unwrap();
    let role = new_role("etl");
    let refused = expect_as(&sb, &role, 2, &["init"]);
    let create = format!("CREATE SCHEMA \"{schema}\" AUTHORIZATION \"{role}\";");
    contains_all(&refused.stderr, &[&create, "may not create schemas"]);
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'"
        )),
        0,
        "nothing was created"
    );
    admin(&create);
    expect_as(&sb, &role, 0, &["init"]);
    let generate = [
        "generate",
        "--start",
        START,
        "--days",
        "2",
        "--per-day",
        "5",
    ];
    expect_as(&sb, &role, 0, &generate);
    assert!(sb.count("SELECT count(*) FROM orders") >= 10);

    // Another role, without USAGE on it, then without SELECT on its tables.
    let other = new_role("grader");
    let refused = expect_as(&sb, &other, 2, &["status"]);
    let usage = format!("GRANT USAGE ON SCHEMA \"{schema}\" TO \"{other}\";");
    contains_all(&refused.stderr, &[&usage]);
    admin(&usage);
    let refused = expect_as(&sb, &other, 2, &["status"]);
    let select = format!("GRANT SELECT ON ALL TABLES IN SCHEMA \"{schema}\" TO \"{other}\";");
    contains_all(&refused.stderr, &[&select]);
    admin(&select);
    expect_as(&sb, &other, 0, &["status"]);
}

/// A role allowed one connection runs every time: the pooler probe's connection, opened
/// beside the run's own, gives way when it took the only slot (which of the two gets it
/// first is a race; each run is a new process, so each probes again).
#[test]
fn a_role_allowed_one_connection_keeps_it_for_the_run() {
    let (sb, etl) = owned_schema();
    admin(&format!("ALTER ROLE \"{etl}\" CONNECTION LIMIT 1"));
    let orders = Orders::new(7, START, 3, false);
    expect_as(&sb, &etl, 0, &["init"]);
    let file = csv(&sb, "orders.csv", &orders.rows);
    expect_as(&sb, &etl, 0, &["load", "orders", &file]);
    for _ in 0..6 {
        expect_as(&sb, &etl, 0, &["apply", "--interval", &orders.interval()]);
    }
    assert_eq!(sb.daily(), orders.expected());
    assert_eq!(
        sb.count("SELECT count(*) FROM runs WHERE status = 'success'"),
        6
    );
}
