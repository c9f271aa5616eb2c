//! Multi round-trip requests (MRTR, 2026-07-28) over a real Streamable HTTP server on
//! `127.0.0.1:0`: a resumed handler reports on its retry's stream; the park's gauge and its
//! bounds in count and time; the shim that drives explicit-style rounds for a 2025-11-25
//! session client; and one tool code for both eras through the SDK's own client. The rounds
//! themselves, in process, are in `mrtr.rs`. Every wait is bounded.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>
#![cfg(all(feature = "http", feature = "client-http"))]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use actix_mcp::protocol::ElicitResult;
use serde_json::json;

use common::http::{Client, caps, spawn, text_of};
use common::mrtr_tools::*;
use common::{eventually, within};

/// A resumed handler's progress goes to the retry's response stream; the gauge counts the
/// parked call while it waits.
#[actix_web::test]
async fn a_resumed_handler_reports_on_the_retry_stream() {
    let runs = Arc::new(Runs::default());
    let srv = spawn(server(&runs).http("/mcp"), 1);
    let (_, first) = post(&srv.url, &call(1, "greet", json!({}))).await;
    let (_, state) = round(&first, &["elicitation-0"]);
    assert_eq!(srv.mcp.stats().runtime.parked_calls, 1);
    let mut retry = retry_call(
        2,
        "greet",
        json!({"elicitation-0": accept("name", "Alice")}),
        &state,
    );
    retry["params"]["_meta"]["progressToken"] = json!("p-2");
    retry["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let (notes, second) = post(&srv.url, &retry).await;
    assert_eq!(complete_text(&second), "Hello, Alice!");
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(notes[0]["method"], "notifications/progress");
    assert_eq!(notes[0]["params"]["progressToken"], "p-2");
    assert_eq!(notes[1]["method"], "notifications/message");
    assert_eq!(notes[1]["params"]["data"], "greeted");
    assert_eq!(srv.mcp.stats().runtime.parked_calls, 0);
    assert_eq!(runs.greet.load(Ordering::SeqCst), 1);
    srv.stop().await;
}

/// The park holds at most `max_parked_calls`: a call that finds it full is dropped, and its
/// retry replays it; parked calls expire after `parked_call_ttl` and leave the gauge.
#[actix_web::test]
async fn the_park_is_bounded_in_count_and_time() {
    let runs = Arc::new(Runs::default());
    let server = builder(&runs)
        .max_parked_calls(1)
        .parked_call_ttl(Duration::from_millis(1500))
        .build()
        .unwrap();
    let srv = spawn(server.http("/mcp"), 1);
    let (_, first) = post(&srv.url, &call(1, "greet", json!({}))).await;
    let (_, parked_state) = round(&first, &["elicitation-0"]);
    let (_, second) = post(&srv.url, &call(2, "greet", json!({}))).await;
    let (_, unparked_state) = round(&second, &["elicitation-0"]);
    assert_eq!(srv.mcp.stats().runtime.parked_calls, 1);
    assert_eq!(runs.greet.load(Ordering::SeqCst), 2);

    let answers = json!({"elicitation-0": accept("name", "Zed")});
    let (_, done) = post(
        &srv.url,
        &retry_call(3, "greet", answers.clone(), &unparked_state),
    )
    .await;
    assert_eq!(complete_text(&done), "Hello, Zed!");
    assert_eq!(
        runs.greet.load(Ordering::SeqCst),
        3,
        "the unparked call is replayed"
    );

    let mcp = srv.mcp.clone();
    eventually("the parked call expires", || {
        mcp.stats().runtime.parked_calls == 0
    })
    .await;
    let (_, late) = post(
        &srv.url,
        &retry_call(4, "greet", answers.clone(), &parked_state),
    )
    .await;
    assert_eq!(complete_text(&late), "Hello, Zed!");
    assert_eq!(
        runs.greet.load(Ordering::SeqCst),
        4,
        "the expired call is replayed"
    );
    srv.stop().await;
}

/// A 2025-11-25 session client gets an explicit-style round as a real `elicitation/create` on
/// the call's stream; the handler is called again with the answer (and its state).
#[actix_web::test]
async fn the_shim_asks_a_session_client_with_real_requests() {
    let runs = Arc::new(Runs::default());
    let srv = spawn(
        builder(&runs)
            .max_input_rounds(2)
            .build()
            .unwrap()
            .http("/mcp"),
        1,
    );
    let mut client: Client = srv.client();
    client.initialize(caps(r#"{"elicitation": {}}"#)).await;

    let mut reader = client
        .start(
            json!(1),
            "tools/call",
            json!({"name": "confirm", "arguments": {"n": 3}}),
        )
        .await;
    let request = reader.next_message().await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    common::assert_valid("ElicitRequest", &request);
    client
        .notify(&json!({"jsonrpc": "2.0", "id": request["id"], "result": accept("name", "Ann")}))
        .await;
    let response = reader.next_message().await;
    assert_eq!(response["id"], 1, "{response}");
    assert_eq!(text_of(&response["result"]), "Hello, Ann! (3)");
    assert!(response["result"].get("resultType").is_none());

    // A handler that never has enough fails after the round limit.
    let mut reader = client
        .start(
            json!(2),
            "tools/call",
            json!({"name": "insatiable", "arguments": {}}),
        )
        .await;
    for _ in 0..2 {
        let request = reader.next_message().await;
        assert_eq!(request["method"], "elicitation/create", "{request}");
        client
            .notify(&json!({"jsonrpc": "2.0", "id": request["id"], "result": accept("name", "x")}))
            .await;
    }
    let response = reader.next_message().await;
    assert_eq!(response["id"], 2, "{response}");
    assert!(response.get("error").is_some(), "{response}");

    // A session client without `elicitation` is asked nothing: -32021.
    let mut bare: Client = srv.client();
    bare.initialize(caps("{}")).await;
    let mut reader = bare
        .start(
            json!(3),
            "tools/call",
            json!({"name": "confirm", "arguments": {}}),
        )
        .await;
    let response = reader.next_message().await;
    assert_eq!(response["id"], 3, "nothing but the answer: {response}");
    assert_eq!(response["error"]["code"], -32021, "{response}");
    assert_eq!(
        response["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
    srv.stop().await;
}

/// One tool code for both eras, through the SDK's own client: the same implicit-style tool
/// sends a real `elicitation/create` to a 2025-11-25 session client and runs an
/// `input_required` round with a 2026-07-28 client (which answers and retries by itself);
/// an explicit-style tool reaches the session client through the shim. Each call runs its
/// handler once.
#[actix_web::test]
async fn one_tool_code_serves_both_eras() {
    use actix_mcp::client::transport::HttpTransport;
    use actix_mcp::client::{Client as McpClient, Lifecycle};

    let runs = Arc::new(Runs::default());
    let srv = spawn(server(&runs).http("/mcp"), 1);
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        let client = within(
            McpClient::builder("both-eras", "1.0.0")
                .lifecycle(lifecycle)
                .elicitation(|_params, _| async {
                    let mut result = ElicitResult::new(actix_mcp::protocol::ElicitAction::Accept);
                    result.content = json!({"name": "Kim"}).as_object().cloned();
                    Ok(result)
                })
                .connect(HttpTransport::new(&srv.url)),
        )
        .await
        .unwrap();
        let greeted = within(client.call_tool("greet", json!({}))).await.unwrap();
        assert_eq!(greeted.text_content(), "Hello, Kim!", "{lifecycle:?}");
        let confirmed = within(client.call_tool("confirm", json!({"n": 5})))
            .await
            .unwrap();
        assert_eq!(confirmed.text_content(), "Hello, Kim! (5)", "{lifecycle:?}");
        client.close().await;
    }
    assert_eq!(
        runs.greet.load(Ordering::SeqCst),
        2,
        "once per call, in each era"
    );
    srv.stop().await;
}
