//! Request-context features over stdio framing (an in-memory pipe): URL-mode elicitation and
//! its completion notice, the URL-elicitation-required error, the roots-changed handler,
//! blocking tools, and the per-session concurrency limit. Every read is bounded.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::ToolDef;
use actix_mcp::prelude::*;
use actix_mcp::protocol::{ElicitAction, ElicitRequestURLParams};
use common::pipe::PipeClient;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Notify;

/// Arguments of `square`.
#[derive(Deserialize, JsonSchema)]
struct SquareArgs {
    n: i64,
}

struct Probe(Notify);

fn server(probe: Arc<Probe>) -> Server {
    Server::builder("context", "1")
        .state_arc(probe.clone())
        .max_concurrent_requests(2)
        .tool(
            ToolDef::new("authorize", |_cx: RequestContext| async {
                Err::<String, _>(McpError::url_elicitation_required(vec![
                    ElicitRequestURLParams {
                        message: "Sign in to continue".into(),
                        url: "https://example.com/login".into(),
                        elicitation_id: Some("login-1".into()),
                        task: None,
                        meta: None,
                    },
                ]))
            })
            .description("Needs the user to visit a URL first"),
        )
        .tool(
            ToolDef::new("visit", |cx: RequestContext| async move {
                let answer = cx
                    .elicit_url("Please sign in", "https://example.com/login", "visit-1")
                    .await?;
                if answer.action == ElicitAction::Accept {
                    cx.notify_elicitation_complete("visit-1");
                }
                Ok::<_, McpError>(format!("{:?}", answer.action))
            })
            .description("Sends the user to a URL and reports completion"),
        )
        .tool(
            ToolDef::blocking("square", |args: SquareArgs, _cx| {
                // Blocking work: never runs on the session's arbiter.
                std::thread::sleep(Duration::from_millis(5));
                (args.n * args.n).to_string()
            })
            .description("Squares on the blocking pool"),
        )
        .tool(
            ToolDef::new(
                "hold",
                |cx: RequestContext, State(probe): State<Probe>| async move {
                    probe.0.notify_one();
                    cx.cancelled().await;
                    "released"
                },
            )
            .description("Waits until cancelled"),
        )
        .on_roots_list_changed(move |_session| probe.0.notify_one())
        .build()
        .unwrap()
}

#[actix_rt::test]
async fn a_tool_can_require_a_url_elicitation() {
    let mut client = PipeClient::connect(&server(Arc::new(Probe(Notify::new()))), json!({})).await;
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "authorize"}})).await;
    let answer = client.read().await;
    assert_eq!(answer["error"]["code"], -32042, "{answer}");
    assert_eq!(
        answer["error"]["data"],
        json!({"elicitations": [{"mode": "url", "message": "Sign in to continue",
            "url": "https://example.com/login", "elicitationId": "login-1"}]})
    );
}

#[actix_rt::test]
async fn url_elicitation_round_trip_ends_with_a_completion_notice() {
    let mut client = PipeClient::connect(
        &server(Arc::new(Probe(Notify::new()))),
        json!({"elicitation": {"url": {}}}),
    )
    .await;
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "visit"}}),
        )
        .await;
    let asked = client.read().await;
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(
        asked["params"],
        json!({"mode": "url", "message": "Please sign in",
        "url": "https://example.com/login", "elicitationId": "visit-1"})
    );
    client
        .send(json!({"jsonrpc": "2.0", "id": asked["id"].clone(), "result": {"action": "accept"}}))
        .await;
    assert_eq!(
        client.read().await,
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "visit-1"}})
    );
    assert_eq!(
        client.read().await["result"]["content"][0]["text"],
        "Accept"
    );
}

#[actix_rt::test]
async fn url_elicitation_needs_the_url_capability() {
    let mut client = PipeClient::connect(
        &server(Arc::new(Probe(Notify::new()))),
        json!({"elicitation": {}}),
    )
    .await;
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "visit"}}),
        )
        .await;
    let answer = client.read().await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("elicitation.url"),
        "{answer}"
    );
}

#[actix_rt::test]
async fn blocking_tools_answer() {
    let mut client = PipeClient::connect(&server(Arc::new(Probe(Notify::new()))), json!({})).await;
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "square", "arguments": {"n": 12}}})).await;
    assert_eq!(
        client.read().await["result"]["content"],
        json!([{"type": "text", "text": "144"}])
    );
}

#[actix_rt::test]
async fn the_roots_changed_handler_runs() {
    let probe = Arc::new(Probe(Notify::new()));
    let mut client = PipeClient::connect(
        &server(probe.clone()),
        json!({"roots": {"listChanged": true}}),
    )
    .await;
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}))
        .await;
    tokio::time::timeout(common::WAIT, probe.0.notified())
        .await
        .expect("the handler ran");
}

/// `max_concurrent_requests(2)`: a third request is refused with -32000 naming the limit, and
/// a cancel frees exactly one place at once.
#[actix_rt::test]
async fn the_per_session_request_limit_answers_a_clear_error() {
    let probe = Arc::new(Probe(Notify::new()));
    let mut client = PipeClient::connect(&server(probe.clone()), json!({})).await;
    for id in [1, 2] {
        client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "hold"}})).await;
        tokio::time::timeout(common::WAIT, probe.0.notified())
            .await
            .expect("the call started");
    }
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "hold"}}),
        )
        .await;
    let refused = client.read().await;
    assert_eq!(refused["id"], 3);
    assert_eq!(refused["error"]["code"], -32000);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit 2"),
        "{refused}"
    );
    // A full session refuses every request, a ping too: the limit counts what is in flight, and
    // the check comes before any handler runs.
    client
        .send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
        .await;
    let refused = client.read().await;
    assert_eq!(refused["id"], 4, "{refused}");
    assert_eq!(refused["error"]["code"], -32000, "{refused}");

    // Cancelling request 1 frees its place at once: the stdio transport hands
    // `notifications/cancelled` to the session before it reads the next line, and the session
    // takes the request out of its in-flight table right then, however long the tool itself
    // takes to stop (`cancel_request` in `actors/src/session.rs`). A ping is answered in its
    // handler's first poll and never occupies a place. So, with one of the two places taken (by
    // request 2), every ping after the cancel is admitted, the first one included: exactly 20
    // admitted, none refused (a refusal would carry -32000, the per-session limit's code).
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})).await;
    let (mut admitted, mut refused) = (Vec::new(), Vec::new());
    for id in 5..25 {
        client
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        let answer = client.read().await;
        assert_eq!(answer["id"], id, "nothing else is answered: {answer}");
        if answer["result"] == json!({}) {
            admitted.push(id);
        } else {
            assert_eq!(answer["error"]["code"], -32000, "{answer}");
            refused.push(id);
        }
    }
    assert_eq!(refused, Vec::<i32>::new(), "refused after the cancel");
    assert_eq!(admitted, (5..25).collect::<Vec<_>>());

    // Exactly one place was freed: one more `hold` is admitted, and then the session is full
    // again.
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 25, "method": "tools/call", "params": {"name": "hold"}}),
        )
        .await;
    tokio::time::timeout(common::WAIT, probe.0.notified())
        .await
        .expect("the call in the freed place started");
    client
        .send(json!({"jsonrpc": "2.0", "id": 26, "method": "ping"}))
        .await;
    let refused = client.read().await;
    assert_eq!(refused["id"], 26, "{refused}");
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
}
