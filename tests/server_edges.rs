//! Server behaviour beyond the conformance suite: a 2026-07-28 request is never asked for, nor
//! fails softly on, a capability it did not declare (`-32021`, HTTP 400), and structured tool
//! output is checked against the tool's output schema and shaped for each revision.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#structured-content>

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CreateMessageRequestParams, ElicitRequestParams, InputRequest, InputRequiredResult,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::http::{Client, read_answer, spawn};
use common::pipe::PipeClient;

type Reports = Arc<Mutex<Vec<String>>>;

fn server(reports: &Reports) -> Server {
    let sink = reports.clone();
    Server::builder("edges", "1.0.0")
        .exception_reporter(move |report| sink.lock().unwrap().push(report.message.clone()))
        .tool(tool("ask_explicitly", "Asks to confirm", |cx: RequestContext| async move {
            if cx.input_response("ok").is_some() {
                return Ok("confirmed".to_owned());
            }
            let schema = serde_json::from_value(json!({"type": "object", "properties": {}})).unwrap();
            Err(McpError::input_required(InputRequiredResult::ask(
                "ok",
                InputRequest::elicitation(&ElicitRequestParams::form("Sure?", schema)),
            )))
        }))
        .tool(tool("sample", "Samples", |cx: RequestContext| async move {
            let params: CreateMessageRequestParams = serde_json::from_value(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5
            }))?;
            cx.create_message(params).await?;
            Ok::<_, McpError>("sampled")
        }))
        .tool(tool("roots", "Lists roots", |cx: RequestContext| async move {
            let roots = cx.list_roots().await?;
            Ok::<_, McpError>(format!("{} roots", roots.roots.len()))
        }))
        .tool(
            tool("counted", "Returns a count", |Arguments(args): Arguments| async move {
                let n = args.get("n").cloned().unwrap_or(Value::Null);
                CallToolResult::from_structured(json!({ "n": n }))
            })
            .output_schema(
                json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .tool(
            tool("listed", "Returns a list", |_cx: RequestContext| async {
                CallToolResult::from_structured(json!([1, 2, 3]))
            })
            .output_schema(json!({"type": "array"}).as_object().cloned().unwrap()),
        )
        .build()
        .unwrap()
}

fn call_2026(id: i64, name: &str, arguments: Value, capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
    }})
}

/// POSTs a 2026 message: the status and the response.
async fn post_2026(url: &str, body: &Value) -> (StatusCode, Value) {
    let client = Client::new(url);
    let response = common::http::send(client.modern_builder(body)).await;
    let status = response.status();
    (status, read_answer(response, &body["id"]).await.response)
}

/// A 2026 request that did not declare what its handler asks for gets `-32021` and HTTP 400,
/// naming the capability: asked explicitly (an `input_required` result), or implicitly
/// (`create_message`, `list_roots`). Nothing is asked of it.
#[actix_web::test]
async fn an_undeclared_capability_is_minus_32021_in_2026() {
    let reports = Reports::default();
    let srv = spawn(server(&reports).http("/mcp"), 1);
    for (name, required) in [
        ("ask_explicitly", json!({"elicitation": {}})),
        ("sample", json!({"sampling": {}})),
        ("roots", json!({"roots": {}})),
    ] {
        let (status, answer) = post_2026(&srv.url, &call_2026(1, name, json!({}), json!({}))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{name}: {answer}");
        assert_eq!(answer["error"]["code"], -32021, "{name}: {answer}");
        assert_eq!(
            answer["error"]["data"]["requiredCapabilities"], required,
            "{name}: {answer}"
        );
    }
    // Declared, the explicit round is asked.
    let (status, answer) = post_2026(
        &srv.url,
        &call_2026(2, "ask_explicitly", json!({}), json!({"elicitation": {}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    srv.stop().await;
}

/// A 2025-11-25 session keeps its behaviour: the model sees what was missing as an `isError`
/// result.
#[actix_web::test]
async fn an_undeclared_capability_is_an_error_result_in_a_2025_session() {
    let reports = Reports::default();
    let server = server(&reports);
    let mut client = PipeClient::connect(&server, json!({})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "sample", "arguments": {}}}))
        .await;
    let answer = client.read().await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("sampling"),
        "{answer}"
    );
}

/// `structuredContent` that its output schema refuses is not sent: the model sees that the tool
/// failed, and the exception reporter gets the details.
#[actix_web::test]
async fn structured_output_is_checked_against_the_output_schema() {
    let reports = Reports::default();
    let server = server(&reports);
    let mut client = PipeClient::connect(&server, json!({})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "counted", "arguments": {"n": 3}}}))
        .await;
    let good = client.read().await;
    assert_eq!(
        good["result"]["structuredContent"],
        json!({"n": 3}),
        "{good}"
    );
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "counted", "arguments": {"n": "three"}}}))
        .await;
    let bad = client.read().await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(bad["result"].get("structuredContent").is_none(), "{bad}");
    let reported = reports.lock().unwrap().clone();
    assert!(
        reported
            .iter()
            .any(|r| r.contains("counted") && r.contains("output schema")),
        "{reported:?}"
    );
}

/// Before 2026-07-28 structured output is an object: a tool whose output is an array shows no
/// output schema and no `structuredContent` to a 2025-11-25 client (its text carries the
/// value); a 2026 client gets both.
#[actix_web::test]
async fn non_object_output_is_for_2026_clients_only() {
    let reports = Reports::default();
    let server = server(&reports);
    let mut client = PipeClient::connect(&server, json!({})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let listed = client.read().await;
    let tool = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "listed")
        .unwrap()
        .clone();
    assert!(tool.get("outputSchema").is_none(), "{tool}");
    common::assert_valid("Tool", &tool);
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "listed", "arguments": {}}}))
        .await;
    let answer = client.read().await;
    assert!(
        answer["result"].get("structuredContent").is_none(),
        "{answer}"
    );
    assert_eq!(
        answer["result"]["content"][0]["text"], "[1,2,3]",
        "{answer}"
    );
    common::assert_valid("CallToolResult", &answer["result"]);

    let answer: Value = serde_json::from_str(
        &server
            .handle_json(&call_2026(3, "listed", json!({}), json!({})).to_string())
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        answer["result"]["structuredContent"],
        json!([1, 2, 3]),
        "{answer}"
    );
}
