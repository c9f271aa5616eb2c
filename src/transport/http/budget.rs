//! The server-wide budget of request bytes in flight: the sum of the body sizes of the POSTs
//! being read or worked on. Every POST reserves its body's size (its `Content-Length` at once,
//! or chunk by chunk as a chunked body arrives); a notification or response releases it once
//! handled, a request when its work ends (answered or cancelled; a task or a blocking tool
//! that runs on keeps it), whether or not its client is still connected. A POST that does not
//! fit is refused 503 with `Retry-After`, before more of its body is read.
//!
//! Bounding each body ([`McpHttpBuilder::body_limit`](super::McpHttpBuilder::body_limit)) does not bound
//! them all: many clients sending large bodies at once, or holding large requests in flight
//! behind slow tools, would otherwise hold as much memory as they like.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The budget shared by an endpoint's workers.
#[derive(Debug)]
pub(super) struct ByteBudget {
    limit: usize,
    used: AtomicUsize,
}

impl ByteBudget {
    pub(super) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    /// The bytes reserved now.
    #[cfg(test)]
    pub(super) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// The most bytes that may be reserved at once.
    pub(super) fn limit(&self) -> usize {
        self.limit
    }

    fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .is_ok()
    }

    /// Reserves `bytes`, or `None` when they do not fit.
    pub(super) fn reserve(self: &Arc<Self>, bytes: usize) -> Option<Reservation> {
        self.take(bytes).then(|| Reservation {
            budget: self.clone(),
            bytes,
        })
    }
}

/// Bytes of the budget held by one request; released when dropped.
#[derive(Debug)]
pub(super) struct Reservation {
    budget: Arc<ByteBudget>,
    bytes: usize,
}

impl Reservation {
    /// Grows the reservation to `total` bytes; `false` (and unchanged) when they do not fit.
    pub(super) fn grow_to(&mut self, total: usize) -> bool {
        if total <= self.bytes {
            return true;
        }
        if self.budget.take(total - self.bytes) {
            self.bytes = total;
            true
        } else {
            false
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_fit_the_limit_and_are_released_when_dropped() {
        let budget = ByteBudget::new(100);
        let first = budget.reserve(60);
        assert!(first.is_some());
        assert!(budget.reserve(50).is_none());
        let mut second = budget.reserve(0).unwrap_or_else(|| unreachable!());
        assert!(second.grow_to(40));
        assert!(!second.grow_to(41));
        assert_eq!(budget.used(), 100);
        drop(first);
        assert!(second.grow_to(90));
        drop(second);
        assert_eq!(budget.used(), 0);
    }
}
