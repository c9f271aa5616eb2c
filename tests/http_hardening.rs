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

use common::http::{VERSION, error_body};
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
        assert_eq!(error_body(response).await, -32600, "{headers:?}");
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
