//! `apply --jobs N`: N workers, each with its own database session, take a run's dates
//! from one queue in ascending order; each date is still its own transaction. The pool
//! only orchestrates: what a date is (its transaction, its record) is the caller's, and
//! what is printed is the calling thread's, one line (or one progress bar) per run.
//!
//! A date that reads partitions other dates build (a cascade's month, its rolling days)
//! is handed out only once those dates have ended: the worker that takes it next waits
//! for them rather than taking a later date, so dates are still taken in ascending order.
//!
//! A stop (a failed date without `--keep-going`, a signal, a lost date or connection)
//! closes the queue: no worker takes another date, a waiting worker stops waiting, and
//! the dates in flight finish or roll back.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::outcome::Stop;
use crate::db::{Db, Target};
use crate::error::{Error, Result};

/// How often a waiting worker looks at the signal: a signal wakes no condition variable.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// What a worker does after one date: the pool's instruction, not how the date ended
/// (that is `T`, and the `Stop`).
pub enum Step<T> {
    /// The date ended (done or failed, recorded): take the next one.
    Next(T),
    /// The run stops; the date's outcome, if it has one.
    Last(Option<T>, Stop),
}

/// The run's dates in ascending order, handed out one at a time once the dates each
/// waits for have ended, and the stops.
struct Queue<'a> {
    dates: &'a [String],
    /// Per date (by place in `dates`), the places of the earlier dates it waits for; a
    /// date past its end waits for none.
    waits: &'a [Vec<usize>],
    signal: &'a AtomicI32,
    state: Mutex<QueueState>,
    /// Told when a date ends or the queue closes, for the worker waiting to take the next.
    changed: Condvar,
}

struct QueueState {
    next: usize,
    /// Closed early by a worker that knows the run stops before it can say why.
    halted: bool,
    /// Every stop, in the order they came; the first one closes the queue.
    stops: Vec<Stop>,
    /// Per date, whether it ended (its outcome recorded, or its worker gone).
    ended: Vec<bool>,
}

/// Closes the queue at once, for a worker that knows the run stops before it can say
/// why (a failed date, before its failure is recorded): the other workers take no date
/// meanwhile. The worker's `Step::Last` then says why.
pub struct Halt<'q, 'a>(&'q Queue<'a>);

impl Halt<'_, '_> {
    pub fn now(&self) {
        self.0.lock().halted = true;
        self.0.changed.notify_all();
    }
}

/// A date a worker took: it ends when dropped, also when its worker panicked (which halts
/// the run), so that no date waits for it forever.
struct Taken<'q, 'a> {
    queue: &'q Queue<'a>,
    place: usize,
}

impl Drop for Taken<'_, '_> {
    fn drop(&mut self) {
        let mut state = self.queue.lock();
        state.ended[self.place] = true;
        state.halted |= std::thread::panicking();
        drop(state);
        self.queue.changed.notify_all();
    }
}

impl<'a> Queue<'a> {
    fn new(dates: &'a [String], waits: &'a [Vec<usize>], signal: &'a AtomicI32) -> Self {
        Queue {
            dates,
            waits,
            signal,
            state: Mutex::new(QueueState {
                next: 0,
                halted: false,
                stops: Vec::new(),
                ended: vec![false; dates.len()],
            }),
            changed: Condvar::new(),
        }
    }

    /// The next date, unless the run stopped or none is left, once the dates it waits
    /// for have ended (waiting till then). A stop signal is noticed here, between dates,
    /// and stops the run before the date it would have given.
    fn take(&self) -> Option<Taken<'_, 'a>> {
        let mut state = self.lock();
        loop {
            if state.halted || !state.stops.is_empty() {
                return None;
            }
            let place = state.next;
            let ds = self.dates.get(place)?;
            let sig = self.signal.load(Ordering::SeqCst);
            if sig != 0 {
                state.stops.push(Stop::Signal {
                    sig,
                    ds: ds.clone(),
                    during: false,
                });
                self.changed.notify_all();
                return None;
            }
            if self.ready(&state, place) {
                state.next += 1;
                return Some(Taken { queue: self, place });
            }
            state = self
                .changed
                .wait_timeout(state, SIGNAL_POLL)
                .map_or_else(|e| e.into_inner().0, |(s, _)| s);
        }
    }

    /// Whether every earlier date `place` waits for has ended.
    fn ready(&self, state: &QueueState, place: usize) -> bool {
        let waits = self.waits.get(place).map_or(&[][..], Vec::as_slice);
        waits.iter().all(|&e| e >= place || state.ended[e])
    }

    fn ds(&self, taken: &Taken) -> &'a str {
        &self.dates[taken.place]
    }

    fn stop(&self, stop: Stop) {
        self.lock().stops.push(stop);
        self.changed.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // A worker that panicked while holding the lock left a consistent state (numbers
        // and lists): the others may go on reading it.
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
/// on its own thread, each date on the session of the worker that took it), each date
/// once the earlier dates it waits for (`waits`, by place in `dates`) have ended. `each`
/// sees every outcome as it comes, on the calling thread. Returns the outcomes in the
/// order they came, and the stops in the order they came (none: every date was taken).
pub fn each_date<S: Send, T: Send>(
    sessions: Vec<S>,
    (dates, waits): (&[String], &[Vec<usize>]),
    signal: &AtomicI32,
    date: impl Fn(&mut S, &str, &Halt) -> Step<T> + Sync,
    mut each: impl FnMut(&T),
) -> (Vec<T>, Vec<Stop>) {
    let queue = Queue::new(dates, waits, signal);
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
    // The date taken ends (`Taken`'s drop) once its outcome is sent.
    while let Some(taken) = queue.take() {
        match date(&mut session, queue.ds(&taken), &Halt(queue)) {
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

    /// The next date, ended at once.
    fn take<'a>(queue: &Queue<'a>) -> Option<&'a str> {
        queue.take().map(|taken| queue.ds(&taken))
    }

    #[test]
    fn the_queue_hands_out_dates_in_ascending_order_once_each() {
        let dates = days(3);
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &[], &signal);
        let taken: Vec<&str> = std::iter::from_fn(|| take(&queue)).collect();
        assert_eq!(taken, ["2026-02-01", "2026-02-02", "2026-02-03"]);
        assert!(take(&queue).is_none());
        assert!(queue.into_stops().is_empty(), "running out is not a stop");
    }

    #[test]
    fn a_stop_closes_the_queue_for_every_worker() {
        let dates = days(5);
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &[], &signal);
        assert_eq!(take(&queue), Some("2026-02-01"));
        assert_eq!(take(&queue), Some("2026-02-02"));
        queue.stop(Stop::Failed {
            ds: "2026-02-01".into(),
        });
        assert!(take(&queue).is_none());
        assert!(take(&queue).is_none());
        let stops = queue.into_stops();
        assert!(matches!(&stops[..], [Stop::Failed { ds }] if ds == "2026-02-01"));
    }

    #[test]
    fn a_halt_closes_the_queue_before_the_stop_is_said() {
        let dates = days(3);
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &[], &signal);
        assert_eq!(take(&queue), Some("2026-02-01"));
        Halt(&queue).now();
        assert!(take(&queue).is_none());
        assert!(queue.into_stops().is_empty());
    }

    #[test]
    fn a_signal_stops_before_the_next_date_and_is_said_once() {
        let dates = days(4);
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &[], &signal);
        assert_eq!(take(&queue), Some("2026-02-01"));
        signal.store(15, Ordering::SeqCst);
        assert!(take(&queue).is_none());
        assert!(take(&queue).is_none());
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
            (&dates, &[]),
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
            (&dates, &[]),
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
        let queue = Queue::new(&dates, &[], &signal);
        assert_eq!(take(&queue), Some("2026-02-01"));
        signal.store(2, Ordering::SeqCst);
        assert!(take(&queue).is_none());
        assert!(queue.into_stops().is_empty());
    }

    /// Whether `take` on another thread still waits after a while (true), or what it
    /// gave (false, with the date, if any).
    fn waits_on<'a>(queue: &Queue<'a>, then: impl FnOnce()) -> Option<&'a str> {
        std::thread::scope(|scope| {
            let (sender, got) = mpsc::channel();
            scope.spawn(move || sender.send(take(queue)).unwrap());
            let wait = Duration::from_millis(150);
            assert!(got.recv_timeout(wait).is_err(), "the worker waits");
            then();
            got.recv_timeout(Duration::from_secs(5))
                .expect("the worker stopped waiting")
        })
    }

    #[test]
    fn a_date_is_handed_out_once_the_dates_it_waits_for_have_ended() {
        let dates = days(3);
        let waits = [vec![], vec![], vec![0, 1]];
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &waits, &signal);
        let (first, second) = (queue.take().unwrap(), queue.take().unwrap());
        let third = waits_on(&queue, || {
            drop(second);
            std::thread::sleep(Duration::from_millis(150));
            // Still waiting for the first: nothing is skipped ahead to.
            drop(first);
        });
        assert_eq!(third, Some("2026-02-03"));
        assert!(queue.into_stops().is_empty());
    }

    #[test]
    fn a_stop_or_a_halt_ends_a_wait() {
        let dates = days(2);
        let waits = [vec![], vec![0]];
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &waits, &signal);
        let first = queue.take().unwrap();
        let stop = || {
            queue.stop(Stop::Failed {
                ds: "2026-02-01".into(),
            })
        };
        assert_eq!(waits_on(&queue, stop), None);
        drop(first);
        assert!(
            take(&queue).is_none(),
            "closed, though the first date ended"
        );

        let queue = Queue::new(&dates, &waits, &signal);
        let first = queue.take().unwrap();
        assert_eq!(waits_on(&queue, || Halt(&queue).now()), None);
        drop(first);
    }

    #[test]
    fn a_signal_ends_a_wait_and_is_said_for_the_date_that_waited() {
        let dates = days(2);
        let waits = [vec![], vec![0]];
        let signal = AtomicI32::new(0);
        let queue = Queue::new(&dates, &waits, &signal);
        let first = queue.take().unwrap();
        assert_eq!(
            waits_on(&queue, || signal.store(15, Ordering::SeqCst)),
            None
        );
        drop(first);
        let stops = queue.into_stops();
        assert!(
            matches!(&stops[..], [Stop::Signal { sig: 15, ds, during: false }] if ds == "2026-02-02"),
            "{stops:?}"
        );
    }

    /// 28 dates with `waits`, on 4 workers: (date, when it began, when it ended), by a
    /// counter of events.
    fn rolling_run(waits: &[Vec<usize>]) -> Vec<(String, usize, usize)> {
        let dates = days(28);
        let signal = AtomicI32::new(0);
        let clock = std::sync::atomic::AtomicUsize::new(0);
        let tick = || clock.fetch_add(1, Ordering::SeqCst);
        let (outcomes, stops) = each_date(
            vec![(); 4],
            (&dates, waits),
            &signal,
            |_, ds, _: &Halt| {
                let began = tick();
                std::thread::sleep(Duration::from_millis(2));
                Step::Next((ds.to_string(), began, tick()))
            },
            |_| {},
        );
        assert!(stops.is_empty());
        assert_eq!(outcomes.len(), 28);
        outcomes
    }

    #[test]
    fn every_date_begins_after_the_dates_it_waits_for_ended() {
        let waits: Vec<Vec<usize>> = (0..28).map(|i| (i.max(6) - 6..i).collect()).collect();
        let ran = rolling_run(&waits);
        let ended: std::collections::BTreeMap<&str, usize> =
            ran.iter().map(|(ds, _, end)| (ds.as_str(), *end)).collect();
        let dates = days(28);
        for (ds, began, _) in &ran {
            let place = dates.iter().position(|d| d == ds).unwrap();
            for &e in &waits[place] {
                assert!(
                    ended[dates[e].as_str()] < *began,
                    "{ds} began before {}",
                    dates[e]
                );
            }
        }
    }

    #[test]
    fn a_worker_that_panics_ends_the_others_waits() {
        let dates = days(3);
        let waits = [vec![], vec![0], vec![0, 1]];
        let signal = AtomicI32::new(0);
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            each_date(
                vec![(); 3],
                (&dates, &waits),
                &signal,
                |_, ds, _: &Halt| match ds {
                    "2026-02-01" => panic!("a worker panics on purpose"),
                    _ => Step::Next(ds.to_string()),
                },
                |_| {},
            )
        }));
        assert!(
            ran.is_err(),
            "the panic comes through, and nobody waits forever"
        );
    }
}
