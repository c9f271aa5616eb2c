//! A server driven in process ([`Server::handle_json`]): one request in, its response out,
//! every message validated against the MCP schema.

use actix_mcp::Server;
use actix_mcp::protocol::method;
use serde_json::{Value, json};

/// Sends one request and returns the parsed, envelope-validated response.
pub async fn send(server: &Server, message: Value) -> Value {
    let line = tokio::time::timeout(super::WAIT, server.handle_json(&message.to_string()))
        .await
        .unwrap_or_else(|_| panic!("no answer within {:?} to {message}", super::WAIT))
        .unwrap_or_else(|| panic!("no response to {message}"));
    let response: Value = serde_json::from_str(&line).unwrap();
    super::assert_valid_message(&response);
    assert_eq!(response["id"], message["id"], "{response}");
    response
}

/// Sends a request of `method` with `params` (id 1) and returns its validated response.
async fn request(server: &Server, method: &str, params: Value) -> Value {
    send(
        server,
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
    )
    .await
}

/// Sends a request and returns its result, validated as `result_type`.
pub async fn result(server: &Server, method: &str, params: Value, result_type: &str) -> Value {
    let response = request(server, method, params).await;
    let result = response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result: {response}"))
        .clone();
    super::assert_valid(result_type, &result);
    result
}

/// Sends a request and returns its error object, whose code must be `code`.
pub async fn error(server: &Server, method: &str, params: Value, code: i64) -> Value {
    let response = request(server, method, params).await;
    let error = response
        .get("error")
        .unwrap_or_else(|| panic!("expected an error: {response}"))
        .clone();
    assert_eq!(error["code"], code, "{response}");
    error
}

/// Calls the tool `name` with `arguments` and returns its result, validated as a
/// `CallToolResult` (which may be an `isError` one).
pub async fn call_tool(server: &Server, name: &str, arguments: Value) -> Value {
    result(
        server,
        method::TOOLS_CALL,
        json!({"name": name, "arguments": arguments}),
        "CallToolResult",
    )
    .await
}
