//! Server-initiated notifications reach the right sessions: list-changed to everyone,
//! `resources/updated` only to subscribers, log messages filtered by the session's level.
//! Driven over an in-memory pipe with stdio framing; every read is bounded.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use actix_mcp::prelude::*;
use actix_mcp::protocol::LoggingLevel;
use actix_mcp::{ResourceDef, SessionId};
use common::pipe::PipeClient;
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("notify", "1")
        .resource(ResourceDef::from(Resource::new("file:///a", "a")))
        .tool(
            ToolDef::new("noop", |_cx: RequestContext| async { "ok" }).description("Does nothing"),
        )
        .tool(
            ToolDef::new("whoami", |cx: RequestContext| async move {
                cx.session_id().map(ToString::to_string).unwrap_or_default()
            })
            .description("The caller's session id"),
        )
        .build()
        .unwrap()
}

#[actix_rt::test]
async fn log_messages_respect_the_session_level() {
    let server = server();
    let mut client = PipeClient::connect(&server, json!({})).await;
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "warning"}})).await;
    assert_eq!(
        client.read().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    client.send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "whoami"}})).await;
    let id = client.read().await["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id.starts_with("stdio-"), "{id}");
    let stdio = SessionId::parse(&id).unwrap();
    assert!(server.notify_log_message_to(&stdio, LogMessage::new(LoggingLevel::Info, "too quiet")));
    assert!(server.notify_log_message_to(
        &stdio,
        LogMessage::new(LoggingLevel::Error, json!({"disk": "full"})).logger("storage")
    ));
    server.notify_log_message(LogMessage::new(LoggingLevel::Debug, "also too quiet"));
    let seen = client.drain(2).await;
    assert_eq!(
        seen,
        vec![json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "error", "logger": "storage", "data": {"disk": "full"}}})]
    );
    assert!(!server.notify_log_message_to(
        &SessionId::parse("nobody").unwrap(),
        LogMessage::new(LoggingLevel::Error, "x")
    ));
}

#[actix_rt::test]
async fn resource_updates_go_to_subscribers_only() {
    let server = server();
    let mut subscriber = PipeClient::connect(&server, json!({})).await;
    let mut bystander = PipeClient::connect(&server, json!({})).await;
    subscriber.send(json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "file:///a"}})).await;
    assert_eq!(subscriber.read().await["result"], json!({}));
    server.notify_resource_updated("file:///a");
    server.notify_resource_updated("file:///unrelated");
    let update = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a"}});
    assert_eq!(subscriber.drain(2).await, vec![update]);
    assert_eq!(bystander.drain(2).await, Vec::<Value>::new());
    subscriber.send(json!({"jsonrpc": "2.0", "id": 3, "method": "resources/unsubscribe", "params": {"uri": "file:///a"}})).await;
    assert_eq!(subscriber.read().await["result"], json!({}));
    server.notify_resource_updated("file:///a");
    assert_eq!(subscriber.drain(4).await, Vec::<Value>::new());
}

#[actix_rt::test]
async fn list_changes_reach_every_session() {
    let server = server();
    let mut first = PipeClient::connect(&server, json!({})).await;
    let mut second = PipeClient::connect(&server, json!({})).await;
    server
        .define_tool(
            ToolDef::new("added", |_cx: RequestContext| async { "new" })
                .description("Added at run time"),
        )
        .unwrap();
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    assert_eq!(first.drain(1).await, vec![changed.clone()]);
    assert_eq!(second.drain(1).await, vec![changed]);
    first
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let names: Vec<Value> = first.read().await["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("noop"), json!("whoami"), json!("added")]);
}
