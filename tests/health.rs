//! Health endpoints and the stats snapshot: `/healthz` answers while the process serves,
//! `/readyz` follows the drain, the readiness checks (a failing one, a hanging one) and a
//! cluster's session store, and
//! [`McpHttp::stats`](actix_mcp::transport::http::McpHttp::stats) counts what admission did.
//!
//! A real server on `127.0.0.1:0` ([`common::http::spawn`]), every wait bounded.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actix_mcp::SessionId;
use actix_mcp::cluster::{Bus, SessionRecord, SessionStore, StoreError, StoreFuture};
use actix_mcp::cluster::{Cluster, InMemorySessionStore, LocalBus};
use actix_mcp::transport::http::CLUSTER_STORE_CHECK;
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::http::{TestServer, assert_ping, http_client, send};
use common::http_tools::start;

async fn probe(srv: &TestServer, path: &str) -> (StatusCode, Value) {
    let response = send(http_client().get(srv.url_of(path))).await;
    let status = response.status();
    assert_eq!(
        response
            .headers()
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    (status, body)
}

/// Liveness and readiness answer 200 on a healthy endpoint, also to a probe whose `Host` is
/// not loopback (orchestrators probe by address).
#[actix_web::test]
async fn a_healthy_endpoint_is_live_and_ready() {
    let (_fixture, srv) = start(|mcp| mcp);
    assert_eq!(
        probe(&srv, "/healthz").await,
        (StatusCode::OK, json!({"status": "ok"}))
    );
    assert_eq!(
        probe(&srv, "/readyz").await,
        (StatusCode::OK, json!({"status": "ready"}))
    );
    let response = send(
        http_client()
            .get(srv.url_of("/readyz"))
            .header("Host", "10.1.2.3:8080"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    srv.stop().await;
}

/// A readiness check that fails makes `/readyz` 503 and names it; when it passes again the
/// endpoint is ready again. Liveness does not depend on it.
#[actix_web::test]
async fn a_failing_readiness_check_makes_the_endpoint_unready() {
    let store_up = Arc::new(AtomicBool::new(true));
    let flag = store_up.clone();
    let (_fixture, srv) = start(move |mcp| {
        mcp.readiness_check("store", move || {
            let up = flag.load(Ordering::SeqCst);
            async move {
                if up {
                    Ok(())
                } else {
                    Err("connection refused".to_owned())
                }
            }
        })
    });
    assert_eq!(probe(&srv, "/readyz").await.0, StatusCode::OK);
    store_up.store(false, Ordering::SeqCst);
    assert_eq!(
        probe(&srv, "/readyz").await,
        (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "unready", "failed": {"store": "connection refused"}})
        )
    );
    assert_eq!(probe(&srv, "/healthz").await.0, StatusCode::OK);
    store_up.store(true, Ordering::SeqCst);
    assert_eq!(probe(&srv, "/readyz").await.0, StatusCode::OK);
    srv.stop().await;
}

/// A readiness check that never answers fails after the readiness timeout instead of holding
/// the probe.
#[actix_web::test]
async fn a_hanging_readiness_check_fails_after_the_timeout() {
    let (_fixture, srv) =
        start(|mcp| mcp.readiness_check("stuck", std::future::pending::<Result<(), String>>));
    let (status, body) = probe(&srv, "/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["status"], "unready");
    assert!(
        body["failed"]["stuck"]
            .as_str()
            .unwrap()
            .starts_with("no answer within"),
        "{body}"
    );
    srv.stop().await;
}

/// A session store whose ping the test controls; everything else is the in-memory store's.
#[derive(Debug, Default)]
struct FlakyStore {
    inner: InMemorySessionStore,
    down: Arc<AtomicBool>,
}

impl SessionStore for FlakyStore {
    fn create<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        self.inner.create(record, ttl)
    }

    fn load<'a>(
        &'a self,
        id: &'a SessionId,
        ttl: Duration,
    ) -> StoreFuture<'a, Option<std::sync::Arc<SessionRecord>>> {
        self.inner.load(id, ttl)
    }

    fn save<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        self.inner.save(record, ttl)
    }

    fn delete<'a>(&'a self, id: &'a SessionId) -> StoreFuture<'a, bool> {
        self.inner.delete(id)
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        if self.down.load(Ordering::SeqCst) {
            Box::pin(std::future::ready(Err(StoreError::Unavailable(
                "connection refused".into(),
            ))))
        } else {
            self.inner.ping()
        }
    }
}

/// A node of a cluster is not ready while the cluster's session store does not answer its
/// ping, and ready again once it does.
#[actix_web::test]
async fn a_cluster_node_is_unready_while_its_session_store_is_down() {
    let store = FlakyStore::default();
    let down = store.down.clone();
    let cluster = Cluster::new(
        Arc::new(store) as Arc<dyn SessionStore>,
        Arc::new(LocalBus::new()) as Arc<dyn Bus>,
    );
    let (_fixture, srv) = start(move |mcp| mcp.cluster(cluster));
    assert_eq!(probe(&srv, "/readyz").await.0, StatusCode::OK);
    down.store(true, Ordering::SeqCst);
    let (status, body) = probe(&srv, "/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        body["failed"][CLUSTER_STORE_CHECK], "session store unavailable: connection refused",
        "{body}"
    );
    down.store(false, Ordering::SeqCst);
    assert_eq!(probe(&srv, "/readyz").await.0, StatusCode::OK);
    srv.stop().await;
}

/// Once a drain begins, `/readyz` is 503 `draining` while `/healthz` stays 200.
#[actix_web::test]
async fn a_draining_endpoint_is_live_but_not_ready() {
    let (_fixture, srv) = start(|mcp| mcp);
    let report = srv.mcp.drain(Duration::from_secs(5)).await;
    assert_eq!(report.cancelled, 0);
    assert!(srv.mcp.is_draining());
    assert!(srv.mcp.stats().draining);
    assert_eq!(
        probe(&srv, "/readyz").await,
        (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "draining"})
        )
    );
    assert_eq!(probe(&srv, "/healthz").await.0, StatusCode::OK);
    srv.stop().await;
}

/// The stats snapshot counts admitted requests (not `ping`, which bypasses admission) and
/// the runtime's gauges.
#[actix_web::test]
async fn stats_count_admitted_requests() {
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(json!({})).await;
    let before = srv.mcp.stats();
    assert_eq!(before.runtime.sessions, 1);
    assert_ping(&client, 1).await;
    assert_eq!(srv.mcp.stats().admitted, before.admitted);
    client
        .call_ok(json!(2), "echo", json!({"message": "hi"}))
        .await;
    let after = srv.mcp.stats();
    assert_eq!(after.admitted, before.admitted + 1);
    assert_eq!(after.waiting, 0);
    assert!(!after.draining);
    srv.stop().await;
}
