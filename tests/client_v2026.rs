//! Our client in the 2026-07-28 era, against in-process fake servers (`common::fake`: an
//! actix-web handler for HTTP, a line loop over an in-memory pipe for stdio) whose answers each
//! test scripts: the
//! per-request `_meta` and headers, the `x-mcp-header` rules and encoding, multi-round-trip
//! requests driven automatically and by hand, the `-32022` retry, the auto probe's fallback to
//! a 2025-11-25 server, the cache and `subscriptions/listen`. Every wait is bounded.
#![cfg(all(feature = "server", feature = "client-http"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use actix_mcp::client::transport::HttpTransport;
use actix_mcp::client::{CallOutcome, ClientError, Era, InputRetry, Lifecycle, ListenEvent};
use actix_mcp::protocol::SubscriptionFilter;
use common::fake::*;
use common::{eventually, within};
use futures::StreamExt;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// The tests

#[actix_web::test]
async fn every_request_carries_its_meta_and_request_metadata_headers() {
    let (url, log) = serve_http(|body, _| match body["method"].as_str().unwrap_or("") {
        "server/discover" => discover(body),
        "tools/list" => tools_page(
            body,
            0,
            json!([serde_json::from_str::<Value>(ANNOTATED_TOOL).unwrap()]),
        ),
        "tools/call" => text(body, "done"),
        "resources/read" => ok(
            body,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "contents": []}),
        ),
        "prompts/get" => ok(body, json!({"resultType": "complete", "messages": []})),
        _ => error(404, body, -32601, Value::Null),
    });
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    assert_eq!(client.era(), Era::V2026);
    assert_eq!(client.protocol_version().as_str(), V2026);
    assert_eq!(client.server_info().name, "fake");
    assert_eq!(client.instructions(), Some("be kind"));
    assert!(client.discover_result().is_some());

    // The tool was never listed: the call reads tools/list first to learn its headers.
    let arguments = json!({"region": "us-west1", "note": " héllo ", "priority": 42,
                           "verbose": null, "query": "SELECT 1"});
    within(client.call_tool("route", arguments)).await.unwrap();
    within(client.read_resource("file:///a%20b.txt"))
        .await
        .unwrap();
    within(client.get_prompt("greet", [("who", "you")]))
        .await
        .unwrap();

    let posts = log.all();
    let methods: Vec<&str> = posts
        .iter()
        .map(|s| s.body["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "tools/list",
            "tools/call",
            "resources/read",
            "prompts/get"
        ]
    );
    for seen in &posts {
        assert_eq!(seen.http_method, "POST", "no GET or DELETE in 2026");
        let meta = &seen.body["params"]["_meta"];
        assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], V2026);
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "v2026-test"
        );
        assert_eq!(seen.headers["mcp-protocol-version"], V2026);
        assert_eq!(seen.headers["mcp-method"], seen.body["method"]);
        assert!(!seen.headers.contains_key("mcp-session-id"), "{seen:?}");
    }
    let call = &posts[2].headers;
    assert_eq!(call["mcp-name"], "route");
    assert_eq!(call["mcp-param-region"], "us-west1");
    assert_eq!(call["mcp-param-note"], "=?base64?IGjDqWxsbyA=?=");
    assert_eq!(call["mcp-param-priority"], "42");
    assert!(!call.contains_key("mcp-param-verbose"), "null: no header");
    assert!(
        !call.contains_key("mcp-param-query"),
        "not annotated: no header"
    );
    assert_eq!(posts[3].headers["mcp-name"], "file:///a%20b.txt");
    assert_eq!(posts[4].headers["mcp-name"], "greet");
    within(client.close()).await;
    assert!(log.all().iter().all(|s| s.http_method == "POST"));
}

#[actix_web::test]
async fn tools_with_invalid_header_annotations_are_dropped() {
    let (url, _) = serve_http(|body, _| match body["method"].as_str().unwrap_or("") {
        "server/discover" => discover(body),
        "tools/list" => {
            let prop = |p: Value| json!({"type": "object", "properties": {"v": p}});
            tools_page(
                body,
                0,
                json!([
                    {"name": "valid", "inputSchema": prop(json!({"type": "string", "x-mcp-header": "Region"}))},
                    {"name": "empty", "inputSchema": prop(json!({"type": "string", "x-mcp-header": ""}))},
                    {"name": "space", "inputSchema": prop(json!({"type": "string", "x-mcp-header": "My Region"}))},
                    {"name": "number", "inputSchema": prop(json!({"type": "number", "x-mcp-header": "N"}))},
                    {"name": "nested", "inputSchema": prop(json!({"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}))},
                    {"name": "dup", "inputSchema": {"type": "object", "properties": {
                        "a": {"type": "string", "x-mcp-header": "Same"},
                        "b": {"type": "string", "x-mcp-header": "sAME"}}}},
                    {"name": "plain", "inputSchema": {"type": "object"}}
                ]),
            )
        }
        _ => error(404, body, -32601, Value::Null),
    });
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    let names: Vec<String> = within(client.tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["valid", "plain"]);
    let page = within(client.list_tools(None)).await.unwrap();
    assert_eq!(page.tools.len(), 2);
}

#[actix_web::test]
async fn an_unsupported_version_is_retried_once_with_a_listed_one() {
    let (url, log) = serve_http(|body, before| match body["method"].as_str().unwrap_or("") {
        "server/discover" if before == 0 => error(
            400,
            body,
            -32022,
            json!({"supported": ["2025-11-25", V2026], "requested": V2026}),
        ),
        "server/discover" => discover(body),
        "tools/list" => tools_page(body, 0, json!([])),
        _ => error(404, body, -32601, Value::Null),
    });
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    assert_eq!(
        client.era(),
        Era::V2026,
        "-32022 is a 2026-07-28 answer: no fallback"
    );
    within(client.tools()).await.unwrap();
    let discovers = log.with_method("server/discover");
    assert_eq!(discovers.len(), 2);
    assert_ne!(discovers[0].body["id"], discovers[1].body["id"]);
    assert!(log.with_method("initialize").is_empty());

    // A 2026-07-28 server with no version in common fails the connection, without a fallback.
    let (url, log) = serve_http(|body, _| {
        error(
            400,
            body,
            -32022,
            json!({"supported": ["2099-01-01"], "requested": V2026}),
        )
    });
    let refused = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap_err();
    assert_eq!(refused.rpc().map(|e| e.code.0), Some(-32022), "{refused:?}");
    assert!(log.with_method("initialize").is_empty());
}

#[actix_web::test]
async fn auto_falls_back_to_initialize_for_a_2025_server() {
    let (url, log) = serve_http(|body, _| match body["method"].as_str().unwrap_or("") {
        "initialize" => ok(
            body,
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "old", "version": "1"}}),
        ),
        "notifications/initialized" => Reply::Nothing,
        "tools/list" => ok(body, json!({"tools": []})),
        // No session: what a 2025 server says to anything but initialize.
        _ => Reply::Text(400, "Bad Request: no valid session id"),
    });
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    assert_eq!(client.era(), Era::V2025);
    assert_eq!(client.protocol_version().as_str(), "2025-11-25");
    assert_eq!(client.server_info().name, "old");
    assert!(client.discover_result().is_none());
    within(client.tools()).await.unwrap();
    let methods: Vec<String> = log
        .all()
        .iter()
        .filter(|s| s.http_method == "POST")
        .map(|s| s.body["method"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    let list = &log.with_method("tools/list")[0];
    assert!(
        list.body["params"]["_meta"].is_null(),
        "no 2026 _meta: {list:?}"
    );
    assert_eq!(list.headers["mcp-protocol-version"], "2025-11-25");

    // Pinned to 2026-07-28: the same server fails the connection instead.
    let pinned = within(
        builder()
            .lifecycle(Lifecycle::V2026)
            .connect(HttpTransport::new(&url)),
    )
    .await;
    assert!(pinned.is_err());
}

#[actix_web::test]
async fn input_required_is_driven_with_new_ids_and_the_state_echoed() {
    let (url, log) = serve_http(|body, _| {
        let params = &body["params"];
        match (
            body["method"].as_str().unwrap_or(""),
            params["name"].as_str(),
        ) {
            ("server/discover", _) => discover(body),
            ("tools/list", _) => tools_page(body, 0, json!([])),
            ("tools/call", Some("greet")) => match params["requestState"].as_str() {
                None => ok(
                    body,
                    json!({
                        "resultType": "input_required",
                        "inputRequests": {"user": {"method": "elicitation/create", "params": {
                            "message": "who?", "requestedSchema": {"type": "object",
                            "properties": {"name": {"type": "string"}}}}}},
                        "requestState": "{\"round\": 1}"
                    }),
                ),
                Some("{\"round\": 1}") => ok(
                    body,
                    json!({
                        "resultType": "input_required",
                        "inputRequests": {"again": {"method": "elicitation/create", "params": {
                            "message": "sure?", "requestedSchema": {"type": "object",
                            "properties": {"name": {"type": "string"}}}}}},
                        "requestState": "round-2 ✓"
                    }),
                ),
                Some(_) => text(body, "Hello, Alice!"),
            },
            ("tools/call", Some("loop")) => ok(
                body,
                json!({
                    "resultType": "input_required", "requestState": "again"
                }),
            ),
            ("tools/call", Some("old")) => ok(
                body,
                json!({"content": [{"type": "text", "text": "no type"}]}),
            ),
            ("tools/call", Some("odd")) => ok(body, json!({"resultType": "later", "content": []})),
            ("tools/call", _) => text(body, "unrelated"),
            _ => error(404, body, -32601, Value::Null),
        }
    });
    let client = within(
        accepting()
            .max_input_rounds(3)
            .connect(HttpTransport::new(&url)),
    )
    .await
    .unwrap();
    within(client.tools()).await.unwrap();
    let greeted = within(client.call_tool("greet", ())).await.unwrap();
    assert_eq!(greeted.text_content(), "Hello, Alice!");
    within(client.call_tool("other", ())).await.unwrap();

    let calls = log.with_method("tools/call");
    let ids: Vec<&Value> = calls.iter().map(|c| &c.body["id"]).collect();
    assert_eq!(ids.len(), 4);
    let unique: std::collections::HashSet<String> = ids.iter().map(|id| id.to_string()).collect();
    assert_eq!(unique.len(), 4, "every round is a new request: {ids:?}");
    let first = &calls[0].body["params"];
    assert!(first.get("inputResponses").is_none() && first.get("requestState").is_none());
    let second = &calls[1].body["params"];
    assert_eq!(
        second["requestState"], "{\"round\": 1}",
        "echoed byte for byte"
    );
    assert_eq!(second["inputResponses"]["user"]["action"], "accept");
    assert_eq!(second["inputResponses"]["user"]["content"]["name"], "Alice");
    assert!(second["inputResponses"]["user"].get("resultType").is_none());
    let third = &calls[2].body["params"];
    assert_eq!(third["requestState"], "round-2 ✓");
    assert!(
        third["inputResponses"].get("user").is_none(),
        "only this round's answers"
    );
    assert!(third["inputResponses"].get("again").is_some());
    for call in &calls {
        assert_eq!(
            call.headers["mcp-name"],
            call.body["params"]["name"].as_str().unwrap()
        );
    }
    let unrelated = &calls[3].body["params"];
    assert!(unrelated.get("inputResponses").is_none() && unrelated.get("requestState").is_none());

    // A server that never stops asking: the client gives up after its limit.
    let endless = within(client.call_tool("loop", ())).await.unwrap_err();
    assert!(matches!(endless, ClientError::Protocol(_)), "{endless:?}");
    let loops = log
        .with_method("tools/call")
        .into_iter()
        .filter(|c| c.body["params"]["name"] == "loop")
        .count();
    assert_eq!(loops, 4, "the first request and three retries");

    // No resultType is complete; an unknown one is an error.
    let old = within(client.call_tool("old", ())).await.unwrap();
    assert_eq!(old.text_content(), "no type");
    let odd = within(client.call_tool("odd", ())).await.unwrap_err();
    assert!(matches!(odd, ClientError::Protocol(_)), "{odd:?}");
}

#[actix_web::test]
async fn input_rounds_can_be_driven_by_hand() {
    let (url, log) = serve_http(|body, _| match body["method"].as_str().unwrap_or("") {
        "server/discover" => discover(body),
        "tools/list" => tools_page(
            body,
            0,
            json!([{"name": "greet", "inputSchema": {"type": "object"}}]),
        ),
        "tools/call" if body["params"].get("inputResponses").is_some() => text(body, "done"),
        "tools/call" => ok(
            body,
            json!({
                "resultType": "input_required",
                "inputRequests": {"user": {"method": "elicitation/create", "params": {
                    "message": "who?", "requestedSchema": {"type": "object", "properties": {}}}}}
            }),
        ),
        _ => error(404, body, -32601, Value::Null),
    });
    let client = within(
        accepting()
            .auto_input(false)
            .connect(HttpTransport::new(&url)),
    )
    .await
    .unwrap();
    let refused = within(client.call_tool("greet", ())).await.unwrap_err();
    assert!(
        matches!(refused, ClientError::InputRequired(_)),
        "{refused:?}"
    );
    let CallOutcome::InputRequired(round) = within(client.call_tool_step("greet", (), None))
        .await
        .unwrap()
    else {
        panic!("expected input_required");
    };
    let answers = within(client.fulfil_input(&round)).await.unwrap();
    let done = within(client.call_tool_step("greet", (), Some(InputRetry::new(&round, answers))))
        .await
        .unwrap();
    assert_eq!(done.complete().unwrap().text_content(), "done");
    let last = log.with_method("tools/call").pop().unwrap();
    assert!(
        last.body["params"].get("requestState").is_none(),
        "none was given"
    );
    assert_eq!(
        last.body["params"]["inputResponses"]["user"]["action"],
        "accept"
    );
}

#[actix_rt::test]
async fn listen_streams_its_notifications_and_changes_drop_cached_results() {
    let (transport, log) = serve_stdio(|body, _| {
        let id = body["id"].clone();
        let on = |method: &str, subscription: &Value| {
            json!({"jsonrpc": "2.0", "method": method, "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": subscription}}})
        };
        match body["method"].as_str().unwrap_or("") {
            "server/discover" => discover(body),
            "tools/list" => tools_page(body, 60_000, json!([])),
            "resources/read" => ok(
                body,
                json!({"resultType": "complete", "ttlMs": -1,
                "cacheScope": "public", "contents": []}),
            ),
            "subscriptions/listen" => {
                let mut ack = on("notifications/subscriptions/acknowledged", &id);
                ack["params"]["notifications"] = json!({"toolsListChanged": true});
                Reply::Lines(vec![
                    ack,
                    on(
                        "notifications/prompts/list_changed",
                        &json!("another-stream"),
                    ),
                    on("notifications/tools/list_changed", &id),
                ])
            }
            _ if body.get("id").is_none() => Reply::Nothing,
            _ => error(0, body, -32601, Value::Null),
        }
    });
    let client = within(builder().connect(transport)).await.unwrap();
    assert_eq!(client.era(), Era::V2026);

    // Cached for its ttlMs; a negative ttlMs is never cached.
    within(client.tools()).await.unwrap();
    within(client.tools()).await.unwrap();
    assert_eq!(
        log.with_method("tools/list").len(),
        1,
        "the second came from the cache"
    );
    within(client.read_resource("r://x")).await.unwrap();
    within(client.read_resource("r://x")).await.unwrap();
    assert_eq!(log.with_method("resources/read").len(), 2);

    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let mut events = within(client.listen(filter)).await.unwrap();
    let first = within(events.next()).await.unwrap().unwrap();
    assert!(
        matches!(first, ListenEvent::Acknowledged(ref f) if f.tools_list_changed == Some(true)),
        "{first:?}"
    );
    let second = within(events.next()).await.unwrap().unwrap();
    assert_eq!(
        second,
        ListenEvent::ToolsListChanged,
        "the other stream's notification is not here"
    );

    // The change dropped the cached list.
    within(client.tools()).await.unwrap();
    assert_eq!(log.with_method("tools/list").len(), 2);

    // Dropping the subscription cancels the listen request (stdio: notifications/cancelled).
    let listen_id = log.with_method("subscriptions/listen")[0].body["id"].clone();
    drop(events);
    let cancelled = eventually("the listen request is cancelled", || {
        log.with_method("notifications/cancelled").pop()
    })
    .await;
    assert_eq!(cancelled.body["params"]["requestId"], listen_id);

    // Every request over stdio carried the _meta too.
    for seen in log.all().iter().filter(|s| s.body.get("id").is_some()) {
        assert_eq!(
            seen.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], V2026,
            "{seen:?}"
        );
    }
}

#[actix_rt::test]
async fn the_cache_can_be_turned_off_and_the_log_level_rides_in_meta() {
    let (transport, log) = serve_stdio(|body, _| match body["method"].as_str().unwrap_or("") {
        "server/discover" => discover(body),
        "tools/list" => tools_page(body, 60_000, json!([])),
        _ => Reply::Nothing,
    });
    let client = within(
        builder()
            .cache(false)
            .log_level(actix_mcp::protocol::LoggingLevel::Warning)
            .connect(transport),
    )
    .await
    .unwrap();
    within(client.tools()).await.unwrap();
    within(client.set_logging_level(actix_mcp::protocol::LoggingLevel::Debug))
        .await
        .unwrap();
    within(client.tools()).await.unwrap();
    let lists = log.with_method("tools/list");
    assert_eq!(lists.len(), 2, "no cache");
    let level =
        |i: usize| lists[i].body["params"]["_meta"]["io.modelcontextprotocol/logLevel"].clone();
    assert_eq!(level(0), "warning");
    assert_eq!(level(1), "debug");
    assert!(
        log.with_method("logging/setLevel").is_empty(),
        "removed in 2026"
    );
}
