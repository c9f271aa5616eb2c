//! `notifications/cancelled` without a session (stateless mode): with bearer auth it cancels
//! the caller's own request of that id and no other identity's, on any node of a cluster, and
//! is accepted (202) for an id that names nothing; without bearer auth it is refused 400 with
//! its reason, and a 2026-07-28 one always is (that revision cancels by closing the stream).
//!
//! Real actix-web servers on `127.0.0.1:0` serving the tools of [`common::http_tools`] (`slow`
//! waits until cancelled), driven by raw reqwest requests. Every wait is bounded by
//! [`common::WAIT`].
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#cancellation>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use actix_mcp::cluster::{Bus, Cluster, InMemorySessionStore, LocalBus, SessionStore};
use actix_mcp::server::auth::{AuthError, BearerAuth, Identity, TokenValidator};
use actix_mcp::transport::http::McpHttpBuilder;
use futures::future::BoxFuture;
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::eventually;
use common::http::{Client, TestServer, spawn};
use common::http_tools::{Fixture, fixture, start};

/// The token is the subject, of one issuer.
struct TokenIsSubject;

impl TokenValidator for TokenIsSubject {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
        Box::pin(async move { Ok(Identity::new(token).with_issuer("https://as.example")) })
    }
}

fn bearer() -> BearerAuth {
    BearerAuth::builder("http://127.0.0.1/mcp", TokenIsSubject)
        .authorization_server("https://as.example")
        .build()
        .unwrap()
}

/// A protected stateless endpoint.
fn protected(mcp: McpHttpBuilder) -> McpHttpBuilder {
    mcp.stateless(true).bearer_auth(bearer())
}

fn cancel(id: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "no longer needed"},
    })
}

/// Starts a call of `slow` (id `id`) as `client` and reads its whole answer in a task: the
/// answer's status and body once it ends.
fn slow_call(client: &Client, id: i64) -> actix_rt::task::JoinHandle<(StatusCode, String)> {
    let builder = client.post_builder(&common::http::tools_call(json!(id), "slow", json!({})));
    actix_rt::spawn(async move {
        let response = builder.send().await.unwrap();
        let status = response.status();
        (status, response.text().await.unwrap_or_default())
    })
}

/// The answer of a call that must end now (bounded by [`common::WAIT`]).
async fn ended(call: actix_rt::task::JoinHandle<(StatusCode, String)>) -> (StatusCode, String) {
    tokio::time::timeout(common::WAIT, call)
        .await
        .expect("the cancelled call's answer did not end in time")
        .unwrap()
}

/// Checks the answer of a cancelled `slow` call: an SSE stream that ends with no response, or
/// (JSON mode) its `-32800` error.
fn assert_cancelled_answer(json_response: bool, (status, body): &(StatusCode, String)) {
    assert_eq!(*status, StatusCode::OK, "{body}");
    if json_response {
        let body: Value = serde_json::from_str(body).unwrap();
        common::assert_valid_message(&body);
        assert_eq!(body["error"]["code"], -32800, "{body}");
    } else {
        assert!(
            !body.contains("\"result\"") && !body.contains("\"error\""),
            "a cancelled request sends no response: {body}"
        );
    }
}

async fn post_status(client: &Client, body: &Value) -> StatusCode {
    client.post(body).await.status()
}

/// With bearer auth, a caller's `notifications/cancelled` cancels its own request of that id,
/// never another identity's request of the same id, in SSE and JSON modes; a cancellation of
/// an id that names nothing of the caller's is accepted (202) and cancels nothing.
#[actix_web::test]
async fn a_caller_cancels_its_own_request_and_no_one_elses() {
    for json_response in [false, true] {
        let (fixture, srv) = start(|mcp| protected(mcp).json_response(json_response));
        let alice = Client::with_bearer(&srv.url, "alice");
        let bob = Client::with_bearer(&srv.url, "bob");
        let carol = Client::with_bearer(&srv.url, "carol");
        let alices = slow_call(&alice, 1);
        fixture.probes.started.wait_for(1).await;
        let bobs = slow_call(&bob, 1);
        fixture.probes.started.wait_for(2).await;
        eventually("both requests are in flight", || {
            srv.mcp.stats().runtime.in_flight == 2
        })
        .await;

        // Carol has no request 1, Bob no request 2: accepted, nothing stops.
        assert_eq!(
            post_status(&carol, &cancel(json!(1))).await,
            StatusCode::ACCEPTED
        );
        assert_eq!(
            post_status(&bob, &cancel(json!(2))).await,
            StatusCode::ACCEPTED
        );
        // Malformed: ignored as the spec asks, accepted.
        let malformed = json!({"jsonrpc": "2.0", "method": "notifications/cancelled"});
        assert_eq!(post_status(&bob, &malformed).await, StatusCode::ACCEPTED);

        // Bob's cancellation of 1 stops his request only.
        assert_eq!(
            post_status(&bob, &cancel(json!(1))).await,
            StatusCode::ACCEPTED
        );
        assert_cancelled_answer(json_response, &ended(bobs).await);
        fixture.probes.stopped.wait_for(1).await;
        eventually("Bob's request is gone", || {
            srv.mcp.stats().runtime.in_flight == 1
        })
        .await;
        assert!(
            !alices.is_finished(),
            "Bob's cancellation stopped Alice's request"
        );
        assert_eq!(fixture.probes.stopped.hits(), 1);

        // Alice's own cancellation stops hers; once ended, a cancellation finds nothing.
        assert_eq!(
            post_status(&alice, &cancel(json!(1))).await,
            StatusCode::ACCEPTED
        );
        assert_cancelled_answer(json_response, &ended(alices).await);
        fixture.probes.stopped.wait_for(2).await;
        eventually("no request is left", || {
            let stats = srv.mcp.stats();
            stats.runtime.in_flight == 0 && stats.runtime.tool_calls == 0
        })
        .await;
        assert_eq!(
            post_status(&alice, &cancel(json!(1))).await,
            StatusCode::ACCEPTED
        );
        srv.stop().await;
    }
}

/// The body of a refusal: its JSON-RPC error code and message.
async fn refusal_message(response: reqwest::Response) -> (StatusCode, i64, String) {
    let status = response.status();
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    common::assert_valid_message(&body);
    assert_eq!(body["id"], Value::Null, "{body}");
    let message = body["error"]["message"].as_str().unwrap().to_owned();
    (status, body["error"]["code"].as_i64().unwrap(), message)
}

/// Without bearer auth nothing ties a `notifications/cancelled` to the client whose request it
/// names (ids are unique only per client): it is refused 400, saying that it needs
/// authentication, and cancels nothing. A 2026-07-28 one is refused 400 with or without auth:
/// that revision cancels over HTTP only by closing the response stream. The request is then
/// cancelled by its own connection.
#[actix_web::test]
async fn without_auth_or_in_2026_a_cancel_is_refused_with_its_reason() {
    let (fixture, srv) = start(|mcp| mcp.stateless(true));
    let owner = srv.client();
    let call = slow_call(&owner, 1);
    fixture.probes.started.wait_for(1).await;

    let other = srv.client();
    let (status, code, message) = refusal_message(other.post(&cancel(json!(1))).await).await;
    assert_eq!((status, code), (StatusCode::BAD_REQUEST, -32600));
    assert!(message.contains("requires authentication"), "{message}");
    let v2026 = other
        .post_builder(&cancel(json!(1)))
        .header("mcp-protocol-version", "2026-07-28");
    let (status, code, message) = refusal_message(common::http::send(v2026).await).await;
    assert_eq!((status, code), (StatusCode::BAD_REQUEST, -32600));
    assert!(message.contains("2026-07-28"), "{message}");
    assert!(message.contains("close its response stream"), "{message}");

    common::http::assert_ping(&other, 2).await;
    assert_eq!(
        fixture.probes.stopped.hits(),
        0,
        "a refused cancel stopped the tool"
    );
    assert_eq!(srv.mcp.stats().runtime.in_flight, 1);
    call.abort();
    fixture.probes.stopped.wait_for(1).await;
    srv.stop().await;

    // With bearer auth, a 2026-07-28 cancellation is still refused.
    let (_fixture, srv) = start(protected);
    let alice = Client::with_bearer(&srv.url, "alice");
    let v2026 = alice
        .post_builder(&cancel(json!(1)))
        .header("mcp-protocol-version", "2026-07-28");
    let (status, _, message) = refusal_message(common::http::send(v2026).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message.contains("2026-07-28"), "{message}");
    srv.stop().await;
}

/// Two protected stateless nodes sharing an in-memory store and bus.
fn nodes() -> [(Fixture, TestServer); 2] {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    [0, 1].map(|_| {
        let fixture = fixture();
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        let mcp = protected(fixture.server.http("/mcp")).cluster(cluster);
        (fixture, spawn(mcp, 1))
    })
}

/// In a cluster, a cancellation reaching a node where the request does not run travels to the
/// node that runs it, which cancels the caller's request of that id and no other identity's.
#[actix_web::test]
async fn a_cancel_reaches_the_callers_request_on_another_node() {
    let [(fa, a), (fb, b)] = nodes();
    let alice_on_a = Client::with_bearer(&a.url, "alice");
    let bob_on_a = Client::with_bearer(&a.url, "bob");
    let alices = slow_call(&alice_on_a, 1);
    fa.probes.started.wait_for(1).await;
    let bobs = slow_call(&bob_on_a, 1);
    fa.probes.started.wait_for(2).await;

    // Carol's cancellation of 1 through B: accepted, nothing of hers runs anywhere.
    let carol_on_b = Client::with_bearer(&b.url, "carol");
    assert_eq!(
        post_status(&carol_on_b, &cancel(json!(1))).await,
        StatusCode::ACCEPTED
    );
    // Bob's through B stops his request on A, not Alice's.
    let bob_on_b = Client::with_bearer(&b.url, "bob");
    assert_eq!(
        post_status(&bob_on_b, &cancel(json!(1))).await,
        StatusCode::ACCEPTED
    );
    assert_cancelled_answer(false, &ended(bobs).await);
    fa.probes.stopped.wait_for(1).await;
    eventually("Bob's request is gone from A", || {
        a.mcp.stats().runtime.in_flight == 1
    })
    .await;
    assert!(
        !alices.is_finished(),
        "Bob's cancellation stopped Alice's request"
    );
    assert_eq!(fa.probes.stopped.hits(), 1);

    // Alice's through B stops hers.
    let alice_on_b = Client::with_bearer(&b.url, "alice");
    assert_eq!(
        post_status(&alice_on_b, &cancel(json!(1))).await,
        StatusCode::ACCEPTED
    );
    assert_cancelled_answer(false, &ended(alices).await);
    fa.probes.stopped.wait_for(2).await;
    eventually("no request is left on A", || {
        a.mcp.stats().runtime.in_flight == 0
    })
    .await;
    assert_eq!(fb.probes.started.hits(), 0, "B ran nothing");
    a.stop().await;
    b.stop().await;
}
