//! Extensions and middleware on the server, in process ([`Server::handle_json`]): an extension's
//! capability entry (in `initialize` and `server/discover`), its methods, notifications and
//! resources; every refusal at build; the middleware order, `_meta` editing, early answers,
//! outcome rewriting and dropped notifications.
#![cfg(feature = "server")]
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use actix_mcp::protocol::{ReadResourceResult, Resource, ResourceContents};
use actix_mcp::{
    BuildError, Extension, Flow, McpError, Middleware, Params, RequestContext, ResourceSource,
    Server, ServerBuilder, ToolDef,
};
use serde_json::{Value, json};

const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

fn builder() -> ServerBuilder {
    Server::builder("ext-test", "1.0.0")
}

/// One request, served in process; the whole response.
async fn send(server: &Server, request: Value) -> Value {
    let answer = tokio::time::timeout(WAIT, server.handle_json(&request.to_string()))
        .await
        .expect("answered in time")
        .expect("a response");
    serde_json::from_str(&answer).expect("JSON")
}

async fn call(server: &Server, method: &str, params: Value) -> Value {
    send(
        server,
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
    )
    .await
}

/// One 2026-07-28 request (its envelope in `_meta`); the whole response.
async fn call_2026(server: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    call(server, method, params).await
}

/// A source serving `demo://a` and `demo://b`.
struct Demo;

impl ResourceSource for Demo {
    fn list(&self) -> Vec<Resource> {
        ["demo://a", "demo://b"]
            .into_iter()
            .map(|uri| Resource::new(uri, uri.trim_start_matches("demo://")))
            .collect()
    }

    fn read(&self, uri: &str) -> Option<Result<ReadResourceResult, McpError>> {
        match uri {
            "demo://a" | "demo://b" => Some(Ok(ReadResourceResult {
                contents: vec![ResourceContents::text(uri, None, "contents")],
                meta: None,
            })),
            "demo://broken" => Some(Err(McpError::invalid_params("broken on purpose"))),
            _ => None,
        }
    }
}

fn search_extension(seen: Arc<Mutex<Vec<String>>>) -> Extension {
    Extension::new("com.example/search")
        .setting("maxResults", 50)
        .method("search/query", |Params(params): Params<Value>| async move {
            Ok::<_, McpError>(json!({"query": params["q"], "meta": params["_meta"]}))
        })
        .method(
            "notifications/search/hint",
            move |Params(hint): Params<Value>| {
                let seen = seen.clone();
                async move {
                    seen.lock().unwrap().push(hint["text"].to_string());
                    Ok::<_, McpError>(Value::Null)
                }
            },
        )
        .resources(Arc::new(Demo))
}

#[actix_rt::test]
async fn an_extension_is_advertised_served_and_listed() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = builder()
        .extension(search_extension(seen.clone()))
        .extension(Extension::new("com.example/newest").newest_revision_only())
        .build()
        .unwrap();
    assert_eq!(
        server.extensions(),
        ["com.example/search", "com.example/newest"]
    );

    // 2025-11-25: `initialize` lists the extension for every revision, with its settings.
    let init = call(
        &server,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    )
    .await;
    let caps = &init["result"]["capabilities"];
    assert_eq!(
        caps["extensions"],
        json!({"com.example/search": {"maxResults": 50}}),
        "{init}"
    );
    // The resources it serves make the server declare resources.
    assert!(caps["resources"].is_object(), "{caps}");

    // 2026-07-28: discovery lists both.
    let discover = call_2026(&server, "server/discover", json!({})).await;
    let extensions = &discover["result"]["capabilities"]["extensions"];
    assert_eq!(extensions["com.example/search"], json!({"maxResults": 50}));
    assert_eq!(extensions["com.example/newest"], json!({}));

    // Its method, in both eras.
    let answer = call(&server, "search/query", json!({"q": "rust"})).await;
    assert_eq!(answer["result"]["query"], "rust", "{answer}");
    let answer = call_2026(&server, "search/query", json!({"q": "actors"})).await;
    assert_eq!(answer["result"]["query"], "actors", "{answer}");

    // Its notification.
    assert!(
        server
            .handle_json(
                &json!({"jsonrpc": "2.0", "method": "notifications/search/hint",
                        "params": {"text": "hello"}})
                .to_string()
            )
            .await
            .is_none()
    );
    for _ in 0..100 {
        if !seen.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(*seen.lock().unwrap(), ["\"hello\""]);

    // Its resources: listed, read, its error answered, others fall through.
    let list = call(&server, "resources/list", json!({})).await;
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert_eq!(uris, ["demo://a", "demo://b"]);
    let read = call(&server, "resources/read", json!({"uri": "demo://b"})).await;
    assert_eq!(read["result"]["contents"][0]["text"], "contents", "{read}");
    let broken = call(&server, "resources/read", json!({"uri": "demo://broken"})).await;
    assert_eq!(broken["error"]["code"], -32602, "{broken}");
    let missing = call(&server, "resources/read", json!({"uri": "demo://c"})).await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
}

#[test]
fn build_refuses_what_an_extension_gets_wrong() {
    let refused = |builder: ServerBuilder| builder.build().expect_err("refused");
    assert!(matches!(
        refused(builder().extension(Extension::new("search"))),
        BuildError::InvalidName { name, .. } if name == "search"
    ));
    assert_eq!(
        refused(
            builder()
                .extension(Extension::new("com.example/x"))
                .extension(Extension::new("com.example/x"))
        ),
        BuildError::Duplicate {
            kind: "extension",
            name: "com.example/x".into()
        }
    );
    let noop = || async { Value::Null };
    assert_eq!(
        refused(builder().extension(Extension::new("com.example/x").method("tools/call", noop))),
        BuildError::MethodAlreadyDefined("tools/call".into())
    );
    assert_eq!(
        refused(
            builder()
                .custom_method("x/go", noop)
                .extension(Extension::new("com.example/x").method("x/go", noop))
        ),
        BuildError::MethodAlreadyDefined("x/go".into())
    );
    assert_eq!(
        refused(
            builder()
                .extension(Extension::new("com.example/x").method("x/go", noop))
                .custom_method("x/go", noop)
        ),
        BuildError::MethodAlreadyDefined("x/go".into())
    );
    let needs_tools = || Extension::new("com.example/x").requires_capability("tools");
    assert_eq!(
        refused(builder().extension(needs_tools())).to_string(),
        "extension `com.example/x` requires the `tools` capability, which the server does not declare"
    );
    let echo = ToolDef::new("echo", || async { "hi" }).description("Echo");
    assert!(
        builder()
            .tool(echo)
            .extension(needs_tools())
            .build()
            .is_ok()
    );
    assert!(matches!(
        refused(builder().extension(Extension::new("com.example/x").requires_extension("com.example/y"))),
        BuildError::ExtensionRequires { missing, .. } if missing == "the extension `com.example/y`"
    ));
    assert!(
        builder()
            .extension(Extension::new("com.example/x").requires_extension("com.example/y"))
            .extension(Extension::new("com.example/y"))
            .build()
            .is_ok()
    );
}

/// A middleware that records its hooks in `log` under `name`.
fn recording(name: &'static str, log: &Arc<Mutex<Vec<String>>>) -> Middleware {
    let (before, after, notified) = (log.clone(), log.clone(), log.clone());
    Middleware::new(name)
        .before(move |request| {
            before
                .lock()
                .unwrap()
                .push(format!("{name} before {}", request.method()));
            Flow::Continue
        })
        .after(move |_, outcome| {
            after.lock().unwrap().push(format!(
                "{name} after {}",
                if outcome.error().is_some() {
                    "error"
                } else {
                    "ok"
                }
            ));
        })
        .on_notification(move |notification| {
            notified
                .lock()
                .unwrap()
                .push(format!("{name} saw {}", notification.method()));
            true
        })
}

#[actix_rt::test]
async fn middleware_run_in_order_edit_meta_answer_early_and_rewrite_outcomes() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let stamp = Middleware::new("stamp").before(|request| {
        request
            .meta_mut()
            .insert("com.example/stamped".into(), json!(true));
        Flow::Continue
    });
    let gate = Middleware::new("gate")
        .before(|request| match request.param("q").and_then(Value::as_str) {
            Some("blocked") => Flow::Respond(Err(McpError::invalid_params("blocked by policy"))),
            Some("cached") => Flow::Respond(Ok(json!({"cached": true}))),
            _ => Flow::Continue,
        })
        .after(|request, outcome| {
            if request.method() == "search/query"
                && let Some(mut result) = outcome.result()
            {
                result["checked"] = json!(true);
                outcome.set_result(&result);
            }
            if outcome.error().is_some_and(|error| error.code.0 == -32601) {
                outcome.set_error(&McpError::method_not_found("renamed by middleware"));
            }
        })
        .on_notification(|notification| notification.method() != "notifications/search/hint");
    let server = builder()
        .middleware(recording("outer", &log))
        .middleware(stamp)
        .extension(search_extension(Arc::default()).middleware(gate))
        .middleware(recording("inner", &log))
        .build()
        .unwrap();
    assert_eq!(server.middleware(), ["outer", "stamp", "gate", "inner"]);

    // Order: before first to last, after last to first; `_meta` edited on the way in; the
    // result rewritten on the way out.
    let answer = call(&server, "search/query", json!({"q": "x"})).await;
    assert_eq!(
        answer["result"]["meta"]["com.example/stamped"], true,
        "{answer}"
    );
    assert_eq!(answer["result"]["checked"], true, "{answer}");
    assert_eq!(
        std::mem::take(&mut *log.lock().unwrap()),
        [
            "outer before search/query",
            "inner before search/query",
            "inner after ok",
            "outer after ok"
        ]
    );

    // An early answer: the handler and the layers after `gate` never see the request.
    let blocked = call(&server, "search/query", json!({"q": "blocked"})).await;
    assert_eq!(blocked["error"]["code"], -32602, "{blocked}");
    assert_eq!(blocked["error"]["message"], "blocked by policy");
    let cached = call(&server, "search/query", json!({"q": "cached"})).await;
    assert_eq!(cached["result"], json!({"cached": true, "checked": true}));
    assert_eq!(
        std::mem::take(&mut *log.lock().unwrap()),
        [
            "outer before search/query",
            "outer after error",
            "outer before search/query",
            "outer after ok"
        ]
    );

    // An error rewritten.
    let unknown = call(&server, "nope/nothing", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("renamed by middleware"),
        "{unknown}"
    );
    log.lock().unwrap().clear();

    // Notifications: `gate` drops the hint, so `inner` never sees it.
    let _ = server
        .handle_json(&json!({"jsonrpc": "2.0", "method": "notifications/search/hint"}).to_string())
        .await;
    let _ = server
        .handle_json(&json!({"jsonrpc": "2.0", "method": "notifications/other"}).to_string())
        .await;
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer saw notifications/search/hint",
            "outer saw notifications/other",
            "inner saw notifications/other"
        ]
    );
}

#[actix_rt::test]
async fn a_handler_reads_the_meta_middleware_added_in_2026_too() {
    let server = builder()
        .middleware(Middleware::new("stamp").before(|request| {
            request
                .meta_mut()
                .insert("com.example/tenant".into(), json!("acme"));
            Flow::Continue
        }))
        .custom_method("whoami/tenant", |cx: RequestContext| async move {
            json!({"tenant": cx.meta().and_then(|meta| meta.get("com.example/tenant")).cloned()})
        })
        .build()
        .unwrap();
    let answer = call_2026(&server, "whoami/tenant", json!({})).await;
    assert_eq!(answer["result"]["tenant"], "acme", "{answer}");
}
