//! Our client against our server over an in-memory stdio-framed pipe: every typed call, every
//! handler and callback, progress, cancellation both ways, time limits, and a server that goes
//! away. Every wait is bounded.
#![cfg(all(feature = "server", feature = "client"))]
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::transport::IoTransport;
use actix_mcp::client::{
    CallOptions, Client, ClientError, ServerRequest, fill_elicitation_defaults,
};
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CompletionArgument, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestParams, ElicitResult, ListRootsResult, LoggingLevel, OneOrMany, Reference, Root,
    SamplingMessageContentBlock,
};
use actix_mcp::transport::stdio::StdioConfig;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Notify;

mod common;

use common::client_server::*;
use common::within;

/// Starts `server` on one end of an in-memory pipe and returns the other end as a transport.
fn pipe(
    server: Server,
) -> IoTransport<
    tokio::io::ReadHalf<tokio::io::DuplexStream>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
> {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    actix_rt::spawn(async move {
        let _ = server
            .serve_io(server_read, server_write, StdioConfig::default())
            .await;
    });
    let (client_read, client_write) = tokio::io::split(client_end);
    IoTransport::new(client_read, client_write)
}

async fn connect(builder: actix_mcp::client::ClientBuilder) -> (Client, Arc<Probe>) {
    let probe = Arc::new(Probe::default());
    let client = within(builder.connect(pipe(server(probe.clone()))))
        .await
        .unwrap();
    (client, probe)
}

fn plain() -> actix_mcp::client::ClientBuilder {
    // The 2025-11-25 client; the 2026 era has its own tests (client_v2026.rs).
    Client::builder("test-client", "0.1.0").lifecycle(actix_mcp::client::Lifecycle::V2025)
}

#[actix_rt::test]
async fn the_handshake_exposes_what_the_server_said() {
    let (client, _) = connect(plain()).await;
    assert_eq!(client.server_info().name, "client-test-server");
    assert_eq!(client.server_info().version, "2.0.0");
    assert_eq!(client.instructions(), Some("Use the tools."));
    assert_eq!(client.protocol_version().as_str(), "2025-11-25");
    assert!(client.server_capabilities().tools.is_some());
    within(client.ping()).await.unwrap();
    client.close().await;
    assert!(!client.is_connected());
    let after = client.ping().await.unwrap_err();
    assert!(after.is_closed(), "{after:?}");
}

#[actix_rt::test]
async fn lists_are_read_page_by_page_or_whole() {
    let (client, _) = connect(plain()).await;
    let first = within(client.list_tools(None)).await.unwrap();
    assert_eq!(first.tools.len(), 2, "the server pages by two");
    let cursor = first.next_cursor.clone().expect("more pages");
    let second = within(client.list_tools(Some(&cursor))).await.unwrap();
    assert_eq!(second.tools[0].name, "fail");
    let all = within(client.tools()).await.unwrap();
    let names: Vec<_> = all.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "echo",
            "add",
            "fail",
            "slow",
            "count",
            "ask_llm",
            "ask_form",
            "ask_roots",
            "poll",
            "log",
            "grow",
            "touch"
        ]
    );
    assert_eq!(within(client.resources()).await.unwrap().len(), 3);
    assert_eq!(within(client.resource_templates()).await.unwrap().len(), 1);
    assert_eq!(within(client.prompts()).await.unwrap()[0].name, "greet");
    let bad = within(client.list_tools(Some("not-a-cursor")))
        .await
        .unwrap_err();
    assert_eq!(bad.rpc().unwrap().code.0, -32602);
}

#[actix_rt::test]
async fn tools_are_called_with_typed_arguments_and_results() {
    let (client, _) = connect(plain()).await;
    let echoed = within(client.call_tool("echo", json!({"message": "hi"})))
        .await
        .unwrap();
    assert_eq!(echoed.text_content(), "hi");
    assert!(!echoed.is_error());
    #[derive(Serialize)]
    struct Add {
        a: i64,
        b: i64,
    }
    let sum = within(client.call_tool("add", Add { a: 2, b: 3 }))
        .await
        .unwrap();
    assert_eq!(sum.structured::<Sum>().unwrap().unwrap(), Sum { total: 5 });
    // A failing tool is a value, not an error.
    let failed = within(client.call_tool("fail", ())).await.unwrap();
    assert!(failed.is_error());
    assert_eq!(failed.text_content(), "it broke");
    // An unknown tool is the server's JSON-RPC error.
    let unknown = within(client.call_tool("nope", ())).await.unwrap_err();
    assert_eq!(unknown.rpc().unwrap().code.0, -32602);
    let not_object = client.call_tool("echo", json!([1])).await.unwrap_err();
    assert!(
        matches!(not_object, ClientError::Protocol(_)),
        "{not_object:?}"
    );
}

#[actix_rt::test]
async fn progress_reaches_the_callback_of_its_call() {
    let (client, _) = connect(plain()).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let options = CallOptions::new().progress(move |p| record.lock().unwrap().push(p.progress));
    let result = within(client.call_tool_with("count", (), options))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "counted");
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0]);
}

#[actix_rt::test]
async fn a_dropped_or_cancelled_call_is_cancelled_at_the_server() {
    let (client, probe) = connect(plain()).await;
    let params = Client::call_tool_params("slow", ()).unwrap();
    let pending = within(client.start_request::<Value>(
        "tools/call",
        Some(params.clone()),
        CallOptions::new(),
    ))
    .await
    .unwrap();
    within(probe.slow_started.notified()).await;
    pending.cancel("changed my mind");
    within(probe.slow_cancelled.notified()).await;
    // Dropping it does the same.
    let pending =
        within(client.start_request::<Value>("tools/call", Some(params), CallOptions::new()))
            .await
            .unwrap();
    within(probe.slow_started.notified()).await;
    drop(pending);
    within(probe.slow_cancelled.notified()).await;
    // The connection goes on.
    within(client.ping()).await.unwrap();
}

#[actix_rt::test]
async fn a_call_past_its_time_limit_fails_and_is_cancelled_at_the_server() {
    let (client, probe) = connect(plain()).await;
    let options = CallOptions::new().timeout(Duration::from_millis(100));
    let error = within(client.call_tool_with("slow", (), options))
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    within(probe.slow_cancelled.notified()).await;
}

#[actix_rt::test]
async fn prompts_resources_templates_and_completion() {
    let (client, _) = connect(plain()).await;
    let prompt = within(client.get_prompt("greet", [("name", "Ada")]))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&prompt.messages[0].content).unwrap()["text"],
        "hello Ada"
    );
    let missing = within(client.get_prompt("greet", Vec::<(String, String)>::new()))
        .await
        .unwrap_err();
    assert_eq!(missing.rpc().unwrap().code.0, -32602);
    let read = within(client.read_resource("test://b")).await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents[0]).unwrap()["text"],
        "content of test://b"
    );
    let item = within(client.read_resource("test://item/42"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&item.contents[0]).unwrap()["text"],
        "item 42"
    );
    let completed = within(client.complete(
        Reference::prompt("greet"),
        CompletionArgument::new("name", "al"),
        None,
    ))
    .await
    .unwrap();
    assert_eq!(completed.completion.values, ["alpha", "alpine"]);
}

#[actix_rt::test]
async fn notifications_reach_their_callbacks() {
    let tools_changed = Arc::new(Notify::new());
    let updated = Arc::new(Mutex::new(Vec::new()));
    let logs = Arc::new(Mutex::new(Vec::new()));
    let (t, u, l) = (tools_changed.clone(), updated.clone(), logs.clone());
    let (client, probe) = connect(
        plain()
            .roots_list(vec![Root::new("file:///work", None)])
            .on_tools_list_changed(move || t.notify_one())
            .on_resource_updated(move |p| u.lock().unwrap().push(p.uri))
            .on_log_message(move |p| l.lock().unwrap().push((p.level, p.data))),
    )
    .await;
    within(client.call_tool("grow", ())).await.unwrap();
    within(tools_changed.notified()).await;
    assert!(
        within(client.tools())
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "grown")
    );

    within(client.subscribe("test://a")).await.unwrap();
    within(client.call_tool("touch", ())).await.unwrap();
    within(async {
        while updated.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(*updated.lock().unwrap(), ["test://a"]);
    within(client.unsubscribe("test://a")).await.unwrap();

    within(client.set_logging_level(LoggingLevel::Info))
        .await
        .unwrap();
    within(client.call_tool("log", ())).await.unwrap();
    // Only the warning passes the level; it arrives before the tool's answer.
    assert_eq!(
        *logs.lock().unwrap(),
        [(LoggingLevel::Warning, json!("careful"))]
    );

    within(client.notify_roots_list_changed()).await.unwrap();
    within(probe.roots_changed.notified()).await;
}

#[actix_rt::test]
async fn the_servers_requests_are_answered_by_the_handlers() {
    let (client, _) = connect(
        plain()
            .sampling(
                |params: CreateMessageRequestParams, _: ServerRequest| async move {
                    assert_eq!(params.max_tokens, 10);
                    Ok(CreateMessageResult {
                        role: Role::Assistant,
                        content: OneOrMany::One(SamplingMessageContentBlock::text("sampled")),
                        model: "test-model".into(),
                        stop_reason: Some("endTurn".into()),
                        meta: None,
                    })
                },
            )
            .elicitation(|params: ElicitRequestParams, _| async move {
                let mut result = ElicitResult::new(ElicitAction::Accept);
                result.content = Some(json!({"age": 41}).as_object().cloned().unwrap());
                fill_elicitation_defaults(&params, &mut result);
                Ok(result)
            })
            .roots(true, |_| async {
                Ok(ListRootsResult {
                    roots: vec![Root::new("file:///a", None), Root::new("file:///b", None)],
                    meta: None,
                })
            }),
    )
    .await;
    let sampled = within(client.call_tool("ask_llm", ())).await.unwrap();
    assert!(
        sampled.text_content().contains("sampled"),
        "{}",
        sampled.text_content()
    );
    let form = within(client.call_tool("ask_form", ())).await.unwrap();
    let content: Value = serde_json::from_str(&form.text_content()).unwrap();
    // What the user gave stays; what they left out comes from the schema's defaults.
    assert_eq!(content, json!({"age": 41, "name": "John Doe", "ok": true}));
    let roots = within(client.call_tool("ask_roots", ())).await.unwrap();
    assert_eq!(roots.text_content(), "file:///a,file:///b");
}

#[actix_rt::test]
async fn without_a_handler_the_capability_is_not_declared() {
    let (client, _) = connect(plain()).await;
    let sampled = within(client.call_tool("ask_llm", ())).await.unwrap();
    assert!(
        sampled.text_content().contains("sampling"),
        "the server saw no sampling capability: {}",
        sampled.text_content()
    );
}

#[actix_rt::test]
async fn a_handler_that_panics_answers_with_an_error_and_the_client_goes_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let (client, _) = connect(plain().sampling(move |_, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { panic!("the model exploded") }
    }))
    .await;
    let sampled = within(client.call_tool("ask_llm", ())).await.unwrap();
    assert!(
        sampled.text_content().starts_with("error"),
        "{}",
        sampled.text_content()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    within(client.ping()).await.unwrap();
}

#[actix_rt::test]
async fn a_server_that_goes_away_fails_pending_calls_cleanly() {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (mut server_read, mut server_write) = tokio::io::split(server_end);
    // A fake server: answers initialize, then exits while a call is pending.
    actix_rt::spawn(async move {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let mut lines = BufReader::new(&mut server_read).lines();
        let init = lines.next_line().await.unwrap().unwrap();
        let id = serde_json::from_str::<Value>(&init).unwrap()["id"].clone();
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "fake", "version": "0"}}});
        server_write
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .unwrap();
        let _initialized = lines.next_line().await.unwrap();
        let _call = lines.next_line().await.unwrap();
        server_write.write_all(b"this is not json\n").await.unwrap();
        drop(server_write);
    });
    let (client_read, client_write) = tokio::io::split(client_end);
    let client = within(plain().connect(IoTransport::new(client_read, client_write)))
        .await
        .unwrap();
    let error = within(client.ping()).await.unwrap_err();
    assert!(error.is_closed(), "{error:?}");
    assert!(!client.is_connected());
}
