//! Streamable HTTP under hostile clients: `Host`/`Origin` checks that fail closed, refusals that
//! always name the request's `id`, session floods, bodies that never finish, the server-wide
//! budget of request bytes, and cancellation without sessions.
//!
//! A real actix-web server on `127.0.0.1:0` ([`common::http::spawn`]) serving the tools of
//! [`common::http_tools`], driven by raw reqwest requests or raw TCP writes. Every wait is
//! bounded by [`common::WAIT`] (fail, don't hang).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use actix_mcp::server::auth::{AuthError, BearerAuth, Identity, TokenValidator};
use futures::future::BoxFuture;
use reqwest::StatusCode;
use reqwest::header::{HOST, HeaderValue, ORIGIN};
use serde_json::{Value, json};

use common::http::{Client, VERSION, assert_ping, read_answer, refusal};
use common::http_tools::start;
use common::{eventually, eventually_async};

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

fn initialize(id: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "http-test", "version": "1.0.0"},
        },
    })
}

/// A `Host` or `Origin` value with a byte outside visible ASCII is refused (403), not read as
/// absent; two `Origin` (or `Host`) headers pass only when every one is allowed.
#[actix_web::test]
async fn host_and_origin_checks_fail_closed() {
    let (_fixture, srv) = start(|mcp| mcp);
    let client = srv.client();
    // (Two `Host` headers never reach the endpoint: actix-web's parser answers them 400.)
    let refused: [&[(&str, &[u8])]; 3] = [
        &[("origin", b"http://localhost\xff")],
        &[("host", b"localhost\xe9:1")],
        &[
            ("origin", b"http://localhost"),
            ("origin", b"http://evil.example"),
        ],
    ];
    for headers in refused {
        let mut builder = client.post_builder(&initialize(json!(0)));
        for (name, value) in headers {
            let name = if *name == "host" { HOST } else { ORIGIN };
            builder = builder.header(name, HeaderValue::from_bytes(value).unwrap());
        }
        let response = common::http::send(builder).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{headers:?}");
        assert_eq!(
            refusal(response).await,
            (-32600, Value::Null),
            "{headers:?}"
        );
    }
    let allowed = client
        .post_builder(&ping(1))
        .header(ORIGIN, "http://localhost")
        .header(ORIGIN, "http://127.0.0.1:9");
    let response = common::http::send(allowed).await;
    assert_ne!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(srv.mcp.session_count(), 0);
    srv.stop().await;
}

/// Every refusal of the endpoint is a JSON-RPC error with an `id` member: `null` when the body
/// was not read (406, 415, 413, 403, GET/DELETE, 405), the request's id once it was (400 for a
/// bad version or a missing session, 404 for an unknown session, 503 past the session cap).
#[actix_web::test]
async fn every_refusal_carries_an_id() {
    let (_fixture, srv) = start(|mcp| mcp.body_limit(1024).max_sessions(1));
    let client = srv.client();
    let http = client.http();
    let url = srv.url.clone();
    let checks: Vec<(reqwest::RequestBuilder, StatusCode, i64, Value)> = vec![
        (
            http.post(&url)
                .header("accept", "application/json")
                .header("content-type", "application/json")
                .body(ping(7).to_string()),
            StatusCode::NOT_ACCEPTABLE,
            -32600,
            Value::Null,
        ),
        (
            http.post(&url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "text/plain")
                .body(ping(7).to_string()),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            -32600,
            Value::Null,
        ),
        (
            client.post_builder(&json!({"jsonrpc": "2.0", "id": 7, "method": "x".repeat(2000)})),
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            Value::Null,
        ),
        (
            client.post_builder(&ping(7)).header(HOST, "evil.example"),
            StatusCode::FORBIDDEN,
            -32600,
            Value::Null,
        ),
        (
            client
                .post_builder(&ping(7))
                .header("mcp-protocol-version", "1999-01-01")
                .header("mcp-session-id", "x"),
            StatusCode::BAD_REQUEST,
            -32022,
            json!(7),
        ),
        (
            client.post_builder(&ping(7)),
            StatusCode::BAD_REQUEST,
            -32600,
            json!(7),
        ),
        (
            client
                .post_builder(&json!({"jsonrpc": "2.0", "id": "seven", "method": "ping"}))
                .header("mcp-session-id", "unknown"),
            StatusCode::NOT_FOUND,
            -32600,
            json!("seven"),
        ),
        (
            http.get(&url).header("accept", "application/json"),
            StatusCode::NOT_ACCEPTABLE,
            -32600,
            Value::Null,
        ),
        (
            http.delete(&url),
            StatusCode::BAD_REQUEST,
            -32600,
            Value::Null,
        ),
        (
            http.put(&url),
            StatusCode::METHOD_NOT_ALLOWED,
            -32600,
            Value::Null,
        ),
    ];
    for (builder, status, code, id) in checks {
        let request = builder.try_clone().unwrap().build().unwrap();
        let what = format!("{} {:?}", request.method(), request.headers());
        let response = common::http::send(builder).await;
        assert_eq!(response.status(), status, "{what}");
        assert_eq!(refusal(response).await, (code, id), "{what}");
    }
    let mut first = srv.client();
    first.initialize(json!({})).await;
    let response = srv.client().post(&initialize(json!("second"))).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refusal(response).await, (-32000, json!("second")));
    srv.stop().await;
}

/// A session whose client never sends `notifications/initialized` is closed once it has been
/// idle for the handshake timeout; one kept busy (its GET stream open) stays until it goes
/// idle; one that finished its handshake stays.
#[actix_web::test]
async fn unfinished_handshakes_expire() {
    // Long enough for a whole handshake on a loaded machine; `eventually` waits up to 5 s.
    let timeout = Duration::from_millis(1500);
    let (_fixture, srv) = start(|mcp| mcp.handshake_timeout(Some(timeout)));
    let mut done = srv.client();
    done.initialize(json!({})).await;
    let mut walked_away = srv.client();
    walked_away.initialize_unfinished("walked away").await;
    let mut streaming = srv.client();
    streaming.initialize_unfinished("streaming").await;
    let response = streaming.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let stream = common::sse::SseReader::new(response);
    assert_eq!(srv.mcp.session_count(), 3);
    eventually("the idle unfinished session expires", || {
        srv.mcp.session_count() == 2
    })
    .await;
    let response = walked_away.post(&ping(1)).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(refusal(response).await, (-32600, json!(1)));
    tokio::time::sleep(timeout * 2).await;
    assert_eq!(
        srv.mcp.session_count(),
        2,
        "a busy unfinished session was closed"
    );
    drop(stream);
    eventually("the unfinished session expires once idle", || {
        srv.mcp.session_count() == 1
    })
    .await;
    let response = streaming.post(&ping(2)).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_ping(&done, 3).await;
    srv.stop().await;
}

/// An `initialize` that fails (`protocolVersion` is not a string: -32602) opens no session and
/// takes no place, in both answer modes: the next client still gets the only place.
#[actix_web::test]
async fn a_failed_initialize_opens_no_session() {
    for json_response in [false, true] {
        let (_fixture, srv) = start(|mcp| mcp.max_sessions(1).json_response(json_response));
        for attempt in 0..3 {
            let mut bad = initialize(json!(attempt));
            bad["params"]["protocolVersion"] = json!(5);
            let answer = read_answer(srv.client().post(&bad).await, &json!(attempt)).await;
            assert_eq!(
                answer.response["error"]["code"], -32602,
                "{}",
                answer.response
            );
            assert!(
                answer.headers.get("mcp-session-id").is_none(),
                "a failed initialize handed out a session id"
            );
            assert_eq!(srv.mcp.session_count(), 0);
        }
        srv.client().initialize(json!({})).await;
        assert_eq!(srv.mcp.session_count(), 1);
        srv.stop().await;
    }
}

/// At the session cap a newcomer evicts the least recently active session idle for the
/// minimum; 503 (with `Retry-After`) only while none qualifies.
#[actix_web::test]
async fn at_the_cap_the_longest_idle_session_makes_room() {
    // Long enough that the first two sessions are not yet evictable when the third client
    // comes, even on a loaded machine.
    let minimum = Duration::from_secs(3);
    let (_fixture, srv) = start(|mcp| mcp.max_sessions(2).evict_idle_after(Some(minimum)));
    let mut oldest = srv.client();
    oldest.initialize(json!({})).await;
    let mut active = srv.client();
    active.initialize(json!({})).await;

    let response = srv.client().post(&initialize(json!("early"))).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().contains_key("retry-after"));
    assert_eq!(refusal(response).await, (-32000, json!("early")));

    tokio::time::sleep(minimum + Duration::from_millis(50)).await;
    assert_ping(&active, 1).await;
    let mut newcomer = srv.client();
    newcomer.initialize(json!({})).await;
    assert_eq!(srv.mcp.session_count(), 2);
    let response = oldest.post(&ping(2)).await;
    assert_eq!(
        response.status(),
        StatusCode::NOT_FOUND,
        "the oldest was evicted"
    );
    assert_ping(&active, 3).await;
    assert_ping(&newcomer, 4).await;
    srv.stop().await;
}

/// Accepts any token and names the caller after it.
struct TokenIsSubject;

impl TokenValidator for TokenIsSubject {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
        Box::pin(async move { Ok(Identity::new(token).with_issuer("https://as.example")) })
    }
}

/// With bearer auth, one identity holds at most `max_sessions_per_principal` sessions (429
/// past it, with a JSON-RPC error saying so); another identity is not affected.
#[actix_web::test]
async fn sessions_per_principal_are_capped() {
    let auth = BearerAuth::builder("http://127.0.0.1/mcp", TokenIsSubject)
        .authorization_server("https://as.example")
        .build()
        .unwrap();
    let (_fixture, srv) = start(|mcp| mcp.bearer_auth(auth).max_sessions_per_principal(2));
    let as_user = |user: &str, body: &Value| {
        srv.client()
            .post_builder(body)
            .header("authorization", format!("Bearer {user}"))
    };
    for n in 0..2 {
        let response = common::http::send(as_user("alice", &initialize(json!(n)))).await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let response = common::http::send(as_user("alice", &initialize(json!(2)))).await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(response.headers().contains_key("retry-after"));
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["id"], 2);
    assert_eq!(body["error"]["code"], -32000);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("too many sessions for this identity"),
        "{message}"
    );
    let response = common::http::send(as_user("bob", &initialize(json!(3)))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(srv.mcp.session_count(), 3);
    srv.stop().await;
}

/// Writes `head` and `body` on a new loopback connection to the test server, then reads what
/// comes back until the server closes the connection (bounded by [`common::WAIT`]). Returns
/// the bytes read and whether the server closed the connection in time.
async fn raw_exchange(port: u16, head: &str, body: &[u8]) -> (String, bool) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut seen = Vec::new();
    let closed = tokio::time::timeout(common::WAIT, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .is_ok();
    (String::from_utf8_lossy(&seen).into_owned(), closed)
}

/// A POST whose body never finishes (a `Content-Length` longer than what is sent, or a chunked
/// body without its last chunk, or nothing at all after the head) is answered 408 with a JSON-RPC error (`"id": null`) once the
/// body deadline passes, and its connection is closed; a chunked body that goes on past the
/// size limit is answered 413 at once, and its connection closed too (never drained).
#[actix_web::test]
async fn unfinished_bodies_are_answered_408_and_their_socket_closed() {
    let (_fixture, srv) = start(|mcp| mcp.body_timeout(Duration::from_millis(300)).body_limit(64));
    let common_head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                       Accept: application/json, text/event-stream\r\n\
                       Content-Type: application/json\r\n";
    let short = format!("{common_head}Content-Length: 60\r\n\r\n");
    let chunked = format!("{common_head}Transfer-Encoding: chunked\r\n\r\n");
    let large_chunk = format!("64\r\n{}\r\n", " ".repeat(100));
    let late = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the request body did not arrive within 300 ms"}}"#;
    let large =
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"body exceeds 64 bytes"}}"#;
    let cases: [(&str, &str, &[u8], &str, &str); 5] = [
        // Nothing after the head: the body's deadline holds with no byte to wake the read.
        ("no body at all", &short, b"", "408", late),
        ("no chunk at all", &chunked, b"", "408", late),
        (
            "short Content-Length",
            &short,
            br#"{"jsonrpc":"2.0","#,
            "408",
            late,
        ),
        (
            "unfinished chunked",
            &chunked,
            b"5\r\n{\"jso\r\n",
            "408",
            late,
        ),
        (
            "endless chunked",
            &chunked,
            large_chunk.as_bytes(),
            "413",
            large,
        ),
    ];
    for (what, head, body, status, error) in cases {
        let started = tokio::time::Instant::now();
        let (answer, closed) = raw_exchange(srv.port, head, body).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{what}: expected {status}, got {answer:?}"
        );
        assert!(answer.ends_with(error), "{what}: {answer:?}");
        assert!(closed, "{what}: the server kept the connection open");
        if status == "408" {
            assert!(
                started.elapsed() >= Duration::from_millis(300),
                "{what}: too early"
            );
        }
    }
    srv.stop().await;
}

/// A body's deadline holds when the endpoint's handler is first polled late (behind a
/// middleware that waits before calling it) and the client sends nothing after the head: the
/// request is answered 408 and its connection closed, not left waiting for a byte.
#[actix_web::test]
async fn the_body_deadline_holds_behind_a_middleware_that_polls_late() {
    use actix_web::dev::Service as _;
    let fixture = common::http_tools::fixture();
    let mcp = fixture
        .server
        .http("/mcp")
        .body_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = actix_web::HttpServer::new(move || {
        actix_web::App::new()
            .configure(mcp.configure())
            .wrap_fn(|req, srv| {
                let call = srv.call(req);
                async move {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    call.await
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
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                Accept: application/json, text/event-stream\r\n\
                Content-Type: application/json\r\nContent-Length: 60\r\n\r\n";
    let started = tokio::time::Instant::now();
    let (answer, closed) = raw_exchange(port, head, b"").await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
    assert!(closed, "the server kept the connection open");
    assert!(started.elapsed() >= Duration::from_millis(300), "too early");
    handle.stop(true).await;
}

/// `tools/call` of `slow` padded to about `bytes` bytes.
fn padded_slow_call(id: i64, bytes: usize) -> Value {
    let mut call = common::http::tools_call(json!(id), "slow", json!({}));
    let len = call.to_string().len();
    call["params"]["_meta"] = json!({"pad": "x".repeat(bytes.saturating_sub(len + 20))});
    call
}

/// The request bytes in flight are bounded server-wide: while a large request is being
/// answered (its answer streams), another that does not fit is refused 503 with `Retry-After`
/// and a JSON-RPC error; small ones still fit; the bytes come back when the answer ends.
#[actix_web::test]
async fn request_bytes_in_flight_have_a_server_wide_budget() {
    // A request costs its text and what its parse holds (about twice a string's bytes, plus
    // some 128 bytes per structural token): a 14 kB call holds about 30 kB of the 40 kB.
    let (fixture, srv) = start(|mcp| mcp.max_request_bytes_in_flight(40_000));
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let big = padded_slow_call(1, 14_000);
    let mut held = common::sse::SseReader::new(client.post(&big).await);
    fixture.probes.started.wait_for(1).await;

    let response = client.post(&padded_slow_call(2, 14_000)).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1");
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32000);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("budget"), "{message}");
    assert_ping(&client, 3).await;

    client.cancel(json!(1)).await;
    held.expect_end().await;
    fixture.probes.stopped.wait_for(1).await;
    // Released once the held answer has ended; its connection may still be closing.
    eventually_async("the budget is released", || async {
        let status = client.post(&padded_slow_call(4, 14_000)).await.status();
        assert!(
            [StatusCode::OK, StatusCode::SERVICE_UNAVAILABLE].contains(&status),
            "{status}"
        );
        status == StatusCode::OK
    })
    .await;
    srv.stop().await;
}

/// A message is budgeted by what its parse holds, not only by its length: 30 kB of numbers
/// (about 2 MB once parsed) is refused 413 by a 1 MB budget, while 300 kB of text passes.
#[actix_web::test]
async fn structure_heavy_bodies_are_budgeted_by_what_their_parse_holds() {
    let (_fixture, srv) = start(|mcp| mcp.max_request_bytes_in_flight(1 << 20));
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let numbers = vec![1; 15_000];
    let heavy = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"n": numbers}});
    assert!(heavy.to_string().len() < 40_000);
    let response = client.post(&heavy).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["id"], Value::Null);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("too complex"), "{message}");

    let text = "x".repeat(300_000);
    let result = client
        .call_ok(json!(2), "echo", json!({"message": text}))
        .await;
    assert_eq!(common::http::text_of(&result), text);
    srv.stop().await;
}

/// A `tools/call` of `slow` as a 2026-07-28 request: its `_meta` envelope and its headers.
fn v2026_slow_call(client: &Client, id: i64) -> reqwest::RequestBuilder {
    let mut call = common::http::tools_call(json!(id), "slow", json!({}));
    call["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    client
        .post_builder(&call)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "slow")
}

/// Sends `builder` and reads its whole answer in a task the caller aborts to close the
/// connection while the answer is awaited.
fn in_flight(builder: reqwest::RequestBuilder) -> actix_rt::task::JoinHandle<()> {
    actix_rt::spawn(async move {
        if let Ok(response) = builder.send().await {
            let _ = response.bytes().await;
        }
    })
}

/// Without a session (stateless mode, and 2026-07-28 requests on a session server), closing
/// the connection that awaits a request's answer (an SSE stream or a JSON body) cancels the
/// request: its tool stops and the request leaves the server.
#[actix_web::test]
async fn without_a_session_closing_the_answer_cancels_the_request() {
    for (stateless, json_response, v2026) in [
        (true, false, false),
        (true, true, false),
        (false, false, true),
        (false, true, true),
    ] {
        let what = format!("stateless {stateless}, json {json_response}, 2026 {v2026}");
        let (fixture, srv) = start(|mcp| mcp.stateless(stateless).json_response(json_response));
        let client = srv.client();
        let builder = if v2026 {
            v2026_slow_call(&client, 1)
        } else {
            client.post_builder(&common::http::tools_call(json!(1), "slow", json!({})))
        };
        let call = in_flight(builder);
        fixture.probes.started.wait_for(1).await;
        eventually(&format!("{what}: the request is in flight"), || {
            srv.mcp.stats().runtime.in_flight == 1
        })
        .await;
        call.abort();
        fixture.probes.stopped.wait_for(1).await;
        eventually(&format!("{what}: the request ends"), || {
            srv.mcp.stats().runtime.in_flight == 0 && srv.mcp.stats().runtime.tool_calls == 0
        })
        .await;
        srv.stop().await;
    }
}

/// `examples/http_server.rs`: any client may call `add_tool`, so the catalog it grows is
/// bounded: 100 tools at most, names of 64 bytes at most; past that the call is a tool error.
#[actix_web::test]
async fn the_example_server_caps_the_tools_added_at_run_time() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let _child = tokio::process::Command::new(common::pipe::example_binary("http_server"))
        .args(["--port", &port.to_string(), "--workers", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    common::pipe::listening(port).await;
    let mut client = Client::new(&format!("http://127.0.0.1:{port}/mcp"));
    client.initialize(json!({})).await;
    for n in 0..100 {
        let result = client
            .call_ok(json!(n), "add_tool", json!({"name": format!("added_{n}")}))
            .await;
        common::http::assert_tool_result(&result, false);
    }
    let result = client
        .call_ok(json!(100), "add_tool", json!({"name": "one_too_many"}))
        .await;
    common::http::assert_tool_result(&result, true);
    let text = common::http::text_of(&result);
    assert!(text.contains("at most 100"), "{text}");
    let result = client
        .call_ok(json!(101), "add_tool", json!({"name": "n".repeat(65)}))
        .await;
    common::http::assert_tool_result(&result, true);
    let tools = client.request(json!(102), "tools/list", json!({})).await;
    let names: Vec<&str> = tools.response["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .filter(|name| name.starts_with("added_"))
        .collect();
    assert_eq!(names.len(), 100);
}

/// In JSON response mode, the POST of a request the client cancelled is answered with the
/// request's JSON-RPC error `-32800` (200, `application/json`), not with the 202 that is for
/// notifications and responses only.
#[actix_web::test]
async fn a_cancelled_request_in_json_mode_is_answered_with_its_error() {
    let (fixture, srv) = start(|mcp| mcp.json_response(true));
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let builder = client.post_builder(&common::http::tools_call(json!(1), "slow", json!({})));
    let call = actix_rt::spawn(async move {
        let response = builder.send().await.unwrap();
        let status = response.status();
        let content_type = response.headers()["content-type"].clone();
        (status, content_type, response.text().await.unwrap())
    });
    fixture.probes.started.wait_for(1).await;
    client.cancel(json!(1)).await;
    let (status, content_type, body) = tokio::time::timeout(common::WAIT, call)
        .await
        .expect("no answer in time")
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "application/json");
    let body: Value = serde_json::from_str(&body).unwrap();
    common::assert_valid_message(&body);
    assert_eq!(body["id"], 1);
    assert_eq!(body["error"]["code"], -32800);
    fixture.probes.stopped.wait_for(1).await;
    srv.stop().await;
}

/// One `initialize` per session on both transports: over HTTP an `initialize` carrying the
/// `Mcp-Session-Id` of a live session is a request of that session and is refused there with
/// `-32600`, exactly as a second `initialize` over stdio; it opens no session. With the id of
/// a session that is gone it is 404, like any request of that session.
#[actix_web::test]
async fn one_initialize_per_session_on_both_transports() {
    for json_response in [false, true] {
        let (_fixture, srv) = start(|mcp| mcp.json_response(json_response));
        let mut client = srv.client();
        client.initialize(json!({})).await;
        let answer = read_answer(client.post(&initialize(json!(1))).await, &json!(1)).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(
            answer.response["error"]["code"], -32600,
            "{}",
            answer.response
        );
        assert!(answer.headers.get("mcp-session-id").is_none());
        assert_eq!(srv.mcp.session_count(), 1);
        assert_ping(&client, 2).await;
        let mut gone = client.clone();
        gone.session = Some("no-such-session".into());
        let response = gone.post(&initialize(json!(3))).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(refusal(response).await, (-32600, json!(3)));
        srv.stop().await;
    }
    let fixture = common::http_tools::fixture();
    let mut stdio = common::pipe::PipeClient::connect(&fixture.server, json!({})).await;
    stdio.send(initialize(json!(1))).await;
    let answer = stdio.read().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
}

/// A tool call nobody waits for must not run, and keep its session busy, forever: every
/// invocation has a time limit of 5 minutes unless the server turns it off
/// (`without_tool_timeout`) or sets another. Under paused time, over stdio framing.
#[actix_web::test]
async fn tools_have_a_default_time_limit() {
    tokio::time::pause();
    let slow = |_cx: actix_mcp::RequestContext| std::future::pending::<&'static str>();
    let limited = actix_mcp::Server::builder("t", "1")
        .tool(actix_mcp::ToolDef::new("slow", slow).description("Never ends"))
        .build()
        .unwrap();
    let mut client = common::pipe::PipeClient::connect(&limited, json!({})).await;
    let started = tokio::time::Instant::now();
    client
        .send(common::http::tools_call(json!(1), "slow", json!({})))
        .await;
    let answer = client
        .read_within(Duration::from_secs(3600))
        .await
        .expect("the call never ended");
    assert_eq!(started.elapsed().as_secs(), 300, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = common::http::text_of(&answer["result"]);
    assert!(text.contains("timed out after 300000 ms"), "{text}");

    let unlimited = actix_mcp::Server::builder("t", "1")
        .without_tool_timeout()
        .tool(actix_mcp::ToolDef::new("slow", slow).description("Never ends"))
        .build()
        .unwrap();
    let mut client = common::pipe::PipeClient::connect(&unlimited, json!({})).await;
    client
        .send(common::http::tools_call(json!(1), "slow", json!({})))
        .await;
    assert!(
        client
            .read_within(Duration::from_secs(3600))
            .await
            .is_none()
    );
}

/// A `progressToken` over 256 bytes is refused with `-32602` without a session too (it is
/// copied into every progress notification), as it is in one.
#[actix_web::test]
async fn oversized_progress_tokens_are_refused_without_a_session() {
    let (_fixture, srv) = start(|mcp| mcp.stateless(true));
    let token = "t".repeat(300);
    let answer = srv
        .client()
        .request(json!(1), "ping", json!({"_meta": {"progressToken": token}}))
        .await;
    assert_eq!(
        answer.response["error"]["code"], -32602,
        "{}",
        answer.response
    );
    assert_eq!(answer.response["id"], 1);
    srv.stop().await;
}
