//! Streamable HTTP SSE streams: the exact framing of an SSE answer (retry, priming event,
//! response, end), the session's GET stream, and resumption with `Last-Event-ID` after the
//! server closed a POST stream (SSE polling).
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

use reqwest::StatusCode;
use serde_json::json;

use common::assert_valid;
use common::http::{result_of, text_of};
use common::http_tools::start;
use common::sse::SseReader;

/// An SSE answer is, byte for byte: a `retry` line, a priming event `N-0` with empty data, the
/// response as event `N-1`, and the end of the stream.
#[actix_web::test]
async fn sse_answer_is_retry_priming_response_then_end() {
    let (_fixture, srv) = start(|mcp| mcp.retry(Duration::from_millis(1500)));
    let mut client = srv.client();
    client.initialize(json!({})).await;

    let mut reader = client.start(json!(7), "ping", json!({})).await;
    let retry = reader.next_frame().await.unwrap();
    assert_eq!(retry.raw, "retry: 1500");
    let priming = reader.next_frame().await.unwrap();
    let stream = priming
        .id
        .as_deref()
        .and_then(|id| id.strip_suffix("-0"))
        .unwrap_or_else(|| panic!("priming event without an `N-0` id: {:?}", priming.raw))
        .to_owned();
    assert!(stream.parse::<u64>().is_ok(), "stream number {stream:?}");
    assert_eq!(priming.raw, format!("id: {stream}-0\ndata: "));
    let response = reader.next_frame().await.unwrap();
    assert_eq!(
        response.raw,
        format!("id: {stream}-1\ndata: {{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{}}}}")
    );
    response.json();
    assert_eq!(reader.next_frame().await, None, "the stream must end");

    srv.stop().await;
}

/// Server-wide notifications reach the session's GET stream, not a POST stream.
#[actix_web::test]
async fn get_stream_receives_list_changed() {
    let (fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;

    let response = client.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);
    assert!(stream.next_event().await.retry.is_some());
    let priming = stream.next_event().await;
    assert!(priming.id.is_some() && priming.data.as_deref() == Some(""));

    fixture.server.notify_tools_list_changed();
    let (_, message) = stream.next_message_with_id().await;
    assert_eq!(
        message,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );

    // A tool changing the catalog: the notification goes to the GET stream, the POST stream
    // carries only the response.
    let answer = client
        .call(json!(1), "add_tool", json!({"name": "late"}))
        .await;
    assert!(answer.before.is_empty(), "{:?}", answer.before);
    assert_eq!(text_of(result_of(&answer.response)), "added");
    let message = stream.next_message().await;
    assert_valid("ToolListChangedNotification", &message);
    let result = client.call_ok(json!(2), "late", json!({})).await;
    assert_eq!(text_of(&result), "hello");

    srv.stop().await;
}

/// A POST stream the server closes early is resumed by GET with `Last-Event-ID`, and the
/// response arrives there; resuming another stream never replays this one's events.
#[actix_web::test]
async fn closed_post_stream_resumes_on_get() {
    let (fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;

    let mut post = client
        .start(
            json!(5),
            "tools/call",
            json!({"name": "close_stream", "arguments": {}}),
        )
        .await;
    assert!(post.next_event().await.retry.is_some());
    let priming = post.next_event().await;
    assert_eq!(priming.data.as_deref(), Some(""));
    let last = priming.id.clone().unwrap();
    post.expect_end().await;
    let stream = last.strip_suffix("-0").unwrap().to_owned();

    let response = client.get(Some(&last)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut resumed = SseReader::new(response);
    // The new connection is attached to the live stream (the headers come after that): only
    // now may the tool answer, so the response travels on the resumed connection.
    fixture.probes.reconnected.hit();
    let (id, message) = resumed.next_message_with_id().await;
    assert_eq!(id.as_deref(), Some(format!("{stream}-1").as_str()));
    assert_eq!(message["id"], 5);
    assert_eq!(text_of(result_of(&message)), "after the reconnect");
    resumed.expect_end().await;

    // Another stream: an echo call's. Resuming it replays its own response only.
    let mut echo = client
        .start(
            json!(6),
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "x"}}),
        )
        .await;
    assert!(echo.next_event().await.retry.is_some());
    let echo_priming = echo.next_event().await.id.unwrap();
    let (_, response) = echo.next_message_with_id().await;
    assert_eq!(response["id"], 6);
    echo.expect_end().await;
    assert_ne!(echo_priming, last);

    let response = client.get(Some(&echo_priming)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut replay = SseReader::new(response);
    let mut messages = Vec::new();
    while let Some(frame) = replay.next_frame().await {
        if frame.is_message() {
            let id = frame.id.clone().unwrap();
            assert!(
                !id.starts_with(&format!("{stream}-")),
                "replayed event {id} of another stream"
            );
            messages.push(frame.json());
        }
    }
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["id"], 6);

    srv.stop().await;
}

/// Event data is bounded by bytes for the whole server: answers larger than the budget are not
/// kept, the store gives every byte back, and a resume that asks for evicted events is told so
/// with 410 rather than handed an empty stream.
#[actix_web::test]
async fn evicted_events_are_answered_gone_and_the_store_stays_within_its_budget() {
    let store = actix_mcp::InMemoryEventStore::new(1024, 64 * 1024).max_server_bytes(64 * 1024);
    let probe = store.clone();
    let (_fixture, srv) = start(move |mcp| mcp.event_store(std::sync::Arc::new(store)));
    let mut client = srv.client();
    client.initialize(json!({})).await;

    // Ten answers of 40 KB each: at most one is held at a time.
    let text = "x".repeat(40 * 1024);
    let mut primings = Vec::new();
    for id in 0..10 {
        let mut reader = client
            .start(
                json!(id),
                "tools/call",
                json!({"name": "echo", "arguments": {"message": text}}),
            )
            .await;
        assert!(reader.next_event().await.retry.is_some());
        primings.push(reader.next_event().await.id.unwrap());
        let (_, response) = reader.next_message_with_id().await;
        assert_eq!(response["id"], id);
        reader.expect_end().await;
        assert!(probe.bytes_held() <= 64 * 1024, "{}", probe.bytes_held());
    }

    // The last answer is still kept; the first was evicted to make room.
    let response = client.get(primings.last().map(String::as_str)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut replay = SseReader::new(response);
    let (_, message) = replay.next_message_with_id().await;
    assert_eq!(message["id"], 9);
    let response = client.get(Some(&primings[0])).await;
    assert_eq!(response.status(), StatusCode::GONE);
    assert_eq!(common::http::error_body(response).await, -32600);

    // Ending the session gives the bytes back.
    assert_eq!(client.delete().await, StatusCode::OK);
    common::http::eventually("the store is empty", || probe.bytes_held() == 0).await;
    srv.stop().await;
}
