//! The park: implicit-style calls waiting for the retry of their `input_required` round, by
//! the id their sealed `requestState` names. One per server, bounded in count (a call that
//! finds it full is dropped and replayed by its retry) and in time (each parked call expires
//! after the park's time to live). Every parked call is counted in the transport's
//! `parked_calls` gauge.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use actix_mcp_actors::dev::{Counted, Counting, Metrics};

use super::call::CallLink;

/// The parked calls of one server. See the module docs.
pub(crate) struct ParkTable {
    calls: Mutex<HashMap<String, (Arc<CallLink>, Counting)>>,
    limit: usize,
    ttl: Duration,
}

impl fmt::Debug for ParkTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParkTable")
            .field("parked", &self.lock().len())
            .field("limit", &self.limit)
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl ParkTable {
    /// A park for at most `limit` calls, each for at most `ttl`.
    pub(crate) fn new(limit: usize, ttl: Duration) -> Self {
        Self {
            calls: Mutex::default(),
            limit,
            ttl,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, (Arc<CallLink>, Counting)>> {
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How long a call stays parked.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Parks `link` (again); `false` when the park is full.
    pub(crate) fn park(&self, link: Arc<CallLink>, metrics: &Arc<Metrics>) -> bool {
        let mut calls = self.lock();
        if calls.contains_key(link.id()) {
            return true;
        }
        if calls.len() >= self.limit {
            tracing::debug!(
                limit = self.limit,
                "the park is full; the call will be replayed"
            );
            return false;
        }
        calls.insert(
            link.id().to_owned(),
            (link, metrics.hold(Counted::ParkedCall)),
        );
        true
    }

    /// Takes a parked call out to resume it; `None` when it is not (or no longer) here.
    pub(crate) fn take(&self, id: &str) -> Option<Arc<CallLink>> {
        self.lock().remove(id).map(|(link, _gauge)| link)
    }

    /// Halts every call parked by a request of the transport whose gauges are `transport` (it
    /// drains: a retry would be refused here, and replays the call wherever it lands).
    pub(crate) fn halt_on(&self, transport: &Arc<Metrics>) {
        let mut halted = Vec::new();
        self.lock().retain(|_, (link, counting)| {
            if counting.metrics().same_as(transport) {
                halted.push(link.clone());
                false
            } else {
                true
            }
        });
        for link in halted {
            link.halt();
        }
    }

    /// Forgets a call (it stopped).
    pub(crate) fn remove(&self, id: &str) {
        let removed = self.lock().remove(id);
        drop(removed);
    }
}
