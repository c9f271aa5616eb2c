//! Mailbox-level tests of the registry: the session cap, eviction at the cap, the cap per
//! owner, closing, broadcast fan-out, idle and handshake expiry (under paused time), and
//! supervision (a session killed by a panic is cleaned up after), with bounded waits and no
//! sleeps.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp_actors::{
    EventStore, InMemoryEventStore, OpenError, RegistryHandle, SessionHandle, SessionId,
    dev::{
        ChannelOutlet, Dispatch, Frame, Metrics, Notification, Registry, RegistryConfig, Reply,
        Request, RequestScope, SessionParts,
    },
};
use futures::future::BoxFuture;
use serde_json::{Value, json};

use support::{Fake, eventually, open, registry, request, within};

/// Answers every request once its token is cancelled (a request that never finishes by itself).
struct Forever;

impl Dispatch for Forever {
    fn request(&self, _: Request, scope: RequestScope) -> BoxFuture<'static, Reply> {
        Box::pin(async move {
            scope.token().cancelled().await;
            support::raw(json!({}))
        })
    }

    fn notification(&self, _: Notification, _: Option<&SessionHandle>) {}
}

#[actix_rt::test]
async fn the_session_cap_is_enforced_and_closing_frees_a_place() {
    let registry = registry(2, None, None);
    let a = open(&registry, "a", Arc::new(Forever), None);
    open(&registry, "b", Arc::new(Forever), None);
    let third = registry.open(actix_mcp_actors::dev::SessionParts {
        id: SessionId::parse("c").unwrap(),
        dispatch: Arc::new(Forever),
        config: Default::default(),
        standalone: None,
        on_stopped: None,
        owner: None,
    });
    assert!(matches!(third, Err(OpenError::Full(2))));
    assert!(registry.get("a").is_some());
    assert!(registry.close(a.id().as_str()));
    // Closed at once for every caller; the place is free once the registry has cleaned up.
    assert!(!registry.close("a"));
    assert!(registry.get("a").is_none());
    eventually("the closed session to leave", || registry.len() == 1).await;
    open(&registry, "c", Arc::new(Forever), None);
    assert_eq!(registry.len(), 2);
    registry.shutdown();
    eventually("every session to stop", || {
        registry.metrics().sessions == 0 && registry.is_empty()
    })
    .await;
}

#[actix_rt::test]
async fn broadcasts_reach_every_session() {
    let registry = registry(10, None, None);
    let mut receivers = Vec::new();
    for id in ["x", "y", "z"] {
        let (outlet, rx) = ChannelOutlet::channel();
        open(&registry, id, Arc::new(Forever), Some(outlet));
        receivers.push(rx);
    }
    registry.broadcast(Frame::notification::<Value>(
        "notifications/tools/list_changed",
        None,
    ));
    for rx in &mut receivers {
        let frame = within(rx.recv()).await.unwrap();
        assert_eq!(
            &*frame.json,
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
        );
    }
}

#[actix_rt::test]
async fn a_burst_of_broadcasts_is_never_lost_or_queued_without_bound() {
    // More broadcasts than the registry's mailbox holds, sent without yielding: those that do
    // not fit are delivered by the caller, so every session still gets every one, in order.
    let registry = registry(10, None, None);
    let (outlet, mut rx) = ChannelOutlet::channel();
    open(&registry, "burst", Arc::new(Forever), Some(outlet));
    for n in 0..1000 {
        registry.broadcast(Frame::notification("n", Some(&json!(n))));
    }
    let mut seen = Vec::new();
    while seen.len() < 1000 {
        let frame = within(rx.recv()).await.unwrap();
        let value: Value = serde_json::from_str(&frame.json).unwrap();
        seen.push(value["params"].as_i64().unwrap());
    }
    let mut sorted = seen.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..1000).collect::<Vec<_>>(), "each once");
}

#[actix_rt::test]
async fn idle_sessions_expire_but_busy_ones_stay() {
    tokio::time::pause();
    let registry = registry(10, Some(Duration::from_secs(60)), None);
    let idle = open(&registry, "idle", Arc::new(Forever), None);
    let busy = open(&registry, "busy", Arc::new(Forever), None);
    let (outlet, _rx) = ChannelOutlet::channel();
    busy.request(request(1, "wait", json!({})), outlet);
    assert_eq!(registry.metrics().in_flight, 1);
    tokio::time::advance(Duration::from_secs(61)).await;
    registry.sweep();
    eventually("the idle session to stop", || !idle.is_alive()).await;
    assert!(registry.get("idle").is_none());
    assert!(
        registry.get("busy").is_some(),
        "a session with a request in flight is not idle"
    );
    eventually("the idle session to leave", || registry.len() == 1).await;
}

#[actix_rt::test]
async fn a_session_killed_by_a_panic_is_cleaned_up_by_its_registry() {
    let store: Arc<dyn EventStore> = Arc::new(InMemoryEventStore::default());
    let registry = registry(10, None, Some(store));
    let fake = Fake::default();
    let started = fake.started.clone();
    let (outlet, mut rx) = ChannelOutlet::channel();
    let session = open(&registry, "doomed", Arc::new(fake), Some(outlet.clone()));
    session.request(request(1, "slow", json!({})), outlet);
    support::within(started.notified()).await;
    assert_eq!(registry.metrics().in_flight, 1);
    // The protocol layer panics inside the session actor: the actor dies without `stopped`.
    session.notification(Notification {
        method: "panic".into(),
        params: None,
    });
    eventually("the registry to clean up", || {
        let now = registry.metrics();
        registry.is_empty() && now.sessions == 0 && now.in_flight == 0
    })
    .await;
    assert!(!session.is_alive());
    assert!(registry.get("doomed").is_none());
    assert_eq!(session.in_flight(), 0);
    // Its request was cancelled: no answer ever comes.
    assert!(rx.try_recv().is_err());
}

fn registry_with(config: RegistryConfig) -> RegistryHandle {
    Registry::start(config, Arc::new(Metrics::default()), None)
}

fn open_owned(
    registry: &RegistryHandle,
    id: &str,
    owner: Option<&str>,
) -> Result<SessionHandle, OpenError> {
    registry.open(SessionParts {
        id: SessionId::parse(id).unwrap(),
        dispatch: Arc::new(Forever),
        config: Default::default(),
        standalone: None,
        on_stopped: None,
        owner: owner.map(Arc::from),
    })
}

#[actix_rt::test]
async fn at_the_cap_the_least_recently_active_idle_session_is_evicted() {
    tokio::time::pause();
    let registry = registry_with(RegistryConfig {
        max_sessions: 2,
        evict_idle_after: Some(Duration::from_secs(60)),
        ..RegistryConfig::default()
    });
    let old = open_owned(&registry, "old", None).unwrap();
    let busy = open_owned(&registry, "busy", None).unwrap();
    let (outlet, _rx) = ChannelOutlet::channel();
    busy.request(request(1, "wait", json!({})), outlet);
    // Nothing has been idle for a minute yet: the newcomer is refused.
    assert!(matches!(
        open_owned(&registry, "early", None),
        Err(OpenError::Full(2))
    ));
    tokio::time::advance(Duration::from_secs(61)).await;
    // `old` is idle; `busy` has a request in flight, so it is never idle.
    let new = open_owned(&registry, "new", None).unwrap();
    assert_eq!(registry.len(), 2);
    assert!(registry.get("old").is_none());
    eventually("the evicted session to stop", || !old.is_alive()).await;
    assert!(registry.get("busy").is_some());
    // Both remaining sessions are busy or fresh: the next newcomer is refused again.
    assert!(matches!(
        open_owned(&registry, "later", None),
        Err(OpenError::Full(2))
    ));
    assert!(new.is_alive());
}

#[actix_rt::test]
async fn one_owner_holds_at_most_its_share() {
    let registry = registry_with(RegistryConfig {
        max_sessions_per_principal: Some(2),
        ..RegistryConfig::default()
    });
    let first = open_owned(&registry, "a1", Some("alice")).unwrap();
    assert_eq!(first.owner(), Some("alice"));
    open_owned(&registry, "a2", Some("alice")).unwrap();
    assert!(matches!(
        open_owned(&registry, "a3", Some("alice")),
        Err(OpenError::OwnerFull(2))
    ));
    open_owned(&registry, "b1", Some("bob")).unwrap();
    open_owned(&registry, "anonymous", None).unwrap();
    assert_eq!(registry.owned_by("alice"), 2);
    // Closing frees the owner's place at once.
    assert!(registry.close("a1"));
    assert_eq!(registry.owned_by("alice"), 1);
    open_owned(&registry, "a3", Some("alice")).unwrap();
    eventually("the closed session to stop", || !first.is_alive()).await;
    assert_eq!(registry.owned_by("alice"), 2);
}

#[actix_rt::test]
async fn sessions_that_never_finish_the_handshake_expire() {
    tokio::time::pause();
    let registry = registry_with(RegistryConfig {
        handshake_timeout: Some(Duration::from_secs(10)),
        idle_timeout: None,
        ..RegistryConfig::default()
    });
    let established = open_owned(&registry, "established", None).unwrap();
    established.establish();
    let pending = open_owned(&registry, "pending", None).unwrap();
    // A busy session is not closed by the handshake's deadline: only one left idle that long.
    let busy = open_owned(&registry, "busy", None).unwrap();
    let (outlet, _rx) = ChannelOutlet::channel();
    busy.request(request(1, "wait", json!({})), outlet);
    tokio::time::advance(Duration::from_secs(11)).await;
    registry.sweep();
    eventually("the idle unfinished session to stop", || {
        !pending.is_alive()
    })
    .await;
    assert!(registry.get("pending").is_none());
    assert!(busy.is_alive(), "a busy unfinished session was closed");
    assert!(registry.get("established").is_some());
    assert_eq!(registry.len(), 2);
}

/// An event store whose sessions' events panic when an event says "boom" (user code the
/// registry runs when it broadcasts).
#[derive(Debug, Default)]
struct Explosive(InMemoryEventStore);

struct ExplosiveEvents(Arc<dyn actix_mcp_actors::SessionEvents>);

impl actix_mcp_actors::SessionEvents for ExplosiveEvents {
    fn append(&self, id: actix_mcp_actors::EventId, data: &Arc<str>) {
        assert!(!data.contains("boom"), "the event store exploded");
        self.0.append(id, data);
    }

    fn replay_here(&self, after: actix_mcp_actors::EventId) -> actix_mcp_actors::Replay {
        self.0.replay_here(after)
    }

    fn finish(&self, stream: u64) {
        self.0.finish(stream);
    }

    fn close(&self) {
        self.0.close();
    }
}

impl EventStore for Explosive {
    fn open(&self, session: &SessionId) -> Arc<dyn actix_mcp_actors::SessionEvents> {
        Arc::new(ExplosiveEvents(self.0.open(session)))
    }
}

/// A panic in user code the registry runs (an event store's, on a broadcast) restarts the
/// registry, as its supervisor should: it goes on broadcasting and sweeping, its table kept.
#[actix_rt::test]
async fn a_panic_in_an_event_store_restarts_the_registry() {
    let store: Arc<dyn EventStore> = Arc::new(Explosive::default());
    let registry = registry(4, Some(Duration::from_secs(60)), Some(store));
    let session = open(&registry, "a", Arc::new(Fake::default()), None);
    let mut stream = session
        .open_standalone(Duration::from_secs(1))
        .await
        .unwrap();
    assert!(stream.recv().await.is_some(), "the priming event");
    registry.broadcast_here(Frame::notification("boom", None::<&Value>));
    // The registry is back: its mailbox answers, and a broadcast goes through it.
    let swept = support::within(registry.addr().send(actix_mcp_actors::dev::Sweep)).await;
    assert!(swept.is_ok(), "the registry is gone: {swept:?}");
    assert!(registry.addr().connected());
    registry.broadcast_here(Frame::notification("after", None::<&Value>));
    let after = support::within(stream.recv()).await.unwrap();
    assert!(after.data.contains("after"), "{after:?}");
    assert_eq!(registry.len(), 1, "the table is kept");
}
