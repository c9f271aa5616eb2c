//! The Tasks extension (`io.modelcontextprotocol/tasks`) on our client, against our server
//! connected in memory in the 2026-07-28 era: a task handle that completes, fails, answers
//! `input_required` through the builder's elicitation handler, cancels when asked or dropped;
//! a plain `call_tool` of a tool that requires a task; and the refusals (2025 era, extension
//! not declared).
//!
//! Tools wait on [`Notify`] gates the tests open, never on timers; every wait is bounded.
#![cfg(all(feature = "http", feature = "client"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::client::{Client, ClientBuilder, ClientError, ClientExtension, Lifecycle};
use actix_mcp::protocol::{
    ElicitAction, ElicitRequestParams, ElicitResult, TaskStatus, TaskSupport,
};
use actix_mcp::{McpError, RequestContext, Server, TaskConfig, ToolDef};
use serde_json::json;
use tokio::sync::Notify;

use common::task_tools::two_questions;
use common::{WAIT, within, within_for};

/// A tool that runs until `gate` opens, then answers "done" (or stops when cancelled, telling
/// `cancelled`).
fn gated(name: &str, gate: Arc<Notify>, cancelled: Arc<Notify>) -> ToolDef {
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

fn server(tools: Vec<ToolDef>) -> Server {
    server_polled_every(Duration::from_millis(20), tools)
}

fn server_polled_every(interval: Duration, tools: Vec<ToolDef>) -> Server {
    let mut builder =
        Server::builder("tasks-test", "1.0.0").tasks(TaskConfig::default().poll_interval(interval));
    for tool in tools {
        builder = builder.tool(tool);
    }
    builder.build().unwrap()
}

/// A 2026 client declaring the extension.
fn tasks_client() -> ClientBuilder {
    Client::builder("tasks-client", "1.0.0")
        .lifecycle(Lifecycle::V2026)
        .extension(ClientExtension::tasks())
}

async fn connect(server: &Server, builder: ClientBuilder) -> Client {
    within(actix_mcp::testing::connect(server, builder))
        .await
        .unwrap()
}

/// Polls the server (`tasks/get`) until the task is `status`.
async fn until_status(client: &Client, task_id: &str, status: TaskStatus) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let task = within(client.get_task(task_id)).await.unwrap();
        if task.status == status {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {task_id} never {status:?}: {task:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A slow call becomes a task the handle follows to the tool's result; a fast one is
/// answered inline, and its handle holds the result without a task.
#[actix_web::test]
async fn a_task_handle_resolves_to_the_tools_result() {
    let gate = Arc::new(Notify::new());
    let server = server(vec![
        gated("slow", gate.clone(), Arc::default()).task_support(TaskSupport::Optional),
        ToolDef::new("fast", |_cx: RequestContext| async { "quick" })
            .description("answers at once")
            .task_support(TaskSupport::Optional),
    ]);
    let client = connect(&server, tasks_client()).await;

    let mut handle = within(client.call_tool_as_task("slow", json!({})))
        .await
        .unwrap();
    let task_id = handle.id().unwrap().to_owned();
    assert_eq!(handle.status(), TaskStatus::Working);
    assert_eq!(within(handle.poll()).await.unwrap(), TaskStatus::Working);
    gate.notify_one();
    let result = within(handle.result()).await.unwrap();
    assert_eq!(result.text_content(), "done");
    // Finished: the task is still there, completed (the handle's drop cancelled nothing).
    until_status(&client, &task_id, TaskStatus::Completed).await;

    let inline = within(client.call_tool_as_task("fast", json!({})))
        .await
        .unwrap();
    assert_eq!(inline.id(), None);
    assert!(inline.is_finished());
    assert_eq!(
        within(inline.result()).await.unwrap().text_content(),
        "quick"
    );
    client.close().await;
}

/// A tool error is a completed task with an `isError` result; a crashed tool is a failed task,
/// whose JSON-RPC error the handle returns.
#[actix_web::test]
async fn a_failing_tool_gives_its_error() {
    let gate = Arc::new(Notify::new());
    let (erring, crashing) = (gate.clone(), gate.clone());
    let server = server(vec![
        ToolDef::new("erring", move |_cx: RequestContext| {
            let gate = erring.clone();
            async move {
                gate.notified().await;
                Err::<String, _>(McpError::tool("bad input"))
            }
        })
        .description("fails as a tool")
        .task_support(TaskSupport::Optional),
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
        .task_support(TaskSupport::Optional),
    ]);
    let client = connect(&server, tasks_client()).await;

    // Polling only, for once.
    let handle = within(client.call_tool_as_task("erring", ()))
        .await
        .unwrap()
        .listen(false);
    assert!(handle.id().is_some());
    gate.notify_one();
    let result = within(handle.result()).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(result.text_content().contains("bad input"), "{result:?}");

    let handle = within(client.call_tool_as_task("crashing", ()))
        .await
        .unwrap();
    assert!(handle.id().is_some());
    gate.notify_one();
    match within(handle.result()).await {
        Err(ClientError::Rpc(error)) => assert_eq!(error.code.0, -32603, "{error:?}"),
        other => panic!("expected the task's error, got {other:?}"),
    }
    client.close().await;
}

/// A task in `input_required` is answered by the builder's elicitation handler, through
/// `tasks/update`, and then completes with both answers.
#[actix_web::test]
async fn input_required_is_answered_by_the_elicitation_handler() {
    let server = server(vec![two_questions()]);
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let builder = tasks_client().elicitation(move |params: ElicitRequestParams, _| {
        let seen = seen.clone();
        async move {
            let message = params.message().to_owned();
            seen.lock().unwrap().push(message.clone());
            let content = if message == "Name?" {
                json!({ "name": "Ada" })
            } else {
                json!({ "color": "green" })
            };
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = content.as_object().cloned();
            Ok(result)
        }
    });
    let client = connect(&server, builder).await;
    let handle = within(client.call_tool_as_task("two_questions", ()))
        .await
        .unwrap();
    assert!(handle.id().is_some(), "the call was not run as a task");
    let result = within(handle.result()).await.unwrap();
    assert_eq!(result.text_content(), "Ada likes green");
    let mut asked = asked.lock().unwrap().clone();
    asked.sort();
    assert_eq!(asked, ["Color?", "Name?"]);
    client.close().await;
}

/// Without its own answers (auto input off) the wait stops with the input requests, and the
/// handle answers them by hand.
#[actix_web::test]
async fn input_can_be_answered_by_hand() {
    let server = server(vec![two_questions()]);
    let builder = tasks_client()
        .auto_input(false)
        .elicitation(|_: ElicitRequestParams, _| async {
            Ok(ElicitResult::new(ElicitAction::Decline))
        });
    let client = connect(&server, builder).await;
    let mut handle = within(client.call_tool_as_task("two_questions", ()))
        .await
        .unwrap();
    let round = match within(handle.wait()).await {
        Err(ClientError::InputRequired(round)) => round,
        other => panic!("expected input_required, got {other:?}"),
    };
    let keys: Vec<String> = round
        .input_requests
        .map(|requests| requests.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(keys.len(), 2, "{keys:?}");
    let responses = json!({
        "name": { "action": "accept", "content": { "name": "Bob" } },
        "color": { "action": "accept", "content": { "color": "red" } },
    });
    within(handle.update(responses.as_object().cloned().unwrap()))
        .await
        .unwrap();
    let result = within(handle.result()).await.unwrap();
    assert_eq!(result.text_content(), "Bob likes red");
    client.close().await;
}

/// `cancel` sends `tasks/cancel`: the server's task is cancelled and the tool sees it.
#[actix_web::test]
async fn cancel_cancels_the_task_at_the_server() {
    let cancelled = Arc::new(Notify::new());
    let server = server(vec![
        gated("slow", Arc::default(), cancelled.clone()).task_support(TaskSupport::Optional),
    ]);
    let client = connect(&server, tasks_client()).await;
    let handle = within(client.call_tool_as_task("slow", ())).await.unwrap();
    let task_id = handle.id().unwrap().to_owned();
    within(handle.cancel()).await.unwrap();
    let task = within(client.get_task(&task_id)).await.unwrap();
    assert_eq!(task.status, TaskStatus::Cancelled);
    within(cancelled.notified()).await;
    client.close().await;
}

/// Dropping an unfinished handle sends `tasks/cancel`; a detached one lets its task run on.
#[actix_web::test]
async fn dropping_a_handle_cancels_its_task_unless_detached() {
    let (gate, cancelled) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let server = server(vec![
        gated("slow", gate.clone(), cancelled.clone()).task_support(TaskSupport::Optional),
    ]);
    let client = connect(&server, tasks_client()).await;
    let handle = within(client.call_tool_as_task("slow", ())).await.unwrap();
    let task_id = handle.id().unwrap().to_owned();
    drop(handle);
    until_status(&client, &task_id, TaskStatus::Cancelled).await;
    within(cancelled.notified()).await;

    let handle = within(client.call_tool_as_task("slow", ())).await.unwrap();
    let task_id = handle.detach().unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let task = within(client.get_task(&task_id)).await.unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    gate.notify_one();
    let resumed = within(client.task(&task_id)).await.unwrap();
    assert_eq!(
        within(resumed.result()).await.unwrap().text_content(),
        "done"
    );
    client.close().await;
}

/// A plain `call_tool` of a tool that runs only as a task waits for the task transparently,
/// whether it is still running or finished at once.
#[actix_web::test]
async fn a_plain_call_of_a_required_task_tool_waits_for_the_task() {
    let gate = Arc::new(Notify::new());
    let server = server(vec![
        gated("required", gate.clone(), Arc::default()).task_support(TaskSupport::Required),
        ToolDef::new("instant", |_cx: RequestContext| async { "at once" })
            .description("answers at once")
            .task_support(TaskSupport::Required),
    ]);
    let client = connect(&server, tasks_client()).await;
    let opener = {
        let gate = gate.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            gate.notify_one();
        }
    };
    let (result, ()) = within(futures::future::join(
        client.call_tool("required", json!({})),
        opener,
    ))
    .await;
    assert_eq!(result.unwrap().text_content(), "done");
    let instant = within(client.call_tool("instant", ())).await.unwrap();
    assert_eq!(instant.text_content(), "at once");
    client.close().await;
}

/// Tasks need the extension declared on both sides and the 2026 era: otherwise
/// `call_tool_as_task` sends nothing and fails (`InvalidConfig` for the client's side,
/// `Unsupported` for the server's or the era); a required-task tool called
/// without the extension is refused by the server with `-32021`.
#[actix_web::test]
async fn tasks_need_the_extension_and_the_2026_era() {
    let server = server(vec![
        gated("required", Arc::default(), Arc::default()).task_support(TaskSupport::Required),
    ]);
    let plain = connect(
        &server,
        Client::builder("plain", "1.0.0").lifecycle(Lifecycle::V2026),
    )
    .await;
    let refused = within(plain.call_tool_as_task("required", ())).await;
    assert!(
        matches!(refused, Err(ClientError::InvalidConfig(_))),
        "{refused:?}"
    );
    match within(plain.call_tool("required", ())).await {
        Err(ClientError::Rpc(error)) => assert_eq!(error.code.0, -32021, "{error:?}"),
        other => panic!("expected -32021, got {other:?}"),
    }
    plain.close().await;

    let old = connect(
        &server,
        Client::builder("old", "1.0.0")
            .lifecycle(Lifecycle::V2025)
            .extension(ClientExtension::tasks()),
    )
    .await;
    let refused = within(old.call_tool_as_task("required", ())).await;
    assert!(
        matches!(refused, Err(ClientError::Unsupported(_))),
        "{refused:?}"
    );
    old.close().await;

    let no_tasks = Server::builder("no-tasks", "1.0.0")
        .tool(ToolDef::new("t", |_cx: RequestContext| async { "x" }).description("x"))
        .build()
        .unwrap();
    let client = connect(&no_tasks, tasks_client()).await;
    let refused = within(client.call_tool_as_task("t", ())).await;
    assert!(
        matches!(refused, Err(ClientError::Unsupported(_))),
        "{refused:?}"
    );
    client.close().await;
}

/// Waiting follows the task's `notifications/tasks` on a listen stream: the result arrives
/// long before the next poll the server asks for (a minute, kept to five seconds).
#[actix_web::test]
async fn waiting_follows_the_tasks_notifications() {
    let gate = Arc::new(Notify::new());
    let server = server_polled_every(
        Duration::from_secs(60),
        vec![gated("slow", gate.clone(), Arc::default()).task_support(TaskSupport::Optional)],
    );
    let client = connect(&server, tasks_client()).await;
    let handle = within(client.call_tool_as_task("slow", ())).await.unwrap();
    let opener = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        gate.notify_one();
    };
    let (result, ()) = within_for(
        Duration::from_secs(3),
        futures::future::join(handle.result(), opener),
    )
    .await;
    assert_eq!(result.unwrap().text_content(), "done");
    client.close().await;
}

/// A plain call waiting for a task cancels the task when its future is dropped; a handle's
/// wait past its timeout fails with `Timeout` and leaves the handle usable.
#[actix_web::test]
async fn an_abandoned_wait_cancels_and_a_timed_out_one_does_not() {
    let cancelled = Arc::new(Notify::new());
    let server = server(vec![
        gated("required", Arc::default(), cancelled.clone()).task_support(TaskSupport::Required),
    ]);
    let client = connect(&server, tasks_client()).await;
    let abandoned =
        tokio::time::timeout(Duration::from_millis(200), client.call_tool("required", ())).await;
    assert!(abandoned.is_err(), "{abandoned:?}");
    within(cancelled.notified()).await;

    let mut handle = within(client.call_tool_as_task("required", ()))
        .await
        .unwrap()
        .timeout(Some(Duration::from_millis(100)));
    match within(handle.wait()).await {
        Err(ClientError::Timeout(limit)) => assert_eq!(limit, Duration::from_millis(100)),
        other => panic!("expected a timeout, got {other:?}"),
    }
    let task_id = handle.id().unwrap().to_owned();
    assert_eq!(within(handle.poll()).await.unwrap(), TaskStatus::Working);
    within(handle.cancel()).await.unwrap();
    until_status(&client, &task_id, TaskStatus::Cancelled).await;
    within(cancelled.notified()).await;
    client.close().await;
}

/// Two tasks waited for at once follow one listen stream, whose filter names both (the
/// client does not hold a stream per task), and both results arrive by their notifications,
/// long before the next poll the server asks for.
#[actix_web::test]
async fn the_tasks_waited_for_share_one_listen_stream() {
    let gates = [Arc::new(Notify::new()), Arc::new(Notify::new())];
    let filters = Arc::new(std::sync::Mutex::new(Vec::<serde_json::Value>::new()));
    let seen = filters.clone();
    let listens = actix_mcp::Middleware::new("listens").before(move |request| {
        if request.method() == "subscriptions/listen" {
            let ids = request
                .param("notifications")
                .and_then(|filter| filter.get("taskIds"))
                .cloned()
                .unwrap_or_default();
            seen.lock().unwrap().push(ids);
        }
        actix_mcp::Flow::Continue
    });
    let server = Server::builder("tasks-test", "1.0.0")
        .tasks(TaskConfig::default().poll_interval(Duration::from_secs(60)))
        .tool(gated("first", gates[0].clone(), Arc::default()).task_support(TaskSupport::Optional))
        .tool(gated("second", gates[1].clone(), Arc::default()).task_support(TaskSupport::Optional))
        .middleware(listens)
        .build()
        .unwrap();
    let client = connect(&server, tasks_client()).await;
    let first = within(client.call_tool_as_task("first", ())).await.unwrap();
    let second = within(client.call_tool_as_task("second", ()))
        .await
        .unwrap();
    let ids = [
        first.id().unwrap().to_owned(),
        second.id().unwrap().to_owned(),
    ];
    let opener = async {
        // Both handles wait (and have joined the stream) before the tools finish.
        tokio::time::sleep(Duration::from_millis(500)).await;
        gates[0].notify_one();
        tokio::time::sleep(Duration::from_millis(200)).await;
        gates[1].notify_one();
    };
    let (first, second, ()) = within_for(
        Duration::from_secs(4),
        futures::future::join3(first.result(), second.result(), opener),
    )
    .await;
    assert_eq!(first.unwrap().text_content(), "done");
    assert_eq!(second.unwrap().text_content(), "done");
    let filters = filters.lock().unwrap().clone();
    let mut both = ids.to_vec();
    both.sort();
    assert!(
        filters.iter().any(|ids| ids == &json!(both)),
        "no listen named both tasks: {filters:?}"
    );
    assert!(
        filters.len() <= 3,
        "one stream per change of the set: {filters:?}"
    );
    client.close().await;
}
