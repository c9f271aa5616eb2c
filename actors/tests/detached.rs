//! Requests without a session run under their registry: recorded in its table while they run
//! (so gauges, a drain and a shutdown see them), forgotten when they end, stopped with a
//! reason by [`RegistryHandle::abort_detached`], cancelled by a shutdown, and cancelled by
//! their owner alone ([`RegistryHandle::cancel_detached`]).
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::sync::Arc;

use actix_mcp_actors::RequestId;
use actix_mcp_actors::dev::{Carry, ChannelOutlet, Dispatch};
use serde_json::json;

use support::{Fake, eventually, next, registry, request};

fn fake() -> (Arc<Fake>, Arc<dyn Dispatch>) {
    let fake = Arc::new(Fake::default());
    let dispatch: Arc<dyn Dispatch> = fake.clone();
    (fake, dispatch)
}

#[actix_rt::test]
async fn a_request_without_a_session_is_recorded_while_it_runs() {
    let registry = registry(4, None, None);
    let (fake, dispatch) = fake();
    let (outlet, mut rx) = ChannelOutlet::channel();
    // Answered at once: never recorded.
    let _done = registry.start_detached(
        request(1, "echo", json!({})),
        &dispatch,
        outlet.clone(),
        Carry::default(),
    );
    assert_eq!(next(&mut rx).await["id"], 1);
    assert_eq!(registry.detached_in_flight(), 0);
    let _running = registry.start_detached(
        request(2, "wait", json!({})),
        &dispatch,
        outlet,
        Carry::default(),
    );
    assert_eq!(registry.detached_in_flight(), 1);
    assert_eq!(registry.metrics().in_flight, 1);
    fake.release.notify_one();
    assert_eq!(next(&mut rx).await["result"], json!("released"));
    eventually("it is forgotten", || registry.detached_in_flight() == 0).await;
}

#[actix_rt::test]
async fn an_abort_tells_the_peer_and_a_shutdown_cancels() {
    let registry = registry(4, None, None);
    let (fake, dispatch) = fake();
    let (outlet, mut rx) = ChannelOutlet::channel();
    let _first = registry.start_detached(
        request(1, "slow", json!({})),
        &dispatch,
        outlet.clone(),
        Carry::default(),
    );
    fake.started.notified().await;
    assert_eq!(registry.abort_detached("draining"), 1);
    let told = next(&mut rx).await;
    assert_eq!(told["method"], "notifications/cancelled", "{told}");
    assert_eq!(told["params"]["reason"], "draining");
    eventually("the aborted request is gone", || {
        registry.detached_in_flight() == 0
    })
    .await;

    let _second = registry.start_detached(
        request(2, "slow", json!({})),
        &dispatch,
        outlet,
        Carry::default(),
    );
    fake.started.notified().await;
    registry.shutdown();
    eventually("the shutdown cancelled it", || {
        registry.detached_in_flight() == 0
    })
    .await;
    assert!(rx.try_recv().is_err(), "a cancelled request sends nothing");
}

/// A request started for an owner is cancelled by that owner's cancellation of its id, as when
/// its client goes away (nothing more is sent), and by no other owner's naming the same id;
/// once it ended, its owner's cancellation finds nothing. A request without an owner is never
/// found.
#[actix_rt::test]
async fn only_its_owner_cancels_a_request_without_a_session() {
    let registry = registry(4, None, None);
    let (fake, dispatch) = fake();
    let (alice_outlet, mut alice_rx) = ChannelOutlet::channel();
    let (bob_outlet, mut bob_rx) = ChannelOutlet::channel();
    let (anonymous_outlet, mut anonymous_rx) = ChannelOutlet::channel();
    let _alice = registry.start_detached_for(
        Some("alice".into()),
        request(1, "slow", json!({})),
        &dispatch,
        alice_outlet,
        Carry::default(),
    );
    fake.started.notified().await;
    let _bob = registry.start_detached_for(
        Some("bob".into()),
        request(1, "slow", json!({})),
        &dispatch,
        bob_outlet,
        Carry::default(),
    );
    fake.started.notified().await;
    let _anonymous = registry.start_detached(
        request(1, "slow", json!({})),
        &dispatch,
        anonymous_outlet,
        Carry::default(),
    );
    fake.started.notified().await;
    assert_eq!(registry.detached_in_flight(), 3);
    let one = RequestId::Number(1);

    assert!(
        !registry.cancel_detached("carol", &one, None),
        "no request of carol's"
    );
    assert!(!registry.cancel_detached("bob", &RequestId::Number(2), None));
    assert!(registry.cancel_detached("bob", &one, Some("bob is done".into())));
    eventually("bob's request ends", || registry.detached_in_flight() == 2).await;
    assert!(
        !registry.cancel_detached("bob", &one, None),
        "an ended request is forgotten"
    );
    assert!(
        bob_rx.try_recv().is_err(),
        "a cancelled request sends nothing"
    );
    assert!(alice_rx.try_recv().is_err(), "alice's request runs on");

    assert!(registry.cancel_detached("alice", &one, None));
    eventually("alice's request ends", || {
        registry.detached_in_flight() == 1
    })
    .await;
    assert!(
        alice_rx.try_recv().is_err(),
        "a cancelled request sends nothing"
    );
    assert!(!registry.cancel_detached("", &one, None));
    registry.shutdown();
    eventually("the shutdown ends the last one", || {
        registry.detached_in_flight() == 0
    })
    .await;
    assert!(anonymous_rx.try_recv().is_err());
    assert_eq!(registry.metrics().in_flight, 0);
}
