//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) between our client and the
//! official Rust SDK's task server: rmcp 3.11's `TaskManager` behind its Streamable HTTP server
//! transport, served in-process on a loopback port, and our client speaking 2026-07-28 with the
//! extension declared.
//!
//! Each test starts its own server. Tools wait on [`Notify`] gates the tests open (or on the
//! task's cancellation), never on timers; every wait is bounded by [`WAIT`].
#![cfg(feature = "client-http")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::transport::HttpTransport;
use actix_mcp::client::{Client, ClientBuilder, ClientError, ClientExtension, Era, Lifecycle};
use actix_mcp::protocol::{ElicitAction, ElicitRequestParams, ElicitResult, TaskStatus};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, InputRequest, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskContext, TaskExit, TaskFuture, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The longest any step waits.
const WAIT: Duration = Duration::from_secs(15);

/// `fut`'s output, or a panic naming the wait after [`WAIT`].
async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(WAIT, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: not done within {WAIT:?}"))
}

/// What the rmcp side saw, shared by every instance the transport's factory makes.
#[derive(Default)]
struct Seen {
    /// Opened by the tests to let the gated tools finish.
    gate: Notify,
    /// Told once per task that observed `tasks/cancel` (`TaskContext::cancelled`, or a
    /// `request_input` woken by the cancel).
    cancelled: Notify,
    /// The ids of the tasks that observed their cancellation, in order.
    cancelled_ids: Mutex<Vec<String>>,
    /// The answers `request_input` returned.
    answers: Mutex<Vec<Value>>,
}

impl Seen {
    fn cancelled(&self, task_id: &str) {
        self.cancelled_ids.lock().unwrap().push(task_id.to_owned());
        self.cancelled.notify_one();
    }
}

/// An rmcp server whose `tools/call` runs every tool as a task (the client having declared the
/// extension), on rmcp's [`TaskManager`].
#[derive(Clone)]
struct TaskServer {
    tasks: TaskManager,
    seen: Arc<Seen>,
}

/// The tools, each run as a task.
const TOOLS: &[(&str, &str)] = &[
    ("sum", "a + b once the gate opens"),
    (
        "ask_name",
        "asks the user's name (elicitation), then greets them",
    ),
    (
        "wait_cancel",
        "runs until cancelled, or until the gate opens",
    ),
    ("fail", "fails with a JSON-RPC error (task failed)"),
    ("tool_error", "completes with an isError result"),
];

/// The task's operation for the tool `name`.
fn operation(name: &str, arguments: Value, seen: Arc<Seen>, ctx: TaskContext) -> TaskFuture {
    match name {
        "sum" => Box::pin(async move {
            let a = arguments["a"].as_i64().unwrap_or_default();
            let b = arguments["b"].as_i64().unwrap_or_default();
            seen.gate.notified().await;
            Ok(text((a + b).to_string()))
        }),
        "ask_name" => Box::pin(async move {
            let request: InputRequest = serde_json::from_value(json!({
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "name": { "type": "string" } },
                        "required": ["name"]
                    }
                }
            }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            let answer = match ctx.request_input("name", request).await {
                Ok(answer) => answer,
                Err(exit) => {
                    // Woken by `tasks/cancel` (rmcp drops the pending input's sender).
                    seen.cancelled(ctx.task_id());
                    return Err(exit);
                }
            };
            seen.answers.lock().unwrap().push(answer.clone());
            match (
                answer["action"].as_str(),
                answer["content"]["name"].as_str(),
            ) {
                (Some("accept"), Some(name)) => Ok(text(format!("hello {name}"))),
                (action, _) => Ok(text(format!("no name ({})", action.unwrap_or("?")))),
            }
        }),
        "wait_cancel" => Box::pin(async move {
            tokio::select! {
                () = ctx.cancelled() => {
                    seen.cancelled(ctx.task_id());
                    Err(TaskExit::Cancelled)
                }
                () = seen.gate.notified() => Ok(text("finished")),
            }
        }),
        "fail" => Box::pin(async move {
            seen.gate.notified().await;
            Err(TaskExit::Error(ErrorData::internal_error(
                "database write failed",
                Some(json!({ "table": "orders" })),
            )))
        }),
        "tool_error" => Box::pin(async move {
            seen.gate.notified().await;
            Ok(CallToolResult::error(vec![ContentBlock::text("bad input")]))
        }),
        other => {
            let other = other.to_owned();
            Box::pin(async move {
                Err(TaskExit::Error(ErrorData::invalid_params(
                    format!("no tool {other}"),
                    None,
                )))
            })
        }
    }
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

impl ServerHandler for TaskServer {
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({ "type": "object" });
        let schema = schema.as_object().cloned().unwrap_or_default();
        Ok(ListToolsResult::with_all_items(
            TOOLS
                .iter()
                .map(|(name, description)| Tool::new(*name, *description, schema.clone()))
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !TOOLS.iter().any(|(name, _)| *name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("no tool {}", request.name),
                None,
            ));
        }
        // Every tool runs as a task, whether the client declared the extension or not: for a
        // client that did not, rmcp's dispatch refuses the task with -32021.
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let seen = self.seen.clone();
        let task = self
            .tasks
            .spawn(TaskOptions::new().with_poll_interval_ms(20), move |ctx| {
                operation(&name, arguments, seen, ctx)
            });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }
}

/// Serves a fresh [`TaskServer`] over rmcp's Streamable HTTP transport on a loopback port:
/// its URL and what it sees. The accept loop ends with the test's runtime.
async fn serve() -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let server = TaskServer {
        tasks: TaskManager::new(),
        seen: seen.clone(),
    };
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let address: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = hyper_util::service::TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
    (format!("http://{address}/mcp"), seen)
}

/// A 2026-07-28 client declaring the extension, answering elicitations with the name "Ada".
fn tasks_client() -> ClientBuilder {
    Client::builder("rmcp-tasks-client", "1.0.0")
        .lifecycle(Lifecycle::V2026)
        .extension(ClientExtension::tasks())
        .elicitation(|params: ElicitRequestParams, _| async move {
            assert_eq!(params.message(), "What is your name?");
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = json!({ "name": "Ada" }).as_object().cloned();
            Ok(result)
        })
}

async fn connect(url: &str, builder: ClientBuilder) -> Client {
    let client = within("connect", builder.connect(HttpTransport::new(url)))
        .await
        .unwrap();
    assert_eq!(client.era(), Era::V2026);
    client
}

/// Polls rmcp (`tasks/get`) until the task is `status`.
async fn until_status(client: &Client, task_id: &str, status: TaskStatus) {
    within("the task's status", async {
        loop {
            let task = client.get_task(task_id).await.unwrap();
            if task.status == status {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// A call rmcp runs as a task: the handle has its id, sees it `working` until the gate opens,
/// then resolves to the tool's result; rmcp keeps the task, `completed`.
#[actix_web::test]
async fn a_task_resolves_to_the_tools_result() {
    let (url, seen) = serve().await;
    let client = connect(&url, tasks_client()).await;
    let mut handle = within(
        "call",
        client.call_tool_as_task("sum", json!({ "a": 40, "b": 2 })),
    )
    .await
    .unwrap();
    let task_id = handle.id().expect("rmcp answered with a task").to_owned();
    assert_eq!(handle.status(), TaskStatus::Working);
    assert_eq!(
        within("poll", handle.poll()).await.unwrap(),
        TaskStatus::Working
    );
    seen.gate.notify_one();
    let result = within("result", handle.result()).await.unwrap();
    assert_eq!(result.text_content(), "42");
    assert_ne!(result.is_error, Some(true));
    let task = within("tasks/get", client.get_task(&task_id))
        .await
        .unwrap();
    assert_eq!(task.status, TaskStatus::Completed);
    assert!(seen.cancelled_ids.lock().unwrap().is_empty());
    client.close().await;
}

/// A task in `input_required` (rmcp's `TaskContext::request_input` with an elicitation) is
/// answered by the builder's elicitation handler through `tasks/update`, and the result
/// carries the answer.
#[actix_web::test]
async fn input_required_is_answered_by_the_elicitation_handler() {
    let (url, seen) = serve().await;
    let client = connect(&url, tasks_client()).await;
    let handle = within("call", client.call_tool_as_task("ask_name", json!({})))
        .await
        .unwrap();
    assert!(handle.id().is_some(), "rmcp answered with a task");
    let result = within("result", handle.result()).await.unwrap();
    assert_eq!(result.text_content(), "hello Ada");
    let answers = seen.answers.lock().unwrap().clone();
    assert_eq!(
        answers,
        [json!({ "action": "accept", "content": { "name": "Ada" } })]
    );
    client.close().await;
}

/// `TaskHandle::cancel` sends `tasks/cancel`: rmcp's operation sees `TaskContext::cancelled`
/// fire and the task settles `cancelled`.
#[actix_web::test]
async fn cancel_is_observed_by_the_rmcp_task() {
    let (url, seen) = serve().await;
    let client = connect(&url, tasks_client()).await;
    let handle = within("call", client.call_tool_as_task("wait_cancel", json!({})))
        .await
        .unwrap();
    let task_id = handle.id().unwrap().to_owned();
    within("cancel", handle.cancel()).await.unwrap();
    within("rmcp sees the cancel", seen.cancelled.notified()).await;
    assert_eq!(*seen.cancelled_ids.lock().unwrap(), [task_id.as_str()]);
    until_status(&client, &task_id, TaskStatus::Cancelled).await;
    client.close().await;
}

/// Dropping an unfinished handle sends `tasks/cancel` too; a detached one lets the task run on
/// to its result.
#[actix_web::test]
async fn dropping_a_handle_cancels_the_rmcp_task_unless_detached() {
    let (url, seen) = serve().await;
    let client = connect(&url, tasks_client()).await;
    let handle = within("call", client.call_tool_as_task("wait_cancel", json!({})))
        .await
        .unwrap();
    let dropped = handle.id().unwrap().to_owned();
    drop(handle);
    within("rmcp sees the cancel", seen.cancelled.notified()).await;
    until_status(&client, &dropped, TaskStatus::Cancelled).await;

    let handle = within("call", client.call_tool_as_task("wait_cancel", json!({})))
        .await
        .unwrap();
    let detached = handle.detach().unwrap();
    let task = within("tasks/get", client.get_task(&detached))
        .await
        .unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    seen.gate.notify_one();
    let resumed = within("resume", client.task(&detached)).await.unwrap();
    let result = within("result", resumed.result()).await.unwrap();
    assert_eq!(result.text_content(), "finished");
    assert_eq!(*seen.cancelled_ids.lock().unwrap(), [dropped]);
    client.close().await;
}

/// A cancel while the task waits for input wakes rmcp's `request_input` (its pending input is
/// dropped): the operation sees it, and the task settles `cancelled`.
#[actix_web::test]
async fn cancel_wakes_a_task_waiting_for_input() {
    let (url, seen) = serve().await;
    let client = connect(&url, tasks_client().auto_input(false)).await;
    let mut handle = within("call", client.call_tool_as_task("ask_name", json!({})))
        .await
        .unwrap();
    let task_id = handle.id().unwrap().to_owned();
    let round = match within("wait", handle.wait()).await {
        Err(ClientError::InputRequired(round)) => round,
        other => panic!("expected input_required, got {other:?}"),
    };
    let keys: Vec<String> = round
        .input_requests
        .map(|requests| requests.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["name"]);
    assert_eq!(handle.status(), TaskStatus::InputRequired);
    within("cancel", handle.cancel()).await.unwrap();
    within("rmcp sees the cancel", seen.cancelled.notified()).await;
    until_status(&client, &task_id, TaskStatus::Cancelled).await;
    assert!(seen.answers.lock().unwrap().is_empty());
    client.close().await;
}

/// A task that fails (`TaskExit::Error`: status `failed`, the JSON-RPC error inlined) is the
/// error's `ClientError::Rpc`; a tool error (`isError` result: status `completed`) is a result
/// with `is_error`.
#[actix_web::test]
async fn failures_surface_as_the_error_or_an_error_result() {
    let (url, seen) = serve().await;
    let client = connect(&url, tasks_client()).await;

    let handle = within("call", client.call_tool_as_task("fail", json!({})))
        .await
        .unwrap();
    let task_id = handle.id().unwrap().to_owned();
    seen.gate.notify_one();
    match within("result", handle.result()).await {
        Err(ClientError::Rpc(error)) => {
            assert_eq!(error.code.0, -32603, "{error:?}");
            assert_eq!(error.message, "database write failed");
            assert_eq!(error.data, Some(json!({ "table": "orders" })));
        }
        other => panic!("expected the task's error, got {other:?}"),
    }
    let task = within("tasks/get", client.get_task(&task_id))
        .await
        .unwrap();
    assert_eq!(task.status, TaskStatus::Failed);

    let handle = within("call", client.call_tool_as_task("tool_error", json!({})))
        .await
        .unwrap();
    assert!(handle.id().is_some());
    seen.gate.notify_one();
    let result = within("result", handle.result()).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(result.text_content(), "bad input");
    client.close().await;
}

/// rmcp runs every call of these tools as a task: a plain `call_tool` waits for the task
/// transparently (and answers its input); without the extension declared, rmcp refuses the
/// task with -32021.
#[actix_web::test]
async fn a_plain_call_waits_for_the_task() {
    let (url, seen) = serve().await;
    let client = connect(&url, tasks_client()).await;
    let opener = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        seen.gate.notify_one();
    };
    let (result, ()) = within(
        "plain call",
        futures::future::join(client.call_tool("sum", json!({ "a": 2, "b": 3 })), opener),
    )
    .await;
    assert_eq!(result.unwrap().text_content(), "5");
    let greeting = within("plain call", client.call_tool("ask_name", json!({})))
        .await
        .unwrap();
    assert_eq!(greeting.text_content(), "hello Ada");
    client.close().await;

    let plain = connect(
        &url,
        Client::builder("plain", "1.0.0").lifecycle(Lifecycle::V2026),
    )
    .await;
    match within(
        "plain call",
        plain.call_tool("sum", json!({ "a": 1, "b": 1 })),
    )
    .await
    {
        Err(ClientError::Rpc(error)) => assert_eq!(error.code.0, -32021, "{error:?}"),
        other => panic!("expected -32021, got {other:?}"),
    }
    plain.close().await;
}
