//! Wire edge cases of the Streamable HTTP transport that the conformance suite does not reach:
//! mirrored headers sent twice, `subscriptions/listen` in JSON-response mode (and where no
//! stream can carry it), `close_sse_stream()` on a stream that cannot be resumed, and a burst
//! of notifications larger than a connection's buffer on such a stream.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use actix_mcp::prelude::*;
use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

use common::http::{Client, read_answer, spawn};
use common::mrtr_tools::ask;
use common::sse::SseReader;

fn server() -> Server {
    Server::builder("edges-test", "1.0.0")
        .tool(
            ToolDef::new("regional", |Arguments(args): Arguments| async move {
                Value::Object(args).to_string()
            })
            .description("Mirrors region in a header")
            .input_schema(
                json!({
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                    "required": ["region"]
                })
                .as_object()
                .cloned()
                .unwrap(),
            ),
        )
        .tool(
            ToolDef::new("polite", |cx: RequestContext| async move {
                cx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(50)).await;
                "done"
            })
            .description("Asks its client to reconnect, then answers"),
        )
        .tool(
            ToolDef::new("burst", |cx: RequestContext| async move {
                cx.progress(Progress::new(0.0));
                // Past the answer window: the answer streams from here on.
                tokio::time::sleep(Duration::from_millis(50)).await;
                for step in 1..=300 {
                    cx.progress(Progress::new(f64::from(step)).total(300.0));
                }
                "burst done"
            })
            .description("Sends 300 progress notifications in one go, then answers"),
        )
        .build()
        .unwrap()
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments, "_meta": meta()}})
}

/// Each mirrored header sent twice is refused with 400 and `-32020`, even when its first value
/// matches the body.
#[actix_web::test]
async fn a_mirrored_header_sent_twice_is_refused() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = Client::new(&srv.url);
    let body = call(1, "regional", json!({"region": "eu"}));
    for (name, second) in [
        ("Mcp-Method", "tools/list"),
        ("Mcp-Name", "other"),
        ("Mcp-Param-Region", "us"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ] {
        let request = client.v2026_builder(&body).header("Mcp-Param-Region", "eu");
        // Appends a second value after the one the builder set.
        let mut request = request.build().unwrap();
        request.headers_mut().append(
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            second.parse().unwrap(),
        );
        let response = common::http::send_request(client.http(), request).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{name}");
        let answer = read_answer(response, &json!(1)).await;
        assert_eq!(
            answer.response["error"]["code"], -32020,
            "{name}: {}",
            answer.response
        );
    }
    // The same call with each header once is served.
    let response =
        common::http::send(client.v2026_builder(&body).header("Mcp-Param-Region", "eu")).await;
    assert_eq!(response.status(), StatusCode::OK);

    // A session request with two MCP-Protocol-Version headers too.
    let mut session = srv.client();
    session.initialize(json!({})).await;
    let mut request = session
        .post_builder(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .build()
        .unwrap();
    request
        .headers_mut()
        .append("MCP-Protocol-Version", "2025-06-18".parse().unwrap());
    let response = common::http::send_request(session.http(), request).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);

    // GET and DELETE read the header once too: two values are refused (400, -32020) even
    // when the first names 2026-07-28 (which alone is 405: those methods are not in it).
    let id = session.session.clone().unwrap();
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let builder = |versions: &[&str]| {
            let mut builder = session
                .http()
                .request(method.clone(), &srv.url)
                .header("Accept", "text/event-stream")
                .header("Mcp-Session-Id", &id);
            for version in versions {
                builder = builder.header("MCP-Protocol-Version", *version);
            }
            builder
        };
        let response = common::http::send(builder(&["2026-07-28", "2025-11-25"])).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{method}");
        assert_eq!(
            common::http::refusal(response).await,
            (-32020, Value::Null),
            "{method}"
        );
        let response = common::http::send(builder(&["2026-07-28"])).await;
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method}"
        );
    }
    srv.stop().await;
}

/// In JSON-response mode a listen request is still answered as an event stream: its
/// acknowledgement first, its notifications after. Where no stream can carry it (one JSON
/// answer in process), it is refused.
#[actix_web::test]
async fn listen_is_a_stream_in_json_response_mode_and_refused_without_one() {
    let server = server();
    let srv = spawn(server.http("/mcp").json_response(true), 1);
    let client = Client::new(&srv.url);
    let listen = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"toolsListChanged": true}}});
    let response = common::http::send(client.v2026_builder(&listen)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()[CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let mut reader = SseReader::new(response);
    let ack = reader.next_message().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    server.notify_tools_list_changed();
    let changed = reader.next_message().await;
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
    // Other requests still get one JSON body.
    let response = common::http::send(
        client
            .v2026_builder(&call(8, "regional", json!({"region": "eu"})))
            .header("Mcp-Param-Region", "eu"),
    )
    .await;
    let content_type = response.headers()[CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    drop(reader);

    let answer = ask(&server, &listen).await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    srv.stop().await;
}

/// `close_sse_stream()` in a request whose stream cannot be resumed (2026, sessionless) does
/// nothing: the request runs on and its answer arrives on the same connection.
#[actix_web::test]
async fn closing_a_stream_that_cannot_be_resumed_keeps_the_answer() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = Client::new(&srv.url);
    let body = call(1, "polite", json!({}));
    let response = common::http::send(client.v2026_builder(&body)).await;
    let answer = read_answer(response, &json!(1)).await;
    assert_eq!(
        answer.response["result"]["content"][0]["text"], "done",
        "{}",
        answer.response
    );

    let sessionless = spawn(server().http("/mcp").stateless(true), 1);
    let client = Client::new(&sessionless.url);
    let answer = client.call(json!(2), "polite", json!({})).await;
    assert_eq!(
        answer.response["result"]["content"][0]["text"], "done",
        "{}",
        answer.response
    );
    sessionless.stop().await;
    srv.stop().await;
}

/// More notifications in one go than a connection buffers, on a stream that cannot be resumed:
/// what does not fit is dropped, the answer arrives.
#[actix_web::test]
async fn a_burst_past_the_buffer_keeps_the_answer() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = Client::new(&srv.url);
    let mut body = call(1, "burst", json!({}));
    body["params"]["_meta"]["progressToken"] = json!("p");
    let response = common::http::send(client.v2026_builder(&body)).await;
    let mut reader = SseReader::new(response);
    let mut progress = 0;
    let answer = loop {
        let message = reader.next_message().await;
        if message.get("method").is_some() {
            progress += 1;
            continue;
        }
        break message;
    };
    assert_eq!(
        answer["result"]["content"][0]["text"], "burst done",
        "{answer}"
    );
    assert!(progress >= 128, "{progress} progress notifications");
    srv.stop().await;
}

/// The headers of an SSE answer's response, as `(Content-Encoding, Cache-Control,
/// X-Accel-Buffering)`.
fn sse_headers(response: &reqwest::Response) -> (Option<String>, Option<String>, Option<String>) {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    (
        header("content-encoding"),
        header("cache-control"),
        header("x-accel-buffering"),
    )
}

/// Every SSE answer goes uncompressed (`Content-Encoding: identity`). One that streams (a
/// POST's answer that runs on past the answer window, a GET stream) also tells caches and
/// buffering proxies not to hold its events back; a whole answer, written at once, has nothing
/// more to wait for and goes without those two headers.
#[actix_web::test]
async fn only_a_streamed_sse_answer_carries_the_stream_headers() {
    let srv = spawn(server().http("/mcp"), 1);
    let mut client = Client::new(&srv.url);
    client.initialize(json!({})).await;
    let streamed = (
        Some("identity".to_owned()),
        Some("no-cache".to_owned()),
        Some("no".to_owned()),
    );

    let quick = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "regional", "arguments": {"region": "eu"}}});
    let response = client.post(&quick).await;
    assert!(common::http::content_type(response.headers()).starts_with("text/event-stream"));
    assert_eq!(
        sse_headers(&response),
        (Some("identity".to_owned()), None, None)
    );
    let answer = read_answer(response, &json!(1)).await;
    assert!(answer.response["result"].is_object(), "{}", answer.response);

    let slow = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "burst", "arguments": {}}});
    let response = client.post(&slow).await;
    assert!(common::http::content_type(response.headers()).starts_with("text/event-stream"));
    assert_eq!(sse_headers(&response), streamed);
    let answer = read_answer(response, &json!(2)).await;
    assert_eq!(
        answer.response["result"]["content"][0]["text"], "burst done",
        "{}",
        answer.response
    );

    let stream = client.get(None).await;
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(sse_headers(&stream), streamed);
    drop(stream);
    srv.stop().await;
}
