//! What a request's work holds ([`Holds`]: a transport's admission slots, its byte budget) is
//! kept until the work ends, however the request ends: answered, cancelled or refused; and
//! work that outlives its request (a blocking closure, a share taken for a task) keeps it
//! until it lets go too.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use actix_mcp_actors::dev::{Carry, ChannelOutlet, Holds};
use serde_json::json;

use support::{cancel, eventually, harness, next, request};

/// A guard that records its drop.
#[derive(Default, Clone)]
struct Released(Arc<AtomicBool>);

impl Released {
    fn holds(&self) -> Holds {
        Holds::new(Guard(self.0.clone()))
    }

    fn yet(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

struct Guard(Arc<AtomicBool>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[actix_rt::test]
async fn holds_are_kept_until_the_request_is_answered() {
    let h = harness();
    let released = Released::default();
    let (outlet, mut rx) = ChannelOutlet::channel();
    h.session.request_with(
        request(1, "wait", json!({})),
        outlet,
        Carry::default().holding(released.holds()),
    );
    tokio::task::yield_now().await;
    assert!(!released.yet(), "released while the request waits");
    h.release.notify_one();
    assert_eq!(next(&mut rx).await["result"], json!("released"));
    eventually("the holds are released", || released.yet()).await;
}

#[actix_rt::test]
async fn holds_are_released_when_the_request_is_cancelled_or_refused() {
    let h = harness();
    let released = Released::default();
    let (outlet, _rx) = ChannelOutlet::channel();
    h.session.request_with(
        request(1, "slow", json!({})),
        outlet,
        Carry::default().holding(released.holds()),
    );
    h.started.notified().await;
    assert!(!released.yet());
    h.session.notification(cancel(json!(1)));
    eventually("the holds are released", || released.yet()).await;

    // A second request under an id in flight is refused: it holds nothing afterwards.
    let running = Released::default();
    let (outlet, _rx) = ChannelOutlet::channel();
    h.session.request_with(
        request(2, "slow", json!({})),
        outlet,
        Carry::default().holding(running.holds()),
    );
    let refused = Released::default();
    let (outlet, mut rx) = ChannelOutlet::channel();
    h.session.request_with(
        request(2, "slow", json!({})),
        outlet,
        Carry::default().holding(refused.holds()),
    );
    assert!(next(&mut rx).await.get("error").is_some());
    assert!(refused.yet(), "a refused request keeps nothing");
    assert!(!running.yet());
}

#[actix_rt::test]
async fn a_blocking_closure_keeps_the_holds_after_its_request_ended() {
    let h = harness();
    let released = Released::default();
    let (outlet, mut rx) = ChannelOutlet::channel();
    h.session.request_with(
        request(1, "blocking", json!({})),
        outlet,
        Carry::default().holding(released.holds()),
    );
    eventually("the closure runs", || h.metrics().tool_calls == 1).await;
    h.session.notification(cancel(json!(1)));
    eventually("the request ended", || h.session.in_flight() == 0).await;
    assert!(
        rx.try_recv().is_err(),
        "a cancelled request is not answered"
    );
    assert!(!released.yet(), "released while the closure still runs");
    h.release.notify_one();
    eventually("the holds are released", || released.yet()).await;
}
