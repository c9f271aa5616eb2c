//! Streamable HTTP under hostile clients: `Host`/`Origin` checks that fail closed, refusals that
//! always name the request's `id`, session floods, bodies that never finish, the server-wide
//! budget of request bytes, and cancellation without sessions.
//!
//! A real actix-web server on `127.0.0.1:0` ([`common::http::spawn`]) serving the tools of
//! [`common::http_tools`], driven by raw reqwest requests or raw TCP writes. Every wait is
//! bounded by [`common::WAIT`] (fail, don't hang).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>

#![allow(clippy::unwrap_used)]

mod common;

use reqwest::StatusCode;
use reqwest::header::{HOST, HeaderValue, ORIGIN};
use serde_json::{Value, json};

use common::http::{VERSION, refusal};
use common::http_tools::start;

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
        &[("origin", b"http://localhost"), ("origin", b"http://evil.example")],
    ];
    for headers in refused {
        let mut builder = client.post_builder(&initialize(json!(0)));
        for (name, value) in headers {
            let name = if *name == "host" { HOST } else { ORIGIN };
            builder = builder.header(name, HeaderValue::from_bytes(value).unwrap());
        }
        let response = common::http::send(builder).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{headers:?}");
        assert_eq!(refusal(response).await, (-32600, Value::Null), "{headers:?}");
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
