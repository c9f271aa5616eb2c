//! The fixtures only the 2026-07-28 set calls: capability gating, logging without a level,
//! list-change hooks for `subscriptions/listen`, and `x-mcp-header` parameters.

use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::LoggingLevel;
use actix_mcp::{Arguments, ServerBuilder};
use serde_json::{Value, json};

use super::no_args;

/// The fixtures only the 2026-07-28 set calls: capability gating, logging without a level,
/// list-change hooks for `subscriptions/listen`, and `x-mcp-header` parameters.
pub(crate) fn v2026_fixtures(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            ToolDef::new("test_missing_capability", |cx: RequestContext| async move {
                format!(
                    "sampling declared by {}",
                    cx.client_info()
                        .map_or("an unnamed client", |i| i.name.as_str())
                )
            })
            .description("Needs the client's sampling capability (refused with -32021 without it)")
            .input_schema(no_args())
            .requires_client_capabilities(json!({"sampling": {}})),
        )
        .tool(
            ToolDef::new("test_logging_tool", |cx: RequestContext| async move {
                for message in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ] {
                    cx.log(LogMessage::new(LoggingLevel::Info, message).logger("conformance"));
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                "logged (only to requests that asked for a log level)"
            })
            .description("Logs three messages at info level")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new(
                "test_trigger_tool_change",
                |cx: RequestContext| async move {
                    let server = cx.server();
                    if server.remove_tool("test_dynamic_tool") {
                        return Ok::<_, McpError>("removed test_dynamic_tool".to_owned());
                    }
                    server
                        .define_tool(
                            ToolDef::new("test_dynamic_tool", || async { "dynamic" })
                                .description("Added at run time")
                                .input_schema(no_args()),
                        )
                        .map_err(|err| McpError::internal(err.to_string()))?;
                    Ok("added test_dynamic_tool".to_owned())
                },
            )
            .description("Adds or removes the tool test_dynamic_tool")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new(
                "test_trigger_prompt_change",
                |cx: RequestContext| async move {
                    let server = cx.server();
                    if server.remove_prompt("test_dynamic_prompt") {
                        return Ok::<_, McpError>("removed test_dynamic_prompt".to_owned());
                    }
                    server
                        .define_prompt(
                            PromptDef::new("test_dynamic_prompt", |_cx: RequestContext| async {
                                PromptMessage::user_text("dynamic")
                            })
                            .description("Added at run time"),
                        )
                        .map_err(|err| McpError::internal(err.to_string()))?;
                    Ok("added test_dynamic_prompt".to_owned())
                },
            )
            .description("Adds or removes the prompt test_dynamic_prompt")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new(
                "test_header_params",
                |Arguments(args): Arguments| async move { Value::Object(args).to_string() },
            )
            .description("Echoes arguments that HTTP clients mirror in Mcp-Param-* headers")
            .input_schema(
                json!({
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "priority": {"type": "integer", "x-mcp-header": "Priority"},
                        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                        "note": {"type": "string"}
                    },
                    "required": ["region"]
                })
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ),
        )
}
