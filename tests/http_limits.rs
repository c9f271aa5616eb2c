//! Streamable HTTP resource limits: 50 sessions churning leave no session, request, stream,
//! tool call or peer request behind (exact gauges); idle sessions expire but streaming ones do
//! not; past `max_sessions` initialize is 503.
//!
//! A real actix-web server on `127.0.0.1:0` ([`common::http::spawn`]) serving the tools of
//! [`common::http_tools`], driven by raw reqwest requests. Every JSON-RPC message the server
//! sends is validated against the MCP 2025-11-25 schema, and every wait is bounded by
//! [`common::WAIT`] (fail, don't hang).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use actix_mcp::MetricsSnapshot;
use reqwest::StatusCode;
use serde_json::json;

use common::eventually;
use common::http::{VERSION, assert_ping, error_body};
use common::http_tools::start;
use common::sse::SseReader;

/// 50 sessions with a running call and a GET stream each, ended by DELETE or by cancel plus
/// dropped connections: afterwards no session, request, stream, tool call or peer request is
/// left.
#[actix_web::test]
async fn churn_leaves_nothing_behind() {
    const SESSIONS: usize = 50;
    let (fixture, srv) = start(|mcp| mcp);
    let mut open = Vec::new();
    for _ in 0..SESSIONS {
        let mut client = srv.client();
        client.initialize(json!({})).await;
        let call = client
            .start(
                json!(1),
                "tools/call",
                json!({"name": "slow", "arguments": {}}),
            )
            .await;
        let response = client.get(None).await;
        assert_eq!(response.status(), StatusCode::OK);
        open.push((client, call, SseReader::new(response)));
    }
    fixture.probes.started.wait_for(SESSIONS).await;
    let live = srv.mcp.stats().runtime;
    assert_eq!(
        (
            live.sessions,
            live.in_flight,
            live.streams,
            live.tool_calls,
            live.peer_requests,
            live.parked_calls,
            live.listeners,
            live.tasks
        ),
        (SESSIONS, SESSIONS, 2 * SESSIONS, SESSIONS, 0, 0, 0, 0)
    );
    assert_eq!(srv.mcp.session_count(), SESSIONS);

    let second_half = open.split_off(SESSIONS / 2);
    for (client, mut call, mut get) in open {
        assert_eq!(client.delete().await, StatusCode::OK);
        call.expect_end().await;
        get.expect_end().await;
    }
    let mut rest = Vec::new();
    for (client, call, get) in second_half {
        client.cancel(json!(1)).await;
        drop(call);
        drop(get);
        rest.push(client);
    }
    fixture.probes.stopped.wait_for(SESSIONS).await;
    for client in rest {
        assert_eq!(client.delete().await, StatusCode::OK);
    }

    let zero = MetricsSnapshot::default();
    eventually("every gauge back to zero", || {
        srv.mcp.stats().runtime == zero && srv.mcp.session_count() == 0
    })
    .await;
    srv.stop().await;
}

/// An idle session expires (404); a session with an open GET stream does not.
#[actix_web::test]
async fn idle_sessions_expire_but_streaming_ones_do_not() {
    let timeout = Duration::from_millis(200);
    let (_fixture, srv) = start(|mcp| mcp.idle_timeout(Some(timeout)));
    let mut idle = srv.client();
    idle.initialize(json!({})).await;
    let mut streaming = srv.client();
    streaming.initialize(json!({})).await;
    let response = streaming.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);
    let since = tokio::time::Instant::now();

    eventually("the idle session expires", || srv.mcp.session_count() == 1).await;
    // The streaming session must outlive three timeouts of inactivity besides its stream. Its
    // GET stream is watched all along: an expiry ends the stream, which fails the test at once.
    let window = (since + timeout * 3).saturating_duration_since(tokio::time::Instant::now());
    assert!(
        !stream.expect_silence(window).await,
        "the streaming session expired: its GET stream ended"
    );
    assert_eq!(srv.mcp.session_count(), 1);
    let response = idle
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(error_body(response).await, -32600);
    assert_ping(&streaming, 1).await;
    assert!(
        !stream.expect_silence(Duration::from_millis(10)).await,
        "the GET stream ended"
    );

    srv.stop().await;
}

/// Past `max_sessions`, initialize is 503 with a JSON-RPC error body.
#[actix_web::test]
async fn initialize_past_max_sessions_is_503() {
    let (_fixture, srv) = start(|mcp| mcp.max_sessions(2));
    let mut first = srv.client();
    first.initialize(json!({})).await;
    let mut second = srv.client();
    second.initialize(json!({})).await;

    let third = srv.client();
    let response = third
        .post(&json!({
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "http-test", "version": "1.0.0"},
            },
        }))
        .await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(error_body(response).await, -32000);
    assert_eq!(srv.mcp.session_count(), 2);

    assert_eq!(first.delete().await, StatusCode::OK);
    let mut fourth = srv.client();
    fourth.initialize(json!({})).await;
    assert_eq!(srv.mcp.session_count(), 2);
    srv.stop().await;
}
