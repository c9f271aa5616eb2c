//! Progress and cancellation: a tool that reports progress and stops when cancelled, and a
//! client that follows the progress and cancels the call after three reports, in both protocol
//! eras (in memory).
//!
//! Run: `cargo run --features client --example progress_and_cancel`

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::client::{CallOptions, Client, Lifecycle};
use actix_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::{Notify, mpsc};

/// Arguments of `count`.
#[derive(Deserialize, JsonSchema)]
struct CountArgs {
    /// How far to count (one step every 50 ms).
    to: u32,
}

/// Counts slowly, reporting each step, until done or cancelled (`Notify` tells `main`).
async fn count(
    Params(args): Params<CountArgs>,
    cx: RequestContext,
    State(stopped): State<Notify>,
) -> String {
    for step in 1..=args.to {
        tokio::select! {
            () = cx.cancelled() => {
                stopped.notify_one();
                return format!("cancelled at {step}");
            }
            () = tokio::time::sleep(Duration::from_millis(50)) => {
                cx.progress(Progress::new(f64::from(step)).total(f64::from(args.to)).message("counting"));
            }
        }
    }
    format!("counted to {}", args.to)
}

#[actix::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let stopped = Arc::new(Notify::new());
    let server = Server::builder("counter", "1.0.0")
        .state_arc(stopped.clone())
        .tool(ToolDef::new("count", count).description("Counts slowly, reporting progress"))
        .build()?;
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        let client = Client::builder("watcher", "1.0.0").lifecycle(lifecycle);
        let client = actix_mcp::testing::connect(&server, client).await?;
        println!("== {}", client.protocol_version().as_str());
        let (reports, mut received) = mpsc::unbounded_channel();
        let options = CallOptions::new().progress(move |report| drop(reports.send(report)));
        let params = Client::call_tool_params("count", serde_json::json!({ "to": 100 }))?;
        let call = client
            .start_request::<CallToolResult>("tools/call", Some(params), options)
            .await?;
        for _ in 0..3 {
            let report = received.recv().await.ok_or("the call ended early")?;
            println!(
                "progress {}/{}: {}",
                report.progress,
                report.total.unwrap_or_default(),
                report.message.unwrap_or_default()
            );
        }
        call.cancel("the user pressed stop");
        tokio::time::timeout(Duration::from_secs(5), stopped.notified()).await?;
        println!("the tool observed its cancellation");
        client.ping().await?;
        println!("the session goes on: ping answered");
        client.close().await;
    }
    Ok(())
}
