//! `apply --jobs N`: N workers, each with its own database session, take a run's dates
//! from one queue in ascending order; each date is still its own transaction. The pool
//! only orchestrates: what a date is (its transaction, its record) is the caller's, and
//! what is printed is the calling thread's, one line (or one progress bar) per run.
//!
//! A stop (a failed date without `--keep-going`, a signal, a lost date or connection)
//! closes the queue: no worker takes another date, and the dates in flight finish or
//! roll back.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Mutex};

use super::outcome::Stop;
use crate::db::{Db, Target};
use crate::error::{Error, Result};

/// What a worker does after one date: the pool's instruction, not how the date ended
/// (that is `T`, and the `Stop`).
pub enum Step<T> {
    /// The date ended (done or failed, recorded): take the next one.
    Next(T),
    /// The run stops; the date's outcome, if it has one.
    Last(Option<T>, Stop),
}

/// The run's dates in ascending order, handed out one at a time, and the stops.
struct Queue<'a> {
    dates: &'a [String],
    signal: &'a AtomicI32,
    state: Mutex<QueueState>,
}

struct QueueState {
    next: usize,
    /// Closed early by a worker that knows the run stops before it can say why.
    halted: bool,
    /// Every stop, in the order they came; the first one closes the queue.
    stops: Vec<Stop>,
}

/// Closes the queue at once, for a worker that knows the run stops before it can say
/// why (a failed date, before its failure is recorded): the other workers take no date
/// meanwhile. The worker's `Step::Last` then says why.
pub struct Halt<'q, 'a>(&'q Queue<'a>);

impl Halt<'_, '_> {
    pub fn now(&self) {
        self.0.lock().halted = true;
    }
}

impl<'a> Queue<'a> {
    fn new(dates: &'a [String], signal: &'a AtomicI32) -> Self {
        Queue {
            dates,
            signal,
            state: Mutex::new(QueueState {
                next: 0,
                halted: false,
                stops: Vec::new(),
            }),
        }
    }

    /// The next date, unless the run stopped or none is left. A stop signal is noticed
    /// here, between dates, and stops the run before the date it would have given.
    fn take(&self) -> Option<&'a str> {
        let mut state = self.lock();
        if state.halted || !state.stops.is_empty() {
            return None;
        }
        let ds = self.dates.get(state.next)?;
        let sig = self.signal.load(Ordering::SeqCst);
        if sig != 0 {
            state.stops.push(Stop::Signal {
                sig,
                ds: ds.clone(),
                during: false,
            });
            return None;
        }
        state.next += 1;
        Some(ds)
    }

    fn stop(&self, stop: Stop) {
        self.lock().stops.push(stop);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        // A worker that panicked while holding the lock left a consistent state (a
        // number and a list): the others may go on reading it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn into_stops(self) -> Vec<Stop> {
        self.state
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .stops
    }
}

/// Runs `date` on every date of `dates`, in ascending order, one worker per session (each
/// on its own thread, each date on the session of the worker that took it). `each` sees
/// every outcome as it comes, on the calling thread. Returns the outcomes in the order
/// they came, and the stops in the order they came (none: every date was taken).
pub fn each_date<S: Send, T: Send>(
    sessions: Vec<S>,
    dates: &[String],
    signal: &AtomicI32,
    date: impl Fn(&mut S, &str, &Halt) -> Step<T> + Sync,
    mut each: impl FnMut(&T),
) -> (Vec<T>, Vec<Stop>) {
    let queue = Queue::new(dates, signal);
    let (sender, outcomes) = mpsc::channel();
    let mut all = Vec::new();
    std::thread::scope(|scope| {
        for session in sessions {
            let (queue, date, sender) = (&queue, &date, sender.clone());
            scope.spawn(move || work(session, queue, date, &sender));
        }
        // The workers hold the only senders left: the loop ends when the last one ends.
        drop(sender);
        for outcome in outcomes {
            each(&outcome);
            all.push(outcome);
        }
    });
    (all, queue.into_stops())
}

/// One worker: dates from the queue until it is empty or closed, or a date stops the run.
fn work<S, T>(
    mut session: S,
    queue: &Queue,
    date: &impl Fn(&mut S, &str, &Halt) -> Step<T>,
    outcomes: &mpsc::Sender<T>,
) {
    while let Some(ds) = queue.take() {
        match date(&mut session, ds, &Halt(queue)) {
            Step::Next(outcome) => {
                let _ = outcomes.send(outcome);
            }
            Step::Last(outcome, stop) => {
                // The stop first: no other worker takes a date once it is known.
                queue.stop(stop);
                if let Some(outcome) = outcome {
                    let _ = outcomes.send(outcome);
                }
                return;
            }
        }
    }
}

/// `n` more sessions on `target`, opened side by side, for the workers beside the run's
/// own session (`jobs` of them in all).
pub fn open_sessions(target: &Target, n: usize, jobs: usize) -> Result<Vec<Db>> {
    std::thread::scope(|scope| {
        let opening: Vec<_> = (0..n).map(|_| scope.spawn(|| Db::open(target))).collect();
        opening
            .into_iter()
            .map(|h| Ok(h.join().expect("opening a session does not panic")?))
            .collect::<Result<Vec<_>>>()
    })
    .map_err(|e| more_sessions_failed(e, jobs))
}

/// A worker's session that could not be opened: the server's words, and that `--jobs`
/// asked for that many connections. The run's own session was opened just before, so
/// the server is there: what it refuses is how many (exit 2, as bad input; a retry with
/// the same --jobs meets the same limit).
fn more_sessions_failed(e: Error, jobs: usize) -> Error {
    let with_jobs = |fix: String| {
        format!(
            "{fix} (--jobs {jobs} takes up to {jobs} connections: the run's own and one per \
             other worker), or lower --jobs"
        )
    };
    match e {
        Error::Open {
            target,
            message,
            fix,
        }
        | Error::Unreachable {
            target,
            message,
            fix,
        } => Error::Open {
            target,
            message,
            fix: with_jobs(fix),
        },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(n: usize) -> Vec<String> {
        (1..=n).map(|d| format!("2026-02-{d:02}")).collect()
    }

    #[test]
    fn the_queue_hands_out_dates_in_ascending_order_once_each() {
        let dates = days(3);
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &signal);
        let taken: Vec<&str> = std::iter::from_fn(|| queue.take()).collect();
        assert_eq!(taken, ["2026-02-01", "2026-02-02", "2026-02-03"]);
        assert!(queue.take().is_none());
        assert!(queue.into_stops().is_empty(), "running out is not a stop");
    }

    #[test]
    fn a_stop_closes_the_queue_for_every_worker() {
        let dates = days(5);
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &signal);
        assert_eq!(queue.take(), Some("2026-02-01"));
        assert_eq!(queue.take(), Some("2026-02-02"));
        queue.stop(Stop::Failed {
            ds: "2026-02-01".into(),
        });
        assert!(queue.take().is_none());
        assert!(queue.take().is_none());
        let stops = queue.into_stops();
        assert!(matches!(&stops[..], [Stop::Failed { ds }] if ds == "2026-02-01"));
    }

    #[test]
    fn a_halt_closes_the_queue_before_the_stop_is_said() {
        let dates = days(3);
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &signal);
        assert_eq!(queue.take(), Some("2026-02-01"));
        Halt(&queue).now();
        assert!(queue.take().is_none());
        assert!(queue.into_stops().is_empty());
    }

    #[test]
    fn a_signal_stops_before_the_next_date_and_is_said_once() {
        let dates = days(4);
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &signal);
        assert_eq!(queue.take(), Some("2026-02-01"));
        signal.store(15, Ordering::SeqCst);
        assert!(queue.take().is_none());
        assert!(queue.take().is_none());
        let stops = queue.into_stops();
        assert!(
            matches!(&stops[..], [Stop::Signal { sig: 15, ds, during: false }] if ds == "2026-02-02"),
            "{stops:?}"
        );
    }

    #[test]
    fn every_date_is_done_once_by_some_worker() {
        let dates = days(28);
        let signal = AtomicI32::new(0);
        let mut seen = 0;
        let (outcomes, stops) = each_date(
            vec![0, 1, 2, 3],
            &dates,
            &signal,
            |worker: &mut usize, ds, _: &Halt| Step::Next((*worker, ds.to_string())),
            |_| seen += 1,
        );
        assert!(stops.is_empty());
        assert_eq!(seen, 28);
        let mut done: Vec<&str> = outcomes.iter().map(|(_, ds)| ds.as_str()).collect();
        done.sort();
        assert_eq!(done, dates.iter().map(String::as_str).collect::<Vec<_>>());
    }

    #[test]
    fn a_stop_ends_every_worker_and_the_dates_taken_finish() {
        let dates = days(28);
        let signal = AtomicI32::new(0);
        let (outcomes, stops) = each_date(
            vec![(); 4],
            &dates,
            &signal,
            |_, ds, halt: &Halt| match ds {
                "2026-02-05" => {
                    halt.now();
                    Step::Last(Some(ds.to_string()), Stop::Failed { ds: ds.into() })
                }
                _ => Step::Next(ds.to_string()),
            },
            |_| {},
        );
        assert!(matches!(&stops[..], [Stop::Failed { ds }] if ds == "2026-02-05"));
        assert!(outcomes.contains(&"2026-02-05".to_string()));
        // The dates other workers took before the stop finish; every date taken ends.
        let mut done = outcomes.clone();
        done.sort();
        assert_eq!(
            done,
            dates[..done.len()].to_vec(),
            "a prefix, each date once"
        );
    }

    #[test]
    fn a_signal_after_the_last_date_is_not_a_stop() {
        let dates = days(1);
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &signal);
        assert_eq!(queue.take(), Some("2026-02-01"));
        signal.store(2, Ordering::SeqCst);
        assert!(queue.take().is_none());
        assert!(queue.into_stops().is_empty());
    }
}
