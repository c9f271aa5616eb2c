//! `examples/cluster.rs`: two nodes on one Redis (the test's own `redis-server`, which the
//! test needs, as every Redis test does) serve the same session; `examples/http_server.rs`
//! nodes share a tool on one Redis, on a Redis Cluster and behind Sentinels.

use actix_mcp::client::transport::HttpTransport;
use actix_mcp::client::{Client, Lifecycle};
use serde_json::json;

use super::serve;
use crate::common::http::{self, text_of};
use crate::common::redis::RedisServer;
use crate::common::redis_ha::{MASTER, RedisCluster, RedisSentinels};
use crate::common::within;

/// `whoami`'s text, `node N, session S`, split into `N` and `S`.
fn node_and_session(text: &str) -> (&str, &str) {
    let (node, session) = text
        .strip_prefix("node ")
        .and_then(|rest| rest.split_once(", session "))
        .unwrap_or_else(|| panic!("not a whoami answer: {text}"));
    (node, session)
}

#[tokio::test]
async fn a_session_begun_on_one_node_is_served_by_another() {
    let redis = RedisServer::start();
    let a = serve("cluster", &[&redis.url(), "{port}"]).await;
    let b = serve("cluster", &[&redis.url(), "{port}"]).await;

    // Our client begins a session on A (2025-11-25: `initialize`, a session id) and calls there.
    let client = within(
        Client::builder("cluster-test", "1.0.0")
            .lifecycle(Lifecycle::V2025)
            .connect(HttpTransport::new(&a.url)),
    )
    .await
    .unwrap();
    let on_a = within(client.call_tool("whoami", json!({})))
        .await
        .unwrap()
        .text_content();
    let (node_a, session) = node_and_session(&on_a);
    assert_eq!(client.session_id().as_deref(), Some(session), "{on_a}");

    // The same session, carried by its headers to B, which has never seen it.
    let mut on_b = http::Client::new(&b.url);
    on_b.session = Some(session.to_owned());
    on_b.version = Some(client.protocol_version().as_str().to_owned());
    let result = on_b.call_ok(json!(1), "whoami", json!({})).await;
    let (node_b, session_b) = node_and_session(text_of(&result));
    assert_eq!(session_b, session);
    assert_ne!(node_b, node_a, "B answered, not A");
    client.close().await;
}

/// `examples/http_server.rs --redis URL`: a tool `add_tool` defines on one node is callable on
/// another at once, and listed by both.
#[tokio::test]
async fn a_tool_added_on_one_node_is_callable_on_another() {
    let redis = RedisServer::start();
    tool_added_on_one_node_callable_on_another(&["--redis", &redis.url()]).await;
}

/// The same with `--redis-cluster URL,URL,...`, on a Redis Cluster of the test's own.
#[tokio::test]
async fn on_a_redis_cluster_a_tool_added_on_one_node_is_callable_on_another() {
    let redis = RedisCluster::start();
    let urls = redis.urls().join(",");
    tool_added_on_one_node_callable_on_another(&["--redis-cluster", &urls]).await;
}

/// The same with `--redis-sentinel URL,URL,URL --redis-master NAME`, on a master watched by
/// Sentinels of the test's own.
#[tokio::test]
async fn behind_sentinels_a_tool_added_on_one_node_is_callable_on_another() {
    let redis = RedisSentinels::start();
    let urls = redis.urls().join(",");
    tool_added_on_one_node_callable_on_another(&[
        "--redis-sentinel",
        &urls,
        "--redis-master",
        MASTER,
    ])
    .await;
}

/// Two `http_server` nodes with `cluster_args`: a tool `add_tool` defines on one is callable
/// on the other at once, and listed by both.
async fn tool_added_on_one_node_callable_on_another(cluster_args: &[&str]) {
    let mut args = vec!["--port", "{port}"];
    args.extend_from_slice(cluster_args);
    let a = serve("http_server", &args).await;
    let b = serve("http_server", &args).await;
    let connect = |url: String| async move {
        within(Client::builder("cluster-test", "1.0.0").connect(HttpTransport::new(&url)))
            .await
            .unwrap()
    };
    let on_a = connect(a.url.clone()).await;
    let on_b = connect(b.url.clone()).await;
    let added = within(on_a.call_tool("add_tool", json!({"name": "shared_hello"})))
        .await
        .unwrap();
    assert_eq!(added.text_content(), "added");
    let called = within(on_b.call_tool("shared_hello", json!({})))
        .await
        .unwrap();
    assert_eq!(called.text_content(), "hello from shared_hello");
    for client in [&on_a, &on_b] {
        let tools = within(client.tools()).await.unwrap();
        assert!(
            tools.iter().any(|tool| tool.name == "shared_hello"),
            "{tools:?}"
        );
    }
    on_a.close().await;
    on_b.close().await;
}
