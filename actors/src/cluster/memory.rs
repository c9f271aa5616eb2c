//! The in-process implementations of the cluster traits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::StreamExt as _;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use tokio::sync::broadcast;
use tokio::time::Instant;

use super::{
    Bus, Envelope, NodeId, Recipients, SessionRecord, SessionStore, StateUpdate, StoreFuture,
};
use crate::ids::SessionId;

/// A [`SessionStore`] in this process's memory: for several endpoints of one process sharing
/// their sessions, and for tests. Expired records are dropped as they are met, and by a purge
/// every 1,024 writes.
#[derive(Debug, Clone, Default)]
pub struct InMemorySessionStore {
    inner: Arc<Mutex<Records>>,
}

#[derive(Debug, Default)]
struct Records {
    records: HashMap<SessionId, (Arc<SessionRecord>, Instant)>,
    /// Claimed keys ([`SessionStore::claim_once`]) until they expire.
    claims: HashMap<String, Instant>,
    writes: usize,
}

impl Records {
    fn live(&mut self, id: &SessionId) -> Option<&mut (Arc<SessionRecord>, Instant)> {
        let now = Instant::now();
        if self.records.get(id).is_some_and(|(_, until)| *until <= now) {
            self.records.remove(id);
        }
        self.records.get_mut(id)
    }

    fn wrote(&mut self) {
        self.writes += 1;
        if self.writes.is_multiple_of(1024) {
            let now = Instant::now();
            self.records.retain(|_, (_, until)| *until > now);
            self.claims.retain(|_, until| *until > now);
        }
    }
}

impl InMemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Live records.
    pub fn len(&self) -> usize {
        let now = Instant::now();
        self.lock()
            .records
            .values()
            .filter(|(_, until)| *until > now)
            .count()
    }

    /// Whether no record is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Records> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(Ok(value)))
}

impl SessionStore for InMemorySessionStore {
    fn claim_once<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        let mut records = self.lock();
        let now = Instant::now();
        let fresh = records.claims.get(key).is_none_or(|until| *until <= now);
        if fresh {
            records.claims.insert(key.to_owned(), now + ttl);
            records.wrote();
        }
        ready(fresh)
    }

    fn create<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        let mut records = self.lock();
        if records.live(&record.id).is_some() {
            return ready(false);
        }
        records.records.insert(
            record.id.clone(),
            (Arc::new(record.clone()), Instant::now() + ttl),
        );
        records.wrote();
        ready(true)
    }

    fn load<'a>(
        &'a self,
        id: &'a SessionId,
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        let mut records = self.lock();
        let found = records.live(id).map(|(record, until)| {
            *until = Instant::now() + ttl;
            record.clone()
        });
        ready(found)
    }

    fn establish<'a>(&'a self, id: &'a SessionId, ttl: Duration) -> StoreFuture<'a, bool> {
        let mut records = self.lock();
        let known = match records.live(id) {
            Some((record, until)) => {
                if !record.established {
                    let mut changed = SessionRecord::clone(record);
                    changed.established = true;
                    changed.revision += 1;
                    *record = Arc::new(changed);
                }
                *until = Instant::now() + ttl;
                true
            }
            None => false,
        };
        ready(known)
    }

    fn update<'a>(
        &'a self,
        id: &'a SessionId,
        updates: &'a [StateUpdate],
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        let mut records = self.lock();
        let updated = records.live(id).map(|(record, until)| {
            let mut changed = SessionRecord::clone(record);
            for update in updates {
                update.apply_to(&mut changed.state);
            }
            changed.revision += 1;
            *record = Arc::new(changed);
            *until = Instant::now() + ttl;
            record.clone()
        });
        records.wrote();
        ready(updated)
    }

    fn save<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        let mut records = self.lock();
        let saved = match records.live(&record.id) {
            Some(entry) => {
                *entry = (Arc::new(record.clone()), Instant::now() + ttl);
                true
            }
            None => false,
        };
        records.wrote();
        ready(saved)
    }

    fn delete<'a>(&'a self, id: &'a SessionId) -> StoreFuture<'a, bool> {
        let mut records = self.lock();
        let live = records.live(id).is_some();
        records.records.remove(id);
        ready(live)
    }

    fn count(&self) -> StoreFuture<'_, Option<usize>> {
        ready(Some(self.len()))
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        ready(())
    }
}

/// A [`Bus`] inside one process: every subscriber gets every message meant for it. Messages a
/// slow subscriber has not taken when 4,096 more are sent are lost to it (logged).
#[derive(Debug, Clone)]
pub struct LocalBus {
    sender: broadcast::Sender<Envelope>,
    /// How many times a subscriber fell behind (and lost messages): the bus's
    /// [`continuity`](Bus::continuity).
    lagged: Arc<AtomicU64>,
}

impl Default for LocalBus {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalBus {
    /// A bus with no subscriber yet.
    pub fn new() -> Self {
        Self {
            sender: broadcast::channel(4096).0,
            lagged: Arc::default(),
        }
    }
}

impl Bus for LocalBus {
    fn publish(&self, envelope: Envelope) -> StoreFuture<'_, ()> {
        // No subscriber is not an error: no other node is there to tell.
        let _ = self.sender.send(envelope);
        ready(())
    }

    fn subscribe(&self, node: &NodeId) -> BoxFuture<'static, BoxStream<'static, Envelope>> {
        let node = node.clone();
        let receiver = self.sender.subscribe();
        let lagged = self.lagged.clone();
        let stream = futures::stream::unfold(receiver, move |mut receiver| {
            let lagged = lagged.clone();
            async move {
                loop {
                    match receiver.recv().await {
                        Ok(envelope) => return Some((envelope, receiver)),
                        Err(broadcast::error::RecvError::Lagged(missed)) => {
                            lagged.fetch_add(1, Ordering::AcqRel);
                            tracing::warn!(
                                missed,
                                "a node fell behind its bus; messages were lost"
                            );
                        }
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            }
        })
        .filter(move |envelope| {
            let mine = envelope.from != node
                && match &envelope.to {
                    Recipients::All => true,
                    Recipients::Node(to) => *to == node,
                };
            std::future::ready(mine)
        })
        .boxed();
        Box::pin(std::future::ready(stream))
    }

    fn continuity(&self) -> Option<u64> {
        Some(self.lagged.load(Ordering::Acquire))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::BusMessage;
    use futures::FutureExt as _;

    fn record(id: &str) -> SessionRecord {
        SessionRecord {
            id: SessionId::parse(id).expect("id"),
            owner: None,
            established: true,
            revision: 0,
            state: serde_json::json!({"v": 1}),
        }
    }

    fn now<T>(future: StoreFuture<'_, T>) -> T {
        future.now_or_never().expect("ready").expect("ok")
    }

    #[tokio::test(start_paused = true)]
    async fn records_expire_unless_loaded() {
        let store = InMemorySessionStore::new();
        let ttl = Duration::from_secs(10);
        assert!(now(store.create(&record("a"), ttl)));
        assert!(!now(store.create(&record("a"), ttl)));
        tokio::time::advance(Duration::from_secs(8)).await;
        assert!(now(store.load(&record("a").id, ttl)).is_some());
        tokio::time::advance(Duration::from_secs(8)).await;
        assert!(now(store.load(&record("a").id, ttl)).is_some());
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(now(store.load(&record("a").id, ttl)).is_none());
        assert!(!now(store.save(&record("a"), ttl)));
        assert_eq!(now(store.count()), Some(0));
    }

    #[tokio::test]
    async fn updates_apply_to_the_stored_record_and_raise_its_revision() {
        let store = InMemorySessionStore::new();
        let ttl = Duration::from_secs(10);
        let id = record("u").id;
        assert!(now(store.create(&record("u"), ttl)));
        let insert = |item: &str| StateUpdate::Insert {
            field: "subs".into(),
            item: item.into(),
        };
        // Two nodes' changes, each made on what it read first: both are kept.
        let first = now(store.update(&id, &[insert("a")], ttl)).expect("live");
        let second = now(store.update(
            &id,
            &[StateUpdate::Set {
                field: "level".into(),
                value: "debug".into(),
            }],
            ttl,
        ))
        .expect("live");
        assert_eq!(first.revision, 1);
        assert_eq!(second.revision, 2);
        assert_eq!(second.state["subs"], serde_json::json!(["a"]));
        assert_eq!(second.state["level"], "debug");
        let third = now(store.update(
            &id,
            &[
                insert("b"),
                insert("a"),
                StateUpdate::Remove {
                    field: "subs".into(),
                    item: "a".into(),
                },
                StateUpdate::Set {
                    field: "level".into(),
                    value: serde_json::Value::Null,
                },
            ],
            ttl,
        ))
        .expect("live");
        assert_eq!(third.state, serde_json::json!({"v": 1, "subs": ["b"]}));
        // Established already: nothing changes.
        assert!(now(store.establish(&id, ttl)));
        let loaded = now(store.load(&id, ttl)).expect("live");
        assert_eq!(loaded.revision, 3);
        assert!(now(store.update(&record("gone").id, &[insert("x")], ttl)).is_none());
    }

    #[tokio::test]
    async fn delete_ends_a_record() {
        let store = InMemorySessionStore::new();
        let ttl = Duration::from_secs(10);
        assert!(now(store.create(&record("b"), ttl)));
        assert!(now(store.delete(&record("b").id)));
        assert!(!now(store.delete(&record("b").id)));
        assert!(now(store.load(&record("b").id, ttl)).is_none());
    }

    #[tokio::test]
    async fn the_bus_delivers_to_the_others_only() {
        let bus = LocalBus::new();
        let (a, b, c) = (NodeId::new("a"), NodeId::new("b"), NodeId::new("c"));
        let mut at_a = bus.subscribe(&a).await;
        let mut at_b = bus.subscribe(&b).await;
        let mut at_c = bus.subscribe(&c).await;
        let closed = |to| Envelope {
            from: a.clone(),
            to,
            message: BusMessage::Closed {
                session: record("s").id,
            },
        };
        now(bus.publish(closed(Recipients::Node(c.clone()))));
        now(bus.publish(closed(Recipients::All)));
        let first_c = at_c.next().await.expect("c gets its own");
        assert_eq!(first_c.to, Recipients::Node(c.clone()));
        assert_eq!(at_c.next().await.expect("c gets all").to, Recipients::All);
        assert_eq!(at_b.next().await.expect("b gets all").to, Recipients::All);
        assert!(
            at_a.next().now_or_never().is_none(),
            "a hears nothing of itself"
        );
    }

    #[tokio::test]
    async fn a_subscriber_that_falls_behind_changes_the_continuity() {
        let bus = LocalBus::new();
        let (a, b) = (NodeId::new("a"), NodeId::new("b"));
        let mut at_b = bus.subscribe(&b).await;
        let closed = || Envelope {
            from: a.clone(),
            to: Recipients::All,
            message: BusMessage::Closed {
                session: record("s").id,
            },
        };
        let before = bus.continuity();
        assert!(before.is_some(), "an in-process bus can tell");
        now(bus.publish(closed()));
        assert!(at_b.next().await.is_some());
        assert_eq!(bus.continuity(), before, "nothing lost");
        // More than the channel holds, unread: the oldest are lost.
        for _ in 0..4097 {
            now(bus.publish(closed()));
        }
        assert!(at_b.next().await.is_some());
        assert_ne!(bus.continuity(), before, "messages were lost");
    }
}
