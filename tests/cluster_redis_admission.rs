//! The Redis admission store's script on a real Redis (Debian's `redis-server` on a free
//! loopback port, started by the test): the token bucket of a cluster-wide rate, all-or-none
//! admission (a refused ask takes nothing), and the renewal and release of leases. The
//! end-to-end test of a cluster-wide limit over two nodes is in `tests/cluster_redis.rs`.
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use actix_mcp::cluster::redis::{Redis, RedisAdmissionStore};
use actix_mcp::cluster::{AdmissionAsk, AdmissionStore, AdmissionVerdict, BucketLimit, SlotLimit};

use common::redis::RedisServer;

fn ask(lease: &str, slot_limit: usize, per_second: f64, burst: u32) -> AdmissionAsk {
    AdmissionAsk {
        lease: lease.to_owned(),
        lease_ttl: Duration::from_secs(1),
        slots: vec![SlotLimit {
            key: "global".to_owned(),
            limit: slot_limit,
        }],
        rates: vec![BucketLimit {
            key: "principal-rate:alice".to_owned(),
            per_second,
            burst,
        }],
    }
}

/// A bucket of 2 a minute admits two, then refuses with the time until its next token; a
/// refused ask leases no slot; the bucket refills at its rate.
#[actix_web::test]
async fn a_cluster_wide_rate_is_a_token_bucket_on_redis() {
    let redis = RedisServer::start();
    let store = RedisAdmissionStore::new(Redis::connect(&redis.url(), "mcp").await.unwrap());
    let admitted = Some(AdmissionVerdict::Admitted);
    assert_eq!(
        store.acquire(&ask("1", 10, 2.0 / 60.0, 2)).await.ok(),
        admitted
    );
    assert_eq!(
        store.acquire(&ask("2", 10, 2.0 / 60.0, 2)).await.ok(),
        admitted
    );
    let Ok(AdmissionVerdict::RateLimited(0, wait)) =
        store.acquire(&ask("3", 10, 2.0 / 60.0, 2)).await
    else {
        panic!("the bucket is empty");
    };
    assert!(
        wait > Duration::from_secs(20) && wait <= Duration::from_secs(30),
        "{wait:?}"
    );
    // Nothing was taken by the refused ask: two leases.
    assert_eq!(
        redis.command("ZCARD mcp:{admission}:slots:global"),
        ":2\r\n"
    );
    // The bucket expires once it would be full again (a minute), not sooner.
    let ttl = redis.command("PTTL mcp:{admission}:rate:principal-rate:alice");
    let ttl: i64 = ttl.trim().trim_start_matches(':').parse().unwrap();
    assert!(ttl > 30_000 && ttl <= 62_000, "{ttl}");

    // A fast bucket refills: 20 a second, burst 1.
    let mut fast = ask("4", 10, 20.0, 1);
    fast.rates[0].key = "principal-rate:bob".to_owned();
    assert_eq!(store.acquire(&fast).await.ok(), admitted);
    fast.lease = "5".to_owned();
    assert!(matches!(
        store.acquire(&fast).await,
        Ok(AdmissionVerdict::RateLimited(0, _))
    ));
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(store.acquire(&fast).await.ok(), admitted);
}

/// A renewed lease outlives its first expiry; a released one is gone at once; renewing a lease
/// gone does not bring it back.
#[actix_web::test]
async fn leases_are_renewed_and_released_on_redis() {
    let redis = RedisServer::start();
    let store = RedisAdmissionStore::new(Redis::connect(&redis.url(), "mcp").await.unwrap());
    let keys = ["global".to_owned()];
    let mut only_slots = ask("a", 1, 1.0, 1);
    only_slots.rates.clear();
    assert_eq!(
        store.acquire(&only_slots).await.ok(),
        Some(AdmissionVerdict::Admitted)
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    store
        .renew("a", &keys, Duration::from_secs(1))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    only_slots.lease = "b".to_owned();
    assert_eq!(
        store.acquire(&only_slots).await.ok(),
        Some(AdmissionVerdict::Full(0)),
        "the renewed lease still holds the slot"
    );
    store.release("a", &keys).await.unwrap();
    store
        .renew("a", &keys, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(
        store.acquire(&only_slots).await.ok(),
        Some(AdmissionVerdict::Admitted)
    );
    store.release("b", &keys).await.unwrap();
    assert_eq!(
        redis.command("EXISTS mcp:{admission}:slots:global"),
        ":0\r\n"
    );
}
