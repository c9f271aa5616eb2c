//! Our client against our server over Streamable HTTP on `127.0.0.1:0`: the typed API in each
//! of the server's modes (SSE answers, JSON answers, stateless), the server's requests and
//! notifications, cancellation both ways, an answer stream cut mid-answer and resumed, a session
//! expired mid-use (with and without renewal), and a server that goes away. Every wait is
//! bounded.
#![cfg(all(feature = "http", feature = "client-http"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{
    CallOptions, Client, ClientBuilder, ClientError, ServerRequest, fill_elicitation_defaults,
};
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CompletionArgument, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestParams, ElicitResult, ListRootsResult, LoggingLevel, OneOrMany, Reference, Root,
    SamplingMessageContentBlock,
};
use actix_mcp::transport::http::McpHttp;
use common::client_server::{Probe, Sum, server};
use common::wire::{Running, serve};
use common::within;
use serde_json::{Value, json};
use tokio::sync::Notify;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Sse,
    Json,
    Stateless,
}

/// Our test server in `mode`, served; its HTTP endpoint (to end its sessions) and probe.
fn start(mode: Mode) -> (Running, McpHttp, Arc<Probe>) {
    let probe = Arc::new(Probe::default());
    let mcp = server(probe.clone())
        .http("/mcp")
        .json_response(mode == Mode::Json)
        .stateless(mode == Mode::Stateless)
        .retry(Duration::from_millis(50))
        .build()
        .unwrap();
    (serve(mcp.configure()), mcp, probe)
}

fn plain() -> ClientBuilder {
    // The 2025-11-25 client; the 2026 era has its own tests (client_v2026.rs).
    Client::builder("http-test-client", "0.1.0").lifecycle(actix_mcp::client::Lifecycle::V2025)
}

/// Quick reconnections, so that lost streams are given up on within the test's bounds.
fn options() -> HttpOptions {
    HttpOptions::default()
        .max_reconnect_attempts(2)
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(40))
}

async fn connect(builder: ClientBuilder, srv: &Running) -> Client {
    within(builder.connect(HttpTransport::with_options(&srv.url, options())))
        .await
        .unwrap()
}

#[actix_web::test]
async fn the_typed_api_works_in_every_mode() {
    for mode in [Mode::Sse, Mode::Json, Mode::Stateless] {
        let (srv, _mcp, _) = start(mode);
        let client = connect(plain(), &srv).await;
        assert_eq!(client.server_info().name, "client-test-server", "{mode:?}");
        assert_eq!(client.instructions(), Some("Use the tools."));
        within(client.ping()).await.unwrap();

        let tools = within(client.tools()).await.unwrap();
        assert_eq!(tools.len(), 12, "{mode:?}: every page, two at a time");
        let sum = within(client.call_tool("add", json!({"a": 2, "b": 3})))
            .await
            .unwrap();
        assert_eq!(sum.structured::<Sum>().unwrap().unwrap(), Sum { total: 5 });
        let failed = within(client.call_tool("fail", ())).await.unwrap();
        assert!(failed.is_error() && failed.text_content() == "it broke");
        let unknown = within(client.call_tool("nope", ())).await.unwrap_err();
        assert_eq!(unknown.rpc().unwrap().code.0, -32602, "{mode:?}");

        let prompt = within(client.get_prompt("greet", [("name", "Ada")]))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&prompt.messages[0].content).unwrap()["text"],
            "hello Ada"
        );
        assert_eq!(within(client.resources()).await.unwrap().len(), 3);
        let item = within(client.read_resource("test://item/7")).await.unwrap();
        assert_eq!(
            serde_json::to_value(&item.contents[0]).unwrap()["text"],
            "item 7"
        );
        let completed = within(client.complete(
            Reference::prompt("greet"),
            CompletionArgument::new("name", "al"),
            None,
        ))
        .await
        .unwrap();
        assert_eq!(completed.completion.values, ["alpha", "alpine"]);
        let level = within(client.set_logging_level(LoggingLevel::Info)).await;
        if mode == Mode::Stateless {
            // A level is a session's setting: a stateless server has none to keep it in.
            assert_eq!(level.unwrap_err().rpc().unwrap().code.0, -32602);
        } else {
            level.unwrap();
        }

        // Progress travels in an SSE answer; a JSON answer has room for the result only.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let progress =
            CallOptions::new().progress(move |p| record.lock().unwrap().push(p.progress));
        let counted = within(client.call_tool_with("count", (), progress))
            .await
            .unwrap();
        assert_eq!(counted.text_content(), "counted");
        let expected: &[f64] = if mode == Mode::Json {
            &[]
        } else {
            &[1.0, 2.0, 3.0]
        };
        assert_eq!(*seen.lock().unwrap(), expected, "{mode:?}");

        within(client.close()).await;
        let deletes = srv.log.with_method("DELETE");
        match mode {
            Mode::Stateless => assert!(deletes.is_empty(), "no session, nothing to end"),
            _ => assert_eq!(deletes.len(), 1, "{mode:?}: the session ends with DELETE"),
        }
        srv.stop().await;
    }
}

#[actix_web::test]
async fn the_servers_requests_and_notifications_reach_the_handlers() {
    let (srv, _mcp, probe) = start(Mode::Sse);
    let tools_changed = Arc::new(Notify::new());
    let updated = Arc::new(Notify::new());
    let logs = Arc::new(Mutex::new(Vec::new()));
    let (t, u, l) = (tools_changed.clone(), updated.clone(), logs.clone());
    let builder = plain()
        .sampling(
            |_: CreateMessageRequestParams, _: ServerRequest| async move {
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: OneOrMany::One(SamplingMessageContentBlock::text("sampled")),
                    model: "test-model".into(),
                    stop_reason: Some("endTurn".into()),
                    meta: None,
                })
            },
        )
        .elicitation(|params: ElicitRequestParams, _| async move {
            let mut result = ElicitResult::new(ElicitAction::Accept);
            fill_elicitation_defaults(&params, &mut result);
            Ok(result)
        })
        .roots(true, |_| async {
            Ok(ListRootsResult {
                roots: vec![Root::new("file:///srv", None)],
                meta: None,
            })
        })
        .on_tools_list_changed(move || t.notify_one())
        .on_resource_updated(move |_| u.notify_one())
        .on_log_message(move |p| l.lock().unwrap().push(p.data));
    let client = connect(builder, &srv).await;

    // Requests nested in a tool call's SSE answer.
    let sampled = within(client.call_tool("ask_llm", ())).await.unwrap();
    assert!(sampled.text_content().contains("sampled"));
    let form = within(client.call_tool("ask_form", ())).await.unwrap();
    let content: Value = serde_json::from_str(&form.text_content()).unwrap();
    assert_eq!(content, json!({"name": "John Doe", "age": 30, "ok": true}));
    let roots = within(client.call_tool("ask_roots", ())).await.unwrap();
    assert_eq!(roots.text_content(), "file:///srv");

    // Notifications outside any request arrive on the GET stream.
    within(client.call_tool("grow", ())).await.unwrap();
    within(tools_changed.notified()).await;
    within(client.subscribe("test://a")).await.unwrap();
    within(client.call_tool("touch", ())).await.unwrap();
    within(updated.notified()).await;
    within(client.set_logging_level(LoggingLevel::Warning))
        .await
        .unwrap();
    within(client.call_tool("log", ())).await.unwrap();
    assert_eq!(*logs.lock().unwrap(), [json!("careful")]);
    within(client.notify_roots_list_changed()).await.unwrap();
    within(probe.roots_changed.notified()).await;
    assert!(
        srv.log
            .with_method("GET")
            .iter()
            .any(|get| get.status == 200),
        "the GET stream was open"
    );
    within(client.close()).await;
    srv.stop().await;
}

#[actix_web::test]
async fn calls_are_cancelled_at_the_server_when_dropped_or_late() {
    let (srv, _mcp, probe) = start(Mode::Sse);
    let client = connect(plain(), &srv).await;
    let params = Client::call_tool_params("slow", ()).unwrap();
    let pending =
        within(client.start_request::<Value>("tools/call", Some(params), CallOptions::new()))
            .await
            .unwrap();
    within(probe.slow_started.notified()).await;
    drop(pending);
    within(probe.slow_cancelled.notified()).await;

    let late = CallOptions::new().timeout(Duration::from_millis(100));
    let error = within(client.call_tool_with("slow", (), late))
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    within(probe.slow_cancelled.notified()).await;
    within(client.ping()).await.unwrap();
    within(client.close()).await;
    srv.stop().await;
}

#[actix_web::test]
async fn an_answer_stream_cut_mid_answer_is_resumed() {
    let (srv, _mcp, _) = start(Mode::Sse);
    let client = connect(plain(), &srv).await;
    let result = within(client.call_tool("poll", ())).await.unwrap();
    assert_eq!(result.text_content(), "after the reconnect");
    assert!(
        srv.log
            .with_method("GET")
            .iter()
            .any(|get| get.last_event_id.is_some() && get.status == 200),
        "the answer came on a resumed stream: {:?}",
        srv.log.with_method("GET")
    );
    within(client.close()).await;
    srv.stop().await;
}

#[actix_web::test]
async fn an_expired_session_fails_every_call_without_renewal() {
    let (srv, mcp, probe) = start(Mode::Sse);
    let client = connect(plain(), &srv).await;
    let slow = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("slow", ()).await }
    });
    within(probe.slow_started.notified()).await;
    mcp.close_all_sessions();
    // The running call's answer went with the session: it fails now, not at its time limit.
    let lost = within(slow).await.unwrap().unwrap_err();
    assert!(matches!(lost, ClientError::SessionExpired), "{lost:?}");
    let expired = within(client.ping()).await.unwrap_err();
    assert!(
        matches!(expired, ClientError::SessionExpired),
        "{expired:?}"
    );
    let again = within(client.tools()).await.unwrap_err();
    assert!(matches!(again, ClientError::SessionExpired), "{again:?}");
    srv.stop().await;
}

#[actix_web::test]
async fn an_expired_session_is_renewed_when_asked() {
    let (srv, mcp, _) = start(Mode::Sse);
    let tools_changed = Arc::new(Notify::new());
    let t = tools_changed.clone();
    let builder = plain()
        .renew_expired_sessions(true)
        .on_tools_list_changed(move || t.notify_one());
    let client = connect(builder, &srv).await;
    let first = srv.log.with_method("POST")[1].session.clone().unwrap();
    assert_eq!(client.session_id().as_deref(), Some(first.as_str()));
    mcp.close_all_sessions();

    // Refused for the old session, then sent again in a new one.
    let echoed = within(client.call_tool("echo", json!({"message": "again"})))
        .await
        .unwrap();
    assert_eq!(echoed.text_content(), "again");
    let posts = srv.log.with_method("POST");
    let initializes = posts.iter().filter(|p| p.session.is_none()).count();
    assert_eq!(initializes, 2, "a second initialize: {posts:?}");
    let last = posts.last().unwrap().session.clone().unwrap();
    assert_ne!(last, first, "the call went in the new session");
    assert_eq!(client.session_id().as_deref(), Some(last.as_str()));
    assert_eq!(posts.last().unwrap().status, 200);

    // The new session's GET stream carries what the server sends outside requests, once it
    // is open (its answer's headers have left: the log records them then).
    srv.log
        .wait_for("the new session's GET stream", |seen| {
            seen.iter().any(|s| {
                s.method == "GET" && s.session.as_deref() == Some(last.as_str()) && s.status == 200
            })
        })
        .await;
    within(client.call_tool("grow", ())).await.unwrap();
    within(tools_changed.notified()).await;
    within(client.close()).await;
    srv.stop().await;
}

#[actix_web::test]
async fn a_server_that_goes_away_fails_calls_with_a_clear_error() {
    let (srv, _mcp, probe) = start(Mode::Sse);
    let client = connect(plain(), &srv).await;
    let slow = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("slow", ()).await }
    });
    within(probe.slow_started.notified()).await;
    let url = srv.url.clone();
    srv.stop().await;
    let lost = within(slow).await.unwrap().unwrap_err();
    assert!(
        matches!(lost, ClientError::Transport(_)),
        "a transport error, not a timeout: {lost:?}"
    );
    let refused = within(client.ping()).await.unwrap_err();
    assert!(matches!(refused, ClientError::Transport(_)), "{refused:?}");
    // Nobody listens there any more: connecting fails, it does not hang.
    let error = within(plain().connect(HttpTransport::with_options(&url, options())))
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Transport(_)), "{error:?}");
}

#[actix_web::test]
async fn a_2026_client_sees_a_resource_defined_at_run_time_without_listening() {
    let server = server(Arc::new(Probe::default()));
    let mcp = server.http("/mcp").build().unwrap();
    let srv = serve(mcp.configure());
    let client = connect(
        Client::builder("http-test-client", "0.1.0").lifecycle(actix_mcp::client::Lifecycle::V2026),
        &srv,
    )
    .await;
    assert_eq!(client.session_id(), None, "no sessions in 2026-07-28");
    let before = within(client.resources()).await.unwrap();
    server
        .define_resource(ResourceDef::new(
            "test://defined-later",
            "later",
            || async { "fresh" },
        ))
        .unwrap();
    // The list is not served from the client's cache: the default hint keeps it fresh.
    let after = within(client.resources()).await.unwrap();
    assert_eq!(after.len(), before.len() + 1, "{after:?}");
    assert!(after.iter().any(|r| r.uri == "test://defined-later"));
}
