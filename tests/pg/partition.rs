//! A runner cut off from its server by the network: the measurement behind the README's
//! "a runner cut off from the server by the network holds its dates for about 10 seconds
//! over TCP". Two network namespaces made by the test, joined by a veth pair in a private
//! /30 that exists only inside them; a private PostgreSQL server in one, the real binary
//! in the other, talking TCP over the veth. Mid-backfill the test cuts the link and
//! measures, from the server's side (over its Unix socket, which no network cut touches),
//! how long the server keeps the runner's session (and so its dates), and how long the
//! runner takes to give up. Then a runner in the server's namespace reclaims the dates.
//!
//! Two ways to cut:
//! - silent: both links stay up, but each side now sends to a MAC address nobody has, so
//!   every packet leaves and is lost on the way (a partition: nothing errors locally, the
//!   peer just goes quiet);
//! - link down: the runner's interface goes down (a pulled cable on the runner's side).
//!
//! Needs root (network namespaces), `ip` (iproute2) and PostgreSQL (`initdb`, `postgres`,
//! a `postgres` user to run them as). A test takes about 12 s; every wait is bounded
//! (at most 40 s after the cut); it cleans up (server, namespaces, folder) also when it
//! fails.
//!
//! The processes, the namespaces and the server are procs.rs's.

use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::procs::*;
use crate::support::{cmd_with_url, day};

/// The /30 of the veth pair; it exists only inside the two namespaces of a test.
const SERVER_ADDR: &str = "10.213.0.1";
const CLIENT_ADDR: &str = "10.213.0.2";
/// A MAC address no interface has: where a silent cut sends every packet.
const NOWHERE_MAC: &str = "02:00:5e:00:53:fe";
const SCHEMA: &str = "part";
const START: &str = "2025-01-01";
/// 300 dates of 0.2 s each: about a minute of backfill, far longer than the cut needs.
const DAYS: u32 = 300;
const SLEEP_PER_DATE: f64 = 0.2;
/// The bounds asserted (with slack over the ~5-10 s the settings aim at).
const SESSION_GONE_WITHIN: Duration = Duration::from_secs(20);
const RUNNER_EXITS_WITHIN: Duration = Duration::from_secs(30);
/// How long the test keeps measuring after the cut before it gives up.
const MEASURE_AT_MOST: Duration = Duration::from_secs(40);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cut {
    Silent,
    LinkDown,
}

impl Cut {
    fn tag(self) -> &'static str {
        match self {
            Cut::Silent => "silent",
            Cut::LinkDown => "down",
        }
    }
}

// ---------------------------------------------------------------------------------------
// The lab: two namespaces, a veth pair, a private server

/// Two namespaces joined by a veth pair, a PostgreSQL server in one of them. Dropping it
/// stops the server and removes its folder, then deletes the namespaces (the veth pair
/// goes with them).
struct Lab {
    server: PrivateServer,
    server_ns: Netns,
    client_ns: Netns,
}

impl Lab {
    fn start(cut: Cut) -> Lab {
        // The network: two namespaces, a veth pair made straight into them (it never
        // exists in the host's namespace), a /30 that exists only on that pair.
        let server_ns = Netns::new(&format!("partition-{}-srv", cut.tag()));
        let client_ns = Netns::new(&format!("partition-{}-cli", cut.tag()));
        let (srv, cli) = (server_ns.name.as_str(), client_ns.name.as_str());
        ip(&[
            "link", "add", "vsrv", "netns", srv, "type", "veth", "peer", "name", "vcli", "netns",
            cli,
        ]);
        for (ns, addr, dev) in [(srv, SERVER_ADDR, "vsrv"), (cli, CLIENT_ADDR, "vcli")] {
            ip(&["-n", ns, "addr", "add", &format!("{addr}/30"), "dev", dev]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
        }
        // The server, on the /30 and the namespace's loopback.
        let listen = format!("{SERVER_ADDR},127.0.0.1");
        let server = PrivateServer::start_in("partition", SCHEMA, &server_ns, &listen);
        Lab {
            server,
            server_ns,
            client_ns,
        }
    }

    /// `sqlrun --db URL --schema part ARGS` over TCP to `host`, started inside `ns`.
    fn sqlrun(&self, what: &str, ns: &Netns, host: &str, args: &[&str]) -> Proc {
        let mut cmd = cmd_with_url(&PrivateServer::tcp_url(host), SCHEMA, args);
        enter(&mut cmd, Some(ns.file()), None);
        Proc::spawn(what, cmd)
    }

    /// The binary in the client namespace, over TCP across the veth pair.
    fn client_sqlrun(&self, what: &str, args: &[&str]) -> Proc {
        self.sqlrun(what, &self.client_ns, SERVER_ADDR, args)
    }

    /// The binary in the server namespace, over TCP on that namespace's loopback.
    fn server_side_sqlrun(&self, what: &str, args: &[&str]) -> Proc {
        self.sqlrun(what, &self.server_ns, "127.0.0.1", args)
    }

    /// Cuts the link between the two namespaces.
    fn cut(&self, cut: Cut) {
        match cut {
            Cut::Silent => {
                // Each side now addresses its frames to a MAC nobody has: they leave, and
                // the other end drops them (not for its address). No local error anywhere.
                for (ns, dev, peer) in [
                    (&self.client_ns, "vcli", SERVER_ADDR),
                    (&self.server_ns, "vsrv", CLIENT_ADDR),
                ] {
                    ip(&[
                        "-n",
                        &ns.name,
                        "neigh",
                        "replace",
                        peer,
                        "lladdr",
                        NOWHERE_MAC,
                        "dev",
                        dev,
                        "nud",
                        "permanent",
                    ]);
                }
            }
            Cut::LinkDown => ip(&["-n", &self.client_ns.name, "link", "set", "vcli", "down"]),
        }
    }
}

// The server's own view, over its Unix socket: no network cut reaches it.

/// The sessions the server has from the client namespace's address.
fn client_sessions(db: &PrivateServer) -> i64 {
    db.number(&format!(
        "SELECT count(*) FROM pg_catalog.pg_stat_activity \
         WHERE client_addr = '{CLIENT_ADDR}'::inet"
    ))
}

/// Whether the pipeline's lock (see queries/postgres/bookkeeping_begin.sql) could be
/// taken now (and, outside a transaction, is given back at once).
fn pipeline_lock_free(db: &PrivateServer) -> bool {
    let take = include_str!("../../queries/postgres/bookkeeping_begin.sql")
        .lines()
        .find(|l| l.starts_with("SELECT pg_advisory_xact_lock("))
        .expect("bookkeeping_begin.sql takes the pipeline's lock")
        .replace("pg_advisory_xact_lock(", "pg_try_advisory_xact_lock(");
    db.query(&take) == [["t"]]
}

fn partitions_of(db: &PrivateServer, run_id: i64) -> i64 {
    db.number(&format!(
        "SELECT count(*) FROM run_partitions WHERE run_id = {run_id}"
    ))
}

// ---------------------------------------------------------------------------------------
// The test

fn secs(d: Option<Duration>) -> String {
    match d {
        Some(d) => format!("{:.1} s", d.as_secs_f64()),
        None => format!("more than {} s", MEASURE_AT_MOST.as_secs()),
    }
}

fn cut_off_runner(cut: Cut) {
    let how = format!("partition ({})", cut.tag());
    let lab = Lab::start(cut);
    let end = day(START, i64::from(DAYS) - 1);
    let interval = format!("{START}..{end}");
    let long = Duration::from_secs(30);

    // The pipeline and its orders, by the binary, from the client namespace over TCP.
    lab.client_sqlrun("sqlrun init (client namespace)", &["init"])
        .expect(0, long);
    lab.client_sqlrun(
        "sqlrun generate (client namespace)",
        &[
            "generate",
            "--start",
            START,
            "--days",
            &DAYS.to_string(),
            "--per-day",
            "5",
            "--seed",
            "7",
        ],
    )
    .expect(0, long);
    let db = &lab.server;
    db.slow_inserts("daily_revenue", SLEEP_PER_DATE);

    // The slow backfill, until it has committed a few dates.
    let mut runner = lab.client_sqlrun(
        "the backfill in the client namespace",
        &["apply", "--interval", &interval],
    );
    let run_id = wait_for_dates(db, &mut runner, 3, long);
    let sessions_before = client_sessions(db);
    assert!(
        sessions_before >= 1,
        "{how}: the server has the runner's session from {CLIENT_ADDR}"
    );
    // Somewhere into the next date (its sleep, or its commit), so that the cut lands while
    // a date is in flight: at a different point each time.
    let offset = rand::random_range(0..200u64);
    sleep(Duration::from_millis(offset));
    let at_cut = partitions_of(db, run_id);
    lab.cut(cut);
    let cut_at = Instant::now();

    // Measure, from the server's side, every 20 ms: whether the pipeline's lock is free
    // (no date's transaction takes it, so a cut-off runner in the middle of a date must
    // not make other runners' bookkeeping wait), whether the runner's session is gone, whether the
    // runner has exited. Right when the session is gone, a runner in the server's
    // namespace starts over the loopback (no slow dates now).
    let mut lock_held_at_cut = None;
    let mut lock_free = None;
    let mut gone = None;
    let mut at_gone = None;
    let mut rerun = None;
    let mut exit = None;
    poll(MEASURE_AT_MOST, || {
        if gone.is_none() && lock_free.is_none() {
            let free = pipeline_lock_free(db);
            lock_held_at_cut.get_or_insert(!free);
            if free {
                lock_free = Some(cut_at.elapsed());
            }
        }
        if gone.is_none() && client_sessions(db) == 0 {
            gone = Some(cut_at.elapsed());
            let status = status_of(db, run_id);
            let held = reservations_of(db, run_id).len() as i64;
            at_gone = Some((partitions_of(db, run_id), status, held));
            db.exec("DROP TRIGGER burn_time ON daily_revenue");
            rerun = Some(lab.server_side_sqlrun(
                "the rerun in the server namespace",
                &["apply", "--interval", &interval, "--only", "missing"],
            ));
        }
        if exit.is_none() {
            if let Some(run) = runner.try_finish() {
                exit = Some((cut_at.elapsed(), run));
            }
        }
        gone.is_some() && exit.is_some()
    });
    let run = exit.as_ref().map(|(_, run)| run);
    let message = run
        .map(|r| r.stderr.trim().replace('\n', " | "))
        .unwrap_or_else(|| "(still running)".into());
    let server_saw: Vec<String> = db
        .log()
        .lines()
        .filter(|l| l.contains(CLIENT_ADDR) && !l.contains("connection received"))
        .filter(|l| !l.contains("connection authorized") && !l.contains("connection authenticated"))
        .map(str::to_string)
        .collect();
    let lock = match (lock_held_at_cut, lock_free) {
        (Some(false), _) => "free at the cut".to_string(),
        (Some(true), Some(after)) => format!("held at the cut, free after {}", secs(Some(after))),
        (Some(true), None) => "held at the cut, until the session ended".to_string(),
        (None, _) => "not polled".to_string(),
    };
    eprintln!(
        "{how}: cut {offset} ms into the date after {at_cut} committed dates of run {run_id} \
         ({sessions_before} session(s) from {CLIENT_ADDR}); pipeline lock {lock}; session gone \
         after {}; runner exit {} after {}; its stderr: {message}\n\
         {how}: the server's log about {CLIENT_ADDR}:\n  {}",
        secs(gone),
        run.map(|r| r.code.to_string())
            .unwrap_or_else(|| "-".into()),
        secs(exit.as_ref().map(|(after, _)| *after)),
        server_saw.join("\n  ")
    );

    // The bounds.
    assert_eq!(
        lock_held_at_cut,
        Some(false),
        "{how}: the pipeline's lock is free while the cut-off runner is in the middle of a \
         date (no date's transaction takes it), so no other runner waits for it"
    );
    let gone = gone.unwrap_or_else(|| {
        panic!(
            "{how}: the server still had the runner's session {} s after the cut; its log:\n{}",
            MEASURE_AT_MOST.as_secs(),
            db.log_tail()
        )
    });
    assert!(
        gone <= SESSION_GONE_WITHIN,
        "{how}: the server ended the cut-off runner's session after {gone:?}, wanted at most \
         {SESSION_GONE_WITHIN:?}"
    );
    let (exit_after, run) = match exit {
        Some(exit) => exit,
        None => panic!(
            "{how}: the cut-off runner still ran {} s after the cut",
            MEASURE_AT_MOST.as_secs()
        ),
    };
    assert!(
        exit_after <= RUNNER_EXITS_WITHIN,
        "{how}: the cut-off runner exited after {exit_after:?}, wanted at most \
         {RUNNER_EXITS_WITHIN:?}\nstderr: {}",
        run.stderr
    );
    assert_eq!(
        run.code, 1,
        "{how}: the cut-off runner exits 1\nstderr: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("lost the connection to the database during "),
        "{how}: the cut-off runner says it lost the connection:\n{}",
        run.stderr
    );

    // When its session ended, the cut-off run had written nothing after the cut (but the
    // date whose commit was in flight), was still `running`, and held the rest.
    let (at_gone, status, held) = at_gone.expect("measured when the session was gone");
    assert!(
        (at_cut..=at_cut + 1).contains(&at_gone),
        "{how}: the cut-off run had {at_cut} dates at the cut and {at_gone} when its session \
         was gone"
    );
    assert_eq!(status, "running", "{how}: nobody had reclaimed it yet");
    assert_eq!(
        held,
        i64::from(DAYS) - at_gone,
        "{how}: it still held the rest"
    );
    let rerun = rerun
        .expect("started when the session was gone")
        .expect(0, long);
    let at_end = partitions_of(db, run_id);
    assert_eq!(at_end, at_gone, "{how}: and nothing since");
    let done = db.number(&format!(
        "SELECT count(*) FROM run_partitions WHERE run_id = {run_id} AND status = 'success'"
    ));
    assert_eq!(done, at_end, "{how}: its dates are all done");
    assert_eq!(
        db.number(&format!(
            "SELECT count(*) FROM daily_revenue WHERE run_id = {run_id}"
        )),
        done,
        "{how}: its daily_revenue rows are its done dates"
    );

    // The rerun reclaimed the rest.
    let me = max_run_id(db);
    assert!(me > run_id, "{how}: the rerun is a new run");
    let events = reclaims(db);
    assert_eq!(events.len(), 1, "{how}: one reclaim: {events:?}");
    assert_eq!(
        (events[0].0, events[0].1, events[0].2),
        (run_id, me, held),
        "{how}: the rerun reclaimed the cut-off run's dates: {events:?}"
    );
    assert!(
        rerun.stderr.contains(&format!("run {run_id}")),
        "{how}: the reclaim is reported:\n{}",
        rerun.stderr
    );
    assert_eq!(
        status_of(db, run_id),
        "interrupted",
        "{how}: the cut-off run is interrupted"
    );
    assert_eq!(
        db.number(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {me} AND status = 'success'"
        )),
        held,
        "{how}: the rerun did exactly the rest"
    );
    assert_eq!(db.number("SELECT count(*) FROM reservations"), 0, "{how}");

    // Every date once, equal to the orders' numbers (computed here, not by sqlrun).
    let differ = db.number(&format!(
        "WITH win AS (SELECT DISTINCT ON (order_id) order_date, amount FROM orders \
                      ORDER BY order_id, created_at DESC, rowid DESC), \
              expected AS (SELECT d::date AS ds, coalesce(sum(w.amount), 0)::bigint AS revenue, \
                                  count(w.amount)::bigint AS order_count \
                           FROM generate_series(DATE '{START}', DATE '{end}', interval '1 day') AS d \
                           LEFT JOIN win AS w ON w.order_date = d::date GROUP BY 1), \
              got AS (SELECT ds, revenue::bigint, order_count::bigint FROM daily_revenue) \
         SELECT count(*) FROM ((SELECT * FROM expected EXCEPT ALL SELECT * FROM got) \
                              UNION ALL (SELECT * FROM got EXCEPT ALL SELECT * FROM expected)) AS x"
    ));
    assert_eq!(differ, 0, "{how}: daily_revenue equals the orders' numbers");
    eprintln!(
        "{how}: run {me} in the server namespace reclaimed {held} dates of run {run_id} \
         (now interrupted; why: {}); the cut-off run had {at_cut} dates at the cut and {at_end} \
         at the end",
        events[0].3
    );
}

#[test]
fn a_runner_cut_off_by_a_silent_partition_frees_its_dates_within_seconds() {
    cut_off_runner(Cut::Silent);
}

#[test]
fn a_runner_whose_link_goes_down_frees_its_dates_within_seconds() {
    cut_off_runner(Cut::LinkDown);
}
