//! Signals during a run. The first SIGINT/SIGTERM lets the current date finish, then the
//! run stops; a second one interrupts the current statement, so the date rolls back.
//! With a bound (`--stop-within SECONDS`) the bound elapsing after the first signal does
//! what a second signal does, so a scheduler that kills after a grace period (Airflow:
//! SIGKILL 5 s after its SIGTERM) still finds the run ended whole.
//! Either way the transaction ends whole and the run releases what it holds. Once the run
//! is finishing (releasing and recording its end), signals no longer interrupt. Dropping
//! the guard restores the default.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::db::Interrupter;

pub struct SignalGuard {
    first: Arc<AtomicI32>,
    computing: Arc<AtomicBool>,
    handle: Option<signal_hook::iterator::Handle>,
}

impl SignalGuard {
    /// `interrupt`: one per session of the run, each stopping what its session runs.
    /// `bound`: after the first signal, how long before the statement in flight is
    /// interrupted anyway (None: only a second signal interrupts).
    pub fn install(interrupt: Vec<Interrupter>, bound: Option<Duration>) -> Self {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let first = Arc::new(AtomicI32::new(0));
        let computing = Arc::new(AtomicBool::new(true));
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            return SignalGuard {
                first,
                computing,
                handle: None,
            };
        };
        let handle = signals.handle();
        let (seen, still_computing) = (Arc::clone(&first), Arc::clone(&computing));
        let interrupt = Arc::new(interrupt);
        std::thread::spawn(move || {
            for sig in signals.forever() {
                let repeated = seen
                    .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                    .is_err();
                if repeated && still_computing.load(Ordering::SeqCst) {
                    interrupt.iter().for_each(Interrupter::interrupt);
                }
                if let (false, Some(bound)) = (repeated, bound) {
                    // The bound runs from the first signal; the run may be long gone
                    // when it elapses (then `still_computing` is false: nothing to do).
                    let (interrupt, still_computing) =
                        (Arc::clone(&interrupt), Arc::clone(&still_computing));
                    std::thread::spawn(move || {
                        std::thread::sleep(bound);
                        if still_computing.load(Ordering::SeqCst) {
                            interrupt.iter().for_each(Interrupter::interrupt);
                        }
                    });
                }
            }
        });
        SignalGuard {
            first,
            computing,
            handle: Some(handle),
        }
    }

    /// The run is finishing: a second signal no longer interrupts.
    pub fn finishing(&self) {
        self.computing.store(false, Ordering::SeqCst);
    }

    /// The first signal seen (0: none yet).
    pub fn signal(&self) -> &AtomicI32 {
        &self.first
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            handle.close();
        }
    }
}
