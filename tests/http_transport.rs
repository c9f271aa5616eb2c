//! Streamable HTTP: what a request must look like. Bad `Accept`, `Content-Type`, size, JSON,
//! batches and methods get exact statuses (406, 415, 413, 400, 405) with JSON-RPC error bodies,
//! and a foreign `Host` or `Origin` is 403 (DNS-rebinding protection).
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

use actix_mcp::transport::http::HostPolicy;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HOST, ORIGIN};
use serde_json::{Value, json};

use common::assert_valid;
use common::http::{VERSION, error_body, read_answer, result_of, send};
use common::http_tools::start;

/// POSTs `body` with exactly these `Accept` and `Content-Type` headers.
async fn post_as(
    http: &reqwest::Client,
    url: &str,
    accept: &str,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> reqwest::Response {
    send(
        http.post(url)
            .header(ACCEPT, accept)
            .header(CONTENT_TYPE, content_type)
            .body(body),
    )
    .await
}

/// Bad `Accept`, `Content-Type`, size, JSON, batches and methods get exact statuses, each with a
/// JSON-RPC error body.
#[actix_web::test]
async fn malformed_posts_are_refused_with_exact_statuses() {
    let (_fixture, srv) = start(|mcp| mcp.body_limit(1024));
    let http = common::http::http_client();
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();

    let both = "application/json, text/event-stream";
    let padding = "x".repeat(2048);
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": padding}});
    // (Accept, Content-Type, body, status); each answer carries a -32600 error body.
    let cases = [
        (
            "application/json",
            "application/json",
            ping.clone(),
            StatusCode::NOT_ACCEPTABLE,
        ),
        (
            both,
            "text/plain",
            ping.clone(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            both,
            "application/json",
            big.to_string(),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
    ];
    for (accept, content_type, body, status) in cases {
        let response = post_as(&http, &srv.url, accept, content_type, body).await;
        assert_eq!(
            response.status(),
            status,
            "Accept {accept}, Content-Type {content_type}"
        );
        assert_eq!(error_body(response).await, -32600);
    }

    // Unparsable JSON: JSON-RPC wants `"id": null` here (its id could not be read).
    let response = post_as(
        &http,
        &srv.url,
        both,
        "application/json",
        "{\"jsonrpc\": \"2.0\", \"id\": 1,",
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    common::assert_valid_message(&body);
    assert_eq!(body["error"]["code"], -32700, "{body}");
    assert_eq!(body.get("id"), Some(&Value::Null), "{body}");

    let response = post_as(
        &http,
        &srv.url,
        both,
        "application/json",
        format!("[{ping}]"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    common::assert_valid_message(&body);
    assert_eq!(body["error"]["code"], -32600, "{body}");

    // MCP names its parameters: positional (array) params are -32602, answered with the id.
    for method in ["ping", "tools/call"] {
        let positional =
            json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": ["echo", {"text": "x"}]});
        let response = post_as(
            &http,
            &srv.url,
            both,
            "application/json",
            positional.to_string(),
        )
        .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{method}");
        let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        common::assert_valid_message(&body);
        assert_eq!(body["error"]["code"], -32602, "{body}");
        assert_eq!(body["id"], 7, "{body}");
    }

    let response = send(http.put(&srv.url).body(ping)).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        response.headers().get("allow").unwrap(),
        "GET, POST, DELETE"
    );
    assert_eq!(error_body(response).await, -32600);

    srv.stop().await;
}

/// A foreign `Host` or `Origin` is 403 with an id-less JSON-RPC error; `localhost:<port>` passes.
#[actix_web::test]
async fn foreign_host_and_origin_are_forbidden() {
    let (_fixture, srv) = start(|mcp| mcp.host_policy(HostPolicy::LoopbackOnly));
    let client = srv.client();
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "http-test", "version": "1.0.0"},
        },
    });

    let response = send(
        client
            .post_builder(&initialize)
            .header(HOST, "evil.example.com"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(error_body(response).await, -32600);

    let response = send(
        client
            .post_builder(&initialize)
            .header(ORIGIN, "http://evil.example.com"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(error_body(response).await, -32600);
    assert_eq!(srv.mcp.session_count(), 0);

    let response = send(
        client
            .post_builder(&initialize)
            .header(HOST, format!("localhost:{}", srv.port))
            .header(ORIGIN, format!("http://localhost:{}", srv.port)),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let answer = read_answer(response, &json!(0)).await;
    assert_valid("InitializeResult", result_of(&answer.response));
    srv.stop().await;
}
