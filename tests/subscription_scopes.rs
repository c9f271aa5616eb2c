//! On a bearer-protected endpoint a resource update reaches a subscriber only when its scopes
//! cover a read of the updated URI: a subscription to a parent URI (which needs only the
//! server's base scopes) must not reveal the URIs and timing of the protected resources under
//! it. Checked on a 2025-11-25 session's GET stream and on a 2026-07-28 `subscriptions/listen`
//! stream.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use actix_mcp::prelude::*;
use actix_mcp::server::auth::BearerAuth;
use reqwest::StatusCode;
use serde_json::json;

use common::http::{Client, TestServer, alice_reads_secrets, spawn};
use common::sse::SseReader;

const SECRET: &str = "file:///docs/secret.txt";
const PUBLIC: &str = "file:///docs/public.txt";

fn serve() -> (Server, TestServer) {
    let text = |text: &'static str| move |_cx: RequestContext| async move { text };
    let server = Server::builder("scopes-test", "1.0.0")
        .resource(ResourceDef::new(PUBLIC, "public", text("public")))
        .resource(
            ResourceDef::new(SECRET, "secret", text("secret")).required_scopes(["secret:read"]),
        )
        .build()
        .unwrap();
    let auth = BearerAuth::builder("http://127.0.0.1/mcp", alice_reads_secrets())
        .authorization_server("http://127.0.0.1/issuer")
        .build()
        .unwrap();
    let srv = spawn(server.http("/mcp").bearer_auth(auth), 1);
    (server, srv)
}

/// The URIs of the next `count` resource updates on `reader`.
async fn updates(reader: &mut SseReader, count: usize) -> Vec<String> {
    let mut uris = Vec::new();
    while uris.len() < count {
        let message = reader.next_message().await;
        if message["method"] == "notifications/resources/updated" {
            uris.push(message["params"]["uri"].as_str().unwrap().to_owned());
        }
    }
    uris
}

/// A session subscribed to the parent URI hears of the public resource only, unless its
/// identity holds the secret resource's scope.
#[actix_web::test]
async fn a_session_hears_only_of_resources_its_scopes_cover() {
    let (server, srv) = serve();
    let mut streams = Vec::new();
    for token in ["bob", "alice"] {
        let mut client = Client::with_bearer(&srv.url, token);
        client.initialize(json!({})).await;
        let answer = client
            .request(
                json!(1),
                "resources/subscribe",
                json!({"uri": "file:///docs"}),
            )
            .await;
        assert!(
            answer.response.get("result").is_some(),
            "{}",
            answer.response
        );
        let stream = client.get(None).await;
        assert_eq!(stream.status(), StatusCode::OK);
        streams.push((client, SseReader::new(stream)));
    }
    // The GET streams are open once a notification sent now reaches them: ping each.
    for (client, _) in &streams {
        common::http::assert_ping(client, 2).await;
    }
    server.notify_resource_updated(SECRET);
    server.notify_resource_updated(PUBLIC);
    let (_, bob) = &mut streams[0];
    assert_eq!(updates(bob, 1).await, [PUBLIC], "bob heard of the secret");
    let (_, alice) = &mut streams[1];
    assert_eq!(updates(alice, 2).await, [SECRET, PUBLIC]);
    srv.stop().await;
}

/// The same on a `subscriptions/listen` stream.
#[actix_web::test]
async fn a_listener_hears_only_of_resources_its_scopes_cover() {
    let (server, srv) = serve();
    let mut readers = Vec::new();
    for (id, token) in [(1, "bob"), (2, "alice")] {
        let client = Client::with_bearer(&srv.url, token);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": {"resourceSubscriptions": ["file:///docs"]},
        }});
        let response = common::http::send(client.v2026_builder(&body)).await;
        assert_eq!(response.status(), StatusCode::OK);
        let mut reader = SseReader::new(response);
        let ack = reader.next_message().await;
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        readers.push(reader);
    }
    server.notify_resource_updated(SECRET);
    server.notify_resource_updated(PUBLIC);
    assert_eq!(
        updates(&mut readers[0], 1).await,
        [PUBLIC],
        "bob heard of the secret"
    );
    assert_eq!(updates(&mut readers[1], 2).await, [SECRET, PUBLIC]);
    srv.stop().await;
}
