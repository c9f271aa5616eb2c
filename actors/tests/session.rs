//! Mailbox-level tests of the session, in-flight and tool-call actors, without HTTP: a fake
//! [`Dispatch`](actix_mcp_actors::dev::Dispatch) whose handlers are driven by the test, an in-memory
//! outlet recording every frame, and no sleeps (every wait is bounded).
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::time::Duration;

use actix_mcp_actors::{RequestId, dev::Frame};
use serde_json::{Value, json};

use support::{Harness, cancel, eventually, harness, next, next_within, request, within};

#[actix_rt::test]
async fn a_request_is_answered_on_its_outlet() {
    let Harness {
        session,
        outlet,
        mut rx,
        ..
    } = harness();
    session.request(request(1, "echo", json!({"a": 1})), outlet);
    assert_eq!(
        next(&mut rx).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"a": 1}})
    );
}

#[actix_rt::test]
async fn cancelled_request_stops_and_sends_nothing() {
    let Harness {
        registry,
        session,
        outlet,
        mut rx,
        started,
        ..
    } = harness();
    session.request(request(7, "slow", json!({})), outlet.clone());
    within(started.notified()).await;
    session.notification(cancel(json!(7)));
    session.request(request(8, "echo", json!("after")), outlet);
    // The next frame is the answer to 8: nothing was sent for the cancelled 7.
    assert_eq!(next(&mut rx).await["id"], json!(8));
    let stats = within(session.stats()).await.unwrap();
    assert_eq!(stats.in_flight, 0);
    assert_eq!(registry.metrics().in_flight, 0);
}

#[actix_rt::test]
async fn peer_requests_are_matched_by_id() {
    let Harness {
        registry,
        session,
        outlet,
        mut rx,
        ..
    } = harness();
    session.request(request(1, "ask", json!({})), outlet);
    let asked = next(&mut rx).await;
    assert_eq!(asked["method"], json!("sampling/createMessage"));
    assert_eq!(asked["params"], json!({"q": 1}));
    let id: RequestId = serde_json::from_value(asked["id"].clone()).unwrap();
    assert_eq!(registry.metrics().peer_requests, 1);
    session.response(actix_mcp_actors::dev::Response {
        id,
        outcome: Ok(json!({"answer": 42})),
    });
    assert_eq!(
        next(&mut rx).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"answer": 42}})
    );
    assert_eq!(registry.metrics().peer_requests, 0);
}

#[actix_rt::test]
async fn cancelling_a_request_cancels_its_peer_request_at_the_client() {
    let Harness {
        session,
        outlet,
        mut rx,
        ..
    } = harness();
    session.request(request(3, "ask", json!({})), outlet);
    let asked = next(&mut rx).await;
    session.notification(cancel(json!(3)));
    let cancelled = next(&mut rx).await;
    assert_eq!(cancelled["method"], json!("notifications/cancelled"));
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);
}

#[actix_rt::test]
async fn a_panic_in_a_supervised_invocation_is_contained() {
    let Harness {
        session,
        outlet,
        mut rx,
        ..
    } = harness();
    session.request(request(1, "panic", json!({})), outlet.clone());
    assert_eq!(next(&mut rx).await["result"], json!("caught boom"));
    session.request(request(2, "echo", json!("still serving")), outlet);
    assert_eq!(next(&mut rx).await["result"], json!("still serving"));
}

#[actix_rt::test]
async fn a_supervised_invocation_times_out() {
    let Harness {
        session,
        outlet,
        mut rx,
        ..
    } = harness();
    session.request(request(1, "timeout", json!({})), outlet);
    assert_eq!(next(&mut rx).await["result"], json!("Err(TimedOut(20ms))"));
}

#[actix_rt::test]
async fn duplicate_ids_in_flight_are_refused() {
    let Harness {
        session,
        outlet,
        mut rx,
        started,
        ..
    } = harness();
    session.request(request(5, "slow", json!({})), outlet.clone());
    within(started.notified()).await;
    session.request(request(5, "echo", json!({})), outlet);
    let refused = next(&mut rx).await;
    assert_eq!(refused["error"]["code"], json!(-32600));
}

#[actix_rt::test]
async fn closing_the_session_stops_everything() {
    let Harness {
        registry,
        session,
        outlet,
        mut rx,
        started,
        ..
    } = harness();
    session.request(request(1, "slow", json!({})), outlet);
    within(started.notified()).await;
    assert_eq!(registry.metrics().sessions, 1);
    session.close();
    eventually("every gauge back to zero", || {
        registry.metrics() == Default::default()
    })
    .await;
    // The cancelled request never answered.
    assert!(rx.try_recv().is_err());
    assert!(!session.is_alive());
}

#[actix_rt::test]
async fn session_notifications_reach_the_standalone_outlet() {
    let Harness {
        session, mut rx, ..
    } = harness();
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
    let Harness {
        session,
        outlet,
        mut rx,
        ..
    } = harness();
    // No wait for the handler to start: the cancel may land before it runs at all.
    session.request(request(1, "slow", json!({})), outlet.clone());
    session.notification(cancel(json!(1)));
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
    let Harness {
        session,
        outlet,
        mut rx,
        ..
    } = harness();
    session.request(request(1, "echo", json!("first")), outlet.clone());
    assert_eq!(next(&mut rx).await["result"], json!("first"));
    session.notification(cancel(json!(1)));
    session.notification(cancel(json!("never-sent")));
    session.notification(actix_mcp_actors::dev::Notification {
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
    let Harness {
        session,
        outlet,
        mut rx,
        ..
    } = harness();
    let started = tokio::time::Instant::now();
    session.request(request(1, "timeout", json!({})), outlet);
    assert_eq!(next(&mut rx).await["result"], json!("Err(TimedOut(20ms))"));
    // Virtual time moved exactly as far as the limit (auto-advanced while idle).
    assert!(started.elapsed() >= Duration::from_millis(20));
}

#[actix_rt::test]
async fn an_unanswered_peer_request_times_out_and_is_cancelled_at_the_client() {
    tokio::time::pause();
    let Harness {
        session,
        outlet,
        mut rx,
        ..
    } = harness();
    session.request(request(1, "ask_slowly", json!({})), outlet);
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
