//! Protocol 2026-07-28 on the server, the request itself: the `_meta` envelope (refused with
//! the spec's status, code and the request id; kept as text yet seen whole by middleware,
//! progress and handlers), removed and unknown methods, capability gating, and the standard
//! and parameter headers that must match the body. Every message the server sends is
//! validated against the 2026 schema.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};

use actix_mcp::prelude::*;
use actix_mcp::{Flow, Middleware};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::http::spawn;
use common::v2026::{ALL_VERSIONS, V2026, V2026Client, meta, server, with_meta};

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
