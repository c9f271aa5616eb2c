//! Nodes sharing their sessions on a real Redis (Debian's `redis-server` on a free loopback
//! port, started by the test): any node serves any session, a stream resumes on another node
//! than the one that served it, and the failures a deployment meets: Redis unreachable at
//! start, Redis frozen while serving (503, then recovery), and a node gone (its sessions go on
//! elsewhere).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management>
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use actix_mcp::LogMessage;
use actix_mcp::cluster::Cluster;
use actix_mcp::cluster::StoreError;
use reqwest::StatusCode;
use serde_json::json;

use common::http::{SAMPLING, TestServer, caps, spawn};
use common::http_tools::{Fixture, fixture};
use common::redis::RedisServer;
use common::sse::SseReader;

async fn node(redis: &RedisServer) -> (Fixture, TestServer) {
    common::http_tools::redis_node(redis, 1).await
}

#[actix_web::test]
async fn every_request_on_another_node() {
    let redis = RedisServer::start();
    let (_fa, a) = node(&redis).await;
    let (_fb, b) = node(&redis).await;
    let (fc, c) = node(&redis).await;
    let mut on_a = a.client();
    on_a.initialize(caps(SAMPLING)).await;
    let on_b = on_a.at(&b.url);
    let on_c = on_a.at(&c.url);

    // tools/call with sampling on B, answered through A.
    assert_eq!(
        on_b.sample_answered_by(&on_a, 1, "via A").await,
        "sampled: via A"
    );

    // A GET stream on C receives a list change raised on A... and on C itself.
    let response = on_c.get(None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut stream = SseReader::new(response);
    _fa.server.notify_tools_list_changed();
    let (first_id, first) = stream.next_message_with_id().await;
    assert_eq!(first["method"], "notifications/tools/list_changed");
    fc.server.notify_prompts_list_changed();
    let (_, second) = stream.next_message_with_id().await;
    assert_eq!(second["method"], "notifications/prompts/list_changed");

    // C goes; the client resumes its stream on B from the stored events. They are written
    // behind (in order), and a node stopped without its drain, as here, writes no more: C
    // goes once the second is stored.
    let events = format!(
        "LRANGE mcp:{{{}}}:events 0 -1",
        on_a.session.clone().unwrap()
    );
    common::eventually("C's events are stored", || {
        redis
            .command(&events)
            .contains("notifications/prompts/list_changed")
    })
    .await;
    drop(stream);
    c.stop().await;
    let first_id = first_id.expect("stream events carry ids");
    let resumed = on_b.get(Some(&first_id)).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let mut resumed = SseReader::new(resumed);
    let replayed = resumed.next_message().await;
    assert_eq!(replayed["method"], "notifications/prompts/list_changed");

    // The session goes on on A and B; DELETE on B ends it on A.
    let listed = on_a.request(json!(2), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK);
    assert_eq!(on_b.delete().await, StatusCode::OK);
    let gone = on_a.request(json!(3), "tools/list", json!({})).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    // An event A wrote behind just after the DELETE may make the session's list again for a
    // moment: A's writer deletes it once it finds the record gone.
    common::eventually("no key outlives a deleted session", || {
        redis.command("KEYS *").contains("*0")
    })
    .await;
    a.stop().await;
    b.stop().await;
}

#[actix_web::test]
async fn an_unreachable_redis_at_start_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = Cluster::redis(&format!("redis://127.0.0.1:{port}"))
        .await
        .expect_err("no redis there");
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    assert!(
        err.to_string().contains("could not connect to redis"),
        "{err}"
    );
    let err = Cluster::redis("not a url").await.expect_err("malformed");
    assert!(err.to_string().contains("redis url"), "{err}");
    // The URL's credentials never show in the error.
    let err = Cluster::redis(&format!("redis://admin:s3cret@127.0.0.1:{port}"))
        .await
        .expect_err("no redis there");
    assert!(!format!("{err} {err:?}").contains("s3cret"), "{err:?}");
    let err = Cluster::redis("redis://admin:s3cret@[::1")
        .await
        .expect_err("malformed");
    assert!(!format!("{err} {err:?}").contains("s3cret"), "{err:?}");
}

#[actix_web::test]
async fn redis_lost_while_serving_gets_503_then_recovers() {
    let redis = RedisServer::start();
    let (_fa, a) = node(&redis).await;
    let mut client = a.client();
    client.initialize(json!({})).await;
    redis.pause();
    let answer = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(
        answer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        answer.response
    );
    assert_eq!(answer.response["id"], 1);
    assert!(
        answer.response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session store")
    );
    let fresh = a.client();
    let refused = fresh.initialize_only("t").await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    redis.resume();
    // Back: the session was kept, and serves again (the connection is re-established).
    let mut served = None;
    for attempt in 0..50 {
        let answer = client
            .request(json!(10 + attempt), "tools/list", json!({}))
            .await;
        if answer.status == StatusCode::OK {
            served = Some(answer);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        served.is_some(),
        "the node did not recover after redis came back"
    );
    a.stop().await;
}

/// A Redis that forgot the nodes' scripts (restarted from a snapshot, `SCRIPT FLUSH`, a
/// replica promoted that never ran them) is sent each one again by the node that meets its
/// `NOSCRIPT`, and the request that met it is served.
#[actix_web::test]
async fn a_redis_that_forgot_the_scripts_is_sent_them_again() {
    let redis = RedisServer::start();
    let (_fa, a) = node(&redis).await;
    let (_fb, b) = node(&redis).await;
    let mut client = a.client();
    client.initialize(json!({})).await;
    let on_b = client.at(&b.url);
    for round in 0..3 {
        assert!(redis.command("SCRIPT FLUSH").starts_with("+OK"));
        let answer = on_b.request(json!(round), "tools/list", json!({})).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
        assert!(
            answer.response["result"]["tools"].is_array(),
            "{}",
            answer.response
        );
        let answer = client
            .request(json!(10 + round), "tools/list", json!({}))
            .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
    }
    a.stop().await;
    b.stop().await;
}

/// The session cap counts the cluster's sessions (one script checks and stores), and a DELETE
/// on any node frees a place everywhere.
#[actix_web::test]
async fn the_session_cap_is_per_cluster() {
    let redis = RedisServer::start();
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let fixture = fixture();
        let cluster = Cluster::redis(&redis.url()).await.unwrap();
        let server = spawn(
            fixture.server.http("/mcp").cluster(cluster).max_sessions(2),
            1,
        );
        nodes.push((fixture, server));
    }
    let (a, b) = (&nodes[0].1, &nodes[1].1);
    let mut first = a.client();
    first.initialize(json!({})).await;
    b.client().initialize(json!({})).await;
    let refused = a.client().initialize_only("third").await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.response
    );
    assert_eq!(refused.response["id"], 0);
    assert!(refused.headers.get("mcp-session-id").is_none());
    assert!(
        refused.response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("busy"),
        "{}",
        refused.response
    );
    assert_eq!(a.mcp.session_count(), 1, "the refused session is not kept");
    // A DELETE on B frees a place on A.
    assert_eq!(first.at(&b.url).delete().await, StatusCode::OK);
    b.client().initialize(json!({})).await;
    assert_eq!(redis.command("ZCARD mcp:sessions"), ":2\r\n");
    for (_fixture, node) in nodes {
        node.stop().await;
    }
}

/// A load renews the record with one `GETEX`; `touch` renews the records of the sessions busy
/// on a node and their places in the cluster-wide count, in one pipeline.
#[actix_web::test]
async fn touch_renews_records_and_their_count() {
    use std::sync::Arc;

    use actix_mcp::cluster::redis::{Redis, RedisSessionStore};
    use actix_mcp::cluster::{SessionId, SessionRecord, SessionStore};

    let redis = RedisServer::start();
    let store = RedisSessionStore::new(Redis::connect(&redis.url(), "mcp").await.unwrap());
    let ids: Vec<SessionId> = ["one", "two"]
        .into_iter()
        .map(|id| SessionId::parse(id).unwrap())
        .collect();
    for id in &ids {
        let record = SessionRecord {
            id: id.clone(),
            owner: None,
            established: true,
            revision: 0,
            state: json!({"v": 1}),
        };
        assert!(store.create(&record, Duration::from_secs(2)).await.unwrap());
    }
    let first = store
        .load(&ids[0], Duration::from_secs(2))
        .await
        .unwrap()
        .unwrap();
    let again = store
        .load(&ids[0], Duration::from_secs(2))
        .await
        .unwrap()
        .unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "an unchanged record is read once"
    );
    store.touch(&ids, Duration::from_secs(600)).await.unwrap();
    for id in ["one", "two"] {
        let ttl = redis.command(&format!("PTTL mcp:{{{id}}}:session"));
        let ms: u64 = ttl.trim().trim_start_matches(':').parse().unwrap();
        assert!(ms > 500_000, "renewed: {ttl}");
    }
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let score = redis.command("ZSCORE mcp:sessions two");
    let score: u128 = score.lines().nth(1).unwrap().parse().unwrap();
    assert!(score > now_ms + 500_000, "its place in the count renewed");
    // A session gone is not brought back by a touch.
    store.delete(&ids[1]).await.unwrap();
    store.touch(&ids, Duration::from_secs(600)).await.unwrap();
    assert_eq!(redis.command("EXISTS mcp:{two}:session"), ":0\r\n");
    assert_eq!(redis.command("ZSCORE mcp:sessions two"), "$-1\r\n");
}

/// `notifications/initialized` on a node that holds no actor for the session completes the
/// handshake in the store alone (one script, no actor started there); the node that ran
/// `initialize` learns it from the record with the session's next request there.
#[actix_web::test]
async fn initialized_on_another_node_is_taken_in_the_store() {
    let redis = RedisServer::start();
    let (_fa, a) = node(&redis).await;
    let (_fb, b) = node(&redis).await;
    let mut on_a = a.client();
    let answer = on_a.initialize_only("split").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
    let id = answer.headers["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    on_a.session = Some(id.clone());
    on_a.version = Some("2025-11-25".to_owned());
    let key = format!("HGETALL mcp:{{{id}}}:session");
    assert!(redis.command(&key).contains(r#""established":false"#));
    assert!(!redis.command(&key).contains("\r\nest\r\n"));

    let on_b = on_a.at(&b.url);
    on_b.notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(b.mcp.session_count(), 0, "no actor started on B");
    let record = redis.command(&key);
    assert!(record.contains("\r\nest\r\n$1\r\n1\r\n"), "{record}");
    assert!(
        !record.contains(r#""initialized""#),
        "kept once, as the record's own field"
    );
    // Twice is harmless.
    on_b.notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    // The session goes on, on both nodes.
    let listed = on_a.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK);
    let listed = on_b.request(json!(2), "tools/list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK);

    // An unknown session is 404, as anywhere.
    let mut stranger = on_b.clone();
    stranger.session = Some("0123456789abcdef0123456789abcdef".to_owned());
    let response = stranger
        .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    // On the node that ran `initialize` (it holds the session's actor), the same script.
    let mut whole = a.client();
    whole.initialize(json!({})).await;
    let id = whole.session.clone().unwrap();
    let record = redis.command(&format!("HGETALL mcp:{{{id}}}:session"));
    assert!(record.contains("\r\nest\r\n$1\r\n1\r\n"), "{record}");
    assert_eq!(a.mcp.session_count(), 2);
    a.stop().await;
    b.stop().await;
}

/// `claim_once` is one atomic `SET NX PX`: the first claim of a key wins, later ones lose until
/// it expires (what single-use `requestState`s are checked against cluster-wide).
#[actix_web::test]
async fn a_key_is_claimed_once_until_it_expires() {
    use actix_mcp::cluster::SessionStore;
    use actix_mcp::cluster::redis::{Redis, RedisSessionStore};

    let redis = RedisServer::start();
    let store = RedisSessionStore::new(Redis::connect(&redis.url(), "mcp").await.unwrap());
    let other = RedisSessionStore::new(Redis::connect(&redis.url(), "mcp").await.unwrap());
    let ttl = Duration::from_millis(300);
    assert!(store.claim_once("mrtr:abc", ttl).await.unwrap());
    assert!(!store.claim_once("mrtr:abc", ttl).await.unwrap());
    assert!(
        !other.claim_once("mrtr:abc", ttl).await.unwrap(),
        "another node's claim"
    );
    assert!(other.claim_once("mrtr:def", ttl).await.unwrap());
    let pttl = redis.command("PTTL mcp:claim:{mrtr:abc}");
    let ms: i64 = pttl.trim().trim_start_matches(':').parse().unwrap();
    assert!(ms > 0 && ms <= 300, "expires with its state: {pttl}");
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(store.claim_once("mrtr:abc", ttl).await.unwrap(), "expired");
}

/// The node holding a session's GET stream stops; the client resumes the stream with
/// `Last-Event-ID` on another node: the events it missed are replayed from Redis, and the stream
/// stays open there, receiving what the session is sent from then on (list changes, log
/// messages, resource updates, from any node).
#[actix_web::test]
async fn a_get_stream_resumed_on_another_node_goes_on_there() {
    let redis = RedisServer::start();
    let (fa, a) = node(&redis).await;
    let (fb, b) = node(&redis).await;
    let (fc, c) = node(&redis).await;
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let subscribed = on_a
        .request(
            json!(1),
            "resources/subscribe",
            json!({"uri": "test://kept"}),
        )
        .await;
    assert_eq!(subscribed.status, StatusCode::OK, "{}", subscribed.response);
    let on_b = on_a.at(&b.url);
    let on_c = on_a.at(&c.url);
    let mut stream = SseReader::new(on_a.get(None).await);
    fa.server.notify_tools_list_changed();
    let (seen, _) = stream.next_message_with_id().await;
    let seen = seen.expect("stream events carry ids");
    // Sent while the client is away: stored, replayed on B.
    fa.server.notify_prompts_list_changed();
    drop(stream);
    fa.server.notify_resources_list_changed();
    // Written behind: let A's writer store it, then A goes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.stop().await;
    drop(fa);

    let resumed = on_b.get(Some(&seen)).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let mut resumed = SseReader::new(resumed);
    assert_eq!(
        resumed.next_message().await["method"],
        "notifications/prompts/list_changed"
    );
    assert_eq!(
        resumed.next_message().await["method"],
        "notifications/resources/list_changed"
    );
    // It stays open on B: what B and C raise reaches it.
    fb.server.notify_tools_list_changed();
    assert_eq!(
        resumed.next_message().await["method"],
        "notifications/tools/list_changed"
    );
    fc.server.notify_resource_updated("test://kept");
    let updated = resumed.next_message().await;
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "test://kept");
    let logged = on_c
        .request(json!(2), "logging/setLevel", json!({"level": "info"}))
        .await;
    assert_eq!(logged.status, StatusCode::OK);
    fc.server.notify_log_message(LogMessage::new(
        actix_mcp::protocol::LoggingLevel::Warning,
        json!("from C"),
    ));
    let message = resumed.next_message().await;
    assert_eq!(message["method"], "notifications/message");
    assert_eq!(message["params"]["data"], "from C");
    b.stop().await;
    c.stop().await;
}

/// Stateless nodes with bearer auth on Redis: a caller's `notifications/cancelled` posted to a
/// node where its request does not run travels on the bus to the node that runs it, which
/// cancels that caller's request of that id and no other identity's.
#[actix_web::test]
async fn a_sessionless_cancel_travels_to_the_node_running_the_request() {
    use actix_mcp::server::auth::BearerAuth;
    use common::http::{Client, alice_reads_secrets};

    let redis = RedisServer::start();
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let fixture = fixture();
        let auth = BearerAuth::builder("http://127.0.0.1/mcp", alice_reads_secrets())
            .authorization_server("https://as.example")
            .build()
            .unwrap();
        let cluster = Cluster::redis(&redis.url()).await.unwrap();
        let mcp = fixture
            .server
            .http("/mcp")
            .stateless(true)
            .bearer_auth(auth);
        let server = spawn(mcp.cluster(cluster), 1);
        nodes.push((fixture, server));
    }
    let (fb, b) = nodes.pop().unwrap();
    let (fa, a) = nodes.pop().unwrap();
    let call =
        |user: &str| {
            let builder = Client::with_bearer(&a.url, user)
                .post_builder(&common::http::tools_call(json!(1), "slow", json!({})));
            actix_rt::spawn(async move { builder.send().await.unwrap().text().await.unwrap() })
        };
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1, "reason": "done"}});
    let alices = call("alice");
    tokio::time::timeout(common::WAIT, fa.probes.started.wait_for(1))
        .await
        .unwrap();
    let bobs = call("bob");
    tokio::time::timeout(common::WAIT, fa.probes.started.wait_for(2))
        .await
        .unwrap();

    // Bob's cancellation through B, again until it lands (A may still be subscribing to the
    // bus: a message sent before is not delivered to it).
    let bob_on_b = Client::with_bearer(&b.url, "bob");
    common::eventually_async("Bob's cancellation reaches A", || {
        let bob_on_b = bob_on_b.clone();
        let cancel = cancel.clone();
        let stopped = fa.probes.stopped.hits();
        async move {
            if stopped == 0 {
                assert_eq!(bob_on_b.post(&cancel).await.status(), StatusCode::ACCEPTED);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            stopped > 0
        }
    })
    .await;
    let body = tokio::time::timeout(common::WAIT, bobs)
        .await
        .unwrap()
        .unwrap();
    assert!(!body.contains("\"result\""), "{body}");
    assert!(
        !alices.is_finished(),
        "Bob's cancellation stopped Alice's request"
    );
    assert_eq!(fa.probes.stopped.hits(), 1);
    assert_eq!(a.mcp.stats().runtime.in_flight, 1);

    // Alice's through B stops hers.
    let alice_on_b = Client::with_bearer(&b.url, "alice");
    assert_eq!(
        alice_on_b.post(&cancel).await.status(),
        StatusCode::ACCEPTED
    );
    tokio::time::timeout(common::WAIT, alices)
        .await
        .unwrap()
        .unwrap();
    fa.probes.stopped.wait_for(2).await;
    assert_eq!(fb.probes.started.hits(), 0, "B ran nothing");
    a.stop().await;
    b.stop().await;
}

/// With a session lease (`Cluster::session_lease`), a node serves a session it holds without
/// a round trip to Redis until the bus may have lost a message: a subscription killed and
/// re-established ends the lease, and a deletion on another node reaches it on the bus.
#[actix_web::test]
async fn a_leased_session_costs_no_round_trip_until_the_bus_reconnects() {
    let redis = RedisServer::start();
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let fixture = fixture();
        let cluster = Cluster::redis(&redis.url())
            .await
            .unwrap()
            .session_lease(Duration::from_secs(60));
        let server = spawn(fixture.server.http("/mcp").cluster(cluster), 1);
        nodes.push((fixture, server));
    }
    let (a, b) = (&nodes[0].1, &nodes[1].1);
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let id = on_a.session.clone().unwrap();
    let key = format!("HGETALL mcp:{{{id}}}:session");
    common::eventually("the handshake is stored", || {
        redis.command(&key).contains("\r\nest\r\n$1\r\n1\r\n")
    })
    .await;
    let on_b = on_a.at(&b.url);
    let scripts_run = || {
        let info = redis.command("INFO commandstats");
        info.split("cmdstat_evalsha:calls=")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |calls| calls.parse::<u64>().unwrap())
    };
    let echo = |id: i64| {
        let on_b = on_b.clone();
        async move {
            let answer = on_b.call(json!(id), "echo", json!({"message": "hi"})).await;
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.response);
        }
    };

    // B's first request reads the record (and sends Redis the script, new to it).
    echo(1).await;
    assert!(redis.command("CONFIG RESETSTAT").starts_with("+OK"));
    for id in 2..=6 {
        echo(id).await;
    }
    assert_eq!(scripts_run(), 0, "B serves from its copy");

    // Every node's subscription cut: messages published meanwhile would be lost.
    let killed = redis.command("CLIENT KILL TYPE pubsub");
    assert!(killed.starts_with(':'), "{killed}");
    // The bus reconnects by itself (within a second); meanwhile every request reads. Once it
    // is back, one request reads the record again and leases it anew.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(redis.command("CONFIG RESETSTAT").starts_with("+OK"));
    let mut id = 7;
    loop {
        let before = scripts_run();
        echo(id).await;
        id += 1;
        if id > 8 && scripts_run() == before {
            break;
        }
        assert!(id < 200, "B never leased the session again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        scripts_run() >= 1,
        "the reconnection ended the lease: the record was read again"
    );

    // A deletion on A reaches B on the bus.
    assert_eq!(on_a.delete().await, StatusCode::OK);
    common::eventually("B hears of the deletion", || b.mcp.session_count() == 0).await;
    let gone = on_b.request(json!(id), "tools/list", json!({})).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.response);
    for (_, server) in nodes {
        server.stop().await;
    }
}
