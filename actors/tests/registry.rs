//! Mailbox-level tests of the registry: the session cap, closing, broadcast fan-out and idle
//! expiry (under paused time), with bounded waits and no sleeps.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use actix_mcp_actors::{
    ChannelOutlet, Dispatch, Frame, Metrics, Notification, OpenError, Registry, RegistryConfig,
    RegistryHandle, Reply, Request, RequestScope, SessionConfig, SessionHandle, SessionId,
    SessionParts,
};
use futures::future::BoxFuture;
use serde_json::{Value, json};

/// Answers every request once its token is cancelled (a request that never finishes by itself).
struct Forever;

impl Dispatch for Forever {
    fn request(&self, _: Request, scope: RequestScope) -> BoxFuture<'static, Reply> {
        Box::pin(async move {
            scope.token().cancelled().await;
            Ok(serde_json::value::to_raw_value(&json!({})).unwrap())
        })
    }

    fn notification(&self, _: Notification, _: Option<&SessionHandle>) {}
}

fn parts(id: &str, standalone: Option<actix_mcp_actors::Outlet>) -> SessionParts {
    SessionParts {
        id: SessionId::parse(id).unwrap(),
        dispatch: Arc::new(Forever),
        config: SessionConfig::default(),
        standalone,
        store: None,
        metrics: Arc::default(),
        on_stopped: None,
        parent_token: None,
    }
}

fn registry(max_sessions: usize, idle_timeout: Option<Duration>) -> RegistryHandle {
    Registry::start(
        RegistryConfig {
            max_sessions,
            idle_timeout,
        },
        Arc::new(Metrics::default()),
    )
}

async fn until(mut done: impl FnMut() -> bool) {
    tokio::time::timeout(Duration::from_secs(5), async {
        while !done() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("condition reached in time");
}

#[actix_rt::test]
async fn the_session_cap_is_enforced_and_closing_frees_a_place() {
    let registry = registry(2, None);
    let a = registry.open(parts("a", None)).unwrap();
    registry.open(parts("b", None)).unwrap();
    assert!(matches!(
        registry.open(parts("c", None)),
        Err(OpenError::Full(2))
    ));
    assert!(registry.get("a").is_some());
    assert!(registry.close(a.id().as_str()));
    assert!(!registry.close("a"));
    assert!(registry.get("a").is_none());
    registry.open(parts("c", None)).unwrap();
    assert_eq!(registry.len(), 2);
    registry.shutdown();
    until(|| registry.metrics().sessions == 0).await;
    assert!(registry.is_empty());
}

#[actix_rt::test]
async fn broadcasts_reach_every_session() {
    let registry = registry(10, None);
    let mut receivers = Vec::new();
    for id in ["x", "y", "z"] {
        let (outlet, rx) = ChannelOutlet::channel();
        registry.open(parts(id, Some(outlet))).unwrap();
        receivers.push(rx);
    }
    registry.broadcast(Frame::notification::<Value>(
        "notifications/tools/list_changed",
        None,
    ));
    for rx in &mut receivers {
        let frame = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            &*frame.json,
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
        );
    }
}

#[actix_rt::test]
async fn idle_sessions_expire_but_busy_ones_stay() {
    tokio::time::pause();
    let registry = registry(10, Some(Duration::from_secs(60)));
    let idle = registry.open(parts("idle", None)).unwrap();
    let busy = registry.open(parts("busy", None)).unwrap();
    let (outlet, _rx) = ChannelOutlet::channel();
    busy.request(
        Request {
            id: 1.into(),
            method: "wait".into(),
            params: None,
        },
        outlet,
    );
    until(|| registry.metrics().in_flight == 1).await;
    tokio::time::advance(Duration::from_secs(61)).await;
    registry.sweep();
    until(|| !idle.is_alive()).await;
    assert!(registry.get("idle").is_none());
    assert!(
        registry.get("busy").is_some(),
        "a session with a request in flight is not idle"
    );
    assert_eq!(registry.len(), 1);
}
