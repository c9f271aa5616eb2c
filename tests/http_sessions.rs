//! Streamable HTTP sessions: `Mcp-Session-Id` issued by initialize and required after it (400,
//! 404), DELETE, `MCP-Protocol-Version`; one session served by many workers; two servers in one
//! process sharing nothing.
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

use actix_mcp::prelude::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::assert_valid;
use common::http::{Client, VERSION, error_body, result_of, spawn, text_of};
use common::http_tools::{fixture, start};

/// initialize issues a visible-ASCII session id; requests need it (400 without, 404 when
/// unknown); DELETE ends the session for POST, GET and DELETE alike; a bad
/// `MCP-Protocol-Version` is 400.
#[actix_web::test]
async fn session_lifecycle() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    let answer = client
        .request(
            json!(0),
            "initialize",
            json!({
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "http-test", "version": "1.0.0"},
            }),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_valid("InitializeResult", result_of(&answer.response));
    let session = answer.headers["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        !session.is_empty() && session.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "session id {session:?} is not visible ASCII"
    );
    client.session = Some(session.clone());
    client.version = Some(VERSION.into());
    client
        .notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    let mut anonymous = client.clone();
    anonymous.session = None;
    let response = anonymous
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(error_body(response).await, -32600);

    let mut stranger = client.clone();
    stranger.session = Some("no-such-session".into());
    let response = stranger
        .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(error_body(response).await, -32600);

    // A version of neither era: 2026-07-28's UnsupportedProtocolVersion, echoing the id.
    let mut old = client.clone();
    old.version = Some("1999-01-01".into());
    let response = old
        .post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["id"], 3);
    assert_eq!(body["error"]["code"], -32022);
    assert_eq!(body["error"]["data"]["requested"], "1999-01-01");

    let answer = client.request(json!(4), "tools/list", json!({})).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_valid("ListToolsResult", result_of(&answer.response));

    assert_eq!(client.delete().await, StatusCode::OK);
    let response = client
        .post(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}))
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(error_body(response).await, -32600);
    let response = client.get(None).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(error_body(response).await, -32600);
    assert_eq!(client.delete().await, StatusCode::NOT_FOUND);
    assert_eq!(srv.mcp.session_count(), 0);

    srv.stop().await;
}

/// Four workers: requests on fresh connections land on different workers and all reach the
/// one session.
#[actix_web::test]
async fn four_workers_serve_one_session() {
    let fixture = fixture();
    let srv = spawn(fixture.server.http("/mcp"), 4);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    for id in 1..=20 {
        let fresh = client.fresh_connection();
        let message = format!("call {id}");
        let result = fresh
            .call_ok(json!(id), "echo", json!({"message": message}))
            .await;
        assert_eq!(text_of(&result), message);
    }
    assert_eq!(srv.mcp.session_count(), 1);
    assert!(
        srv.worker_threads_used() >= 2,
        "20 connections all landed on one worker"
    );
    srv.stop().await;
}

/// Two servers in one process share nothing: a session of one is unknown to the other.
#[actix_web::test]
async fn two_servers_share_nothing() {
    let first = spawn(fixture().server.http("/mcp"), 1);
    let other_server = Server::builder("other", "1.0.0")
        .tool(ToolDef::new("greet", |_cx: RequestContext| async { "hi" }).description("Greets"))
        .build()
        .unwrap();
    let second = spawn(other_server.http("/mcp"), 1);
    assert_ne!(first.port, second.port);

    let mut a = first.client();
    a.initialize(json!({})).await;
    let mut b = second.client();
    b.initialize(json!({})).await;
    let tools = |answer: &common::http::Answer| -> Vec<String> {
        result_of(&answer.response)["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let a_tools = tools(&a.request(json!(1), "tools/list", json!({})).await);
    let b_tools = tools(&b.request(json!(1), "tools/list", json!({})).await);
    assert!(a_tools.contains(&"echo".to_owned()) && !a_tools.contains(&"greet".to_owned()));
    assert_eq!(b_tools, ["greet"]);

    let mut crossed = Client::new(&second.url);
    crossed.session = a.session.clone();
    crossed.version = Some(VERSION.into());
    let response = crossed
        .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(error_body(response).await, -32600);
    assert_eq!(crossed.get(None).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(crossed.delete().await, StatusCode::NOT_FOUND);
    assert_eq!(first.mcp.session_count(), 1);
    assert_eq!(second.mcp.session_count(), 1);

    first.stop().await;
    second.stop().await;
}
