//! The client in a plain tokio application (`#[tokio::test]`, multi-threaded, no actix system
//! on the test's threads): it connects over Streamable HTTP and over a child process's stdio,
//! lists, calls, listens for changes, and its actors run on the SDK's own actix system, whose
//! thread is shared by the clients connected that way and ends once the last one is dropped.
//! The servers run on actix systems of their own threads, as another process's would.
#![cfg(all(feature = "http", feature = "client-http"))]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use actix_mcp::client::transport::{ChildProcess, HttpTransport};
use actix_mcp::client::{Client, ClientBuilder, Lifecycle};
use actix_mcp::transport::http::McpHttp;
use serde_json::json;
use tokio::sync::Mutex;

use common::client_server::{Probe, server};
use common::{eventually, within};

/// The tests of this file one at a time: each counts the SDK's client threads.
static SERIAL: Mutex<()> = Mutex::const_new(());

/// The name of the SDK's client thread.
const CLIENT_THREAD: &str = "actix-mcp-rt";

/// How many threads of this process carry the client thread's name.
fn client_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim_end() == CLIENT_THREAD)
        .count()
}

/// The test server of the client tests on `127.0.0.1:0`, on an actix system of its own
/// thread (which lives as long as the test process); its endpoint's URL.
fn serve() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        actix_rt::System::new().block_on(async move {
            let probe = Arc::new(Probe::default());
            let test_server = common::http::spawn(McpHttp::builder(&server(probe), "/mcp"), 1);
            tx.send(test_server.url.clone()).unwrap();
            std::future::pending::<()>().await;
        });
    });
    rx.recv().unwrap()
}

fn builder() -> ClientBuilder {
    Client::builder("tokio-test", "1.0.0")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokio_application_uses_the_client_over_http_in_both_eras() {
    let _serial = SERIAL.lock().await;
    assert!(actix_rt::System::try_current().is_none());
    let url = serve();
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        let client = within(
            builder()
                .lifecycle(lifecycle)
                .connect(HttpTransport::new(&url)),
        )
        .await
        .unwrap();
        assert_eq!(client.server_info().name, "client-test-server");
        let tools = within(client.tools()).await.unwrap();
        assert!(tools.iter().any(|tool| tool.name == "echo"), "{tools:?}");
        let result = within(client.call_tool("echo", json!({"message": "from tokio"})))
            .await
            .unwrap();
        assert_eq!(result.text_content(), "from tokio");
        // Calls from several tokio tasks at once, on either worker thread.
        let calls: Vec<_> = (0..8)
            .map(|i| {
                let client = client.clone();
                tokio::spawn(async move {
                    client
                        .call_tool("add", json!({"a": i, "b": 1}))
                        .await
                        .unwrap()
                })
            })
            .collect();
        for call in calls {
            assert!(!within(call).await.unwrap().is_error());
        }
        assert_eq!(client_threads(), 1);
        within(client.close()).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokio_application_listens_for_changes() {
    let _serial = SERIAL.lock().await;
    let url = serve();
    let client = within(
        builder()
            .lifecycle(Lifecycle::V2026)
            .connect(HttpTransport::new(&url)),
    )
    .await
    .unwrap();
    // The subscription's task runs on the application's runtime; it ends with its handle.
    let subscription = within(client.listen(Default::default())).await.unwrap();
    drop(subscription);
    let result = within(client.call_tool("echo", json!({"message": "still here"})))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "still here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokio_application_runs_a_stdio_server() {
    let _serial = SERIAL.lock().await;
    let child = ChildProcess::new(common::pipe::example_binary("stdio_server"));
    let client = within(builder().connect(child)).await.unwrap();
    let result = within(client.call_tool("echo", json!({"message": "over stdio"})))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "over stdio");
    within(client.close()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_thread_is_shared_and_ends_with_the_last_client() {
    let _serial = SERIAL.lock().await;
    // Another test's system may still be on its way out.
    eventually("no client thread before", || client_threads() == 0).await;
    let url = serve();
    let first = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    let second = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    assert_eq!(client_threads(), 1, "one thread for both clients");
    drop(first);
    let result = within(second.call_tool("echo", json!({"message": "alive"})))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "alive");
    // A clone keeps the client (and its thread) alive; the last drop ends both.
    let clone = second.clone();
    drop(second);
    assert_eq!(client_threads(), 1);
    drop(clone);
    eventually("the client thread ended", || client_threads() == 0).await;
    // And the next client starts it again.
    let again = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    assert_eq!(client_threads(), 1);
    within(again.close()).await;
}
