//! The protocol 2026-07-28 over HTTP: the envelope a request carries in `_meta`, a raw client
//! that sends the standard headers from the body and checks every message it receives against
//! the 2026 schema, and the server the 2026 tests share.

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};

use actix_mcp::prelude::*;
use actix_mcp::protocol::{CacheHints, CacheScope, LoggingLevel};

use super::http::http_client;
use super::sse::SseReader;
use super::{WAIT, assert_valid_in};

/// The revision.
pub const V2026: &str = "2026-07-28";
/// Every version the server serves, newest first (`supportedVersions`, `data.supported`).
pub const ALL_VERSIONS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// A request's `_meta` envelope: this revision, `capabilities`, and a client info.
pub fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "v2026-test", "version": "1.0.0"},
    })
}

/// `params` with the envelope of a client declaring `capabilities`.
pub fn with_meta(params: Value, capabilities: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta(capabilities);
    params
}

/// The server of the 2026 tests: `echo`, a tool that needs sampling, one that logs at two
/// levels, one with parameter headers (`regional`), one that defines a tool at run time, a
/// resource with cache hints of its own and a prompt.
pub fn server() -> Server {
    Server::builder("v2026-test", "2.0.0")
        .instructions("Use echo.")
        .cache_hints("resources/read", CacheHints::new(5_000, CacheScope::Public))
        .tool(
            ToolDef::new("echo", |Arguments(args): Arguments| async move {
                args.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            })
            .description("Returns its message"),
        )
        .tool(
            ToolDef::new("needs_sampling", || async { "ran" })
                .description("Needs sampling")
                .requires_client_capabilities(json!({"sampling": {}})),
        )
        .tool(
            ToolDef::new("chatty", |cx: RequestContext| async move {
                cx.log(LogMessage::new(LoggingLevel::Debug, "debug line"));
                cx.log(LogMessage::new(LoggingLevel::Error, "error line"));
                "done"
            })
            .description("Logs at debug and error"),
        )
        .tool(
            ToolDef::new("regional", |Arguments(args): Arguments| async move {
                Value::Object(args).to_string()
            })
            .description("Mirrors region in a header")
            .input_schema(
                json!({
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "count": {"type": "integer", "x-mcp-header": "Count"}
                    },
                    "required": ["region"]
                })
                .as_object()
                .cloned()
                .unwrap(),
            ),
        )
        .tool(
            ToolDef::new("add_tool", |cx: RequestContext| async move {
                cx.server()
                    .define_tool(ToolDef::new("added", || async { "added" }).description("Added"))
                    .map(|()| "ok")
                    .map_err(|err| McpError::internal(err.to_string()))
            })
            .description("Defines a tool at run time"),
        )
        .resource(ResourceDef::new(
            "test://hello",
            "hello",
            |_cx: RequestContext| async { "hello" },
        ))
        .prompt(
            PromptDef::new("greet", |_cx: RequestContext| async {
                PromptMessage::user_text("hi")
            })
            .description("Greets"),
        )
        .build()
        .unwrap()
}

/// A raw 2026 request: headers from the body unless overridden.
pub struct V2026Client {
    /// The HTTP client, for requests the helpers do not build (a GET stream).
    pub http: reqwest::Client,
    /// The endpoint.
    pub url: String,
}

impl V2026Client {
    /// A client of the endpoint at `url`.
    pub fn new(url: &str) -> Self {
        Self {
            http: http_client(),
            url: url.to_owned(),
        }
    }

    /// The POST of `body` with the standard headers, `headers` overriding them.
    pub fn builder(&self, body: &Value, headers: &[(&str, &str)]) -> reqwest::RequestBuilder {
        let method = body["method"].as_str().unwrap_or_default().to_owned();
        let mut standard: Vec<(String, String)> = vec![
            ("MCP-Protocol-Version".into(), V2026.into()),
            ("Mcp-Method".into(), method.clone()),
        ];
        let name = match method.as_str() {
            "tools/call" | "prompts/get" => body["params"]["name"].as_str(),
            "resources/read" => body["params"]["uri"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            standard.push(("Mcp-Name".into(), name.to_owned()));
        }
        for (key, value) in headers {
            standard.retain(|(k, _)| !k.eq_ignore_ascii_case(key));
            if !value.is_empty() {
                standard.push(((*key).to_owned(), (*value).to_owned()));
            }
        }
        let mut builder = self
            .http
            .post(&self.url)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        for (key, value) in standard {
            builder = builder.header(key, value);
        }
        builder
    }

    /// POSTs `body`; `headers` override the standard ones (an empty value removes one).
    /// Returns the status, the messages before the response, and the response.
    pub async fn send(
        &self,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> (StatusCode, Vec<Value>, Value) {
        let response = super::http::send(self.builder(body, headers)).await;
        let status = response.status();
        let content_type = super::http::content_type(response.headers());
        let mut before = Vec::new();
        let message = if content_type.starts_with("text/event-stream") {
            // Whole or streamed, an SSE answer goes uncompressed (only a streamed one also
            // carries the stream headers: `tests/http_edges.rs`).
            assert_eq!(
                response
                    .headers()
                    .get("content-encoding")
                    .map(|v| v.as_bytes()),
                Some(&b"identity"[..])
            );
            let mut reader = SseReader::new(response);
            loop {
                let message = reader.next_message().await;
                if message.get("method").is_some() {
                    assert_valid_in(V2026, "JSONRPCNotification", &message);
                    before.push(message);
                    continue;
                }
                break message;
            }
        } else {
            let text = tokio::time::timeout(WAIT, response.text())
                .await
                .unwrap()
                .unwrap();
            serde_json::from_str(&text).unwrap()
        };
        if message.get("error").is_some() {
            assert_valid_in(V2026, "JSONRPCErrorResponse", &message);
        } else {
            assert_valid_in(V2026, "JSONRPCResultResponse", &message);
        }
        (status, before, message)
    }

    /// Sends a request and gives back its status and response.
    pub async fn request(&self, id: i64, method: &str, params: Value) -> (StatusCode, Value) {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, _, message) = self.send(&body, &[]).await;
        (status, message)
    }
}
