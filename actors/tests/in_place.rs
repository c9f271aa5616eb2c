//! Work that never waits is done in place; work that waits becomes an actor.
//!
//! A request answered in the first poll of its handler gets no in-flight actor, a supervised
//! future that finishes in its first poll gets no tool-call actor, and an answer whose request
//! finished while its events were buffered gets no stream actor. Everything that does wait is
//! an actor, with the gauges to show it, and keeps every behaviour: cancellation, ordering,
//! resumption.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp_actors::{
    EventId, EventStore, InMemoryEventStore, RegistryHandle, RequestId, SessionHandle,
    dev::{ChannelOutlet, EventLog, Frame, Settled, SseEvent, SseStream},
};
use serde_json::{Value, json};
use tokio::sync::Notify;

use support::{Fake, Harness, eventually, harness, next_event, open, registry, request, within};

fn json_of(frame: &Frame) -> Value {
    serde_json::from_str(&frame.json).expect("valid JSON")
}

fn data(event: &SseEvent) -> Value {
    if event.data.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&event.data).expect("valid JSON")
    }
}

fn id(stream: u64, seq: u64) -> Option<EventId> {
    Some(EventId { stream, seq })
}

#[actix_rt::test]
async fn a_request_that_never_waits_is_answered_before_request_returns() {
    let Harness {
        registry, session, ..
    } = harness();
    let (outlet, mut rx) = ChannelOutlet::channel();
    session.request(request(1, "echo", json!({"n": 1})), outlet);
    // No await in between: the answer is already there, its id is free again, and no actor
    // was started (the gauge moves when an in-flight actor is created, before it runs).
    let frame = rx.try_recv().expect("answered in place");
    assert_eq!(json_of(&frame)["result"], json!({"n": 1}));
    assert_eq!(session.in_flight(), 0);
    assert_eq!(registry.metrics().in_flight, 0);
}

#[actix_rt::test]
async fn a_request_that_waits_is_an_in_flight_actor_until_it_answers() {
    let Harness {
        registry,
        session,
        release,
        ..
    } = harness();
    let (outlet, mut rx) = ChannelOutlet::channel();
    session.request(request(1, "wait", json!({})), outlet);
    // Counted the moment `request` returns: the actor exists and its row is in the table.
    assert_eq!(registry.metrics().in_flight, 1);
    assert_eq!(session.in_flight(), 1);
    assert!(rx.try_recv().is_err(), "not answered yet");
    release.notify_one();
    let frame = within(rx.recv()).await.expect("open");
    assert_eq!(json_of(&frame)["result"], json!("released"));
    assert_eq!(
        session.in_flight(),
        0,
        "the row goes before the answer leaves"
    );
    eventually("the actor to stop", || registry.metrics().in_flight == 0).await;
}

#[actix_rt::test]
async fn a_supervised_future_moves_into_a_tool_call_actor_only_when_it_waits() {
    let Harness {
        registry,
        session,
        release,
        ..
    } = harness();
    let (outlet, mut rx) = ChannelOutlet::channel();

    session.request(request(1, "tool_now", json!({})), outlet.clone());
    let frame = rx.try_recv().expect("answered in place");
    assert_eq!(json_of(&frame)["result"], json!("Ok(5)"));
    assert_eq!(registry.metrics().tool_calls, 0);

    session.request(request(2, "tool_wait", json!({})), outlet);
    assert_eq!(
        registry.metrics().tool_calls,
        1,
        "started in the first poll"
    );
    release.notify_one();
    let frame = within(rx.recv()).await.expect("open");
    assert_eq!(json_of(&frame)["result"], json!("Ok(7)"));
    eventually("both actors to stop", || {
        let now = registry.metrics();
        now.tool_calls == 0 && now.in_flight == 0
    })
    .await;
}

#[actix_rt::test]
async fn cancelling_a_request_stops_its_tool_call_actor() {
    let Harness {
        registry, session, ..
    } = harness();
    let (outlet, mut rx) = ChannelOutlet::channel();
    session.request(request(4, "tool_wait", json!({})), outlet);
    assert_eq!(registry.metrics().tool_calls, 1);
    session.notification(support::cancel(json!(4)));
    eventually("the tool call and the request to stop", || {
        let now = registry.metrics();
        now.tool_calls == 0 && now.in_flight == 0
    })
    .await;
    assert!(
        rx.try_recv().is_err(),
        "a cancelled request answers nothing"
    );
}

/// A session whose registry keeps events, and the store it keeps them in.
struct Post {
    registry: RegistryHandle,
    session: SessionHandle,
    release: Arc<Notify>,
    log: Arc<EventLog>,
}

fn post() -> Post {
    let store: Arc<dyn EventStore> = Arc::new(InMemoryEventStore::default());
    let registry = registry(4, None, Some(store));
    let fake = Fake::default();
    let release = fake.release.clone();
    let session = open(&registry, "in-place", Arc::new(fake), None);
    let log = EventLog::buffered(
        Some(session.clone()),
        session.next_stream(),
        Duration::from_millis(500),
        true,
    );
    Post {
        registry,
        session,
        release,
        log,
    }
}

fn replay(session: &SessionHandle, after: EventId) -> Option<Vec<(EventId, Arc<str>)>> {
    match session.events().expect("an event log").replay_here(after) {
        actix_mcp_actors::Replay::Unknown => None,
        actix_mcp_actors::Replay::Events { events, .. } => Some(events),
    }
}

#[actix_rt::test]
async fn an_answer_finished_while_buffered_is_complete_and_replayable() {
    let Post {
        registry,
        session,
        log,
        ..
    } = post();
    let outlet = log.outlet();
    outlet
        .deliver(Frame::notification(
            "notifications/progress",
            Some(&json!({"progress": 1})),
        ))
        .expect("taken");
    session.request(request(9, "echo", json!({"n": 9})), outlet);
    let Some(Settled::Complete { events, answered }) = log.settle(false) else {
        panic!("a finished request settles complete");
    };
    assert!(answered);
    let ids: Vec<_> = events.iter().map(|event| event.id).collect();
    assert_eq!(ids, vec![id(1, 0), id(1, 1), id(1, 2)]);
    assert_eq!(events[0].retry, Some(Duration::from_millis(500)));
    assert_eq!(data(&events[1])["method"], json!("notifications/progress"));
    assert_eq!(data(&events[2])["result"], json!({"n": 9}));
    // No stream actor was started, yet the events are kept for Last-Event-ID.
    assert_eq!(registry.metrics().streams, 0);
    let replay = replay(&session, EventId { stream: 1, seq: 1 }).expect("the stream is known");
    assert_eq!(replay.len(), 1);
    assert_eq!(replay[0].0, EventId { stream: 1, seq: 2 });
    assert!(log.settle(true).is_none(), "a log settles once");
}

#[actix_rt::test]
async fn a_running_request_settles_only_when_forced_and_its_stream_adopts_its_events() {
    let Post {
        registry,
        session,
        release,
        log,
        ..
    } = post();
    let outlet = log.outlet();
    outlet
        .deliver(Frame::notification(
            "notifications/message",
            Some(&json!({"level": "info"})),
        ))
        .expect("taken");
    session.request(request(3, "wait", json!({})), outlet.clone());
    assert!(log.settle(false).is_none(), "a quiet running request waits");
    let Some(Settled::Stream(mut rx)) = log.settle(true) else {
        panic!("a running request settles as a stream when forced");
    };
    SseStream::start(log.clone(), registry.metrics_handle().clone());
    assert_eq!(registry.metrics().streams, 1);
    let priming = next_event(&mut rx).await.expect("the priming event");
    assert_eq!((priming.id, data(&priming)), (id(1, 0), Value::Null));
    let message = next_event(&mut rx).await.expect("the adopted notification");
    assert_eq!(message.id, id(1, 1));
    // What follows is numbered on from the adopted events.
    outlet
        .deliver(Frame::notification(
            "notifications/progress",
            Some(&json!({"progress": 2})),
        ))
        .expect("taken");
    release.notify_one();
    let progress = next_event(&mut rx).await.expect("the progress event");
    assert_eq!(progress.id, id(1, 2));
    let response = next_event(&mut rx).await.expect("the response");
    assert_eq!(
        (response.id, data(&response)["result"].clone()),
        (id(1, 3), json!("released"))
    );
    assert!(
        next_event(&mut rx).await.is_none(),
        "the stream ends after its response"
    );
    eventually("the stream actor to stop", || {
        registry.metrics().streams == 0
    })
    .await;
}

#[actix_rt::test]
async fn a_request_to_the_client_makes_the_answer_urgent() {
    let Post { log, .. } = post();
    assert!(log.settle(false).is_none());
    log.outlet()
        .deliver(Frame::request(
            &RequestId::Number(1),
            "sampling/createMessage",
            Some(&json!({})),
        ))
        .expect("taken");
    // The client must not wait for a window: the log settles as a stream unforced.
    let Some(Settled::Stream(mut rx)) = log.settle(false) else {
        panic!("a request to the client needs a stream");
    };
    next_event(&mut rx).await.expect("priming");
    let request = next_event(&mut rx).await.expect("the request");
    assert_eq!(data(&request)["method"], json!("sampling/createMessage"));
}

#[actix_rt::test]
async fn a_stream_without_a_connection_keeps_what_follows_resumable() {
    let Post {
        registry,
        session,
        release,
        log,
        ..
    } = post();
    session.request(request(4, "wait", json!({})), log.outlet());
    let Some(Settled::Stream(rx)) = log.settle(true) else {
        panic!("forced");
    };
    SseStream::start(log.clone(), registry.metrics_handle().clone());
    // The client goes away before anything was sent.
    drop(rx);
    release.notify_one();
    eventually("the response in the store", || {
        replay(&session, EventId { stream: 1, seq: 0 }).is_some_and(|events| events.len() == 1)
    })
    .await;
    let replay = replay(&session, EventId { stream: 1, seq: 0 }).expect("known");
    let response: Value = serde_json::from_str(&replay[0].1).expect("JSON");
    assert_eq!(response["result"], json!("released"));
    eventually("the stream actor to stop", || {
        registry.metrics().streams == 0
    })
    .await;
}

#[actix_rt::test]
async fn an_answer_finished_without_a_response_settles_unanswered() {
    let Post { log, .. } = post();
    log.outlet().finish();
    let Some(Settled::Complete { events, answered }) = log.settle(false) else {
        panic!("a finished request settles complete");
    };
    assert!(!answered);
    assert_eq!(events.len(), 1, "only the priming event");
}
