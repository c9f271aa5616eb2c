//! Streamable HTTP server-to-client requests: sampling, elicitation and roots travel on the
//! tool's stream and the POSTed answer completes the tool; error answers, missing capabilities,
//! and cancelling the tool call while its request is pending.
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

use serde_json::{Value, json};

use common::assert_valid;
use common::http::{
    Client, SAMPLING, assert_ping, assert_tool_result, caps, eventually, result_of, text_of,
};
use common::http_tools::start;
use common::sse::SseReader;

/// Starts `tool` and reads the server's request from its stream; checks it against `schema`.
async fn start_nested(
    client: &Client,
    id: i64,
    tool: &str,
    method: &str,
    schema: &str,
) -> (SseReader, Value) {
    let mut reader = client
        .start(
            json!(id),
            "tools/call",
            json!({"name": tool, "arguments": {}}),
        )
        .await;
    let request = reader.next_message().await;
    assert_eq!(request["method"], method, "{request}");
    assert_valid(schema, &request);
    (reader, request)
}

/// Reads the tool's response from its stream (which must end after it).
async fn finish_nested(mut reader: SseReader, id: i64) -> Value {
    let response = reader.next_message().await;
    assert_eq!(response["id"], id, "{response}");
    reader.expect_end().await;
    result_of(&response).clone()
}

/// sampling/createMessage travels on the tool's stream; the POSTed answer (202) completes the
/// tool.
#[actix_web::test]
async fn sampling_round_trip() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(caps(SAMPLING)).await;
    let (reader, request) = start_nested(
        &client,
        1,
        "sample",
        "sampling/createMessage",
        "CreateMessageRequest",
    )
    .await;
    assert_eq!(request["params"]["maxTokens"], 50);
    client
        .notify(&json!({
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "hi there"},
                "model": "test-model",
            },
        }))
        .await;
    let result = finish_nested(reader, 1).await;
    assert_tool_result(&result, false);
    assert_eq!(text_of(&result), "sampled: hi there");
    assert_eq!(srv.mcp.stats().runtime.peer_requests, 0);
    srv.stop().await;
}

/// elicitation/create, accepted with content.
#[actix_web::test]
async fn elicitation_round_trip() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client
        .initialize(json!({"elicitation": {"form": {}}}))
        .await;
    let (reader, request) =
        start_nested(&client, 1, "elicit", "elicitation/create", "ElicitRequest").await;
    assert_eq!(request["params"]["message"], "Your name?");
    assert_eq!(
        request["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    client
        .notify(&json!({
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }))
        .await;
    let result = finish_nested(reader, 1).await;
    assert_tool_result(&result, false);
    assert_eq!(text_of(&result), r#"accept: {"name":"Ada"}"#);
    srv.stop().await;
}

/// roots/list.
#[actix_web::test]
async fn roots_round_trip() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client
        .initialize(json!({"roots": {"listChanged": true}}))
        .await;
    let (reader, request) =
        start_nested(&client, 1, "roots", "roots/list", "ListRootsRequest").await;
    client
        .notify(&json!({
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"roots": [
                {"uri": "file:///work", "name": "work"},
                {"uri": "file:///home"},
            ]},
        }))
        .await;
    let result = finish_nested(reader, 1).await;
    assert_tool_result(&result, false);
    assert_eq!(text_of(&result), "file:///work,file:///home");
    srv.stop().await;
}

/// A client that answers the server's request with a JSON-RPC error: the tool fails with an
/// `isError` result carrying the client's message, and the client's code (here -32601) is not
/// passed off as the answer to `tools/call`.
#[actix_web::test]
async fn client_error_answer_becomes_a_tool_error() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(caps(SAMPLING)).await;
    let (reader, request) = start_nested(
        &client,
        1,
        "sample",
        "sampling/createMessage",
        "CreateMessageRequest",
    )
    .await;
    client
        .notify(&json!({
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": {"code": -32601, "message": "User rejected sampling request"},
        }))
        .await;
    let result = finish_nested(reader, 1).await;
    assert_tool_result(&result, true);
    assert_eq!(
        text_of(&result),
        "the client answered with an error: User rejected sampling request"
    );
    assert_eq!(srv.mcp.stats().runtime.peer_requests, 0);
    srv.stop().await;
}

/// Without the capability, the tool answers `isError` and nothing is sent to the client.
#[actix_web::test]
async fn nested_request_without_capability_sends_nothing() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    for (id, tool, capability) in [
        (1, "sample", "sampling"),
        (2, "elicit", "elicitation"),
        (3, "roots", "roots"),
    ] {
        let answer = client.call(json!(id), tool, json!({})).await;
        assert!(answer.before.is_empty(), "sent {:?}", answer.before);
        let result = result_of(&answer.response);
        assert_tool_result(result, true);
        assert!(text_of(result).contains(capability), "{result}");
    }
    assert_eq!(srv.mcp.stats().runtime.peer_requests, 0);
    srv.stop().await;
}

/// Cancelling the tool call while its sampling request is pending sends
/// `notifications/cancelled` for the sampling request.
#[actix_web::test]
async fn cancelling_the_origin_cancels_the_pending_sampling_request() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(caps(SAMPLING)).await;
    let (mut reader, request) = start_nested(
        &client,
        1,
        "sample",
        "sampling/createMessage",
        "CreateMessageRequest",
    )
    .await;
    eventually("the sampling request is pending", || {
        srv.mcp.stats().runtime.peer_requests == 1
    })
    .await;
    client.cancel(json!(1)).await;
    let message = reader.next_message().await;
    assert_valid("CancelledNotification", &message);
    assert_eq!(message["params"]["requestId"], request["id"], "{message}");
    while let Some(frame) = reader.next_frame().await {
        assert!(!frame.is_message(), "after the cancel: {:?}", frame.raw);
    }
    eventually("the sampling request is forgotten", || {
        srv.mcp.stats().runtime.peer_requests == 0
    })
    .await;
    assert_ping(&client, 2).await;
    srv.stop().await;
}
