//! Tools of the Tasks extension's tests, on one node or several.

use actix_mcp::protocol::{ElicitRequestParams, InputRequest, InputRequiredResult, TaskSupport};
use actix_mcp::{McpError, RequestContext, ToolDef};
use serde_json::json;

use super::sse::SseReader;

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
    ToolDef::new("two_questions", |cx: RequestContext| async move {
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
    })
    .description("asks two things")
    .task_support(TaskSupport::Optional)
}

/// The `_meta` of a 2026 request declaring the Tasks extension and form elicitation.
pub fn tasks_meta() -> serde_json::Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": { "io.modelcontextprotocol/tasks": {} },
            "elicitation": {},
        },
    })
}

/// One 2026 request POSTed to `url`, with the routing headers the spec requires: the whole
/// JSON-RPC response.
pub async fn v2026(url: &str, method: &str, mut params: serde_json::Value) -> serde_json::Value {
    // `Mcp-Name`: the tool of a `tools/call`, the task of a `tasks/*` request.
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(serde_json::Value::as_str)
        .unwrap()
        .to_owned();
    params["_meta"] = tasks_meta();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
        .body(body.to_string());
    let response = super::http::send(request).await;
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    // A node that relayed `tasks/update` answers may wait up to 5 s for the node running the
    // task before it answers: twice the usual wait leaves room for that.
    if sse {
        return SseReader::new(response)
            .patience(super::WAIT * 2)
            .next_message()
            .await;
    }
    let text = tokio::time::timeout(super::WAIT * 2, response.text())
        .await
        .expect("no body in time")
        .unwrap();
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{err}: {text}"))
}

/// Polls `tasks/get` on `url` until the task reaches `status` (any other status but
/// `working` and `input_required` fails), within [`super::WAIT`]: the task.
pub async fn until_status(url: &str, task_id: &str, status: &str) -> serde_json::Value {
    let deadline = tokio::time::Instant::now() + super::WAIT;
    loop {
        let got = v2026(url, "tasks/get", json!({ "taskId": task_id })).await;
        let task = &got["result"];
        if task["status"] == status {
            return task.clone();
        }
        assert!(
            ["working", "input_required"].contains(&task["status"].as_str().unwrap_or_default()),
            "{got}"
        );
        assert!(
            tokio::time::Instant::now() < deadline,
            "never {status}: {got}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
