//! One catalog across the nodes of a cluster: a tool defined at run time from a registered
//! factory on one node is callable on every other node at once, listed by every node, made by
//! nodes that join later, and removed everywhere (in one process: the in-memory stores and bus
//! that the Redis ones stand in for across processes; `tests/cluster_redis.rs` runs the same
//! on Redis).
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use actix_mcp::cluster::{
    Bus, CatalogStore, Cluster, InMemoryCatalogStore, InMemorySessionStore, LocalBus, SessionStore,
};
use actix_mcp::{Server, SharedCatalogError};
use reqwest::StatusCode;
use serde_json::json;

use common::eventually;
use common::http::{TestServer, text_of};
use common::http_tools::catalog_node;
use common::sse::SseReader;

/// What the nodes share.
struct Shared {
    store: Arc<InMemorySessionStore>,
    bus: Arc<LocalBus>,
    catalog: Option<Arc<InMemoryCatalogStore>>,
}

impl Shared {
    fn new(catalog: bool) -> Self {
        Self {
            store: Arc::new(InMemorySessionStore::new()),
            bus: Arc::new(LocalBus::new()),
            catalog: catalog.then(|| Arc::new(InMemoryCatalogStore::new())),
        }
    }

    /// A node sharing what `self` holds.
    fn node(&self) -> (Server, TestServer) {
        let mut cluster = Cluster::new(
            self.store.clone() as Arc<dyn SessionStore>,
            self.bus.clone() as Arc<dyn Bus>,
        );
        if let Some(catalog) = &self.catalog {
            cluster = cluster.catalog_store(catalog.clone() as Arc<dyn CatalogStore>);
        }
        catalog_node(cluster)
    }
}

/// The names `tools/list` gives at `url`, in a session opened there.
async fn listed(node: &TestServer) -> Vec<String> {
    let mut client = node.client();
    client.initialize(json!({})).await;
    let answer = client.request(json!(9), "tools/list", json!({})).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
    let mut names: Vec<String> = answer.response["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[actix_web::test]
async fn a_tool_defined_on_one_node_is_callable_on_another_and_removed_everywhere() {
    let shared = Shared::new(true);
    let (server_a, a) = shared.node();
    let (server_b, b) = shared.node();
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    // B's GET stream hears of the change once B has made the tool.
    let stream = on_b.get(None).await;
    assert_eq!(stream.status(), StatusCode::OK);
    let mut stream = SseReader::new(stream);

    let name = server_a
        .define_shared_tool("greeter", json!({"name": "hi"}))
        .await
        .unwrap();
    assert_eq!(name, "hi");
    // Right away, on the other node: B asks the store for a tool it has not heard of yet.
    let called = on_b.call_ok(json!(1), "hi", json!({})).await;
    assert_eq!(text_of(&called), "hello from hi");
    let message = stream.next_message().await;
    assert_eq!(message["method"], "notifications/tools/list_changed");
    eventually("B makes the shared tool", || {
        server_b.tool_definition("hi").is_some()
    })
    .await;
    assert_eq!(listed(&a).await, ["echo", "hi"]);
    assert_eq!(listed(&b).await, ["echo", "hi"]);
    assert_eq!(server_b.shared_tools(), server_a.shared_tools());

    // Removed on B: gone from A too, listed nowhere, callable nowhere.
    assert!(server_b.remove_shared_tool("hi").await.unwrap());
    eventually("A drops the shared tool", || {
        server_a.tool_definition("hi").is_none()
    })
    .await;
    assert_eq!(listed(&a).await, ["echo"]);
    assert_eq!(listed(&b).await, ["echo"]);
    let refused = on_a.call(json!(2), "hi", json!({})).await;
    assert_eq!(
        refused.response["error"]["code"], -32602,
        "{}",
        refused.response
    );
    assert!(!server_a.remove_shared_tool("hi").await.unwrap());
    a.stop().await;
    b.stop().await;
}

#[actix_web::test]
async fn a_node_that_joins_later_makes_the_shared_tools() {
    let shared = Shared::new(true);
    let (server_a, a) = shared.node();
    for name in ["one", "two"] {
        server_a
            .define_shared_tool("greeter", json!({ "name": name }))
            .await
            .unwrap();
    }
    let (server_c, c) = shared.node();
    eventually("C makes the shared tools", || {
        server_c.shared_tools().len() == 2
    })
    .await;
    assert_eq!(listed(&c).await, ["echo", "one", "two"]);
    let mut on_c = c.client();
    on_c.initialize(json!({})).await;
    let called = on_c.call_ok(json!(1), "two", json!({})).await;
    assert_eq!(text_of(&called), "hello from two");
    a.stop().await;
    c.stop().await;
}

#[actix_web::test]
async fn mistakes_are_refused_and_change_no_node() {
    let shared = Shared::new(true);
    let (server_a, a) = shared.node();
    let (server_b, b) = shared.node();
    let unknown = server_a.define_shared_tool("nope", json!({})).await;
    assert!(
        matches!(&unknown, Err(SharedCatalogError::UnknownFactory(name)) if name == "nope"),
        "{unknown:?}"
    );
    let refused = server_a
        .define_shared_tool("greeter", json!({"name": 7}))
        .await;
    assert!(
        matches!(&refused, Err(SharedCatalogError::Refused { reason, .. }) if reason.contains("must be a string")),
        "{refused:?}"
    );
    let invalid = server_a
        .define_shared_tool("greeter", json!({"name": "no spaces allowed"}))
        .await;
    assert!(
        matches!(invalid, Err(SharedCatalogError::Invalid(_))),
        "{invalid:?}"
    );
    assert!(
        shared
            .catalog
            .as_ref()
            .unwrap()
            .tools()
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(listed(&a).await, ["echo"]);
    assert_eq!(listed(&b).await, ["echo"]);
    assert!(server_b.shared_tools().is_empty());
    a.stop().await;
    b.stop().await;
}

/// Without a catalog store, a shared tool is this node's alone (as `define_tool` makes it).
#[actix_web::test]
async fn without_a_catalog_store_a_shared_tool_stays_on_its_node() {
    let shared = Shared::new(false);
    let (server_a, a) = shared.node();
    let (server_b, b) = shared.node();
    server_a
        .define_shared_tool("greeter", json!({"name": "local"}))
        .await
        .unwrap();
    assert_eq!(listed(&a).await, ["echo", "local"]);
    assert_eq!(listed(&b).await, ["echo"]);
    assert!(server_b.shared_tools().is_empty());
    a.stop().await;
    b.stop().await;
}

/// The same on Redis: the catalog in its hash, the changes on its bus.
#[cfg(feature = "redis")]
#[actix_web::test]
async fn on_redis_a_tool_defined_on_one_node_is_callable_on_another() {
    let redis = common::redis::RedisServer::start();
    let (server_a, a) = catalog_node(Cluster::redis(&redis.url()).await.unwrap());
    let (server_b, b) = catalog_node(Cluster::redis(&redis.url()).await.unwrap());
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    server_a
        .define_shared_tool("greeter", json!({"name": "hi"}))
        .await
        .unwrap();
    let called = on_b.call_ok(json!(1), "hi", json!({})).await;
    assert_eq!(text_of(&called), "hello from hi");
    // A third node, started after the change, makes it from the store.
    let (server_c, c) = catalog_node(Cluster::redis(&redis.url()).await.unwrap());
    eventually("C makes the shared tool", || {
        server_c.tool_definition("hi").is_some()
    })
    .await;
    assert_eq!(listed(&c).await, ["echo", "hi"]);
    assert!(server_c.remove_shared_tool("hi").await.unwrap());
    for (name, server) in [("A", &server_a), ("B", &server_b)] {
        eventually(format!("{name} drops the shared tool"), || {
            server.tool_definition("hi").is_none()
        })
        .await;
    }
    assert_eq!(listed(&a).await, ["echo"]);
    a.stop().await;
    b.stop().await;
    c.stop().await;
}
