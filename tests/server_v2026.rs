//! Protocol 2026-07-28 on the server: both eras on one endpoint, chosen per request; the
//! request envelope and headers with the spec's statuses and codes; `server/discover`;
//! `resultType`, cache hints and server info on results; removed methods; capability gating;
//! per-request log levels; `subscriptions/listen`; stdio serving both eras. Every message the
//! server sends to a 2026 request is validated against the 2026 schema.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use actix_mcp::prelude::*;
use actix_mcp::protocol::{CacheHints, CacheScope, LoggingLevel};
use actix_mcp::transport::stdio::StdioConfig;
use actix_mcp::{Flow, Middleware};
use futures::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};

use common::WAIT;
use common::http::{Client, VERSION, http_client, spawn};
use common::sse::SseReader;

const V2026: &str = "2026-07-28";
/// Every version the server serves, newest first (`supportedVersions`, `data.supported`).
const ALL_VERSIONS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

fn schema_2026() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/protocol/_schema/2026-07-28/schema.json"
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    })
}

/// Panics unless `value` is a valid `definition` of the 2026-07-28 schema.
fn assert_valid_2026(definition: &str, value: &Value) {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let validator = {
        let mut cache = cache.lock().unwrap();
        cache
            .entry(definition.to_owned())
            .or_insert_with(|| {
                let mut root = schema_2026().clone();
                assert!(root["$defs"].get(definition).is_some(), "no `{definition}`");
                root["$ref"] = Value::String(format!("#/$defs/{definition}"));
                Arc::new(jsonschema::validator_for(&root).unwrap())
            })
            .clone()
    };
    let problems: Vec<String> = validator
        .iter_errors(value)
        .map(|err| format!("{}: {err}", err.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "not a valid `{definition}`: {problems:?}\n{value:#}"
    );
}

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "v2026-test", "version": "1.0.0"},
    })
}

fn with_meta(params: Value, capabilities: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta(capabilities);
    params
}

fn server() -> Server {
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
struct V2026Client {
    http: reqwest::Client,
    url: String,
}

impl V2026Client {
    fn new(url: &str) -> Self {
        Self {
            http: http_client(),
            url: url.to_owned(),
        }
    }

    fn builder(&self, body: &Value, headers: &[(&str, &str)]) -> reqwest::RequestBuilder {
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
    async fn send(
        &self,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> (StatusCode, Vec<Value>, Value) {
        let response = common::http::send(self.builder(body, headers)).await;
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let mut before = Vec::new();
        let message = if content_type.starts_with("text/event-stream") {
            assert_eq!(
                response
                    .headers()
                    .get("x-accel-buffering")
                    .map(|v| v.as_bytes()),
                Some(&b"no"[..])
            );
            let mut reader = SseReader::new(response);
            loop {
                let message = reader.next_message().await;
                if message.get("method").is_some() {
                    assert_valid_2026("JSONRPCNotification", &message);
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
            assert_valid_2026("JSONRPCErrorResponse", &message);
        } else {
            assert_valid_2026("JSONRPCResultResponse", &message);
        }
        (status, before, message)
    }

    async fn request(&self, id: i64, method: &str, params: Value) -> (StatusCode, Value) {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, _, message) = self.send(&body, &[]).await;
        (status, message)
    }
}

#[actix_rt::test]
async fn discover_describes_the_server_with_cache_hints_and_server_info() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let (status, response) = client
        .request(1, "server/discover", json!({"_meta": meta(json!({}))}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let result = &response["result"];
    assert_valid_2026("DiscoverResult", result);
    assert_eq!(result["supportedVersions"], json!(ALL_VERSIONS));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(result["instructions"], "Use echo.");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "v2026-test", "version": "2.0.0"})
    );
    let caps = &result["capabilities"];
    assert!(caps["tools"].is_object() && caps["prompts"].is_object());
    assert_eq!(caps["resources"]["subscribe"], true);
    srv.stop().await;
}

#[actix_rt::test]
async fn every_result_carries_its_result_type_and_cacheable_ones_their_hints() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let (_, list) = client
        .request(1, "tools/list", json!({"_meta": meta(json!({}))}))
        .await;
    assert_valid_2026("ListToolsResult", &list["result"]);
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(list["result"]["cacheScope"], "private");
    // Lists change at run time: stale at once unless the server promises more.
    assert_eq!(list["result"]["ttlMs"], 0);
    let (_, call) = client
        .request(
            2,
            "tools/call",
            with_meta(
                json!({"name": "echo", "arguments": {"message": "hi"}}),
                json!({}),
            ),
        )
        .await;
    assert_valid_2026("CallToolResult", &call["result"]);
    assert_eq!(call["result"]["resultType"], "complete");
    assert!(
        call["result"].get("ttlMs").is_none(),
        "tools/call is not cacheable"
    );
    assert_eq!(call["result"]["content"][0]["text"], "hi");
    let (_, read) = client
        .request(
            3,
            "resources/read",
            with_meta(json!({"uri": "test://hello"}), json!({})),
        )
        .await;
    assert_valid_2026("ReadResourceResult", &read["result"]);
    assert_eq!(read["result"]["ttlMs"], 5_000, "the configured hints");
    assert_eq!(read["result"]["cacheScope"], "public");
    let (status, missing) = client
        .request(
            4,
            "resources/read",
            with_meta(json!({"uri": "test://nope"}), json!({})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        missing["error"]["code"], -32602,
        "2026: not found is invalid params"
    );
    assert_eq!(missing["error"]["data"]["uri"], "test://nope");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_bad_envelope_gets_400_with_the_specific_code_and_the_request_id() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let cases = [
        (json!({}), -32602),
        (
            json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
            -32602,
        ),
        (
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": V2026}}),
            -32602,
        ),
    ];
    for (i, (params, code)) in cases.into_iter().enumerate() {
        let id = 100 + i64::try_from(i).unwrap();
        let (status, response) = client.request(id, "server/discover", params).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{response}");
        assert_eq!(response["error"]["code"], code);
        assert_eq!(response["id"], id, "errors echo the request id");
    }
    // clientInfo is optional.
    let params = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {},
    }});
    let (status, response) = client.request(5, "server/discover", params).await;
    assert_eq!(status, StatusCode::OK, "{response}");

    // An unsupported version, named consistently: -32022 with what is supported.
    let mut body = json!({"jsonrpc": "2.0", "id": 6, "method": "server/discover",
                          "params": {"_meta": meta(json!({}))}});
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let (status, _, response) = client
        .send(&body, &[("MCP-Protocol-Version", "v999.0.0")])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(response["error"]["code"], -32022);
    assert_eq!(
        response["error"]["data"],
        json!({"supported": ALL_VERSIONS, "requested": "v999.0.0"})
    );
    // Header and body disagreeing: -32020.
    let (status, _, response) = client.send(&body, &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(response["error"]["code"], -32020);
    srv.stop().await;
}

#[actix_rt::test]
async fn an_envelope_kept_as_text_still_reaches_middleware_progress_and_handlers() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let server = Server::builder("meta-test", "1.0.0")
        .middleware(Middleware::new("record").before(move |inbound| {
            record.lock().unwrap().push(inbound.meta().cloned());
            Flow::Continue
        }))
        .tool(
            ToolDef::new("meta", |cx: RequestContext| async move {
                cx.progress(Progress::new(1.0).total(2.0));
                Value::Object(cx.meta().cloned().unwrap_or_default()).to_string()
            })
            .description("Reports progress, answers with its _meta"),
        )
        .build()
        .unwrap();
    let srv = spawn(server.http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let mut params = with_meta(json!({"name": "meta", "arguments": {}}), json!({}));
    params["_meta"]["progressToken"] = json!("p-7");
    params["_meta"]["com.example/tenant"] = json!({"id": [1, 2.5, "\u{e9}"]});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let (status, before, response) = client.send(&body, &[]).await;
    assert_eq!(status, StatusCode::OK, "{response}");
    // The handler reads the whole `_meta`, unknown keys included.
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    let read: Value = serde_json::from_str(text).unwrap();
    assert_eq!(read, params["_meta"]);
    // Its progress goes to the token `_meta` names.
    assert!(
        before
            .iter()
            .any(|message| message["method"] == "notifications/progress"
                && message["params"]["progressToken"] == "p-7"),
        "{before:?}"
    );
    // Middleware see `_meta` in the params.
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [params["_meta"].as_object().cloned()]
    );
    // A token too long to copy into every notification is refused, as in a session.
    params["_meta"]["progressToken"] = json!("x".repeat(300));
    let (_, response) = client.request(2, "tools/call", params).await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    srv.stop().await;
}

#[actix_rt::test]
async fn removed_and_unknown_methods_get_404_and_method_not_found() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    for (i, method) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/result",
        "no/such/method",
    ]
    .into_iter()
    .enumerate()
    {
        let id = i64::try_from(i).unwrap();
        let (status, response) = client
            .request(id, method, json!({"_meta": meta(json!({}))}))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method}: {response}");
        assert_eq!(response["error"]["code"], -32601, "{method}");
        assert_eq!(response["id"], id);
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn a_tool_needing_an_undeclared_capability_is_refused_with_400() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let (status, response) = client
        .request(
            1,
            "tools/call",
            with_meta(json!({"name": "needs_sampling"}), json!({})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(response["error"]["code"], -32021);
    assert_eq!(
        response["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    let (status, response) = client
        .request(
            2,
            "tools/call",
            with_meta(json!({"name": "needs_sampling"}), json!({"sampling": {}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(response["result"]["content"][0]["text"], "ran");
    srv.stop().await;
}

#[actix_rt::test]
async fn standard_and_parameter_headers_must_match_the_body() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                      "params": {"_meta": meta(json!({}))}});
    for headers in [
        vec![("Mcp-Method", "")],
        vec![("Mcp-Method", "prompts/list")],
        vec![("Mcp-Method", "TOOLS/LIST")],
    ] {
        let (status, _, response) = client.send(&list, &headers).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{headers:?}");
        assert_eq!(response["error"]["code"], -32020);
    }
    let (status, _, _) = client.send(&list, &[("mcp-method", " tools/list ")]).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "names are case-insensitive, values trimmed"
    );

    let call = |args: Value| {
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": with_meta(json!({"name": "regional", "arguments": args}), json!({}))})
    };
    let ok = |status: StatusCode, response: &Value| {
        assert_eq!(status, StatusCode::OK, "{response}");
        assert!(response.get("result").is_some(), "{response}");
    };
    let refused = |status: StatusCode, response: &Value| {
        assert_eq!(status, StatusCode::BAD_REQUEST, "{response}");
        assert_eq!(response["error"]["code"], -32020);
    };
    let body = call(json!({"region": "eu-west"}));
    let (s, _, r) = client.send(&body, &[("Mcp-Param-Region", "eu-west")]).await;
    ok(s, &r);
    let (s, _, r) = client.send(&body, &[]).await;
    refused(s, &r);
    let (s, _, r) = client.send(&body, &[("Mcp-Param-Region", "us-east")]).await;
    refused(s, &r);
    let (s, _, r) = client
        .send(
            &body,
            &[("Mcp-Name", "echo"), ("Mcp-Param-Region", "eu-west")],
        )
        .await;
    refused(s, &r);
    // Base64 for what a header cannot carry; strictly decoded.
    let body = call(json!({"region": " Zürich "}));
    let (s, _, r) = client
        .send(&body, &[("Mcp-Param-Region", "=?base64?IFrDvHJpY2gg?=")])
        .await;
    ok(s, &r);
    let (s, _, r) = client
        .send(&body, &[("Mcp-Param-Region", "=?base64?IFrDvHJpY2gg?")])
        .await;
    refused(s, &r);
    // Integers compare as numbers.
    let body = call(json!({"region": "eu", "count": 7}));
    let (s, _, r) = client
        .send(
            &body,
            &[("Mcp-Param-Region", "eu"), ("Mcp-Param-Count", "007")],
        )
        .await;
    ok(s, &r);
    let (s, _, r) = client.send(&body, &[("Mcp-Param-Region", "eu")]).await;
    refused(s, &r);
    srv.stop().await;
}

#[actix_rt::test]
async fn log_messages_only_reach_requests_that_asked_for_a_level() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let body = |level: Option<&str>| {
        let mut params = with_meta(json!({"name": "chatty"}), json!({}));
        if let Some(level) = level {
            params["_meta"]["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    };
    let (_, before, response) = client.send(&body(None), &[]).await;
    assert!(before.is_empty(), "no level, no logs: {before:?}");
    assert_eq!(response["result"]["content"][0]["text"], "done");
    let (_, before, _) = client.send(&body(Some("warning")), &[]).await;
    let levels: Vec<&Value> = before.iter().map(|m| &m["params"]["level"]).collect();
    assert_eq!(levels, [&json!("error")]);
    let (status, _, response) = client.send(&body(Some("loud")), &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(response["error"]["code"], -32602);
    srv.stop().await;
}

#[actix_rt::test]
async fn listen_acknowledges_then_streams_only_what_was_asked() {
    let server = server();
    let srv = spawn(server.http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let open = |id: i64, notifications: Value| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                          "params": {"_meta": meta(json!({})), "notifications": notifications}});
        common::http::send(client.builder(&body, &[]))
    };
    let tools = open(7, json!({"toolsListChanged": true})).await;
    assert_eq!(tools.status(), StatusCode::OK);
    let mut tools = SseReader::new(tools);
    let prompts = open(
        8,
        json!({"promptsListChanged": true, "resourceSubscriptions": ["test://hello"]}),
    )
    .await;
    let mut prompts = SseReader::new(prompts);
    for (reader, id) in [(&mut tools, 7), (&mut prompts, 8)] {
        let ack = reader.next_message().await;
        assert_valid_2026("SubscriptionsAcknowledgedNotification", &ack);
        assert_eq!(
            ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            id
        );
    }
    let (_, added) = client
        .request(
            9,
            "tools/call",
            with_meta(json!({"name": "add_tool"}), json!({})),
        )
        .await;
    assert_eq!(added["result"]["content"][0]["text"], "ok");
    let change = tools.next_message().await;
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    assert_valid_2026("ToolListChangedNotification", &change);

    server.notify_resource_updated("test://hello");
    server.notify_resource_updated("test://other");
    let update = prompts.next_message().await;
    assert_eq!(
        update["method"], "notifications/resources/updated",
        "tools changes are filtered out"
    );
    assert_eq!(update["params"]["uri"], "test://hello");
    server.notify_prompts_list_changed();
    let change = prompts.next_message().await;
    assert_eq!(change["method"], "notifications/prompts/list_changed");
    drop(tools);
    drop(prompts);
    srv.stop().await;
}

#[actix_rt::test]
async fn sessions_and_stateless_requests_share_the_endpoint() {
    let srv = spawn(server().http("/mcp"), 1);
    let mut v2025 = srv.client();
    let init = v2025.initialize(json!({})).await;
    assert_eq!(init["protocolVersion"], VERSION);
    assert!(v2025.session.is_some());
    let answer = v2025.request(json!(2), "tools/list", json!({})).await;
    assert!(
        answer.response["result"].get("resultType").is_none(),
        "2025 results stay as they were"
    );

    let v2026 = V2026Client::new(&srv.url);
    let (status, response) = v2026
        .request(3, "tools/list", json!({"_meta": meta(json!({}))}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(response["result"]["resultType"], "complete");

    // initialize never negotiates the stateless revision.
    let mut asks_2026 = Client::new(&srv.url);
    let response = asks_2026
        .post(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": V2026, "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"}}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let answer = common::http::read_answer(response, &json!(1)).await;
    assert_eq!(answer.response["result"]["protocolVersion"], VERSION);
    asks_2026.session = None;

    // GET and DELETE do not exist in 2026.
    let mut get = v2026.http.get(&srv.url).header(ACCEPT, "text/event-stream");
    get = get.header("MCP-Protocol-Version", V2026);
    let response = common::http::send(get).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    srv.stop().await;
}

#[actix_rt::test]
async fn stdio_serves_both_eras_in_one_process() {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = server();
    actix_rt::spawn(async move {
        let _ = server
            .serve_io(server_read, server_write, StdioConfig::default())
            .await;
    });
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = tokio_util::codec::FramedRead::new(read, tokio_util::codec::LinesCodec::new());
    use tokio::io::AsyncWriteExt;
    let mut send = async |message: Value| {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    // A stateless request before any initialize.
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                "params": {"_meta": meta(json!({}))}}),
    )
    .await;
    let line = tokio::time::timeout(WAIT, lines.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_valid_2026("JSONRPCResultResponse", &response);
    assert_eq!(response["result"]["supportedVersions"], json!(ALL_VERSIONS));
    // A 2025 request without initialize is still refused, then the handshake works.
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let line = tokio::time::timeout(WAIT, lines.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(response["error"]["code"], -32600);
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "x", "version": "1"}}}),
    )
    .await;
    let line = tokio::time::timeout(WAIT, lines.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(response["result"]["protocolVersion"], VERSION);
    // And stateless requests still work beside the session.
    send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": with_meta(json!({"name": "echo", "arguments": {"message": "x"}}), json!({}))}))
    .await;
    let line = tokio::time::timeout(WAIT, lines.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(response["result"]["resultType"], "complete");
}

/// A tool that samples twice, answering a 2026 request: each `create_message` becomes an
/// `input_required` round keyed `sampling/createMessage#n`, the earlier answers ride
/// `requestState`, and the last retry completes. Regression: `create_message` refused every
/// request without a session, so a 2026 client (mcp 2.3.0's, ours) got the isError "need a
/// session" instead of being asked.
#[actix_rt::test]
async fn create_message_asks_a_v2026_client_through_input_required_rounds() {
    use actix_mcp::protocol::{
        CreateMessageRequestParams, SamplingMessage, SamplingMessageContentBlock,
    };
    let server = Server::builder("mrtr-test", "1.0.0")
        .tool(
            ToolDef::new("ask_twice", |cx: RequestContext| async move {
                let mut answers = Vec::new();
                for question in ["first?", "second?"] {
                    let request = CreateMessageRequestParams::new(
                        vec![SamplingMessage::user_text(question)],
                        10,
                    );
                    let result = cx.create_message(request).await?;
                    answers.extend(result.content.as_slice().iter().filter_map(
                        |block| match block {
                            SamplingMessageContentBlock::Text(text) => Some(text.text.clone()),
                            _ => None,
                        },
                    ));
                }
                Ok::<_, McpError>(answers.join(" + "))
            })
            .description("Samples twice"),
        )
        .build()
        .unwrap();
    let srv = spawn(server.http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let call = |round: Value| {
        let mut params = with_meta(json!({"name": "ask_twice"}), json!({"sampling": {}}));
        for (key, value) in round.as_object().unwrap() {
            params[key] = value.clone();
        }
        params
    };
    let answer = |text: &str| json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"});

    // The only input request of a round: its key and what it asks.
    let only = |result: &Value| {
        let requests = result["inputRequests"].as_object().unwrap();
        assert_eq!(requests.len(), 1, "{result}");
        let (key, asked) = requests.iter().next().unwrap();
        (key.clone(), asked.clone())
    };

    let (status, response) = client.request(1, "tools/call", call(json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    let result = &response["result"];
    assert_eq!(result["resultType"], "input_required", "{response}");
    let (first_key, asked) = only(result);
    assert_eq!(asked["method"], "sampling/createMessage", "{response}");
    assert_eq!(asked["params"]["messages"][0]["content"]["text"], "first?");
    let state = result["requestState"].as_str().unwrap().to_owned();

    let first =
        json!({"inputResponses": {first_key.clone(): answer("one")}, "requestState": state});
    let (_, response) = client.request(2, "tools/call", call(first)).await;
    let result = &response["result"];
    assert_eq!(result["resultType"], "input_required", "{response}");
    let (second_key, asked) = only(result);
    assert_ne!(second_key, first_key, "keys are never reused within a call");
    assert_eq!(asked["params"]["messages"][0]["content"]["text"], "second?");
    let state = result["requestState"].as_str().unwrap().to_owned();

    let second = json!({
        "inputResponses": {second_key: answer("two")},
        "requestState": state,
    });
    let (_, response) = client.request(3, "tools/call", call(second)).await;
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    assert_eq!(response["result"]["isError"], json!(null), "{response}");
    assert_eq!(response["result"]["content"][0]["text"], "one + two");

    // A client without `sampling` is not asked: the request is refused with -32021 (400).
    let params = with_meta(json!({"name": "ask_twice"}), json!({}));
    let (status, response) = client.request(4, "tools/call", params).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{response}");
    assert_eq!(response["error"]["code"], -32021, "{response}");
    srv.stop().await;
}
