//! The multi round-trip (MRTR, 2026-07-28) tests' server and wire: tools, a prompt and a
//! resource in implicit style (they call `cx.elicit`, `create_message`, `list_roots`) and in
//! explicit style, counting their runs ([`Runs`]); the 2026 requests and retries they get, sent
//! in process ([`ask`]) or over HTTP ([`post`]), each answer validated against the 2026-07-28
//! schema; and readers of the rounds and results that come back.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actix_mcp::ServerBuilder;
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitResult, ElicitationSchema, InputRequest,
    InputRequiredResult, ProtocolVersion, SamplingMessageContentBlock,
};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};

use super::golden::Schema;
use super::http::{http_client, send, text_of};
use super::sse::SseReader;
use super::within;

/// The server's request-state key (`k1`).
pub const KEY: [u8; 32] = [7; 32];

/// How often each tool's body started.
#[derive(Debug, Default)]
pub struct Runs {
    pub greet: AtomicUsize,
    pub two_step: AtomicUsize,
    pub watchful: AtomicUsize,
    pub dawdle: AtomicUsize,
}

pub fn form(property: &str) -> ElicitRequestParams {
    let schema: ElicitationSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": { property: { "type": "string" } },
        "required": [property]
    }))
    .unwrap();
    ElicitRequestParams::form(format!("Your {property}?"), schema)
}

pub fn field(result: &ElicitResult, name: &str) -> String {
    result
        .content
        .as_ref()
        .and_then(|c| c.get(name))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

pub fn no_args() -> serde_json::Map<String, Value> {
    json!({"type": "object", "properties": {}})
        .as_object()
        .cloned()
        .unwrap()
}

/// The tools every test serves, with the server's key (`KEY` as `k1`) and `extra` settings.
pub fn builder(runs: &Arc<Runs>) -> ServerBuilder {
    let greet_runs = runs.clone();
    let two_step_runs = runs.clone();
    let watchful_runs = runs.clone();
    Server::builder("mrtr-test", "1.0.0")
        .request_state_key("k1", KEY)
        // Implicit style, watching its cancellation while it waits: the end of a round is
        // not a cancellation.
        .tool(
            ToolDef::new("watchful", move |cx: RequestContext| {
                let runs = watchful_runs.clone();
                async move {
                    runs.watchful.fetch_add(1, Ordering::SeqCst);
                    tokio::select! {
                        () = cx.cancelled() => Ok("cancelled".to_owned()),
                        name = cx.elicit(form("name")) => {
                            Ok::<_, McpError>(format!("Hello, {}!", field(&name?, "name")))
                        }
                    }
                }
            })
            .description("Waits for a name unless cancelled")
            .input_schema(no_args()),
        )
        // Implicit style, pending before it asks anything (its call begins after its first
        // poll, not with it).
        .tool({
            let runs = runs.clone();
            ToolDef::new("dawdle", move |cx: RequestContext| {
                let runs = runs.clone();
                async move {
                    runs.dawdle.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    let name = cx.elicit(form("name")).await?;
                    Ok::<_, McpError>(format!("Hello, {}!", field(&name, "name")))
                }
            })
            .description("Waits a moment, then asks for a name")
            .input_schema(no_args())
        })
        // Implicit style in a prompt and a resource read.
        .prompt(
            PromptDef::new("ask_prompt", |cx: RequestContext| async move {
                let topic = cx.elicit(form("topic")).await?;
                Ok::<_, McpError>(PromptMessage::user_text(format!(
                    "Write about {}",
                    field(&topic, "topic")
                )))
            })
            .description("Asks for a topic"),
        )
        .resource(
            ResourceDef::new("test://roots", "roots", |cx: RequestContext| async move {
                let roots = cx.list_roots().await?;
                Ok::<_, McpError>(format!("{} roots", roots.roots.len()))
            })
            .mime_type("text/plain"),
        )
        // Implicit style, one ask; counts its runs (the side effect that must happen once).
        .tool(
            ToolDef::new("greet", move |cx: RequestContext| {
                let runs = greet_runs.clone();
                async move {
                    runs.greet.fetch_add(1, Ordering::SeqCst);
                    let name = cx.elicit(form("name")).await?;
                    cx.progress(Progress::new(1.0).total(1.0).message("greeted"));
                    cx.log(LogMessage::new(LoggingLevel::Info, "greeted"));
                    Ok::<_, McpError>(format!("Hello, {}!", field(&name, "name")))
                }
            })
            .description("Greets")
            .input_schema(no_args()),
        )
        // Implicit style, two asks one after the other: two rounds.
        .tool(
            ToolDef::new("two_step", move |cx: RequestContext| {
                let runs = two_step_runs.clone();
                async move {
                    runs.two_step.fetch_add(1, Ordering::SeqCst);
                    let name = cx.elicit(form("name")).await?;
                    let color = cx.elicit(form("color")).await?;
                    Ok::<_, McpError>(format!(
                        "{} likes {}",
                        field(&name, "name"),
                        field(&color, "color")
                    ))
                }
            })
            .description("Asks twice")
            .input_schema(no_args()),
        )
        // Implicit style, sampling.
        .tool(
            ToolDef::new("sample", |cx: RequestContext| async move {
                let params: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                    "maxTokens": 10
                }))?;
                let result = cx.create_message(params).await?;
                let text = result
                    .content
                    .as_slice()
                    .iter()
                    .find_map(|block| match block {
                        SamplingMessageContentBlock::Text(text) => Some(text.text.clone()),
                        _ => None,
                    })
                    .unwrap_or_default();
                Ok::<_, McpError>(format!("sampled: {text}"))
            })
            .description("Samples")
            .input_schema(no_args()),
        )
        // Explicit style with its own state.
        .tool(
            ToolDef::new(
                "confirm",
                |Arguments(args): Arguments, cx: RequestContext| async move {
                    match (
                        cx.input_response_as::<ElicitResult>("user_name"),
                        cx.request_state(),
                    ) {
                        (Some(answer), Some("mine")) => Ok(format!(
                            "Hello, {}! ({})",
                            field(&answer, "name"),
                            args.get("n").cloned().unwrap_or(Value::Null)
                        )),
                        _ => Err(McpError::input_required(
                            InputRequiredResult::ask(
                                "user_name",
                                InputRequest::elicitation(&form("name")),
                            )
                            .with_state("mine"),
                        )),
                    }
                },
            )
            .description("Asks for a confirmation"),
        )
        // Explicit style that never has enough.
        .tool(
            ToolDef::new("insatiable", |cx: RequestContext| async move {
                let round = cx
                    .request_state()
                    .map_or(0, |s| s.parse::<u32>().unwrap_or(0));
                Err::<String, _>(McpError::input_required(
                    InputRequiredResult::ask("more", InputRequest::elicitation(&form("name")))
                        .with_state((round + 1).to_string()),
                ))
            })
            .description("Always asks again")
            .input_schema(no_args()),
        )
}

pub fn server(runs: &Arc<Runs>) -> Server {
    builder(runs).build().unwrap()
}

pub use super::v2026::meta;

pub fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// A 2026 request: `params` with the `_meta` of a client with every capability, and `extra`
/// params (`inputResponses`, `requestState`).
pub fn request(id: i64, method: &str, mut params: Value, extra: Value) -> Value {
    params["_meta"] = meta(all_caps());
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A 2026 `tools/call` of `name` with `extra` params (`inputResponses`, `requestState`).
pub fn call(id: i64, name: &str, extra: Value) -> Value {
    let params = json!({"name": name, "arguments": {}});
    request(id, "tools/call", params, extra)
}

pub fn accept(property: &str, value: &str) -> Value {
    json!({"action": "accept", "content": {property: value}})
}

/// Validates a message the server sent to a 2026 client against the 2026-07-28 schema.
pub fn validate(message: &Value) {
    let mut schema = Schema::load(ProtocolVersion::V2026_07_28);
    let pointer = schema.def("JSONRPCMessage");
    if let Err(problems) = schema.check(&pointer, message) {
        panic!("{problems}\n{message:#}");
    }
    if message["result"]["resultType"] == "input_required" {
        let pointer = schema.def("InputRequiredResult");
        if let Err(problems) = schema.check(&pointer, &message["result"]) {
            panic!("{problems}\n{message:#}");
        }
    }
}

/// Sends one message in process and returns the validated response.
pub async fn ask(server: &Server, message: &Value) -> Value {
    let answer = within(server.handle_json(&message.to_string()))
        .await
        .expect("a request gets an answer");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    validate(&answer);
    answer
}

/// The retry of a 2026 `tools/call` of `name` that answers the round of `state` with
/// `answers` (its `inputResponses`).
pub fn retry_call(id: i64, name: &str, answers: Value, state: &str) -> Value {
    call(
        id,
        name,
        json!({"inputResponses": answers, "requestState": state}),
    )
}

/// The `input_required` result of `answer`, checked: its keys, and a sealed state.
pub fn round(answer: &Value, keys: &[&str]) -> (Value, String) {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let found: Vec<&str> = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(found, keys, "{answer}");
    let state = result["requestState"].as_str().unwrap().to_owned();
    (result.clone(), state)
}

pub fn complete_text(answer: &Value) -> String {
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    text_of(&answer["result"]).to_owned()
}

pub fn error_of(answer: &Value) -> (i64, String) {
    (
        answer["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {answer}")),
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// POSTs one 2026 request over HTTP; returns the notifications before the response and the
/// response, each validated against the 2026 schema.
pub async fn post(url: &str, message: &Value) -> (Vec<Value>, Value) {
    let response = send(
        http_client()
            .post(url)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", message["method"].as_str().unwrap())
            .header("Mcp-Name", message["params"]["name"].as_str().unwrap())
            .body(message.to_string()),
    )
    .await;
    let sse = super::http::content_type(response.headers()).starts_with("text/event-stream");
    if !sse {
        let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        validate(&body);
        return (Vec::new(), body);
    }
    let mut reader = SseReader::new(response);
    let mut before = Vec::new();
    loop {
        let frame = reader.next_event().await;
        if !frame.is_message() {
            continue;
        }
        let message: Value = serde_json::from_str(frame.data.as_deref().unwrap()).unwrap();
        validate(&message);
        if message.get("method").is_some() {
            assert!(
                message.get("id").is_none(),
                "a server-to-client request: {message}"
            );
            before.push(message);
        } else {
            return (before, message);
        }
    }
}
