//! A real Streamable HTTP server on `127.0.0.1:0` and a raw MCP client for it.
//!
//! [`spawn`] runs `actix_web::HttpServer` with a given [`McpHttp`] on the current actix system
//! (the test's own, from `#[actix_web::test]`); [`TestServer::stop`] stops it gracefully, within
//! a bound. [`Client`] speaks JSON-RPC over plain reqwest requests so that each test can check
//! status codes, headers and SSE frames exactly; every message it reads is validated against the
//! MCP schema.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use actix_mcp::transport::http::{McpHttp, McpHttpBuilder};
use actix_web::dev::{ServerHandle, Service as _};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::WAIT;
use super::sse::SseReader;

/// The protocol version every test client negotiates.
pub const VERSION: &str = "2025-11-25";

/// A running server and the endpoint it serves.
pub struct TestServer {
    /// `http://127.0.0.1:<port>/mcp`.
    pub url: String,
    /// The bound port.
    pub port: u16,
    /// The endpoint (clones share its sessions and metrics).
    pub mcp: McpHttp,
    handle: ServerHandle,
    threads: Arc<Mutex<HashSet<ThreadId>>>,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("url", &self.url)
            .finish()
    }
}

/// A token validator for the scope tests: the token `alice` is alice with `secret:read`; any
/// other token names an identity with no scope.
pub fn alice_reads_secrets() -> impl actix_mcp::server::auth::TokenValidator {
    |token: String| async move {
        let identity = actix_mcp::server::auth::Identity::new(token.as_str());
        Ok(if token == "alice" {
            identity.with_scopes(["secret:read"])
        } else {
            identity
        })
    }
}

/// Builds `mcp` and starts it (with its health endpoints) on `127.0.0.1:0` with `workers`
/// worker threads.
pub fn spawn(mcp: McpHttpBuilder, workers: usize) -> TestServer {
    let mcp = mcp.build().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let app_mcp = mcp.clone();
    let threads: Arc<Mutex<HashSet<ThreadId>>> = Arc::default();
    let app_threads = threads.clone();
    let server = actix_web::HttpServer::new(move || {
        let threads = app_threads.clone();
        actix_web::App::new()
            .configure(app_mcp.configure())
            .configure(app_mcp.health())
            .wrap_fn(move |req, srv| {
                threads.lock().unwrap().insert(std::thread::current().id());
                srv.call(req)
            })
    })
    .workers(workers)
    .disable_signals()
    .shutdown_timeout(1)
    .tcp_nodelay(true)
    .h1_allow_half_closed(false)
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_rt::spawn(server);
    TestServer {
        url: format!("http://127.0.0.1:{port}{}", mcp.path()),
        port,
        mcp,
        handle,
        threads,
    }
}

impl TestServer {
    /// A client for this server (no session yet).
    pub fn client(&self) -> Client {
        Client::new(&self.url)
    }

    /// How many distinct worker threads have served requests.
    pub fn worker_threads_used(&self) -> usize {
        self.threads.lock().unwrap().len()
    }

    /// `http://127.0.0.1:<port><path>`: a route beside the endpoint (`/healthz`, ...).
    pub fn url_of(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Stops the server gracefully; fails if that takes longer than [`WAIT`].
    pub async fn stop(self) {
        tokio::time::timeout(WAIT, self.handle.stop(true))
            .await
            .expect("the server did not stop in time");
    }
}

/// Counts hits and wakes whoever waits for a number of them: a probe a test registers as
/// server state, instead of sleeping.
#[derive(Debug, Default)]
pub struct Probe {
    hits: AtomicUsize,
    notify: Notify,
}

impl Probe {
    /// Records one hit.
    pub fn hit(&self) {
        self.hits.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Hits so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Waits until at least `n` hits; fails after [`WAIT`].
    pub async fn wait_for(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.hits() >= n {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("probe: {} of {n} hits within {WAIT:?}", self.hits());
            }
        }
    }
}

/// The shared [`eventually`](super::eventually), where `tests/cluster.rs` still imports it from.
#[allow(unused_imports)]
pub use super::eventually;

/// What the server answered to a POSTed request.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The messages before the response (on an SSE answer).
    pub before: Vec<Value>,
    /// The JSON-RPC response.
    pub response: Value,
}

/// A raw MCP client: one reqwest client, the session id and protocol version it sends.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    url: String,
    /// The session id sent as `Mcp-Session-Id`.
    pub session: Option<String>,
    /// The version sent as `MCP-Protocol-Version`.
    pub version: Option<String>,
    /// The token sent as `Authorization: Bearer`.
    pub bearer: Option<String>,
}

/// A reqwest client that ignores proxy settings of the environment. It keeps an idle
/// connection for 2 s at most, under actix-web's keep-alive of 5 s: a connection reused just as
/// the server closes it for idleness fails its request (`IncompleteMessage`), which a test
/// waiting a few seconds between requests (a Redis failover) would take for the server's fault.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_idle_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

impl Client {
    /// A client without a session.
    pub fn new(url: &str) -> Self {
        Self {
            http: http_client(),
            url: url.to_owned(),
            session: None,
            version: None,
            bearer: None,
        }
    }

    /// A client without a session that sends `token` as its bearer token.
    pub fn with_bearer(url: &str, token: &str) -> Self {
        Self {
            bearer: Some(token.to_owned()),
            ..Self::new(url)
        }
    }

    /// The same session and version over a new reqwest client, so a new TCP connection.
    pub fn fresh_connection(&self) -> Self {
        Self {
            http: http_client(),
            ..self.clone()
        }
    }

    /// The same session and version, sent to another endpoint (another node of a cluster).
    pub fn at(&self, url: &str) -> Self {
        Self {
            url: url.to_owned(),
            ..self.clone()
        }
    }

    /// Calls the fixture's `sample` tool here (id `id`) and answers its sampling request with
    /// `text` through `answering` (the same session, maybe on another node); the tool's text.
    pub async fn sample_answered_by(&self, answering: &Client, id: i64, text: &str) -> String {
        let mut reader = self
            .start(
                json!(id),
                "tools/call",
                json!({"name": "sample", "arguments": {}}),
            )
            .await;
        let request = reader.next_message().await;
        assert_eq!(request["method"], "sampling/createMessage", "{request}");
        answering
            .notify(&json!({
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": text},
                    "model": "test-model",
                },
            }))
            .await;
        let response = reader.next_message().await;
        assert_eq!(response["id"], id, "{response}");
        text_of(&response["result"]).to_owned()
    }

    /// The underlying reqwest client.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The endpoint's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn with_session(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let mut builder = builder;
        if let Some(session) = &self.session {
            builder = builder.header("Mcp-Session-Id", session);
        }
        if let Some(version) = &self.version {
            builder = builder.header("MCP-Protocol-Version", version);
        }
        if let Some(token) = &self.bearer {
            builder = builder.bearer_auth(token);
        }
        builder
    }

    /// A POST of `body` with the right `Accept` and `Content-Type` and this client's headers.
    pub fn post_builder(&self, body: &Value) -> reqwest::RequestBuilder {
        self.with_session(
            self.http
                .post(&self.url)
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_string()),
        )
    }

    /// A POST of a 2026-07-28 `body` (whose `params._meta` carries its envelope): the
    /// standard headers mirrored from the body (`MCP-Protocol-Version`, `Mcp-Method`,
    /// `Mcp-Name`) and this client's bearer token; never a session.
    pub fn v2026_builder(&self, body: &Value) -> reqwest::RequestBuilder {
        let method = body["method"].as_str().unwrap_or_default();
        let mut builder = self
            .http
            .post(&self.url)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method)
            .body(body.to_string());
        let name = match method {
            "tools/call" | "prompts/get" => body["params"]["name"].as_str(),
            "resources/read" => body["params"]["uri"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            builder = builder.header("Mcp-Name", name);
        }
        if let Some(token) = &self.bearer {
            builder = builder.bearer_auth(token);
        }
        builder
    }

    /// POSTs one message; bounded by [`WAIT`] until the response headers arrive.
    pub async fn post(&self, body: &Value) -> reqwest::Response {
        send(self.post_builder(body)).await
    }

    /// GET of the session's stream (optionally resuming after `last_event_id`).
    pub async fn get(&self, last_event_id: Option<&str>) -> reqwest::Response {
        let mut builder = self
            .with_session(self.http.get(&self.url))
            .header(ACCEPT, "text/event-stream");
        if let Some(last) = last_event_id {
            builder = builder.header("Last-Event-ID", last);
        }
        send(builder).await
    }

    /// DELETE of the session.
    pub async fn delete(&self) -> StatusCode {
        send(self.with_session(self.http.delete(&self.url)))
            .await
            .status()
    }

    /// POSTs a notification (or a response to a server request); must be answered 202 with
    /// an empty body.
    pub async fn notify(&self, message: &Value) {
        let response = self.post(message).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED, "for {message}");
        let body = response.text().await.unwrap();
        assert!(body.is_empty(), "202 with a body: {body}");
    }

    /// POSTs `notifications/cancelled` for `id`.
    pub async fn cancel(&self, id: Value) {
        self.notify(&json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "test"},
        }))
        .await;
    }

    /// POSTs a request and reads its whole answer (SSE or JSON). On an SSE answer the stream
    /// must end right after the response.
    pub async fn request(&self, id: Value, method: &str, params: Value) -> Answer {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        read_answer(self.post(&message).await, &id).await
    }

    /// `tools/call`; the whole answer.
    pub async fn call(&self, id: Value, name: &str, arguments: Value) -> Answer {
        self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
        .await
    }

    /// `tools/call` answered with a result: returns the result.
    pub async fn call_ok(&self, id: Value, name: &str, arguments: Value) -> Value {
        let answer = self.call(id, name, arguments).await;
        assert_eq!(answer.status, StatusCode::OK);
        answer
            .response
            .get("result")
            .unwrap_or_else(|| panic!("expected a result: {}", answer.response))
            .clone()
    }

    /// POSTs a request and returns its open SSE stream, unread.
    pub async fn start(&self, id: Value, method: &str, params: Value) -> SseReader {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self.post(&message).await;
        assert_eq!(response.status(), StatusCode::OK);
        SseReader::new(response)
    }

    /// `initialize` alone (no `notifications/initialized`, no session kept), as client `name`
    /// with no capabilities: the answer as it came.
    pub async fn initialize_only(&self, name: &str) -> Answer {
        self.request(
            json!(0),
            "initialize",
            json!({
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": name, "version": "1"},
            }),
        )
        .await
    }

    /// `initialize` alone, without `notifications/initialized` (a handshake left unfinished);
    /// keeps the session id and version for later requests.
    pub async fn initialize_unfinished(&mut self, name: &str) {
        let answer = self.initialize_only(name).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
        self.session = Some(
            answer.headers["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
        self.version = Some(VERSION.to_owned());
    }

    /// `initialize` with `capabilities`, then `notifications/initialized`; keeps the session id
    /// and version for later requests. Returns the initialize result.
    pub async fn initialize(&mut self, capabilities: Value) -> Value {
        let answer = self
            .request(
                json!(0),
                "initialize",
                json!({
                    "protocolVersion": VERSION,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "http-test", "version": "1.0.0"},
                }),
            )
            .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
        let session = answer
            .headers
            .get("mcp-session-id")
            .expect("initialize answered without Mcp-Session-Id")
            .to_str()
            .unwrap()
            .to_owned();
        self.session = Some(session);
        self.version = Some(VERSION.to_owned());
        self.notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        let result = answer.response["result"].clone();
        assert_eq!(result["protocolVersion"], VERSION);
        result
    }
}

/// Sends a request; fails if the response headers take longer than [`WAIT`].
pub async fn send(builder: reqwest::RequestBuilder) -> reqwest::Response {
    tokio::time::timeout(WAIT, builder.send())
        .await
        .expect("no response headers in time")
        .expect("the request failed")
}

/// Sends a built request (one whose headers a test edited) with `http`; fails if the
/// response headers take longer than [`WAIT`].
pub async fn send_request(http: &reqwest::Client, request: reqwest::Request) -> reqwest::Response {
    tokio::time::timeout(WAIT, http.execute(request))
        .await
        .expect("no response headers in time")
        .expect("the request failed")
}

/// Reads a JSON-RPC answer to request `id`: one JSON body, or an SSE stream that carries
/// messages, then the response, then ends.
pub async fn read_answer(response: reqwest::Response, id: &Value) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let content_type = content_type(&headers);
    if content_type.starts_with("text/event-stream") {
        let mut reader = SseReader::new(response);
        let mut before = Vec::new();
        loop {
            let message = reader.next_message().await;
            if message.get("method").is_none() {
                assert_eq!(&message["id"], id, "a response to another request");
                reader.expect_end().await;
                return Answer {
                    status,
                    headers,
                    before,
                    response: message,
                };
            }
            before.push(message);
        }
    }
    assert!(
        content_type.starts_with("application/json"),
        "unexpected content type {content_type:?} ({status})"
    );
    let body = tokio::time::timeout(WAIT, response.text())
        .await
        .expect("no body in time")
        .unwrap();
    let message: Value = serde_json::from_str(&body).unwrap();
    super::assert_valid_message(&message);
    Answer {
        status,
        headers,
        before: Vec::new(),
        response: message,
    }
}

/// A response's `Content-Type` (empty when it has none or it is not text).
pub fn content_type(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The body of an HTTP refusal: a JSON-RPC error, valid per the schema, with an `id` member
/// (`null` when the server had not read the request's id). Returns its error code and id.
pub async fn refusal(response: reqwest::Response) -> (i64, Value) {
    let content_type = content_type(response.headers());
    assert!(
        content_type.starts_with("application/json"),
        "error body with content type {content_type:?}"
    );
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    let id = body
        .get("id")
        .unwrap_or_else(|| panic!("an HTTP refusal must carry an id member: {body}"))
        .clone();
    super::assert_valid_message(&body);
    let code = body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error code: {body}"));
    (code, id)
}

/// The error code of an HTTP refusal (see [`refusal`]).
pub async fn error_body(response: reqwest::Response) -> i64 {
    refusal(response).await.0
}

/// The text of a tool result's first content block.
pub fn text_of(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"))
}

/// Client capabilities with sampling.
pub const SAMPLING: &str = r#"{"sampling": {}}"#;

/// Parses a capabilities object.
pub fn caps(json: &str) -> Value {
    serde_json::from_str(json).unwrap()
}

/// A `tools/call` request.
pub fn tools_call(id: Value, name: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    })
}

/// A tool result: valid `CallToolResult`, `isError` as expected.
pub fn assert_tool_result(result: &Value, is_error: bool) {
    super::assert_valid("CallToolResult", result);
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
pub fn result_of(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result: {response}"))
}

/// `ping` answered `{}` with 200.
pub async fn assert_ping(client: &Client, id: i64) {
    let answer = client.request(json!(id), "ping", json!({})).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.response,
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    );
}
