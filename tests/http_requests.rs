//! Streamable HTTP request lifecycle: progress notifications in order before the result,
//! cancellation (including cancels racing the request and late cancels), and failures inside
//! tools (panics, timeouts).
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
use serde_json::{Value, json};

use common::assert_valid;
use common::http::{
    Client, assert_ping, assert_tool_result, eventually, result_of, text_of, tools_call,
};
use common::http_tools::start;
use common::sse::SseReader;

async fn assert_hundred_progress_steps(client: &Client, id: i64, token: Value) {
    let message = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": token}},
    });
    let mut reader = SseReader::new(client.post(&message).await);
    let mut seqs = Vec::new();
    let mut progress = Vec::new();
    let response = loop {
        let (event_id, message) = reader.next_message_with_id().await;
        let seq: u64 = event_id
            .unwrap()
            .rsplit('-')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        seqs.push(seq);
        if message.get("method").is_none() {
            break message;
        }
        assert_valid("ProgressNotification", &message);
        assert_eq!(message["params"]["progressToken"], token);
        assert_eq!(message["params"]["total"], 100);
        progress.push(message["params"]["progress"].as_f64().unwrap());
    };
    reader.expect_end().await;
    assert_eq!(response["id"], id);
    assert_eq!(text_of(result_of(&response)), "done");
    let expected: Vec<f64> = (1..=100u32).map(f64::from).collect();
    assert_eq!(progress, expected, "100 steps, in order, before the result");
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "event ids increase: {seqs:?}"
    );
}

/// 100 progress notifications, strictly increasing, echoing the token (string or integer), all
/// before the result.
#[actix_web::test]
async fn progress_arrives_in_order_before_the_result() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    assert_hundred_progress_steps(&client, 1, json!("progress-token")).await;
    assert_hundred_progress_steps(&client, 2, json!(42)).await;
    srv.stop().await;
}

/// A progress token is copied into every progress notification, so a large one is refused
/// with -32602 before the tool runs; one at the limit is echoed.
#[actix_web::test]
async fn an_oversized_progress_token_is_refused() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let message = json!({
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": "t".repeat(1 << 20)}},
    });
    let answer = common::http::read_answer(client.post(&message).await, &json!(5)).await;
    assert_eq!(
        answer.response["error"]["code"], -32602,
        "{}",
        answer.response
    );
    assert!(answer.before.is_empty(), "no progress was sent");
    assert!(
        answer.response.to_string().len() < 512,
        "the token is not echoed"
    );
    assert_hundred_progress_steps(&client, 6, json!("t".repeat(256))).await;
    srv.stop().await;
}

/// `notifications/cancelled` (202) reaches the running tool, and its stream ends without a
/// response.
#[actix_web::test]
async fn cancel_stops_the_tool_and_its_stream_sends_no_response() {
    let (fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;

    let mut reader = client
        .start(
            json!(7),
            "tools/call",
            json!({"name": "slow", "arguments": {}}),
        )
        .await;
    fixture.probes.started.wait_for(1).await;
    client.cancel(json!(7)).await;
    fixture.probes.stopped.wait_for(1).await;
    while let Some(frame) = reader.next_frame().await {
        assert!(
            !frame.is_message(),
            "a cancelled request sent {:?}",
            frame.raw
        );
    }
    assert_ping(&client, 8).await;
    srv.stop().await;
}

/// A cancel racing the request (possibly before its handler starts): no hang, no panic, and
/// the session keeps serving.
#[actix_web::test]
async fn cancel_racing_the_request_never_hangs() {
    let (fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let other = client.fresh_connection();

    for id in 100..110 {
        let call = tools_call(json!(id), "slow", json!({}));
        let (response, ()) = tokio::join!(client.post(&call), other.cancel(json!(id)),);
        assert_eq!(response.status(), StatusCode::OK);
        let mut reader = SseReader::new(response);
        // The race may have lost (the cancel came first and was ignored): cancel again.
        client.cancel(json!(id)).await;
        let started = fixture.probes.started.hits();
        fixture.probes.stopped.wait_for(started).await;
        while let Some(frame) = reader.next_frame().await {
            assert!(!frame.is_message(), "request {id} sent {:?}", frame.raw);
        }
        assert_ping(&client, id + 1000).await;
    }
    eventually("no request in flight", || {
        srv.mcp.stats().runtime.in_flight == 0
    })
    .await;
    srv.stop().await;
}

/// A cancel after the response is ignored.
#[actix_web::test]
async fn cancel_after_the_response_is_ignored() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let result = client
        .call_ok(json!(1), "echo", json!({"message": "a"}))
        .await;
    assert_eq!(text_of(&result), "a");
    client.cancel(json!(1)).await;
    let result = client
        .call_ok(json!(2), "echo", json!({"message": "b"}))
        .await;
    assert_eq!(text_of(&result), "b");
    assert_ping(&client, 3).await;
    srv.stop().await;
}

/// A panicking tool answers `isError`, the exception reporter gets the panic, and the next call
/// works.
#[actix_web::test]
async fn a_panicking_tool_is_isolated_and_reported() {
    let (fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let result = client
        .call_ok(json!(1), "explode", json!({"message": "kaboom"}))
        .await;
    assert_tool_result(&result, true);
    assert_eq!(
        text_of(&result),
        "tool `explode` failed with an internal error"
    );
    {
        let reports = fixture.reports.lock().unwrap();
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(reports[0].message, "tool exploded: kaboom");
        assert!(reports[0].panicked);
        assert_eq!(
            reports[0].session_id.as_ref().map(|s| s.as_str()),
            client.session.as_deref()
        );
    }
    let result = client
        .call_ok(json!(2), "echo", json!({"message": "still here"}))
        .await;
    assert_eq!(text_of(&result), "still here");
    srv.stop().await;
}

/// A tool over its own 50 ms limit answers `isError` naming the timeout.
#[actix_web::test]
async fn a_tool_over_its_timeout_answers_is_error() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let result = client.call_ok(json!(1), "too_slow", json!({})).await;
    assert_tool_result(&result, true);
    assert_eq!(text_of(&result), "tool `too_slow` timed out after 50 ms");
    eventually("no tool call left", || {
        srv.mcp.stats().runtime.tool_calls == 0
    })
    .await;
    srv.stop().await;
}
