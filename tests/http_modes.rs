//! Streamable HTTP answer modes: `json_response(true)` (one JSON body per request) and stateless
//! mode (no sessions, POST only).
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

use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

use common::assert_valid;
use common::http::{SAMPLING, VERSION, assert_tool_result, caps, error_body, result_of, text_of};
use common::http_tools::start;

/// `json_response(true)`: one `application/json` body; progress is dropped; server-to-client
/// requests fail with an `isError` result that says why.
#[actix_web::test]
async fn json_response_mode_answers_one_body() {
    let (_fixture, srv) = start(|mcp| mcp.json_response(true));
    let mut client = srv.client();
    client.initialize(caps(SAMPLING)).await;

    let message = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": "p"}},
    });
    let response = client.post(&message).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    let body = response.text().await.unwrap();
    let reply: Value = serde_json::from_str(&body).unwrap_or_else(|err| {
        panic!("the body must be exactly one JSON-RPC response ({err}): {body}")
    });
    common::assert_valid_message(&reply);
    assert_eq!(reply["id"], 1);
    let result = result_of(&reply);
    assert_tool_result(result, false);
    assert_eq!(text_of(result), "done");

    let answer = client.call(json!(2), "sample", json!({})).await;
    assert_eq!(answer.headers[CONTENT_TYPE], "application/json");
    let result = result_of(&answer.response);
    assert_tool_result(result, true);
    assert!(
        text_of(result).contains("JSON response mode"),
        "the error must say why: {result}"
    );
    assert_eq!(srv.mcp.stats().runtime.peer_requests, 0, "nothing was sent");

    srv.stop().await;
}

/// No session id, GET and DELETE are 405, tools work without initialize, and sampling fails
/// naming stateless mode.
#[actix_web::test]
async fn stateless_mode_serves_posts_alone() {
    let (_fixture, srv) = start(|mcp| mcp.stateless(true));
    let client = srv.client();

    let answer = client
        .request(
            json!(0),
            "initialize",
            json!({
                "protocolVersion": VERSION,
                "capabilities": {"sampling": {}},
                "clientInfo": {"name": "http-test", "version": "1.0.0"},
            }),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_valid("InitializeResult", result_of(&answer.response));
    assert!(answer.headers.get("mcp-session-id").is_none());

    let response = client.get(None).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(error_body(response).await, -32600);
    assert_eq!(client.delete().await, StatusCode::METHOD_NOT_ALLOWED);

    let fresh = srv.client();
    let result = fresh
        .call_ok(json!(1), "echo", json!({"message": "alone"}))
        .await;
    assert_tool_result(&result, false);
    assert_eq!(text_of(&result), "alone");

    let result = fresh.call_ok(json!(2), "sample", json!({})).await;
    assert_tool_result(&result, true);
    assert!(
        text_of(&result).contains("stateless mode"),
        "the error must name stateless mode: {result}"
    );
    assert_eq!(srv.mcp.session_count(), 0);

    srv.stop().await;
}

/// `build` refuses settings that contradict each other, naming the one at fault; the same
/// settings on a stateful endpoint build, and so does a stateless endpoint in a cluster.
#[actix_web::test]
async fn contradictory_settings_do_not_build() {
    use std::sync::Arc;
    use std::time::Duration;

    use actix_mcp::cluster::{Cluster, InMemorySessionStore, LocalBus};
    use actix_mcp::transport::http::{HttpConfigError, McpHttp};

    let server = common::http_tools::fixture().server;
    let cluster = || {
        Cluster::new(
            Arc::new(InMemorySessionStore::new()),
            Arc::new(LocalBus::new()),
        )
    };
    let stateless = || server.http("/mcp").stateless(true);
    // A stateless endpoint may join a cluster (it carries its callers' cancellations).
    assert!(stateless().cluster(cluster()).build().is_ok());
    assert_eq!(
        stateless().max_sessions(10).build().unwrap_err(),
        HttpConfigError::StatelessSessions("max_sessions")
    );
    assert_eq!(
        McpHttp::builder(&server, "/mcp")
            .idle_timeout(None)
            .stateless(true)
            .build()
            .unwrap_err(),
        HttpConfigError::StatelessSessions("idle_timeout")
    );
    assert_eq!(
        server
            .http("/mcp")
            .keep_alive(Duration::ZERO)
            .build()
            .unwrap_err(),
        HttpConfigError::ZeroDuration("keep_alive")
    );
    let built = server
        .http("/mcp")
        .cluster(cluster())
        .max_sessions(10)
        .idle_timeout(None)
        .build()
        .unwrap();
    assert_eq!(built.path(), "/mcp");
    assert!(stateless().json_response(true).build().is_ok());
}
