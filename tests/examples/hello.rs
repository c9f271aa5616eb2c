//! `examples/hello.rs`, over HTTP and over stdio.

use actix_mcp::client::Client;
use actix_mcp::client::transport::{ChildProcess, HttpTransport};

use super::serve;
use crate::common::{WAIT, pipe, within, within_for};

#[tokio::test]
async fn hello_adds_over_http() {
    let served = serve("hello", &["--http", "{port}"]).await;
    let client = within(Client::builder("test", "1.0.0").connect(HttpTransport::new(&served.url)))
        .await
        .unwrap();
    let tools = within(client.tools()).await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(
        tools[0].input_schema["required"],
        serde_json::json!(["a", "b"])
    );
    let sum = within(client.call_tool("add", serde_json::json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(sum.text_content(), "5");
    let overflow = within(client.call_tool("add", serde_json::json!({"a": i64::MAX, "b": 1})))
        .await
        .unwrap();
    assert_eq!(overflow.is_error, Some(true));
    client.close().await;
}

#[tokio::test]
async fn hello_adds_over_stdio() {
    // A child process starting is more than a step.
    let client = within_for(
        WAIT * 4,
        Client::builder("test", "1.0.0").connect(ChildProcess::new(pipe::example_binary("hello"))),
    )
    .await
    .unwrap();
    let sum = within(client.call_tool("add", serde_json::json!({"a": 40, "b": 2})))
        .await
        .unwrap();
    assert_eq!(sum.text_content(), "42");
    within(client.close()).await;
}
