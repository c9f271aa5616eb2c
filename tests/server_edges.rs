//! Server behaviour beyond the conformance suite: a 2026-07-28 request is never asked for, nor
//! fails softly on, a capability it did not declare (`-32021`, HTTP 400), and structured tool
//! output is checked against the tool's output schema and shaped for each revision.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#structured-content>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use actix_mcp::ToolDef;
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CreateMessageRequestParams, ElicitRequestParams, InputRequest, InputRequiredResult,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::http::{Client, read_answer, spawn};
use common::mrtr_tools::ask;
use common::pipe::PipeClient;

type Reports = Arc<Mutex<Vec<String>>>;

fn server(reports: &Reports) -> Server {
    let sink = reports.clone();
    Server::builder("edges", "1.0.0")
        .exception_reporter(move |report| sink.lock().unwrap().push(report.message.clone()))
        .tool(ToolDef::new("ask_explicitly", |cx: RequestContext| async move {
            if cx.input_response("ok").is_some() {
                return Ok("confirmed".to_owned());
            }
            let schema = serde_json::from_value(json!({"type": "object", "properties": {}})).unwrap();
            Err(McpError::input_required(InputRequiredResult::ask(
                "ok",
                InputRequest::elicitation(&ElicitRequestParams::form("Sure?", schema)),
            )))
        }).description("Asks to confirm"))
        .tool(ToolDef::new("sample", |cx: RequestContext| async move {
            let params: CreateMessageRequestParams = serde_json::from_value(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5
            }))?;
            cx.create_message(params).await?;
            Ok::<_, McpError>("sampled")
        }).description("Samples"))
        .tool(ToolDef::new("roots", |cx: RequestContext| async move {
            let roots = cx.list_roots().await?;
            Ok::<_, McpError>(format!("{} roots", roots.roots.len()))
        }).description("Lists roots"))
        .tool(ToolDef::new("sign_in", |cx: RequestContext| async move {
            if cx.input_response("url-0").is_some() {
                return Ok("signed in".to_owned());
            }
            cx.notify_elicitation_complete("login-1");
            let actix_mcp::protocol::ElicitRequestParams::Url(login) =
                ElicitRequestParams::url("Sign in", "https://example.com/login", "login-1")
            else {
                unreachable!("a URL elicitation")
            };
            Err(McpError::url_elicitation_required(vec![login]))
        }).description("Needs a sign-in first"))
        .tool(
            ToolDef::new("counted", |Arguments(args): Arguments| async move {
                let n = args.get("n").cloned().unwrap_or(Value::Null);
                CallToolResult::from_structured(json!({ "n": n }))
            }).description("Returns a count")
            .output_schema(
                json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .tool(
            ToolDef::new("listed", |_cx: RequestContext| async {
                CallToolResult::from_structured(json!([1, 2, 3]))
            }).description("Returns a list")
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
    let response = common::http::send(client.v2026_builder(body)).await;
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

    let answer = ask(&server, &call_2026(3, "listed", json!({}), json!({}))).await;
    assert_eq!(
        answer["result"]["structuredContent"],
        json!([1, 2, 3]),
        "{answer}"
    );
}

/// A malformed answer to an input request is `-32602`, not another round: in a 2026 retry
/// (checked against the round's sealed requests) and in a 2025-11-25 session's shim.
#[actix_web::test]
async fn a_malformed_input_response_is_invalid_params() {
    let reports = Reports::default();
    let server = server(&reports);
    let first = call_2026(1, "ask_explicitly", json!({}), json!({"elicitation": {}}));
    let answer = ask(&server, &first).await;
    let state = answer["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut retry = call_2026(2, "ask_explicitly", json!({}), json!({"elicitation": {}}));
    retry["params"]["requestState"] = json!(state);
    retry["params"]["inputResponses"] = json!({"ok": {"action": "bogus"}});
    let answer = ask(&server, &retry).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("inputResponses"),
        "{answer}"
    );

    let mut client = PipeClient::connect(&server, json!({"elicitation": {}})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "ask_explicitly", "arguments": {}}}))
        .await;
    let asked = client.read().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    client
        .send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "bogus"}}))
        .await;
    let answer = client.read().await;
    assert_eq!(answer["id"], 3, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}

/// 2026-07-28 has no `-32042` and no `notifications/elicitation/complete`: a handler that
/// needs URL-mode elicitations first answers `input_required` with them (no id), and its
/// completion notification is not sent; a 2025-11-25 session still gets `-32042`.
#[actix_web::test]
async fn url_elicitations_required_are_an_input_round_in_2026() {
    let reports = Reports::default();
    let srv = spawn(server(&reports).http("/mcp"), 1);
    let caps = json!({"elicitation": {"url": {}}});
    let client = Client::new(&srv.url);
    let body = call_2026(1, "sign_in", json!({}), caps.clone());
    let response = common::http::send(client.v2026_builder(&body)).await;
    let answer = read_answer(response, &json!(1)).await;
    assert!(answer.before.is_empty(), "sent {:?}", answer.before);
    let result = &answer.response["result"];
    assert_eq!(
        result["resultType"], "input_required",
        "{}",
        answer.response
    );
    let request = &result["inputRequests"]["url-0"];
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert_eq!(request["params"]["mode"], "url", "{request}");
    assert!(
        request["params"].get("elicitationId").is_none(),
        "{request}"
    );
    let (status, undeclared) =
        post_2026(&srv.url, &call_2026(2, "sign_in", json!({}), json!({}))).await;
    assert_eq!(
        (status, undeclared["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32021))
    );

    let mut session = srv.client();
    session.initialize(caps).await;
    let answer = session.call(json!(3), "sign_in", json!({})).await;
    assert_eq!(
        answer.response["error"]["code"], -32042,
        "{}",
        answer.response
    );
    srv.stop().await;
}

/// A present but malformed 2026 `_meta` (client info, capability shapes) is a 400 as a missing
/// one; `-32022` and `server/discover` list every version served, newest first.
#[actix_web::test]
async fn a_malformed_envelope_is_400_and_versions_are_listed_whole() {
    let reports = Reports::default();
    let srv = spawn(server(&reports).http("/mcp"), 1);
    let client = Client::new(&srv.url);
    for meta in [
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": 5}),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {"sampling": 5}}),
        json!("oops"),
    ] {
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}});
        let response = common::http::send(client.v2026_builder(&body)).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{meta}");
        let answer = read_answer(response, &json!(1)).await;
        assert_eq!(
            answer.response["error"]["code"], -32602,
            "{}",
            answer.response
        );
    }
    let all = json!([
        "2026-07-28",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05"
    ]);
    let mut body = call_2026(2, "counted", json!({"n": 1}), json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let mut request = client.v2026_builder(&body).build().unwrap();
    request
        .headers_mut()
        .insert("MCP-Protocol-Version", "2099-01-01".parse().unwrap());
    let response = common::http::send_request(client.http(), request).await;
    let answer = read_answer(response, &json!(2)).await;
    assert_eq!(
        answer.response["error"]["code"], -32022,
        "{}",
        answer.response
    );
    assert_eq!(answer.response["error"]["data"]["supported"], all);
    let discover = json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let (_, answer) = post_2026(&srv.url, &discover).await;
    assert_eq!(answer["result"]["supportedVersions"], all, "{answer}");
    srv.stop().await;
}

/// A blocking tool is one supervised invocation (one actor, not two), and a panic in its
/// closure is reported as a panic of the tool.
#[actix_web::test]
async fn a_blocking_tool_is_one_invocation() {
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let gate = Arc::new(Mutex::new(gate));
    let panics = Arc::new(Mutex::new(Vec::new()));
    let sink = panics.clone();
    let server = Server::builder("blocking", "1.0.0")
        .exception_reporter(move |report| {
            sink.lock()
                .unwrap()
                .push((report.panicked, report.message.clone()));
        })
        .tool(
            ToolDef::blocking("wait", move |_: EmptyArgs, _cx| {
                let _ = gate.lock().unwrap().recv();
                "released"
            })
            .description("Waits for the test"),
        )
        .tool(
            ToolDef::blocking("explode", |_: EmptyArgs, _cx| -> String {
                panic!("boom in a blocking tool")
            })
            .description("Panics"),
        )
        .build()
        .unwrap();
    let srv = spawn(server.http("/mcp"), 1);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let mut reader = client
        .start(
            json!(1),
            "tools/call",
            json!({"name": "wait", "arguments": {}}),
        )
        .await;
    common::http::eventually("the blocking tool runs", || {
        srv.mcp.stats().runtime.tool_calls >= 1
    })
    .await;
    assert_eq!(
        srv.mcp.stats().runtime.tool_calls,
        1,
        "one invocation actor"
    );
    release.send(()).unwrap();
    let answer = reader.next_message().await;
    assert_eq!(
        answer["result"]["content"][0]["text"], "released",
        "{answer}"
    );

    let exploded = client.call(json!(2), "explode", json!({})).await;
    assert_eq!(
        exploded.response["result"]["isError"], true,
        "{}",
        exploded.response
    );
    let reported = panics.lock().unwrap().clone();
    assert!(
        reported
            .iter()
            .any(|(panicked, message)| *panicked && message.contains("boom")),
        "{reported:?}"
    );
    srv.stop().await;
}

/// No arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EmptyArgs {}
