//! A recording HTTP server and a raw client-transport driver, for the tests of the client's
//! Streamable HTTP transport: every server records the requests it gets (method, the headers
//! the transport must send, when it arrived, the status it answered) so each test can check
//! the wire; the client side builds frames by hand and reads the session's inbox. Every wait is
//! bounded by [`WAIT`](super::WAIT).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_mcp::client::ClientError;
use actix_mcp::client::transport::{
    Connect, HttpOptions, HttpTransport, Inbound, Inbox, Outgoing, Transport,
};
use actix_mcp_actors::{
    RequestId,
    dev::{Frame, Incoming},
};
use actix_web::dev::{ServerHandle, Service as _};
use actix_web::web;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{eventually, within};

/// The protocol version every test negotiates.
pub const VERSION: &str = "2025-11-25";

// ---------------------------------------------------------------------------------------------
// Servers and what they saw

/// One request a server received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub session: Option<String>,
    pub version: Option<String>,
    pub accept: Option<String>,
    pub content_type: Option<String>,
    pub last_event_id: Option<String>,
    pub custom: Option<String>,
    /// When the request arrived.
    pub at: Instant,
    /// The status answered.
    pub status: u16,
}

/// What a server saw, in the order its answers' headers left.
#[derive(Debug, Clone, Default)]
pub struct Log(pub Arc<Mutex<Vec<Seen>>>);

impl Log {
    pub fn all(&self) -> Vec<Seen> {
        self.0.lock().unwrap().clone()
    }

    pub fn with_method(&self, method: &str) -> Vec<Seen> {
        self.all()
            .into_iter()
            .filter(|seen| seen.method == method)
            .collect()
    }

    /// Waits until `check` holds for what was seen; fails after [`WAIT`](super::WAIT).
    pub async fn wait_for(&self, what: &str, check: impl Fn(&[Seen]) -> bool) {
        eventually(what, || check(&self.all())).await;
    }
}

pub fn header(req: &actix_web::dev::ServiceRequest, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A running server: its endpoint's URL and what it saw.
pub struct Running {
    pub url: String,
    pub log: Log,
    pub handle: ServerHandle,
}

impl Running {
    pub async fn stop(self) {
        within(self.handle.stop(true)).await;
    }
}

/// Serves `configure` on `127.0.0.1:0` (one worker) with a recorder in front.
pub fn serve<F>(configure: F) -> Running
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

// ---------------------------------------------------------------------------------------------
// The client side

pub fn request(id: i64, method: &str, params: Value) -> Outgoing {
    let id = RequestId::Number(id);
    Outgoing {
        frame: Frame::request(&id, method, Some(&params)),
        method: Some(method.into()),
        id: Some(id),
        headers: Vec::new(),
    }
}

pub fn notification(method: &str, params: Option<Value>) -> Outgoing {
    Outgoing {
        frame: Frame::notification(method, params.as_ref()),
        method: Some(method.into()),
        id: None,
        headers: Vec::new(),
    }
}

pub fn initialize(id: i64) -> Outgoing {
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

pub fn call(id: i64, name: &str, arguments: Value) -> Outgoing {
    request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// A transport to `url` with `options`, and the session's end of its inbox.
pub async fn connect(
    url: &str,
    options: HttpOptions,
) -> (Arc<dyn Transport>, mpsc::Receiver<Inbound>) {
    let (inbox, events) = Inbox::channel();
    let transport = HttpTransport::with_options(url, options)
        .connect(inbox)
        .await
        .unwrap();
    (transport, events)
}

/// The next event; fails after [`WAIT`](super::WAIT).
pub async fn next(events: &mut mpsc::Receiver<Inbound>) -> Inbound {
    within(events.recv()).await.expect("the inbox closed")
}

/// Nothing arrives for `quiet`.
pub async fn assert_quiet(events: &mut mpsc::Receiver<Inbound>, quiet: Duration) {
    if let Ok(Some(event)) = tokio::time::timeout(quiet, events.recv()).await {
        panic!("expected nothing, got {event:?}");
    }
}

/// The next event must be the response to `id`; returns its outcome.
pub async fn outcome(
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
pub async fn result(events: &mut mpsc::Receiver<Inbound>, id: i64) -> Value {
    outcome(events, id)
        .await
        .unwrap_or_else(|err| panic!("request {id} failed: {err:?}"))
}

/// The next event must be a malformed message with a protocol error; returns its text.
pub async fn malformed(events: &mut mpsc::Receiver<Inbound>) -> String {
    match next(events).await {
        Inbound::Malformed(ClientError::Protocol(text)) => text,
        other => panic!("expected a malformed message, got {other:?}"),
    }
}

/// `initialize`, the version, `notifications/initialized`, then the GET stream: what a
/// session does first. Returns the initialize result.
pub async fn handshake(
    transport: &Arc<dyn Transport>,
    events: &mut mpsc::Receiver<Inbound>,
) -> Value {
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

pub fn text_of(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"))
}
