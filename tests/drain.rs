//! Graceful drain, step by step: new requests are refused (503 with `Retry-After`) while the
//! requests in flight finish; past the deadline the rest are cancelled (a session's request
//! gets `notifications/cancelled`, a request without a session has its answer closed, or a
//! `-32800` error when it awaits a JSON body); SSE streams end with a `retry` hint; the event
//! store is flushed. The same over stdio (stop reading, finish or cancel), and the example
//! server on SIGTERM (drains, exits 0).
//!
//! Real servers on `127.0.0.1:0` ([`common::http::spawn`]); every wait is bounded.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::transport::http::{McpHttpBuilder, SHUTDOWN_REASON};
use actix_mcp::{EventStore, InMemoryEventStore, SessionEvents, SessionId};
use futures::future::BoxFuture;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;

use actix_mcp::transport::http::DrainReport;
use common::http::{Probe, TestServer, http_client, read_answer, refusal, send, spawn};
use common::sse::{SseFrame, SseReader};
use common::{WAIT, eventually};

/// What the tools report, and the gate `gated` waits behind.
#[derive(Clone)]
struct Gate {
    started: Arc<Probe>,
    stopped: Arc<Probe>,
    open: Arc<Semaphore>,
}

impl Default for Gate {
    fn default() -> Self {
        Self {
            started: Arc::default(),
            stopped: Arc::default(),
            open: Arc::new(Semaphore::new(0)),
        }
    }
}

/// Hits its probe when dropped: a cancelled tool still reports.
struct HitOnDrop(Arc<Probe>);

impl Drop for HitOnDrop {
    fn drop(&mut self) {
        self.0.hit();
    }
}

fn server(gate: &Gate) -> Server {
    Server::builder("drain-test", "1.0.0")
        .state(gate.clone())
        .tool(
            ToolDef::new("gated", |State(gate): State<Gate>| async move {
                gate.started.hit();
                gate.open.acquire().await.unwrap().forget();
                "through the gate"
            })
            .description("Answers once the test opens the gate"),
        )
        .tool(
            ToolDef::new(
                "slow",
                |State(gate): State<Gate>, cx: RequestContext| async move {
                    let _stopped = HitOnDrop(gate.stopped.clone());
                    gate.started.hit();
                    cx.cancelled().await;
                    "cancelled"
                },
            )
            .description("Waits until cancelled"),
        )
        .build()
        .unwrap()
}

fn start(configure: impl FnOnce(McpHttpBuilder) -> McpHttpBuilder) -> (Gate, TestServer) {
    let gate = Gate::default();
    let mcp = configure(server(&gate).http("/mcp"));
    (gate, spawn(mcp, 1))
}

/// Starts a drain in the background; its report arrives on the handle.
fn drain(srv: &TestServer, deadline: Duration) -> actix_rt::task::JoinHandle<DrainReport> {
    let mcp = srv.mcp.clone();
    actix_rt::spawn(async move { mcp.drain(deadline).await })
}

/// Reads a stream to its end: the frames that are not keep-alives.
async fn rest_of(reader: &mut SseReader) -> Vec<SseFrame> {
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame().await {
        if !frame.is_comment() {
            frames.push(frame);
        }
    }
    frames
}

/// The drain's `retry` hint: the last frame of a closed stream, with no data.
fn assert_ends_with_retry_hint(frames: &[SseFrame], retry_ms: u64) {
    let last = frames.last().expect("the stream sent nothing");
    assert_eq!(last.retry, Some(retry_ms), "{:?}", last.raw);
    assert!(last.data.is_none(), "{:?}", last.raw);
}

/// Step 1 and 2: once the drain began, a new session, a request on an existing session and a
/// GET are refused 503 with `Retry-After`, while the request in flight runs to its answer; the
/// drain then ends without cancelling anything.
#[actix_web::test]
async fn new_requests_are_refused_while_those_in_flight_finish() {
    let (gate, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let mut call = client
        .start(
            json!(1),
            "tools/call",
            json!({"name": "gated", "arguments": {}}),
        )
        .await;
    gate.started.wait_for(1).await;
    let drained = drain(&srv, WAIT * 2);
    eventually("the drain begins", || srv.mcp.is_draining()).await;

    let newcomer = srv.client();
    let response = newcomer
        .post(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "late", "version": "1"}}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(refusal(response).await, (-32000, Value::Null));
    let response = client
        .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().contains_key("retry-after"));
    let response = client.get(None).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().contains_key("retry-after"));

    gate.open.add_permits(1);
    let response = call.next_message().await;
    assert_eq!(
        response["result"]["content"][0]["text"], "through the gate",
        "{response}"
    );
    let report = tokio::time::timeout(WAIT * 3, drained)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.in_flight_at_start, 1);
    assert_eq!(report.cancelled, 0);
    assert_eq!(srv.mcp.stats().runtime.in_flight, 0);
    srv.stop().await;
}

/// Step 3 (sessions): a request still running at the deadline is cancelled: its handler
/// stops, and its client gets `notifications/cancelled` (with the request's id and the reason)
/// on the request's stream, which then ends.
#[actix_web::test]
async fn a_session_request_past_the_deadline_is_cancelled_and_told() {
    let (gate, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let mut call = client
        .start(
            json!(7),
            "tools/call",
            json!({"name": "slow", "arguments": {}}),
        )
        .await;
    gate.started.wait_for(1).await;
    let report = srv.mcp.drain(Duration::from_millis(100)).await;
    assert_eq!(report.cancelled, 1);
    gate.stopped.wait_for(1).await;
    let cancelled = call.next_message().await;
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{cancelled}"
    );
    assert_eq!(cancelled["params"]["requestId"], 7);
    assert_eq!(cancelled["params"]["reason"], SHUTDOWN_REASON);
    call.expect_end().await;
    eventually("no request left", || srv.mcp.stats().runtime.in_flight == 0).await;
    srv.stop().await;
}

/// The same in JSON response mode: the POST awaiting its body gets the `-32800` answer.
#[actix_web::test]
async fn a_json_session_request_past_the_deadline_gets_a_cancelled_error() {
    let (gate, srv) = start(|mcp| mcp.json_response(true));
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let pending = {
        let client = client.clone();
        actix_rt::spawn(async move {
            let response = client
                .post(&common::http::tools_call(json!(3), "slow", json!({})))
                .await;
            read_answer(response, &json!(3)).await
        })
    };
    gate.started.wait_for(1).await;
    let report = srv.mcp.drain(Duration::from_millis(100)).await;
    assert_eq!(report.cancelled, 1);
    let answer = tokio::time::timeout(WAIT, pending).await.unwrap().unwrap();
    assert_eq!(
        answer.response["error"]["code"], -32800,
        "{}",
        answer.response
    );
    assert_eq!(answer.response["id"], 3);
    gate.stopped.wait_for(1).await;
    srv.stop().await;
}

/// A 2026-07-28 request (no session): its headers and `_meta`.
fn v2026_call(srv: &TestServer, id: i64, name: &str) -> reqwest::RequestBuilder {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
    "name": name, "arguments": {},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "drain-test", "version": "1"},
    }}});
    http_client()
        .post(&srv.url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", name)
        .body(body.to_string())
}

/// Step 3 (2026-07-28, no session): a request still running at the deadline is answered with
/// a `-32800` error (the revision forbids a server's `notifications/cancelled` there), which
/// ends its answer's stream as any response does.
#[actix_web::test]
async fn a_stateless_request_past_the_deadline_gets_an_error_then_its_answer_closes() {
    let (gate, srv) = start(|mcp| mcp);
    let response = send(v2026_call(&srv, 5, "slow")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut call = SseReader::new(response);
    gate.started.wait_for(1).await;
    let report = srv.mcp.drain(Duration::from_millis(100)).await;
    assert_eq!(report.cancelled, 1);
    let frames = rest_of(&mut call).await;
    let messages: Vec<Value> = frames
        .iter()
        .filter(|frame| frame.is_message())
        .map(SseFrame::json)
        .collect();
    assert_eq!(messages.len(), 1, "{frames:?}");
    assert_eq!(messages[0]["id"], 5, "{messages:?}");
    assert_eq!(messages[0]["error"]["code"], -32800, "{messages:?}");
    assert!(
        frames.last().is_some_and(SseFrame::is_message),
        "{frames:?}"
    );
    gate.stopped.wait_for(1).await;
    eventually("no request left", || srv.mcp.stats().runtime.in_flight == 0).await;
    srv.stop().await;
}

/// Step 3 (stateless mode, JSON answers): the POST awaiting its body gets `-32800` with 503.
#[actix_web::test]
async fn a_stateless_json_request_past_the_deadline_gets_a_cancelled_error() {
    let (gate, srv) = start(|mcp| mcp.stateless(true).json_response(true));
    let client = srv.client();
    let pending = actix_rt::spawn(async move {
        client
            .post(&common::http::tools_call(json!(4), "slow", json!({})))
            .await
    });
    gate.started.wait_for(1).await;
    let report = srv.mcp.drain(Duration::from_millis(100)).await;
    assert_eq!(report.cancelled, 1);
    let response = tokio::time::timeout(WAIT, pending).await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().contains_key("retry-after"));
    assert_eq!(refusal(response).await, (-32800, json!(4)));
    gate.stopped.wait_for(1).await;
    srv.stop().await;
}

/// Step 4: an open GET stream ends with the `retry` hint (the endpoint's retry advice) so the
/// client reconnects elsewhere; the session is still there to resume.
#[actix_web::test]
async fn sse_streams_end_with_a_retry_hint() {
    let (_gate, srv) = start(|mcp| mcp.retry(Duration::from_millis(1500)));
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let response = client.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);
    let first = stream.next_event().await;
    assert_eq!(first.retry, Some(1500));
    let report = srv.mcp.drain(WAIT).await;
    assert_eq!(report.cancelled, 0);
    let frames = rest_of(&mut stream).await;
    assert_ends_with_retry_hint(&frames, 1500);
    assert_eq!(srv.mcp.session_count(), 1);
    srv.stop().await;
}

/// An event store that counts its flushes.
#[derive(Default)]
struct CountingStore {
    inner: InMemoryEventStore,
    flushes: Arc<AtomicUsize>,
}

impl EventStore for CountingStore {
    fn open(&self, session: &SessionId) -> Arc<dyn SessionEvents> {
        self.inner.open(session)
    }

    fn flush(&self) -> BoxFuture<'static, ()> {
        let flushes = self.flushes.clone();
        Box::pin(async move {
            flushes.fetch_add(1, Ordering::SeqCst);
        })
    }
}

/// Step 5: the event store is flushed once, after the streams closed; a second shutdown
/// waits for the first and returns its report.
#[actix_web::test]
async fn the_event_store_is_flushed_once() {
    let store = CountingStore::default();
    let flushes = store.flushes.clone();
    let (_gate, srv) = start(|mcp| mcp.event_store(Arc::new(store)));
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let first = srv.mcp.drain(WAIT).await;
    assert_eq!(flushes.load(Ordering::SeqCst), 1);
    let second = srv.mcp.drain(WAIT).await;
    assert_eq!(first, second);
    assert_eq!(flushes.load(Ordering::SeqCst), 1);
    srv.stop().await;
}

/// A stdio-framed server on an in-memory pipe whose drain the test triggers.
struct Stdio {
    to_server: tokio::io::DuplexStream,
    from_server: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    shutdown: Option<tokio::sync::oneshot::Sender<Duration>>,
    served: actix_rt::task::JoinHandle<std::io::Result<()>>,
}

impl Stdio {
    async fn start(server: &Server) -> Self {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let (shutdown, signal) = tokio::sync::oneshot::channel::<Duration>();
        let server = server.clone();
        let served = actix_rt::spawn(async move {
            let signal = async move { signal.await.unwrap_or(WAIT) };
            server
                .serve_io_until(server_in, server_out, Default::default(), signal)
                .await
        });
        let mut stdio = Self {
            to_server: client_out,
            from_server: BufReader::new(client_in).lines(),
            shutdown: Some(shutdown),
            served,
        };
        stdio
            .send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
            )
            .await;
        assert_eq!(stdio.read().await["id"], 0);
        stdio
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        stdio
    }

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.to_server.write_all(line.as_bytes()).await.unwrap();
    }

    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.from_server.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("the server's output is open");
        serde_json::from_str(&line).unwrap()
    }

    fn shutdown(&mut self, deadline: Duration) {
        self.shutdown.take().unwrap().send(deadline).unwrap();
    }

    async fn finished(self) -> std::io::Result<()> {
        tokio::time::timeout(WAIT * 2, self.served)
            .await
            .expect("the stdio server did not return")
            .unwrap()
    }
}

/// stdio: on shutdown the server stops reading, lets the request in flight answer, and
/// returns `Ok`.
#[actix_web::test]
async fn stdio_finishes_what_is_in_flight_then_returns() {
    let gate = Gate::default();
    let mut stdio = Stdio::start(&server(&gate)).await;
    stdio
        .send(common::http::tools_call(json!(1), "gated", json!({})))
        .await;
    gate.started.wait_for(1).await;
    stdio.shutdown(WAIT * 2);
    gate.open.add_permits(1);
    let answer = stdio.read().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "through the gate");
    stdio.finished().await.unwrap();
}

/// stdio: a request still running at the deadline gets `notifications/cancelled`, its handler
/// stops, and the server returns `Ok`.
#[actix_web::test]
async fn stdio_cancels_what_outlives_the_deadline() {
    let gate = Gate::default();
    let mut stdio = Stdio::start(&server(&gate)).await;
    stdio
        .send(common::http::tools_call(json!(9), "slow", json!({})))
        .await;
    gate.started.wait_for(1).await;
    stdio.shutdown(Duration::from_millis(100));
    let cancelled = stdio.read().await;
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{cancelled}"
    );
    assert_eq!(cancelled["params"]["requestId"], 9);
    assert_eq!(cancelled["params"]["reason"], SHUTDOWN_REASON);
    gate.stopped.wait_for(1).await;
    stdio.finished().await.unwrap();
}

/// The example server on SIGTERM: the call in flight still gets its answer, and the process
/// exits 0.
#[cfg(unix)]
#[actix_web::test]
async fn the_example_server_drains_on_sigterm_and_exits_zero() {
    use rustix::process::{Pid, Signal, kill_process};

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(common::pipe::example_binary("http_server"))
        .args([
            "--port",
            &port.to_string(),
            "--workers",
            "1",
            "--drain-ms",
            "10000",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    common::pipe::ready(&base).await;
    let mut client = common::http::Client::new(&format!("{base}/mcp"));
    client.initialize(json!({})).await;
    let mut call = client
        .start(
            json!(1),
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 700}, "_meta": {"progressToken": "p"}}),
        )
        .await;
    // The first progress notification proves the call is in flight.
    let progress = call.next_message().await;
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    let pid = Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap()).unwrap();
    kill_process(pid, Signal::TERM).unwrap();
    let response = loop {
        let message = call.next_message().await;
        if message.get("id").is_some() {
            break message;
        }
    };
    assert_eq!(
        response["result"]["content"][0]["text"], "slept 700 ms",
        "{response}"
    );
    let status = tokio::time::timeout(WAIT * 4, child.wait())
        .await
        .expect("the example did not exit after draining")
        .unwrap();
    assert!(status.success(), "{status}");
}

/// The `_meta` of a 2026 request.
fn meta_2026() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// stdio: a listen stream ends with its closing result as soon as the drain starts (it would
/// otherwise run until the deadline), and the server returns without waiting for the deadline.
#[actix_web::test]
async fn stdio_ends_listen_streams_when_the_drain_starts() {
    let gate = Gate::default();
    let mut stdio = Stdio::start(&server(&gate)).await;
    stdio
        .send(
            json!({"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen", "params": {
            "_meta": meta_2026(), "notifications": {"toolsListChanged": true}}}),
        )
        .await;
    let ack = stdio.read().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let started = tokio::time::Instant::now();
    stdio.shutdown(Duration::from_secs(30));
    let closed = stdio.read().await;
    assert_eq!(closed["id"], 5, "{closed}");
    assert_eq!(
        closed["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
    stdio.finished().await.unwrap();
    assert!(
        started.elapsed() < WAIT,
        "the drain waited for the listen stream"
    );
}

/// stdio: a 2026 request still running at the deadline is answered with an error (its
/// revision forbids `notifications/cancelled` from a server outside listen streams).
#[actix_web::test]
async fn stdio_answers_a_2026_request_cut_by_the_drain_with_an_error() {
    let gate = Gate::default();
    let mut stdio = Stdio::start(&server(&gate)).await;
    stdio
        .send(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "slow", "arguments": {}, "_meta": meta_2026()}}),
        )
        .await;
    gate.started.wait_for(1).await;
    stdio.shutdown(Duration::from_millis(100));
    let answer = stdio.read().await;
    assert_eq!(answer["id"], 9, "not an answer: {answer}");
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains(SHUTDOWN_REASON),
        "{answer}"
    );
    gate.stopped.wait_for(1).await;
    stdio.finished().await.unwrap();
}

/// HTTP: a listen stream ends with its closing result as soon as the drain starts, and the
/// drain does not wait for it.
#[actix_web::test]
async fn http_listen_streams_end_when_the_drain_starts() {
    let (_gate, srv) = start(|mcp| mcp);
    let client = common::http::Client::new(&srv.url);
    let listen = json!({"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen", "params": {
        "_meta": meta_2026(), "notifications": {"toolsListChanged": true}}});
    let mut reader = SseReader::new(send(client.v2026_builder(&listen)).await);
    let ack = reader.next_message().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let drained = drain(&srv, Duration::from_secs(30));
    let closed = reader.next_message().await;
    assert_eq!(closed["id"], 5, "{closed}");
    assert_eq!(
        closed["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
    let report = tokio::time::timeout(WAIT, drained).await.unwrap().unwrap();
    assert_eq!(report.cancelled, 0, "{report:?}");
    srv.stop().await;
}
