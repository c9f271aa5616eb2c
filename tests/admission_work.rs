//! A limit holds for as long as the work runs, not as long as its connection: a session
//! request whose client went away keeps its admission slot while it runs on, a task keeps the
//! slots of the call that created it for its whole life, and one identity's tasks are capped
//! so that it cannot take every slot from another.
//!
//! Real servers on `127.0.0.1:0`; tools wait on gates the tests open; every wait is bounded.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::protocol::TaskSupport;
use actix_mcp::server::auth::{AuthError, BearerAuth, Identity, TokenValidator};
use actix_mcp::transport::http::{AdmissionConfig, McpHttpBuilder};
use actix_mcp::{RequestContext, Server, TaskConfig, ToolDef};
use futures::future::BoxFuture;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::Notify;

use common::eventually_async;
use common::http::{Client, Probe, TestServer, spawn, tools_call};
use common::http_tools::start;

/// Whether `body` is refused with `refusal` every time it is tried (every 25 ms) for `wait`.
async fn refused_throughout(
    client: &Client,
    body: &Value,
    wait: Duration,
    refusal: StatusCode,
) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    while tokio::time::Instant::now() < deadline {
        if client.post(body).await.status() != refusal {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    true
}

/// Waits until `body` is no longer refused with `refusal`; fails after [`WAIT`](common::WAIT).
async fn admitted(client: &Client, body: &Value, refusal: StatusCode) {
    eventually_async("admitted", || async {
        client.post(body).await.status() != refusal
    })
    .await;
}

/// A 2025-11-25 session request runs on when its client closes the connection (a disconnect is
/// not a cancellation): its slot stays held until it ends, then frees up.
#[actix_web::test]
async fn a_session_request_keeps_its_slot_after_its_client_went_away() {
    let (fixture, srv) = start(|mcp| {
        mcp.admission(
            AdmissionConfig::new()
                .max_concurrent(1)
                .queue(0, Duration::from_secs(1)),
        )
    });
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let running = client
        .fresh_connection()
        .start(
            json!(1),
            "tools/call",
            json!({"name": "slow", "arguments": {}}),
        )
        .await;
    fixture.probes.started.wait_for(1).await;
    drop(running);
    let echo = tools_call(json!(2), "echo", json!({"message": "x"}));
    assert!(
        refused_throughout(
            &client,
            &echo,
            Duration::from_millis(600),
            StatusCode::TOO_MANY_REQUESTS
        )
        .await,
        "the slot was released while `slow` still runs"
    );
    assert_eq!(fixture.probes.stopped.hits(), 0, "`slow` stopped meanwhile");
    client.cancel(json!(1)).await;
    fixture.probes.stopped.wait_for(1).await;
    admitted(&client, &echo, StatusCode::TOO_MANY_REQUESTS).await;
    srv.stop().await;
}

/// A `slow` call padded to about `bytes` of JSON.
fn padded_slow_call(id: i64, bytes: usize) -> Value {
    let mut call = tools_call(json!(id), "slow", json!({}));
    let len = call.to_string().len();
    call["params"]["_meta"] = json!({"pad": "x".repeat(bytes.saturating_sub(len + 20))});
    call
}

/// The request bytes a session request holds stay held while it runs on after its client
/// went away: another large request is refused (503) until it ends.
#[actix_web::test]
async fn a_session_request_keeps_its_bytes_after_its_client_went_away() {
    // A 14 kB call holds about 30 kB of the 40 kB budget (its text and what its parse holds).
    let (fixture, srv) = start(|mcp| mcp.max_request_bytes_in_flight(40_000));
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let running = client
        .fresh_connection()
        .start(
            json!(1),
            "tools/call",
            padded_slow_call(1, 14_000)["params"].clone(),
        )
        .await;
    fixture.probes.started.wait_for(1).await;
    drop(running);
    let big = padded_slow_call(2, 14_000);
    assert!(
        refused_throughout(
            &client,
            &big,
            Duration::from_millis(600),
            StatusCode::SERVICE_UNAVAILABLE
        )
        .await,
        "the bytes were released while `slow` still runs"
    );
    client.cancel(json!(1)).await;
    fixture.probes.stopped.wait_for(1).await;
    admitted(&client, &big, StatusCode::SERVICE_UNAVAILABLE).await;
    srv.stop().await;
}

/// Accepts any token as the identity it names.
struct NameIsIdentity;

impl TokenValidator for NameIsIdentity {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
        Box::pin(async move { Ok(Identity::new(token)) })
    }
}

fn protected(mcp: McpHttpBuilder) -> McpHttpBuilder {
    let auth = BearerAuth::builder("http://127.0.0.1/mcp", NameIsIdentity)
        .authorization_server("http://127.0.0.1/issuer")
        .build()
        .unwrap();
    mcp.bearer_auth(auth)
}

/// A server whose `job` (a task, required) runs until `gate` opens, and `echo`.
fn task_server(gate: Arc<Notify>, started: Arc<Probe>, tasks: TaskConfig) -> Server {
    Server::builder("work-test", "1.0.0")
        .tasks(tasks)
        .tool(
            ToolDef::new("job", move |_cx: RequestContext| {
                let gate = gate.clone();
                let started = started.clone();
                async move {
                    started.hit();
                    gate.notified().await;
                    "done"
                }
            })
            .description("Runs until the gate opens")
            .task_support(TaskSupport::Required),
        )
        .tool(ToolDef::new("echo", |_cx: RequestContext| async { "echo" }).description("Echoes"))
        .build()
        .unwrap()
}

/// A 2026 `tools/call` of `name` declaring the Tasks extension.
fn call_2026(id: i64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
        },
    }})
}

/// POSTs a 2026 message; the status and the JSON-RPC response.
async fn post_2026(client: &Client, body: &Value) -> (StatusCode, Value) {
    let response = common::http::send(client.v2026_builder(body)).await;
    let status = response.status();
    let answer = common::http::read_answer(response, &body["id"]).await;
    (status, answer.response)
}

fn serve(server: &Server, admission: AdmissionConfig) -> TestServer {
    spawn(protected(server.http("/mcp")).admission(admission), 1)
}

/// A task keeps the global slot of the call that created it while it runs: the next call is
/// refused until the task ends.
#[actix_web::test]
async fn a_running_task_keeps_its_admission_slot() {
    let gate = Arc::new(Notify::new());
    let started = Arc::new(Probe::default());
    let server = task_server(gate.clone(), started.clone(), TaskConfig::default());
    let srv = serve(
        &server,
        AdmissionConfig::new()
            .max_concurrent(1)
            .queue(0, Duration::from_secs(1)),
    );
    let alice = Client::with_bearer(&srv.url, "alice");
    let (status, created) = post_2026(&alice, &call_2026(1, "job")).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    started.wait_for(1).await;
    let (status, refused) = post_2026(&alice, &call_2026(2, "echo")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
    assert_eq!(refused["error"]["data"]["limit"], "global", "{refused}");
    gate.notify_one();
    let echo = call_2026(3, "echo");
    let answer = eventually_async("a slot frees up for alice", || async {
        match post_2026(&alice, &echo).await {
            (StatusCode::OK, answer) => Ok(answer),
            (_, refused) => Err(refused.to_string()),
        }
    })
    .await;
    assert_eq!(answer["result"]["content"][0]["text"], "echo", "{answer}");
    srv.stop().await;
}

/// One identity's running tasks are capped: past its cap its next task is refused as busy and
/// holds nothing, so another identity still gets a slot and a task.
#[actix_web::test]
async fn one_identity_cannot_take_every_slot_with_tasks() {
    let gate = Arc::new(Notify::new());
    let started = Arc::new(Probe::default());
    let server = task_server(
        gate.clone(),
        started.clone(),
        TaskConfig::default().max_tasks_per_principal(2),
    );
    let srv = serve(
        &server,
        AdmissionConfig::new()
            .max_concurrent(3)
            .queue(0, Duration::from_secs(1)),
    );
    let alice = Client::with_bearer(&srv.url, "alice");
    for id in 1..=2 {
        let (_, created) = post_2026(&alice, &call_2026(id, "job")).await;
        assert_eq!(created["result"]["resultType"], "task", "{created}");
    }
    started.wait_for(2).await;
    let (_, refused) = post_2026(&alice, &call_2026(3, "job")).await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many tasks"),
        "{refused}"
    );
    let bob = Client::with_bearer(&srv.url, "bob");
    let (_, created) = post_2026(&bob, &call_2026(4, "job")).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    started.wait_for(3).await;
    // Three tasks hold the three slots now: alice's and bob's alike wait for them.
    let (status, _) = post_2026(&bob, &call_2026(5, "echo")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    gate.notify_waiters();
    srv.stop().await;
}
