//! Our client over stdio child processes: our own stdio example server, a server that dies in
//! the middle of a call, one that cannot be started, and one that sends an oversized line.
//! Every wait is bounded; no child outlives its test.
#![cfg(all(feature = "http", feature = "client"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::transport::{ChildProcess, StderrMode};
use actix_mcp::client::{CallOptions, Client, ClientError, Lifecycle};
use serde_json::json;

use common::{WAIT, within, within_for};

fn builder() -> actix_mcp::client::ClientBuilder {
    // These servers speak 2025-11-25 only; the 2026 era has its own tests (client_v2026.rs).
    Client::builder("stdio-test", "0.1.0").lifecycle(Lifecycle::V2025)
}

fn python(script: &str) -> ChildProcess {
    ChildProcess::new("python3")
        .arg("-c")
        .arg(script)
        .stderr(StderrMode::Discard)
}

#[actix_rt::test]
async fn our_stdio_server_as_a_child_process() {
    let child = ChildProcess::new(common::pipe::example_binary("stdio_server"))
        .stderr(StderrMode::Log)
        .grace_period(Duration::from_secs(5));
    let client = within(builder().connect(child)).await.unwrap();
    assert_eq!(client.server_info().name, "stdio-example");
    let names: Vec<String> = within(client.tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.contains(&"echo".to_owned()), "{names:?}");
    let echoed = within(client.call_tool("echo", json!({"message": "over stdio"})))
        .await
        .unwrap();
    assert_eq!(echoed.text_content(), "over stdio");
    let seen = Arc::new(Mutex::new(0));
    let count = seen.clone();
    let slept = within(client.call_tool_with(
        "sleep",
        json!({"ms": 350}),
        CallOptions::new().progress(move |_| *count.lock().unwrap() += 1),
    ))
    .await
    .unwrap();
    assert!(!slept.is_error(), "{}", slept.text_content());
    assert!(*seen.lock().unwrap() >= 2, "progress every 100 ms");
    // Closing ends the child: its stdin closes and it exits on its own. The bound leaves room
    // for the 5 s grace period before a child that does not is killed.
    within_for(WAIT * 2, client.close()).await;
    assert!(!client.is_connected());
}

#[actix_rt::test]
async fn a_server_that_dies_mid_call_fails_the_call_and_nothing_hangs() {
    // Answers initialize, then exits as soon as the next request arrives.
    let script = r#"
import json, sys
init = json.loads(sys.stdin.readline())
print(json.dumps({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": "2025-11-25",
      "capabilities": {"tools": {}}, "serverInfo": {"name": "doomed", "version": "0"}}}), flush=True)
sys.stdin.readline()  # notifications/initialized
sys.stdin.readline()  # the call
sys.exit(3)
"#;
    let client = within(builder().connect(python(script))).await.unwrap();
    let error = within(client.call_tool("anything", ())).await.unwrap_err();
    assert!(error.is_closed(), "{error:?}");
    let again = within(client.ping()).await.unwrap_err();
    assert!(again.is_closed(), "{again:?}");
    // The child was waited for: no zombie is left of it, closed or not.
    drop(client);
    common::eventually("no zombie child", || zombie_children().is_empty()).await;
}

/// The process ids of this process's children that have exited and were not waited for.
fn zombie_children() -> Vec<u32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix(name))
                    .map(str::trim)
                    .map(str::to_owned)
            };
            (field("PPid:")? == me && field("State:")?.starts_with('Z')).then_some(pid)
        })
        .collect()
}

#[actix_rt::test]
async fn a_program_that_cannot_start_is_a_transport_error() {
    let error = within(builder().connect(ChildProcess::new("/nonexistent/mcp-server")))
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Transport(_)), "{error:?}");
}

#[actix_rt::test]
async fn an_oversized_line_is_skipped_and_the_connection_goes_on() {
    let script = r#"
import json, sys
def answer(msg, result):
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
answer(json.loads(sys.stdin.readline()), {"protocolVersion": "2025-11-25", "capabilities": {},
       "serverInfo": {"name": "big", "version": "0"}})
sys.stdin.readline()
ping = json.loads(sys.stdin.readline())
print("x" * 200000, flush=True)
answer(ping, {})
sys.stdin.readline()
"#;
    let child = python(script).max_line(64 * 1024);
    let client = within(builder().connect(child)).await.unwrap();
    within(client.ping()).await.unwrap();
    within(client.close()).await;
}

#[actix_rt::test]
async fn a_server_answering_an_unknown_protocol_version_is_refused() {
    let script = r#"
import json, sys
init = json.loads(sys.stdin.readline())
print(json.dumps({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": "1999-01-01",
      "capabilities": {}, "serverInfo": {"name": "old", "version": "0"}}}), flush=True)
sys.stdin.readline()
"#;
    let error = within(builder().connect(python(script))).await.unwrap_err();
    assert!(matches!(error, ClientError::Protocol(_)), "{error:?}");
}
