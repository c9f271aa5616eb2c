//! Extractors written outside the crate: [`FromParts`] impls that read the request through
//! [`HandlerParts`]'s public accessors (arguments, context, uri template variables), used by
//! a tool and a resource template, driven in process with [`Server::handle_json`].
#![cfg(feature = "server")]
#![allow(clippy::unwrap_used)]

mod common;

use actix_mcp::protocol::{JsonObject, method};
use actix_mcp::{
    FromParts, HandlerParts, Params, Rejection, RequestContext, ResourceTemplateDef, Server,
    ToolDef,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use common::in_process::{call_tool, error, result};

/// Who is calling: the `user` argument, with the method it was called through.
struct Caller {
    user: String,
    method: String,
}

impl FromParts for Caller {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        let user = parts
            .arguments()
            .get("user")
            .and_then(Value::as_str)
            .ok_or_else(|| Rejection::InvalidArguments("missing `user`".into()))?;
        Ok(Caller {
            user: user.to_owned(),
            method: parts.context().method().to_owned(),
        })
    }

    fn input_schema() -> Option<JsonObject> {
        let schema = json!({
            "type": "object",
            "properties": {"user": {"type": "string"}},
            "required": ["user"],
        });
        match schema {
            Value::Object(object) => Some(object),
            _ => None,
        }
    }
}

/// Whether the request matched a resource template, and the `id` it matched.
struct ItemId(Option<u32>);

impl FromParts for ItemId {
    fn from_parts(parts: &HandlerParts) -> Result<Self, Rejection> {
        let Some(vars) = parts.uri_vars() else {
            return Ok(ItemId(None));
        };
        vars.get("id")
            .and_then(|id| id.parse().ok())
            .map(|id| ItemId(Some(id)))
            .ok_or_else(|| Rejection::InvalidArguments("`id` is not a number".into()))
    }
}

/// Arguments of the `shout` tool.
#[derive(Deserialize, JsonSchema)]
struct ShoutArgs {
    /// What to shout.
    text: String,
}

fn server() -> Server {
    Server::builder("extractors-test", "1.0.0")
        .tool(
            ToolDef::new("whoami", |caller: Caller, ItemId(id): ItemId| async move {
                format!(
                    "{} via {} (template id: {id:?})",
                    caller.user, caller.method
                )
            })
            .description("Says who called"),
        )
        .tool(
            ToolDef::new(
                "shout",
                |caller: Caller, Params(args): Params<ShoutArgs>, cx: RequestContext| async move {
                    format!(
                        "{}! said {} ({})",
                        args.text.to_uppercase(),
                        caller.user,
                        cx.protocol_version()
                    )
                },
            )
            .description(
                "Custom and built-in extractors side by side (the input schema is `ShoutArgs`'s)",
            ),
        )
        .resource_template(ResourceTemplateDef::new(
            "test://item/{id}",
            "item",
            |ItemId(id): ItemId| async move { format!("item {}", id.unwrap_or_default()) },
        ))
        .build()
        .unwrap()
}

#[actix_rt::test]
async fn a_custom_extractor_reads_the_arguments_and_the_context() {
    let server = server();
    let result = call_tool(&server, "whoami", json!({"user": "alice"})).await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text",
                            "text": "alice via tools/call (template id: None)"}]})
    );

    let result = call_tool(&server, "shout", json!({"user": "bob", "text": "hi"})).await;
    assert_eq!(result["content"][0]["text"], "HI! said bob (2025-11-25)");
}

#[actix_rt::test]
async fn a_custom_extractor_declares_the_input_schema() {
    let server = server();
    let list = result(&server, method::TOOLS_LIST, json!({}), "ListToolsResult").await;
    let tools = list["tools"].as_array().unwrap();
    let whoami = tools.iter().find(|t| t["name"] == "whoami").unwrap();
    assert_eq!(whoami["inputSchema"]["required"], json!(["user"]));
}

#[actix_rt::test]
async fn a_custom_extractor_rejection_is_an_is_error_result() {
    let server = server();
    // `shout` declares `ShoutArgs`'s schema, so only the `Caller` extractor sees `user` missing.
    let result = call_tool(&server, "shout", json!({"text": "hi"})).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("shout") && text.contains("missing `user`"),
        "{text}"
    );

    // `whoami` declares `Caller`'s schema: the call is refused before the extractor runs
    // (feature `validate`), or by the extractor itself.
    let result = call_tool(&server, "whoami", json!({"name": "alice"})).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    if cfg!(feature = "validate") {
        assert!(text.contains("\"user\" is a required property"), "{text}");
    } else {
        assert!(text.contains("missing `user`"), "{text}");
    }
}

#[actix_rt::test]
async fn a_custom_extractor_reads_the_uri_template_variables() {
    let server = server();
    let read = result(
        &server,
        method::RESOURCES_READ,
        json!({"uri": "test://item/42"}),
        "ReadResourceResult",
    )
    .await;
    assert_eq!(
        read,
        json!({"contents": [{"uri": "test://item/42", "text": "item 42"}]})
    );

    error(
        &server,
        method::RESOURCES_READ,
        json!({"uri": "test://item/forty-two"}),
        -32602,
    )
    .await;
}
