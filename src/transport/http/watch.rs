//! The second poll of a body read that waits, without a timer per request: the reads waiting
//! for it are woken by one sweeper task per worker thread (see [`door`](super::door)'s
//! `within`, which arms the body's real deadline at that poll).
//!
//! A read registers its waker when its first poll finds no body and gives its place up at its
//! next poll (in actix-http's usual order, the same turn). Whatever delays that poll (a
//! middleware that polls the handler later, a client that sends nothing after the head), the
//! sweeper wakes every registered read at least once per [`PERIOD`].

use std::cell::RefCell;
use std::task::Waker;
use std::time::Duration;

/// How often a worker thread's sweeper wakes the body reads still waiting for their second
/// poll: the most a body's deadline can start late.
pub(super) const PERIOD: Duration = Duration::from_millis(250);

#[derive(Default)]
struct Watch {
    reads: slab::Slab<Waker>,
    /// Whether this thread's sweeper runs.
    sweeping: bool,
}

thread_local! {
    static WATCH: RefCell<Watch> = RefCell::default();
}

/// A waiting read's place in its thread's watch, given up when dropped.
#[derive(Debug)]
pub(super) struct Watched(usize);

impl Watched {
    /// Registers the read that `waker` wakes, starting this thread's sweeper if it is not
    /// running (the first time, or on a new runtime).
    pub(super) fn new(waker: &Waker) -> Self {
        WATCH.with_borrow_mut(|watch| {
            if !watch.sweeping {
                watch.sweeping = true;
                actix_rt::spawn(sweep());
            }
            Self(watch.reads.insert(waker.clone()))
        })
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        // (Not during the thread's end, when the watch may be gone already.)
        let _ = WATCH.try_with(|watch| watch.borrow_mut().reads.try_remove(self.0));
    }
}

/// Wakes every registered read once per [`PERIOD`], for as long as its runtime runs.
async fn sweep() {
    /// Marks the sweeper stopped when its runtime drops it, so that the next one starts anew.
    struct Stopped;
    impl Drop for Stopped {
        fn drop(&mut self) {
            let _ = WATCH.try_with(|watch| watch.borrow_mut().sweeping = false);
        }
    }
    let _stopped = Stopped;
    loop {
        tokio::time::sleep(PERIOD).await;
        let waiting: Vec<Waker> =
            WATCH.with_borrow(|watch| watch.reads.iter().map(|(_, w)| w.clone()).collect());
        for waker in waiting {
            waker.wake();
        }
    }
}
