//! Changes of a session's state made at the same time on several nodes (or on two workers of
//! one node), on a real Redis (Debian's `redis-server` on a free loopback port, started by the
//! test): every change a client saw acknowledged is in the store afterwards, whatever else
//! changed meanwhile, and each node's view of the session takes it.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management>
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::LogMessage;
use actix_mcp::cluster::redis::{Redis, RedisSessionStore};
use actix_mcp::cluster::{SessionId, SessionRecord, SessionStore};
use actix_mcp::protocol::LoggingLevel;
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::http::{Client, TestServer};
use common::http_tools::Fixture;
use common::redis::RedisServer;
use common::sse::SseReader;

const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

async fn node(redis: &RedisServer, workers: usize) -> (Fixture, TestServer) {
    common::http_tools::redis_node(redis, workers).await
}

/// The session's record as the store holds it now.
async fn stored(redis: &RedisServer, client: &Client) -> Arc<SessionRecord> {
    let store = RedisSessionStore::new(Redis::connect(&redis.url(), "mcp").await.unwrap());
    let id = SessionId::parse(client.session.as_deref().unwrap()).unwrap();
    store
        .load(&id, Duration::from_secs(60))
        .await
        .unwrap()
        .expect("the session is stored")
}

fn subscriptions(record: &SessionRecord) -> Vec<String> {
    record.state["subscriptions"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|uri| uri.as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn subscribe(client: &Client, id: i64, uri: &str) {
    let answer = client
        .request(json!(id), "resources/subscribe", json!({ "uri": uri }))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
    assert!(
        answer.response.get("result").is_some(),
        "{}",
        answer.response
    );
}

async fn set_level(client: &Client, id: i64, level: &str) {
    let answer = client
        .request(json!(id), "logging/setLevel", json!({ "level": level }))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
    assert!(
        answer.response.get("result").is_some(),
        "{}",
        answer.response
    );
}

/// `resources/subscribe` on one node beside `logging/setLevel` on another, 40 times: every
/// subscription and the last level are stored once acknowledged, and both nodes' views of the
/// session take them.
#[actix_web::test]
async fn changes_on_two_nodes_at_once_are_all_kept() {
    let redis = RedisServer::start();
    let (fa, a) = node(&redis, 1).await;
    let (fb, b) = node(&redis, 1).await;
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    let rounds: i64 = 40;
    let mut expected = Vec::new();
    let mut level = "";
    for round in 0..rounds {
        let uri = format!("test://race/{round:02}");
        level = LEVELS[usize::try_from(round).unwrap() % LEVELS.len()];
        futures::join!(
            subscribe(&on_a, 2 * round + 1, &uri),
            set_level(&on_b, 2 * round + 2, level)
        );
        expected.push(uri);
        // Acknowledged, so stored: no waiting.
        let record = stored(&redis, &on_a).await;
        let kept = subscriptions(&record);
        let lost: Vec<&String> = expected.iter().filter(|uri| !kept.contains(uri)).collect();
        assert!(
            lost.is_empty(),
            "round {round}: lost subscriptions {lost:?}"
        );
        assert_eq!(
            record.state["logLevel"], level,
            "round {round}: the level set on B is lost"
        );
    }
    // Each node's own view takes both: B, which only set levels, notifies the subscription
    // made on A, and A, which only subscribed, filters by the level set on B.
    let pinged = on_b.request(json!(1000), "ping", json!({})).await;
    assert_eq!(pinged.status, StatusCode::OK);
    let pinged = on_a.request(json!(1001), "ping", json!({})).await;
    assert_eq!(pinged.status, StatusCode::OK);
    let mut stream = SseReader::new(on_b.get(None).await);
    fb.server.notify_resource_updated("test://race/00");
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/resources/updated");
    assert_eq!(message["params"]["uri"], "test://race/00");
    assert_eq!(level, "emergency");
    fa.server.notify_log_message(LogMessage::new(
        LoggingLevel::Alert,
        json!("below the level"),
    ));
    fa.server.notify_log_message(LogMessage::new(
        LoggingLevel::Emergency,
        json!("at the level"),
    ));
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/message");
    assert_eq!(message["params"]["data"], "at the level");
    let record = stored(&redis, &on_a).await;
    assert_eq!(subscriptions(&record).len(), expected.len());
    assert_eq!(record.state["logLevel"], Value::from(level));
    a.stop().await;
    b.stop().await;
}

/// One node with two workers, 80 concurrent subscriptions of one session over as many
/// connections (in each of four sessions): every one is stored once acknowledged.
#[actix_web::test]
async fn concurrent_subscriptions_on_two_workers_are_all_kept() {
    let redis = RedisServer::start();
    let (_fa, a) = node(&redis, 2).await;
    let count = 80;
    for session in 0..4 {
        let mut client = a.client();
        client.initialize(json!({})).await;
        let subscribing = (0..count).map(|n| {
            let client = client.fresh_connection();
            async move { subscribe(&client, n + 1, &format!("test://many/{n:02}")).await }
        });
        futures::future::join_all(subscribing).await;
        let kept = subscriptions(&*stored(&redis, &client).await);
        let lost: Vec<String> = (0..count)
            .map(|n| format!("test://many/{n:02}"))
            .filter(|uri| !kept.contains(uri))
            .collect();
        assert!(
            lost.is_empty(),
            "session {session}: lost {} subscriptions: {lost:?}",
            lost.len()
        );
    }
    assert!(a.worker_threads_used() >= 2, "both workers served");
    a.stop().await;
}
