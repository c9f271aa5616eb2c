//! Admission control, one refusal kind at a time: the per-session rate limit (429 before the
//! body is read, `id: null`), the per-identity rate limit, the global, per-tool and
//! per-identity concurrency limits with their bounded wait queue (full queue, wait past its
//! deadline, a waiter admitted when a slot frees up), a waiter refused when the server drains,
//! and `ping`, which never waits. Every refusal is HTTP 429 with `Retry-After` and a JSON-RPC
//! error `-32003` with `data.retryAfterMs` and `data.limit`.
//!
//! Real servers on `127.0.0.1:0` ([`common::http::spawn`]); every wait is bounded.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use actix_mcp::server::auth::{AuthError, BearerAuth, Identity, TokenValidator};
use actix_mcp::transport::http::{AdmissionConfig, McpHttpBuilder, Rate};
use futures::future::BoxFuture;
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::http::{Client, TestServer, assert_ping, read_answer, tools_call};
use common::http_tools::{Fixture, start};
use common::sse::SseReader;
use common::{WAIT, eventually};

/// `-32003`, the code of every admission refusal.
const OVERLOADED: i64 = -32003;

/// Checks a refusal: 429, `Retry-After` in whole seconds, a valid JSON-RPC error `-32003`
/// with `id`, `data.limit` and a positive `data.retryAfterMs`. Returns `retryAfterMs`.
async fn assert_refused(response: reqwest::Response, id: Value, limit: &str) -> u64 {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    common::assert_valid_message(&body);
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], OVERLOADED, "{body}");
    assert_eq!(body["error"]["data"]["limit"], limit, "{body}");
    let retry_ms = body["error"]["data"]["retryAfterMs"].as_u64().unwrap();
    assert!(retry_ms >= 1, "{body}");
    assert!(retry_after * 1000 >= retry_ms, "{body}");
    retry_ms
}

/// Starts `slow` (which runs until cancelled) as request `id` and waits until it runs.
async fn hold_slot(fixture: &Fixture, client: &Client, id: i64, running: usize) -> SseReader {
    let call = client
        .start(
            json!(id),
            "tools/call",
            json!({"name": "slow", "arguments": {}}),
        )
        .await;
    fixture.probes.started.wait_for(running).await;
    call
}

async fn session(srv: &TestServer) -> Client {
    let mut client = srv.client();
    client.initialize(json!({})).await;
    client
}

/// Past its session's rate, a POST is refused 429 before its body is read (so its id is
/// unknown: `null`); another session has a bucket of its own.
#[actix_web::test]
async fn a_session_past_its_rate_is_refused_before_the_body_is_read() {
    let (_fixture, srv) = start(|mcp| {
        mcp.admission(AdmissionConfig::new().session_rate(Rate::new(3, Duration::from_secs(60))))
    });
    let client = session(&srv).await;
    // `notifications/initialized` took one token; two are left.
    assert_ping(&client, 1).await;
    assert_ping(&client, 2).await;
    let response = client
        .post(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    let retry_ms = assert_refused(response, Value::Null, "sessionRate").await;
    // A token comes back every 20 s.
    assert!(retry_ms > 1_000 && retry_ms <= 20_000, "{retry_ms}");
    let other = session(&srv).await;
    assert_ping(&other, 1).await;
    assert!(srv.mcp.stats().rate_limited >= 1);
    srv.stop().await;
}

/// With the global limit full and no queue, a request is refused at once (with its id);
/// `ping` is not counted and still answered.
#[actix_web::test]
async fn a_full_global_limit_without_a_queue_refuses_at_once() {
    let (fixture, srv) = start(|mcp| {
        mcp.admission(
            AdmissionConfig::new()
                .max_concurrent(1)
                .queue(0, Duration::from_secs(1)),
        )
    });
    let client = session(&srv).await;
    let _running = hold_slot(&fixture, &client, 1, 1).await;
    let response = client
        .post(&tools_call(json!(2), "echo", json!({"message": "x"})))
        .await;
    assert_refused(response, json!(2), "global").await;
    assert_ping(&client, 3).await;
    assert_eq!(srv.mcp.stats().queue_full, 1);
    srv.stop().await;
}

/// A request waits in the queue for a slot and is refused when the wait reaches its deadline.
#[actix_web::test]
async fn a_wait_past_the_queue_deadline_is_refused() {
    let (fixture, srv) = start(|mcp| {
        mcp.admission(
            AdmissionConfig::new()
                .max_concurrent(1)
                .queue(8, Duration::from_millis(200)),
        )
    });
    let client = session(&srv).await;
    let _running = hold_slot(&fixture, &client, 1, 1).await;
    let response = client
        .post(&tools_call(json!(2), "echo", json!({"message": "x"})))
        .await;
    assert_refused(response, json!(2), "global").await;
    let stats = srv.mcp.stats();
    assert_eq!(
        (stats.queued, stats.queue_timeouts, stats.waiting),
        (1, 1, 0)
    );
    srv.stop().await;
}

/// A waiting request is admitted as soon as the slot frees up (here: the running request is
/// cancelled), and answered.
#[actix_web::test]
async fn a_waiter_is_admitted_when_a_slot_frees_up() {
    let (fixture, srv) =
        start(|mcp| mcp.admission(AdmissionConfig::new().max_concurrent(1).queue(8, WAIT * 2)));
    let client = session(&srv).await;
    let running = hold_slot(&fixture, &client, 1, 1).await;
    let waiter = {
        let client = client.clone();
        actix_rt::spawn(async move {
            let response = client
                .post(&tools_call(json!(2), "echo", json!({"message": "next"})))
                .await;
            read_answer(response, &json!(2)).await
        })
    };
    eventually("the second request waits", || srv.mcp.stats().waiting == 1).await;
    client.cancel(json!(1)).await;
    drop(running);
    let answer = tokio::time::timeout(WAIT, waiter).await.unwrap().unwrap();
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.response["result"]["content"][0]["text"], "next");
    assert_eq!(srv.mcp.stats().waiting, 0);
    srv.stop().await;
}

/// A tool's own limit refuses a second call of that tool only.
#[actix_web::test]
async fn a_tool_limit_counts_calls_of_that_tool_only() {
    let (fixture, srv) = start(|mcp| {
        mcp.admission(
            AdmissionConfig::new()
                .max_concurrent_per_tool("slow", 1)
                .queue(0, Duration::from_secs(1)),
        )
    });
    let client = session(&srv).await;
    let _running = hold_slot(&fixture, &client, 1, 1).await;
    let response = client.post(&tools_call(json!(2), "slow", json!({}))).await;
    assert_refused(response, json!(2), "tool").await;
    let result = client
        .call_ok(json!(3), "echo", json!({"message": "free"}))
        .await;
    assert_eq!(result["content"][0]["text"], "free");
    srv.stop().await;
}

/// A request waiting for a slot when the server begins draining is refused 503 at once.
#[actix_web::test]
async fn a_waiter_is_refused_when_the_server_drains() {
    let (fixture, srv) =
        start(|mcp| mcp.admission(AdmissionConfig::new().max_concurrent(1).queue(8, WAIT * 2)));
    let client = session(&srv).await;
    let _running = hold_slot(&fixture, &client, 1, 1).await;
    let waiter = {
        let client = client.clone();
        actix_rt::spawn(async move {
            client
                .post(&tools_call(json!(2), "echo", json!({"message": "x"})))
                .await
        })
    };
    eventually("the second request waits", || srv.mcp.stats().waiting == 1).await;
    let mcp = srv.mcp.clone();
    let drained = actix_rt::spawn(async move { mcp.drain(Duration::from_millis(100)).await });
    let response = tokio::time::timeout(WAIT, waiter).await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().contains_key("retry-after"));
    let (code, id) = common::http::refusal(response).await;
    assert_eq!((code, id), (-32000, json!(2)));
    tokio::time::timeout(WAIT * 2, drained)
        .await
        .unwrap()
        .unwrap();
    srv.stop().await;
}

/// Accepts any token as the identity it names.
struct NameIsIdentity;

impl TokenValidator for NameIsIdentity {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
        Box::pin(async move { Ok(Identity::new(token)) })
    }
}

fn protected(mcp: McpHttpBuilder, admission: AdmissionConfig) -> McpHttpBuilder {
    let auth = BearerAuth::builder("http://127.0.0.1/mcp", NameIsIdentity)
        .authorization_server("http://127.0.0.1/issuer")
        .build()
        .unwrap();
    mcp.bearer_auth(auth).admission(admission)
}

/// A client of `identity` on a protected endpoint, with a session.
async fn session_of(srv: &TestServer, identity: &str) -> Client {
    let mut client = Client::with_bearer(&srv.url, identity);
    client.initialize(json!({})).await;
    client
}

/// An identity's concurrency limit counts over all its sessions; another identity is not
/// limited by it.
#[actix_web::test]
async fn an_identity_limit_counts_over_its_sessions() {
    let (fixture, srv) = start(|mcp| {
        protected(
            mcp,
            AdmissionConfig::new()
                .max_concurrent_per_principal(1)
                .queue(0, Duration::from_secs(1)),
        )
    });
    let alice = session_of(&srv, "alice").await;
    let alice_again = session_of(&srv, "alice").await;
    let _running = hold_slot(&fixture, &alice, 1, 1).await;
    let response = alice_again
        .post(&tools_call(json!(2), "echo", json!({"message": "x"})))
        .await;
    assert_refused(response, json!(2), "principal").await;
    let bob = session_of(&srv, "bob").await;
    let result = bob
        .call_ok(json!(3), "echo", json!({"message": "bob"}))
        .await;
    assert_eq!(result["content"][0]["text"], "bob");
    srv.stop().await;
}

/// An identity past its rate is refused (with the request's id: the token is validated once
/// the body is read) in every session; another identity is not.
#[actix_web::test]
async fn an_identity_past_its_rate_is_refused() {
    let (_fixture, srv) = start(|mcp| {
        protected(
            mcp,
            AdmissionConfig::new().principal_rate(Rate::new(4, Duration::from_secs(60))),
        )
    });
    // initialize and notifications/initialized: two tokens.
    let alice = session_of(&srv, "alice").await;
    assert_ping(&alice, 1).await;
    assert_ping(&alice, 2).await;
    let response = alice
        .post(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    assert_refused(response, json!(3), "principalRate").await;
    let bob = session_of(&srv, "bob").await;
    assert_ping(&bob, 1).await;
    srv.stop().await;
}
