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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::ids::{EventId, SessionId};

/// Opens the event log of each session. Implemented by [`InMemoryEventStore`]; supply your own
/// to keep events elsewhere.
pub trait EventStore: Send + Sync + 'static {
    /// The event log of `session`, opened once when the session starts.
    fn open(&self, session: &SessionId) -> Arc<dyn SessionEvents>;

    /// Writes out whatever the store still buffers, so that clients can resume their streams
    /// elsewhere (another node sharing the store). Called once as a server drains, after its
    /// streams are closed. The default has nothing to write.
    fn flush(&self) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// The kept events of one session's streams.
///
/// Implementations must be cheap and must not block: [`append`](Self::append) runs for every
/// event sent.
pub trait SessionEvents: Send + Sync + 'static {
    /// Records one event of one of the session's streams.
    fn append(&self, id: EventId, data: &Arc<str>);

    /// What this process holds of `after.stream` after `after`, at once: the resume of a live
    /// stream reads it under its log's lock, so that no event falls between the replay and
    /// the new connection.
    fn replay_here(&self, after: EventId) -> Replay;

    /// What is kept of `after.stream` after `after`, wherever it is kept (a store shared by
    /// the nodes of a cluster answers over the network): the resume of a finished stream, or
    /// of one that lived on another node. By default, [`replay_here`](Self::replay_here).
    fn replay(&self, after: EventId) -> ReplayFuture {
        Box::pin(std::future::ready(self.replay_here(after)))
    }

    /// Whether the events of `stream` are kept only on the node that served it (a store shared
    /// by the nodes of a cluster that keeps requests' streams on their node): a resume that
    /// finds nothing of it here then asks the other nodes for it (see
    /// [`Relay::replay_elsewhere`](crate::dev::Relay::replay_elsewhere)). By default `false`.
    fn kept_on_its_node(&self, stream: u64) -> bool {
        let _ = stream;
        false
    }

    /// The stream has ended: nothing more will be appended to it, and its events may be evicted
    /// after a while.
    fn finish(&self, stream: u64);

    /// The session has ended: all of its events may go.
    fn close(&self);
}

/// The answer of [`SessionEvents::replay`].
pub type ReplayFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Replay> + Send>>;

/// What an [`SessionEvents::replay`] found after an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay {
    /// The stream is unknown: it never existed, or nothing of it is remembered.
    Unknown,
    /// The kept events that follow, in order. With `gap`, some events that followed were
    /// evicted before they could be replayed (the budget ran out): the client missed them.
    Events {
        /// The events, oldest first.
        events: Vec<(EventId, Arc<str>)>,
        /// Some events after the requested one are gone.
        gap: bool,
    },
}

/// The default [`EventStore`]: per session, a ring of the most recent events of all its
/// streams in memory, bounded by a number of events and by bytes at three levels: per stream,
/// per session, and for the whole server. The oldest events of the stream or session that
/// goes over its budget go first; when the server's budget is held by other sessions, the
/// appending session gives up its own oldest events, and an event that still does not fit is
/// not kept. A resume that asks for evicted events is told so ([`Replay::Events::gap`]).
///
/// A finished stream stays resumable for as long as its events are in the ring.
#[derive(Debug, Clone)]
pub struct InMemoryEventStore {
    max_events: usize,
    max_bytes: usize,
    max_stream_bytes: usize,
    server: Arc<ServerBudget>,
}

/// The server-wide byte budget, shared by every session of one store.
#[derive(Debug)]
struct ServerBudget {
    max: usize,
    used: AtomicUsize,
}

impl ServerBudget {
    /// Takes `bytes` if they fit.
    fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.max)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// The default per-session budget: 4 MiB.
const DEFAULT_SESSION_BYTES: usize = 4 * 1024 * 1024;
/// The default server budget: 256 MiB.
const DEFAULT_SERVER_BYTES: usize = 256 * 1024 * 1024;
/// How many eviction marks a session remembers, about one per stream (a stream whose mark was
/// forgotten and whose events are all gone is [`Replay::Unknown`]).
const MAX_EVICTION_MARKS: usize = 1024;

impl Default for InMemoryEventStore {
    /// The last 1,024 events of each session, at most 4 MiB of them per session and per
    /// stream, and at most 256 MiB for the whole server.
    fn default() -> Self {
        Self::new(1024, DEFAULT_SESSION_BYTES)
    }
}

impl InMemoryEventStore {
    /// Keeps, per session, up to `max_events` events and at most `max_bytes` of event data
    /// (also the per-stream budget), within the default server budget of 256 MiB.
    pub fn new(max_events: usize, max_bytes: usize) -> Self {
        Self {
            max_events: max_events.max(1),
            max_bytes,
            max_stream_bytes: max_bytes,
            server: Arc::new(ServerBudget {
                max: DEFAULT_SERVER_BYTES,
                used: AtomicUsize::new(0),
            }),
        }
    }

    /// At most `bytes` of event data per stream (at most the session's budget).
    #[must_use]
    pub fn max_stream_bytes(mut self, bytes: usize) -> Self {
        self.max_stream_bytes = bytes;
        self
    }

    /// At most `bytes` of event data for all sessions together. Sessions opened before this
    /// call keep the budget they were opened with.
    #[must_use]
    pub fn max_server_bytes(mut self, bytes: usize) -> Self {
        self.server = Arc::new(ServerBudget {
            max: bytes,
            used: AtomicUsize::new(0),
        });
        self
    }

    /// The bytes of event data held now, by all sessions.
    pub fn bytes_held(&self) -> usize {
        self.server.used.load(Ordering::Acquire)
    }
}

impl EventStore for InMemoryEventStore {
    fn open(&self, _: &SessionId) -> Arc<dyn SessionEvents> {
        Arc::new(InMemorySessionEvents {
            max_events: self.max_events,
            max_bytes: self.max_bytes,
            max_stream_bytes: self.max_stream_bytes.min(self.max_bytes),
            server: self.server.clone(),
            inner: Mutex::default(),
        })
    }
}

/// One session's kept events. Appending and evicting touch only the two ends of its deques
/// (no map is looked up per event): what a stream holds is counted by a scan, needed only when
/// the whole session holds more than one stream may, and eviction marks are a bounded queue
/// whose newest entry is updated in place.
#[derive(Default)]
struct Ring {
    events: VecDeque<(EventId, Arc<str>)>,
    bytes: usize,
    /// Per stream, the highest sequence number evicted (or never kept), oldest mark first; a
    /// stream may have several marks (its newest is the highest). The oldest is forgotten past
    /// [`MAX_EVICTION_MARKS`].
    marks: VecDeque<(u64, u64)>,
}

/// How many of the newest marks an eviction looks at for its stream's mark before adding one.
const MARK_LOOKBACK: usize = 8;

impl Ring {
    fn mark_evicted(&mut self, id: EventId) {
        // Events leave oldest first, so the stream's mark, if any, is among the newest.
        if let Some((_, upto)) = self
            .marks
            .iter_mut()
            .rev()
            .take(MARK_LOOKBACK)
            .find(|(stream, _)| *stream == id.stream)
        {
            *upto = (*upto).max(id.seq);
            return;
        }
        if self.marks.len() == MAX_EVICTION_MARKS {
            self.marks.pop_front();
        }
        self.marks.push_back((id.stream, id.seq));
    }

    fn evicted_upto(&self, stream: u64) -> Option<u64> {
        self.marks
            .iter()
            .filter(|(marked, _)| *marked == stream)
            .map(|(_, upto)| *upto)
            .max()
    }

    /// The bytes the ring holds of `stream`.
    fn stream_bytes(&self, stream: u64) -> usize {
        self.events
            .iter()
            .filter(|(id, _)| id.stream == stream)
            .map(|(_, data)| data.len())
            .sum()
    }

    /// Removes the event at `index`; returns its size.
    fn evict(&mut self, index: usize) -> usize {
        let Some((id, data)) = self.events.remove(index) else {
            return 0;
        };
        let size = data.len();
        self.bytes -= size;
        self.mark_evicted(id);
        size
    }
}

/// One session's events in an [`InMemoryEventStore`].
struct InMemorySessionEvents {
    max_events: usize,
    max_bytes: usize,
    max_stream_bytes: usize,
    server: Arc<ServerBudget>,
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

    fn replay_now(&self, after: EventId) -> Replay {
        let ring = self.lock();
        let events: Vec<_> = ring
            .events
            .iter()
            .filter(|(id, _)| id.stream == after.stream && id.seq > after.seq)
            .map(|(id, data)| (*id, data.clone()))
            .collect();
        let evicted = ring.evicted_upto(after.stream);
        let known =
            evicted.is_some() || ring.events.iter().any(|(id, _)| id.stream == after.stream);
        if !known {
            return Replay::Unknown;
        }
        Replay::Events {
            events,
            gap: evicted.is_some_and(|upto| upto > after.seq),
        }
    }
}

impl SessionEvents for InMemorySessionEvents {
    fn append(&self, id: EventId, data: &Arc<str>) {
        let size = data.len();
        let mut ring = self.lock();
        if size > self.max_stream_bytes {
            // Larger than a whole stream's budget: it cannot be kept.
            ring.mark_evicted(id);
            return;
        }
        // The stream's own oldest events make room within its budget first (a stream holds
        // no more than its session: only a session past a stream's budget counts its stream).
        let mut freed = 0;
        if ring.bytes + size > self.max_stream_bytes {
            let mut held = ring.stream_bytes(id.stream);
            while held + size > self.max_stream_bytes {
                let Some(index) = ring
                    .events
                    .iter()
                    .position(|(kept, _)| kept.stream == id.stream)
                else {
                    break;
                };
                let size = ring.evict(index);
                held -= size;
                freed += size;
            }
        }
        // Then the session's oldest, by count and by bytes.
        while !ring.events.is_empty()
            && (ring.events.len() + 1 > self.max_events || ring.bytes + size > self.max_bytes)
        {
            freed += ring.evict(0);
        }
        // Then the server's budget: what this session freed is given back first, and the
        // session gives up more of its own oldest events while the server is full.
        self.server.give_back(freed);
        while !self.server.take(size) {
            if ring.events.is_empty() {
                ring.mark_evicted(id);
                return;
            }
            let released = ring.evict(0);
            self.server.give_back(released);
        }
        ring.bytes += size;
        ring.events.push_back((id, data.clone()));
    }

    fn replay_here(&self, after: EventId) -> Replay {
        self.replay_now(after)
    }

    fn finish(&self, _: u64) {
        // Events of finished streams leave the ring in their turn, with everything else.
    }

    fn close(&self) {
        let mut ring = self.lock();
        self.server.give_back(ring.bytes);
        *ring = Ring::default();
    }
}

impl Drop for InMemorySessionEvents {
    fn drop(&mut self) {
        let ring = self
            .inner
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.server.give_back(ring.bytes);
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

    fn now(future: ReplayFuture) -> Replay {
        futures::FutureExt::now_or_never(future).expect("the in-memory store answers at once")
    }

    fn events_of(replay: Replay) -> Vec<u64> {
        match replay {
            Replay::Events { events, .. } => events.iter().map(|(id, _)| id.seq).collect(),
            Replay::Unknown => panic!("an unknown stream"),
        }
    }

    fn gap(replay: &Replay) -> bool {
        matches!(replay, Replay::Events { gap: true, .. })
    }

    #[test]
    fn replays_what_follows_in_its_stream_only() {
        let events = InMemoryEventStore::default().open(&SessionId::stdio());
        events.append(id(1, 1), &Arc::from("a1"));
        events.append(id(2, 1), &Arc::from("b1"));
        events.append(id(1, 2), &Arc::from("a2"));
        assert_eq!(
            now(events.replay(id(1, 1))),
            Replay::Events {
                events: vec![(id(1, 2), Arc::from("a2"))],
                gap: false
            }
        );
        assert_eq!(events_of(now(events.replay(id(1, 2)))), Vec::<u64>::new());
        assert_eq!(now(events.replay(id(3, 0))), Replay::Unknown);
        events.close();
        assert_eq!(now(events.replay(id(1, 0))), Replay::Unknown);
    }

    #[test]
    fn the_oldest_events_go_first_by_count_and_by_size_and_the_gap_is_told() {
        let events = InMemoryEventStore::new(2, 100).open(&SessionId::stdio());
        for seq in 1..=3 {
            events.append(id(1, seq), &Arc::from(format!("e{seq}")));
        }
        // Two events are kept: event 1 made room, so a resume after 0 has a gap.
        let replay = now(events.replay(id(1, 0)));
        assert!(gap(&replay));
        assert_eq!(events_of(replay), vec![2, 3]);
        // After 1 nothing was lost.
        assert!(!gap(&now(events.replay(id(1, 1)))));

        let events = InMemoryEventStore::new(100, 10).open(&SessionId::stdio());
        events.append(id(1, 1), &Arc::from("123456"));
        events.append(id(2, 1), &Arc::from("7890ab"));
        // Twelve bytes do not fit in ten: the older stream's event went, and that is known.
        let replay = now(events.replay(id(1, 0)));
        assert!(gap(&replay));
        assert!(events_of(replay).is_empty());
        assert_eq!(events_of(now(events.replay(id(2, 0)))), vec![1]);
        // An event larger than the whole budget is not kept at all, and its loss is told.
        events.append(id(3, 1), &Arc::from("x".repeat(11)));
        assert!(gap(&now(events.replay(id(3, 0)))));
        assert_eq!(events_of(now(events.replay(id(2, 0)))), vec![1]);
    }

    #[test]
    fn a_stream_over_its_budget_loses_its_own_oldest_events_not_others() {
        let events = InMemoryEventStore::new(100, 100)
            .max_stream_bytes(10)
            .open(&SessionId::stdio());
        events.append(id(1, 1), &Arc::from("aaaa"));
        for seq in 1..=5 {
            events.append(id(2, seq), &Arc::from("bbbb"));
        }
        assert_eq!(events_of(now(events.replay(id(1, 0)))), vec![1]);
        let replay = now(events.replay(id(2, 0)));
        assert!(gap(&replay));
        assert_eq!(events_of(replay), vec![4, 5]);
    }

    #[test]
    fn the_server_budget_bounds_all_sessions_and_is_given_back() {
        let store = InMemoryEventStore::new(100, 100).max_server_bytes(25);
        let first = store.open(&SessionId::stdio());
        let second = store.open(&SessionId::stdio());
        first.append(id(1, 1), &Arc::from("x".repeat(10)));
        first.append(id(1, 2), &Arc::from("x".repeat(10)));
        assert_eq!(store.bytes_held(), 20);
        // The second session cannot take the first's bytes: its event is not kept.
        second.append(id(1, 1), &Arc::from("y".repeat(10)));
        assert_eq!(store.bytes_held(), 20);
        assert!(gap(&now(second.replay(id(1, 0)))));
        // The first session makes room from its own oldest.
        first.append(id(1, 3), &Arc::from("x".repeat(10)));
        assert_eq!(store.bytes_held(), 20);
        assert_eq!(events_of(now(first.replay(id(1, 1)))), vec![2, 3]);
        // Closing and dropping give every byte back.
        first.close();
        assert_eq!(store.bytes_held(), 0);
        second.append(id(1, 2), &Arc::from("y".repeat(10)));
        assert_eq!(store.bytes_held(), 10);
        drop(second);
        assert_eq!(store.bytes_held(), 0);
    }

    #[test]
    fn eviction_marks_are_kept_for_the_newest_streams_and_forgotten_for_the_oldest() {
        let events = InMemoryEventStore::new(4, 1024).open(&SessionId::stdio());
        let streams = 2 * MAX_EVICTION_MARKS as u64;
        for stream in 1..=streams {
            events.append(id(stream, 0), &Arc::from(""));
            events.append(id(stream, 1), &Arc::from("r"));
        }
        // The last two streams are whole; the one before lost both events, and says so.
        assert!(!gap(&now(events.replay(id(streams, 0)))));
        assert_eq!(events_of(now(events.replay(id(streams, 0)))), vec![1]);
        let replay = now(events.replay(id(streams - 2, 0)));
        assert!(gap(&replay));
        assert!(events_of(replay).is_empty());
        // The first streams' marks were forgotten: unknown.
        assert_eq!(now(events.replay(id(1, 0))), Replay::Unknown);
    }
}
