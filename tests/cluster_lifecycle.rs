//! Lives that span the nodes of a cluster (in one process: the in-memory stores and bus the
//! Redis ones stand in for): a session's handshake finished on another node than the one that
//! ran `initialize` (read from the store, not told on the bus), and the tasks of a node that drains (they finish, or fail with a reason
//! every node reports), whose final state is written however the store stumbles.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>,
//! <https://modelcontextprotocol.io/seps/2663-tasks-extension>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::cluster::{Bus, SessionStore};
use actix_mcp::cluster::{Cluster, InMemorySessionStore, LocalBus};
use reqwest::StatusCode;
use serde_json::json;

use common::http::{TestServer, spawn};
use common::http_tools::{Fixture, fixture};
use common::sse::SseReader;
use common::task_tools::{until_status, v2026};

/// Two nodes sharing `store` and `bus`, each closing sessions whose handshake is not complete
/// `handshake` after `initialize`.
fn nodes(
    store: &Arc<InMemorySessionStore>,
    bus: &Arc<LocalBus>,
    handshake: Duration,
) -> [(Fixture, TestServer); 2] {
    [0, 1].map(|_| {
        let fixture = fixture();
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        let mcp = fixture
            .server
            .http("/mcp")
            .cluster(cluster)
            .handshake_timeout(Some(handshake));
        let server = spawn(mcp, 1);
        (fixture, server)
    })
}

/// `initialize` on A, `notifications/initialized` on B (as round robin does): the end of the
/// handshake is only stored. A's actor of the session, kept busy by its GET stream, stays,
/// and what A raises reaches that stream; the actor of another session left idle on A is
/// closed by A's handshake timer, and that session's next request on A is served from the
/// stored record.
#[actix_web::test]
async fn a_handshake_finished_on_another_node_is_read_from_the_store() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let handshake = Duration::from_millis(300);
    let [(fa, a), (_fb, b)] = nodes(&store, &bus, handshake);
    let mut on_a = a.client();
    on_a.initialize_unfinished("split").await;
    let response = on_a.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);

    let on_b = on_a.at(&b.url);
    on_b.notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    let mut idle_on_a = a.client();
    idle_on_a.initialize_unfinished("idle").await;
    idle_on_a
        .at(&b.url)
        .notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(a.mcp.session_count(), 2);

    // Well past A's handshake timer (its sweep runs every quarter of it).
    tokio::time::sleep(handshake * 3).await;
    assert_eq!(
        a.mcp.session_count(),
        1,
        "A's busy actor must stay, its idle one go"
    );
    fa.server.notify_tools_list_changed();
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/tools/list_changed");
    common::http::assert_ping(&idle_on_a, 7).await;
    assert_eq!(a.mcp.session_count(), 2);
    a.stop().await;
    b.stop().await;
}

/// A session has one standalone stream in the whole cluster, as on one node: a GET stream
/// opened (or resumed) on B ends the one on A, and what A raises then reaches the stream on B,
/// not a stream its client has left.
#[actix_web::test]
async fn a_get_stream_opened_on_another_node_replaces_the_first() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [(fa, a), (_fb, b)] = nodes(&store, &bus, Duration::from_secs(10));
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let mut first = SseReader::new(on_a.get(None).await);
    fa.server.notify_tools_list_changed();
    let (seen, _) = first.next_message_with_id().await;
    let on_b = on_a.at(&b.url);
    let mut second = SseReader::new(on_b.get(seen.as_deref()).await);
    first.expect_end().await;
    fa.server.notify_prompts_list_changed();
    assert_eq!(
        second.next_message().await["method"],
        "notifications/prompts/list_changed"
    );
    a.stop().await;
    b.stop().await;
}

/// `sleepy` (a task): sleeps `ms`, then answers "slept"; `endless` (a task): runs until
/// cancelled.
fn task_tools(builder: actix_mcp::ServerBuilder) -> actix_mcp::ServerBuilder {
    use actix_mcp::protocol::TaskSupport;
    use actix_mcp::{McpError, RequestContext, ToolDef};

    #[derive(serde::Deserialize, actix_mcp::schemars::JsonSchema)]
    struct Sleep {
        ms: u64,
    }

    builder
        .tool(
            ToolDef::new(
                "sleepy",
                |actix_mcp::Params(args): actix_mcp::Params<Sleep>| async move {
                    tokio::time::sleep(Duration::from_millis(args.ms)).await;
                    "slept"
                },
            )
            .description("sleeps")
            .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("endless", |cx: RequestContext| async move {
                cx.cancelled().await;
                Err::<&str, _>(McpError::internal("cancelled"))
            })
            .description("runs until cancelled")
            .task_support(TaskSupport::Optional),
        )
}

/// Two nodes running tasks, sharing the session store, the bus and `tasks`.
fn task_nodes(tasks: &Arc<actix_mcp::InMemoryTaskStore>) -> [TestServer; 2] {
    use actix_mcp::{Server, TaskConfig};

    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    [0, 1].map(|_| {
        let server = task_tools(Server::builder("cluster-tasks", "1.0.0"))
            .tasks(TaskConfig::default().store(tasks.clone()))
            .build()
            .unwrap();
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        spawn(server.http("/mcp").cluster(cluster), 1)
    })
}

/// Calls `tool` with `arguments` on `url` as a task: its id.
async fn start_task(url: &str, tool: &str, arguments: serde_json::Value) -> String {
    let created = v2026(
        url,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    )
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

/// A drain waits for the node's running tasks as for its requests: a task that ends before the
/// deadline ends there, and every node reports it completed.
#[actix_web::test]
async fn a_draining_node_lets_its_tasks_finish() {
    let tasks = Arc::new(actix_mcp::InMemoryTaskStore::new());
    let [a, b] = task_nodes(&tasks);
    let task_id = start_task(&a.url, "sleepy", json!({"ms": 400})).await;
    let report = a.mcp.drain(Duration::from_secs(5)).await;
    assert!(
        report.elapsed >= Duration::from_millis(300),
        "the drain waited for the task: {report:?}"
    );
    a.stop().await;
    let task = until_status(&b.url, &task_id, "completed").await;
    assert_eq!(task["result"]["content"][0]["text"], "slept", "{task}");
    b.stop().await;
}

/// A task still running at the drain's deadline is ended: `failed`, with a reason any node
/// reports, not `working` until its time to live.
#[actix_web::test]
async fn a_task_running_at_the_drain_deadline_fails_with_a_reason() {
    let tasks = Arc::new(actix_mcp::InMemoryTaskStore::new());
    let [a, b] = task_nodes(&tasks);
    let task_id = start_task(&a.url, "endless", json!({})).await;
    a.mcp.drain(Duration::from_millis(300)).await;
    a.stop().await;
    let task = until_status(&b.url, &task_id, "failed").await;
    let reason = task["statusMessage"].as_str().unwrap_or_default();
    assert!(reason.contains("shut down"), "{task}");
    assert!(
        task["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("shut down")),
        "{task}"
    );
    b.stop().await;
}

/// A task store whose writes of a final state fail `failures` times.
#[derive(Debug)]
struct Stumbling {
    inner: actix_mcp::InMemoryTaskStore,
    failures: std::sync::atomic::AtomicUsize,
}

impl actix_mcp::TaskStore for Stumbling {
    fn create(
        &self,
        task: actix_mcp::StoredTask,
        limit: usize,
    ) -> futures::future::BoxFuture<'_, Result<(), actix_mcp::TaskStoreError>> {
        self.inner.create(task, limit)
    }

    fn get(
        &self,
        task_id: &str,
    ) -> futures::future::BoxFuture<
        '_,
        Result<Option<actix_mcp::StoredTask>, actix_mcp::TaskStoreError>,
    > {
        self.inner.get(task_id)
    }

    fn update(
        &self,
        task: actix_mcp::StoredTask,
    ) -> futures::future::BoxFuture<'_, Result<bool, actix_mcp::TaskStoreError>> {
        use std::sync::atomic::Ordering;
        let fail = task.task.is_terminal()
            && self
                .failures
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                    left.checked_sub(1)
                })
                .is_ok();
        if fail {
            return Box::pin(std::future::ready(Err(actix_mcp::TaskStoreError::Backend(
                "the store stumbled".into(),
            ))));
        }
        self.inner.update(task)
    }

    fn delete(
        &self,
        task_id: &str,
    ) -> futures::future::BoxFuture<'_, Result<bool, actix_mcp::TaskStoreError>> {
        self.inner.delete(task_id)
    }

    fn purge_expired(
        &self,
    ) -> futures::future::BoxFuture<'_, Result<usize, actix_mcp::TaskStoreError>> {
        self.inner.purge_expired()
    }
}

/// A node whose task store fails `failures` writes of a final state, and what its exception
/// reporter received.
fn stumbling_node(failures: usize) -> (TestServer, Arc<std::sync::Mutex<Vec<String>>>) {
    use actix_mcp::{Server, TaskConfig};

    let reported: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let reports = reported.clone();
    let server = task_tools(Server::builder("stumbling", "1.0.0"))
        .tasks(TaskConfig::default().store(Stumbling {
            inner: actix_mcp::InMemoryTaskStore::new(),
            failures: failures.into(),
        }))
        .exception_reporter(move |report| reports.lock().unwrap().push(report.message.clone()))
        .build()
        .unwrap();
    (spawn(server.http("/mcp"), 1), reported)
}

/// A final state whose write fails is written again (with a backoff), not only logged.
#[actix_web::test]
async fn a_final_state_is_written_again_when_its_write_fails() {
    let (node, reported) = stumbling_node(2);
    let task_id = start_task(&node.url, "sleepy", json!({"ms": 10})).await;
    let task = until_status(&node.url, &task_id, "completed").await;
    assert_eq!(task["result"]["content"][0]["text"], "slept", "{task}");
    assert!(reported.lock().unwrap().is_empty());
    node.stop().await;
}

/// A final state that cannot be written after the retries is reported to the server's
/// exception reporter.
#[actix_web::test]
async fn a_final_state_never_written_is_reported() {
    let (node, reported) = stumbling_node(usize::MAX);
    start_task(&node.url, "sleepy", json!({"ms": 10})).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while reported.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "nothing reported");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let reports = reported.lock().unwrap().clone();
    assert!(
        reports[0].contains("completed") && reports[0].contains("the store stumbled"),
        "{reports:?}"
    );
    node.stop().await;
}
