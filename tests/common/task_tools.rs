//! Tools of the Tasks extension's tests, on one node or several.

use actix_mcp::protocol::{ElicitRequestParams, InputRequest, InputRequiredResult, TaskSupport};
use actix_mcp::{McpError, RequestContext, ToolDef, tool};
use serde_json::json;

/// A form elicitation asking for one string `property`.
pub fn form(message: &str, property: &str) -> InputRequest {
    let schema = serde_json::from_value(json!({
        "type": "object",
        "properties": { property: { "type": "string" } },
    }))
    .unwrap_or_else(|err| panic!("{err}"));
    InputRequest::elicitation(&ElicitRequestParams::form(message, schema))
}

/// `two_questions` (task support optional): asks for `name` and `color` at once (after a
/// yield, so a call becomes a task), then answers "<name> likes <color>".
pub fn two_questions() -> ToolDef {
    tool(
        "two_questions",
        "asks two things",
        |cx: RequestContext| async move {
            tokio::task::yield_now().await;
            let answer = |key: &str| {
                cx.input_response(key)
                    .and_then(|v| v["content"][key].as_str())
                    .map(str::to_owned)
            };
            match (answer("name"), answer("color")) {
                (Some(name), Some(color)) => Ok(format!("{name} likes {color}")),
                _ => Err(McpError::input_required(
                    InputRequiredResult::ask("name", form("Name?", "name"))
                        .and("color", form("Color?", "color")),
                )),
            }
        },
    )
    .task_support(TaskSupport::Optional)
}
