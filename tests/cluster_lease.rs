//! The session lease (`Cluster::session_lease`): a node that holds an established session
//! serves its requests from its own copy, without reading the store, until the lease runs
//! out, the bus brings word of a change or an end made on another node, or the bus may have
//! lost such word. Each node here reads the shared in-memory store through its own counting
//! wrapper, so that the loads each node makes show.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use actix_mcp::cluster::{
    Bus, Cluster, Envelope, InMemorySessionStore, LocalBus, NodeId, SessionId, SessionRecord,
    SessionStore, StateUpdate, StoreFuture,
};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use serde_json::json;

use common::http::{Client, TestServer, eventually, spawn, text_of};
use common::http_tools::{Fixture, fixture};

/// One node's view of the shared store: it counts the node's loads, and can hold the answer
/// of its next load back (read first, answered later: a record that may be older than what
/// happens meanwhile).
#[derive(Debug)]
struct NodeStore {
    inner: Arc<InMemorySessionStore>,
    loads: AtomicUsize,
    hold_next_load: AtomicBool,
}

impl NodeStore {
    fn new(inner: &Arc<InMemorySessionStore>) -> Arc<Self> {
        Arc::new(Self {
            inner: inner.clone(),
            loads: AtomicUsize::new(0),
            hold_next_load: AtomicBool::new(false),
        })
    }

    fn loads(&self) -> usize {
        self.loads.load(Ordering::SeqCst)
    }
}

/// How long a held load's answer waits.
const HELD: Duration = Duration::from_millis(400);

impl SessionStore for NodeStore {
    fn create<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        self.inner.create(record, ttl)
    }

    fn load<'a>(
        &'a self,
        id: &'a SessionId,
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        let hold = self.hold_next_load.swap(false, Ordering::SeqCst);
        Box::pin(async move {
            let record = self.inner.load(id, ttl).await;
            if hold {
                tokio::time::sleep(HELD).await;
            }
            record
        })
    }

    fn touch<'a>(&'a self, ids: &'a [SessionId], ttl: Duration) -> StoreFuture<'a, ()> {
        self.inner.touch(ids, ttl)
    }

    fn establish<'a>(&'a self, id: &'a SessionId, ttl: Duration) -> StoreFuture<'a, bool> {
        self.inner.establish(id, ttl)
    }

    fn update<'a>(
        &'a self,
        id: &'a SessionId,
        updates: &'a [StateUpdate],
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        self.inner.update(id, updates, ttl)
    }

    fn save<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        self.inner.save(record, ttl)
    }

    fn delete<'a>(&'a self, id: &'a SessionId) -> StoreFuture<'a, bool> {
        self.inner.delete(id)
    }

    fn count(&self) -> StoreFuture<'_, Option<usize>> {
        self.inner.count()
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        self.inner.ping()
    }
}

/// The in-process bus, its continuity set by the test (`u64::MAX`: it cannot tell).
#[derive(Debug)]
struct TestBus {
    inner: LocalBus,
    continuity: AtomicU64,
}

impl TestBus {
    const CANNOT_TELL: u64 = u64::MAX;

    fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: LocalBus::new(),
            continuity: AtomicU64::new(0),
        })
    }

    fn set(&self, continuity: u64) {
        self.continuity.store(continuity, Ordering::SeqCst);
    }
}

impl Bus for TestBus {
    fn publish(&self, envelope: Envelope) -> StoreFuture<'_, ()> {
        self.inner.publish(envelope)
    }

    fn subscribe(&self, node: &NodeId) -> BoxFuture<'static, BoxStream<'static, Envelope>> {
        self.inner.subscribe(node)
    }

    fn continuity(&self) -> Option<u64> {
        let continuity = self.continuity.load(Ordering::SeqCst);
        (continuity != Self::CANNOT_TELL).then_some(continuity)
    }
}

struct Node {
    _fixture: Fixture,
    server: TestServer,
    store: Arc<NodeStore>,
}

/// Two nodes sharing `store` and `bus`, each with a session lease of `lease`.
fn nodes(store: &Arc<InMemorySessionStore>, bus: &Arc<TestBus>, lease: Duration) -> [Node; 2] {
    nodes_idle(store, bus, lease, None)
}

/// [`nodes`] whose sessions idle out after `idle` (given), instead of the default.
fn nodes_idle(
    store: &Arc<InMemorySessionStore>,
    bus: &Arc<TestBus>,
    lease: Duration,
    idle: Option<Duration>,
) -> [Node; 2] {
    [0, 1].map(|_| {
        let fixture = fixture();
        let own = NodeStore::new(store);
        let cluster = Cluster::new(
            own.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        )
        .session_lease(lease);
        let mut mcp = fixture.server.http("/mcp");
        if idle.is_some() {
            mcp = mcp.idle_timeout(idle);
        }
        let server = spawn(mcp.cluster(cluster), 1);
        Node {
            _fixture: fixture,
            server,
            store: own,
        }
    })
}

/// A session opened on `a`, its handshake stored (which the store takes in the background).
async fn session_on(a: &Node, store: &Arc<InMemorySessionStore>) -> Client {
    let mut client = a.server.client();
    client.initialize(json!({})).await;
    let id = SessionId::parse(client.session.as_deref().unwrap()).unwrap();
    let mut established = false;
    for _ in 0..200 {
        let record = store.load(&id, Duration::from_secs(60)).await.unwrap();
        if record.is_some_and(|record| record.established) {
            established = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(established, "the handshake was never stored");
    client
}

async fn echo(client: &Client, id: i64) {
    let answer = client
        .call_ok(json!(id), "echo", json!({"message": "hi"}))
        .await;
    assert_eq!(text_of(&answer), "hi");
}

async fn stop(nodes: [Node; 2]) {
    for node in nodes {
        node.server.stop().await;
    }
}

#[actix_web::test]
async fn without_a_lease_every_request_reads_the_store() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = TestBus::new();
    let nodes = nodes(&store, &bus, Duration::ZERO);
    let on_b = session_on(&nodes[0], &store).await.at(&nodes[1].server.url);
    for id in 1..=5 {
        echo(&on_b, id).await;
    }
    assert_eq!(nodes[1].store.loads(), 5);
    stop(nodes).await;
}

#[actix_web::test]
async fn a_leased_session_is_served_without_reading_the_store_until_the_lease_runs_out() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = TestBus::new();
    let nodes = nodes(&store, &bus, Duration::from_millis(1500));
    let on_b = session_on(&nodes[0], &store).await.at(&nodes[1].server.url);
    for id in 1..=5 {
        echo(&on_b, id).await;
    }
    assert_eq!(
        nodes[1].store.loads(),
        1,
        "read once, then served from B's copy"
    );
    tokio::time::sleep(Duration::from_millis(1600)).await;
    echo(&on_b, 6).await;
    echo(&on_b, 7).await;
    assert_eq!(
        nodes[1].store.loads(),
        2,
        "the lease ran out: read again, then leased"
    );
    stop(nodes).await;
}

#[actix_web::test]
async fn a_deletion_on_another_node_ends_the_lease() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = TestBus::new();
    let nodes = nodes(&store, &bus, Duration::from_secs(60));
    let on_a = session_on(&nodes[0], &store).await;
    let on_b = on_a.at(&nodes[1].server.url);
    echo(&on_b, 1).await;
    echo(&on_b, 2).await;
    assert_eq!(nodes[1].store.loads(), 1);
    assert_eq!(on_a.delete().await, StatusCode::OK);
    eventually("B hears of the deletion", || {
        nodes[1].server.mcp.session_count() == 0
    })
    .await;
    let gone = on_b.request(json!(3), "tools/list", json!({})).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.response);
    stop(nodes).await;
}

#[actix_web::test]
async fn a_bus_that_may_have_lost_a_message_ends_every_lease() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = TestBus::new();
    let nodes = nodes(&store, &bus, Duration::from_secs(60));
    let on_b = session_on(&nodes[0], &store).await.at(&nodes[1].server.url);
    echo(&on_b, 1).await;
    echo(&on_b, 2).await;
    assert_eq!(nodes[1].store.loads(), 1);
    // A reconnection: what was sent meanwhile may be lost.
    bus.set(1);
    echo(&on_b, 3).await;
    echo(&on_b, 4).await;
    assert_eq!(
        nodes[1].store.loads(),
        2,
        "read again once, then leased anew"
    );
    // Down, or a bus that cannot tell: every request reads the store.
    bus.set(TestBus::CANNOT_TELL);
    echo(&on_b, 5).await;
    echo(&on_b, 6).await;
    assert_eq!(nodes[1].store.loads(), 4);
    stop(nodes).await;
}

/// A record read while word of a change arrived may predate the change: it is used for its
/// request, not leased.
#[actix_web::test]
async fn a_record_read_while_a_change_arrives_is_not_leased() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = TestBus::new();
    let nodes = nodes(&store, &bus, Duration::from_secs(60));
    let on_a = session_on(&nodes[0], &store).await;
    let on_b = on_a.at(&nodes[1].server.url);
    nodes[1].store.hold_next_load.store(true, Ordering::SeqCst);
    let first = {
        let on_b = on_b.at(&nodes[1].server.url);
        actix_web::rt::spawn(async move { echo(&on_b, 1).await })
    };
    // B has read the record and holds its answer back; A changes the session meanwhile.
    eventually("B reads the record", || nodes[1].store.loads() == 1).await;
    let set = on_a
        .request(json!(2), "logging/setLevel", json!({"level": "error"}))
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.response);
    first.await.unwrap();
    echo(&on_b, 3).await;
    echo(&on_b, 4).await;
    assert_eq!(
        nodes[1].store.loads(),
        2,
        "the record read during the change was not leased; the next one is"
    );
    stop(nodes).await;
}

/// The lease is at most a third of the session idle timeout.
#[actix_web::test]
async fn the_lease_is_capped_by_the_idle_timeout() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = TestBus::new();
    let [a, b] = nodes_idle(
        &store,
        &bus,
        Duration::from_secs(3600),
        Some(Duration::from_millis(900)),
    );
    let on_b = session_on(&a, &store).await.at(&b.server.url);
    echo(&on_b, 1).await;
    echo(&on_b, 2).await;
    assert_eq!(b.store.loads(), 1);
    // Past a third of the idle timeout (300 ms), well within it.
    tokio::time::sleep(Duration::from_millis(400)).await;
    echo(&on_b, 3).await;
    assert_eq!(b.store.loads(), 2, "a lease of an hour held for 300 ms");
    stop([a, b]).await;
}
