//! The Tasks extension (`io.modelcontextprotocol/tasks`): a long-running tool call answered with
//! a task handle at once, which the client polls with `tasks/get` until the result is in.
//!
//! Run: `cargo run --example tasks -- 8080` (serves `http://127.0.0.1:8080/mcp`; port 8080 unless
//! one is given).
//!
//! A 2026-07-28 request whose `_meta` declares the extension under
//! `io.modelcontextprotocol/clientCapabilities.extensions` gets `{"resultType": "task",
//! "taskId": ...}` for `tools/call` of `report`; `tasks/get` with that `taskId` answers
//! `"status": "working"`, then `"completed"` with the tool's result under `result`. A client
//! that does not declare the extension is answered inline, when the tool is done.

use std::time::Duration;

use actix_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `report`.
#[derive(Deserialize, JsonSchema)]
struct ReportArgs {
    /// What the report is about.
    topic: String,
}

/// Sections of a report; writing one takes half a second.
const SECTIONS: u32 = 4;

/// Writes a report on `topic` for two seconds, section by section. Its progress reaches a
/// client that called it inline with a progress token; a task sends none (it is polled).
async fn report(Params(args): Params<ReportArgs>, cx: RequestContext) -> String {
    for section in 1..=SECTIONS {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cx.progress(Progress::new(f64::from(section)).total(f64::from(SECTIONS)));
    }
    format!("report on {}: {SECTIONS} sections", args.topic)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port = match std::env::args().nth(1) {
        Some(port) => port.parse().map_err(std::io::Error::other)?,
        None => 8080_u16,
    };
    let server = Server::builder("tasks-demo", "1.0.0")
        .tasks(TaskConfig::default().poll_interval(Duration::from_millis(250)))
        .tool(
            ToolDef::new("report", report)
                .description("Writes a report on a topic (takes two seconds)")
                .task_support(TaskSupport::Optional),
        )
        .build()
        .map_err(std::io::Error::other)?;
    println!("serving http://127.0.0.1:{port}/mcp");
    server.serve(("127.0.0.1", port)).await
}
