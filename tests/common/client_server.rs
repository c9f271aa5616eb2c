//! The server the client tests talk to, over every transport: tools for each kind of call
//! (typed, structured, failing, slow until cancelled, progress, sampling, elicitation, roots,
//! logging, list changes, resource updates, a closed SSE stream), three resources a page of two
//! apart, a template, a prompt and completion. [`Probe`] tells the tests what the server saw.

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CompleteResult, Completion, CreateMessageRequestParams, ElicitationSchema, LoggingLevel,
};
use actix_mcp::{Json, ResourceDef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::Notify;

#[derive(Deserialize, JsonSchema)]
pub struct EchoArgs {
    pub message: String,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq)]
pub struct Sum {
    pub total: i64,
}

#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    pub a: i64,
    pub b: i64,
}

/// What the server saw, for the tests to wait on.
#[derive(Default)]
pub struct Probe {
    pub slow_started: Notify,
    pub slow_cancelled: Notify,
    pub roots_changed: Notify,
}

pub fn server(probe: Arc<Probe>) -> Server {
    let p = probe.clone();
    Server::builder("client-test-server", "2.0.0")
        .instructions("Use the tools.")
        .page_size(2)
        .tool(
            ToolDef::new(
                "echo",
                |Params(a): Params<EchoArgs>| async move { a.message },
            )
            .description("Echoes"),
        )
        .tool(
            ToolDef::new("add", |Params(a): Params<AddArgs>| async move {
                Json(Sum { total: a.a + a.b })
            })
            .description("Adds"),
        )
        .tool(
            ToolDef::new("fail", |_cx: RequestContext| async {
                Err::<String, _>(McpError::tool("it broke"))
            })
            .description("Fails"),
        )
        .tool(
            ToolDef::new("slow", move |cx: RequestContext| {
                let probe = p.clone();
                async move {
                    probe.slow_started.notify_one();
                    cx.cancelled().await;
                    probe.slow_cancelled.notify_one();
                    "cancelled"
                }
            })
            .description("Waits until cancelled"),
        )
        .tool(
            ToolDef::new("count", |cx: RequestContext| async move {
                for step in 1..=3 {
                    cx.progress(
                        Progress::new(f64::from(step))
                            .total(3.0)
                            .message("counting"),
                    );
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                "counted"
            })
            .description("Reports progress"),
        )
        .tool(
            ToolDef::new("ask_llm", |cx: RequestContext| async move {
                let params = CreateMessageRequestParams::new(
                    vec![actix_mcp::protocol::SamplingMessage::user_text("hi")],
                    10,
                );
                match cx.create_message(params).await {
                    Ok(result) => serde_json::to_string(&result.content).unwrap(),
                    Err(err) => format!("error: {err}"),
                }
            })
            .description("Samples"),
        )
        .tool(
            ToolDef::new("ask_form", |cx: RequestContext| async move {
                let schema: ElicitationSchema = serde_json::from_value(json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "default": "John Doe"},
                        "age": {"type": "integer", "default": 30},
                        "ok": {"type": "boolean", "default": true}
                    }
                }))
                .unwrap();
                match cx.elicit_form("who?", schema).await {
                    Ok(result) => Value::Object(result.content.unwrap_or_default()).to_string(),
                    Err(err) => format!("error: {err}"),
                }
            })
            .description("Elicits"),
        )
        .tool(
            ToolDef::new("ask_roots", |cx: RequestContext| async move {
                match cx.list_roots().await {
                    Ok(result) => result
                        .roots
                        .into_iter()
                        .map(|r| r.uri)
                        .collect::<Vec<_>>()
                        .join(","),
                    Err(err) => format!("error: {err}"),
                }
            })
            .description("Lists roots"),
        )
        .tool(
            ToolDef::new("poll", |cx: RequestContext| async move {
                cx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(20)).await;
                "after the reconnect"
            })
            .description("Closes its SSE stream (over HTTP), then answers"),
        )
        .tool(
            ToolDef::new("log", |cx: RequestContext| async move {
                cx.log(LogMessage::new(LoggingLevel::Warning, "careful").logger("test"));
                cx.log(LogMessage::new(LoggingLevel::Debug, "noise").logger("test"));
                "logged"
            })
            .description("Logs"),
        )
        .tool(
            ToolDef::new("grow", |cx: RequestContext| async move {
                cx.server()
                    .define_tool(
                        ToolDef::new("grown", |_cx: RequestContext| async { "new" })
                            .description("New"),
                    )
                    .unwrap();
                "grown"
            })
            .description("Adds a tool"),
        )
        .tool(
            ToolDef::new("touch", |cx: RequestContext| async move {
                cx.server().notify_resource_updated("test://a");
                "touched"
            })
            .description("Updates a resource"),
        )
        .resource(ResourceDef::from(Resource::new("test://a", "a")))
        .resource(ResourceDef::from(Resource::new("test://b", "b")))
        .resource(ResourceDef::from(Resource::new("test://c", "c")))
        .read_resource(|uri: actix_mcp::ResourceUri| async move { format!("content of {}", uri.0) })
        .resource_template(ResourceTemplateDef::new(
            "test://item/{id}",
            "item",
            |vars: actix_mcp::UriVars| async move { format!("item {}", vars.0["id"]) },
        ))
        .prompt(
            PromptDef::new("greet", |Params(a): Params<GreetArgs>| async move {
                vec![PromptMessage::new(
                    Role::User,
                    ContentBlock::text(format!("hello {}", a.name)),
                )]
            })
            .description("Greets"),
        )
        .completion(|_params, _cx| async {
            Ok(CompleteResult {
                completion: Completion {
                    values: vec!["alpha".into(), "alpine".into()],
                    total: Some(2),
                    has_more: Some(false),
                },
                meta: None,
            })
        })
        .on_roots_list_changed(move |_session| probe.roots_changed.notify_one())
        .build()
        .unwrap()
}

#[derive(Deserialize, JsonSchema)]
pub struct GreetArgs {
    pub name: String,
}
