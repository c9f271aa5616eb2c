//! The client's Streamable HTTP transport, driven directly (an [`Inbox`] and hand-built
//! frames): against our own server on `127.0.0.1:0` in its three modes (SSE answers, JSON
//! answers, stateless), with the GET stream, SSE polling (resumption after the server's
//! `retry`) and expired sessions; and against small hand-made servers that misbehave
//! (unreadable and oversized messages, error statuses, silence, lost streams).
//!
//! Every server records the requests it gets (method, the headers the transport must send,
//! when it arrived, the status it answered) so each test can check the wire. Every wait is
//! bounded by [`WAIT`].
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_mcp::client::ClientError;
use actix_mcp::client::transport::{
    Connect, HttpOptions, HttpTransport, Inbound, Inbox, Outgoing, Transport,
};
use actix_mcp::prelude::*;
use actix_mcp::transport::http::McpHttp;
use actix_mcp_actors::{Frame, Incoming, RequestId};
use actix_web::dev::{ServerHandle, Service as _};
use actix_web::{HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The longest any test waits for one event: a broken transport fails, it never hangs.
const WAIT: Duration = Duration::from_secs(5);

/// The protocol version every test negotiates.
const VERSION: &str = "2025-11-25";

// ---------------------------------------------------------------------------------------------
// Servers and what they saw

/// One request a server received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    session: Option<String>,
    version: Option<String>,
    accept: Option<String>,
    content_type: Option<String>,
    last_event_id: Option<String>,
    custom: Option<String>,
    /// When the request arrived.
    at: Instant,
    /// The status answered.
    status: u16,
}

/// What a server saw, in the order its answers' headers left.
#[derive(Debug, Clone, Default)]
struct Log(Arc<Mutex<Vec<Seen>>>);

impl Log {
    fn all(&self) -> Vec<Seen> {
        self.0.lock().unwrap().clone()
    }

    fn with_method(&self, method: &str) -> Vec<Seen> {
        self.all()
            .into_iter()
            .filter(|seen| seen.method == method)
            .collect()
    }

    /// Waits until `check` holds for what was seen; fails after [`WAIT`].
    async fn wait_for(&self, what: &str, check: impl Fn(&[Seen]) -> bool) {
        let deadline = Instant::now() + WAIT;
        while !check(&self.all()) {
            assert!(Instant::now() < deadline, "not within {WAIT:?}: {what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

fn header(req: &actix_web::dev::ServiceRequest, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A running server: its endpoint's URL and what it saw.
struct Running {
    url: String,
    log: Log,
    handle: ServerHandle,
}

impl Running {
    async fn stop(self) {
        tokio::time::timeout(WAIT, self.handle.stop(true))
            .await
            .expect("the server did not stop in time");
    }
}

/// Serves `configure` on `127.0.0.1:0` (one worker) with a recorder in front.
fn serve<F>(configure: F) -> Running
where
    F: FnOnce(&mut web::ServiceConfig) + Clone + Send + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Log::default();
    let app_log = log.clone();
    let server = actix_web::HttpServer::new(move || {
        let log = app_log.clone();
        actix_web::App::new()
            .configure(configure.clone())
            .wrap_fn(move |req, srv| {
                let mut seen = Seen {
                    method: req.method().to_string(),
                    session: header(&req, "mcp-session-id"),
                    version: header(&req, "mcp-protocol-version"),
                    accept: header(&req, "accept"),
                    content_type: header(&req, "content-type"),
                    last_event_id: header(&req, "last-event-id"),
                    custom: header(&req, "x-custom"),
                    at: Instant::now(),
                    status: 0,
                };
                let log = log.clone();
                let answer = srv.call(req);
                async move {
                    let response = answer.await?;
                    seen.status = response.status().as_u16();
                    log.0.lock().unwrap().push(seen);
                    Ok(response)
                }
            })
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(1)
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_rt::spawn(server);
    Running {
        url: format!("http://127.0.0.1:{port}/mcp"),
        log,
        handle,
    }
}

/// When the `poll` tool closed its SSE connection.
#[derive(Clone, Default)]
struct Marks {
    closed_at: Arc<Mutex<Option<Instant>>>,
}

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

/// Closes its SSE connection (SSE polling), then answers a moment later: the answer reaches
/// the client only through a resumed stream.
async fn poll(State(marks): State<Marks>, cx: RequestContext) -> &'static str {
    cx.close_sse_stream();
    *marks.closed_at.lock().unwrap() = Some(Instant::now());
    tokio::time::sleep(Duration::from_millis(50)).await;
    "after the reconnect"
}

/// Our server, with `echo` and `poll`.
fn mcp_server() -> (Server, Marks) {
    let marks = Marks::default();
    let server = Server::builder("client-http-test", "1.0.0")
        .state(marks.clone())
        .tool(tool(
            "echo",
            "Returns its message",
            |Params(args): Params<EchoArgs>| async move { args.message },
        ))
        .tool(tool("poll", "Closes its SSE connection", poll))
        .build()
        .unwrap();
    (server, marks)
}

fn serve_mcp(mcp: McpHttp) -> Running {
    serve(mcp.configure())
}

// ---------------------------------------------------------------------------------------------
// The client side

fn request(id: i64, method: &str, params: Value) -> Outgoing {
    let id = RequestId::Number(id);
    Outgoing {
        frame: Frame::request(&id, method, Some(&params)),
        method: Some(method.into()),
        id: Some(id),
    }
}

fn notification(method: &str, params: Option<Value>) -> Outgoing {
    Outgoing {
        frame: Frame::notification(method, params.as_ref()),
        method: Some(method.into()),
        id: None,
    }
}

fn initialize(id: i64) -> Outgoing {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "client-http-test", "version": "1.0.0"},
        }),
    )
}

fn call(id: i64, name: &str, arguments: Value) -> Outgoing {
    request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// A transport to `url` with `options`, and the session's end of its inbox.
async fn connect(url: &str, options: HttpOptions) -> (Arc<dyn Transport>, mpsc::Receiver<Inbound>) {
    let (inbox, events) = Inbox::channel();
    let transport = HttpTransport::with_options(url, options)
        .connect(inbox)
        .await
        .unwrap();
    (transport, events)
}

/// The next event; fails after [`WAIT`].
async fn next(events: &mut mpsc::Receiver<Inbound>) -> Inbound {
    tokio::time::timeout(WAIT, events.recv())
        .await
        .expect("nothing arrived in time")
        .expect("the inbox closed")
}

/// Nothing arrives for `quiet`.
async fn assert_quiet(events: &mut mpsc::Receiver<Inbound>, quiet: Duration) {
    if let Ok(Some(event)) = tokio::time::timeout(quiet, events.recv()).await {
        panic!("expected nothing, got {event:?}");
    }
}

/// The next event must be the response to `id`; returns its outcome.
async fn outcome(
    events: &mut mpsc::Receiver<Inbound>,
    id: i64,
) -> Result<Value, actix_mcp_actors::ErrorObject> {
    match next(events).await {
        Inbound::Message(Incoming::Response(response)) => {
            assert_eq!(response.id, RequestId::Number(id));
            response.outcome
        }
        other => panic!("expected the response to {id}, got {other:?}"),
    }
}

/// The next event must be a successful response to `id`; returns its result.
async fn result(events: &mut mpsc::Receiver<Inbound>, id: i64) -> Value {
    outcome(events, id)
        .await
        .unwrap_or_else(|err| panic!("request {id} failed: {err:?}"))
}

/// The next event must be a malformed message with a protocol error; returns its text.
async fn malformed(events: &mut mpsc::Receiver<Inbound>) -> String {
    match next(events).await {
        Inbound::Malformed(ClientError::Protocol(text)) => text,
        other => panic!("expected a malformed message, got {other:?}"),
    }
}

/// `initialize`, the version, `notifications/initialized`, then the GET stream: what a
/// session does first. Returns the initialize result.
async fn handshake(transport: &Arc<dyn Transport>, events: &mut mpsc::Receiver<Inbound>) -> Value {
    transport.send(initialize(1)).await.unwrap();
    let init = result(events, 1).await;
    assert_eq!(init["protocolVersion"], VERSION);
    transport.set_protocol_version(VERSION);
    transport
        .send(notification("notifications/initialized", None))
        .await
        .unwrap();
    transport.initialized();
    init
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"))
}

/// Initialize, list and call tools, then close: the calls every mode must carry. Returns what
/// the server saw.
async fn round_trip(srv: &Running, options: HttpOptions) {
    let (transport, mut events) = connect(&srv.url, options).await;
    let init = handshake(&transport, &mut events).await;
    assert_eq!(init["serverInfo"]["name"], "client-http-test");

    transport
        .send(request(2, "tools/list", json!({})))
        .await
        .unwrap();
    let tools = result(&mut events, 2).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{tools}");

    transport
        .send(call(3, "echo", json!({"message": "hello"})))
        .await
        .unwrap();
    assert_eq!(text_of(&result(&mut events, 3).await), "hello");

    transport.close().await.unwrap();
    match next(&mut events).await {
        Inbound::Closed(ClientError::TransportClosed(_)) => {}
        other => panic!("expected the end of the connection, got {other:?}"),
    }
    let refused = transport.send(request(4, "ping", json!({}))).await;
    assert!(
        matches!(refused, Err(ClientError::TransportClosed(_))),
        "{refused:?}"
    );
}

/// Every POST asks for both answer kinds, sends JSON and the custom header; everything after
/// `initialize` carries the session (when there is one) and the version.
fn assert_posts_labelled(log: &Log, session: bool) {
    let posts = log.with_method("POST");
    assert!(posts.len() >= 4, "{posts:?}");
    let mut sessions = std::collections::HashSet::new();
    for (i, post) in posts.iter().enumerate() {
        assert_eq!(
            post.accept.as_deref(),
            Some("application/json, text/event-stream")
        );
        assert_eq!(post.content_type.as_deref(), Some("application/json"));
        assert_eq!(post.custom.as_deref(), Some("yes"));
        if i == 0 {
            assert_eq!(post.session, None, "initialize goes without a session");
            assert_eq!(post.version, None);
            continue;
        }
        assert_eq!(post.version.as_deref(), Some(VERSION), "{post:?}");
        assert_eq!(post.session.is_some(), session, "{post:?}");
        sessions.insert(post.session.clone());
    }
    assert_eq!(sessions.len(), 1, "one session throughout: {sessions:?}");
    // Notifications were accepted with 202.
    assert_eq!(posts[1].status, 202, "notifications/initialized: {posts:?}");
}

// ---------------------------------------------------------------------------------------------
// Our server

/// SSE answers (the server's default): the session id of the `initialize` answer labels
/// every later request, GET and DELETE included; `close` ends the session.
#[actix_web::test]
async fn sse_answers_carry_the_session() {
    let (server, _) = mcp_server();
    let mcp = server.http("/mcp");
    let srv = serve_mcp(mcp.clone());
    round_trip(&srv, HttpOptions::default().header("X-Custom", "yes")).await;

    let log = &srv.log;
    assert_posts_labelled(log, true);
    let session = log.with_method("POST")[1].session.clone();
    let gets = log.with_method("GET");
    assert!(!gets.is_empty(), "the GET stream was opened");
    assert_eq!(gets[0].session, session);
    assert_eq!(gets[0].version.as_deref(), Some(VERSION));
    assert_eq!(gets[0].accept.as_deref(), Some("text/event-stream"));
    assert_eq!(gets[0].custom.as_deref(), Some("yes"));
    let deletes = log.with_method("DELETE");
    assert_eq!(deletes.len(), 1, "{deletes:?}");
    assert_eq!(deletes[0].session, session);
    assert_eq!(deletes[0].status, 200);
    assert_eq!(mcp.session_count(), 0, "DELETE ended the session");
    srv.stop().await;
}

/// JSON answers (`json_response(true)`): the same calls, each answered by one body.
#[actix_web::test]
async fn json_answers_carry_the_session() {
    let (server, _) = mcp_server();
    let srv = serve_mcp(server.http("/mcp").json_response(true));
    round_trip(&srv, HttpOptions::default().header("X-Custom", "yes")).await;
    assert_posts_labelled(&srv.log, true);
    srv.stop().await;
}

/// Stateless mode: no session id anywhere; the GET stream is refused with 405 once, and not
/// tried again; `close` sends no DELETE.
#[actix_web::test]
async fn stateless_servers_get_no_session_and_no_get_stream() {
    let (server, _) = mcp_server();
    let srv = serve_mcp(server.http("/mcp").stateless(true));
    let options = HttpOptions::default()
        .header("X-Custom", "yes")
        .reconnect_backoff(Duration::from_millis(10), Duration::from_millis(10));
    round_trip(&srv, options).await;
    assert_posts_labelled(&srv.log, false);
    let gets = srv.log.with_method("GET");
    assert_eq!(gets.len(), 1, "{gets:?}");
    assert_eq!(gets[0].status, 405);
    assert!(srv.log.with_method("DELETE").is_empty());
    srv.stop().await;
}

/// The GET stream delivers what the server sends outside any request.
#[actix_web::test]
async fn the_get_stream_delivers_server_notifications() {
    let (server, _) = mcp_server();
    let mcp = server.http("/mcp");
    let srv = serve_mcp(mcp.clone());
    let (transport, mut events) = connect(&srv.url, HttpOptions::default()).await;
    handshake(&transport, &mut events).await;
    srv.log
        .wait_for("the GET stream is open", |seen| {
            seen.iter().any(|s| s.method == "GET" && s.status == 200)
        })
        .await;

    server.notify_tools_list_changed();
    match next(&mut events).await {
        Inbound::Message(Incoming::Notification(notification)) => {
            assert_eq!(notification.method, "notifications/tools/list_changed");
        }
        other => panic!("expected tools/list_changed, got {other:?}"),
    }
    transport.close().await.unwrap();
    srv.stop().await;
}

/// SSE polling: the tool closes its answer's connection before answering. The transport
/// waits out the server's `retry`, resumes with `GET` and `Last-Event-ID`, and delivers the
/// response from the resumed stream.
#[actix_web::test]
async fn a_closed_answer_stream_is_resumed_after_the_retry_advice() {
    const RETRY: Duration = Duration::from_millis(300);
    let (server, marks) = mcp_server();
    let srv = serve_mcp(server.http("/mcp").retry(RETRY));
    // A long backoff of our own: the wait observed must be the server's advice.
    let options = HttpOptions::default()
        .get_stream(false)
        .reconnect_backoff(Duration::from_secs(5), Duration::from_secs(10));
    let (transport, mut events) = connect(&srv.url, options).await;
    handshake(&transport, &mut events).await;

    transport.send(call(7, "poll", json!({}))).await.unwrap();
    assert_eq!(
        text_of(&result(&mut events, 7).await),
        "after the reconnect"
    );

    let gets = srv.log.with_method("GET");
    assert_eq!(gets.len(), 1, "one resumption: {gets:?}");
    let resumed = &gets[0];
    assert_eq!(resumed.status, 200);
    let last = resumed
        .last_event_id
        .as_deref()
        .expect("the resumption names the last event");
    assert!(last.ends_with("-0"), "the priming event's id: {last}");
    assert_eq!(resumed.session, srv.log.with_method("POST")[1].session);
    let closed_at = marks.closed_at.lock().unwrap().expect("the tool ran");
    let waited = resumed.at.duration_since(closed_at);
    assert!(
        waited >= RETRY - Duration::from_millis(30),
        "reconnected {waited:?} after the close, before the {RETRY:?} advice"
    );
    assert!(
        waited < Duration::from_secs(3),
        "reconnected only after {waited:?}: the advice, not our backoff, sets the wait"
    );
    transport.close().await.unwrap();
    srv.stop().await;
}

/// A session the server no longer knows (404) is `SessionExpired`, and its id is forgotten;
/// a new `initialize` starts a new session.
#[actix_web::test]
async fn a_deleted_session_expires() {
    let (server, _) = mcp_server();
    let srv = serve_mcp(server.http("/mcp"));
    let options = HttpOptions::default().get_stream(false);
    let (transport, mut events) = connect(&srv.url, options).await;
    handshake(&transport, &mut events).await;
    let session = srv.log.with_method("POST")[1].session.clone().unwrap();

    let deleted = reqwest::Client::new()
        .delete(&srv.url)
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", VERSION)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);

    let expired = transport.send(request(2, "tools/list", json!({}))).await;
    assert!(
        matches!(expired, Err(ClientError::SessionExpired)),
        "{expired:?}"
    );
    // The id is gone: the next request goes without one (and the server wants one).
    let refused = transport.send(request(3, "tools/list", json!({}))).await;
    match refused {
        Err(ClientError::Transport(text)) => {
            assert!(text.contains("400"), "{text}");
            assert!(
                text.contains("Mcp-Session-Id"),
                "the server's message: {text}"
            );
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert_eq!(srv.log.with_method("POST").last().unwrap().session, None);

    // A new session.
    transport.send(initialize(4)).await.unwrap();
    result(&mut events, 4).await;
    transport.set_protocol_version(VERSION);
    transport
        .send(request(5, "tools/list", json!({})))
        .await
        .unwrap();
    result(&mut events, 5).await;
    let renewed = srv.log.with_method("POST").last().unwrap().session.clone();
    assert!(renewed.is_some() && renewed.as_deref() != Some(session.as_str()));
    transport.close().await.unwrap();
    srv.stop().await;
}

// ---------------------------------------------------------------------------------------------
// Servers that misbehave

/// The POST handler of the misbehaving server: what it answers depends on the method.
async fn misbehave(body: web::Bytes) -> HttpResponse {
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    let Some(id) = message.get("id").cloned() else {
        return HttpResponse::Accepted().finish();
    };
    let response = json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}}).to_string();
    let sse = |body: Vec<u8>| {
        HttpResponse::Ok()
            .content_type("text/event-stream")
            .body(body)
    };
    match message["method"].as_str().unwrap_or_default() {
        // Garbage, too much, not UTF-8, then the response: each event on its own.
        "garbage" => {
            let mut body = b"retry: 100\n\nid: a-0\ndata: \n\n".to_vec();
            body.extend_from_slice(b"id: a-1\ndata: {not json\n\n");
            body.extend_from_slice(format!("data: {}\n\n", "x".repeat(2000)).as_bytes());
            body.extend_from_slice(b"data: \xff\xfe\n\n");
            body.extend_from_slice(format!("id: a-2\ndata: {response}\n\n").as_bytes());
            sse(body)
        }
        "json_garbage" => HttpResponse::Ok()
            .content_type("application/json")
            .body("{oops"),
        "json_big" => HttpResponse::Ok().content_type("application/json").body(
            json!({"jsonrpc": "2.0", "id": id, "result": {"pad": "y".repeat(2000)}}).to_string(),
        ),
        "error_with_id" => HttpResponse::BadRequest()
            .content_type("application/json")
            .body(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "bad params"}})
                .to_string(),
        ),
        "error_for_another_id" => HttpResponse::BadRequest()
            .content_type("application/json")
            .body(
            json!({"jsonrpc": "2.0", "id": 999, "error": {"code": -32602, "message": "not yours"}})
                .to_string(),
        ),
        "error_without_id" => HttpResponse::InternalServerError()
            .content_type("application/json")
            .body(
                json!({"jsonrpc": "2.0", "error": {"code": -32603, "message": "database down"}})
                    .to_string(),
            ),
        "wrong_type" => HttpResponse::Ok().content_type("text/plain").body("hello"),
        "slow" => {
            tokio::time::sleep(Duration::from_secs(2)).await;
            HttpResponse::Ok()
                .content_type("application/json")
                .body(response)
        }
        // A stream that ends before the response (resumable from `lost-0`), or without ids.
        "lost" => sse(b"retry: 50\n\nid: lost-0\ndata: \n\n".to_vec()),
        "lost_without_id" => sse(b"retry: 50\n\ndata: \n\n".to_vec()),
        _ => sse(format!("data: {response}\n\n").into_bytes()),
    }
}

/// A server whose POST answers misbehave and whose GET always fails (503).
fn misbehaving() -> Running {
    serve(|cfg: &mut web::ServiceConfig| {
        cfg.service(
            web::resource("/mcp")
                .route(web::post().to(misbehave))
                .route(web::get().to(|| async { HttpResponse::ServiceUnavailable().finish() })),
        );
    })
}

/// Unreadable, oversized and non-UTF-8 messages are reported as malformed, one by one; the
/// stream goes on and the response after them arrives.
#[actix_web::test]
async fn malformed_sse_events_are_reported_and_skipped() {
    let srv = misbehaving();
    let options = HttpOptions::default().max_message_size(1024);
    let (transport, mut events) = connect(&srv.url, options).await;
    transport
        .send(request(1, "garbage", json!({})))
        .await
        .unwrap();
    assert!(malformed(&mut events).await.contains("unreadable message"));
    assert!(malformed(&mut events).await.contains("over 1024 bytes"));
    assert!(
        malformed(&mut events)
            .await
            .contains("unreadable SSE event")
    );
    assert_eq!(result(&mut events, 1).await, json!({"ok": true}));
    assert_quiet(&mut events, Duration::from_millis(200)).await;
    assert!(
        srv.log.with_method("GET").is_empty(),
        "answered: no resumption"
    );
    srv.stop().await;
}

/// JSON answers that are not JSON-RPC, or too large, are malformed messages.
#[actix_web::test]
async fn malformed_and_oversized_json_answers_are_reported() {
    let srv = misbehaving();
    let options = HttpOptions::default().max_message_size(1024);
    let (transport, mut events) = connect(&srv.url, options).await;
    transport
        .send(request(1, "json_garbage", json!({})))
        .await
        .unwrap();
    assert!(malformed(&mut events).await.contains("unreadable message"));
    transport
        .send(request(2, "json_big", json!({})))
        .await
        .unwrap();
    assert!(malformed(&mut events).await.contains("over 1024 bytes"));
    srv.stop().await;
}

/// Error statuses: a JSON-RPC error response to the request is delivered (the request gets the
/// server's error, `send` succeeds); any other (an error without id, or for another request) is
/// a transport error quoting the server; an
/// answer of the wrong type is a protocol error; a server that does not answer in time is a
/// transport error.
#[actix_web::test]
async fn error_statuses_become_errors_or_responses() {
    let srv = misbehaving();
    let options = HttpOptions::default().request_timeout(Duration::from_millis(300));
    let (transport, mut events) = connect(&srv.url, options).await;

    transport
        .send(request(1, "error_with_id", json!({})))
        .await
        .unwrap();
    let error = outcome(&mut events, 1).await.unwrap_err();
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.message, "bad params");

    match transport
        .send(request(2, "error_without_id", json!({})))
        .await
    {
        Err(ClientError::Transport(text)) => {
            assert!(text.contains("500"), "{text}");
            assert!(text.contains("database down"), "{text}");
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    // An error response to another request is not delivered to this one.
    match transport
        .send(request(6, "error_for_another_id", json!({})))
        .await
    {
        Err(ClientError::Transport(text)) => {
            assert!(text.contains("400") && text.contains("not yours"), "{text}");
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    match transport.send(request(3, "wrong_type", json!({}))).await {
        Err(ClientError::Protocol(text)) => assert!(text.contains("text/plain"), "{text}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
    let started = Instant::now();
    match transport.send(request(4, "slow", json!({}))).await {
        Err(ClientError::Transport(text)) => assert!(text.contains("no answer"), "{text}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_millis(1500));
    // A 404 without a session is just an error status, not an expired session.
    let missing = HttpTransport::new(srv.url.replace("/mcp", "/nowhere"));
    let (inbox, _events) = Inbox::channel();
    let missing = missing.connect(inbox).await.unwrap();
    match missing.send(request(5, "ping", json!({}))).await {
        Err(ClientError::Transport(text)) => assert!(text.contains("404"), "{text}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert_quiet(&mut events, Duration::from_millis(100)).await;
    srv.stop().await;
}

/// A lost answer stream is resumed within the budget only: attempts that fail are spaced by
/// the `retry` advice and the backoff, and stop when the budget is spent, delivering nothing.
#[actix_web::test]
async fn resumption_stops_when_the_budget_is_spent() {
    let srv = misbehaving();
    let options = HttpOptions::default()
        .max_reconnect_attempts(3)
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(40));
    let (transport, mut events) = connect(&srv.url, options).await;
    transport.send(request(1, "lost", json!({}))).await.unwrap();
    srv.log
        .wait_for("three attempts", |seen| {
            seen.iter().filter(|s| s.method == "GET").count() >= 3
        })
        .await;
    assert_quiet(&mut events, Duration::from_millis(400)).await;
    let gets = srv.log.with_method("GET");
    assert_eq!(gets.len(), 3, "{gets:?}");
    assert!(
        gets.iter()
            .all(|g| g.last_event_id.as_deref() == Some("lost-0") && g.status == 503)
    );
    let post = srv.log.with_method("POST")[0].at;
    assert!(gets[0].at.duration_since(post) >= Duration::from_millis(45));
    srv.stop().await;
}

/// A lost stream is not resumed when its request is cancelled, nor when it gave no event id
/// to resume from.
#[actix_web::test]
async fn cancelled_and_unresumable_streams_are_not_resumed() {
    let srv = misbehaving();
    let options = HttpOptions::default()
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(20));
    let (transport, mut events) = connect(&srv.url, options).await;

    transport
        .send(request(1, "lost_without_id", json!({})))
        .await
        .unwrap();
    // The retry advice is 50 ms: cancel the other one before it passes.
    transport.send(request(2, "lost", json!({}))).await.unwrap();
    transport
        .send(notification(
            "notifications/cancelled",
            Some(json!({"requestId": 2, "reason": "test"})),
        ))
        .await
        .unwrap();
    assert_quiet(&mut events, Duration::from_millis(300)).await;
    assert!(srv.log.with_method("GET").is_empty());
    srv.stop().await;
}

/// The GET stream, closed by the server after its priming event, is reopened with
/// `Last-Event-ID` once the `retry` advice has passed (the conformance suite's `sse-retry`),
/// and what the reopened stream carries is delivered.
#[actix_web::test]
async fn the_get_stream_is_reopened_after_the_retry_advice() {
    const RETRY: Duration = Duration::from_millis(250);
    let gets = Arc::new(AtomicUsize::new(0));
    let srv = serve(move |cfg: &mut web::ServiceConfig| {
        let gets = gets.clone();
        cfg.service(
            web::resource("/mcp")
                .route(web::post().to(misbehave))
                .route(web::get().to(move |_req: HttpRequest| {
                let n = gets.fetch_add(1, Ordering::SeqCst);
                async move {
                    let body = if n == 0 {
                        format!("id: g-0\nretry: {}\ndata: \n\n", RETRY.as_millis())
                    } else {
                        let note =
                            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                        format!("id: g-{n}\ndata: {note}\n\n")
                    };
                    HttpResponse::Ok()
                        .content_type("text/event-stream")
                        .body(body)
                }
            })),
        );
    });
    let options =
        HttpOptions::default().reconnect_backoff(Duration::from_secs(5), Duration::from_secs(10));
    let (transport, mut events) = connect(&srv.url, options).await;
    transport.initialized();
    match next(&mut events).await {
        Inbound::Message(Incoming::Notification(n)) => {
            assert_eq!(n.method, "notifications/tools/list_changed");
        }
        other => panic!("expected a notification, got {other:?}"),
    }
    transport.close().await.unwrap();
    let gets = srv.log.with_method("GET");
    assert!(gets.len() >= 2, "{gets:?}");
    assert_eq!(gets[0].last_event_id, None);
    assert_eq!(gets[1].last_event_id.as_deref(), Some("g-0"));
    let waited = gets[1].at.duration_since(gets[0].at);
    assert!(
        waited >= RETRY - Duration::from_millis(20) && waited < Duration::from_secs(3),
        "reopened after {waited:?}; the advice was {RETRY:?}"
    );
    srv.stop().await;
}

/// The sender of an open SSE stream of a hand-made server, once its `GET` was answered.
type StreamSlot = Arc<Mutex<Option<mpsc::UnboundedSender<web::Bytes>>>>;

/// A server whose `GET` answers only after `get_delay` (`None`: never, within the test) with a
/// stream that stays open, and whose `POST` answers every request with an empty JSON result.
/// While it handles a `tools/call` it sends `elicitation/create` on the `GET` stream, and drops
/// it when that stream is not open yet, as the reference TypeScript server does with a request
/// not tied to the call (the conformance suite's `elicitation-sep1034-client-defaults`).
fn slow_get_server(get_delay: Option<Duration>) -> Running {
    let slot = StreamSlot::default();
    serve(move |cfg: &mut web::ServiceConfig| {
        let (on_get, on_post) = (slot.clone(), slot.clone());
        cfg.service(
            web::resource("/mcp")
                .route(web::get().to(move || {
                    let slot = on_get.clone();
                    async move {
                        let Some(delay) = get_delay else {
                            tokio::time::sleep(Duration::from_secs(60)).await;
                            return HttpResponse::ServiceUnavailable().finish();
                        };
                        tokio::time::sleep(delay).await;
                        let (tx, rx) = mpsc::unbounded_channel::<web::Bytes>();
                        *slot.lock().unwrap() = Some(tx);
                        let events = futures::stream::unfold(rx, |mut rx| async move {
                            let chunk = rx.recv().await?;
                            Some((Ok::<_, actix_web::Error>(chunk), rx))
                        });
                        HttpResponse::Ok()
                            .content_type("text/event-stream")
                            .streaming(events)
                    }
                }))
                .route(web::post().to(move |body: web::Bytes| {
                    let slot = on_post.clone();
                    async move {
                        let message: Value = serde_json::from_slice(&body).unwrap_or_default();
                        let Some(id) = message.get("id").cloned() else {
                            return HttpResponse::Accepted().finish();
                        };
                        if message["method"] == "tools/call"
                            && let Some(stream) = slot.lock().unwrap().as_ref()
                        {
                            let ask = json!({
                                "jsonrpc": "2.0",
                                "id": "ask-1",
                                "method": "elicitation/create",
                                "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}},
                            });
                            let _ = stream.send(web::Bytes::from(format!("data: {ask}\n\n")));
                        }
                        HttpResponse::Ok()
                            .content_type("application/json")
                            .body(json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string())
                    }
                })),
        );
    })
}

/// A message sent after initialization waits until the server has answered the standalone
/// `GET`, so a request the server sends on that stream while handling the call is received.
#[actix_web::test]
async fn requests_after_initialization_wait_for_the_get_stream() {
    const GET_DELAY: Duration = Duration::from_millis(300);
    let srv = slow_get_server(Some(GET_DELAY));
    let (transport, mut events) = connect(&srv.url, HttpOptions::default()).await;
    transport.initialized();
    transport.send(call(2, "ask", json!({}))).await.unwrap();

    let (mut asked, mut answered) = (false, false);
    while !(asked && answered) {
        match next(&mut events).await {
            Inbound::Message(Incoming::Request(request)) => {
                assert_eq!(request.method, "elicitation/create");
                assert_eq!(request.id, RequestId::from("ask-1"));
                asked = true;
            }
            Inbound::Message(Incoming::Response(response)) => {
                assert_eq!(response.id, RequestId::Number(2));
                answered = true;
            }
            other => panic!("expected the server's request and the response, got {other:?}"),
        }
    }
    let get = &srv.log.with_method("GET")[0];
    let post = &srv.log.with_method("POST")[0];
    assert!(
        post.at.duration_since(get.at) >= GET_DELAY,
        "the call left {:?} after the GET, before its answer",
        post.at.duration_since(get.at)
    );
    transport.close().await.unwrap();
    srv.stop().await;
}

/// A server that never answers the `GET` delays requests by at most the request timeout.
#[actix_web::test]
async fn a_get_that_is_never_answered_delays_requests_only_until_the_timeout() {
    const TIMEOUT: Duration = Duration::from_millis(300);
    let srv = slow_get_server(None);
    let options = HttpOptions::default().request_timeout(TIMEOUT);
    let (transport, mut events) = connect(&srv.url, options).await;
    transport.initialized();
    let started = Instant::now();
    transport.send(call(2, "ask", json!({}))).await.unwrap();
    result(&mut events, 2).await;
    let waited = started.elapsed();
    assert!(
        waited >= TIMEOUT - Duration::from_millis(30) && waited < Duration::from_secs(2),
        "answered after {waited:?}; the request timeout is {TIMEOUT:?}"
    );
    transport.close().await.unwrap();
    srv.stop().await;
}

/// A bad URL or header fails at `connect`, as a transport error.
#[actix_web::test]
async fn bad_urls_and_headers_fail_to_connect() {
    for (url, options) in [
        ("not a url", HttpOptions::default()),
        ("ftp://127.0.0.1/mcp", HttpOptions::default()),
        (
            "http://127.0.0.1/mcp",
            HttpOptions::default().header("bad header", "x"),
        ),
        (
            "http://127.0.0.1/mcp",
            HttpOptions::default().header("X-Ok", "line\nbreak"),
        ),
    ] {
        let (inbox, _events) = Inbox::channel();
        let connected = HttpTransport::with_options(url, options)
            .connect(inbox)
            .await;
        assert!(
            matches!(connected, Err(ClientError::Transport(_))),
            "{url}: {:?}",
            connected.err()
        );
    }
}
