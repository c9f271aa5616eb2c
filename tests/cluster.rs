//! Several nodes serving one session (in one process: the in-memory session store and bus that
//! the Redis ones stand in for across processes). Every consecutive request of a session lands
//! on another node: initialize on A, requests on B, a sampling answer posted to A for a tool
//! waiting on B, a GET stream on B receiving what A raises, DELETE on one ending it on all.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management>

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use actix_mcp::cluster::{Cluster, InMemorySessionStore, LocalBus};
use actix_mcp_actors::{Bus, SessionStore};
use reqwest::StatusCode;
use serde_json::json;

use common::http::{SAMPLING, TestServer, caps, eventually, spawn, text_of};
use common::http_tools::{Fixture, fixture};
use common::sse::SseReader;

/// Two nodes: each its own server (built the same way) and endpoint, sharing `store` and `bus`.
fn nodes(store: &Arc<InMemorySessionStore>, bus: &Arc<LocalBus>) -> [(Fixture, TestServer); 2] {
    [0, 1].map(|_| {
        let fixture = fixture();
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        let server = spawn(fixture.server.http("/mcp").cluster(cluster), 1);
        (fixture, server)
    })
}

#[actix_web::test]
async fn any_node_serves_any_session() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [(_fa, a), (_fb, b)] = nodes(&store, &bus);
    let mut on_a = a.client();
    on_a.initialize(caps(SAMPLING)).await;
    assert_eq!(store.len(), 1);
    let on_b = on_a.at(&b.url);

    // B has never seen the session: it serves it from the store.
    let listed = on_b.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.response);
    assert!(listed.response["result"]["tools"].as_array().unwrap().len() > 3);
    let echoed = on_b
        .call_ok(json!(2), "echo", json!({"message": "hi"}))
        .await;
    assert_eq!(text_of(&echoed), "hi");

    // A sampling request from a tool running on B, answered through A.
    assert_eq!(
        on_b.sample_answered_by(&on_a, 3, "from A").await,
        "sampled: from A"
    );

    // DELETE on B ends it on A too.
    assert_eq!(on_b.delete().await, StatusCode::OK);
    let gone = on_a.request(json!(4), "tools/list", json!({})).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.response);
    assert!(store.is_empty());
    eventually("A drops its local session", || a.mcp.session_count() == 0).await;
    a.stop().await;
    b.stop().await;
}

/// What one node raises reaches the GET stream open on another; state set on one node
/// (subscriptions) is known on the others.
#[actix_web::test]
async fn notifications_reach_the_stream_on_another_node() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [(fa, a), (_fb, b)] = nodes(&store, &bus);
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    let response = on_b.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);

    // A change of A's catalog: every node's sessions hear it.
    fa.server.notify_tools_list_changed();
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/tools/list_changed");

    // Subscribed through A, updated on A: the stream on B gets it.
    let subscribed = on_a
        .request(
            json!(1),
            "resources/subscribe",
            json!({"uri": "test://watched"}),
        )
        .await;
    assert_eq!(subscribed.status, StatusCode::OK, "{}", subscribed.response);
    // B's copy of the session takes the subscription from the bus, or at the latest from the
    // store with its next request.
    let pinged = on_b.request(json!(2), "ping", json!({})).await;
    assert_eq!(pinged.status, StatusCode::OK);
    fa.server.notify_resource_updated("test://watched");
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/resources/updated");
    assert_eq!(message["params"]["uri"], "test://watched");

    // A log message to every session, from A.
    fa.server.notify_log_message(
        actix_mcp::protocol::LoggingLevel::Warning,
        json!("from A"),
        None,
    );
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/message");
    assert_eq!(message["params"]["data"], "from A");
    a.stop().await;
    b.stop().await;
}

/// A session unknown to the store is unknown to every node; one of another owner too.
#[actix_web::test]
async fn unknown_sessions_are_404_on_every_node() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [(_fa, a), (_fb, b)] = nodes(&store, &bus);
    let mut client = b.client();
    client.session = Some("no-such-session".into());
    client.version = Some("2025-11-25".into());
    let answer = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.response["id"], 1);
    assert_eq!(client.delete().await, StatusCode::NOT_FOUND);
    a.stop().await;
    b.stop().await;
}

/// A `subscriptions/listen` stream (protocol 2026-07-28, no session) open on B hears the list
/// changes A raises.
#[actix_web::test]
async fn listen_streams_hear_every_node() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [(fa, a), (_fb, b)] = nodes(&store, &bus);
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "cluster-test", "version": "1"},
            },
            "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://x"]},
        },
    });
    let response = common::http::send(
        common::http::http_client()
            .post(&b.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "subscriptions/listen")
            .body(body.to_string()),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);
    let ack = stream.next_message().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    // The fixture offers tools (their list changes) but no resources to subscribe to.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    fa.server.notify_tools_list_changed();
    let change = stream.next_message().await;
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    a.stop().await;
    b.stop().await;
}

/// With a store that counts sessions, the cap is the cluster's: what one node holds counts on
/// the other.
#[actix_web::test]
async fn the_session_cap_is_per_cluster() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [a, b] = [0, 1].map(|_| {
        let fixture = fixture();
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        let server = spawn(
            fixture.server.http("/mcp").cluster(cluster).max_sessions(1),
            1,
        );
        (fixture, server)
    });
    a.1.client().initialize(json!({})).await;
    let refused = b.1.client().initialize_only("second").await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.response
    );
    assert!(refused.headers.get("mcp-session-id").is_none());
    assert_eq!(
        b.1.mcp.session_count(),
        0,
        "the refused session is not kept"
    );
    assert_eq!(store.len(), 1);
    a.1.stop().await;
    b.1.stop().await;
}
