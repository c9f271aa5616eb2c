//! Progress with cancellation, end to end: a server whose `count` tool reports progress and
//! stops when cancelled, driven by a scripted client over an in-memory stdio-framed pipe.
//!
//! The client calls `count` with a progress token, prints each `notifications/progress`, cancels
//! the call after three of them, and checks that the tool saw the cancellation and that no
//! response for the cancelled request ever arrives (the spec's rule), while the session goes on
//! answering `ping`.
//!
//! Run: `cargo run --example progress_and_cancel` (exits 0 when all of that held).

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::transport::stdio::StdioConfig;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

/// Arguments of `count`.
#[derive(Deserialize, JsonSchema)]
struct CountArgs {
    /// How far to count (one step every 50 ms).
    to: u32,
}

/// Notified when the `count` tool observes its cancellation.
struct Cancelled(Notify);

async fn count(
    Params(args): Params<CountArgs>,
    cx: RequestContext,
    State(seen): State<Cancelled>,
) -> String {
    for step in 1..=args.to {
        tokio::select! {
            () = cx.cancelled() => {
                seen.0.notify_one();
                return format!("cancelled at {step}");
            }
            () = tokio::time::sleep(Duration::from_millis(50)) => {
                cx.progress(Progress::new(f64::from(step)).total(f64::from(args.to)).message("counting"));
            }
        }
    }
    format!("counted to {}", args.to)
}

fn fail(message: &str) -> std::io::Error {
    std::io::Error::other(message.to_owned())
}

#[actix::main]
async fn main() -> std::io::Result<()> {
    let cancelled = Arc::new(Cancelled(Notify::new()));
    let server = Server::builder("progress-demo", "1.0.0")
        .state_arc(cancelled.clone())
        .tool(ToolDef::new("count", count).description("Counts slowly, reporting progress"))
        .build()
        .map_err(std::io::Error::other)?;

    // Two in-memory pipes stand in for the server's stdin and stdout.
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

    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "demo", "version": "1"}}}))
    .await?;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "count", "arguments": {"to": 100}, "_meta": {"progressToken": "count-1"}}}),
    )
    .await?;

    let mut progress_seen = 0;
    let mut last = 0.0;
    while let Some(line) = tokio::time::timeout(Duration::from_secs(5), from_server.next_line())
        .await
        .map_err(|_| fail("timed out"))??
    {
        let message: Value = serde_json::from_str(&line)?;
        if message["method"] == "notifications/progress" {
            let progress = message["params"]["progress"].as_f64().unwrap_or_default();
            println!(
                "progress {progress}/{} ({})",
                message["params"]["total"], message["params"]["progressToken"]
            );
            if progress <= last {
                return Err(fail("progress must increase"));
            }
            last = progress;
            progress_seen += 1;
            if progress_seen == 3 {
                send(
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 2, "reason": "the user pressed stop"}}),
                )
                .await?;
                break;
            }
        }
    }
    tokio::time::timeout(Duration::from_secs(5), cancelled.0.notified())
        .await
        .map_err(|_| fail("the tool never saw the cancellation"))?;
    println!("the tool observed its cancellation");

    send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await?;
    loop {
        let line = tokio::time::timeout(Duration::from_secs(5), from_server.next_line())
            .await
            .map_err(|_| fail("timed out"))??;
        let message: Value = serde_json::from_str(&line.ok_or_else(|| fail("server closed"))?)?;
        if message["id"] == 2 {
            return Err(fail("a cancelled request must not be answered"));
        }
        if message["id"] == 3 {
            println!(
                "ping answered after the cancellation: {}",
                message["result"]
            );
            break;
        }
    }
    drop(to_server);
    serving.await.map_err(|err| fail(&err.to_string()))??;
    println!("ok");
    Ok(())
}
