//! A session's life across the nodes of a cluster (in one process: the in-memory session store
//! and bus the Redis ones stand in for): its handshake finished on another node than the one
//! that ran `initialize`.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::cluster::{Cluster, InMemorySessionStore, LocalBus};
use actix_mcp_actors::{Bus, SessionStore};
use reqwest::StatusCode;
use serde_json::json;

use common::http::{TestServer, spawn};
use common::http_tools::{Fixture, fixture};
use common::sse::SseReader;

/// Two nodes sharing `store` and `bus`, each closing sessions whose handshake is not complete
/// `handshake` after `initialize`.
fn nodes(
    store: &Arc<InMemorySessionStore>,
    bus: &Arc<LocalBus>,
    handshake: Duration,
) -> [(Fixture, TestServer); 2] {
    [0, 1].map(|_| {
        let fixture = fixture();
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        let mcp = fixture
            .server
            .http("/mcp")
            .cluster(cluster)
            .handshake_timeout(Some(handshake));
        let server = spawn(mcp, 1);
        (fixture, server)
    })
}

/// `initialize` on A, `notifications/initialized` on B (as round robin does): A is told the
/// handshake is complete, and its handshake timer does not close the session nor its GET
/// stream.
#[actix_web::test]
async fn a_handshake_finished_on_another_node_ends_the_timer_of_the_first() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let handshake = Duration::from_millis(300);
    let [(fa, a), (_fb, b)] = nodes(&store, &bus, handshake);
    let mut on_a = a.client();
    let answer = on_a.initialize_only("split").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
    on_a.session = Some(
        answer.headers["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned(),
    );
    on_a.version = Some("2025-11-25".to_owned());
    let response = on_a.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);

    let on_b = on_a.at(&b.url);
    on_b.notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    // Well past A's handshake timer (its sweep runs every quarter of it).
    tokio::time::sleep(handshake * 3).await;
    assert_eq!(a.mcp.session_count(), 1, "A closed the session");
    fa.server.notify_tools_list_changed();
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/tools/list_changed");
    a.stop().await;
    b.stop().await;
}
