//! A sealed `requestState` is good for one retry (the default): its caller cannot replay a
//! round, and the side effects of the handler's next steps, within the state's time to live;
//! not in process, not on another node of a cluster. A server whose handlers are idempotent
//! may allow replays (`single_use_request_state(false)`).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>
//! (requestState integrity, anti-replay).
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actix_mcp::cluster::{Bus, SessionStore};
use actix_mcp::cluster::{Cluster, InMemorySessionStore, LocalBus};
use actix_mcp::prelude::*;
use actix_mcp::protocol::{ElicitRequestParams, InputRequest, InputRequiredResult};
use serde_json::{Value, json};

use common::http::{Client, spawn};
use common::mrtr_tools::{self, ask, retry_call, round};

const KEY: [u8; 32] = [9; 32];

/// `redeem` asks for a confirmation, then counts one redemption per completed call.
fn server(single_use: bool, redeemed: Arc<AtomicUsize>) -> Server {
    Server::builder("replay-test", "1.0.0")
        .request_state_key("k1", KEY)
        .single_use_request_state(single_use)
        .tool(
            ToolDef::new("redeem", move |cx: RequestContext| {
                let redeemed = redeemed.clone();
                async move {
                    if cx.input_response("confirm").is_some() && cx.request_state() == Some("asked")
                    {
                        let n = redeemed.fetch_add(1, Ordering::SeqCst) + 1;
                        return Ok(format!("redemption {n}"));
                    }
                    let schema = serde_json::from_value(json!({
                        "type": "object", "properties": {"ok": {"type": "boolean"}}
                    }))
                    .unwrap();
                    Err(McpError::input_required(
                        InputRequiredResult::ask(
                            "confirm",
                            InputRequest::elicitation(&ElicitRequestParams::form("Sure?", schema)),
                        )
                        .with_state("asked"),
                    ))
                }
            })
            .description("Redeems once confirmed"),
        )
        .build()
        .unwrap()
}

/// The first call of `redeem`.
fn call(id: i64) -> Value {
    mrtr_tools::call(id, "redeem", json!({}))
}

/// The retry of `redeem` confirming the round whose state is `state`.
fn retry(id: i64, state: &str) -> Value {
    let answers = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    retry_call(id, "redeem", answers, state)
}

/// The state of the confirmation round `answer` asks for.
fn state_of(answer: &Value) -> String {
    round(answer, &["confirm"]).1
}

/// A second retry with the same state is refused with `-32602`; the handler's effect happened
/// once.
#[actix_web::test]
async fn a_state_is_good_for_one_retry() {
    let redeemed = Arc::new(AtomicUsize::new(0));
    let server = server(true, redeemed.clone());
    let state = state_of(&ask(&server, &call(1)).await);
    let first = ask(&server, &retry(2, &state)).await;
    assert_eq!(
        first["result"]["content"][0]["text"], "redemption 1",
        "{first}"
    );
    let replay = ask(&server, &retry(3, &state)).await;
    assert_eq!(replay["error"]["code"], -32602, "{replay}");
    assert!(
        replay["error"]["message"]
            .as_str()
            .unwrap()
            .contains("used already"),
        "{replay}"
    );
    assert_eq!(redeemed.load(Ordering::SeqCst), 1);
}

/// With single use off, a retry may be sent again (for idempotent handlers).
#[actix_web::test]
async fn replays_are_allowed_when_single_use_is_off() {
    let redeemed = Arc::new(AtomicUsize::new(0));
    let server = server(false, redeemed.clone());
    let state = state_of(&ask(&server, &call(1)).await);
    for id in [2, 3] {
        let answer = ask(&server, &retry(id, &state)).await;
        assert!(answer.get("result").is_some(), "{answer}");
    }
    assert_eq!(redeemed.load(Ordering::SeqCst), 2);
}

/// In a cluster a state used on one node is refused on the others; a fresh one still works on
/// any node.
#[actix_web::test]
async fn a_state_used_on_one_node_is_refused_on_another() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let redeemed = Arc::new(AtomicUsize::new(0));
    let [a, b] = [0, 1].map(|_| {
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        spawn(
            server(true, redeemed.clone()).http("/mcp").cluster(cluster),
            1,
        )
    });
    let post = |url: &str, body: Value| {
        let client = Client::new(url);
        async move {
            let response = common::http::send(client.v2026_builder(&body)).await;
            common::http::read_answer(response, &body["id"])
                .await
                .response
        }
    };
    let state = state_of(&post(&a.url, call(1)).await);
    let first = post(&a.url, retry(2, &state)).await;
    assert_eq!(
        first["result"]["content"][0]["text"], "redemption 1",
        "{first}"
    );
    let replay = post(&b.url, retry(3, &state)).await;
    assert_eq!(replay["error"]["code"], -32602, "{replay}");
    assert_eq!(redeemed.load(Ordering::SeqCst), 1);

    // A round started on A is completed on B.
    let state = state_of(&post(&a.url, call(4)).await);
    let elsewhere = post(&b.url, retry(5, &state)).await;
    assert_eq!(
        elsewhere["result"]["content"][0]["text"], "redemption 2",
        "{elsewhere}"
    );
    a.stop().await;
    b.stop().await;
}
