//! Mailbox-level tests of the session, in-flight and tool-call actors, without HTTP: a fake
//! [`Dispatch`] whose handlers are driven by the test, an in-memory outlet recording every
//! frame, and no sleeps (every wait is bounded).
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use actix_mcp_actors::{
    ChannelOutlet, Dispatch, Frame, Metrics, Notification, Outlet, Reply, Request, RequestId,
    RequestScope, Session, SessionConfig, SessionHandle, SessionId, SessionParts, SupervisedError,
};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

/// A dispatch whose `slow` method waits until cancelled, `ask` makes a peer request, `panic`
/// panics inside a supervised invocation, and anything else echoes its params.
struct Fake {
    started: Arc<Notify>,
}

impl Dispatch for Fake {
    fn request(&self, request: Request, scope: RequestScope) -> BoxFuture<'static, Reply> {
        let started = self.started.clone();
        Box::pin(async move {
            match request.method.as_str() {
                "slow" => {
                    started.notify_one();
                    scope.token().cancelled().await;
                    Ok(serde_json::value::to_raw_value(&json!("finished")).unwrap())
                }
                "ask" => {
                    let answer = scope
                        .peer_request("sampling/createMessage", Some(json!({"q": 1})), None)
                        .await;
                    let value = answer.map_err(actix_mcp_actors::ErrorObject::internal)?;
                    Ok(serde_json::value::to_raw_value(&value).unwrap())
                }
                "panic" => {
                    let outcome = scope.supervise(async { panic!("boom") }, None).await;
                    let text = match outcome {
                        Err(SupervisedError::Panicked(message)) => format!("caught {message}"),
                        other => format!("unexpected {other:?}"),
                    };
                    Ok(serde_json::value::to_raw_value(&json!(text)).unwrap())
                }
                "timeout" => {
                    let outcome = scope
                        .supervise(
                            std::future::pending::<()>(),
                            Some(Duration::from_millis(20)),
                        )
                        .await;
                    Ok(serde_json::value::to_raw_value(&json!(format!("{outcome:?}"))).unwrap())
                }
                _ => Ok(
                    serde_json::value::to_raw_value(&request.params.unwrap_or(Value::Null))
                        .unwrap(),
                ),
            }
        })
    }

    fn notification(&self, _: Notification, _: Option<&SessionHandle>) {}
}

fn start(
    metrics: Arc<Metrics>,
) -> (
    SessionHandle,
    Outlet,
    mpsc::UnboundedReceiver<Frame>,
    Arc<Notify>,
) {
    let started = Arc::new(Notify::new());
    let (outlet, rx) = ChannelOutlet::channel();
    let session = Session::start(SessionParts {
        id: SessionId::parse("test-session").unwrap(),
        dispatch: Arc::new(Fake {
            started: started.clone(),
        }),
        config: SessionConfig::default(),
        standalone: Some(outlet.clone()),
        store: None,
        metrics,
        on_stopped: None,
        parent_token: None,
    });
    (session, outlet, rx, started)
}

fn request(id: i64, method: &str, params: Value) -> Request {
    Request {
        id: RequestId::Number(id),
        method: method.into(),
        params: Some(params),
    }
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Frame>) -> Value {
    next_within(rx, Duration::from_secs(5)).await
}

async fn next_within(rx: &mut mpsc::UnboundedReceiver<Frame>, limit: Duration) -> Value {
    let frame = tokio::time::timeout(limit, rx.recv())
        .await
        .expect("a frame in time")
        .expect("open");
    serde_json::from_str(&frame.json).unwrap()
}

async fn within<F: std::future::Future>(fut: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), fut)
        .await
        .expect("done within 5 s")
}

#[actix_rt::test]
async fn a_request_is_answered_on_its_outlet() {
    let (session, outlet, mut rx, _) = start(Arc::default());
    session.request(request(1, "echo", json!({"a": 1})), outlet);
    assert_eq!(
        next(&mut rx).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"a": 1}})
    );
}

#[actix_rt::test]
async fn cancelled_request_stops_and_sends_nothing() {
    let metrics = Arc::new(Metrics::default());
    let (session, outlet, mut rx, started) = start(metrics.clone());
    session.request(request(7, "slow", json!({})), outlet.clone());
    within(started.notified()).await;
    session.notification(Notification {
        method: "notifications/cancelled".into(),
        params: Some(json!({"requestId": 7})),
    });
    session.request(request(8, "echo", json!("after")), outlet);
    // The next frame is the answer to 8: nothing was sent for the cancelled 7.
    assert_eq!(next(&mut rx).await["id"], json!(8));
    let stats = within(session.stats()).await.unwrap();
    assert_eq!(stats.in_flight, 0);
    assert_eq!(metrics.snapshot().in_flight, 0);
}

#[actix_rt::test]
async fn peer_requests_are_matched_by_id() {
    let metrics = Arc::new(Metrics::default());
    let (session, outlet, mut rx, _) = start(metrics.clone());
    session.request(request(1, "ask", json!({})), outlet);
    let asked = next(&mut rx).await;
    assert_eq!(asked["method"], json!("sampling/createMessage"));
    assert_eq!(asked["params"], json!({"q": 1}));
    let id: RequestId = serde_json::from_value(asked["id"].clone()).unwrap();
    assert_eq!(metrics.snapshot().peer_requests, 1);
    session.response(actix_mcp_actors::Response {
        id,
        outcome: Ok(json!({"answer": 42})),
    });
    assert_eq!(
        next(&mut rx).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"answer": 42}})
    );
    assert_eq!(metrics.snapshot().peer_requests, 0);
}

#[actix_rt::test]
async fn cancelling_a_request_cancels_its_peer_request_at_the_client() {
    let (session, outlet, mut rx, _) = start(Arc::default());
    session.request(request(3, "ask", json!({})), outlet);
    let asked = next(&mut rx).await;
    session.notification(Notification {
        method: "notifications/cancelled".into(),
        params: Some(json!({"requestId": 3})),
    });
    let cancelled = next(&mut rx).await;
    assert_eq!(cancelled["method"], json!("notifications/cancelled"));
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);
}

#[actix_rt::test]
async fn a_panic_in_a_supervised_invocation_is_contained() {
    let (session, outlet, mut rx, _) = start(Arc::default());
    session.request(request(1, "panic", json!({})), outlet.clone());
    assert_eq!(next(&mut rx).await["result"], json!("caught boom"));
    session.request(request(2, "echo", json!("still serving")), outlet);
    assert_eq!(next(&mut rx).await["result"], json!("still serving"));
}

#[actix_rt::test]
async fn a_supervised_invocation_times_out() {
    let (session, outlet, mut rx, _) = start(Arc::default());
    session.request(request(1, "timeout", json!({})), outlet);
    assert_eq!(next(&mut rx).await["result"], json!("Err(TimedOut(20ms))"));
}

#[actix_rt::test]
async fn duplicate_ids_in_flight_are_refused() {
    let (session, outlet, mut rx, started) = start(Arc::default());
    session.request(request(5, "slow", json!({})), outlet.clone());
    within(started.notified()).await;
    session.request(request(5, "echo", json!({})), outlet);
    let refused = next(&mut rx).await;
    assert_eq!(refused["error"]["code"], json!(-32600));
}

#[actix_rt::test]
async fn closing_the_session_stops_everything() {
    let metrics = Arc::new(Metrics::default());
    let (session, outlet, mut rx, started) = start(metrics.clone());
    session.request(request(1, "slow", json!({})), outlet);
    within(started.notified()).await;
    assert_eq!(metrics.snapshot().sessions, 1);
    session.close();
    within(async {
        while metrics.snapshot() != Default::default() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    // The cancelled request never answered.
    assert!(rx.try_recv().is_err());
    assert!(!session.is_alive());
}

#[actix_rt::test]
async fn session_notifications_reach_the_standalone_outlet() {
    let (session, _, mut rx, _) = start(Arc::default());
    session.notify(Frame::notification::<Value>(
        "notifications/tools/list_changed",
        None,
    ));
    let frame = next(&mut rx).await;
    assert_eq!(
        frame,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
}

#[actix_rt::test]
async fn a_cancel_right_behind_its_request_never_hangs_or_answers() {
    let (session, outlet, mut rx, _) = start(Arc::default());
    // No wait for the handler to start: the cancel may land before it runs at all.
    session.request(request(1, "slow", json!({})), outlet.clone());
    session.notification(Notification {
        method: "notifications/cancelled".into(),
        params: Some(json!({"requestId": 1})),
    });
    session.request(request(2, "echo", json!("next")), outlet);
    assert_eq!(
        next(&mut rx).await,
        json!({"jsonrpc": "2.0", "id": 2, "result": "next"})
    );
    let stats = within(session.stats()).await.unwrap();
    assert_eq!(stats.in_flight, 0);
}

#[actix_rt::test]
async fn a_cancel_after_the_response_is_ignored() {
    let (session, outlet, mut rx, _) = start(Arc::default());
    session.request(request(1, "echo", json!("first")), outlet.clone());
    assert_eq!(next(&mut rx).await["result"], json!("first"));
    session.notification(Notification {
        method: "notifications/cancelled".into(),
        params: Some(json!({"requestId": 1})),
    });
    session.notification(Notification {
        method: "notifications/cancelled".into(),
        params: Some(json!({"requestId": "never-sent"})),
    });
    session.notification(Notification {
        method: "notifications/cancelled".into(),
        params: Some(json!({"bogus": true})),
    });
    session.request(
        request(1, "echo", json!("id reused after it finished")),
        outlet,
    );
    assert_eq!(
        next(&mut rx).await["result"],
        json!("id reused after it finished")
    );
}

#[actix_rt::test]
async fn supervised_timeouts_fire_under_paused_time() {
    tokio::time::pause();
    let (session, outlet, mut rx, _) = start(Arc::default());
    let started = tokio::time::Instant::now();
    session.request(request(1, "timeout", json!({})), outlet);
    assert_eq!(next(&mut rx).await["result"], json!("Err(TimedOut(20ms))"));
    // Virtual time moved exactly as far as the limit (auto-advanced while idle).
    assert!(started.elapsed() >= Duration::from_millis(20));
}

/// Answers `wait_peer` with a peer request limited to 60 s.
struct PeerTimeout;

impl Dispatch for PeerTimeout {
    fn request(&self, _: Request, scope: RequestScope) -> BoxFuture<'static, Reply> {
        Box::pin(async move {
            let outcome = scope
                .peer_request("roots/list", None, Some(Duration::from_secs(60)))
                .await;
            Ok(serde_json::value::to_raw_value(&json!(format!("{outcome:?}"))).unwrap())
        })
    }

    fn notification(&self, _: Notification, _: Option<&SessionHandle>) {}
}

#[actix_rt::test]
async fn an_unanswered_peer_request_times_out_and_is_cancelled_at_the_client() {
    tokio::time::pause();
    let (outlet, mut rx) = ChannelOutlet::channel();
    let session = Session::start(SessionParts {
        id: SessionId::parse("peer-timeout").unwrap(),
        dispatch: Arc::new(PeerTimeout),
        config: SessionConfig::default(),
        standalone: Some(outlet.clone()),
        store: None,
        metrics: Arc::default(),
        on_stopped: None,
        parent_token: None,
    });
    session.request(request(1, "wait_peer", json!({})), outlet);
    let asked = next(&mut rx).await;
    assert_eq!(asked["method"], json!("roots/list"));
    let started = tokio::time::Instant::now();
    // Nobody answers: after 60 virtual seconds the tool sees a timeout, and the client is told.
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(next_within(&mut rx, Duration::from_secs(120)).await);
    }
    assert!(started.elapsed() >= Duration::from_secs(60));
    let cancelled = seen
        .iter()
        .find(|m| m["method"] == "notifications/cancelled")
        .expect("a cancellation notice");
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);
    let answer = seen
        .iter()
        .find(|m| m["id"] == 1)
        .expect("the request's answer");
    assert_eq!(answer["result"], json!("Err(Timeout)"));
}
