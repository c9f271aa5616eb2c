//! Protocol 2026-07-28 on the server: both eras on one endpoint, chosen per request;
//! `server/discover`; `resultType`, cache hints and server info on results; per-request log
//! levels; `subscriptions/listen`; stdio serving both eras; sampling through input-required
//! rounds. Every message the server sends to a 2026 request is validated against the 2026
//! schema. The request envelope and headers are tested in `server_v2026_envelope.rs`.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use actix_mcp::prelude::*;
use actix_mcp::transport::stdio::StdioConfig;
use futures::StreamExt;
use reqwest::StatusCode;
use reqwest::header::ACCEPT;
use serde_json::{Value, json};

use common::http::{Client, VERSION, spawn};
use common::sse::SseReader;
use common::v2026::{ALL_VERSIONS, V2026, V2026Client, meta, server, with_meta};
use common::{WAIT, assert_valid_in};

#[actix_rt::test]
async fn discover_describes_the_server_with_cache_hints_and_server_info() {
    let srv = spawn(server().http("/mcp"), 1);
    let client = V2026Client::new(&srv.url);
    let (status, response) = client
        .request(1, "server/discover", json!({"_meta": meta(json!({}))}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let result = &response["result"];
    assert_valid_in(V2026, "DiscoverResult", result);
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
    assert_valid_in(V2026, "ListToolsResult", &list["result"]);
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
    assert_valid_in(V2026, "CallToolResult", &call["result"]);
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
    assert_valid_in(V2026, "ReadResourceResult", &read["result"]);
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
        assert_valid_in(V2026, "SubscriptionsAcknowledgedNotification", &ack);
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
    assert_valid_in(V2026, "ToolListChangedNotification", &change);

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
    assert_valid_in(V2026, "JSONRPCResultResponse", &response);
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
