//! A stdio MCP server: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.
//!
//! It serves four tools (`echo`, which also logs at debug level, `sleep` with progress and
//! cancellation, `summarize` with sampling, `ask_name` with elicitation), one prompt (`greet`)
//! and one resource (`file:///example/readme.txt`).
//!
//! ```text
//! cargo run --example stdio_server
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}
//! {"jsonrpc":"2.0","method":"notifications/initialized"}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}
//! ```
//!
//! Set `RUST_LOG=debug` for more logs (they go to stderr: stdout carries only protocol lines).

use std::time::Duration;

use actix_mcp::protocol::{
    CreateMessageRequestParams, LoggingLevel, PromptMessage, SamplingMessage,
    SamplingMessageContentBlock,
};
use actix_mcp::{
    LogMessage, McpError, Params, PeerError, Progress, PromptDef, RequestContext, ResourceDef,
    Server, ToolDef,
};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::time::{Instant, interval_at, sleep};

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

/// Arguments of `sleep`.
#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

/// Arguments of `summarize`.
#[derive(Deserialize, JsonSchema)]
struct SummarizeArgs {
    /// The text to summarize.
    text: String,
}

/// Arguments of the `greet` prompt.
#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// Sleeps `ms` milliseconds, reporting progress every 100 ms when the client asked for it.
/// A cancelled call stops at once (the runtime then sends no response at all).
async fn sleep_tool(Params(args): Params<SleepArgs>, cx: RequestContext) -> String {
    let total = Duration::from_millis(args.ms);
    let started = Instant::now();
    let done = sleep(total);
    tokio::pin!(done);
    let tick = Duration::from_millis(100);
    let mut ticks = interval_at(started + tick, tick);
    loop {
        tokio::select! {
            () = &mut done => return format!("slept {} ms", args.ms),
            () = cx.cancelled() => return "cancelled".to_owned(),
            _ = ticks.tick(), if cx.has_progress_token() => {
                let elapsed = started.elapsed().as_millis() as f64;
                cx.progress(Progress::new(elapsed).total(args.ms as f64).message("sleeping"));
            }
        }
    }
}

/// Asks the client's model for a summary (`sampling/createMessage`).
/// Asks the user for their name with a form (elicitation) and greets them.
async fn ask_name_tool(cx: RequestContext) -> Result<String, McpError> {
    let schema: actix_mcp::protocol::ElicitationSchema =
        serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Your name"}},
            "required": ["name"]
        }))?;
    let answer = cx.elicit_form("What is your name?", schema).await?;
    Ok(match answer.action {
        actix_mcp::protocol::ElicitAction::Accept => {
            let name = answer
                .content
                .as_ref()
                .and_then(|c| c.get("name"))
                .and_then(|n| n.as_str())
                .unwrap_or("stranger");
            format!("Hello, {name}!")
        }
        actix_mcp::protocol::ElicitAction::Decline => "You declined to say.".to_owned(),
        actix_mcp::protocol::ElicitAction::Cancel => "You cancelled.".to_owned(),
    })
}

async fn summarize_tool(
    Params(args): Params<SummarizeArgs>,
    cx: RequestContext,
) -> Result<String, McpError> {
    let request = CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(format!(
            "Summarize: {}",
            args.text
        ))],
        200,
    );
    let sampled = cx.create_message(request).await.map_err(|err| match err {
        PeerError::MissingCapability(_) => {
            McpError::tool("summarize needs a client that supports sampling")
        }
        other => other.into(),
    })?;
    sampled
        .content
        .as_slice()
        .iter()
        .find_map(|block| match block {
            SamplingMessageContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .ok_or_else(|| McpError::tool("the sampled message contained no text"))
}

#[actix::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();

    let echo = ToolDef::new(
        "echo",
        |Params(args): Params<EchoArgs>, cx: RequestContext| async move {
            cx.log(
                LogMessage::new(LoggingLevel::Debug, format!("echo: {}", args.message))
                    .logger("echo"),
            );
            args.message
        },
    )
    .description("Returns its message unchanged (and logs it at debug level)");
    let greet = PromptDef::new("greet", |Params(args): Params<GreetArgs>| async move {
        PromptMessage::user_text(format!("Hello, {}!", args.name))
    })
    .description("Greets someone by name");
    let readme = ResourceDef::new("file:///example/readme.txt", "readme", || async {
        "This is the actix-mcp stdio example server.\n"
    })
    .description("What this server is")
    .mime_type("text/plain");

    let server = Server::builder("stdio-example", env!("CARGO_PKG_VERSION"))
        .instructions("Try the echo, sleep and summarize tools.")
        .tool(echo)
        .tool(ToolDef::new("sleep", sleep_tool).description("Sleeps for `ms` milliseconds"))
        .tool(
            ToolDef::new("summarize", summarize_tool)
                .description("Summarizes text with the client's model"),
        )
        .tool(
            ToolDef::new("ask_name", ask_name_tool)
                .description("Asks the user for their name (elicitation)"),
        )
        .prompt(greet)
        .resource(readme)
        .build()?;

    tracing::info!("serving on stdio");
    server.serve_stdio().await?;
    tracing::info!("stdin closed; bye");
    Ok(())
}
