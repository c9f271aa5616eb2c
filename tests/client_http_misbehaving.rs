//! The client's Streamable HTTP transport, driven directly, against small hand-made servers
//! that misbehave: unreadable and oversized messages, error statuses, silence, lost streams, a
//! GET stream closed after its priming event.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>
#![cfg(feature = "client-http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_mcp::client::ClientError;
use actix_mcp::client::transport::{Connect, HttpOptions, HttpTransport, Inbound, Inbox};
use actix_mcp_actors::{RequestId, dev::Incoming};
use actix_web::{HttpRequest, HttpResponse, web};
#[cfg(feature = "rustls")]
use common::WAIT;
use common::wire::*;
use serde_json::{Value, json};
use tokio::sync::mpsc;

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
/// the `retry` advice and the backoff, and stop when the budget is spent; then the request's
/// answer is reported lost at once (the call does not wait for its time limit).
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
    match next(&mut events).await {
        Inbound::Lost {
            id,
            error: ClientError::Transport(text),
        } => {
            assert_eq!(id, RequestId::Number(1));
            assert!(text.contains("3 attempts"), "{text}");
        }
        other => panic!("expected the answer reported lost, got {other:?}"),
    }
    assert_quiet(&mut events, Duration::from_millis(200)).await;
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

/// A lost stream is not resumed when its request is cancelled (and nothing is reported), nor
/// when it gave no event id to resume from (its answer is reported lost at once).
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
    match next(&mut events).await {
        Inbound::Lost {
            id,
            error: ClientError::Transport(text),
        } => {
            assert_eq!(id, RequestId::Number(1));
            assert!(text.contains("without an event id"), "{text}");
        }
        other => panic!("expected the answer reported lost, got {other:?}"),
    }
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

/// An `https://` URL speaks TLS (the default `rustls` feature): the server gets a TLS
/// handshake, and a server that answers it with plain HTTP is a transport error, not a hang.
#[cfg(feature = "rustls")]
#[actix_web::test]
async fn https_urls_speak_tls() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut first = [0u8; 3];
        socket.read_exact(&mut first).await.unwrap();
        socket
            .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
            .await
            .unwrap();
        first
    });
    let (inbox, _events) = Inbox::channel();
    let transport = HttpTransport::new(&url).connect(inbox).await.unwrap();
    let sent = tokio::time::timeout(WAIT, transport.send(initialize(1)))
        .await
        .expect("no hang");
    match sent {
        Err(ClientError::Transport(text)) => assert!(text.contains("POST"), "{text}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
    let first = tokio::time::timeout(WAIT, server).await.unwrap().unwrap();
    // A TLS record of type handshake (22), protocol major version 3.
    assert_eq!(first[..2], [0x16, 0x03], "{first:?}");
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
