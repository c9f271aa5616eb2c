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
}

/// A point-in-time copy of [`Metrics`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
        }
    }

    /// Counts one parked call until the returned guard is dropped.
    pub fn hold_parked(self: &Arc<Self>) -> ParkedGauge {
        self.inc(Gauge::ParkedCalls);
        ParkedGauge(self.clone())
    }
}

/// One parked call in [`MetricsSnapshot::parked_calls`], for as long as it lives.
#[derive(Debug)]
#[must_use = "the call is uncounted as soon as the guard is dropped"]
pub struct ParkedGauge(Arc<Metrics>);

impl Drop for ParkedGauge {
    fn drop(&mut self) {
        self.0.dec(Gauge::ParkedCalls);
    }
}
