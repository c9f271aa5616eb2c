//! The server every Streamable HTTP test talks to: its tools, and the [`Probe`]s they report
//! through (registered as server state), so no test sleeps to wait for the server.
//!
//! Tools: `echo`, `slow` (waits until cancelled), `progress` (100 steps), `sample`, `elicit` and
//! `roots` (server-to-client requests), `explode` (panics), `too_slow` (over its 50 ms timeout),
//! `close_stream` (SSE polling: answers once the test has reconnected) and `add_tool` (changes the catalog at run time).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::ExceptionReport;
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CreateMessageRequestParams, ElicitationSchema, SamplingMessage, SamplingMessageContentBlock,
    StringSchema,
};
use actix_mcp::transport::http::McpHttpBuilder;
use schemars::JsonSchema;
use serde::Deserialize;

use super::http::{Probe, TestServer, spawn};

/// What the tools report to the test.
#[derive(Clone, Default)]
pub struct Probes {
    /// `slow` has started.
    pub started: Arc<Probe>,
    /// `slow` has stopped: its future saw cancellation or was dropped.
    pub stopped: Arc<Probe>,
    /// Hit by the test once it has resumed `close_stream`'s stream: the tool may answer.
    pub reconnected: Arc<Probe>,
}

/// Hits its probe when dropped: a tool future dropped by cancellation still reports.
struct HitOnDrop(Arc<Probe>);

impl Drop for HitOnDrop {
    fn drop(&mut self) {
        self.0.hit();
    }
}

/// The exception reports the server made, in order.
pub type Reports = Arc<Mutex<Vec<ExceptionReport>>>;

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

/// Arguments of `add_tool`.
#[derive(Deserialize, JsonSchema)]
struct AddToolArgs {
    /// The new tool's name.
    name: String,
}

/// Waits for cancellation, reporting start and stop.
async fn slow(State(probes): State<Probes>, cx: RequestContext) -> &'static str {
    let _stopped = HitOnDrop(probes.stopped.clone());
    probes.started.hit();
    cx.cancelled().await;
    "cancelled"
}

/// Reports progress 1..=100 of 100.
async fn progress(cx: RequestContext) -> &'static str {
    for i in 1..=100u32 {
        cx.progress(Progress::new(f64::from(i)).total(100.0));
    }
    "done"
}

/// Asks the client to sample; the client's text is the result.
async fn sample(cx: RequestContext) -> Result<String, McpError> {
    let params =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Say something")], 50);
    let result = cx.create_message(params).await?;
    result
        .content
        .as_slice()
        .iter()
        .find_map(|block| match block {
            SamplingMessageContentBlock::Text(text) => Some(format!("sampled: {}", text.text)),
            _ => None,
        })
        .ok_or_else(|| McpError::tool("the client answered without text"))
}

/// Asks the client for a name (form elicitation).
async fn elicit(cx: RequestContext) -> Result<String, McpError> {
    let schema = ElicitationSchema::new().property("name", StringSchema::default(), true);
    let result = cx.elicit_form("Your name?", schema).await?;
    let content = serde_json::to_value(&result.content).unwrap();
    Ok(format!(
        "{}: {content}",
        serde_json::to_value(result.action)
            .unwrap()
            .as_str()
            .unwrap()
    ))
}

/// Lists the client's roots.
async fn roots(cx: RequestContext) -> Result<String, McpError> {
    let result = cx.list_roots().await?;
    Ok(result
        .roots
        .iter()
        .map(|root| root.uri.as_str())
        .collect::<Vec<_>>()
        .join(","))
}

/// Panics.
async fn explode(Params(args): Params<EchoArgs>) -> String {
    panic!("tool exploded: {}", args.message)
}

/// Closes its SSE connection, then answers once the test has reconnected (SSE polling).
async fn close_stream(State(probes): State<Probes>, cx: RequestContext) -> &'static str {
    cx.close_sse_stream();
    probes.reconnected.wait_for(1).await;
    "after the reconnect"
}

/// Registers a tool at run time (every session's GET stream gets `tools/list_changed`).
async fn add_tool(
    Params(args): Params<AddToolArgs>,
    cx: RequestContext,
) -> Result<&'static str, McpError> {
    let new_tool = ToolDef::new(args.name, |_cx: RequestContext| async { "hello" })
        .description("Added at run time");
    cx.server()
        .define_tool(new_tool)
        .map_err(|err| McpError::tool(err.to_string()))?;
    Ok("added")
}

/// The server every test talks to, with its probes and the exception reports it made.
pub struct Fixture {
    /// The server.
    pub server: Server,
    /// What its tools report.
    pub probes: Probes,
    /// The exception reports it made.
    pub reports: Reports,
}

/// A new server with every tool above.
pub fn fixture() -> Fixture {
    let probes = Probes::default();
    let reports = Reports::default();
    let sink = reports.clone();
    let server = Server::builder("http-test", "1.0.0")
        .state(probes.clone())
        .exception_reporter(move |report| sink.lock().unwrap().push(report.clone()))
        .tool(
            ToolDef::new("echo", |Params(args): Params<EchoArgs>| async move {
                args.message
            })
            .description("Returns its message"),
        )
        .tool(ToolDef::new("slow", slow).description("Waits until cancelled"))
        .tool(ToolDef::new("progress", progress).description("Reports 100 progress steps"))
        .tool(ToolDef::new("sample", sample).description("Samples through the client"))
        .tool(ToolDef::new("elicit", elicit).description("Asks the user for a name"))
        .tool(ToolDef::new("roots", roots).description("Lists the client's roots"))
        .tool(ToolDef::new("explode", explode).description("Panics"))
        .tool(
            ToolDef::new("too_slow", |_cx: RequestContext| async {
                tokio::time::sleep(Duration::from_secs(10)).await;
                "woke up"
            })
            .description("Sleeps 10 s under a 50 ms limit")
            .timeout(Duration::from_millis(50)),
        )
        .tool(ToolDef::new("close_stream", close_stream).description("Closes its SSE connection"))
        .tool(ToolDef::new("add_tool", add_tool).description("Registers a tool"))
        .build()
        .unwrap();
    Fixture {
        server,
        probes,
        reports,
    }
}

/// The fixture's server on one worker, configured by `configure`.
pub fn start(configure: impl FnOnce(McpHttpBuilder) -> McpHttpBuilder) -> (Fixture, TestServer) {
    let fixture = fixture();
    let mcp = configure(fixture.server.http("/mcp"));
    let server = spawn(mcp, 1);
    (fixture, server)
}

/// A node of `cluster` (one worker) whose server has an `echo` tool and the `greeter` tool
/// factory (`{"name": ...}` makes a tool of that name answering `hello from <name>`), for the
/// shared catalog's tests.
pub fn catalog_node(cluster: actix_mcp::cluster::Cluster) -> (Server, TestServer) {
    let server = Server::builder("catalog", "1.0.0")
        .tool(ToolDef::new("echo", || async { "echo" }))
        .tool_factory("greeter", |args: &serde_json::Value| {
            let name = args["name"].as_str().ok_or("`name` must be a string")?;
            let greeting = format!("hello from {name}");
            Ok::<_, &str>(ToolDef::new(name, move || {
                let greeting = greeting.clone();
                async move { greeting }
            }))
        })
        .build()
        .unwrap();
    let endpoint = spawn(server.http("/mcp").cluster(cluster), 1);
    (server, endpoint)
}

/// A node (with `workers` workers) of the tests' usual server, sharing its sessions on the
/// Redis server `redis` (`Cluster::redis`).
#[cfg(feature = "redis")]
pub async fn redis_node(
    redis: &super::redis::RedisServer,
    workers: usize,
) -> (Fixture, TestServer) {
    let fixture = fixture();
    let cluster = actix_mcp::cluster::Cluster::redis(&redis.url())
        .await
        .unwrap();
    let server = spawn(fixture.server.http("/mcp").cluster(cluster), workers);
    (fixture, server)
}
