//! Where SSE events are kept so a client can resume a stream after a disconnect.
//!
//! An [`EventStore`] is server-wide: it opens one [`SessionEvents`] per session when the session
//! starts, and every event of that session's streams is appended through it. Keeping the
//! per-session handle in the session means an append never looks the session up again, and an
//! implementation backed by a shared store (a database, Redis) keeps its key prefix there.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery>

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::ids::{EventId, SessionId};

/// Opens the event log of each session. Implemented by [`InMemoryEventStore`]; supply your own
/// to keep events elsewhere.
pub trait EventStore: Send + Sync + 'static {
    /// The event log of `session`, opened once when the session starts.
    fn open(&self, session: &SessionId) -> Arc<dyn SessionEvents>;
}

/// The kept events of one session's streams.
///
/// Implementations must be cheap and must not block: [`append`](Self::append) runs for every
/// event sent.
pub trait SessionEvents: Send + Sync + 'static {
    /// Records one event of one of the session's streams.
    fn append(&self, id: EventId, data: &Arc<str>);

    /// The events of `after.stream` that follow `after`, in order, or `None` when the stream
    /// is unknown (never existed, or its events were evicted).
    fn replay(&self, after: EventId) -> Option<Vec<(EventId, Arc<str>)>>;

    /// The stream has ended: nothing more will be appended to it, and its events may be evicted
    /// after a while.
    fn finish(&self, stream: u64);

    /// The session has ended: all of its events may go.
    fn close(&self);
}

/// The default [`EventStore`]: per session, a ring of the most recent events of all its
/// streams in memory, bounded by a number of events and by their total size; the oldest go
/// first. A finished stream stays resumable for as long as its events are in the ring.
#[derive(Debug, Clone, Copy)]
pub struct InMemoryEventStore {
    max_events: usize,
    max_bytes: usize,
}

impl Default for InMemoryEventStore {
    /// The last 1,024 events of each session, at most 4 MiB of them.
    fn default() -> Self {
        Self::new(1024, 4 * 1024 * 1024)
    }
}

impl InMemoryEventStore {
    /// Keeps, per session, up to `max_events` events and at most `max_bytes` of event data.
    pub fn new(max_events: usize, max_bytes: usize) -> Self {
        Self {
            max_events: max_events.max(1),
            max_bytes,
        }
    }
}

impl EventStore for InMemoryEventStore {
    fn open(&self, _: &SessionId) -> Arc<dyn SessionEvents> {
        Arc::new(InMemorySessionEvents {
            max_events: self.max_events,
            max_bytes: self.max_bytes,
            inner: Mutex::default(),
        })
    }
}

#[derive(Default)]
struct Ring {
    events: VecDeque<(EventId, Arc<str>)>,
    bytes: usize,
}

/// One session's events in an [`InMemoryEventStore`].
struct InMemorySessionEvents {
    max_events: usize,
    max_bytes: usize,
    inner: Mutex<Ring>,
}

impl fmt::Debug for InMemorySessionEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ring = self.lock();
        f.debug_struct("InMemorySessionEvents")
            .field("events", &ring.events.len())
            .field("bytes", &ring.bytes)
            .finish()
    }
}

impl InMemorySessionEvents {
    fn lock(&self) -> std::sync::MutexGuard<'_, Ring> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl SessionEvents for InMemorySessionEvents {
    fn append(&self, id: EventId, data: &Arc<str>) {
        if data.len() > self.max_bytes {
            // Larger than the whole budget: it cannot be kept without losing everything else.
            return;
        }
        let mut ring = self.lock();
        ring.bytes += data.len();
        ring.events.push_back((id, data.clone()));
        while ring.events.len() > self.max_events || ring.bytes > self.max_bytes {
            let Some((_, old)) = ring.events.pop_front() else {
                break;
            };
            ring.bytes -= old.len();
        }
    }

    fn replay(&self, after: EventId) -> Option<Vec<(EventId, Arc<str>)>> {
        let ring = self.lock();
        let mut known = false;
        let events = ring
            .events
            .iter()
            .filter(|(id, _)| id.stream == after.stream)
            .inspect(|_| known = true)
            .filter(|(id, _)| id.seq > after.seq)
            .map(|(id, data)| (*id, data.clone()))
            .collect();
        known.then_some(events)
    }

    fn finish(&self, _: u64) {
        // Events of finished streams leave the ring in their turn, with everything else.
    }

    fn close(&self) {
        let mut ring = self.lock();
        ring.events = VecDeque::new();
        ring.bytes = 0;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn id(stream: u64, seq: u64) -> EventId {
        EventId { stream, seq }
    }

    #[test]
    fn replays_what_follows_in_its_stream_only() {
        let events = InMemoryEventStore::default().open(&SessionId::stdio());
        events.append(id(1, 1), &Arc::from("a1"));
        events.append(id(2, 1), &Arc::from("b1"));
        events.append(id(1, 2), &Arc::from("a2"));
        let replay = events.replay(id(1, 1)).unwrap();
        assert_eq!(replay, vec![(id(1, 2), Arc::from("a2"))]);
        assert_eq!(events.replay(id(1, 2)).unwrap(), Vec::new());
        assert!(events.replay(id(3, 0)).is_none(), "an unknown stream");
        events.close();
        assert!(events.replay(id(1, 0)).is_none());
    }

    #[test]
    fn the_oldest_events_go_first_by_count_and_by_size() {
        let events = InMemoryEventStore::new(2, 100).open(&SessionId::stdio());
        for seq in 1..=3 {
            events.append(id(1, seq), &Arc::from(format!("e{seq}")));
        }
        // Two events are kept: event 1 made room.
        let replay = events.replay(id(1, 0)).unwrap();
        assert_eq!(
            replay.iter().map(|(id, _)| id.seq).collect::<Vec<_>>(),
            vec![2, 3]
        );

        let events = InMemoryEventStore::new(100, 10).open(&SessionId::stdio());
        events.append(id(1, 1), &Arc::from("123456"));
        events.append(id(2, 1), &Arc::from("7890ab"));
        // Twelve bytes do not fit in ten: the older stream's event went.
        assert!(events.replay(id(1, 0)).is_none());
        assert_eq!(events.replay(id(2, 0)).unwrap().len(), 1);
        // An event larger than the whole budget is not kept at all.
        events.append(id(3, 1), &Arc::from("x".repeat(11)));
        assert!(events.replay(id(3, 0)).is_none());
        assert_eq!(events.replay(id(2, 0)).unwrap().len(), 1);
    }
}
