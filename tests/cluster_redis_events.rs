//! Stream events on a real Redis (Debian's `redis-server` on a free loopback port, started by
//! the test): `RedisEventStore` writes behind in lingering batches, trims and expires each
//! session's list, deletes a list made again after its session went, and keeps requests'
//! streams on their node when asked to, another node then asking that node on the bus.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery>
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use actix_mcp::cluster::Cluster;
use reqwest::StatusCode;
use serde_json::json;

use common::http::{TestServer, spawn};
use common::http_tools::{Fixture, fixture};
use common::redis::RedisServer;
use common::sse::SseReader;

/// A node of the tests' usual server on `redis`, keeping requests' streams in its memory.
async fn on_node(redis: &RedisServer) -> (Fixture, TestServer) {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};
    let connection = Redis::connect(&redis.url(), "mcp").await.unwrap();
    let cluster = Cluster::on_redis(connection.clone()).event_store(std::sync::Arc::new(
        RedisEventStore::new(connection).request_streams_on_node(),
    ));
    let fixture = fixture();
    let server = spawn(fixture.server.http("/mcp").cluster(cluster), 1);
    (fixture, server)
}

/// A request's stream kept on the node that served it resumes on another node, which asks
/// that node over the bus, and writes nothing to Redis; once that node is gone, the resume
/// gets the session's standalone stream instead.
#[actix_web::test]
async fn a_request_stream_kept_on_its_node_resumes_on_another() {
    let redis = RedisServer::start();
    let (_fa, a) = on_node(&redis).await;
    let (_fb, b) = on_node(&redis).await;
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    let call = json!({
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "kept on A"}},
    });
    let mut answer = SseReader::new(on_a.post(&call).await);
    // The `retry` advice, then the priming event (an id, no message).
    let priming = answer.next_event_with_id().await.id.unwrap();
    let (_, answered) = answer.next_message_with_id().await;
    assert_eq!(answered["id"], 7, "{answered}");
    drop(answer);

    // Resumed on B after the priming event: B asks A, and replays the answer.
    let resumed = on_b.get(Some(&priming)).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let mut resumed = SseReader::new(resumed);
    let replayed = resumed.next_message().await;
    assert_eq!(replayed, answered);
    resumed.expect_end().await;
    // Long after the answer was sent (its writer lingers 1 ms), none of it is in Redis.
    let events = format!("LLEN mcp:{{{}}}:events", on_a.session.clone().unwrap());
    assert_eq!(redis.command(&events), ":0\r\n", "nothing of it in Redis");

    // A goes: nobody holds the stream; B opens the session's standalone stream instead.
    a.stop().await;
    let resumed = on_b.get(Some(&priming)).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let mut resumed = SseReader::new(resumed);
    let first = resumed.next_event_with_id().await;
    assert!(
        first.id.as_deref().is_some_and(|id| id != priming),
        "a new stream's priming event: {first:?}"
    );
    b.stop().await;
}

/// The event store writes behind; a flush (as a draining node does) waits until every event
/// appended so far is in Redis, where another node replays it.
#[actix_web::test]
async fn the_event_store_flushes_what_it_writes_behind() {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};
    use actix_mcp::cluster::{EventId, EventStore, Replay, SessionId};

    let redis = RedisServer::start();
    let connection = Redis::connect(&redis.url(), "mcp").await.unwrap();
    let store = RedisEventStore::new(connection.clone());
    let session = SessionId::parse("flushed").unwrap();
    // Events are kept for sessions with a record.
    redis.command("HSET mcp:{flushed}:session stamp 1");
    let events = store.open(&session);
    for seq in 1..=3 {
        events.append(EventId { stream: 9, seq }, &format!("event {seq}").into());
    }
    store.flush().await;
    let stored = redis.command("LRANGE mcp:{flushed}:events 0 -1");
    assert!(stored.starts_with("*3"), "{stored}");
    // Another node (another store on the same Redis) replays them.
    let elsewhere = RedisEventStore::new(connection).open(&session);
    match elsewhere.replay(EventId { stream: 9, seq: 1 }).await {
        Replay::Events { events, gap } => {
            assert!(!gap);
            let data: Vec<&str> = events.iter().map(|(_, data)| &**data).collect();
            assert_eq!(data, ["event 2", "event 3"]);
        }
        Replay::Unknown => panic!("the stream is stored"),
    }
}

/// A writer lingers after an event for more to write in the same pipeline: events appended
/// apart, within the linger, cost one `RPUSH` per session; a flush does not wait the linger out.
#[actix_web::test]
async fn the_event_writer_lingers_for_more_events_but_not_past_a_flush() {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};
    use actix_mcp::cluster::{EventId, EventStore, SessionId};

    let redis = RedisServer::start();
    let connection = Redis::connect(&redis.url(), "mcp").await.unwrap();
    let rpushes = |redis: &RedisServer| -> u64 {
        let stats = redis.command("INFO commandstats");
        stats
            .lines()
            .find_map(|line| line.strip_prefix("cmdstat_rpush:calls="))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |calls| calls.parse().unwrap())
    };
    let store = RedisEventStore::new(connection).linger(Duration::from_secs(3600));
    redis.command("HSET mcp:{lingered-a}:session stamp 1");
    redis.command("HSET mcp:{lingered-b}:session stamp 1");
    let a = store.open(&SessionId::parse("lingered-a").unwrap());
    let b = store.open(&SessionId::parse("lingered-b").unwrap());
    for seq in 1..=5 {
        a.append(EventId { stream: 1, seq }, &format!("a{seq}").into());
        b.append(EventId { stream: 1, seq }, &format!("b{seq}").into());
        // The writer wakes between the appends.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(rpushes(&redis), 0, "nothing written within the linger");
    // Within the flush's own 5 s, far short of the linger.
    store.flush().await;
    assert_eq!(redis.command("LLEN mcp:{lingered-a}:events"), ":5\r\n");
    assert_eq!(redis.command("LLEN mcp:{lingered-b}:events"), ":5\r\n");
    assert_eq!(rpushes(&redis), 2, "one RPUSH per session for the batch");
}

/// With requests' streams kept on the node, only the standalone stream's events reach Redis:
/// the request's stream replays on its own node and is unknown on another, where the
/// standalone stream replays.
#[actix_web::test]
async fn request_streams_on_node_keep_their_events_off_redis() {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};
    use actix_mcp::cluster::{EventId, EventStore, Replay, SessionId};

    let redis = RedisServer::start();
    let connection = Redis::connect(&redis.url(), "mcp").await.unwrap();
    let store = RedisEventStore::new(connection.clone()).request_streams_on_node();
    let session = SessionId::parse("on-node").unwrap();
    redis.command("HSET mcp:{on-node}:session stamp 1");
    let events = store.open(&session);
    let request = |seq| EventId { stream: 3, seq };
    let standalone = |seq| EventId {
        stream: EventId::STANDALONE,
        seq,
    };
    for seq in 1..=2 {
        events.append(request(seq), &format!("answer {seq}").into());
        events.append(standalone(seq), &format!("notice {seq}").into());
    }
    store.flush().await;
    assert_eq!(redis.command("LLEN mcp:{on-node}:events"), ":2\r\n");
    let data = |replay: Replay| match replay {
        Replay::Events { events, gap } => {
            assert!(!gap);
            events
                .iter()
                .map(|(_, data)| data.to_string())
                .collect::<Vec<_>>()
        }
        Replay::Unknown => panic!("a known stream"),
    };
    assert_eq!(data(events.replay(request(1)).await), ["answer 2"]);
    let elsewhere = RedisEventStore::new(connection)
        .request_streams_on_node()
        .open(&session);
    assert_eq!(elsewhere.replay(request(1)).await, Replay::Unknown);
    assert_eq!(data(elsewhere.replay(standalone(1)).await), ["notice 2"]);
}

/// An event written behind after its session was deleted (by another node) does not bring
/// the session's list back: its writer finds the list new and the record gone, and deletes it.
#[actix_web::test]
async fn events_written_after_their_session_ended_leave_no_list() {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};
    use actix_mcp::cluster::{EventId, EventStore, SessionId};

    let redis = RedisServer::start();
    let connection = Redis::connect(&redis.url(), "mcp").await.unwrap();
    let store = RedisEventStore::new(connection);
    let events = store.open(&SessionId::parse("ended").unwrap());
    redis.command("HSET mcp:{ended}:session stamp 1");
    events.append(EventId { stream: 1, seq: 1 }, &"before".into());
    store.flush().await;
    assert_eq!(redis.command("LLEN mcp:{ended}:events"), ":1\r\n");
    // Another node deletes the session; this one still sends an event of it.
    redis.command("DEL mcp:{ended}:session mcp:{ended}:events");
    events.append(EventId { stream: 1, seq: 2 }, &"after".into());
    store.flush().await;
    assert_eq!(redis.command("EXISTS mcp:{ended}:events"), ":0\r\n");
}

/// A session's list keeps at least its newest `max_events` events (of all its streams): it is
/// trimmed once it holds a quarter more, and a resume from a trimmed event is told of the gap.
#[actix_web::test]
async fn the_event_store_trims_each_session_to_its_newest_events() {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};
    use actix_mcp::cluster::{EventId, EventStore, Replay, SessionId};

    let redis = RedisServer::start();
    let connection = Redis::connect(&redis.url(), "mcp").await.unwrap();
    let store = RedisEventStore::with_limits(connection.clone(), 4, Duration::from_secs(60));
    let session = SessionId::parse("trimmed").unwrap();
    redis.command("HSET mcp:{trimmed}:session stamp 1");
    let events = store.open(&session);
    for seq in 1..=6 {
        events.append(EventId { stream: 1, seq }, &format!("event {seq}").into());
    }
    store.flush().await;
    assert_eq!(redis.command("LLEN mcp:{trimmed}:events"), ":6\r\n");
    events.append(EventId { stream: 2, seq: 1 }, &"other".into());
    store.flush().await;
    assert_eq!(
        redis.command("LLEN mcp:{trimmed}:events"),
        ":4\r\n",
        "trimmed to the newest 4"
    );
    let ttl = redis.command("PTTL mcp:{trimmed}:events");
    assert!(ttl.starts_with(':') && !ttl.starts_with(":-"), "{ttl}");
    let elsewhere = RedisEventStore::new(connection).open(&session);
    match elsewhere.replay(EventId { stream: 1, seq: 2 }).await {
        Replay::Events { events, gap } => {
            assert!(gap, "events 3 was trimmed");
            let data: Vec<&str> = events.iter().map(|(_, data)| &**data).collect();
            assert_eq!(data, ["event 4", "event 5", "event 6"]);
        }
        Replay::Unknown => panic!("the stream is stored"),
    }
    match elsewhere.replay(EventId { stream: 2, seq: 0 }).await {
        Replay::Events { events, gap } => {
            assert!(!gap);
            assert_eq!(&*events[0].1, "other");
        }
        Replay::Unknown => panic!("the stream is stored"),
    }
}

/// An event list's TTL is set when it is first written (the store's TTL and a quarter), not
/// renewed by every batch, and set again at once on a list that was deleted since.
#[actix_web::test]
async fn event_lists_get_their_ttl_once_and_again_when_recreated() {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};
    use actix_mcp::cluster::{EventId, EventStore, SessionId};

    let redis = RedisServer::start();
    let connection = Redis::connect(&redis.url(), "mcp").await.unwrap();
    let store = RedisEventStore::with_limits(connection, 100, Duration::from_secs(60));
    let session = SessionId::parse("renewed").unwrap();
    redis.command("HSET mcp:{renewed}:session stamp 1");
    let events = store.open(&session);
    let pttl = |redis: &RedisServer| -> i64 {
        let reply = redis.command("PTTL mcp:{renewed}:events");
        reply
            .trim()
            .trim_start_matches(':')
            .parse()
            .unwrap_or_else(|_| panic!("PTTL answered {reply:?}"))
    };
    events.append(EventId { stream: 1, seq: 1 }, &"first".into());
    store.flush().await;
    let first = pttl(&redis);
    assert!(
        first > 60_000 && first <= 75_000,
        "TTL and a quarter: {first}"
    );
    // Within the quarter, a write does not renew it: shorten it and see it stay short.
    redis.command("PEXPIRE mcp:{renewed}:events 30000");
    events.append(EventId { stream: 1, seq: 2 }, &"second".into());
    store.flush().await;
    let kept = pttl(&redis);
    assert!(
        kept > 0 && kept <= 30_000,
        "not renewed by every batch: {kept}"
    );
    // A list deleted since (here by hand) is created again by the next write, with a TTL.
    redis.command("DEL mcp:{renewed}:events");
    events.append(EventId { stream: 1, seq: 3 }, &"third".into());
    store.flush().await;
    assert_eq!(redis.command("LLEN mcp:{renewed}:events"), ":1\r\n");
    let again = pttl(&redis);
    assert!(
        again > 60_000 && again <= 75_000,
        "a recreated list has a TTL: {again}"
    );
}

/// Threads that append events come and go (a blocking pool's): the writer each started ends
/// with it, once what it queued is written, and nothing of them is lost.
#[actix_web::test]
async fn the_event_writers_of_threads_gone_end() {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};
    use actix_mcp::cluster::{EventId, EventStore, Replay, SessionId};

    let redis = RedisServer::start();
    let connection = Redis::connect(&redis.url(), "mcp").await.unwrap();
    let store = RedisEventStore::new(connection.clone());
    let session = SessionId::parse("threads").unwrap();
    redis.command("HSET mcp:{threads}:session stamp 1");
    let runtime = tokio::runtime::Handle::current();
    for seq in 1..=8 {
        let events = store.open(&session);
        let runtime = runtime.clone();
        std::thread::spawn(move || {
            let _inside = runtime.enter();
            events.append(EventId { stream: 1, seq }, &format!("event {seq}").into());
        })
        .join()
        .unwrap();
    }
    store.flush().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while store.writers() > 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} writers still run for 8 threads gone",
            store.writers()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elsewhere = RedisEventStore::new(connection).open(&session);
    match elsewhere.replay(EventId { stream: 1, seq: 0 }).await {
        Replay::Events { events, .. } => assert_eq!(events.len(), 8),
        Replay::Unknown => panic!("the events are stored"),
    }
}
