//! Work that never waits is done in place; work that waits becomes an actor.
//!
//! A request answered in the first poll of its handler gets no in-flight actor, a supervised
//! future that finishes in its first poll gets no tool-call actor, and a POST answer finished
//! within its window gets no stream actor. Everything that does wait is an actor, with the
//! gauges to show it, and keeps every behaviour: cancellation, ordering, resumption.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use actix_mcp_actors::{
    ChannelOutlet, Dispatch, EventId, EventStore, Frame, InMemoryEventStore, Metrics, Notification,
    Outlet, PostAnswer, Reply, Request, RequestId, RequestScope, Session, SessionConfig,
    SessionHandle, SessionId, SessionParts, Settled, SseEvent,
};

/// Methods: `echo` answers at once; `wait` and `tool_wait` wait for `release` (the latter
/// inside a supervised future); `tool_now` supervises a future that is ready at once.
struct Fake {
    release: Arc<Notify>,
}

fn raw(value: Value) -> Reply {
    serde_json::value::to_raw_value(&value).map_err(actix_mcp_actors::ErrorObject::internal)
}

impl Dispatch for Fake {
    fn request(&self, request: Request, scope: RequestScope) -> BoxFuture<'static, Reply> {
        let release = self.release.clone();
        Box::pin(async move {
            match request.method.as_str() {
                "wait" => {
                    release.notified().await;
                    raw(json!("released"))
                }
                "tool_wait" => {
                    let value = scope
                        .supervise(
                            async move {
                                release.notified().await;
                                7
                            },
                            None,
                        )
                        .await;
                    raw(json!(format!("{value:?}")))
                }
                "tool_now" => {
                    let value = scope.supervise(async { 5 }, None).await;
                    raw(json!(format!("{value:?}")))
                }
                _ => raw(request.params.unwrap_or(Value::Null)),
            }
        })
    }

    fn notification(&self, _: Notification, _: Option<&SessionHandle>) {}
}

fn session(
    metrics: Arc<Metrics>,
    store: Option<Arc<dyn EventStore>>,
) -> (SessionHandle, Arc<Notify>) {
    let release = Arc::new(Notify::new());
    let session = Session::start(SessionParts {
        id: SessionId::parse("in-place").expect("a valid id"),
        dispatch: Arc::new(Fake {
            release: release.clone(),
        }),
        config: SessionConfig::default(),
        standalone: None,
        store,
        metrics,
        on_stopped: None,
        parent_token: None,
    });
    (session, release)
}

fn request(id: i64, method: &str) -> Request {
    Request {
        id: RequestId::Number(id),
        method: method.into(),
        params: Some(json!({"n": id})),
    }
}

async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    for _ in 0..500 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for: {what}");
}

async fn recv<T>(rx: &mut mpsc::Receiver<T>) -> Option<T> {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("an event or the end within 5 s")
}

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
    let metrics = Arc::new(Metrics::default());
    let (session, _) = session(metrics.clone(), None);
    let (outlet, mut rx) = ChannelOutlet::channel();
    session.request(request(1, "echo"), outlet);
    // No await in between: the answer is already there, and no actor was involved.
    let frame = rx.try_recv().expect("answered in place");
    assert_eq!(json_of(&frame)["result"], json!({"n": 1}));
    assert_eq!(metrics.snapshot().in_flight, 0);
}

#[actix_rt::test]
async fn a_request_that_waits_is_an_in_flight_actor_until_it_answers() {
    let metrics = Arc::new(Metrics::default());
    let (session, release) = session(metrics.clone(), None);
    let (outlet, mut rx) = ChannelOutlet::channel();
    session.request(request(1, "wait"), outlet);
    until("the in-flight actor", || metrics.snapshot().in_flight == 1).await;
    assert_eq!(session.stats().await.expect("live").in_flight, 1);
    release.notify_one();
    let frame = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("in time")
        .expect("open");
    assert_eq!(json_of(&frame)["result"], json!("released"));
    until("the actor to stop", || metrics.snapshot().in_flight == 0).await;
    assert_eq!(session.stats().await.expect("live").in_flight, 0);
}

#[actix_rt::test]
async fn a_supervised_future_moves_into_a_tool_call_actor_only_when_it_waits() {
    let metrics = Arc::new(Metrics::default());
    let (session, release) = session(metrics.clone(), None);
    let (outlet, mut rx) = ChannelOutlet::channel();

    session.request(request(1, "tool_now"), outlet.clone());
    let frame = rx.try_recv().expect("answered in place");
    assert_eq!(json_of(&frame)["result"], json!("Ok(5)"));
    assert_eq!(metrics.snapshot().tool_calls, 0);

    session.request(request(2, "tool_wait"), outlet);
    until("the tool-call actor", || metrics.snapshot().tool_calls == 1).await;
    release.notify_one();
    let frame = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("in time")
        .expect("open");
    assert_eq!(json_of(&frame)["result"], json!("Ok(7)"));
    until("both actors to stop", || {
        let now = metrics.snapshot();
        now.tool_calls == 0 && now.in_flight == 0
    })
    .await;
}

/// A session with an event store, and a fresh POST answer on it.
struct Post {
    metrics: Arc<Metrics>,
    store: Arc<InMemoryEventStore>,
    session: SessionHandle,
    release: Arc<Notify>,
    answer: Arc<PostAnswer>,
}

fn post() -> Post {
    let metrics = Arc::new(Metrics::default());
    let store = Arc::new(InMemoryEventStore::default());
    let (session, release) = session(metrics.clone(), Some(store.clone()));
    let answer = PostAnswer::new(
        session.clone(),
        session.next_stream(),
        Some(store.clone() as Arc<dyn EventStore>),
        Duration::from_millis(500),
        metrics.clone(),
    );
    Post {
        metrics,
        store,
        session,
        release,
        answer,
    }
}

#[actix_rt::test]
async fn a_post_answer_finished_in_its_window_is_complete_and_replayable() {
    let Post {
        metrics,
        store,
        session,
        answer,
        ..
    } = post();
    let outlet = answer.outlet();
    outlet
        .deliver(Frame::notification(
            "notifications/progress",
            Some(&json!({"progress": 1})),
        ))
        .expect("taken");
    session.request(request(9, "echo"), outlet);
    let Settled::Complete { events, answered } = answer.settle(Duration::from_secs(5)).await else {
        panic!("a finished request settles complete");
    };
    assert!(answered);
    let ids: Vec<_> = events.iter().map(|event| event.id).collect();
    assert_eq!(ids, vec![id(1, 0), id(1, 1), id(1, 2)]);
    assert_eq!(events[0].retry, Some(Duration::from_millis(500)));
    assert_eq!(data(&events[1])["method"], json!("notifications/progress"));
    assert_eq!(data(&events[2])["result"], json!({"n": 9}));
    // No stream actor was started, yet the events are kept for Last-Event-ID.
    assert_eq!(metrics.snapshot().streams, 0);
    let replay = store
        .replay(session.id(), EventId { stream: 1, seq: 1 })
        .expect("the stream is known");
    assert_eq!(replay.len(), 1);
    assert_eq!(replay[0].0, EventId { stream: 1, seq: 2 });
}

#[actix_rt::test]
async fn a_post_answer_still_running_becomes_a_stream_that_adopts_its_events() {
    let Post {
        metrics,
        session,
        release,
        answer,
        ..
    } = post();
    let outlet: Outlet = answer.outlet();
    outlet
        .deliver(Frame::notification(
            "notifications/message",
            Some(&json!({"level": "info"})),
        ))
        .expect("taken");
    session.request(request(3, "wait"), outlet.clone());
    let Settled::Stream(mut rx) = answer.settle(Duration::from_millis(5)).await else {
        panic!("a running request settles as a stream");
    };
    assert_eq!(metrics.snapshot().streams, 1);
    let priming = recv(&mut rx).await.expect("the priming event");
    assert_eq!((priming.id, data(&priming)), (id(1, 0), Value::Null));
    let log = recv(&mut rx).await.expect("the adopted notification");
    assert_eq!(log.id, id(1, 1));
    // What follows goes through the stream actor, numbered on from the adopted events.
    outlet
        .deliver(Frame::notification(
            "notifications/progress",
            Some(&json!({"progress": 2})),
        ))
        .expect("taken");
    release.notify_one();
    let progress = recv(&mut rx).await.expect("the progress event");
    assert_eq!(progress.id, id(1, 2));
    let response = recv(&mut rx).await.expect("the response");
    assert_eq!(
        (response.id, data(&response)["result"].clone()),
        (id(1, 3), json!("released"))
    );
    assert!(
        recv(&mut rx).await.is_none(),
        "the stream ends after its response"
    );
    until("the stream actor to stop", || {
        metrics.snapshot().streams == 0
    })
    .await;
}

#[actix_rt::test]
async fn a_request_to_the_client_turns_the_answer_into_a_stream_at_once() {
    let Post { answer, .. } = post();
    answer
        .outlet()
        .deliver(Frame::request(
            &RequestId::Number(1),
            "sampling/createMessage",
            Some(&json!({})),
        ))
        .expect("taken");
    // The window is long; the client must not wait for it.
    let settled = tokio::time::timeout(
        Duration::from_secs(2),
        answer.settle(Duration::from_secs(60)),
    )
    .await
    .expect("settled before the window");
    let Settled::Stream(mut rx) = settled else {
        panic!("a request to the client needs a stream");
    };
    recv(&mut rx).await.expect("priming");
    let request = recv(&mut rx).await.expect("the request");
    assert_eq!(data(&request)["method"], json!("sampling/createMessage"));
}

#[actix_rt::test]
async fn an_abandoned_answer_keeps_what_follows_resumable() {
    let Post {
        metrics,
        store,
        session,
        release,
        answer,
        ..
    } = post();
    session.request(request(4, "wait"), answer.outlet());
    // The client goes away while the transport waits for the window.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(20),
        answer.settle(Duration::from_secs(60)),
    )
    .await;
    assert!(abandoned.is_err(), "still settling when dropped");
    release.notify_one();
    until("the response in the store", || {
        store
            .replay(session.id(), EventId { stream: 1, seq: 0 })
            .is_some_and(|events| events.len() == 1)
    })
    .await;
    let replay = store
        .replay(session.id(), EventId { stream: 1, seq: 0 })
        .expect("known");
    let response: Value = serde_json::from_str(&replay[0].1).expect("JSON");
    assert_eq!(response["result"], json!("released"));
    until("the stream actor to stop", || {
        metrics.snapshot().streams == 0
    })
    .await;
}

#[actix_rt::test]
async fn a_post_answer_finished_without_a_response_settles_unanswered() {
    let Post { answer, .. } = post();
    answer.outlet().finish();
    let Settled::Complete { events, answered } = answer.settle(Duration::from_secs(5)).await else {
        panic!("a finished request settles complete");
    };
    assert!(!answered);
    assert_eq!(events.len(), 1, "only the priming event");
}
