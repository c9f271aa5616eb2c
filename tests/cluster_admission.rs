//! Admission limits counted cluster-wide: two nodes in one process sharing an in-memory
//! session store, bus and admission store. A limit holds for the two nodes together (each node
//! alone under it is refused when the cluster is at it), a slot freed on one node admits a
//! request on the other, a dead node's slots free up when their leases expire (and a running
//! request's leases are renewed past that), no store round trip is made without a
//! cluster-wide limit, and a failing store refuses 503 (fail closed).
//!
//! Real servers on `127.0.0.1:0`; every wait is bounded.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_mcp::cluster::{
    AdmissionAsk, AdmissionStore, AdmissionVerdict, Bus, Cluster, InMemoryAdmissionStore,
    InMemorySessionStore, LocalBus, SessionStore, SlotLimit, StoreError, StoreFuture,
};
use actix_mcp::server::auth::{AuthError, BearerAuth, Identity, TokenValidator};
use actix_mcp::transport::http::{AdmissionConfig, McpHttpBuilder, Rate};
use futures::future::BoxFuture;
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::http::{Client, TestServer, spawn, tools_call};
use common::http_tools::{Fixture, fixture};
use common::sse::SseReader;
use common::{WAIT, eventually};

/// Accepts any token as the identity it names.
struct NameIsIdentity;

impl TokenValidator for NameIsIdentity {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
        Box::pin(async move { Ok(Identity::new(token)) })
    }
}

/// Two nodes sharing a session store, a bus and `admission`, each with `config` (and bearer
/// auth when `protected`).
fn nodes(
    admission: Arc<dyn AdmissionStore>,
    config: &AdmissionConfig,
    protected: bool,
) -> [(Fixture, TestServer); 2] {
    let store = Arc::new(InMemorySessionStore::new()) as Arc<dyn SessionStore>;
    let bus = Arc::new(LocalBus::new()) as Arc<dyn Bus>;
    [0, 1].map(|_| {
        let fixture = fixture();
        let cluster = Cluster::new(store.clone(), bus.clone())
            .admission_store(admission.clone())
            .admission_lease(Duration::from_secs(1));
        let mut mcp: McpHttpBuilder = fixture.server.http("/mcp").cluster(cluster);
        if protected {
            let auth = BearerAuth::builder("http://127.0.0.1/mcp", NameIsIdentity)
                .authorization_server("http://127.0.0.1/issuer")
                .build()
                .unwrap();
            mcp = mcp.bearer_auth(auth);
        }
        let server = spawn(mcp.admission(config.clone()), 1);
        (fixture, server)
    })
}

/// Checks a refusal by a cluster-wide limit: 429, `Retry-After`, `-32003` with the request's
/// id, `data.limit`, and a message saying the limit is cluster-wide.
async fn assert_refused_cluster_wide(response: reqwest::Response, id: Value, limit: &str) {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    common::assert_valid_message(&body);
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], -32003, "{body}");
    assert_eq!(body["error"]["data"]["limit"], limit, "{body}");
    assert!(body["error"]["data"]["retryAfterMs"].as_u64().unwrap() >= 1);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("cluster-wide"), "{message}");
}

/// Starts `slow` (which runs until cancelled) as request `id` and waits until `fixture`'s node
/// runs `running` of them.
async fn hold_slot(fixture: &Fixture, client: &Client, id: i64, running: usize) -> SseReader {
    let call = client
        .start(
            json!(id),
            "tools/call",
            json!({"name": "slow", "arguments": {}}),
        )
        .await;
    tokio::time::timeout(WAIT, fixture.probes.started.wait_for(running))
        .await
        .unwrap();
    call
}

fn concurrency(limit: usize) -> AdmissionConfig {
    AdmissionConfig::new()
        .max_concurrent(limit)
        .queue(0, Duration::from_secs(1))
}

/// A global limit of 2 holds for the two nodes: two calls running on A and one more on B is
/// refused, though B alone runs none; once one of A's ends, B admits one.
#[actix_web::test]
async fn a_global_limit_holds_for_the_cluster() {
    let admission = Arc::new(InMemoryAdmissionStore::new());
    let [(fa, a), (fb, b)] = nodes(admission.clone(), &concurrency(2), false);
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    let first = hold_slot(&fa, &on_a, 1, 1).await;
    let _second = hold_slot(&fa, &on_a, 2, 2).await;
    assert_eq!(admission.leases("global"), 2);

    let refused = on_b.post(&tools_call(json!(3), "slow", json!({}))).await;
    assert_refused_cluster_wide(refused, json!(3), "global").await;
    assert_eq!(fb.probes.started.hits(), 0);

    on_a.cancel(json!(1)).await;
    drop(first);
    eventually("A releases the slot of the cancelled call", || {
        admission.leases("global") == 1
    })
    .await;
    let _third = hold_slot(&fb, &on_b, 4, 1).await;
    assert_eq!(admission.leases("global"), 2);
    // Full again, on either node.
    let refused = on_a.post(&tools_call(json!(5), "slow", json!({}))).await;
    assert_refused_cluster_wide(refused, json!(5), "global").await;
    a.stop().await;
    b.stop().await;
}

/// A principal's limit of 2 holds over its sessions on both nodes; another principal is not
/// limited by it.
#[actix_web::test]
async fn a_principal_limit_holds_for_the_cluster() {
    let config = AdmissionConfig::new()
        .max_concurrent_per_principal(2)
        .queue(0, Duration::from_secs(1));
    let admission = Arc::new(InMemoryAdmissionStore::new());
    let [(fa, a), (fb, b)] = nodes(admission.clone(), &config, true);
    let mut alice_a = Client::with_bearer(&a.url, "alice");
    alice_a.initialize(json!({})).await;
    let mut alice_b = Client::with_bearer(&b.url, "alice");
    alice_b.initialize(json!({})).await;
    let first = hold_slot(&fa, &alice_a, 1, 1).await;
    let _second = hold_slot(&fa, &alice_a, 2, 2).await;

    let refused = alice_b.post(&tools_call(json!(3), "slow", json!({}))).await;
    assert_refused_cluster_wide(refused, json!(3), "principal").await;
    let mut bob_b = Client::with_bearer(&b.url, "bob");
    bob_b.initialize(json!({})).await;
    let _bob = hold_slot(&fb, &bob_b, 1, 1).await;

    alice_a.cancel(json!(1)).await;
    drop(first);
    eventually("A releases alice's slot", || {
        admission.leases("principal:\0alice") == 1
    })
    .await;
    let _third = hold_slot(&fb, &alice_b, 4, 2).await;
    a.stop().await;
    b.stop().await;
}

/// A principal's rate of 4 requests a minute holds over both nodes: its fifth request is
/// refused on B, though B alone has seen four of its messages (its own guard's burst).
#[actix_web::test]
async fn a_principal_rate_holds_for_the_cluster() {
    let config = AdmissionConfig::new().principal_rate(Rate::new(4, Duration::from_secs(60)));
    let admission = Arc::new(InMemoryAdmissionStore::new());
    let [(_fa, a), (_fb, b)] = nodes(admission, &config, true);
    // `initialize` on A: the cluster's first request of alice.
    let mut alice = Client::with_bearer(&a.url, "alice");
    alice.initialize(json!({})).await;
    let on_b = alice.at(&b.url);
    for id in 1..=3 {
        let listed = on_b.request(json!(id), "tools/list", json!({})).await;
        assert_eq!(listed.status, StatusCode::OK, "{}", listed.response);
    }
    let refused = on_b
        .post(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
        .await;
    assert_refused_cluster_wide(refused, json!(4), "principalRate").await;
    // Another principal has a bucket of its own.
    let mut bob = Client::with_bearer(&b.url, "bob");
    bob.initialize(json!({})).await;
    let listed = bob.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK);
    a.stop().await;
    b.stop().await;
}

/// A node that dies holding slots (its leases never released) frees them when the leases
/// expire; a running request's leases are renewed, so it keeps its slot past that time.
#[actix_web::test]
async fn a_dead_nodes_slots_free_up_when_their_leases_expire() {
    let admission = Arc::new(InMemoryAdmissionStore::new());
    let [(fa, a), (_fb, b)] = nodes(admission.clone(), &concurrency(2), false);
    // What a node gone without releasing leaves: a lease of 1 s, never renewed.
    let dead = AdmissionAsk {
        lease: "dead-node:1".to_owned(),
        lease_ttl: Duration::from_secs(1),
        slots: vec![SlotLimit {
            key: "global".to_owned(),
            limit: 2,
        }],
        rates: Vec::new(),
    };
    assert_eq!(
        admission.acquire(&dead).await.unwrap(),
        AdmissionVerdict::Admitted
    );
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    // `initialize` held a slot for its own time only.
    let _running = hold_slot(&fa, &on_a, 1, 1).await;
    let on_b = on_a.at(&b.url);
    let refused = on_b.post(&tools_call(json!(2), "slow", json!({}))).await;
    assert_refused_cluster_wide(refused, json!(2), "global").await;

    // Past the lease's second: the dead node's slot is free, the running call's is renewed.
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(admission.leases("global"), 1);
    let answered = on_b
        .call_ok(json!(3), "echo", json!({"message": "admitted"}))
        .await;
    assert_eq!(answered["content"][0]["text"], "admitted");
    a.stop().await;
    b.stop().await;
}

/// An admission store that counts the round trips asked of it.
#[derive(Debug, Default)]
struct Counting {
    inner: InMemoryAdmissionStore,
    acquired: AtomicUsize,
}

impl AdmissionStore for Counting {
    fn acquire<'a>(&'a self, ask: &'a AdmissionAsk) -> StoreFuture<'a, AdmissionVerdict> {
        self.acquired.fetch_add(1, Ordering::SeqCst);
        self.inner.acquire(ask)
    }

    fn renew<'a>(
        &'a self,
        lease: &'a str,
        keys: &'a [String],
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        self.inner.renew(lease, keys, ttl)
    }

    fn release<'a>(&'a self, lease: &'a str, keys: &'a [String]) -> StoreFuture<'a, ()> {
        self.inner.release(lease, keys)
    }
}

/// Without a limit counted cluster-wide (none at all, or only the per-node ones), no request
/// asks the store; with one, each request asks it once, and `ping` never does.
#[actix_web::test]
async fn the_store_is_asked_only_when_a_cluster_wide_limit_applies() {
    let per_node_only = AdmissionConfig::new()
        .max_concurrent_per_tool("slow", 4)
        .session_rate(Rate::per_second(100));
    for config in [AdmissionConfig::new(), per_node_only] {
        let counting = Arc::new(Counting::default());
        let [(_fa, a), (_fb, b)] = nodes(counting.clone(), &config, false);
        let mut on_a = a.client();
        on_a.initialize(json!({})).await;
        let on_b = on_a.at(&b.url);
        on_b.call_ok(json!(1), "echo", json!({"message": "x"}))
            .await;
        on_a.request(json!(2), "tools/list", json!({})).await;
        assert_eq!(counting.acquired.load(Ordering::SeqCst), 0, "{config:?}");
        a.stop().await;
        b.stop().await;
    }

    let counting = Arc::new(Counting::default());
    let [(_fa, a), (_fb, b)] = nodes(counting.clone(), &concurrency(8), false);
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    assert_eq!(counting.acquired.load(Ordering::SeqCst), 1);
    let on_b = on_a.at(&b.url);
    on_b.call_ok(json!(1), "echo", json!({"message": "x"}))
        .await;
    assert_eq!(counting.acquired.load(Ordering::SeqCst), 2);
    let pinged = on_b.request(json!(2), "ping", json!({})).await;
    assert_eq!(pinged.status, StatusCode::OK);
    assert_eq!(counting.acquired.load(Ordering::SeqCst), 2);
    eventually("every slot is released", || {
        counting.inner.leases("global") == 0
    })
    .await;
    a.stop().await;
    b.stop().await;
}

/// An admission store that always fails.
#[derive(Debug)]
struct Down;

impl AdmissionStore for Down {
    fn acquire<'a>(&'a self, _: &'a AdmissionAsk) -> StoreFuture<'a, AdmissionVerdict> {
        Box::pin(async { Err(StoreError::Unavailable("down".to_owned())) })
    }

    fn renew<'a>(&'a self, _: &'a str, _: &'a [String], _: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async { Err(StoreError::Unavailable("down".to_owned())) })
    }

    fn release<'a>(&'a self, _: &'a str, _: &'a [String]) -> StoreFuture<'a, ()> {
        Box::pin(async { Err(StoreError::Unavailable("down".to_owned())) })
    }
}

/// While the admission store fails, a request a cluster-wide limit applies to is refused 503
/// with `Retry-After` and a JSON-RPC error naming the store (fail closed).
#[actix_web::test]
async fn a_failing_admission_store_refuses_503() {
    let [(_fa, a), (_fb, b)] = nodes(Arc::new(Down), &concurrency(8), false);
    let client = a.client();
    let response = client
        .post(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1");
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    common::assert_valid_message(&body);
    assert_eq!(body["id"], 1, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("admission store"), "{message}");
    a.stop().await;
    b.stop().await;
}
