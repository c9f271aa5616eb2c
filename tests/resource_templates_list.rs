//! [`ResourceTemplateDef::list`]: the resources a template lists are shown by `resources/list`
//! after the server's own, page after page, in both protocol eras; their reads go to the
//! template's handler; a failing lister fails the list (only a page that reaches it); and on a
//! bearer-protected endpoint they are listed only to a caller who may read them.
#![cfg(feature = "server")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use actix_mcp::protocol::{Resource, method};
use actix_mcp::{ErrorSite, McpError, ResourceDef, ResourceTemplateDef, Server, UriVars};
use serde_json::{Value, json};

use common::in_process::{error, result, send};

/// The `_meta` envelope of a 2026-07-28 request.
fn v2026_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// `count` resources `scheme://{kind}/{i}`, named `{kind} {i}`.
fn resources(kind: &str, count: usize) -> Vec<Resource> {
    (1..=count)
        .map(|i| Resource::new(format!("test://{kind}/{i}"), format!("{kind} {i}")))
        .collect()
}

/// A template `test://{kind}/{id}` read as `"{kind} {id}"`, listing `count` resources and
/// counting the lister's runs in `runs`.
fn template(kind: &'static str, count: usize, runs: &Arc<AtomicUsize>) -> ResourceTemplateDef {
    let runs = runs.clone();
    ResourceTemplateDef::new(
        format!("test://{kind}/{{id}}"),
        kind,
        move |vars: UriVars| async move { format!("{kind} {}", vars.get("id").unwrap()) },
    )
    .mime_type("text/plain")
    .list(move || {
        runs.fetch_add(1, Ordering::SeqCst);
        async move { Ok(resources(kind, count)) }
    })
}

/// Three resources of its own, then templates listing three items and two notes, in pages of
/// two; `runs` counts the listers' runs.
fn paged_server(runs: &Arc<AtomicUsize>) -> Server {
    let mut builder = Server::builder("templates-list-test", "1.0.0").page_size(2);
    for i in 1..=3 {
        builder = builder.resource(ResourceDef::new(
            format!("test://own/{i}"),
            format!("own {i}"),
            || async { "own" },
        ));
    }
    builder
        .resource_template(template("item", 3, runs))
        // A template without a lister lists nothing.
        .resource_template(ResourceTemplateDef::new(
            "test://quiet/{id}",
            "quiet",
            || async { "quiet" },
        ))
        .resource_template(template("note", 2, runs))
        .build()
        .unwrap()
}

/// Walks every page of `resources/list` (with `meta` as the request's `_meta`, if any) and
/// returns the uris, with the number of pages.
async fn walk(server: &Server, meta: Option<Value>) -> (Vec<String>, usize) {
    let mut uris = Vec::new();
    let mut cursor: Option<String> = None;
    for pages in 1..=10 {
        let mut params = json!({});
        if let Some(cursor) = &cursor {
            params["cursor"] = json!(cursor);
        }
        if let Some(meta) = &meta {
            params["_meta"] = meta.clone();
        }
        let page = result(
            server,
            method::RESOURCES_LIST,
            params,
            "ListResourcesResult",
        )
        .await;
        for resource in page["resources"].as_array().unwrap() {
            uris.push(resource["uri"].as_str().unwrap().to_owned());
        }
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (uris, pages),
        }
    }
    panic!("more than 10 pages: {uris:?}");
}

#[actix_rt::test]
async fn listed_resources_follow_the_servers_own_on_every_page_in_both_eras() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = paged_server(&runs);
    let expected: Vec<String> = ["own/1", "own/2", "own/3", "item/1", "item/2", "item/3"]
        .into_iter()
        .chain(["note/1", "note/2"])
        .map(|path| format!("test://{path}"))
        .collect();
    for meta in [None, Some(v2026_meta())] {
        let (uris, pages) = walk(&server, meta.clone()).await;
        assert_eq!(uris, expected, "_meta {meta:?}");
        assert_eq!(pages, 4, "_meta {meta:?}");
    }

    // The first page lies among the server's own resources: no lister runs for it.
    runs.store(0, Ordering::SeqCst);
    let first = result(
        &server,
        method::RESOURCES_LIST,
        json!({}),
        "ListResourcesResult",
    )
    .await;
    assert_eq!(first["resources"].as_array().unwrap().len(), 2);
    assert!(first["nextCursor"].is_string());
    assert_eq!(runs.load(Ordering::SeqCst), 0, "a lister ran for page one");

    // A listed resource without a MIME type has its template's.
    let second = result(
        &server,
        method::RESOURCES_LIST,
        json!({"cursor": first["nextCursor"]}),
        "ListResourcesResult",
    )
    .await;
    assert_eq!(second["resources"][1]["uri"], "test://item/1");
    assert_eq!(second["resources"][1]["name"], "item 1");
    assert_eq!(second["resources"][1]["mimeType"], "text/plain");
}

#[actix_rt::test]
async fn a_listed_resource_is_read_by_its_templates_handler() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = paged_server(&runs);
    for meta in [None, Some(v2026_meta())] {
        let mut params = json!({"uri": "test://note/2"});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        let read = result(
            &server,
            method::RESOURCES_READ,
            params,
            "ReadResourceResult",
        )
        .await;
        let contents = &read["contents"][0];
        assert_eq!(contents["uri"], "test://note/2");
        assert_eq!(contents["text"], "note 2");
        assert_eq!(contents["mimeType"], "text/plain");
    }
}

/// A lister that panics.
async fn exploding() -> Result<Vec<Resource>, McpError> {
    panic!("lister exploded")
}

#[actix_rt::test]
async fn a_failing_lister_fails_the_pages_that_reach_it() {
    let server = Server::builder("templates-list-test", "1.0.0")
        .page_size(1)
        .resource(ResourceDef::new("test://own/1", "own", || async { "own" }))
        .resource(ResourceDef::new("test://own/2", "own", || async { "own" }))
        .resource_template(
            ResourceTemplateDef::new("test://broken/{id}", "broken", || async { "broken" }).list(
                || async {
                    Err(McpError::code(-32042, "the catalogue is unreachable")
                        .with_data(json!({"retry": true})))
                },
            ),
        )
        .build()
        .unwrap();
    // The first page needs the server's own resources only.
    let first = result(
        &server,
        method::RESOURCES_LIST,
        json!({}),
        "ListResourcesResult",
    )
    .await;
    assert_eq!(first["resources"][0]["uri"], "test://own/1");
    // The second is the last of the server's own, unless the template lists more: ask it.
    for meta in [None, Some(v2026_meta())] {
        let mut params = json!({"cursor": first["nextCursor"]});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        let err = error(&server, method::RESOURCES_LIST, params, -32042).await;
        assert_eq!(err["message"], "the catalogue is unreachable");
        assert_eq!(err["data"]["retry"], true);
    }

    // A panicking lister is an internal error, reported with its site; the server keeps
    // serving.
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = reports.clone();
    let panicking = Server::builder("templates-list-test", "1.0.0")
        .resource_template(
            ResourceTemplateDef::new("test://panic/{id}", "panic", || async { "panic" })
                .list(exploding),
        )
        .exception_reporter(move |report| sink.lock().unwrap().push(report.clone()))
        .build()
        .unwrap();
    error(&panicking, method::RESOURCES_LIST, json!({}), -32603).await;
    {
        // The panic, then (as for any internal error answered) the answer.
        let reports = reports.lock().unwrap();
        let panic = reports.iter().find(|report| report.panicked);
        let panic = panic.unwrap_or_else(|| panic!("no panic reported: {reports:?}"));
        assert_eq!(panic.message, "lister exploded");
        assert!(
            matches!(&panic.site, ErrorSite::Request { method } if method == "resources/list"),
            "{:?}",
            panic.site
        );
    }
    let ping = send(
        &panicking,
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    )
    .await;
    assert_eq!(ping["result"], json!({}));
}

/// On a bearer-protected endpoint, the resources a template lists reach only a caller whose
/// scopes cover their read.
#[cfg(feature = "http")]
mod scopes {
    use actix_mcp::server::auth::BearerAuth;
    use reqwest::StatusCode;

    use super::*;
    use crate::common::http::{
        Client, TestServer, alice_reads_secrets, read_answer, send as post, spawn,
    };

    /// A public template listing a public item and a uri under the secret template, and a
    /// secret template (needing `secret:read`) listing a secret item; `secret_runs` counts the
    /// secret lister's runs.
    fn serve(secret_runs: &Arc<AtomicUsize>) -> TestServer {
        let runs = secret_runs.clone();
        let server = Server::builder("templates-scopes-test", "1.0.0")
            .resource_template(
                ResourceTemplateDef::new("test://public/{id}", "public", || async { "public" })
                    .list(|| async {
                        Ok(vec![
                            Resource::new("test://public/1", "public 1"),
                            Resource::new("test://secret/9", "a secret, listed by public"),
                        ])
                    }),
            )
            .resource_template(
                ResourceTemplateDef::new("test://secret/{id}", "secret", || async { "secret" })
                    .required_scopes(["secret:read"])
                    .list(move || {
                        runs.fetch_add(1, Ordering::SeqCst);
                        async { Ok(vec![Resource::new("test://secret/1", "secret 1")]) }
                    }),
            )
            .build()
            .unwrap();
        let auth = BearerAuth::builder("http://127.0.0.1/mcp", alice_reads_secrets())
            .authorization_server("http://127.0.0.1/issuer")
            .build()
            .unwrap();
        spawn(server.http("/mcp").bearer_auth(auth), 1)
    }

    /// The uris of `answer`'s `resources/list` result.
    fn uris(response: &Value) -> Vec<&str> {
        response["result"]["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("expected a list: {response}"))
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect()
    }

    #[actix_web::test]
    async fn listed_resources_reach_only_callers_who_may_read_them() {
        let secret_runs = Arc::new(AtomicUsize::new(0));
        let srv = serve(&secret_runs);
        let all = ["test://public/1", "test://secret/9", "test://secret/1"];

        // 2025-11-25 sessions.
        let mut bob = Client::with_bearer(&srv.url, "bob");
        bob.initialize(json!({})).await;
        let answer = bob.request(json!(1), "resources/list", json!({})).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(uris(&answer.response), ["test://public/1"]);
        assert_eq!(secret_runs.load(Ordering::SeqCst), 0, "listed for bob");
        let mut alice = Client::with_bearer(&srv.url, "alice");
        alice.initialize(json!({})).await;
        let answer = alice.request(json!(1), "resources/list", json!({})).await;
        assert_eq!(uris(&answer.response), all);
        assert_eq!(secret_runs.load(Ordering::SeqCst), 1);

        // 2026-07-28 requests.
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list",
                          "params": {"_meta": v2026_meta()}});
        for (token, expected) in [("bob", &all[..1]), ("alice", &all[..])] {
            let client = Client::with_bearer(&srv.url, token);
            let answer = read_answer(post(client.v2026_builder(&body)).await, &json!(2)).await;
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
            assert_eq!(uris(&answer.response), expected, "as {token}");
        }
        assert_eq!(secret_runs.load(Ordering::SeqCst), 2);
        srv.stop().await;
    }
}
