//! Our client where conformance suites do not look, against the scripted fake servers of
//! `common::fake` (and our own server where it says so): a URL-mode elicitation without
//! `elicitationId` (2026-07-28) and with it (2025-11-25); the `Mcp-Param-*` headers and the
//! `-32020` retry of every call that sends `tools/call`; a server's request on a 2026 response
//! stream, never answered; the cache around a list change that meets a list in flight, an
//! invalid cursor and a subscription listened to again. Every wait is bounded.
#![cfg(all(feature = "http", feature = "client-http"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::transport::{HttpTransport, IoTransport};
use actix_mcp::client::{CallOptions, ClientBuilder, Era, Lifecycle, ListenEvent};
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    ElicitAction, ElicitRequestParams, ElicitResult, ListRootsResult, SubscriptionFilter,
};
use actix_mcp::transport::stdio::StdioConfig;
use common::fake::*;
use common::within;
use futures::StreamExt;
use serde_json::{Value, json};

/// The `elicitationId` of each URL-mode elicitation a client was asked.
type Ids = Arc<Mutex<Vec<Option<String>>>>;

/// Accepts URL-mode elicitations only, recording their ids in `seen`.
fn url_accepting(seen: Ids) -> ClientBuilder {
    builder()
        .elicitation(move |params, _| {
            let seen = seen.clone();
            async move {
                let ElicitRequestParams::Url(url) = params else {
                    panic!("not a URL elicitation: {params:?}");
                };
                assert_eq!(url.url, "https://example.com/login");
                seen.lock().unwrap().push(url.elicitation_id);
                Ok(ElicitResult::new(ElicitAction::Accept))
            }
        })
        .elicitation_url(true)
        .elicitation_form(false)
}

/// A 2026 script whose `tools/call` asks for a URL-mode elicitation without `elicitationId`
/// (as 2026-07-28 defines it), then answers with the action it got.
fn url_elicitation_script(body: &Value, _: usize) -> Reply {
    match body["method"].as_str().unwrap_or("") {
        "server/discover" => discover(body),
        "tools/list" => tools_page(
            body,
            0,
            json!([{"name": "visit", "inputSchema": {"type": "object"}}]),
        ),
        "tools/call" => match body["params"]["inputResponses"]["login"]["action"].as_str() {
            Some(action) => text(body, action),
            None => ok(
                body,
                json!({
                    "resultType": "input_required",
                    "inputRequests": {"login": {"method": "elicitation/create", "params": {
                        "mode": "url", "message": "Sign in", "url": "https://example.com/login"}}}
                }),
            ),
        },
        _ if body.get("id").is_none() => Reply::Nothing,
        _ => error(404, body, -32601, Value::Null),
    }
}

#[actix_web::test]
async fn a_2026_url_elicitation_without_an_id_is_answered_over_http_and_stdio() {
    let seen = Ids::default();
    let (url, http_log) = serve_http(url_elicitation_script);
    let client = within(url_accepting(seen.clone()).connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    let result = within(client.call_tool("visit", ())).await.unwrap();
    assert_eq!(result.text_content(), "accept");

    let (transport, stdio_log) = serve_stdio(url_elicitation_script);
    let client = within(url_accepting(seen.clone()).connect(transport))
        .await
        .unwrap();
    let result = within(client.call_tool("visit", ())).await.unwrap();
    assert_eq!(result.text_content(), "accept");

    assert_eq!(*seen.lock().unwrap(), [None, None]);
    for log in [http_log, stdio_log] {
        let retry = log.with_method("tools/call").pop().unwrap();
        assert_eq!(
            retry.body["params"]["inputResponses"]["login"],
            json!({"action": "accept"})
        );
    }
}

/// A 2025-11-25 script over stdio whose `tools/call` first sends an
/// `elicitation/create` request with `params`, then answers with the client's answer to it.
fn v2025_elicitation_script(params: Value) -> impl Fn(&Value, usize) -> Reply + Send + Sync {
    let call = Arc::new(Mutex::new(Value::Null));
    move |body, _| match body["method"].as_str() {
        Some("initialize") => ok(
            body,
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "old", "version": "1"}}),
        ),
        Some("tools/call") => {
            *call.lock().unwrap() = body["id"].clone();
            Reply::Lines(vec![json!({"jsonrpc": "2.0", "id": "ask-1",
                "method": "elicitation/create", "params": params})])
        }
        Some(_) => Reply::Nothing,
        // The client's answer to ask-1: the call's result carries it.
        None => {
            let id = call.lock().unwrap().clone();
            ok(
                &json!({"id": id}),
                json!({"content": [{"type": "text", "text": body.to_string()}]}),
            )
        }
    }
}

#[actix_rt::test]
async fn a_2025_url_elicitation_still_needs_its_id() {
    for (params, handled) in [
        (
            json!({"mode": "url", "message": "Sign in", "url": "https://example.com/login"}),
            false,
        ),
        (
            json!({"mode": "url", "message": "Sign in", "url": "https://example.com/login",
                   "elicitationId": "login-1"}),
            true,
        ),
    ] {
        let seen = Ids::default();
        let (transport, _) = serve_stdio(v2025_elicitation_script(params));
        let client = within(
            url_accepting(seen.clone())
                .lifecycle(Lifecycle::V2025)
                .connect(transport),
        )
        .await
        .unwrap();
        let result = within(client.call_tool("visit", ())).await.unwrap();
        let answer: Value = serde_json::from_str(&result.text_content()).unwrap();
        assert_eq!(answer["id"], "ask-1");
        if handled {
            assert_eq!(answer["result"]["action"], "accept", "{answer}");
        } else {
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
        }
        let ids = seen.lock().unwrap().clone();
        if handled {
            assert_eq!(ids, [Some("login-1".to_owned())]);
        } else {
            assert!(ids.is_empty(), "the handler was not asked: {ids:?}");
        }
    }
}

/// Our server with a tool that asks for a URL-mode elicitation.
fn url_server() -> Server {
    Server::builder("edges", "1.0.0")
        .tool(
            ToolDef::new("visit", |cx: RequestContext| async move {
                match cx
                    .elicit_url("Sign in", "https://example.com/login", "login-1")
                    .await
                {
                    Ok(result) => format!("{:?}", result.action),
                    Err(err) => format!("error: {err}"),
                }
            })
            .description("Sends the user to a page"),
        )
        .build()
        .unwrap()
}

#[actix_web::test]
async fn our_client_answers_our_servers_2026_url_elicitation_over_http_and_stdio() {
    let seen = Ids::default();
    let running = common::wire::serve(url_server().http("/mcp").build().unwrap().configure());
    let client = within(url_accepting(seen.clone()).connect(HttpTransport::new(&running.url)))
        .await
        .unwrap();
    assert_eq!(client.era(), Era::V2026);
    let result = within(client.call_tool("visit", ())).await.unwrap();
    assert_eq!(result.text_content(), "Accept");
    client.close().await;
    running.stop().await;

    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_end);
    actix_rt::spawn(async move {
        let _ = url_server()
            .serve_io(server_read, server_write, StdioConfig::default())
            .await;
    });
    let (read, write) = tokio::io::split(client_end);
    let client = within(url_accepting(seen.clone()).connect(IoTransport::new(read, write)))
        .await
        .unwrap();
    assert_eq!(client.era(), Era::V2026);
    let result = within(client.call_tool("visit", ())).await.unwrap();
    assert_eq!(result.text_content(), "Accept");
    // Our server asked in the 2026 shape: no elicitationId.
    assert_eq!(*seen.lock().unwrap(), [None, None]);
}

// ---------------------------------------------------------------------------------------------
// Mcp-Param-* headers and the -32020 retry, whichever call sends tools/call

/// A server that refuses (`-32020`) a `tools/call` whose `Mcp-Param-Region` header does not
/// carry `arguments.region`; it lists `route` without its annotation for the first
/// `plain_lists` lists, with it afterwards.
fn serve_strict(plain_lists: usize) -> (String, Log) {
    serve_http_seen(move |seen, before| {
        let body = &seen.body;
        let region = seen.headers.get("mcp-param-region").map(String::as_str);
        match body["method"].as_str().unwrap_or("") {
            "server/discover" => discover(body),
            "tools/list" if before < plain_lists => tools_page(
                body,
                60_000,
                json!([{"name": "route", "inputSchema": {"type": "object"}}]),
            ),
            "tools/list" => tools_page(
                body,
                60_000,
                json!([serde_json::from_str::<Value>(ANNOTATED_TOOL).unwrap()]),
            ),
            "tools/call" if region != body["params"]["arguments"]["region"].as_str() => {
                error(400, body, -32020, Value::Null)
            }
            "tools/call" => text(body, "routed"),
            _ => error(404, body, -32601, Value::Null),
        }
    })
}

fn route_call() -> Option<Value> {
    Some(json!({"name": "route", "arguments": {"region": "eu-west"}}))
}

#[actix_web::test]
async fn the_generic_request_path_learns_a_tools_headers_before_calling_it() {
    let (url, log) = serve_strict(0);
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    let result: Value = within(client.request("tools/call", route_call(), CallOptions::new()))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "routed");
    let calls = log.with_method("tools/call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].headers["mcp-param-region"], "eu-west");
    assert_eq!(log.with_method("tools/list").len(), 1);

    // The lowest-level call too.
    let (url, log) = serve_strict(0);
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    let pending =
        within(client.start_request::<Value>("tools/call", route_call(), CallOptions::new()))
            .await
            .unwrap();
    let result = within(pending).await.unwrap();
    assert_eq!(result["content"][0]["text"], "routed");
    assert_eq!(
        log.with_method("tools/call")[0].headers["mcp-param-region"],
        "eu-west"
    );
}

#[actix_web::test]
async fn a_header_mismatch_relists_and_retries_once_whichever_call_sends_it() {
    // The first list shows the tool without its annotation: the first call has no header.
    let (url, log) = serve_strict(1);
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    within(client.tools()).await.unwrap();
    let result: Value = within(client.request("tools/call", route_call(), CallOptions::new()))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "routed");
    let calls = log.with_method("tools/call");
    assert_eq!(calls.len(), 2, "refused once, then retried");
    assert!(!calls[0].headers.contains_key("mcp-param-region"));
    assert_eq!(calls[1].headers["mcp-param-region"], "eu-west");
    assert_eq!(log.with_method("tools/list").len(), 2, "listed again");

    // The same through one round of the manual input mode.
    let (url, log) = serve_strict(1);
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    within(client.tools()).await.unwrap();
    let step =
        within(client.request_step::<Value>("tools/call", route_call(), None, CallOptions::new()))
            .await
            .unwrap();
    assert_eq!(step.complete().unwrap()["content"][0]["text"], "routed");
    assert_eq!(log.with_method("tools/call").len(), 2);

    // A server that keeps refusing: one retry, then its error.
    let (url, log) = serve_http(|body, _| match body["method"].as_str().unwrap_or("") {
        "server/discover" => discover(body),
        "tools/list" => tools_page(body, 0, json!([])),
        _ => error(400, body, -32020, Value::Null),
    });
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    let refused = within(client.request::<Value>("tools/call", route_call(), CallOptions::new()))
        .await
        .unwrap_err();
    assert_eq!(refused.rpc().map(|e| e.code.0), Some(-32020), "{refused:?}");
    assert_eq!(log.with_method("tools/call").len(), 2);
}

// ---------------------------------------------------------------------------------------------
// A server's request on a response stream (2026 forbids it): never answered

/// A 2026 script whose `tools/call` answer first carries a `roots/list` request of the server.
fn asking_script(body: &Value, _: usize) -> Reply {
    match body["method"].as_str() {
        Some("server/discover") => discover(body),
        Some("tools/list") => tools_page(body, 0, json!([])),
        Some("tools/call") => Reply::Lines(vec![
            json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}),
            json!({"jsonrpc": "2.0", "id": body["id"], "result": {"resultType": "complete",
                "content": [{"type": "text", "text": "done"}]}}),
        ]),
        Some(_) if body.get("id").is_none() => Reply::Nothing,
        Some(_) => error(404, body, -32601, Value::Null),
        // A response of the client's: it must never come.
        None => Reply::Nothing,
    }
}

#[actix_web::test]
async fn a_servers_request_on_a_2026_stream_is_not_answered_over_http_or_stdio() {
    let asked = Arc::new(AtomicUsize::new(0));
    let counting = |asked: Arc<AtomicUsize>| {
        builder().roots(false, move |_| {
            asked.fetch_add(1, Ordering::SeqCst);
            async {
                Ok(ListRootsResult {
                    roots: Vec::new(),
                    meta: None,
                })
            }
        })
    };
    let (url, http_log) = serve_http(asking_script);
    let http = within(counting(asked.clone()).connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    let (transport, stdio_log) = serve_stdio(asking_script);
    let stdio = within(counting(asked.clone()).connect(transport))
        .await
        .unwrap();
    for client in [&http, &stdio] {
        let result = within(client.call_tool("t", ())).await.unwrap();
        assert_eq!(result.text_content(), "done", "the stream was read on");
        // And the client goes on working.
        within(client.call_tool("t", ())).await.unwrap();
    }
    // An answer would have been sent at once; give it time to show.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(asked.load(Ordering::SeqCst), 0, "no handler ran");
    for log in [http_log, stdio_log] {
        let responses: Vec<Seen> = log
            .all()
            .into_iter()
            .filter(|seen| seen.body.get("method").is_none())
            .collect();
        assert!(responses.is_empty(), "the client answered: {responses:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// The cache

/// A result response to `body`, as a message.
fn response(body: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": body["id"], "result": result})
}

fn tools_filter() -> SubscriptionFilter {
    SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    }
}

/// A listen notification of subscription `id`.
fn on(method: &str, id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": {
        "_meta": {"io.modelcontextprotocol/subscriptionId": id}}})
}

fn acknowledged(id: &Value) -> Value {
    let mut ack = on("notifications/subscriptions/acknowledged", id);
    ack["params"]["notifications"] = json!({"toolsListChanged": true});
    ack
}

#[actix_rt::test]
async fn a_list_change_during_an_in_flight_list_is_kept() {
    let listen = Arc::new(Mutex::new(Value::Null));
    let (transport, log) = serve_stdio(move |body, before| {
        let page = json!({"resultType": "complete", "ttlMs": 60_000, "cacheScope": "private",
                          "tools": []});
        match body["method"].as_str().unwrap_or("") {
            "server/discover" => discover(body),
            "subscriptions/listen" => {
                *listen.lock().unwrap() = body["id"].clone();
                Reply::Lines(vec![acknowledged(&body["id"])])
            }
            // The list changes while the first list is on its way.
            "tools/list" if before == 0 => {
                let id = listen.lock().unwrap().clone();
                Reply::Lines(vec![
                    on("notifications/tools/list_changed", &id),
                    response(body, page),
                ])
            }
            "tools/list" => ok(body, page),
            _ => Reply::Nothing,
        }
    });
    let client = within(builder().connect(transport)).await.unwrap();
    let mut events = within(client.listen(tools_filter())).await.unwrap();
    let ack = within(events.next()).await.unwrap().unwrap();
    assert!(matches!(ack, ListenEvent::Acknowledged(_)), "{ack:?}");
    within(client.tools()).await.unwrap();
    let change = within(events.next()).await.unwrap().unwrap();
    assert_eq!(change, ListenEvent::ToolsListChanged);
    within(client.tools()).await.unwrap();
    assert_eq!(
        log.with_method("tools/list").len(),
        2,
        "the list that was in flight is stale: not cached"
    );
    within(client.tools()).await.unwrap();
    assert_eq!(log.with_method("tools/list").len(), 2, "the fresh one is");
}

#[actix_rt::test]
async fn an_invalid_cursor_drops_the_cached_pages_and_the_walk_restarts() {
    let (transport, log) = serve_stdio(|body, before| {
        let page = |name: &str, next: Option<&str>, ttl: u64| {
            let mut result = json!({"resultType": "complete", "ttlMs": ttl,
                "cacheScope": "private", "tools": [{"name": name, "inputSchema": {"type": "object"}}]});
            if let Some(next) = next {
                result["nextCursor"] = json!(next);
            }
            ok(body, result)
        };
        match (
            body["method"].as_str().unwrap_or(""),
            body["params"]["cursor"].as_str(),
        ) {
            ("server/discover", _) => discover(body),
            // The server restarted after the first walk: its old cursors are gone.
            ("tools/list", None) if before == 0 => page("a", Some("old-1"), 60_000),
            ("tools/list", None) => page("a", Some("new-1"), 60_000),
            ("tools/list", Some("old-1")) if before < 2 => page("b", None, 0),
            ("tools/list", Some("new-1")) => page("c", None, 0),
            ("tools/list", Some(_)) => error(0, body, -32602, json!({"reason": "invalid cursor"})),
            _ => Reply::Nothing,
        }
    });
    let client = within(builder().connect(transport)).await.unwrap();
    let names = |tools: Vec<actix_mcp::protocol::Tool>| {
        tools.into_iter().map(|t| t.name).collect::<Vec<_>>()
    };
    assert_eq!(names(within(client.tools()).await.unwrap()), ["a", "b"]);
    // The first page comes from the cache, its cursor is refused: the cache forgets the pages
    // and the walk starts again at the server.
    assert_eq!(names(within(client.tools()).await.unwrap()), ["a", "c"]);
    let cursors: Vec<Value> = log
        .with_method("tools/list")
        .iter()
        .map(|seen| seen.body["params"]["cursor"].clone())
        .collect();
    assert_eq!(
        cursors,
        [
            Value::Null,
            json!("old-1"),
            json!("old-1"),
            Value::Null,
            json!("new-1")
        ]
    );

    // One page with a refused cursor: the error, and the cached pages are gone.
    let refused = within(client.list_tools(Some("old-1"))).await.unwrap_err();
    assert_eq!(refused.rpc().map(|e| e.code.0), Some(-32602), "{refused:?}");
    within(client.list_tools(None)).await.unwrap();
    assert_eq!(log.with_method("tools/list").len(), 7);
}

#[actix_web::test]
async fn a_relistened_subscription_drops_what_it_may_have_missed() {
    // Each listen stream ends after its acknowledgement: it broke, and is listened to again.
    let (url, log) = serve_http(|body, _| match body["method"].as_str().unwrap_or("") {
        "server/discover" => discover(body),
        "tools/list" => tools_page(body, 60_000, json!([])),
        "subscriptions/listen" => Reply::Lines(vec![acknowledged(&body["id"])]),
        _ => error(404, body, -32601, Value::Null),
    });
    let client = within(builder().connect(HttpTransport::new(&url)))
        .await
        .unwrap();
    within(client.tools()).await.unwrap();
    within(client.tools()).await.unwrap();
    assert_eq!(log.with_method("tools/list").len(), 1, "cached");
    let mut events = within(client.listen(tools_filter())).await.unwrap();
    for _ in 0..2 {
        let ack = within(events.next()).await.unwrap().unwrap();
        assert!(matches!(ack, ListenEvent::Acknowledged(_)), "{ack:?}");
    }
    assert!(log.with_method("subscriptions/listen").len() >= 2);
    within(client.tools()).await.unwrap();
    assert_eq!(
        log.with_method("tools/list").len(),
        2,
        "a change may have been missed while the stream was down"
    );
}
