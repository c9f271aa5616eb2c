//! Extensions and middleware on the client, against our server in memory: the client declares
//! its extension (the server's tool reads it), reads the server's, answers the
//! server-to-client request its extension defines, hears its notification; its middleware
//! edit `_meta`, answer without sending, rewrite outcomes and drop notifications, in order;
//! mistakes fail `connect`.
#![cfg(all(feature = "server", feature = "client"))]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use actix_mcp::client::extension::{Flow, Outgoing};
use actix_mcp::client::{Client, ClientError, ClientExtension, ClientMiddleware, Lifecycle};
use actix_mcp::testing::connect;
use actix_mcp::{Extension, Params, RequestContext, Server, ToolDef};
use serde_json::{Value, json};

use common::within;

fn server() -> Server {
    Server::builder("ext-server", "1.0.0")
        .extension(
            Extension::new("com.example/search")
                .setting("maxResults", 50)
                .method(
                    "search/query",
                    |Params(params): Params<Value>, cx: RequestContext| async move {
                        json!({"query": params["q"], "meta": cx.meta()})
                    },
                ),
        )
        .tool(
            ToolDef::new("confirm", |cx: RequestContext| async move {
                let declared = cx
                    .client_capabilities()
                    .extra
                    .get("extensions")
                    .and_then(|e| e.get("com.example/confirm"))
                    .cloned();
                cx.notify(
                    "notifications/confirm/hint",
                    Some(json!({"text": "asking"})),
                );
                let answer = cx
                    .request_client("confirm/ask", Some(json!({"question": "go?"})))
                    .await
                    .map_err(|err| actix_mcp::McpError::internal(err.to_string()))?;
                Ok::<_, actix_mcp::McpError>(
                    json!({"declared": declared, "answer": answer}).to_string(),
                )
            })
            .description("Asks the client to confirm"),
        )
        .build()
        .unwrap()
}

fn confirm_extension(hints: Arc<Mutex<Vec<Value>>>) -> ClientExtension {
    ClientExtension::new("com.example/confirm")
        .setting("version", 2)
        .on_request("confirm/ask", |params: Value, _| async move {
            Ok(json!({"confirmed": true, "question": params["question"]}))
        })
        .on_notification("notifications/confirm/hint", move |params| {
            hints.lock().unwrap().push(params.unwrap_or(Value::Null));
        })
}

#[actix_rt::test]
async fn a_client_extension_is_declared_answers_and_hears_in_a_session() {
    let hints = Arc::new(Mutex::new(Vec::new()));
    let client = within(connect(
        &server(),
        Client::builder("ext-client", "1.0.0")
            .lifecycle(Lifecycle::V2025)
            .extension(confirm_extension(hints.clone())),
    ))
    .await
    .unwrap();
    assert_eq!(
        client.server_extension("com.example/search"),
        json!({"maxResults": 50}).as_object()
    );
    assert_eq!(client.server_extension("com.example/other"), None);

    let result = within(client.call_tool("confirm", json!({})))
        .await
        .unwrap();
    let text: Value = serde_json::from_str(&result.text_content()).unwrap();
    assert_eq!(text["declared"], json!({"version": 2}), "{text}");
    assert_eq!(
        text["answer"],
        json!({"confirmed": true, "question": "go?"}),
        "{text}"
    );
    common::eventually("the hint", || {
        (!hints.lock().unwrap().is_empty()).then_some(())
    })
    .await;
    assert_eq!(*hints.lock().unwrap(), [json!({"text": "asking"})]);

    // The server's extension method, through the generic request.
    let answer: Value = within(client.request(
        "search/query",
        Some(json!({"q": "rust"})),
        Default::default(),
    ))
    .await
    .unwrap();
    assert_eq!(answer["query"], "rust");
    within(client.close()).await;
}

#[actix_rt::test]
async fn client_middleware_edit_answer_and_rewrite_in_order_in_both_eras() {
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        let log = Arc::new(Mutex::new(Vec::<String>::new()));
        let (outer_before, outer_after, seen) = (log.clone(), log.clone(), log.clone());
        let outer = ClientMiddleware::new("outer")
            .before(move |request: &mut Outgoing| {
                outer_before
                    .lock()
                    .unwrap()
                    .push(format!("outer before {}", request.method()));
                request
                    .meta_mut()
                    .insert("com.example/trace".into(), json!("t-1"));
                Flow::Continue
            })
            .after(move |request, outcome| {
                outer_after.lock().unwrap().push(format!(
                    "outer after {} {}",
                    request.method(),
                    if outcome.is_ok() { "ok" } else { "error" }
                ));
            })
            .on_notification(move |method, _| {
                seen.lock().unwrap().push(format!("saw {method}"));
                method != "notifications/confirm/hint"
            });
        let short = ClientMiddleware::new("short").before(|request| {
            if request.params().and_then(|p| p.get("q")) == Some(&json!("local")) {
                Flow::Respond(Ok(json!({"query": "answered locally"})))
            } else {
                Flow::Continue
            }
        });
        let rewrite = ClientMiddleware::new("rewrite").after(|request, outcome| {
            if request.method() == "search/query"
                && let Ok(value) = outcome
            {
                value["rewritten"] = json!(true);
            }
        });
        let hints = Arc::new(Mutex::new(Vec::new()));
        let client = within(connect(
            &server(),
            Client::builder("mw-client", "1.0.0")
                .lifecycle(lifecycle)
                .middleware(outer)
                .extension(confirm_extension(hints.clone()).middleware(short))
                .middleware(rewrite),
        ))
        .await
        .unwrap();
        assert_eq!(client.middleware(), ["outer", "short", "rewrite"]);

        let answer: Value = within(client.request(
            "search/query",
            Some(json!({"q": "rust"})),
            Default::default(),
        ))
        .await
        .unwrap();
        assert_eq!(answer["meta"]["com.example/trace"], "t-1", "{answer}");
        assert_eq!(answer["rewritten"], true, "{answer}");

        let local: Value = within(client.request(
            "search/query",
            Some(json!({"q": "local"})),
            Default::default(),
        ))
        .await
        .unwrap();
        // `rewrite` comes after `short`: it never saw the early answer.
        assert_eq!(local, json!({"query": "answered locally"}));

        // The hint is dropped by `outer` before the extension's callback.
        if lifecycle == Lifecycle::V2025 {
            within(client.call_tool("confirm", json!({})))
                .await
                .unwrap();
            common::eventually("the hint seen", || {
                log.lock()
                    .unwrap()
                    .iter()
                    .any(|line| line == "saw notifications/confirm/hint")
                    .then_some(())
            })
            .await;
            assert!(hints.lock().unwrap().is_empty());
        }
        // (The lifecycle's own requests went through the middleware too.)
        let log = log.lock().unwrap().clone();
        let searches: Vec<&str> = log
            .iter()
            .map(String::as_str)
            .filter(|line| line.contains("search/query"))
            .collect();
        assert_eq!(
            searches,
            [
                "outer before search/query",
                "outer after search/query ok",
                "outer before search/query",
                "outer after search/query ok"
            ],
            "{log:?}"
        );
        within(client.close()).await;
    }
}

#[actix_rt::test]
async fn a_badly_built_client_extension_fails_connect() {
    for (extension, wanted) in [
        (
            ClientExtension::new("confirm"),
            "invalid extension identifier",
        ),
        (
            ClientExtension::new("com.example/x")
                .on_request("sampling/createMessage", |_, _| async { Ok(Value::Null) }),
            "protocol method",
        ),
    ] {
        let error = connect(
            &server(),
            Client::builder("bad", "1.0.0").extension(extension),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&error, ClientError::InvalidConfig(message) if message.contains(wanted)),
            "{error}"
        );
    }
    let twice = connect(
        &server(),
        Client::builder("bad", "1.0.0")
            .extension(ClientExtension::new("com.example/x"))
            .extension(ClientExtension::new("com.example/x")),
    )
    .await
    .unwrap_err();
    assert!(matches!(twice, ClientError::InvalidConfig(_)), "{twice}");
}
