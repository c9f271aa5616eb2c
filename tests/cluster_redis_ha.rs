//! Nodes sharing their sessions on a Redis Cluster (three masters, three replicas) and on a
//! master watched by Sentinels, all started by the test on loopback ports: a session opened on
//! one node serves on another, a notification crosses the bus to another node's GET stream, a
//! shared tool defined on one node is callable on another, a cluster-wide limit holds across
//! nodes; and when the master holding a session is killed (SIGKILL), requests get an answer or
//! a clear error, never hang, and once a replica is promoted the session works on every node
//! and no node serves it from a record the store no longer holds.
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use actix_mcp::cluster::Cluster;
use actix_mcp::transport::http::AdmissionConfig;
use reqwest::StatusCode;
use serde_json::json;

use common::http::{Client, TestServer, spawn, text_of};
use common::http_tools::{Fixture, catalog_node, fixture};
use common::redis_ha::{MASTER, RedisCluster, RedisSentinels};
use common::sse::SseReader;

/// How long a node may take to serve again after a failover.
const RECOVER: Duration = Duration::from_secs(30);

/// A node of `cluster` with the HTTP tests' tools (`slow` among them), a global limit of one
/// call at a time when `limited`.
fn node_of(cluster: Cluster, limited: bool) -> (Fixture, TestServer) {
    let fixture = fixture();
    let mut mcp = fixture.server.http("/mcp").cluster(cluster);
    if limited {
        mcp = mcp.admission(
            AdmissionConfig::new()
                .max_concurrent(1)
                .queue(0, Duration::from_secs(1)),
        );
    }
    let server = spawn(mcp, 1);
    (fixture, server)
}

/// The behaviours every deployment shares: a session opened on A serves on B; a notification
/// raised on A reaches B's GET stream; a shared tool defined on one node is callable on the
/// other; a global limit of one call holds across the nodes.
async fn core_behaviours(connect: impl AsyncFn() -> Cluster) {
    let (fa, a) = node_of(connect().await, true);
    let (_fb, b) = node_of(connect().await, true);
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    let listed = on_b.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.response);

    // The bus: B's GET stream hears of a change raised on A.
    let response = on_b.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);
    fa.server.notify_tools_list_changed();
    let heard = stream.next_message().await;
    assert_eq!(heard["method"], "notifications/tools/list_changed");
    drop(stream);

    // The cluster-wide limit: a call running on A, B refuses another.
    let slow = json!({"name": "slow", "arguments": {}});
    let running = on_a.start(json!(2), "tools/call", slow.clone()).await;
    tokio::time::timeout(common::WAIT, fa.probes.started.wait_for(1))
        .await
        .unwrap();
    let refused = on_b
        .post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": slow}))
        .await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    on_a.cancel(json!(2)).await;
    drop(running);
    a.stop().await;
    b.stop().await;

    // The shared catalog.
    let (server_a, a) = catalog_node(connect().await);
    let (_server_b, b) = catalog_node(connect().await);
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    server_a
        .define_shared_tool("greeter", json!({"name": "hi"}))
        .await
        .unwrap();
    let called = on_a.at(&b.url).call_ok(json!(1), "hi", json!({})).await;
    assert_eq!(text_of(&called), "hello from hi");
    assert!(server_a.remove_shared_tool("hi").await.unwrap());
    a.stop().await;
    b.stop().await;
}

/// An answer to a request sent while the store's master is down: a result, or a clear
/// error (a 503 with a JSON-RPC error of the request's id); never a hang.
async fn answered_or_clear_error(client: &Client, id: i64) -> StatusCode {
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        client.request(json!(id), "tools/list", json!({})),
    )
    .await
    .expect("a request during a failover is answered, not left hanging");
    if answer.status != StatusCode::OK {
        assert_eq!(
            answer.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            answer.response
        );
        assert_eq!(answer.response["id"], id, "{}", answer.response);
        assert!(
            answer.response["error"]["message"].is_string(),
            "{}",
            answer.response
        );
    }
    answer.status
}

/// Sends `tools/list` until it is answered (each answer an answer or a clear error), within
/// [`RECOVER`].
async fn serves_again(client: &Client, first_id: i64) {
    let deadline = tokio::time::Instant::now() + RECOVER;
    let mut id = first_id;
    while answered_or_clear_error(client, id).await != StatusCode::OK {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the node did not serve the session again within {RECOVER:?}"
        );
        id += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Two nodes and a session opened on A that B serves too.
struct SharedSession {
    fa: Fixture,
    a: TestServer,
    _fb: Fixture,
    b: TestServer,
    on_a: Client,
    on_b: Client,
    /// The key of the session's record.
    key: String,
}

/// Starts a node on each of `first` and `second`, opens a session on the first and checks that
/// the second serves it.
async fn shared_session(first: Cluster, second: Cluster) -> SharedSession {
    let (fa, a) = node_of(first, false);
    let (_fb, b) = node_of(second, false);
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    let listed = on_b.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK);
    let key = format!("mcp:{{{}}}:session", on_a.session.clone().unwrap());
    SharedSession {
        fa,
        a,
        _fb,
        b,
        on_a,
        on_b,
        key,
    }
}

/// After a failover: the session serves on both nodes; a change (`logging/setLevel`) made on
/// B then reaches A's next request of it; DELETE on B ends it on A (A serves nothing from the
/// record it read before).
async fn after_failover(on_a: &Client, on_b: &Client) {
    serves_again(on_a, 100).await;
    serves_again(on_b, 200).await;
    let set = on_b
        .request(json!(300), "logging/setLevel", json!({"level": "error"}))
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.response);
    let listed = on_a.request(json!(301), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.response);
    assert_eq!(on_b.delete().await, StatusCode::OK);
    let gone = on_a.request(json!(302), "tools/list", json!({})).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.response);
}

#[actix_web::test]
async fn on_a_redis_cluster_nodes_share_sessions_the_bus_the_catalog_and_limits() {
    let redis = RedisCluster::start();
    let urls = redis.urls();
    core_behaviours(async || {
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        Cluster::redis_cluster(&urls).await.unwrap()
    })
    .await;
}

#[actix_web::test]
async fn on_a_redis_cluster_a_session_survives_the_loss_of_its_master() {
    let mut redis = RedisCluster::start();
    let urls = redis.urls();
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let SharedSession {
        a,
        b,
        on_a,
        on_b,
        key,
        ..
    } = shared_session(
        Cluster::redis_cluster(&urls).await.unwrap(),
        Cluster::redis_cluster(&urls).await.unwrap(),
    )
    .await;
    let master = redis.master_of(&key, &[]);
    // Replication is asynchronous: wait until the master's replica has the record.
    common::eventually("the replica holds the session", || {
        common::redis_ha::replicas_in_sync(master)
    })
    .await;

    redis.kill(master);
    // Requests in flight now are answered, or refused with a clear error.
    answered_or_clear_error(&on_a, 10).await;
    answered_or_clear_error(&on_b, 11).await;
    let promoted = redis.wait_failover(&key, master);
    assert_ne!(promoted, master);
    // What follows checks the nodes, so first the store: the replica took the record over.
    let held = redis.command(promoted, &[&format!("EXISTS {key}")]);
    assert!(held.starts_with(":1"), "the new master lacks {key}: {held}");
    after_failover(&on_a, &on_b).await;
    a.stop().await;
    b.stop().await;
}

#[actix_web::test]
async fn behind_sentinels_nodes_share_sessions_the_bus_the_catalog_and_limits() {
    let redis = RedisSentinels::start();
    let urls = redis.urls();
    core_behaviours(async || {
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        Cluster::redis_sentinel(&urls, MASTER).await.unwrap()
    })
    .await;
}

#[actix_web::test]
async fn behind_sentinels_a_session_survives_the_loss_of_the_master() {
    let mut redis = RedisSentinels::start();
    let urls = redis.urls();
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let SharedSession {
        fa,
        a,
        b,
        on_a,
        on_b,
        key,
        ..
    } = shared_session(
        Cluster::redis_sentinel(&urls, MASTER).await.unwrap(),
        Cluster::redis_sentinel(&urls, MASTER).await.unwrap(),
    )
    .await;
    common::eventually("the replica holds the session", || {
        common::redis_ha::replicas_in_sync(redis.master())
            && common::redis_ha::command_on(redis.replica(), &[&format!("EXISTS {key}")])
                .starts_with(":1")
    })
    .await;

    redis.kill_master();
    answered_or_clear_error(&on_a, 10).await;
    answered_or_clear_error(&on_b, 11).await;
    redis.wait_promoted();
    after_failover(&on_a, &on_b).await;

    // The bus follows the master too: a new session's GET stream on B hears of a change
    // raised on A (raised again until heard: a message sent while B's subscriber was
    // reconnecting is lost, as pub/sub keeps nothing).
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let response = on_a.at(&b.url).get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);
    let deadline = tokio::time::Instant::now() + RECOVER;
    loop {
        fa.server.notify_tools_list_changed();
        if let Ok(Some(frame)) = stream.try_next_frame(Duration::from_millis(500)).await
            && frame.is_message()
        {
            assert_eq!(frame.json()["method"], "notifications/tools/list_changed");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the bus did not follow the new master"
        );
    }
    a.stop().await;
    b.stop().await;
}

/// Each store on a Redis Cluster, where one command touches one slot: the event writer's batch
/// of several sessions (each list in its session's slot), session creation under a cap with
/// its count in another slot, `touch` and `DELETE` of records and their count, and the task
/// store's tasks and their count.
#[actix_web::test]
async fn on_a_redis_cluster_each_store_splits_what_spans_slots() {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore, RedisSessionStore, RedisTaskStore};
    use actix_mcp::cluster::{
        Created, EventId, EventStore, Replay, SessionId, SessionRecord, SessionStore,
    };
    use actix_mcp::{StoredTask, TaskStore, TaskStoreError};

    let redis = RedisCluster::start();
    let urls = redis.urls();
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let connection = Redis::connect_cluster(&urls, "mcp").await.unwrap();
    let (one, two) = (
        SessionId::parse("one").unwrap(),
        SessionId::parse("two").unwrap(),
    );
    let count_master = redis.master_of("mcp:sessions", &[]);
    assert_ne!(
        redis.master_of("mcp:{one}:events", &[]),
        redis.master_of("mcp:{two}:events", &[]),
        "the test's two sessions are on two masters"
    );

    // Events of two sessions (two slots, two masters) in one batch; they are kept for
    // sessions with a record.
    for name in ["one", "two"] {
        let key = format!("mcp:{{{name}}}:session");
        redis.command(
            redis.master_of(&key, &[]),
            &[&format!("HSET {key} stamp 1")],
        );
    }
    let events = RedisEventStore::new(connection.clone());
    let (on_one, on_two) = (events.open(&one), events.open(&two));
    for seq in 1..=2 {
        on_one.append(EventId { stream: 1, seq }, &format!("one {seq}").into());
        on_two.append(EventId { stream: 1, seq }, &format!("two {seq}").into());
    }
    events.flush().await;
    let elsewhere = RedisEventStore::new(connection.clone());
    for (session, expected) in [(&one, "one 2"), (&two, "two 2")] {
        match elsewhere
            .open(session)
            .replay(EventId { stream: 1, seq: 1 })
            .await
        {
            Replay::Events { events, gap } => {
                assert!(!gap);
                let data: Vec<&str> = events.iter().map(|(_, data)| &**data).collect();
                assert_eq!(data, [expected]);
            }
            Replay::Unknown => panic!("the events of {session} are stored"),
        }
    }

    for name in ["one", "two"] {
        let key = format!("mcp:{{{name}}}:session");
        redis.command(redis.master_of(&key, &[]), &[&format!("DEL {key}")]);
    }

    // Sessions under a cap of 1: the second is refused; DELETE frees the place.
    let sessions = RedisSessionStore::new(connection.clone());
    let record = |id: &SessionId| SessionRecord {
        id: id.clone(),
        owner: None,
        established: true,
        revision: 0,
        state: json!({}),
    };
    let ttl = Duration::from_secs(60);
    let created = sessions.create_within(&record(&one), ttl, 1).await.unwrap();
    assert_eq!(created, Created::Stored);
    let taken = sessions.create_within(&record(&one), ttl, 2).await.unwrap();
    assert_eq!(taken, Created::Taken);
    let full = sessions.create_within(&record(&two), ttl, 1).await.unwrap();
    assert_eq!(full, Created::Full);
    assert_eq!(sessions.count().await.unwrap(), Some(1));
    sessions
        .touch(std::slice::from_ref(&one), ttl)
        .await
        .unwrap();
    assert!(sessions.delete(&one).await.unwrap());
    assert_eq!(
        redis.command(count_master, &["ZCARD mcp:sessions"]),
        ":0\r\n"
    );
    let created = sessions.create_within(&record(&two), ttl, 1).await.unwrap();
    assert_eq!(created, Created::Stored);

    // Tasks under a limit of 1.
    let tasks = RedisTaskStore::new(connection);
    let task = |id: &str, status: &str| StoredTask {
        task: serde_json::from_value(json!({
            "taskId": id,
            "status": status,
            "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "ttlMs": null,
        }))
        .unwrap(),
        expires_at: None,
        owner: None,
    };
    tasks.create(task("t1", "working"), 1).await.unwrap();
    assert!(matches!(
        tasks.create(task("t2", "working"), 1).await,
        Err(TaskStoreError::Full(1))
    ));
    assert!(tasks.update(task("t1", "completed")).await.unwrap());
    assert!(
        !tasks.update(task("t1", "working")).await.unwrap(),
        "a terminal status is final"
    );
    assert!(tasks.get("t1").await.unwrap().is_some());
    assert!(tasks.delete("t1").await.unwrap());
    tasks.create(task("t2", "working"), 1).await.unwrap();
}

/// A node takes a record from memory only when the stored hash is the one it read (the same
/// write's stamp): a hash of the same revision but another content (a failover's replica that
/// missed a change, which another change raised to the same revision) is read again.
#[actix_web::test]
async fn a_record_of_the_same_revision_but_another_content_is_read_again() {
    use actix_mcp::cluster::redis::{Redis, RedisSessionStore};
    use actix_mcp::cluster::{SessionId, SessionRecord, SessionStore, StateUpdate};

    let redis = common::redis::RedisServer::start();
    let a = RedisSessionStore::new(Redis::connect(&redis.url(), "mcp").await.unwrap());
    let b = RedisSessionStore::new(Redis::connect(&redis.url(), "mcp").await.unwrap());
    let id = SessionId::parse("stale").unwrap();
    let ttl = Duration::from_secs(60);
    let record = SessionRecord {
        id: id.clone(),
        owner: None,
        established: true,
        revision: 0,
        state: json!({"logLevel": "debug"}),
    };
    assert!(a.create(&record, ttl).await.unwrap());
    let first = a.load(&id, ttl).await.unwrap().unwrap();
    assert_eq!(first.state["logLevel"], "debug");
    // What a replica holds that will miss the next change.
    redis.command("COPY mcp:{stale}:session mcp:{stale}:replica");
    let set = |level: &str| StateUpdate::Set {
        field: "logLevel".into(),
        value: json!(level),
    };
    b.update(&id, &[set("info")], ttl).await.unwrap().unwrap();
    let seen = a.load(&id, ttl).await.unwrap().unwrap();
    assert_eq!(seen.state["logLevel"], "info");
    assert!(
        std::sync::Arc::ptr_eq(&seen, &a.load(&id, ttl).await.unwrap().unwrap()),
        "an unchanged record is taken from memory"
    );
    // The replica is promoted, and another change raises it to the same revision.
    redis.command("COPY mcp:{stale}:replica mcp:{stale}:session REPLACE");
    b.update(&id, &[set("error")], ttl).await.unwrap().unwrap();
    let again = a.load(&id, ttl).await.unwrap().unwrap();
    assert_eq!(again.revision, seen.revision);
    assert_eq!(again.state["logLevel"], "error", "not the record in memory");
}
