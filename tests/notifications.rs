//! Server-initiated notifications reach the right sessions: list-changed to everyone,
//! `resources/updated` only to subscribers, log messages filtered by the session's level.
//! Driven over an in-memory pipe with stdio framing; every read is bounded.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::LoggingLevel;
use actix_mcp::transport::stdio::StdioConfig;
use actix_mcp::{ResourceDef, SessionId};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

struct Client {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
}

impl Client {
    async fn send(&mut self, message: Value) {
        self.to_server
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.from_server.next_line())
            .await
            .expect("a line within 5 s");
        serde_json::from_str(&line.unwrap().expect("server open")).unwrap()
    }

    /// Sends `ping` and returns every message that arrived before its answer.
    async fn drain(&mut self, id: i64) -> Vec<Value> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        let mut seen = Vec::new();
        loop {
            let message = self.read().await;
            if message["id"] == id {
                return seen;
            }
            seen.push(message);
        }
    }
}

async fn connect(server: &Server) -> Client {
    let (client_out, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    let server = server.clone();
    actix_rt::spawn(async move {
        server
            .serve_io(server_in, server_out, StdioConfig::default())
            .await
    });
    let mut client = Client {
        to_server: client_out,
        from_server: BufReader::new(client_in).lines(),
    };
    client
        .send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    assert_eq!(
        client.read().await["result"]["protocolVersion"],
        "2025-11-25"
    );
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    client
}

fn server() -> Server {
    Server::builder("notify", "1")
        .resource(ResourceDef::from(Resource::new("file:///a", "a")))
        .tool(tool("noop", "Does nothing", |_cx: RequestContext| async {
            "ok"
        }))
        .tool(tool(
            "whoami",
            "The caller's session id",
            |cx: RequestContext| async move {
                cx.session_id().map(ToString::to_string).unwrap_or_default()
            },
        ))
        .build()
        .unwrap()
}

#[actix_rt::test]
async fn log_messages_respect_the_session_level() {
    let server = server();
    let mut client = connect(&server).await;
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
    assert!(server.notify_log_message_to(&stdio, LoggingLevel::Info, "too quiet", None));
    assert!(server.notify_log_message_to(
        &stdio,
        LoggingLevel::Error,
        json!({"disk": "full"}),
        Some("storage")
    ));
    server.notify_log_message(LoggingLevel::Debug, "also too quiet", None);
    let seen = client.drain(2).await;
    assert_eq!(
        seen,
        vec![json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "error", "logger": "storage", "data": {"disk": "full"}}})]
    );
    assert!(!server.notify_log_message_to(
        &SessionId::parse("nobody").unwrap(),
        LoggingLevel::Error,
        "x",
        None
    ));
}

#[actix_rt::test]
async fn resource_updates_go_to_subscribers_only() {
    let server = server();
    let mut subscriber = connect(&server).await;
    let mut bystander = connect(&server).await;
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
    let mut first = connect(&server).await;
    let mut second = connect(&server).await;
    server
        .define_tool(tool(
            "added",
            "Added at run time",
            |_cx: RequestContext| async { "new" },
        ))
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
