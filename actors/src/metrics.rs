//! Live counts of the runtime's actors, for observability and leak tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Gauges shared by every actor of one server.
#[derive(Debug, Default)]
pub struct Metrics {
    sessions: AtomicUsize,
    in_flight: AtomicUsize,
    streams: AtomicUsize,
    tool_calls: AtomicUsize,
    peer_requests: AtomicUsize,
    parked_calls: AtomicUsize,
    listeners: AtomicUsize,
    tasks: AtomicUsize,
}

/// A point-in-time copy of [`Metrics`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct MetricsSnapshot {
    /// Live session actors.
    pub sessions: usize,
    /// Live in-flight request actors.
    pub in_flight: usize,
    /// Live SSE stream actors.
    pub streams: usize,
    /// Live tool-call actors.
    pub tool_calls: usize,
    /// Server-to-client requests awaiting an answer.
    pub peer_requests: usize,
    /// Calls parked while their client answers an `input_required` round (2026-07-28).
    pub parked_calls: usize,
    /// Open `subscriptions/listen` streams (2026-07-28).
    pub listeners: usize,
    /// Tasks of the Tasks extension running here.
    pub tasks: usize,
}

/// Which gauge to move.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Gauge {
    Sessions,
    InFlight,
    Streams,
    ToolCalls,
    PeerRequests,
    ParkedCalls,
    Listeners,
    Tasks,
}

/// What the protocol layer counts in a transport's gauges, as long as a [`Counting`] guard
/// lives: work that outlives the request that started it, owned by the server rather than by
/// a session or a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Counted {
    /// A call parked while its client answers an `input_required` round.
    ParkedCall,
    /// An open `subscriptions/listen` stream.
    Listener,
    /// A running task.
    Task,
}

impl Metrics {
    fn gauge(&self, gauge: Gauge) -> &AtomicUsize {
        match gauge {
            Gauge::Sessions => &self.sessions,
            Gauge::InFlight => &self.in_flight,
            Gauge::Streams => &self.streams,
            Gauge::ToolCalls => &self.tool_calls,
            Gauge::PeerRequests => &self.peer_requests,
            Gauge::ParkedCalls => &self.parked_calls,
            Gauge::Listeners => &self.listeners,
            Gauge::Tasks => &self.tasks,
        }
    }

    pub(crate) fn inc(&self, gauge: Gauge) {
        self.gauge(gauge).fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn dec(&self, gauge: Gauge) {
        self.gauge(gauge).fetch_sub(1, Ordering::Relaxed);
    }

    /// Reads every gauge.
    pub fn snapshot(&self) -> MetricsSnapshot {
        MetricsSnapshot {
            sessions: self.sessions.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            streams: self.streams.load(Ordering::Relaxed),
            tool_calls: self.tool_calls.load(Ordering::Relaxed),
            peer_requests: self.peer_requests.load(Ordering::Relaxed),
            parked_calls: self.parked_calls.load(Ordering::Relaxed),
            listeners: self.listeners.load(Ordering::Relaxed),
            tasks: self.tasks.load(Ordering::Relaxed),
        }
    }

    /// Counts one `what` until the returned guard is dropped.
    pub fn hold(self: &Arc<Self>, what: Counted) -> Counting {
        let gauge = match what {
            Counted::ParkedCall => Gauge::ParkedCalls,
            Counted::Listener => Gauge::Listeners,
            Counted::Task => Gauge::Tasks,
        };
        self.inc(gauge);
        Counting {
            metrics: self.clone(),
            gauge,
        }
    }

    /// Whether `self` and `other` are one transport's gauges.
    pub fn same_as(self: &Arc<Self>, other: &Arc<Self>) -> bool {
        Arc::ptr_eq(self, other)
    }
}

/// One counted thing (see [`Metrics::hold`]), for as long as it lives.
#[derive(Debug)]
#[must_use = "the thing is uncounted as soon as the guard is dropped"]
pub struct Counting {
    metrics: Arc<Metrics>,
    gauge: Gauge,
}

impl Counting {
    /// The gauges it counts in (its transport's).
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.metrics.dec(self.gauge);
    }
}
