//! Multi round-trip requests (MRTR, 2026-07-28): implicit-style handlers (they call
//! `cx.elicit`, `create_message`, `list_roots`) run once across their rounds while parked, and
//! are replayed from the sealed state when their parked call is gone; sealed `requestState`
//! (tampering, expiry, rebinding, key rotation); capabilities; the park's bounds; and the shim
//! that drives explicit-style rounds for a 2025-11-25 session client.
//!
//! In-process requests go through [`Server::handle_json`]; the park gauge, progress routing and
//! the session shim go through a real Streamable HTTP server on `127.0.0.1:0`. Every message a
//! 2026 request gets back is validated against the 2026-07-28 schema; every wait is bounded.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>

#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_mcp::ServerBuilder;
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitResult, ElicitationSchema, InputRequest,
    InputRequiredResult, ProtocolVersion, SamplingMessageContentBlock,
};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};

use common::golden::Schema;
use common::http::{Client, caps, http_client, send, spawn, text_of};
use common::sse::SseReader;
use common::{eventually, within};

const KEY: [u8; 32] = [7; 32];

/// How often each tool's body started.
#[derive(Debug, Default)]
struct Runs {
    greet: AtomicUsize,
    two_step: AtomicUsize,
    watchful: AtomicUsize,
}

fn form(property: &str) -> ElicitRequestParams {
    let schema: ElicitationSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": { property: { "type": "string" } },
        "required": [property]
    }))
    .unwrap();
    ElicitRequestParams::form(format!("Your {property}?"), schema)
}

fn field(result: &ElicitResult, name: &str) -> String {
    result
        .content
        .as_ref()
        .and_then(|c| c.get(name))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn no_args() -> serde_json::Map<String, Value> {
    json!({"type": "object", "properties": {}})
        .as_object()
        .cloned()
        .unwrap()
}

/// The tools every test serves, with the server's key (`KEY` as `k1`) and `extra` settings.
fn builder(runs: &Arc<Runs>) -> ServerBuilder {
    let greet_runs = runs.clone();
    let two_step_runs = runs.clone();
    let watchful_runs = runs.clone();
    Server::builder("mrtr-test", "1.0.0")
        .request_state_key("k1", KEY)
        // Implicit style, watching its cancellation while it waits: the end of a round is
        // not a cancellation.
        .tool(
            tool(
                "watchful",
                "Waits for a name unless cancelled",
                move |cx: RequestContext| {
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
                },
            )
            .input_schema(no_args()),
        )
        // Implicit style in a prompt and a resource read.
        .prompt(prompt(
            "ask_prompt",
            "Asks for a topic",
            |cx: RequestContext| async move {
                let topic = cx.elicit(form("topic")).await?;
                Ok::<_, McpError>(PromptMessage::user_text(format!(
                    "Write about {}",
                    field(&topic, "topic")
                )))
            },
        ))
        .resource(resource(
            Resource::new("test://roots", "roots").with_mime_type("text/plain"),
            |cx: RequestContext| async move {
                let roots = cx.list_roots().await?;
                Ok::<_, McpError>(format!("{} roots", roots.roots.len()))
            },
        ))
        // Implicit style, one ask; counts its runs (the side effect that must happen once).
        .tool(
            tool("greet", "Greets", move |cx: RequestContext| {
                let runs = greet_runs.clone();
                async move {
                    runs.greet.fetch_add(1, Ordering::SeqCst);
                    let name = cx.elicit(form("name")).await?;
                    cx.progress(1.0, Some(1.0), Some("greeted"));
                    cx.log(LoggingLevel::Info, "greeted", None);
                    Ok::<_, McpError>(format!("Hello, {}!", field(&name, "name")))
                }
            })
            .input_schema(no_args()),
        )
        // Implicit style, two asks one after the other: two rounds.
        .tool(
            tool("two_step", "Asks twice", move |cx: RequestContext| {
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
            .input_schema(no_args()),
        )
        // Implicit style, sampling.
        .tool(
            tool("sample", "Samples", |cx: RequestContext| async move {
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
            .input_schema(no_args()),
        )
        // Explicit style with its own state.
        .tool(tool(
            "confirm",
            "Asks for a confirmation",
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
        ))
        // Explicit style that never has enough.
        .tool(
            tool(
                "insatiable",
                "Always asks again",
                |cx: RequestContext| async move {
                    let round = cx
                        .request_state()
                        .map_or(0, |s| s.parse::<u32>().unwrap_or(0));
                    Err::<String, _>(McpError::input_required(
                        InputRequiredResult::ask("more", InputRequest::elicitation(&form("name")))
                            .with_state((round + 1).to_string()),
                    ))
                },
            )
            .input_schema(no_args()),
        )
}

fn server(runs: &Arc<Runs>) -> Server {
    builder(runs).build().unwrap()
}

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// A 2026 request: `params` with the `_meta` of a client with every capability, and `extra`
/// params (`inputResponses`, `requestState`).
fn request(id: i64, method: &str, mut params: Value, extra: Value) -> Value {
    params["_meta"] = meta(all_caps());
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A 2026 `tools/call` of `name` with `extra` params (`inputResponses`, `requestState`).
fn call(id: i64, name: &str, extra: Value) -> Value {
    let params = json!({"name": name, "arguments": {}});
    request(id, "tools/call", params, extra)
}

fn accept(property: &str, value: &str) -> Value {
    json!({"action": "accept", "content": {property: value}})
}

/// Validates a message the server sent to a 2026 client against the 2026-07-28 schema.
fn validate(message: &Value) {
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
async fn ask(server: &Server, message: &Value) -> Value {
    let answer = within(server.handle_json(&message.to_string()))
        .await
        .expect("a request gets an answer");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    validate(&answer);
    answer
}

/// The retry of a 2026 `tools/call` of `name` that answers the round of `state` with
/// `answers` (its `inputResponses`).
fn retry_call(id: i64, name: &str, answers: Value, state: &str) -> Value {
    call(
        id,
        name,
        json!({"inputResponses": answers, "requestState": state}),
    )
}

/// The `input_required` result of `answer`, checked: its keys, and a sealed state.
fn round(answer: &Value, keys: &[&str]) -> (Value, String) {
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

fn complete_text(answer: &Value) -> String {
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    text_of(&answer["result"]).to_owned()
}

fn error_of(answer: &Value) -> (i64, String) {
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

/// An implicit-style handler with a side effect runs once across its round: the retry resumes
/// the parked call where it waited.
#[actix_web::test]
async fn an_implicit_call_runs_once_across_its_round() {
    let runs = Arc::new(Runs::default());
    let server = server(&runs);
    let first = ask(&server, &call(1, "greet", json!({}))).await;
    let (result, state) = round(&first, &["elicitation-0"]);
    assert_eq!(
        result["inputRequests"]["elicitation-0"]["method"],
        "elicitation/create"
    );
    assert!(
        !state.contains("elicitation"),
        "the state is sealed: {state}"
    );
    let second = ask(
        &server,
        &retry_call(
            2,
            "greet",
            json!({"elicitation-0": accept("name", "Alice")}),
            &state,
        ),
    )
    .await;
    assert_eq!(complete_text(&second), "Hello, Alice!");
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
    let first = ask(&server, &call(1, "watchful", json!({}))).await;
    let (_, state) = round(&first, &["elicitation-0"]);
    let second = ask(
        &server,
        &retry_call(
            2,
            "watchful",
            json!({"elicitation-0": accept("name", "Ada")}),
            &state,
        ),
    )
    .await;
    assert_eq!(complete_text(&second), "Hello, Ada!");
    assert_eq!(runs.watchful.load(Ordering::SeqCst), 1);
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
        .tool(tool(
            "confirm",
            "Same name, other keys",
            |_cx: RequestContext| async { "never" },
        ))
        .build()
        .unwrap();
    let refused = ask(&stranger, &retry).await;
    assert_eq!(error_of(&refused).0, -32602);
    assert!(error_of(&refused).1.contains("key"), "{refused}");

    let accepting = Server::builder("other", "1.0.0")
        .request_state_key("k2", [9; 32])
        .accept_request_state_key("k1", KEY)
        .tool(tool(
            "confirm",
            "Accepts k1",
            |cx: RequestContext| async move { cx.request_state().unwrap_or_default().to_owned() },
        ))
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

/// POSTs one 2026 request over HTTP; returns the notifications before the response and the
/// response, each validated against the 2026 schema.
async fn post(url: &str, message: &Value) -> (Vec<Value>, Value) {
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
    let sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
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

/// A resumed handler's progress goes to the retry's response stream; the gauge counts the
/// parked call while it waits.
#[actix_web::test]
async fn a_resumed_handler_reports_on_the_retry_stream() {
    let runs = Arc::new(Runs::default());
    let srv = spawn(server(&runs).http("/mcp"), 1);
    let (_, first) = post(&srv.url, &call(1, "greet", json!({}))).await;
    let (_, state) = round(&first, &["elicitation-0"]);
    assert_eq!(srv.mcp.metrics().parked_calls, 1);
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
    assert_eq!(srv.mcp.metrics().parked_calls, 0);
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
    assert_eq!(srv.mcp.metrics().parked_calls, 1);
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
        mcp.metrics().parked_calls == 0
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
    for lifecycle in [Lifecycle::Legacy, Lifecycle::Modern] {
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
