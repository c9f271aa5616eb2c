//! DNS-rebinding protection on a server published the way containers publish it, on `0.0.0.0`:
//! the default policy checks every `Origin` whatever the bind (a rebinding page's origin is its
//! own name, so it is refused), refuses `Origin: null` unless it is listed, and says once, in a
//! warning naming the option, that it cannot check `Host` there.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use actix_mcp::prelude::*;
use actix_mcp::transport::http::{HostPolicy, McpHttpBuilder};
use reqwest::StatusCode;
use serde_json::json;

/// Everything the endpoint logs, for the whole test binary.
fn logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs: Arc<Mutex<Vec<u8>>> = Arc::default();
        let sink = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::WARN)
            .with_writer(move || Sink(sink.clone()))
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        logs
    })
    .clone()
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `mcp` served on `0.0.0.0:0`; returns its loopback URL and the server's handle.
fn serve_everywhere(mcp: McpHttpBuilder) -> (String, actix_web::dev::ServerHandle) {
    let mcp = mcp.build().unwrap();
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let path = mcp.path().to_owned();
    let server =
        actix_web::HttpServer::new(move || actix_web::App::new().configure(mcp.configure()))
            .workers(1)
            .disable_signals()
            .shutdown_timeout(1)
            .listen(listener)
            .unwrap()
            .run();
    let handle = server.handle();
    actix_rt::spawn(server);
    (format!("http://127.0.0.1:{port}{path}"), handle)
}

fn server() -> Server {
    Server::builder("origin-test", "1.0.0").build().unwrap()
}

/// The status of an `initialize` POST with these `Origin` values.
async fn initialize_with(url: &str, origins: &[&str]) -> StatusCode {
    let mut request = common::http::http_client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for origin in origins {
        request = request.header("origin", *origin);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    common::http::send(request.json(&body)).await.status()
}

/// On `0.0.0.0` a browser's cross-origin request is refused (a rebinding page sends its own
/// name as `Origin`), `null` too; loopback origins and requests without `Origin` pass.
#[actix_web::test]
async fn a_cross_origin_request_is_refused_on_an_unspecified_bind() {
    let logs = logs();
    let (url, handle) = serve_everywhere(server().http("/mcp"));
    assert_eq!(
        initialize_with(&url, &["http://rebind.example.com:8080"]).await,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        initialize_with(&url, &["null"]).await,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        initialize_with(&url, &["http://localhost:3000", "http://evil.example.com"]).await,
        StatusCode::FORBIDDEN
    );
    assert_eq!(initialize_with(&url, &[]).await, StatusCode::OK);
    assert_eq!(
        initialize_with(&url, &["http://localhost:3000"]).await,
        StatusCode::OK
    );
    let text = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    let warnings = text
        .lines()
        .filter(|line| line.contains("checks no Host header"))
        .count();
    assert_eq!(warnings, 1, "one warning naming the option: {text}");
    assert!(text.contains("HostPolicy::AllowList"), "{text}");
    handle.stop(true).await;
}

/// An allow-list names what passes, `null` included when it is listed; its hosts are checked
/// on any bind.
#[actix_web::test]
async fn an_allow_list_is_checked_on_an_unspecified_bind() {
    let (url, handle) =
        serve_everywhere(server().http("/mcp").host_policy(HostPolicy::AllowList {
            hosts: vec!["mcp.example.com".into()],
            origins: vec!["https://app.example.com".into(), "null".into()],
        }));
    assert_eq!(
        initialize_with(&url, &["https://app.example.com"]).await,
        StatusCode::OK
    );
    assert_eq!(initialize_with(&url, &["null"]).await, StatusCode::OK);
    assert_eq!(
        initialize_with(&url, &["https://other.example.com"]).await,
        StatusCode::FORBIDDEN
    );
    let status = common::http::send(
        common::http::http_client()
            .post(&url)
            .header("host", "rebind.example.com")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body("{}"),
    )
    .await
    .status();
    assert_eq!(status, StatusCode::FORBIDDEN);
    handle.stop(true).await;
}
