//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the server: which calls
//! become tasks, the task lifecycle as `tasks/get` shows it (`working` → `completed`, `failed`,
//! `cancelled`, `input_required` + `tasks/update`), expiry, limits, gating with `-32021`,
//! unknown ids, and `notifications/tasks` on a `subscriptions/listen` stream.
//!
//! Tools wait on [`Notify`] gates the tests open, never on timers; every wait is bounded by
//! [`WAIT`].
#![cfg(feature = "http")]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::protocol::{InputRequiredResult, TaskSupport};
use actix_mcp::{
    InMemoryTaskStore, McpError, RequestContext, Server, ServerBuilder, StoredTask, TaskConfig,
    TaskStore, TaskStoreError, ToolDef,
};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::Notify;

use common::http::{send, spawn};
use common::sse::SseReader;
use common::task_tools::{form, two_questions};
use common::{WAIT, eventually_async};

const EXT: &str = "io.modelcontextprotocol/tasks";
const VERSION: &str = "2026-07-28";

/// The `_meta` of a 2026 request, declaring the extension (and form elicitation) or nothing.
fn meta(extension: bool) -> Value {
    let capabilities = if extension {
        json!({ "extensions": { EXT: {} }, "elicitation": {} })
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// One 2026 request served in process; the whole JSON-RPC response.
async fn rpc(server: &Server, method: &str, params: Value, extension: bool) -> Value {
    let capabilities = meta(extension)["io.modelcontextprotocol/clientCapabilities"].clone();
    rpc_with(server, method, params, capabilities).await
}

/// One 2026 request declaring `capabilities`; the whole JSON-RPC response.
async fn rpc_with(server: &Server, method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta(false);
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities;
    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let answer = tokio::time::timeout(WAIT, server.handle_json(&request.to_string()))
        .await
        .unwrap_or_else(|_| panic!("{method} was not answered in time"))
        .unwrap_or_else(|| panic!("{method} got no response"));
    serde_json::from_str(&answer).unwrap_or_else(|err| panic!("{err}: {answer}"))
}

fn result(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result: {response}"))
}

fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {response}"))
}

/// `tools/call` from a client declaring the extension; the result.
async fn call(server: &Server, name: &str, arguments: Value) -> Value {
    let response = rpc(
        server,
        "tools/call",
        json!({ "name": name, "arguments": arguments }),
        true,
    )
    .await;
    result(&response).clone()
}

/// `tools/call` that must create a task; its id.
async fn start_task(server: &Server, name: &str) -> String {
    let created = call(server, name, json!({})).await;
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no taskId: {created}"))
        .to_owned()
}

async fn get(server: &Server, task_id: &str) -> Value {
    result(&rpc(server, "tasks/get", json!({ "taskId": task_id }), true).await).clone()
}

/// Polls `tasks/get` until `done` holds; fails after [`WAIT`].
async fn until(server: &Server, task_id: &str, done: impl Fn(&Value) -> bool) -> Value {
    eventually_async(format!("task {task_id} gets on"), || async {
        let task = get(server, task_id).await;
        if done(&task) {
            Ok(task)
        } else {
            Err(task.to_string())
        }
    })
    .await
}

fn status_is(status: &'static str) -> impl Fn(&Value) -> bool {
    move |task| task["status"] == status
}

/// A tool that runs until `gate` opens, then answers "done" (or stops when cancelled, telling
/// `cancelled`).
fn gated(name: &str, gate: Arc<Notify>, cancelled: Arc<Notify>) -> actix_mcp::ToolDef {
    ToolDef::new(name, move |cx: RequestContext| {
        let gate = gate.clone();
        let cancelled = cancelled.clone();
        async move {
            tokio::select! {
                () = gate.notified() => Ok("done".to_owned()),
                () = cx.cancelled() => {
                    cancelled.notify_one();
                    Err(McpError::tool("cancelled"))
                }
            }
        }
    })
    .description("waits for its gate")
}

fn builder() -> ServerBuilder {
    Server::builder("tasks-test", "1.0.0").tasks(TaskConfig::default())
}

fn build(builder: ServerBuilder) -> Server {
    builder.build().unwrap_or_else(|err| panic!("{err}"))
}

/// A pending call becomes a task, visible at once as `working`, then `completed` with the
/// tool's result inlined; a call finished at once is answered inline.
#[actix_web::test]
async fn a_slow_call_becomes_a_task_that_completes_and_a_fast_one_is_answered_inline() {
    let gate = Arc::new(Notify::new());
    let store = Arc::new(InMemoryTaskStore::new());
    let server = build(
        Server::builder("tasks-test", "1.0.0")
            .tasks(TaskConfig::default().store(store.clone()))
            .tool(gated("slow", gate.clone(), Arc::default()).task_support(TaskSupport::Optional))
            .tool(
                ToolDef::new("fast", |_cx: RequestContext| async { "quick" })
                    .description("answers at once")
                    .task_support(TaskSupport::Optional),
            ),
    );
    let created = call(&server, "slow", json!({})).await;
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    for key in ["createdAt", "lastUpdatedAt"] {
        assert!(
            created[key].as_str().is_some_and(|s| s.ends_with('Z')),
            "{created}"
        );
    }
    assert!(
        created["ttlMs"].as_u64().is_some_and(|ms| ms > 0),
        "{created}"
    );
    assert!(created["pollIntervalMs"].as_u64().is_some_and(|ms| ms > 0));
    for absent in ["result", "error", "inputRequests", "requestState", "task"] {
        assert!(created.get(absent).is_none(), "{absent} in {created}");
    }
    let task_id = created["taskId"].as_str().unwrap_or_default().to_owned();
    let working = get(&server, &task_id).await;
    assert_eq!(working["resultType"], "complete");
    assert_eq!(working["status"], "working");
    assert!(working.get("result").is_none());

    gate.notify_one();
    let done = until(&server, &task_id, status_is("completed")).await;
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    assert_eq!(done["taskId"], task_id.as_str());

    let inline = call(&server, "fast", json!({})).await;
    assert_eq!(inline["resultType"], "complete");
    assert_eq!(inline["content"][0]["text"], "quick");
    assert!(inline.get("taskId").is_none());
    assert_eq!(store.len(), 1, "the inline call left a task behind");
}

/// A tool error is a `completed` task with an `isError` result; a crash (a panic, here) is a
/// `failed` task with a JSON-RPC error and no result.
#[actix_web::test]
async fn a_tool_error_completes_with_is_error_and_a_crash_fails() {
    let gate = Arc::new(Notify::new());
    let (erring, crashing) = (gate.clone(), gate.clone());
    let server = build(
        builder()
            .tool(
                ToolDef::new("erring", move |_cx: RequestContext| {
                    let gate = erring.clone();
                    async move {
                        gate.notified().await;
                        Err::<String, _>(McpError::tool("bad input"))
                    }
                })
                .description("fails as a tool")
                .task_support(TaskSupport::Required),
            )
            .tool(
                ToolDef::new("crashing", move |cx: RequestContext| {
                    let gate = crashing.clone();
                    async move {
                        gate.notified().await;
                        if cx.task_id().is_some() {
                            panic!("crashed on purpose");
                        }
                        "not in a task"
                    }
                })
                .description("panics")
                .task_support(TaskSupport::Required),
            ),
    );
    let erring = start_task(&server, "erring").await;
    gate.notify_one();
    let done = until(&server, &erring, |t| t["status"] != "working").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true);
    assert!(done.get("error").is_none());

    let crashing = start_task(&server, "crashing").await;
    gate.notify_one();
    let failed = until(&server, &crashing, |t| t["status"] != "working").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed["error"]["message"].is_string());
    assert!(failed.get("result").is_none());
}

/// `tasks/cancel` answers an empty ack, the task is `cancelled`, the tool sees its cancellation,
/// and cancelling a terminal task again is the same ack.
#[actix_web::test]
async fn cancel_stops_the_tool_and_is_idempotent() {
    let cancelled = Arc::new(Notify::new());
    let server = build(builder().tool(
        gated("slow", Arc::default(), cancelled.clone()).task_support(TaskSupport::Optional),
    ));
    let task_id = start_task(&server, "slow").await;
    for _ in 0..2 {
        let ack =
            result(&rpc(&server, "tasks/cancel", json!({ "taskId": task_id }), true).await).clone();
        assert_eq!(ack["resultType"], "complete");
        for absent in ["taskId", "status", "result", "error", "inputRequests"] {
            assert!(ack.get(absent).is_none(), "{absent} in {ack}");
        }
        let task = get(&server, &task_id).await;
        assert_eq!(task["status"], "cancelled", "{task}");
    }
    tokio::time::timeout(WAIT, cancelled.notified())
        .await
        .unwrap_or_else(|_| panic!("the tool never saw its cancellation"));
}

/// A task asking for two inputs parks in `input_required`; a partial `tasks/update` keeps it
/// there with only the unanswered key (unknown keys are ignored); answering the last key runs
/// the tool again with both answers.
#[actix_web::test]
async fn input_required_parks_the_task_until_every_key_is_answered() {
    let server = build(builder().tool(two_questions()));
    let task_id = start_task(&server, "two_questions").await;
    let parked = until(&server, &task_id, status_is("input_required")).await;
    let keys: Vec<&String> = parked["inputRequests"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["name", "color"], "{parked}");
    assert_eq!(
        parked["inputRequests"]["name"]["method"],
        "elicitation/create"
    );

    let update = |responses: Value| {
        let server = server.clone();
        let task_id = task_id.clone();
        async move {
            let params = json!({ "taskId": task_id, "inputResponses": responses });
            result(&rpc(&server, "tasks/update", params, true).await).clone()
        }
    };
    let ack = update(json!({
        "name": { "action": "accept", "content": { "name": "Ada" } },
        "never-asked": { "action": "accept" },
    }))
    .await;
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("status").is_none());
    let partial = get(&server, &task_id).await;
    assert_eq!(partial["status"], "input_required");
    assert_eq!(
        partial["inputRequests"].as_object().map(|m| m.len()),
        Some(1)
    );
    assert!(partial["inputRequests"].get("color").is_some(), "{partial}");

    update(json!({ "color": { "action": "accept", "content": { "color": "green" } } })).await;
    let done = until(&server, &task_id, status_is("completed")).await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada likes green");
    assert!(done.get("inputRequests").is_none());
}

/// A tool asking the same question in two rounds: the client sees a new key the second time
/// (keys are unique for a task's lifetime), and the tool gets the answer under its own key.
#[actix_web::test]
async fn input_keys_are_never_reused_within_a_task() {
    let server = build(
        builder().tool(
            ToolDef::new("twice", |cx: RequestContext| async move {
                tokio::task::yield_now().await;
                let round: u32 = cx.request_state().and_then(|s| s.parse().ok()).unwrap_or(0);
                if round < 2 {
                    return Err(McpError::input_required(
                        InputRequiredResult::ask("confirm", form("Sure?", "ok"))
                            .with_state((round + 1).to_string()),
                    ));
                }
                Ok(format!("confirmed after {round} rounds"))
            })
            .description("asks twice")
            .task_support(TaskSupport::Optional),
        ),
    );
    let task_id = start_task(&server, "twice").await;
    let mut seen = Vec::new();
    for _ in 0..2 {
        let parked = until(&server, &task_id, status_is("input_required")).await;
        let key = parked["inputRequests"]
            .as_object()
            .and_then(|m| m.keys().next().cloned())
            .unwrap_or_default();
        assert!(!seen.contains(&key), "key {key} reused");
        seen.push(key.clone());
        let params =
            json!({ "taskId": task_id, "inputResponses": { key: { "action": "accept" } } });
        rpc(&server, "tasks/update", params, true).await;
    }
    let done = until(&server, &task_id, status_is("completed")).await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "confirmed after 2 rounds"
    );
    assert_eq!(seen[0], "confirm");
}

/// After its time to live a task is gone (`-32602`) and its tool is cancelled.
#[actix_web::test]
async fn an_expired_task_is_forgotten_and_its_tool_cancelled() {
    let cancelled = Arc::new(Notify::new());
    let server = build(
        Server::builder("tasks-test", "1.0.0")
            .tasks(TaskConfig::default().ttl(Duration::from_millis(150)))
            .tool(
                gated("slow", Arc::default(), cancelled.clone())
                    .task_support(TaskSupport::Optional),
            ),
    );
    let created = call(&server, "slow", json!({})).await;
    assert_eq!(created["ttlMs"], 150);
    let task_id = created["taskId"].as_str().unwrap_or_default().to_owned();
    tokio::time::timeout(WAIT, cancelled.notified())
        .await
        .unwrap_or_else(|_| panic!("the tool outlived its task"));
    let gone = rpc(&server, "tasks/get", json!({ "taskId": task_id }), true).await;
    assert_eq!(error_code(&gone), -32602, "{gone}");
}

/// At the task limit a call that needs a task is refused as busy, and one that may run inline
/// does so.
#[actix_web::test]
async fn the_task_limit_is_enforced() {
    let gate = Arc::new(Notify::new());
    let server = build(
        Server::builder("tasks-test", "1.0.0")
            .tasks(TaskConfig::default().max_tasks(1))
            .tool(
                gated("required", gate.clone(), Arc::default()).task_support(TaskSupport::Required),
            )
            .tool(
                ToolDef::new("optional", |cx: RequestContext| async move {
                    tokio::task::yield_now().await;
                    format!("inline, task {:?}", cx.task_id())
                })
                .description("waits a moment")
                .task_support(TaskSupport::Optional),
            ),
    );
    start_task(&server, "required").await;
    let refused = rpc(
        &server,
        "tools/call",
        json!({ "name": "required", "arguments": {} }),
        true,
    )
    .await;
    assert_eq!(error_code(&refused), -32000, "{refused}");
    let inline = call(&server, "optional", json!({})).await;
    assert_eq!(inline["resultType"], "complete", "{inline}");
    assert_eq!(inline["content"][0]["text"], "inline, task None");
    gate.notify_one();
}

/// Without the extension in the request: `tasks/*` and required-task tools answer `-32021`
/// naming it, optional ones run inline. Without the extension on the server: `tasks/*` are
/// unknown methods and discovery does not list it; `initialize` never does.
#[actix_web::test]
async fn requests_without_the_extension_are_gated() {
    let server = build(
        builder()
            .tool(
                gated("required", Arc::default(), Arc::default())
                    .task_support(TaskSupport::Required),
            )
            .tool(
                ToolDef::new("optional", |_cx: RequestContext| async {
                    tokio::task::yield_now().await;
                    "inline"
                })
                .description("waits a moment")
                .task_support(TaskSupport::Optional),
            ),
    );
    for (method, params) in [
        ("tasks/get", json!({ "taskId": "x" })),
        (
            "tasks/update",
            json!({ "taskId": "x", "inputResponses": {} }),
        ),
        ("tasks/cancel", json!({ "taskId": "x" })),
        ("tools/call", json!({ "name": "required", "arguments": {} })),
    ] {
        let refused = rpc(&server, method, params, false).await;
        assert_eq!(error_code(&refused), -32021, "{method}: {refused}");
        assert_eq!(
            refused["error"]["data"]["requiredCapabilities"]["extensions"][EXT],
            json!({}),
            "{refused}"
        );
    }
    let inline = result(
        &rpc(
            &server,
            "tools/call",
            json!({ "name": "optional", "arguments": {} }),
            false,
        )
        .await,
    )
    .clone();
    assert_eq!(inline["resultType"], "complete");
    assert_eq!(inline["content"][0]["text"], "inline");

    let discovered = result(&rpc(&server, "server/discover", json!({}), true).await).clone();
    assert_eq!(discovered["capabilities"]["extensions"][EXT], json!({}));
    let initialized = common::in_process::result(
        &server,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "t", "version": "1" } }),
        "InitializeResult",
    )
    .await;
    assert!(initialized["capabilities"].is_object(), "{initialized}");
    assert!(initialized["capabilities"].get("extensions").is_none());

    let plain = build(
        Server::builder("plain", "1.0.0")
            .tool(ToolDef::new("t", |_cx: RequestContext| async { "x" }).description("x")),
    );
    let unknown = rpc(&plain, "tasks/get", json!({ "taskId": "x" }), true).await;
    assert_eq!(error_code(&unknown), -32601);
    let discovered = result(&rpc(&plain, "server/discover", json!({}), true).await).clone();
    assert!(discovered["capabilities"].get("extensions").is_none());
}

/// Unknown task ids are invalid params on every method.
#[actix_web::test]
async fn unknown_task_ids_are_invalid_params() {
    let server = build(
        builder().tool(ToolDef::new("t", |_cx: RequestContext| async { "x" }).description("x")),
    );
    for (method, params) in [
        ("tasks/get", json!({ "taskId": "nope" })),
        (
            "tasks/update",
            json!({ "taskId": "nope", "inputResponses": {} }),
        ),
        ("tasks/cancel", json!({ "taskId": "nope" })),
    ] {
        let answer = rpc(&server, method, params, true).await;
        assert_eq!(error_code(&answer), -32602, "{method}: {answer}");
    }
}

/// A POST of a 2026 request with the headers the spec requires.
async fn post(
    client: &reqwest::Client,
    url: &str,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> reqwest::Response {
    let mut params = params;
    params["_meta"] = meta(true);
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
    let mut builder = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", VERSION)
        .header("Mcp-Method", method)
        .body(body.to_string());
    if let Some(name) = name {
        builder = builder.header("Mcp-Name", name);
    }
    send(builder).await
}

/// The result of a response, whether a JSON body or an SSE stream.
async fn json_result(response: reqwest::Response) -> Value {
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let message = if sse {
        SseReader::new(response).next_message().await
    } else {
        let text = tokio::time::timeout(WAIT, response.text())
            .await
            .unwrap_or_else(|_| panic!("no body in time"))
            .unwrap_or_default();
        serde_json::from_str(&text).unwrap_or_else(|err| panic!("{err}: {text}"))
    };
    result(&message).clone()
}

/// A `subscriptions/listen` stream asking for a task's updates gets `notifications/tasks`
/// with the full task, tagged with the subscription id, when it completes; unknown task ids
/// are left out of the acknowledgement.
#[actix_web::test]
async fn status_changes_reach_listen_streams() {
    let gate = Arc::new(Notify::new());
    let server = build(
        builder()
            .tool(gated("slow", gate.clone(), Arc::default()).task_support(TaskSupport::Optional)),
    );
    let test_server = spawn(server.http("/mcp"), 1);
    let client = common::http::http_client();
    let created = json_result(
        post(
            &client,
            &test_server.url,
            "tools/call",
            Some("slow"),
            json!({ "name": "slow", "arguments": {} }),
        )
        .await,
    )
    .await;
    let task_id = created["taskId"].as_str().unwrap_or_default().to_owned();
    assert!(!task_id.is_empty(), "{created}");

    let listen = post(
        &client,
        &test_server.url,
        "subscriptions/listen",
        None,
        json!({ "notifications": { "taskIds": [task_id, "no-such-task"] } }),
    )
    .await;
    let mut stream = SseReader::new(listen);
    let ack = stream.next_message().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([task_id]));

    gate.notify_one();
    let update = stream.next_message().await;
    assert_eq!(update["method"], "notifications/tasks", "{update}");
    assert_eq!(update["params"]["taskId"], task_id.as_str());
    assert_eq!(update["params"]["status"], "completed");
    assert_eq!(update["params"]["result"]["content"][0]["text"], "done");
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    drop(stream);
    test_server.stop().await;
}

/// A store whose reads take a while: a `subscriptions/listen` naming tasks waits on it.
struct SlowReads(InMemoryTaskStore);

impl TaskStore for SlowReads {
    fn create(&self, task: StoredTask, limit: usize) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        self.0.create(task, limit)
    }

    fn get(&self, task_id: &str) -> BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>> {
        let task_id = task_id.to_owned();
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            self.0.get(&task_id).await
        })
    }

    fn update(&self, task: StoredTask) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        self.0.update(task)
    }

    fn delete(&self, task_id: &str) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        self.0.delete(task_id)
    }

    fn purge_expired(&self) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        self.0.purge_expired()
    }
}

/// `max_listeners` holds when listen requests arrive together: each takes its place before it
/// looks its tasks up, so the ones beyond the limit are refused, not all admitted at once.
#[actix_web::test]
async fn concurrent_listen_requests_never_exceed_max_listeners() {
    let server = build(
        Server::builder("tasks-test", "1.0.0")
            .tasks(TaskConfig::default().store(SlowReads(InMemoryTaskStore::new())))
            .max_listeners(2),
    );
    let test_server = spawn(server.http("/mcp"), 1);
    let client = common::http::http_client();
    let listen = || {
        post(
            &client,
            &test_server.url,
            "subscriptions/listen",
            None,
            json!({ "notifications": { "taskIds": ["no-such-task"] } }),
        )
    };
    let responses = futures::future::join_all((0..6).map(|_| listen())).await;
    let (mut open, mut refused) = (Vec::new(), 0);
    for response in responses {
        let sse = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if sse {
            let mut stream = SseReader::new(response);
            let ack = stream.next_message().await;
            assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
            open.push(stream);
        } else {
            let refusal: Value = response.json().await.unwrap_or_default();
            // -32000: server busy.
            assert_eq!(refusal["error"]["code"], -32000, "{refusal}");
            refused += 1;
        }
    }
    assert_eq!((open.len(), refused), (2, 4));
    drop(open);
    test_server.stop().await;
}

/// A task never asks for input the creating request did not declare: asking for an
/// elicitation from a client without `elicitation` fails the task with `-32021`.
#[actix_web::test]
async fn a_task_never_asks_for_undeclared_input() {
    let server = build(
        builder().tool(
            ToolDef::new("asks", |_cx: RequestContext| async move {
                tokio::task::yield_now().await;
                Err::<String, _>(McpError::input_required(InputRequiredResult::ask(
                    "name",
                    form("Name?", "name"),
                )))
            })
            .description("asks for a name")
            .task_support(TaskSupport::Optional),
        ),
    );
    let created = rpc_with(
        &server,
        "tools/call",
        json!({ "name": "asks", "arguments": {} }),
        json!({ "extensions": { EXT: {} } }),
    )
    .await;
    let task_id = result(&created)["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned();
    let failed = until(&server, &task_id, |t| t["status"] != "working").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32021);
    assert!(failed.get("inputRequests").is_none());
}

/// The public task types can be shared between the HTTP workers.
#[test]
fn public_task_types_are_send_and_sync() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<TaskConfig>();
    shareable::<InMemoryTaskStore>();
    shareable::<actix_mcp::StoredTask>();
    shareable::<actix_mcp::TaskStoreError>();
    shareable::<Arc<dyn actix_mcp::TaskStore>>();
}
