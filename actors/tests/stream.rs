//! Streams: a GET stream fed by session notifications, the slow-client policy (a connection
//! that does not keep up is dropped, and nothing is lost to a client that resumes), and
//! resumption onto a live stream.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp_actors::{
    CONNECTION_BUFFER, EventId, EventStore, Frame, InMemoryEventStore, SseEvent,
};
use serde_json::{Value, json};

use support::{Fake, eventually, next_event, open, registry};

fn n(event: &SseEvent) -> i64 {
    let value: Value = serde_json::from_str(&event.data).unwrap();
    value["params"].as_i64().unwrap()
}

#[actix_rt::test]
async fn a_client_that_does_not_read_is_dropped_and_resumes_without_loss() {
    let store: Arc<dyn EventStore> = Arc::new(InMemoryEventStore::new(1024, 1 << 20));
    let registry = registry(4, None, Some(store));
    let session = open(&registry, "slow-reader", Arc::new(Fake::default()), None);
    let mut get = session
        .open_standalone(Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(registry.metrics().streams, 1);
    // Far more than one connection may hold, sent while nobody reads.
    let total = CONNECTION_BUFFER as i64 * 3;
    for i in 0..total {
        session.notify(Frame::notification("tick", Some(&json!(i))));
    }
    // The connection holds the priming event and what fit; then it was dropped.
    let priming = next_event(&mut get).await.unwrap();
    assert_eq!(priming.data.as_ref(), "");
    let mut last = None;
    let mut held = 0;
    while let Some(event) = next_event(&mut get).await {
        assert_eq!(n(&event), held);
        held += 1;
        last = event.id;
    }
    assert_eq!(
        held, CONNECTION_BUFFER as i64,
        "the channel held its capacity"
    );
    // The stream lives on without a connection; the client resumes where it stopped.
    let last = last.unwrap();
    let mut resumed = session
        .resume(last, Duration::from_secs(1))
        .await
        .unwrap()
        .into_stream()
        .expect("a live stream");
    for expected in held..total {
        let event = next_event(&mut resumed).await.unwrap();
        assert_eq!(n(&event), expected);
    }
    // And it stays attached: what follows arrives live.
    session.notify(Frame::notification("tick", Some(&json!(total))));
    assert_eq!(n(&next_event(&mut resumed).await.unwrap()), total);
    assert_eq!(
        resumed.try_recv(),
        None,
        "each event once, in order, nothing after"
    );
}

#[actix_rt::test]
async fn a_new_get_stream_replaces_the_old_and_a_finished_stream_replays_from_the_store() {
    let store: Arc<dyn EventStore> = Arc::new(InMemoryEventStore::default());
    let registry = registry(4, None, Some(store));
    let session = open(&registry, "two-gets", Arc::new(Fake::default()), None);
    let mut first = session
        .open_standalone(Duration::from_secs(1))
        .await
        .unwrap();
    let priming = next_event(&mut first).await.unwrap();
    let first_stream = priming.id.unwrap().stream;
    session.notify(Frame::notification("one", None::<&Value>));
    let mut second = session
        .open_standalone(Duration::from_secs(1))
        .await
        .unwrap();
    // The first stream ends after what it carried; the second carries what follows.
    assert!(next_event(&mut first).await.is_some());
    assert!(next_event(&mut first).await.is_none());
    next_event(&mut second).await.unwrap();
    session.notify(Frame::notification("two", None::<&Value>));
    let two = next_event(&mut second).await.unwrap();
    assert!(two.data.contains("\"two\""));
    eventually("one stream actor left", || registry.metrics().streams == 1).await;
    // The finished standalone stream is replayed from the store, then goes on as the session's
    // standalone stream: the second one ends.
    let mut replay = session
        .resume(
            EventId {
                stream: first_stream,
                seq: 0,
            },
            Duration::from_secs(1),
        )
        .await
        .unwrap()
        .into_stream()
        .expect("kept in the store");
    assert!(
        next_event(&mut replay)
            .await
            .unwrap()
            .data
            .contains("\"one\"")
    );
    let priming = next_event(&mut replay).await.unwrap();
    assert_eq!(priming.data.as_ref(), "");
    assert!(priming.id.unwrap().is_standalone());
    assert!(next_event(&mut second).await.is_none());
    session.notify(Frame::notification("three", None::<&Value>));
    assert!(
        next_event(&mut replay)
            .await
            .unwrap()
            .data
            .contains("\"three\"")
    );
}

#[actix_rt::test]
async fn a_post_answer_is_resumable_the_moment_its_stream_starts() {
    use actix_mcp_actors::{EventLog, Metrics, RequestId, Settled, SseStream};

    let store: Arc<dyn EventStore> = Arc::new(InMemoryEventStore::default());
    let registry = registry(4, None, Some(store));
    let session = open(&registry, "quick-resume", Arc::new(Fake::default()), None);
    let number = session.next_stream();
    let log = EventLog::buffered(Some(session.clone()), number, Duration::from_secs(1), true);
    let Some(Settled::Stream(first)) = log.settle(true) else {
        panic!("a forced settle of a running request streams");
    };
    SseStream::start(log.clone(), Arc::new(Metrics::default()));
    // The client saw the priming event and its connection dropped at once; it resumes before
    // the stream's actor has run at all (on a busy worker, it may not have been polled yet).
    drop(first);
    let resume = session.resume(
        EventId {
            stream: number,
            seq: 0,
        },
        Duration::from_secs(1),
    );
    let mut resumed = resume
        .await
        .unwrap()
        .into_stream()
        .expect("the request's stream");
    // The request answers after the resume: the resumed connection carries the response.
    let id = RequestId::Number(7);
    log.outlet()
        .deliver(Frame::response(&id, &Ok(json!({"done": true}))))
        .unwrap();
    let response = next_event(&mut resumed)
        .await
        .expect("the response reaches the resumed connection");
    assert!(response.data.contains("\"done\""), "{}", response.data);
}
