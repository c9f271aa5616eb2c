//! Where SSE events are kept so a client can resume a stream after a disconnect.
//!
//! An [`EventStore`] is server-wide: it opens one [`SessionEvents`] per session when the session
//! starts, and every event of that session's streams is appended through it. Keeping the
//! per-session handle in the session means an append never looks the session up again, and an
//! implementation backed by a shared store (a database, Redis) keeps its key prefix there.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery>

use std::collections::{HashMap, VecDeque};
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

/// The default [`EventStore`]: per session, bounded ring buffers in memory, keeping the events
/// of the most recently finished streams for late resumption.
#[derive(Debug, Clone, Copy)]
pub struct InMemoryEventStore {
    per_stream: usize,
    finished_per_session: usize,
}

impl Default for InMemoryEventStore {
    /// 256 events per stream, the last 64 finished streams of each session.
    fn default() -> Self {
        Self::new(256, 64)
    }
}

impl InMemoryEventStore {
    /// Keeps up to `per_stream` events of each stream, and the events of up to
    /// `finished_per_session` finished streams of each session.
    pub fn new(per_stream: usize, finished_per_session: usize) -> Self {
        Self {
            per_stream: per_stream.max(1),
            finished_per_session,
        }
    }
}

impl EventStore for InMemoryEventStore {
    fn open(&self, _: &SessionId) -> Arc<dyn SessionEvents> {
        Arc::new(InMemorySessionEvents {
            per_stream: self.per_stream,
            finished_per_session: self.finished_per_session,
            inner: Mutex::default(),
        })
    }
}

/// The buffered events of one stream: (sequence number, data).
type StreamBuffer = VecDeque<(u64, Arc<str>)>;

#[derive(Default)]
struct SessionInner {
    streams: HashMap<u64, StreamBuffer, foldhash::fast::RandomState>,
    finished: VecDeque<u64>,
}

/// One session's events in an [`InMemoryEventStore`].
struct InMemorySessionEvents {
    per_stream: usize,
    finished_per_session: usize,
    inner: Mutex<SessionInner>,
}

impl fmt::Debug for InMemorySessionEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.lock();
        f.debug_struct("InMemorySessionEvents")
            .field("streams", &inner.streams.len())
            .field("finished", &inner.finished.len())
            .finish()
    }
}

impl InMemorySessionEvents {
    fn lock(&self) -> std::sync::MutexGuard<'_, SessionInner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl SessionEvents for InMemorySessionEvents {
    fn append(&self, id: EventId, data: &Arc<str>) {
        let mut inner = self.lock();
        let buffer = inner.streams.entry(id.stream).or_default();
        if buffer.len() == self.per_stream {
            buffer.pop_front();
        }
        buffer.push_back((id.seq, data.clone()));
    }

    fn replay(&self, after: EventId) -> Option<Vec<(EventId, Arc<str>)>> {
        let inner = self.lock();
        let buffer = inner.streams.get(&after.stream)?;
        Some(
            buffer
                .iter()
                .filter(|(seq, _)| *seq > after.seq)
                .map(|(seq, data)| {
                    let id = EventId {
                        stream: after.stream,
                        seq: *seq,
                    };
                    (id, data.clone())
                })
                .collect(),
        )
    }

    fn finish(&self, stream: u64) {
        let mut inner = self.lock();
        if !inner.streams.contains_key(&stream) {
            return;
        }
        inner.finished.push_back(stream);
        while inner.finished.len() > self.finished_per_session {
            let Some(old) = inner.finished.pop_front() else {
                break;
            };
            inner.streams.remove(&old);
        }
    }

    fn close(&self) {
        let mut inner = self.lock();
        inner.streams = HashMap::default();
        inner.finished = VecDeque::new();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn id(stream: u64, seq: u64) -> EventId {
        EventId { stream, seq }
    }

    fn session() -> Arc<dyn SessionEvents> {
        InMemoryEventStore::new(2, 1).open(&SessionId::stdio())
    }

    #[test]
    fn replays_what_follows_and_keeps_the_last_events_of_a_stream() {
        let events = session();
        for seq in 1..=3 {
            events.append(id(1, seq), &Arc::from(format!("e{seq}")));
        }
        let replay = events.replay(id(1, 1)).unwrap();
        // Only two are kept per stream: event 1 was evicted, 2 and 3 follow event 1.
        assert_eq!(replay.len(), 2);
        assert_eq!(replay[0], (id(1, 2), Arc::from("e2")));
        assert_eq!(events.replay(id(1, 3)).unwrap(), Vec::new());
        assert!(events.replay(id(2, 0)).is_none());
    }

    #[test]
    fn finished_streams_are_evicted_oldest_first_and_close_forgets_everything() {
        let events = session();
        events.append(id(1, 1), &Arc::from("a"));
        events.append(id(2, 1), &Arc::from("b"));
        events.finish(1);
        assert!(events.replay(id(1, 0)).is_some());
        events.finish(2);
        // One finished stream is kept per session: stream 1 made room for stream 2.
        assert!(events.replay(id(1, 0)).is_none());
        assert!(events.replay(id(2, 0)).is_some());
        events.close();
        assert!(events.replay(id(2, 0)).is_none());
    }
}
