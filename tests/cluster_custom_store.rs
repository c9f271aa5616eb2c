//! A cluster backend written against `actix-mcp` alone: a session store and a bus implemented
//! with nothing but `actix_mcp::cluster` paths (no dependency on the runtime crate), then two
//! nodes sharing them serve one session.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_mcp::cluster::{
    Bus, Cluster, Envelope, LocalBus, NodeId, SessionId, SessionRecord, SessionStore, StoreError,
    StoreFuture,
};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use serde_json::json;

use common::http::{eventually, spawn};
use common::http_tools::fixture;

/// Records in a map, each with the instant it expires at.
#[derive(Debug, Default)]
struct MapStore {
    records: Mutex<HashMap<SessionId, (Arc<SessionRecord>, Instant)>>,
}

impl MapStore {
    fn live(&self) -> usize {
        let now = Instant::now();
        let records = self.records.lock().unwrap();
        records.values().filter(|(_, until)| *until > now).count()
    }

    fn write(&self, record: &SessionRecord, ttl: Duration, only_new: bool) -> bool {
        let now = Instant::now();
        let mut records = self.records.lock().unwrap();
        let exists = records
            .get(&record.id)
            .is_some_and(|(_, until)| *until > now);
        if exists == only_new {
            return false;
        }
        records.insert(record.id.clone(), (Arc::new(record.clone()), now + ttl));
        true
    }
}

impl SessionStore for MapStore {
    fn create<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(self.write(record, ttl, true))))
    }

    fn load<'a>(
        &'a self,
        id: &'a SessionId,
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        let now = Instant::now();
        let mut records = self.records.lock().unwrap();
        let found = match records.get_mut(id) {
            Some((record, until)) if *until > now => {
                *until = now + ttl;
                Some(record.clone())
            }
            _ => None,
        };
        Box::pin(std::future::ready(Ok(found)))
    }

    fn save<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(self.write(record, ttl, false))))
    }

    fn delete<'a>(&'a self, id: &'a SessionId) -> StoreFuture<'a, bool> {
        let removed = self.records.lock().unwrap().remove(id).is_some();
        Box::pin(std::future::ready(Ok(removed)))
    }

    fn count(&self) -> StoreFuture<'_, Option<usize>> {
        Box::pin(std::future::ready(Ok(Some(self.live()))))
    }

    fn claim_once<'a>(&'a self, key: &'a str, _ttl: Duration) -> StoreFuture<'a, bool> {
        let refused = StoreError::Unsupported(format!("claim_once({key})"));
        Box::pin(std::future::ready(Err(refused)))
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The in-process bus, counting what goes through it.
#[derive(Debug, Default)]
struct CountingBus {
    inner: LocalBus,
    sent: AtomicUsize,
}

impl Bus for CountingBus {
    fn publish(&self, envelope: Envelope) -> StoreFuture<'_, ()> {
        self.sent.fetch_add(1, Ordering::Relaxed);
        self.inner.publish(envelope)
    }

    fn subscribe(&self, node: &NodeId) -> BoxFuture<'static, BoxStream<'static, Envelope>> {
        self.inner.subscribe(node)
    }
}

#[actix_web::test]
async fn a_store_written_with_actix_mcp_alone_serves_a_cluster() {
    let store = Arc::new(MapStore::default());
    let bus = Arc::new(CountingBus::default());
    let [(_fa, a), (_fb, b)] = [0, 1].map(|_| {
        let fixture = fixture();
        let cluster = Cluster::new(store.clone(), bus.clone());
        let server = spawn(fixture.server.http("/mcp").cluster(cluster), 1);
        (fixture, server)
    });
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    assert_eq!(store.live(), 1);

    // B has never seen the session: it loads it from the map.
    let on_b = on_a.at(&b.url);
    let listed = on_b.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.response);

    // DELETE on B removes the record and tells A over the bus.
    assert_eq!(on_b.delete().await, StatusCode::OK);
    assert_eq!(store.live(), 0);
    eventually("A drops its local session", || a.mcp.session_count() == 0).await;
    assert!(bus.sent.load(Ordering::Relaxed) > 0);
    a.stop().await;
    b.stop().await;
}
