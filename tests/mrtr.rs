//! Multi round-trip requests (MRTR, 2026-07-28), in process ([`Server::handle_json`]):
//! implicit-style handlers (they call `cx.elicit`, `create_message`, `list_roots`) run once
//! across their rounds while parked, and are replayed from the sealed state when their parked
//! call is gone; sealed `requestState` (tampering, expiry, rebinding, key rotation); and
//! capabilities. The park's gauge and bounds, progress routing and the shim for 2025-11-25
//! session clients, over HTTP, are in `mrtr_http.rs`. Every message a 2026 request gets back is
//! validated against the 2026-07-28 schema ([`common::mrtr_tools`]); every wait is bounded.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use actix_mcp::prelude::*;
use serde_json::{Value, json};

use common::mrtr_tools::*;

/// Calls `tool`, which asks for a name in one round, and answers it with `name`: the round's
/// `input_required` result, its sealed state, and the text the retry completed with.
async fn one_name_round(server: &Server, tool: &str, name: &str) -> (Value, String, String) {
    let first = ask(server, &call(1, tool, json!({}))).await;
    let (result, state) = round(&first, &["elicitation-0"]);
    let answers = json!({"elicitation-0": accept("name", name)});
    let second = ask(server, &retry_call(2, tool, answers, &state)).await;
    (result, state, complete_text(&second))
}

/// An implicit-style handler with a side effect runs once across its round: the retry resumes
/// the parked call where it waited.
#[actix_web::test]
async fn an_implicit_call_runs_once_across_its_round() {
    let runs = Arc::new(Runs::default());
    let server = server(&runs);
    let (result, state, text) = one_name_round(&server, "greet", "Alice").await;
    assert_eq!(
        result["inputRequests"]["elicitation-0"]["method"],
        "elicitation/create"
    );
    assert!(
        !state.contains("elicitation"),
        "the state is sealed: {state}"
    );
    assert_eq!(text, "Hello, Alice!");
    assert_eq!(
        runs.greet.load(Ordering::SeqCst),
        1,
        "the handler ran twice"
    );
}

/// A handler that watches its cancellation while it waits for input is not cancelled by the
/// end of its round: it resumes and finishes once.
#[actix_web::test]
async fn the_end_of_a_round_does_not_cancel_the_waiting_handler() {
    let runs = Arc::new(Runs::default());
    let server = server(&runs);
    let (_, _, text) = one_name_round(&server, "watchful", "Ada").await;
    assert_eq!(text, "Hello, Ada!");
    assert_eq!(runs.watchful.load(Ordering::SeqCst), 1);
}

/// A handler still pending after its first poll, having asked nothing yet, becomes a call all
/// the same: its later ask is a round, and the retry resumes it where it waited.
#[actix_web::test]
async fn a_handler_that_waits_before_it_asks_runs_once_across_its_round() {
    let runs = Arc::new(Runs::default());
    let server = server(&runs);
    let (_, _, text) = one_name_round(&server, "dawdle", "Grace").await;
    assert_eq!(text, "Hello, Grace!");
    assert_eq!(
        runs.dawdle.load(Ordering::SeqCst),
        1,
        "the handler ran twice"
    );
}

/// `prompts/get` and `resources/read` handlers ask in implicit style too.
#[actix_web::test]
async fn prompts_and_resource_reads_ask_in_rounds_too() {
    let runs = Arc::new(Runs::default());
    let server = server(&runs);
    let get = |id, extra| request(id, "prompts/get", json!({"name": "ask_prompt"}), extra);
    let first = ask(&server, &get(1, json!({}))).await;
    let (_, state) = round(&first, &["elicitation-0"]);
    let second = ask(
        &server,
        &get(2, json!({"inputResponses": {"elicitation-0": accept("topic", "owls")}, "requestState": state})),
    )
    .await;
    assert_eq!(second["result"]["resultType"], "complete", "{second}");
    assert_eq!(
        second["result"]["messages"][0]["content"]["text"],
        "Write about owls"
    );

    let read = |id, extra| request(id, "resources/read", json!({"uri": "test://roots"}), extra);
    let first = ask(&server, &read(3, json!({}))).await;
    let (result, state) = round(&first, &["roots-0"]);
    assert_eq!(result["inputRequests"]["roots-0"]["method"], "roots/list");
    assert!(
        result.get("ttlMs").is_none(),
        "an input_required result carries no cache hints"
    );
    let roots = json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]});
    let second = ask(
        &server,
        &read(
            4,
            json!({"inputResponses": {"roots-0": roots}, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(
        second["result"]["contents"][0]["text"], "2 roots",
        "{second}"
    );
}

/// Two rounds, each with a fresh state; the handler still runs once.
#[actix_web::test]
async fn a_multi_round_call_resumes_after_each_round() {
    let runs = Arc::new(Runs::default());
    let server = server(&runs);
    let first = ask(&server, &call(1, "two_step", json!({}))).await;
    let (_, state1) = round(&first, &["elicitation-0"]);
    let second = ask(
        &server,
        &retry_call(
            2,
            "two_step",
            json!({"elicitation-0": accept("name", "Alice")}),
            &state1,
        ),
    )
    .await;
    let (_, state2) = round(&second, &["elicitation-1"]);
    assert_ne!(state1, state2);
    // A retry that answers nothing gets the same round again, still parked.
    let again = ask(&server, &retry_call(3, "two_step", json!({}), &state2)).await;
    let (_, state3) = round(&again, &["elicitation-1"]);
    let third = ask(
        &server,
        &retry_call(
            4,
            "two_step",
            json!({"elicitation-1": accept("color", "blue")}),
            &state3,
        ),
    )
    .await;
    assert_eq!(complete_text(&third), "Alice likes blue");
    assert_eq!(runs.two_step.load(Ordering::SeqCst), 1);
}

/// When the parked call is gone (here: the retries reach other nodes, servers with the same
/// key), the handler runs again and its earlier asks are answered from the sealed state.
#[actix_web::test]
async fn a_call_whose_parked_actor_is_gone_is_replayed_from_the_sealed_answers() {
    let (runs_a, runs_b) = (Arc::new(Runs::default()), Arc::new(Runs::default()));
    let (node_a, node_b) = (server(&runs_a), server(&runs_b));
    let first = ask(&node_a, &call(1, "two_step", json!({}))).await;
    let (_, state1) = round(&first, &["elicitation-0"]);
    let second = ask(
        &node_b,
        &retry_call(
            2,
            "two_step",
            json!({"elicitation-0": accept("name", "Alice")}),
            &state1,
        ),
    )
    .await;
    let (_, state2) = round(&second, &["elicitation-1"]);
    assert_eq!(runs_b.two_step.load(Ordering::SeqCst), 1, "node b replays");
    // Back on node a: its parked call is not the one the state names; the answer of round 1
    // comes from the sealed state, the answer of round 2 from the retry.
    let third = ask(
        &node_a,
        &retry_call(
            3,
            "two_step",
            json!({"elicitation-1": accept("color", "green")}),
            &state2,
        ),
    )
    .await;
    assert_eq!(complete_text(&third), "Alice likes green");
    assert_eq!(runs_a.two_step.load(Ordering::SeqCst), 2);
}

/// A tampered, expired, or rebound state is refused with -32602 before the handler runs.
#[actix_web::test]
async fn tampered_expired_and_rebound_states_are_refused() {
    let runs = Arc::new(Runs::default());
    let server = server(&runs);
    let first = ask(&server, &call(1, "confirm", json!({"arguments": {"n": 1}}))).await;
    let (_, state) = round(&first, &["user_name"]);
    let answers = json!({"user_name": accept("name", "Bob")});

    let ok = ask(
        &server,
        &call(
            2,
            "confirm",
            json!({"arguments": {"n": 1}, "inputResponses": answers, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(complete_text(&ok), "Hello, Bob! (1)");

    let tampered = ask(
        &server,
        &call(3, "confirm", json!({"arguments": {"n": 1}, "inputResponses": answers, "requestState": format!("{state}-TAMPERED")})),
    )
    .await;
    assert_eq!(error_of(&tampered).0, -32602);

    let other_arguments = ask(
        &server,
        &call(
            4,
            "confirm",
            json!({"arguments": {"n": 2}, "inputResponses": answers, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(
        error_of(&other_arguments),
        (
            -32602,
            "requestState was issued for another arguments".to_owned()
        )
    );
    let other_tool = ask(&server, &retry_call(5, "greet", answers.clone(), &state)).await;
    assert_eq!(
        error_of(&other_tool),
        (
            -32602,
            "requestState was issued for another tool".to_owned()
        )
    );
    assert_eq!(
        runs.greet.load(Ordering::SeqCst),
        0,
        "a refused state runs nothing"
    );

    let short_lived = builder(&runs)
        .request_state_ttl(Duration::ZERO)
        .build()
        .unwrap();
    let first = ask(&short_lived, &call(6, "confirm", json!({}))).await;
    let (_, state) = round(&first, &["user_name"]);
    tokio::time::sleep(Duration::from_millis(5)).await;
    let expired = ask(
        &short_lived,
        &retry_call(7, "confirm", answers.clone(), &state),
    )
    .await;
    assert_eq!(error_of(&expired).0, -32602);
    assert!(error_of(&expired).1.contains("expired"));

    let malformed = ask(
        &server,
        &call(8, "confirm", json!({"inputResponses": null})),
    )
    .await;
    assert_eq!(error_of(&malformed).0, -32602);
    let not_a_result = ask(
        &server,
        &call(
            9,
            "confirm",
            json!({"inputResponses": {"user_name": 12345}}),
        ),
    )
    .await;
    assert_eq!(error_of(&not_a_result).0, -32602);
}

/// Rotation: a state sealed under an older key is still accepted where that key is; a server
/// that does not know the key refuses it.
#[actix_web::test]
async fn rotated_keys_are_accepted_and_unknown_keys_refused() {
    let runs = Arc::new(Runs::default());
    let old = server(&runs);
    let first = ask(&old, &call(1, "confirm", json!({}))).await;
    let (_, state) = round(&first, &["user_name"]);
    let retry = retry_call(
        2,
        "confirm",
        json!({"user_name": accept("name", "Eve")}),
        &state,
    );

    let rotated = builder(&runs)
        .request_state_key("k2", [9; 32])
        .build()
        .unwrap();
    assert_eq!(
        complete_text(&ask(&rotated, &retry).await),
        "Hello, Eve! (null)"
    );

    let stranger = Server::builder("other", "1.0.0")
        .request_state_key("k2", [9; 32])
        .tool(
            ToolDef::new("confirm", |_cx: RequestContext| async { "never" })
                .description("Same name, other keys"),
        )
        .build()
        .unwrap();
    let refused = ask(&stranger, &retry).await;
    assert_eq!(error_of(&refused).0, -32602);
    assert!(error_of(&refused).1.contains("key"), "{refused}");

    let accepting = Server::builder("other", "1.0.0")
        .request_state_key("k2", [9; 32])
        .accept_request_state_key("k1", KEY)
        .tool(
            ToolDef::new("confirm", |cx: RequestContext| async move {
                cx.request_state().unwrap_or_default().to_owned()
            })
            .description("Accepts k1"),
        )
        .build()
        .unwrap();
    assert_eq!(complete_text(&ask(&accepting, &retry).await), "mine");
}

/// A key given as hex (as a cluster's nodes share it) seals as the same bytes do; malformed
/// hex fails the build.
#[actix_web::test]
async fn a_hex_key_is_the_same_key() {
    let runs = Arc::new(Runs::default());
    let old = server(&runs);
    let first = ask(&old, &call(1, "confirm", json!({}))).await;
    let (_, state) = round(&first, &["user_name"]);
    let retry = retry_call(
        2,
        "confirm",
        json!({"user_name": accept("name", "Eve")}),
        &state,
    );
    let hex: String = KEY.iter().map(|b| format!("{b:02x}")).collect();
    let same = builder(&runs)
        .request_state_key_hex("k1", &hex)
        .build()
        .unwrap();
    assert_eq!(
        complete_text(&ask(&same, &retry).await),
        "Hello, Eve! (null)"
    );
    for bad in ["", "zz", &hex[..62], &format!("{hex}00"), &"é".repeat(32)] {
        let refused = Server::builder("bad", "1.0.0")
            .request_state_key_hex("k", bad)
            .build();
        assert_eq!(
            refused.err(),
            Some(actix_mcp::BuildError::InvalidStateKey),
            "{bad:?}"
        );
    }
}

/// An ask for an input kind the request's capabilities lack is refused in the handler
/// (`PeerError::MissingCapability`, which the handler's `?` turns into `-32021`): nothing is
/// asked.
#[actix_web::test]
async fn an_undeclared_input_kind_is_never_asked() {
    let runs = Arc::new(Runs::default());
    let server = server(&runs);
    let mut message = call(1, "sample", json!({}));
    message["params"]["_meta"] = meta(json!({"elicitation": {}}));
    let answer = ask(&server, &message).await;
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );

    let declared = ask(&server, &call(2, "sample", json!({}))).await;
    let (result, _) = round(&declared, &["sampling-0"]);
    assert_eq!(
        result["inputRequests"]["sampling-0"]["method"],
        "sampling/createMessage"
    );
}
