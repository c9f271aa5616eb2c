//! Several nodes serving one session (in one process: the in-memory session store and bus that
//! the Redis ones stand in for across processes). Every consecutive request of a session lands
//! on another node: initialize on A, requests on B, a sampling answer posted to A for a tool
//! waiting on B, a GET stream on B receiving what A raises, DELETE on one ending it on all.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use actix_mcp::LogMessage;
use actix_mcp::cluster::{Bus, SessionStore};
use actix_mcp::cluster::{Cluster, InMemorySessionStore, LocalBus};
use reqwest::StatusCode;
use serde_json::json;

use common::http::{SAMPLING, TestServer, caps, eventually, spawn, text_of};
use common::http_tools::{Fixture, fixture};
use common::sse::SseReader;
use common::task_tools::{two_questions, until_status, v2026};

/// Two nodes: each its own server (built the same way) and endpoint, sharing `store` and `bus`.
fn nodes(store: &Arc<InMemorySessionStore>, bus: &Arc<LocalBus>) -> [(Fixture, TestServer); 2] {
    [0, 1].map(|_| {
        let fixture = fixture();
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        let server = spawn(fixture.server.http("/mcp").cluster(cluster), 1);
        (fixture, server)
    })
}

#[actix_web::test]
async fn any_node_serves_any_session() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [(_fa, a), (_fb, b)] = nodes(&store, &bus);
    let mut on_a = a.client();
    on_a.initialize(caps(SAMPLING)).await;
    assert_eq!(store.len(), 1);
    let on_b = on_a.at(&b.url);

    // B has never seen the session: it serves it from the store.
    let listed = on_b.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.response);
    assert!(listed.response["result"]["tools"].as_array().unwrap().len() > 3);
    let echoed = on_b
        .call_ok(json!(2), "echo", json!({"message": "hi"}))
        .await;
    assert_eq!(text_of(&echoed), "hi");

    // A sampling request from a tool running on B, answered through A.
    assert_eq!(
        on_b.sample_answered_by(&on_a, 3, "from A").await,
        "sampled: from A"
    );

    // DELETE on B ends it on A too.
    assert_eq!(on_b.delete().await, StatusCode::OK);
    let gone = on_a.request(json!(4), "tools/list", json!({})).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.response);
    assert!(store.is_empty());
    eventually("A drops its local session", || a.mcp.session_count() == 0).await;
    a.stop().await;
    b.stop().await;
}

/// What one node raises reaches the GET stream open on another; state set on one node
/// (subscriptions) is known on the others.
#[actix_web::test]
async fn notifications_reach_the_stream_on_another_node() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [(fa, a), (_fb, b)] = nodes(&store, &bus);
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    let response = on_b.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);

    // A change of A's catalog: every node's sessions hear it.
    fa.server.notify_tools_list_changed();
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/tools/list_changed");

    // Subscribed through A, updated on A: the stream on B gets it.
    let subscribed = on_a
        .request(
            json!(1),
            "resources/subscribe",
            json!({"uri": "test://watched"}),
        )
        .await;
    assert_eq!(subscribed.status, StatusCode::OK, "{}", subscribed.response);
    // B's copy of the session takes the subscription from the bus, or at the latest from the
    // store with its next request.
    let pinged = on_b.request(json!(2), "ping", json!({})).await;
    assert_eq!(pinged.status, StatusCode::OK);
    fa.server.notify_resource_updated("test://watched");
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/resources/updated");
    assert_eq!(message["params"]["uri"], "test://watched");

    // A log message to every session, from A.
    fa.server.notify_log_message(LogMessage::new(
        actix_mcp::protocol::LoggingLevel::Warning,
        json!("from A"),
    ));
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/message");
    assert_eq!(message["params"]["data"], "from A");
    a.stop().await;
    b.stop().await;
}

/// A session unknown to the store is unknown to every node; one of another owner too.
#[actix_web::test]
async fn unknown_sessions_are_404_on_every_node() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [(_fa, a), (_fb, b)] = nodes(&store, &bus);
    let mut client = b.client();
    client.session = Some("no-such-session".into());
    client.version = Some("2025-11-25".into());
    let answer = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.response["id"], 1);
    assert_eq!(client.delete().await, StatusCode::NOT_FOUND);
    a.stop().await;
    b.stop().await;
}

/// A `subscriptions/listen` stream (protocol 2026-07-28, no session) open on B hears the list
/// changes A raises.
#[actix_web::test]
async fn listen_streams_hear_every_node() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [(fa, a), (_fb, b)] = nodes(&store, &bus);
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "cluster-test", "version": "1"},
            },
            "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://x"]},
        },
    });
    let response = common::http::send(
        common::http::http_client()
            .post(&b.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "subscriptions/listen")
            .body(body.to_string()),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);
    let ack = stream.next_message().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    // The fixture offers tools (their list changes) but no resources to subscribe to.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    fa.server.notify_tools_list_changed();
    let change = stream.next_message().await;
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    a.stop().await;
    b.stop().await;
}

/// With a store that counts sessions, the cap is the cluster's: what one node holds counts on
/// the other.
#[actix_web::test]
async fn the_session_cap_is_per_cluster() {
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [a, b] = [0, 1].map(|_| {
        let fixture = fixture();
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        let server = spawn(
            fixture.server.http("/mcp").cluster(cluster).max_sessions(1),
            1,
        );
        (fixture, server)
    });
    a.1.client().initialize(json!({})).await;
    let refused = b.1.client().initialize_only("second").await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.response
    );
    assert!(refused.headers.get("mcp-session-id").is_none());
    assert_eq!(
        b.1.mcp.session_count(),
        0,
        "the refused session is not kept"
    );
    assert_eq!(store.len(), 1);
    a.1.stop().await;
    b.1.stop().await;
}

/// A bus as slow as a network's: every message takes [`SlowBus::DELAY`] to leave, so a node
/// that answered before another node acted on its message shows.
#[derive(Debug, Default)]
struct SlowBus(LocalBus);

impl SlowBus {
    const DELAY: std::time::Duration = std::time::Duration::from_millis(30);
}

impl Bus for SlowBus {
    fn publish(
        &self,
        envelope: actix_mcp::cluster::Envelope,
    ) -> actix_mcp::cluster::StoreFuture<'_, ()> {
        Box::pin(async move {
            tokio::time::sleep(Self::DELAY).await;
            self.0.publish(envelope).await
        })
    }

    fn subscribe(
        &self,
        node: &actix_mcp::cluster::NodeId,
    ) -> futures::future::BoxFuture<
        'static,
        futures::stream::BoxStream<'static, actix_mcp::cluster::Envelope>,
    > {
        self.0.subscribe(node)
    }
}

/// Two nodes whose servers run tasks, sharing the session store, a [`SlowBus`] and `tasks`;
/// each has a task tool asking two questions at once.
fn task_nodes(tasks: &Arc<actix_mcp::InMemoryTaskStore>) -> [TestServer; 2] {
    use actix_mcp::{Server, TaskConfig};

    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(SlowBus::default());
    [0, 1].map(|_| {
        let server = Server::builder("cluster-tasks", "1.0.0")
            .tasks(TaskConfig::default().store(tasks.clone()))
            .tool(two_questions())
            .build()
            .unwrap();
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        spawn(server.http("/mcp").cluster(cluster), 1)
    })
}

/// Starts `two_questions` as a task on `on`, and waits (reading through `on`) until it asks.
async fn parked_task(on: &TestServer) -> String {
    let created = v2026(
        &on.url,
        "tools/call",
        json!({ "name": "two_questions", "arguments": {} }),
    )
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    until_status(&on.url, &task_id, "input_required").await;
    task_id
}

/// `tasks/update` on `url` answering `key` of `two_questions` with `value`: the response.
async fn answer(url: &str, task_id: &str, key: &str, value: &str) -> serde_json::Value {
    let params = json!({
        "taskId": task_id,
        "inputResponses": { key: { "action": "accept", "content": { key: value } } },
    });
    v2026(url, "tasks/update", params).await
}

/// `tasks/update` on a node that does not run the task is acknowledged once the node running
/// it stored the answers: a `tasks/get` right after it, on any node, sees them taken.
#[actix_web::test]
async fn task_answers_relayed_to_another_node_are_stored_before_the_ack() {
    let tasks = Arc::new(actix_mcp::InMemoryTaskStore::new());
    let [a, b] = task_nodes(&tasks);
    for round in 0..20 {
        let task_id = parked_task(&a).await;
        let ack = answer(&b.url, &task_id, "name", "Ada").await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        let got = v2026(&b.url, "tasks/get", json!({ "taskId": task_id })).await;
        let task = &got["result"];
        assert_eq!(task["status"], "input_required", "round {round}: {got}");
        let keys: Vec<&String> = task["inputRequests"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["color"], "round {round}: {got}");

        // The last answer: the tool runs again on A, and completes.
        let ack = answer(&b.url, &task_id, "color", "green").await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        let done = until_status(&b.url, &task_id, "completed").await;
        assert_eq!(done["result"]["content"][0]["text"], "Ada likes green");
    }
    a.stop().await;
    b.stop().await;
}

/// Answers for a task whose node is gone: nobody takes them, and the client is told so
/// (`-32603`) instead of an acknowledgement that would leave it waiting forever.
#[actix_web::test]
async fn task_answers_nobody_takes_are_an_error() {
    let tasks = Arc::new(actix_mcp::InMemoryTaskStore::new());
    let [a, b] = task_nodes(&tasks);
    let task_id = parked_task(&a).await;
    a.stop().await;
    let refused = answer(&b.url, &task_id, "name", "Ada").await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not take the answers"),
        "{refused}"
    );
    // Answers to keys the task does not show are acknowledged at once, as on one node.
    let ack = answer(&b.url, &task_id, "never-asked", "x").await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    b.stop().await;
}
