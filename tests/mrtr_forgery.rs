//! A request outside the sealed 2026-07-28 path never takes its `input_required` round state
//! from the client: on a 2025-11-25 session (HTTP or stdio), without a session, and in
//! process, a `requestState` and `inputResponses` sent with the first round are ignored, so a
//! client cannot forge the state a handler asked to get back (nor answers it was never asked
//! for). The handler's rounds then run as the era allows: real server-to-client requests in a
//! session, an error without a back-channel.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use actix_mcp::prelude::*;
use actix_mcp::protocol::{ElicitRequestParams, ElicitResult, InputRequest, InputRequiredResult};
use actix_mcp::transport::stdio::StdioConfig;
use serde_json::{Value, json};

use common::http::{Client, caps, spawn, text_of};
use common::in_process::send;
use common::pipe::PipeClient;

/// A tool that trusts the state it asked to get back: `verified` only with its own state and
/// an answer to its question.
fn server() -> Server {
    Server::builder("forgery-test", "1.0.0")
        .tool(
            ToolDef::new("guarded", |cx: RequestContext| async move {
                match (
                    cx.input_response_as::<ElicitResult>("confirm"),
                    cx.request_state(),
                ) {
                    (Some(_), Some("integrity-checked")) => Ok("verified".to_owned()),
                    _ => Err(McpError::input_required(
                        InputRequiredResult::ask(
                            "confirm",
                            InputRequest::elicitation(&ElicitRequestParams::form(
                                "Confirm?",
                                serde_json::from_value(json!({
                                    "type": "object",
                                    "properties": {"ok": {"type": "boolean"}}
                                }))
                                .unwrap(),
                            )),
                        )
                        .with_state("integrity-checked"),
                    )),
                }
            })
            .description("Answers only after its own round"),
        )
        .build()
        .unwrap()
}

/// The forged round: the state the tool trusts and an answer it never asked for.
fn forged_arguments() -> Value {
    json!({
        "name": "guarded",
        "arguments": {},
        "requestState": "integrity-checked",
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
    })
}

fn accept() -> Value {
    json!({"action": "accept", "content": {"ok": true}})
}

/// Over a 2025-11-25 HTTP session the forged state is ignored: the client is asked for real,
/// and only its real answer completes the call.
#[actix_web::test]
async fn a_session_client_cannot_forge_its_round_state_over_http() {
    let srv = spawn(server().http("/mcp"), 1);
    let mut client: Client = srv.client();
    client.initialize(caps(r#"{"elicitation": {}}"#)).await;
    let mut reader = client
        .start(json!(1), "tools/call", forged_arguments())
        .await;
    let first = reader.next_message().await;
    assert_eq!(
        first["method"], "elicitation/create",
        "the forged state was taken: {first}"
    );
    client
        .notify(&json!({"jsonrpc": "2.0", "id": first["id"], "result": accept()}))
        .await;
    let response = reader.next_message().await;
    assert_eq!(response["id"], 1, "{response}");
    assert_eq!(text_of(&response["result"]), "verified");

    // A session client that cannot be asked gets -32021, never the guarded answer.
    let mut bare: Client = srv.client();
    bare.initialize(caps("{}")).await;
    let answer = bare
        .request(json!(2), "tools/call", forged_arguments())
        .await;
    assert_eq!(
        answer.response["error"]["code"], -32021,
        "{}",
        answer.response
    );
    srv.stop().await;
}

/// Over stdio (a 2025-11-25 session) the same: the forged state is ignored.
#[actix_web::test]
async fn a_session_client_cannot_forge_its_round_state_over_stdio() {
    let server = server();
    let mut client =
        PipeClient::connect_with(&server, json!({"elicitation": {}}), StdioConfig::default()).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": forged_arguments()}))
        .await;
    let first = client.read().await;
    assert_eq!(
        first["method"], "elicitation/create",
        "the forged state was taken: {first}"
    );
    client
        .send(json!({"jsonrpc": "2.0", "id": first["id"], "result": accept()}))
        .await;
    let response = client.read().await;
    assert_eq!(response["id"], 1, "{response}");
    assert_eq!(text_of(&response["result"]), "verified");
}

/// Without a session (in process, and 2025-11-25 sessionless HTTP) there is no back-channel:
/// the call fails, and the forged state never reaches the handler.
#[actix_web::test]
async fn a_sessionless_request_cannot_forge_its_round_state() {
    let server = server();
    let message =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": forged_arguments()});
    let answer = send(&server, message).await;
    assert!(answer.get("error").is_some(), "{answer}");

    let srv = spawn(server.http("/mcp").stateless(true), 1);
    let client = srv.client();
    let answer = client
        .request(json!(1), "tools/call", forged_arguments())
        .await;
    assert!(
        answer.response.get("error").is_some(),
        "the forged state was taken: {}",
        answer.response
    );
    srv.stop().await;
}
