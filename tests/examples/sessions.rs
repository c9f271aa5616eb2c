//! `examples/http_server.rs --max-sessions N --idle-timeout-s S`: the session cap and the idle
//! timeout the flags set hold at the server. Plain HTTP, so that no GET stream keeps a session
//! busy (a session with an open stream is never idle).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::serve;
use crate::common::within;

/// POSTs `body` (in `session`, if any); returns the status and the session id header.
async fn post(url: &str, session: Option<&str>, body: Value) -> (StatusCode, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .json(&body);
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("Mcp-Protocol-Version", "2025-11-25");
    }
    let response = within(request.send()).await.unwrap();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|id| id.to_str().unwrap().to_owned());
    let status = response.status();
    within(response.bytes()).await.unwrap();
    (status, session)
}

/// Opens a session (`initialize`, then `notifications/initialized`); `Err` with the status
/// when `initialize` is refused.
async fn open(url: &str) -> Result<String, StatusCode> {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "host", "version": "1.0.0"}}});
    let (status, session) = post(url, None, initialize).await;
    if status != StatusCode::OK {
        return Err(status);
    }
    let session = session.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(url, Some(&session), initialized).await.0,
        StatusCode::ACCEPTED
    );
    Ok(session)
}

async fn ping(url: &str, session: &str) -> StatusCode {
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    post(url, Some(session), ping).await.0
}

#[tokio::test]
async fn the_example_server_caps_sessions_and_closes_idle_ones() {
    let served = serve(
        "http_server",
        &[
            "--port",
            "{port}",
            "--max-sessions",
            "2",
            "--idle-timeout-s",
            "1",
        ],
    )
    .await;
    let url = served.url.as_str();
    let first = open(url).await.unwrap();
    let second = open(url).await.unwrap();
    // Both sessions are younger than the eviction age: a third is refused, not evicted.
    assert_eq!(open(url).await, Err(StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(ping(url, &first).await, StatusCode::OK);
    // Idle for more than a second: both sessions are closed (404), and a new one fits.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(ping(url, &first).await, StatusCode::NOT_FOUND);
    assert_eq!(ping(url, &second).await, StatusCode::NOT_FOUND);
    let third = open(url).await.unwrap();
    assert_eq!(ping(url, &third).await, StatusCode::OK);
}
