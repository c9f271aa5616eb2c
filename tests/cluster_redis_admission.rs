//! The Redis admission store's script on a real Redis (Debian's `redis-server` on a free
//! loopback port, started by the test): the token bucket of a cluster-wide rate, all-or-none
//! admission (a refused ask takes nothing), and the renewal and release of leases; and a
//! cluster-wide limit end to end, over two nodes sharing their sessions on it.
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use actix_mcp::cluster::redis::{Redis, RedisAdmissionStore};
use actix_mcp::cluster::{AdmissionAsk, AdmissionStore, AdmissionVerdict, BucketLimit, SlotLimit};

use actix_mcp::cluster::Cluster;
use reqwest::StatusCode;
use serde_json::json;

use common::http::{TestServer, spawn};
use common::http_tools::{Fixture, fixture};
use common::redis::RedisServer;

async fn node(redis: &RedisServer) -> (Fixture, TestServer) {
    common::http_tools::redis_node(redis, 1).await
}

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

/// The calls of EVAL and EVALSHA that Redis has run (`INFO commandstats`).
fn scripts_run(redis: &RedisServer) -> u64 {
    let stats = redis.command("INFO commandstats");
    let evals = stats
        .lines()
        .filter(|line| line.starts_with("cmdstat_eval"));
    // `cmdstat_evalsha:calls=5,usec=..`
    let calls = evals.filter_map(|line| line.split(['=', ',']).nth(1)?.parse::<u64>().ok());
    calls.sum()
}

/// The scripts Redis ran for one `echo` call of `client`.
async fn scripts_for_echo(redis: &RedisServer, client: &common::http::Client) -> u64 {
    let before = scripts_run(redis);
    client
        .call_ok(json!(1), "echo", json!({"message": "x"}))
        .await;
    scripts_run(redis) - before
}

/// Two nodes on Redis with a global limit of 2: two calls running on A, and B (running none)
/// refuses a third; once one ends on A, B admits one. A dead node's lease (never released) frees
/// its slot once it expires. Without a limit, a request runs no admission script (its one script
/// is the session's load).
#[actix_web::test]
async fn a_global_limit_holds_for_a_cluster_on_redis() {
    use actix_mcp::transport::http::AdmissionConfig;

    let redis = RedisServer::start();
    // Without a limit: no admission script on a request's path.
    let (_fa, a) = node(&redis).await;
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    // (The first load sends the script itself: `EVALSHA`, then `EVAL`.)
    on_a.call_ok(json!(0), "echo", json!({"message": "x"}))
        .await;
    assert_eq!(
        scripts_for_echo(&redis, &on_a).await,
        1,
        "one script: the session's load, and no admission round trip"
    );
    a.stop().await;

    let config = AdmissionConfig::new()
        .max_concurrent(2)
        .queue(0, Duration::from_secs(1));
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let fixture = fixture();
        let cluster = Cluster::redis(&redis.url())
            .await
            .unwrap()
            .admission_lease(Duration::from_secs(1));
        let server = spawn(
            fixture
                .server
                .http("/mcp")
                .cluster(cluster)
                .admission(config.clone()),
            1,
        );
        nodes.push((fixture, server));
    }
    let ((fa, a), (fb, b)) = (&nodes[0], &nodes[1]);
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    assert_eq!(
        scripts_for_echo(&redis, &on_a).await,
        2,
        "one script per admission, and the session's load"
    );
    let slow = json!({"name": "slow", "arguments": {}});
    let first = on_a.start(json!(2), "tools/call", slow.clone()).await;
    tokio::time::timeout(common::WAIT, fa.probes.started.wait_for(1))
        .await
        .unwrap();
    let _second = on_a.start(json!(3), "tools/call", slow.clone()).await;
    tokio::time::timeout(common::WAIT, fa.probes.started.wait_for(2))
        .await
        .unwrap();
    let slots = "ZCARD mcp:{admission}:slots:global";
    assert_eq!(redis.command(slots), ":2\r\n");

    let refused = on_b
        .post(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": slow}))
        .await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
    let body: serde_json::Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    let (error, message) = (&body["error"], body["error"]["message"].as_str().unwrap());
    assert_eq!((&body["id"], &error["code"]), (&json!(4), &json!(-32003)));
    assert!(
        error["data"]["limit"] == "global" && message.contains("cluster-wide"),
        "{body}"
    );

    on_a.cancel(json!(2)).await;
    drop(first);
    common::eventually("A releases the cancelled call's slot", || {
        redis.command(slots) == ":1\r\n"
    })
    .await;
    let _third = on_b.start(json!(5), "tools/call", slow.clone()).await;
    tokio::time::timeout(common::WAIT, fb.probes.started.wait_for(1))
        .await
        .unwrap();
    // The running calls' leases are renewed past their second.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(redis.command(slots), ":2\r\n");

    // A node gone without releasing: its lease of a second, never renewed, frees its slot.
    let store = RedisAdmissionStore::new(Redis::connect(&redis.url(), "mcp").await.unwrap());
    let mut dead = AdmissionAsk {
        lease: "dead-node:1".to_owned(),
        lease_ttl: Duration::from_secs(1),
        slots: vec![SlotLimit {
            key: "global".to_owned(),
            limit: 3,
        }],
        rates: Vec::new(),
    };
    assert_eq!(
        store.acquire(&dead).await.ok(),
        Some(AdmissionVerdict::Admitted)
    );
    dead.lease = "dead-node:2".to_owned();
    assert_eq!(
        store.acquire(&dead).await.ok(),
        Some(AdmissionVerdict::Full(0))
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        store.acquire(&dead).await.ok(),
        Some(AdmissionVerdict::Admitted)
    );
    store
        .release("dead-node:2", &["global".to_owned()])
        .await
        .unwrap();
    assert_eq!(redis.command(slots), ":2\r\n");
    for (_fixture, node) in nodes {
        node.stop().await;
    }
}
