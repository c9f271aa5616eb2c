//! `actix_mcp::testing::connect`: a client connected to a server in memory, as an application
//! tests its own server, inside an actix system and from a plain tokio test, in both eras.
#![cfg(all(feature = "server", feature = "client"))]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use actix_mcp::client::{Client, Lifecycle};
use actix_mcp::testing::connect;
use serde_json::json;

use common::client_server::{Probe, server};
use common::within;

#[actix_rt::test]
async fn an_actix_test_talks_to_its_server_in_memory_in_both_eras() {
    let server = server(Arc::new(Probe::default()));
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        let client = within(connect(
            &server,
            Client::builder("pair", "1.0.0").lifecycle(lifecycle),
        ))
        .await
        .unwrap();
        assert_eq!(client.server_info().name, "client-test-server");
        let result = within(client.call_tool("echo", json!({"message": "in memory"})))
            .await
            .unwrap();
        assert_eq!(result.text_content(), "in memory");
        // Every page of the server's list.
        let tools = within(client.tools()).await.unwrap();
        assert!(tools.len() > 2, "{tools:?}");
        within(client.close()).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokio_test_talks_to_its_server_in_memory() {
    assert!(actix_rt::System::try_current().is_none());
    let server = server(Arc::new(Probe::default()));
    let client = within(connect(&server, Client::builder("pair", "1.0.0")))
        .await
        .unwrap();
    let result = within(client.call_tool("add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert!(!result.is_error(), "{result:?}");
    within(client.close()).await;
    // A second pair after the first is gone.
    let client = within(connect(&server, Client::builder("pair", "1.0.0")))
        .await
        .unwrap();
    within(client.ping()).await.unwrap();
}
