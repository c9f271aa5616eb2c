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
        .tool(tool(
            "echo",
            "Echoes",
            |Params(a): Params<EchoArgs>| async move { a.message },
        ))
        .tool(tool(
            "add",
            "Adds",
            |Params(a): Params<AddArgs>| async move { Json(Sum { total: a.a + a.b }) },
        ))
        .tool(tool("fail", "Fails", |_cx: RequestContext| async {
            Err::<String, _>(McpError::tool("it broke"))
        }))
        .tool(tool(
            "slow",
            "Waits until cancelled",
            move |cx: RequestContext| {
                let probe = p.clone();
                async move {
                    probe.slow_started.notify_one();
                    cx.cancelled().await;
                    probe.slow_cancelled.notify_one();
                    "cancelled"
                }
            },
        ))
        .tool(tool(
            "count",
            "Reports progress",
            |cx: RequestContext| async move {
                for step in 1..=3 {
                    cx.progress(f64::from(step), Some(3.0), Some("counting"));
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                "counted"
            },
        ))
        .tool(tool(
            "ask_llm",
            "Samples",
            |cx: RequestContext| async move {
                let params = CreateMessageRequestParams::new(
                    vec![actix_mcp::protocol::SamplingMessage::user_text("hi")],
                    10,
                );
                match cx.create_message(params).await {
                    Ok(result) => serde_json::to_string(&result.content).unwrap(),
                    Err(err) => format!("error: {err}"),
                }
            },
        ))
        .tool(tool(
            "ask_form",
            "Elicits",
            |cx: RequestContext| async move {
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
            },
        ))
        .tool(tool(
            "ask_roots",
            "Lists roots",
            |cx: RequestContext| async move {
                match cx.list_roots().await {
                    Ok(result) => result
                        .roots
                        .into_iter()
                        .map(|r| r.uri)
                        .collect::<Vec<_>>()
                        .join(","),
                    Err(err) => format!("error: {err}"),
                }
            },
        ))
        .tool(tool(
            "poll",
            "Closes its SSE stream (over HTTP), then answers",
            |cx: RequestContext| async move {
                cx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(20)).await;
                "after the reconnect"
            },
        ))
        .tool(tool("log", "Logs", |cx: RequestContext| async move {
            cx.log(LoggingLevel::Warning, "careful", Some("test"));
            cx.log(LoggingLevel::Debug, "noise", Some("test"));
            "logged"
        }))
        .tool(tool(
            "grow",
            "Adds a tool",
            |cx: RequestContext| async move {
                cx.server()
                    .define_tool(tool("grown", "New", |_cx: RequestContext| async { "new" }))
                    .unwrap();
                "grown"
            },
        ))
        .tool(tool(
            "touch",
            "Updates a resource",
            |cx: RequestContext| async move {
                cx.server().notify_resource_updated("test://a");
                "touched"
            },
        ))
        .resource(ResourceDef::from(Resource::new("test://a", "a")))
        .resource(ResourceDef::from(Resource::new("test://b", "b")))
        .resource(ResourceDef::from(Resource::new("test://c", "c")))
        .read_resource(|uri: actix_mcp::ResourceUri| async move { format!("content of {}", uri.0) })
        .resource_template(resource_template(
            ResourceTemplate::new("test://item/{id}", "item"),
            |vars: actix_mcp::UriVars| async move { format!("item {}", vars.0["id"]) },
        ))
        .prompt(prompt(
            "greet",
            "Greets",
            |Params(a): Params<GreetArgs>| async move {
                vec![PromptMessage::new(
                    Role::User,
                    ContentBlock::text(format!("hello {}", a.name)),
                )]
            },
        ))
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
