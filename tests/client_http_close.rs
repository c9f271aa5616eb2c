//! Closing the client's Streamable HTTP transport while its standalone GET stream is being
//! (re)opened: no GET may leave without the session id once the session is being ended.
//!
//! Found against the official Python SDK's server: a client that closed right after
//! initializing sent its first GET while its DELETE was in flight, without `Mcp-Session-Id`,
//! and the server opened (and refused, 400) a new session for it.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management>
#![cfg(feature = "client-http")]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::transport::{Connect, HttpOptions, HttpTransport, Inbound, Inbox, Outgoing};
use actix_mcp_actors::{
    RequestId,
    dev::{Frame, Incoming},
};
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

use common::within;

/// How long the server holds its answer to DELETE while watching for GETs.
const DELETE_HOLD: Duration = Duration::from_millis(300);
const SESSION: &str = "session-1";
const VERSION: &str = "2025-11-25";

/// What the server saw: the session id of each GET (and their count, to wait on), and whether
/// a DELETE began.
#[derive(Clone)]
struct Seen {
    gets: Arc<Mutex<Vec<Option<String>>>>,
    count: Arc<watch::Sender<usize>>,
    deleting: Arc<Mutex<bool>>,
    get_arrived: Arc<Notify>,
}

impl Default for Seen {
    fn default() -> Self {
        Self {
            gets: Arc::default(),
            count: Arc::new(watch::channel(0).0),
            deleting: Arc::default(),
            get_arrived: Arc::default(),
        }
    }
}

fn session_of(req: &HttpRequest) -> Option<String> {
    req.headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// POST: `initialize` gets a JSON answer and the session id, anything else `202`.
async fn post(body: web::Bytes) -> HttpResponse {
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    if message["method"] != "initialize" {
        return HttpResponse::Accepted().finish();
    }
    let result = json!({
        "protocolVersion": VERSION,
        "capabilities": {},
        "serverInfo": {"name": "close-test", "version": "0"},
    });
    HttpResponse::Ok()
        .insert_header(("mcp-session-id", SESSION))
        .content_type("application/json")
        .body(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string())
}

/// GET: a stream that ends at once with a 1 ms retry advice, so the client reopens it in a
/// tight loop.
async fn get(req: HttpRequest, seen: web::Data<Seen>) -> HttpResponse {
    seen.gets.lock().unwrap().push(session_of(&req));
    seen.count.send_modify(|n| *n += 1);
    if *seen.deleting.lock().unwrap() {
        seen.get_arrived.notify_one();
    }
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .body("retry: 1\n\n")
}

/// DELETE: answered only after a GET arrives meanwhile, or after [`DELETE_HOLD`].
async fn delete(seen: web::Data<Seen>) -> HttpResponse {
    *seen.deleting.lock().unwrap() = true;
    let _ = tokio::time::timeout(DELETE_HOLD, seen.get_arrived.notified()).await;
    HttpResponse::Ok().finish()
}

fn serve(seen: Seen) -> (String, actix_web::dev::ServerHandle) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = actix_web::HttpServer::new(move || {
        actix_web::App::new()
            .app_data(web::Data::new(seen.clone()))
            .service(
                web::resource("/mcp")
                    .route(web::post().to(post))
                    .route(web::get().to(get))
                    .route(web::delete().to(delete)),
            )
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(1)
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_rt::spawn(server);
    (format!("http://127.0.0.1:{port}/mcp"), handle)
}

fn initialize() -> Outgoing {
    let id = RequestId::Number(1);
    let params = json!({
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "close-test", "version": "0"},
    });
    Outgoing {
        frame: Frame::request(&id, "initialize", Some(&params)),
        method: Some("initialize".into()),
        id: Some(id),
        headers: Vec::new(),
    }
}

#[actix_web::test]
async fn no_get_leaves_without_the_session_id_while_the_session_is_being_closed() {
    let seen = Seen::default();
    let (url, handle) = serve(seen.clone());
    let options = HttpOptions::default()
        .reconnect_backoff(Duration::from_millis(1), Duration::from_millis(1))
        .max_reconnect_attempts(u32::MAX);
    let (inbox, mut events) = Inbox::channel();
    let transport = HttpTransport::with_options(url, options)
        .connect(inbox)
        .await
        .unwrap();
    transport.send(initialize()).await.unwrap();
    let answer = within(events.recv()).await;
    assert!(
        matches!(answer, Some(Inbound::Message(Incoming::Response(_)))),
        "{answer:?}"
    );
    transport.set_protocol_version(VERSION);
    transport.initialized();
    // The GET stream is up and being reopened over and over; now close.
    let mut count = seen.count.subscribe();
    within(count.wait_for(|n| *n >= 3)).await.unwrap();
    within(transport.close()).await.unwrap();
    let gets = seen.gets.lock().unwrap().clone();
    assert!(
        gets.iter().all(|s| s.as_deref() == Some(SESSION)),
        "a GET left without the session id: {gets:?}"
    );
    within(handle.stop(true)).await;
}
