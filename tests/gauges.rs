//! Work that outlives the request that started it is seen where a transport's work is seen:
//! open `subscriptions/listen` streams, parked `input_required` calls and running tasks count in
//! the endpoint's gauges (`McpHttp::stats`), and a drain ends the listeners and the parked calls
//! of its own transport at once.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::{ElicitRequestParams, TaskSupport};
use actix_mcp::{TaskConfig, ToolDef};
use serde_json::json;
use tokio::sync::Notify;

use common::http::{Client, spawn};
use common::sse::SseReader;
use common::v2026::meta;

fn server(gate: Arc<Notify>) -> Server {
    Server::builder("gauges", "1.0.0")
        .tasks(TaskConfig::default())
        .tool(
            ToolDef::new("ask", |cx: RequestContext| async move {
                let schema = serde_json::from_value(json!({
                    "type": "object", "properties": {"name": {"type": "string"}}
                }))?;
                let name = cx
                    .elicit(ElicitRequestParams::form("Name?", schema))
                    .await?;
                Ok::<_, McpError>(format!("{:?}", name.action))
            })
            .description("Asks for a name"),
        )
        .tool(
            ToolDef::new("job", move |_cx: RequestContext| {
                let gate = gate.clone();
                async move {
                    gate.notified().await;
                    "done"
                }
            })
            .description("Runs until the gate opens")
            .task_support(TaskSupport::Required),
        )
        .build()
        .unwrap()
}

#[actix_web::test]
async fn listeners_parked_calls_and_tasks_count_and_a_drain_ends_its_own() {
    let gate = Arc::new(Notify::new());
    let srv = spawn(server(gate.clone()).http("/mcp"), 1);
    let client = Client::new(&srv.url);
    let stats = || srv.mcp.stats().runtime;

    let listen = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {"toolsListChanged": true}}});
    let mut listener = SseReader::new(common::http::send(client.v2026_builder(&listen)).await);
    listener.next_message().await;
    assert_eq!(stats().listeners, 1);

    let ask = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}, "_meta": meta(json!({"elicitation": {}}))}});
    let answer = common::http::read_answer(
        common::http::send(client.v2026_builder(&ask)).await,
        &json!(2),
    )
    .await;
    assert_eq!(answer.response["result"]["resultType"], "input_required");
    assert_eq!(stats().parked_calls, 1);

    let job = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "job", "arguments": {},
        "_meta": meta(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))}});
    let created = common::http::read_answer(
        common::http::send(client.v2026_builder(&job)).await,
        &json!(3),
    )
    .await;
    assert_eq!(created.response["result"]["resultType"], "task");
    assert_eq!(stats().tasks, 1);

    // The drain ends the listener and the parked call at once; the task runs to its end.
    let mcp = srv.mcp.clone();
    let drained = actix_rt::spawn(async move { mcp.drain(Duration::from_secs(30)).await });
    let closed = listener.next_message().await;
    assert_eq!(closed["id"], 1, "{closed}");
    common::eventually("the listener and the parked call end", || {
        let now = stats();
        now.listeners == 0 && now.parked_calls == 0
    })
    .await;
    gate.notify_one();
    common::eventually("the task ends", || stats().tasks == 0).await;
    common::within(drained).await.unwrap();
    srv.stop().await;
}
