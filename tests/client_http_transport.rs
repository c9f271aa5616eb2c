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
#![cfg(all(feature = "http", feature = "client-http"))]
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_mcp::client::ClientError;
use actix_mcp::client::transport::{HttpOptions, Inbound};
use actix_mcp::prelude::*;
use actix_mcp::transport::http::McpHttp;
use actix_mcp_actors::dev::Incoming;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

mod common;

use common::wire::*;

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
        .tool(
            ToolDef::new("echo", |Params(args): Params<EchoArgs>| async move {
                args.message
            })
            .description("Returns its message"),
        )
        .tool(ToolDef::new("poll", poll).description("Closes its SSE connection"))
        .build()
        .unwrap();
    (server, marks)
}

fn serve_mcp(mcp: McpHttp) -> Running {
    serve(mcp.configure())
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
    let mcp = server.http("/mcp").build().unwrap();
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
    let srv = serve_mcp(server.http("/mcp").json_response(true).build().unwrap());
    round_trip(&srv, HttpOptions::default().header("X-Custom", "yes")).await;
    assert_posts_labelled(&srv.log, true);
    srv.stop().await;
}

/// Stateless mode: no session id anywhere; the GET stream is refused with 405 once, and not
/// tried again; `close` sends no DELETE.
#[actix_web::test]
async fn stateless_servers_get_no_session_and_no_get_stream() {
    let (server, _) = mcp_server();
    let srv = serve_mcp(server.http("/mcp").stateless(true).build().unwrap());
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
    let mcp = server.http("/mcp").build().unwrap();
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
    let srv = serve_mcp(server.http("/mcp").retry(RETRY).build().unwrap());
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

/// A session the server no longer knows (404) is `SessionExpired`, for that message and every
/// later one (without sending it), and its id is forgotten; a new `initialize` starts a new
/// session.
#[actix_web::test]
async fn a_deleted_session_expires() {
    let (server, _) = mcp_server();
    let srv = serve_mcp(server.http("/mcp").build().unwrap());
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
    // The session stays expired: later messages fail the same way and are not sent.
    let posts = srv.log.with_method("POST").len();
    let again = transport.send(request(3, "tools/list", json!({}))).await;
    assert!(
        matches!(again, Err(ClientError::SessionExpired)),
        "{again:?}"
    );
    assert_eq!(srv.log.with_method("POST").len(), posts);

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
