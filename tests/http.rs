//! Streamable HTTP on the wire: a real actix-web server on `127.0.0.1:0` (see
//! [`common::http::spawn`]) driven by raw reqwest requests.
//!
//! Each test checks exact status codes, headers, SSE frames and JSON-RPC bodies, and every
//! JSON-RPC message the server sends is validated against the MCP 2025-11-25 schema. Tools
//! report through [`Probe`]s registered as server state, so no test sleeps to wait for the
//! server; every wait is bounded by [`WAIT`] (fail, don't hang).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CreateMessageRequestParams, ElicitationSchema, SamplingMessage, SamplingMessageContentBlock,
    StringSchema,
};
use actix_mcp::transport::http::{HostPolicy, McpHttp};
use actix_mcp::{ExceptionReport, MetricsSnapshot};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HOST, ORIGIN};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use common::assert_valid;
use common::http::{
    Client, Probe, TestServer, VERSION, error_body, eventually, read_answer, send, spawn, text_of,
};
use common::sse::SseReader;

// ---------------------------------------------------------------------------------------------
// The server under test
// ---------------------------------------------------------------------------------------------

/// What the tools report to the test.
#[derive(Clone, Default)]
struct Probes {
    /// `slow` has started.
    started: Arc<Probe>,
    /// `slow` has stopped: its future saw cancellation or was dropped.
    stopped: Arc<Probe>,
}

/// Hits its probe when dropped: a tool future dropped by cancellation still reports.
struct HitOnDrop(Arc<Probe>);

impl Drop for HitOnDrop {
    fn drop(&mut self) {
        self.0.hit();
    }
}

type Reports = Arc<Mutex<Vec<ExceptionReport>>>;

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

/// Arguments of `add_tool`.
#[derive(Deserialize, JsonSchema)]
struct AddToolArgs {
    /// The new tool's name.
    name: String,
}

/// Waits for cancellation, reporting start and stop.
async fn slow(State(probes): State<Probes>, cx: RequestContext) -> &'static str {
    let _stopped = HitOnDrop(probes.stopped.clone());
    probes.started.hit();
    cx.cancelled().await;
    "cancelled"
}

/// Reports progress 1..=100 of 100.
async fn progress(cx: RequestContext) -> &'static str {
    for i in 1..=100u32 {
        cx.progress(f64::from(i), Some(100.0), None);
    }
    "done"
}

/// Asks the client to sample; the client's text is the result.
async fn sample(cx: RequestContext) -> Result<String, McpError> {
    let params =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Say something")], 50);
    let result = cx.create_message(params).await?;
    result
        .content
        .as_slice()
        .iter()
        .find_map(|block| match block {
            SamplingMessageContentBlock::Text(text) => Some(format!("sampled: {}", text.text)),
            _ => None,
        })
        .ok_or_else(|| McpError::tool("the client answered without text"))
}

/// Asks the client for a name (form elicitation).
async fn elicit(cx: RequestContext) -> Result<String, McpError> {
    let schema = ElicitationSchema::new().property("name", StringSchema::default(), true);
    let result = cx.elicit_form("Your name?", schema).await?;
    let content = serde_json::to_value(&result.content).unwrap();
    Ok(format!(
        "{}: {content}",
        serde_json::to_value(result.action)
            .unwrap()
            .as_str()
            .unwrap()
    ))
}

/// Lists the client's roots.
async fn roots(cx: RequestContext) -> Result<String, McpError> {
    let result = cx.list_roots().await?;
    Ok(result
        .roots
        .iter()
        .map(|root| root.uri.as_str())
        .collect::<Vec<_>>()
        .join(","))
}

/// Panics.
async fn explode(Params(args): Params<EchoArgs>) -> String {
    panic!("tool exploded: {}", args.message)
}

/// Closes its SSE connection, then answers a little later (SSE polling).
async fn close_stream(cx: RequestContext) -> &'static str {
    cx.close_sse_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    "after the reconnect"
}

/// Registers a tool at run time (every session's GET stream gets `tools/list_changed`).
async fn add_tool(
    Params(args): Params<AddToolArgs>,
    cx: RequestContext,
) -> Result<&'static str, McpError> {
    let new_tool = tool(
        args.name,
        "Added at run time",
        |_cx: RequestContext| async { "hello" },
    );
    cx.server()
        .define_tool(new_tool)
        .map_err(|err| McpError::tool(err.to_string()))?;
    Ok("added")
}

/// The server every test talks to, with its probes and the exception reports it made.
struct Fixture {
    server: Server,
    probes: Probes,
    reports: Reports,
}

fn fixture() -> Fixture {
    let probes = Probes::default();
    let reports = Reports::default();
    let sink = reports.clone();
    let server = Server::builder("http-test", "1.0.0")
        .state(probes.clone())
        .exception_reporter(move |report| sink.lock().unwrap().push(report.clone()))
        .tool(tool(
            "echo",
            "Returns its message",
            |Params(args): Params<EchoArgs>| async move { args.message },
        ))
        .tool(tool("slow", "Waits until cancelled", slow))
        .tool(tool("progress", "Reports 100 progress steps", progress))
        .tool(tool("sample", "Samples through the client", sample))
        .tool(tool("elicit", "Asks the user for a name", elicit))
        .tool(tool("roots", "Lists the client's roots", roots))
        .tool(tool("explode", "Panics", explode))
        .tool(
            tool(
                "too_slow",
                "Sleeps 10 s under a 50 ms limit",
                |_cx: RequestContext| async {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    "woke up"
                },
            )
            .timeout(Duration::from_millis(50)),
        )
        .tool(tool(
            "close_stream",
            "Closes its SSE connection",
            close_stream,
        ))
        .tool(tool("add_tool", "Registers a tool", add_tool))
        .build()
        .unwrap();
    Fixture {
        server,
        probes,
        reports,
    }
}

/// The fixture's server on one worker, configured by `configure`.
fn start(configure: impl FnOnce(McpHttp) -> McpHttp) -> (Fixture, TestServer) {
    let fixture = fixture();
    let mcp = configure(fixture.server.http("/mcp"));
    let server = spawn(mcp, 1);
    (fixture, server)
}

const SAMPLING: &str = r#"{"sampling": {}}"#;

fn caps(json: &str) -> Value {
    serde_json::from_str(json).unwrap()
}

fn tools_call(id: Value, name: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    })
}

/// A tool result: valid `CallToolResult`, `isError` as expected.
fn assert_tool_result(result: &Value, is_error: bool) {
    assert_valid("CallToolResult", result);
    assert_eq!(
        result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        is_error,
        "{result}"
    );
}

/// The JSON-RPC response must be a result; returns it.
fn result_of(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result: {response}"))
}

async fn assert_ping(client: &Client, id: i64) {
    let answer = client.request(json!(id), "ping", json!({})).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.response,
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    );
}

// ---------------------------------------------------------------------------------------------
// 1. What a POST must look like
// ---------------------------------------------------------------------------------------------

/// Bad `Accept`, `Content-Type`, size, JSON, batches and methods get exact statuses, each with a
/// JSON-RPC error body.
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

    let response = send(http.put(&srv.url).body(ping)).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        response.headers().get("allow").unwrap(),
        "GET, POST, DELETE"
    );
    assert_eq!(error_body(response).await, -32600);

    srv.stop().await;
}

// ---------------------------------------------------------------------------------------------
// 2. Sessions
// ---------------------------------------------------------------------------------------------

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

    let mut old = client.clone();
    old.version = Some("1999-01-01".into());
    let response = old
        .post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(error_body(response).await, -32600);

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

// ---------------------------------------------------------------------------------------------
// 3. Answer formats
// ---------------------------------------------------------------------------------------------

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
    assert_eq!(srv.mcp.metrics().peer_requests, 0, "nothing was sent");

    srv.stop().await;
}

// ---------------------------------------------------------------------------------------------
// 4. Stateless mode
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// 5. The GET stream and resumption
// ---------------------------------------------------------------------------------------------

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
    let (_fixture, srv) = start(|mcp| mcp);
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

// ---------------------------------------------------------------------------------------------
// 6. Progress
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// 7. Cancellation
// ---------------------------------------------------------------------------------------------

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
    eventually("no request in flight", || srv.mcp.metrics().in_flight == 0).await;
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

// ---------------------------------------------------------------------------------------------
// 8. Server-to-client requests
// ---------------------------------------------------------------------------------------------

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
    assert_eq!(srv.mcp.metrics().peer_requests, 0);
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
    assert_eq!(srv.mcp.metrics().peer_requests, 0);
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
    assert_eq!(srv.mcp.metrics().peer_requests, 0);
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
        srv.mcp.metrics().peer_requests == 1
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
        srv.mcp.metrics().peer_requests == 0
    })
    .await;
    assert_ping(&client, 2).await;
    srv.stop().await;
}

// ---------------------------------------------------------------------------------------------
// 9. Failures inside tools
// ---------------------------------------------------------------------------------------------

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
    eventually("no tool call left", || srv.mcp.metrics().tool_calls == 0).await;
    srv.stop().await;
}

// ---------------------------------------------------------------------------------------------
// 10, 11. Workers and servers
// ---------------------------------------------------------------------------------------------

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
        .tool(tool("greet", "Greets", |_cx: RequestContext| async {
            "hi"
        }))
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

// ---------------------------------------------------------------------------------------------
// 12. DNS-rebinding protection
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// 13-15. Resource limits
// ---------------------------------------------------------------------------------------------

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
    assert_eq!(
        srv.mcp.metrics(),
        MetricsSnapshot {
            sessions: SESSIONS,
            in_flight: SESSIONS,
            streams: 2 * SESSIONS,
            tool_calls: SESSIONS,
            peer_requests: 0,
        }
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
        srv.mcp.metrics() == zero && srv.mcp.session_count() == 0
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
    // Give the streaming session three timeouts of inactivity besides its stream.
    tokio::time::sleep_until(since + timeout * 3).await;
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
