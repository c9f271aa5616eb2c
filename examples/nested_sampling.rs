//! A nested server-to-client request, end to end: the `ask_llm` tool asks the client to sample
//! its LLM (`sampling/createMessage`) while the tool call is in flight, and answers with what
//! the client returned. A scripted client plays the LLM over an in-memory stdio-framed pipe.
//!
//! Run: `cargo run --example nested_sampling` (exits 0 when the round trip worked).

use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CreateMessageRequestParams, SamplingMessage, SamplingMessageContentBlock,
};
use actix_mcp::transport::stdio::StdioConfig;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Arguments of `ask_llm`.
#[derive(Deserialize, JsonSchema)]
struct AskArgs {
    /// The question for the client's model.
    question: String,
}

async fn ask_llm(Params(args): Params<AskArgs>, cx: RequestContext) -> Result<String, McpError> {
    let request =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text(args.question)], 100);
    let answer = cx.create_message(request).await?;
    let text = answer
        .content
        .as_slice()
        .iter()
        .find_map(|block| match block {
            SamplingMessageContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        });
    Ok(format!(
        "{} says: {}",
        answer.model,
        text.unwrap_or_default()
    ))
}

fn fail(message: &str) -> std::io::Error {
    std::io::Error::other(message.to_owned())
}

#[actix::main]
async fn main() -> std::io::Result<()> {
    let server = Server::builder("sampling-demo", "1.0.0")
        .tool(ToolDef::new("ask_llm", ask_llm).description("Asks the client's LLM a question"))
        .build()
        .map_err(std::io::Error::other)?;

    let (client_out, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, client_in) = tokio::io::duplex(64 * 1024);
    let serving = actix_rt::spawn(async move {
        server
            .serve_io(server_in, server_out, StdioConfig::default())
            .await
    });

    let mut to_server = client_out;
    let mut from_server = BufReader::new(client_in).lines();
    let mut send =
        async |message: Value| to_server.write_all(format!("{message}\n").as_bytes()).await;
    let mut read = async || -> std::io::Result<Value> {
        let line = tokio::time::timeout(Duration::from_secs(5), from_server.next_line())
            .await
            .map_err(|_| fail("timed out"))??;
        Ok(serde_json::from_str(
            &line.ok_or_else(|| fail("server closed"))?,
        )?)
    };

    // The client declares `sampling`: without it the server would refuse to ask.
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}}, "clientInfo": {"name": "demo", "version": "1"}}}))
    .await?;
    read().await?;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "ask_llm", "arguments": {"question": "What is an actor?"}}}),
    )
    .await?;

    let nested = read().await?;
    if nested["method"] != "sampling/createMessage" {
        return Err(fail("expected a sampling request"));
    }
    println!(
        "server asked: {}",
        nested["params"]["messages"][0]["content"]["text"]
    );
    send(json!({"jsonrpc": "2.0", "id": nested["id"], "result": {
        "role": "assistant", "model": "demo-model",
        "content": {"type": "text", "text": "A unit of computation with a mailbox."}}}))
    .await?;

    let result = read().await?;
    let text = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    println!("tool result: {text}");
    if text != "demo-model says: A unit of computation with a mailbox." {
        return Err(fail("unexpected tool result"));
    }
    drop(to_server);
    serving.await.map_err(|err| fail(&err.to_string()))??;
    println!("ok");
    Ok(())
}
