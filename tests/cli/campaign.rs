//! The fault campaign: rounds of SIGKILL at random moments of a backfill (sometimes with a
//! second runner killed beside it), each followed by late orders and a rerun. After every
//! round the figures RELIABILITY.md reports are counted: is the result equal to a clean
//! run, is any date half written, is any date left blocked.

use std::thread::sleep;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::concurrency::{self, finish, signal, slow_month, spawn};
use crate::support::*;

const ROUNDS: usize = 12;

#[derive(Debug, Default)]
struct Figures {
    rounds: usize,
    killed: usize,
    equal_to_clean: usize,
    half_written: usize,
    left_blocked: usize,
    reruns_that_met_a_live_holder: usize,
}

fn half_written(sb: &Sandbox) -> usize {
    let (orphans, unrecorded) = concurrency::half_written(sb);
    orphans.len() + unrecorded.len()
}

/// Reruns the interval to the end. A killed PostgreSQL runner's session may outlive its
/// process by a moment (its dates are then skipped, exit 99, as they should be): try again.
fn rerun(sb: &Sandbox, interval: &str, figures: &mut Figures) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let run = sb.run(&["apply", "--interval", interval, "--only", "missing"]);
        let run = if run.code == 0 {
            sb.run(&["apply", "--interval", interval])
        } else {
            run
        };
        match run.code {
            0 => return,
            99 if Instant::now() < deadline => {
                figures.reruns_that_met_a_live_holder += 1;
                sleep(Duration::from_millis(100));
            }
            code => panic!("rerun exited {code}: {}", run.stderr),
        }
    }
}

#[test]
fn random_sigkills_then_reruns_end_equal_to_a_clean_run() {
    let (sb, mut orders) = slow_month(61);
    let interval = orders.interval();
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    let mut figures = Figures::default();
    for round in 0..ROUNDS {
        let mut victims = vec![spawn(&sb, &["apply", "--interval", &interval])];
        if round % 3 == 2 {
            // A second runner on part of the interval, killed too.
            let part = format!("{}..{}", day(&orders.start, 10), day(&orders.start, 20));
            victims.push(spawn(&sb, &["apply", "--interval", &part]));
        }
        sleep(Duration::from_millis(rng.random_range(50..1500)));
        for mut child in victims {
            if child.try_wait().unwrap().is_none() {
                signal(child.id(), "-KILL");
                figures.killed += 1;
            }
            finish(child);
        }
        figures.half_written += half_written(&sb);

        // Late data between rounds, so each rerun has something new to compute.
        let ds = day(&orders.start, rng.random_range(0..orders.days));
        let late = orders.add(
            &format!("late-{round}"),
            &ds,
            rng.random_range(1_000..90_000),
        );
        sb.insert_orders(&[late]);
        rerun(&sb, &interval, &mut figures);

        figures.rounds += 1;
        let expected = orders.expected();
        if sb.daily() == expected
            && sb.current() == expected
            && sb.cumulative() == running(&expected)
        {
            figures.equal_to_clean += 1;
        }
        figures.half_written += half_written(&sb);
        figures.left_blocked += sb.count("SELECT count(*) FROM reservations") as usize;
    }
    eprintln!("fault campaign on {BACKEND}: {figures:?}");
    assert_eq!(figures.equal_to_clean, ROUNDS, "{figures:?}");
    assert_eq!(figures.half_written, 0, "{figures:?}");
    assert_eq!(figures.left_blocked, 0, "{figures:?}");
    assert!(
        figures.killed >= ROUNDS / 2,
        "most kills land mid-run: {figures:?}"
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM run_partitions WHERE status = 'failed'"),
        0
    );
}
