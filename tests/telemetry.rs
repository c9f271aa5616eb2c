//! OpenTelemetry spans (feature `otel`) of a real Streamable HTTP server on `127.0.0.1:0` and of
//! our client, recorded by the SDK's in-memory exporter: span names, kinds and the semantic
//! conventions' attributes, parent links from `traceparent` in `_meta` and in the HTTP header,
//! the trace context put into the `_meta` of a server-to-client request and of a client
//! request, and `error.type` on failures. The metrics are in `telemetry_metrics.rs`.
//!
//! One in-memory pipeline serves the whole binary ([`common::otel`]), so the tests take turns
//! and look spans up by the trace ids they made up. Every wait is bounded.
#![cfg(all(feature = "http", feature = "client", feature = "otel"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use actix_mcp::client::{Client, ServerRequest};
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CreateMessageRequestParams, CreateMessageResult, OneOrMany, SamplingMessageContentBlock,
};
use actix_mcp::telemetry;
use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use serde_json::{Value, json};
use tracing::Instrument as _;

use common::eventually;
use common::http::{SAMPLING, caps, read_answer, send};
use common::http_tools::start;
use common::otel::{attr, connect, otel, turn};
use common::pipe::PipeClient;

/// A `traceparent` of trace `trace` (32 hex digits) and parent span `span` (16), sampled.
fn traceparent(trace: &str, span: &str) -> String {
    format!("00-{trace}-{span}-01")
}

/// The trace id of `span`, as hex.
fn trace_of(span: &SpanData) -> String {
    span.span_context.trace_id().to_string()
}

/// The finished span that `matches`, if there is one yet.
fn find_span(matches: impl Fn(&SpanData) -> bool) -> Option<SpanData> {
    otel()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .find(|span| matches(span))
}

/// Waits for a finished span that `matches`; fails after [`WAIT`](common::WAIT), listing the
/// spans (name and trace) there were.
async fn span_where(what: &str, matches: impl Fn(&SpanData) -> bool) -> SpanData {
    eventually(what, || {
        find_span(&matches).ok_or_else(|| {
            let spans = otel().spans.get_finished_spans().unwrap();
            let seen: Vec<_> = spans
                .iter()
                .map(|s| (s.name.to_string(), trace_of(s)))
                .collect();
            format!("spans {seen:?}")
        })
    })
    .await
}

/// Waits for a finished span with `name` in trace `trace`.
async fn span(name: &str, trace: &str) -> SpanData {
    span_where(&format!("a span `{name}` in trace {trace}"), |span| {
        span.name == name && trace_of(span) == trace
    })
    .await
}

/// Whether `span` is one of our client's: a `CLIENT` span that is the root of its trace.
fn is_client_root(span: &SpanData) -> bool {
    span.span_kind == SpanKind::Client
        && span.parent_span_id == opentelemetry::trace::SpanId::INVALID
}

/// Asserts that `attributes` hold exactly these key/value pairs among the given keys (a `None`
/// value: the key must be absent), and no key twice.
fn assert_attrs(attributes: &[KeyValue], expected: &[(&str, Option<&str>)]) {
    let mut keys: Vec<&str> = attributes.iter().map(|kv| kv.key.as_str()).collect();
    keys.sort_unstable();
    let before = keys.len();
    keys.dedup();
    assert_eq!(
        keys.len(),
        before,
        "an attribute set twice in {attributes:?}"
    );
    for (key, value) in expected {
        assert_eq!(
            attr(attributes, key).as_deref(),
            *value,
            "attribute `{key}` in {attributes:?}"
        );
    }
}

/// The trace id and span id of a `traceparent` value.
fn parse_traceparent(value: &str) -> (String, String) {
    let parts: Vec<&str> = value.split('-').collect();
    assert_eq!(parts.len(), 4, "{value}");
    assert_eq!(parts[0], "00", "{value}");
    (parts[1].to_owned(), parts[2].to_owned())
}

/// `tools/call` with a `traceparent` (and `tracestate`) in `_meta`: a `SERVER` span named
/// `tools/call echo`, child of the remote parent, with the conventions' attributes; the
/// `initialize` before it has its own span.
#[actix_web::test]
async fn a_tool_call_is_a_server_span_under_the_trace_context_of_its_meta() {
    let _turn = turn().await;
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let session = client.session.clone().unwrap();
    let trace = "0af7651916cd43dd8448eb211c800001";
    let answer = client
        .request(
            json!(7),
            "tools/call",
            json!({
                "name": "echo",
                "arguments": {"message": "hi"},
                "_meta": {
                    "traceparent": traceparent(trace, "b7ad6b7169203331"),
                    "tracestate": "congo=t61rcWkgMzE",
                },
            }),
        )
        .await;
    assert!(
        answer.response.get("result").is_some(),
        "{}",
        answer.response
    );

    let call = span("tools/call echo", trace).await;
    assert_eq!(call.span_kind, SpanKind::Server);
    assert_eq!(call.parent_span_id.to_string(), "b7ad6b7169203331");
    assert!(call.parent_span_is_remote);
    assert_eq!(
        call.span_context.trace_state().header(),
        "congo=t61rcWkgMzE"
    );
    assert_eq!(call.status, Status::Unset);
    assert_attrs(
        &call.attributes,
        &[
            ("mcp.method.name", Some("tools/call")),
            ("gen_ai.tool.name", Some("echo")),
            ("gen_ai.operation.name", Some("execute_tool")),
            ("jsonrpc.request.id", Some("7")),
            ("mcp.session.id", Some(&session)),
            ("mcp.protocol.version", Some("2025-11-25")),
            ("network.transport", Some("tcp")),
            ("network.protocol.name", Some("http")),
            ("error.type", None),
            ("rpc.response.status_code", None),
        ],
    );
    assert_eq!(
        call.instrumentation_scope.name(),
        telemetry::SCOPE,
        "the crate's instrumentation scope"
    );

    // The `initialize` had no trace context: a root span of its own trace.
    let initialize = find_span(|span| {
        span.name == "initialize"
            && attr(&span.attributes, "mcp.session.id").as_deref() == Some(&session)
    })
    .expect("the initialize span");
    assert_eq!(initialize.span_kind, SpanKind::Server);
    assert_attrs(
        &initialize.attributes,
        &[
            ("mcp.method.name", Some("initialize")),
            ("jsonrpc.request.id", Some("0")),
            ("mcp.protocol.version", Some("2025-11-25")),
            ("network.transport", Some("tcp")),
        ],
    );
    srv.stop().await;
}

/// The HTTP request's `traceparent` header is the parent when `_meta` has none; with both,
/// `_meta`'s is the parent and the header's a link.
#[actix_web::test]
async fn the_http_traceparent_is_the_parent_without_meta_and_a_link_with_it() {
    let _turn = turn().await;
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;

    let header_trace = "0af7651916cd43dd8448eb211c800002";
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "header"}},
    });
    call_with_header(
        &client,
        &body,
        json!(1),
        &traceparent(header_trace, "00f067aa0ba90201"),
    )
    .await;
    let call = span("tools/call echo", header_trace).await;
    assert_eq!(call.parent_span_id.to_string(), "00f067aa0ba90201");
    assert!(call.links.is_empty());

    let meta_trace = "0af7651916cd43dd8448eb211c800003";
    let linked_trace = "0af7651916cd43dd8448eb211c800004";
    let body = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"message": "both"},
            "_meta": {"traceparent": traceparent(meta_trace, "00f067aa0ba90203")},
        },
    });
    call_with_header(
        &client,
        &body,
        json!(2),
        &traceparent(linked_trace, "00f067aa0ba90204"),
    )
    .await;
    let call = span("tools/call echo", meta_trace).await;
    assert_eq!(call.parent_span_id.to_string(), "00f067aa0ba90203");
    let links: Vec<_> = call.links.iter().collect();
    assert_eq!(links.len(), 1, "{links:?}");
    assert_eq!(links[0].span_context.trace_id().to_string(), linked_trace);
    assert_eq!(
        links[0].span_context.span_id().to_string(),
        "00f067aa0ba90204"
    );

    // A malformed `traceparent` in `_meta` (or one of the wrong type) is ignored: the header's
    // context is the parent, and the request is served as usual.
    let header_trace = "0af7651916cd43dd8448eb211c80000b";
    for (id, bad) in [(3, json!("00-not-a-trace-context")), (4, json!(17))] {
        let body = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"message": "malformed"},
                "_meta": {"traceparent": bad},
            },
        });
        call_with_header(
            &client,
            &body,
            json!(id),
            &traceparent(header_trace, "00f067aa0ba9020b"),
        )
        .await;
    }
    let spans: Vec<_> = otel()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|span| trace_of(span) == header_trace)
        .collect();
    assert_eq!(spans.len(), 2, "{spans:?}");
    for span in spans {
        assert_eq!(span.parent_span_id.to_string(), "00f067aa0ba9020b");
    }
    srv.stop().await;
}

/// A tool's `sampling/createMessage` (2025-11-25 session): a `CLIENT` span, child of the tool
/// call's span, whose context travels in the request's `_meta.traceparent`.
#[actix_web::test]
async fn a_server_to_client_request_carries_its_span_in_meta() {
    let _turn = turn().await;
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(caps(SAMPLING)).await;
    let session = client.session.clone().unwrap();
    let trace = "0af7651916cd43dd8448eb211c800005";
    let mut reader = client
        .start(
            json!(3),
            "tools/call",
            json!({
                "name": "sample",
                "arguments": {},
                "_meta": {"traceparent": traceparent(trace, "00f067aa0ba90205")},
            }),
        )
        .await;
    let request = reader.next_message().await;
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    common::assert_valid("CreateMessageRequest", &request);
    let sent = request["params"]["_meta"]["traceparent"]
        .as_str()
        .unwrap_or_else(|| panic!("no traceparent in {request}"));
    let (sent_trace, sent_span) = parse_traceparent(sent);
    assert_eq!(sent_trace, trace);
    client
        .notify(&json!({
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "hi there"},
                "model": "test-model",
            },
        }))
        .await;
    let response = reader.next_message().await;
    assert_eq!(response["id"], 3, "{response}");

    let peer = span("sampling/createMessage", trace).await;
    let call = span("tools/call sample", trace).await;
    assert_eq!(peer.span_kind, SpanKind::Client);
    assert_eq!(peer.span_context.span_id().to_string(), sent_span);
    assert_eq!(peer.parent_span_id, call.span_context.span_id());
    assert_eq!(call.parent_span_id.to_string(), "00f067aa0ba90205");
    assert_attrs(
        &peer.attributes,
        &[
            ("mcp.method.name", Some("sampling/createMessage")),
            ("jsonrpc.request.id", Some(&request["id"].to_string())),
            ("mcp.session.id", Some(&session)),
            ("mcp.protocol.version", Some("2025-11-25")),
            ("network.transport", Some("tcp")),
            ("error.type", None),
        ],
    );
    srv.stop().await;
}

/// Over stdio: `network.transport` `pipe`, the stdio session's id.
#[actix_web::test]
async fn a_stdio_request_is_traced_as_pipe() {
    let _turn = turn().await;
    let fixture = common::http_tools::fixture();
    let mut client = PipeClient::connect(&fixture.server, json!({})).await;
    let trace = "0af7651916cd43dd8448eb211c800008";
    client
        .send(json!({
            "jsonrpc": "2.0", "id": 11, "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"message": "over stdio"},
                "_meta": {"traceparent": traceparent(trace, "00f067aa0ba90208")},
            },
        }))
        .await;
    let response = client.read().await;
    assert_eq!(response["id"], 11, "{response}");
    let call = span("tools/call echo", trace).await;
    assert_eq!(call.parent_span_id.to_string(), "00f067aa0ba90208");
    assert_attrs(
        &call.attributes,
        &[
            ("network.transport", Some("pipe")),
            ("network.protocol.name", None),
            ("mcp.protocol.version", Some("2025-11-25")),
            ("jsonrpc.request.id", Some("11")),
        ],
    );
    assert!(
        attr(&call.attributes, "mcp.session.id").is_some_and(|id| id.starts_with("stdio-")),
        "{:?}",
        call.attributes
    );
}

/// A 2026-07-28 request: the version of its `_meta` envelope, no session.
#[actix_web::test]
async fn a_stateless_request_has_the_version_of_its_envelope_and_no_session() {
    let _turn = turn().await;
    let (_fixture, srv) = start(|mcp| mcp);
    let trace = "0af7651916cd43dd8448eb211c800009";
    let body = json!({
        "jsonrpc": "2.0", "id": 12, "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"message": "stateless"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "otel-test", "version": "1.0.0"},
                "traceparent": traceparent(trace, "00f067aa0ba90209"),
            },
        },
    });
    let response = send(
        common::http::http_client()
            .post(&srv.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "echo")
            .body(body.to_string()),
    )
    .await;
    let answer = read_answer(response, &json!(12)).await;
    assert!(
        answer.response.get("result").is_some(),
        "{}",
        answer.response
    );
    let call = span("tools/call echo", trace).await;
    assert_attrs(
        &call.attributes,
        &[
            ("mcp.protocol.version", Some("2026-07-28")),
            ("mcp.session.id", None),
            ("network.transport", Some("tcp")),
            ("gen_ai.tool.name", Some("echo")),
        ],
    );
    srv.stop().await;
}

/// A handler's own `tracing` spans (through
/// [`TelemetryGuard::tracing_layer`](telemetry::TelemetryGuard::tracing_layer)) are children of
/// its request's span, also once the tool has moved into an actor of its own; in process, no
/// `network.transport`.
#[actix_web::test]
async fn a_handlers_tracing_spans_are_children_of_its_request() {
    let _turn = turn().await;
    let server = Server::builder("traced", "1.0.0")
        .tool(
            ToolDef::new("lookup", |_cx: RequestContext| async {
                // Pending once: the call moves into its tool-call actor, and goes on there.
                tokio::task::yield_now().await;
                let span = tracing::info_span!("lookup_database");
                async { "found" }.instrument(span).await
            })
            .description("Looks something up in a traced span"),
        )
        .build()
        .unwrap();
    let trace = "0af7651916cd43dd8448eb211c80000a";
    let request = json!({
        "jsonrpc": "2.0", "id": 13, "method": "tools/call",
        "params": {
            "name": "lookup",
            "arguments": {},
            "_meta": {"traceparent": traceparent(trace, "00f067aa0ba9020a")},
        },
    });
    let answer = common::in_process::send(&server, request).await;
    assert_eq!(answer["result"]["content"][0]["text"], "found", "{answer}");
    let call = span("tools/call lookup", trace).await;
    let inner = span("lookup_database", trace).await;
    assert_eq!(inner.parent_span_id, call.span_context.span_id());
    assert_eq!(call.parent_span_id.to_string(), "00f067aa0ba9020a");
    assert_attrs(
        &call.attributes,
        &[
            ("network.transport", None),
            ("jsonrpc.request.id", Some("13")),
        ],
    );
}

/// A JSON-RPC error sets `error.type` and `rpc.response.status_code` to its code and the
/// status to its message; a tool result with `isError` sets `error.type` `tool_error`.
#[actix_web::test]
async fn failures_set_error_type() {
    let _turn = turn().await;
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;

    let trace = "0af7651916cd43dd8448eb211c800006";
    let answer = client
        .request(
            json!(4),
            "tools/call",
            json!({
                "name": "no_such_tool",
                "arguments": {},
                "_meta": {"traceparent": traceparent(trace, "00f067aa0ba90206")},
            }),
        )
        .await;
    let error = &answer.response["error"];
    let code = error["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{}", answer.response));
    let call = span("tools/call no_such_tool", trace).await;
    assert_attrs(
        &call.attributes,
        &[
            ("error.type", Some(&code.to_string())),
            ("rpc.response.status_code", Some(&code.to_string())),
            ("gen_ai.tool.name", Some("no_such_tool")),
        ],
    );
    assert_eq!(
        call.status,
        Status::error(error["message"].as_str().unwrap().to_owned())
    );

    let trace = "0af7651916cd43dd8448eb211c800007";
    let answer = client
        .request(
            json!(5),
            "tools/call",
            json!({
                "name": "explode",
                "arguments": {"message": "boom"},
                "_meta": {"traceparent": traceparent(trace, "00f067aa0ba90207")},
            }),
        )
        .await;
    assert_eq!(
        answer.response["result"]["isError"], true,
        "{}",
        answer.response
    );
    let call = span("tools/call explode", trace).await;
    assert_attrs(
        &call.attributes,
        &[
            ("error.type", Some("tool_error")),
            ("rpc.response.status_code", None),
        ],
    );
    assert!(
        matches!(call.status, Status::Error { .. }),
        "{:?}",
        call.status
    );
    srv.stop().await;
}

/// Our client's request: a `CLIENT` span whose context reaches the server in `_meta`, so the
/// server's span is its child.
#[actix_web::test]
async fn a_client_request_carries_its_span_in_meta() {
    let _turn = turn().await;
    let (_fixture, srv) = start(|mcp| mcp);
    let client = connect(Client::builder("otel-test", "1.0.0"), &srv).await;
    let result = client
        .call_tool("echo", json!({"message": "from the client"}))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true));

    // The client's span is a root: find it by its tool, then the server's in its trace.
    let client_span = span_where("the client's span", |span| {
        span.name == "tools/call echo" && is_client_root(span)
    })
    .await;
    let trace = trace_of(&client_span);
    let server_span = span("tools/call echo", &trace).await;
    let server_span = if server_span.span_kind == SpanKind::Server {
        server_span
    } else {
        find_span(|span| span.span_kind == SpanKind::Server && trace_of(span) == trace)
            .expect("the server's span in the client's trace")
    };
    assert_eq!(
        server_span.parent_span_id,
        client_span.span_context.span_id()
    );
    assert!(server_span.parent_span_is_remote);
    let id = attr(&client_span.attributes, "jsonrpc.request.id").expect("the request id");
    assert_eq!(
        attr(&server_span.attributes, "jsonrpc.request.id").as_deref(),
        Some(id.as_str())
    );
    assert_attrs(
        &client_span.attributes,
        &[
            ("mcp.method.name", Some("tools/call")),
            ("gen_ai.tool.name", Some("echo")),
            ("gen_ai.operation.name", Some("execute_tool")),
            ("mcp.protocol.version", Some("2025-11-25")),
            ("network.transport", Some("tcp")),
            ("error.type", None),
        ],
    );
    client.close().await;
    drop(client);
    srv.stop().await;
}

/// One trace across both sides: our client's `tools/call sample` (`CLIENT`) → the server's
/// (`SERVER`) → the server's `sampling/createMessage` (`CLIENT`) → our client's handler
/// (`SERVER`), each the parent of the next, the context travelling in `_meta` both ways.
#[actix_web::test]
async fn one_trace_spans_client_server_and_the_nested_request() {
    let _turn = turn().await;
    let (_fixture, srv) = start(|mcp| mcp);
    let client = connect(
        Client::builder("otel-chain", "1.0.0").sampling(
            |_: CreateMessageRequestParams, request: ServerRequest| async move {
                // The handler sees the trace context the server sent.
                let traced = request
                    .meta
                    .as_ref()
                    .is_some_and(|meta| meta.contains_key("traceparent"));
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: OneOrMany::One(SamplingMessageContentBlock::text(if traced {
                        "traced"
                    } else {
                        "untraced"
                    })),
                    model: "test-model".into(),
                    stop_reason: None,
                    meta: None,
                })
            },
        ),
        &srv,
    )
    .await;
    let result = client.call_tool("sample", json!({})).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        "sampled: traced"
    );

    let root = span_where("the client's span", |span| {
        span.name == "tools/call sample"
            && is_client_root(span)
            && attr(&span.attributes, "network.transport").as_deref() == Some("tcp")
    })
    .await;
    let trace = trace_of(&root);
    let in_trace = |name: &str, kind: SpanKind| {
        find_span(|span| span.name == name && span.span_kind == kind && trace_of(span) == trace)
            .unwrap_or_else(|| panic!("no {kind:?} span `{name}` in trace {trace}"))
    };
    // The client's handler span ends before the server's request does: wait for the last one.
    span("tools/call sample", &trace).await;
    let server_call = in_trace("tools/call sample", SpanKind::Server);
    let server_ask = in_trace("sampling/createMessage", SpanKind::Client);
    let client_answer = in_trace("sampling/createMessage", SpanKind::Server);
    assert_eq!(server_call.parent_span_id, root.span_context.span_id());
    assert_eq!(
        server_ask.parent_span_id,
        server_call.span_context.span_id()
    );
    assert_eq!(
        client_answer.parent_span_id,
        server_ask.span_context.span_id()
    );
    assert!(client_answer.parent_span_is_remote);
    assert_attrs(
        &client_answer.attributes,
        &[
            ("mcp.method.name", Some("sampling/createMessage")),
            ("network.transport", Some("tcp")),
            ("error.type", None),
        ],
    );
    assert!(attr(&client_answer.attributes, "jsonrpc.request.id").is_some());
    client.close().await;
    drop(client);
    srv.stop().await;
}

/// POSTs `body` with `traceparent` as an HTTP header and checks it is answered with a result.
async fn call_with_header(
    client: &common::http::Client,
    body: &Value,
    id: Value,
    traceparent: &str,
) {
    let response = send(client.post_builder(body).header("traceparent", traceparent)).await;
    let answer = read_answer(response, &id).await;
    assert!(
        answer.response.get("result").is_some(),
        "{}",
        answer.response
    );
}
