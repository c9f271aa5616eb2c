//! Helpers shared by the runtime's tests: a fake [`Dispatch`] driven by the test, sessions
//! opened under a real registry, and bounded waits (on frames, events or gauges, never on
//! fixed sleeps).
#![allow(dead_code, clippy::unwrap_used, missing_docs)]

use std::future::Future;
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

use actix_mcp_actors::{
    EventStore, RegistryHandle, RequestId, SessionHandle, SessionId,
    dev::{
        ChannelOutlet, Dispatch, Frame, Metrics, Notification, Outlet, Registry, RegistryConfig,
        Reply, Request, RequestScope, SessionConfig, SessionParts, SseEvent, StreamReceiver,
        SupervisedError,
    },
};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

/// A dispatch whose methods the tests drive:
/// - `slow` signals `started`, then waits until the request is cancelled;
/// - `wait` waits for `release`; `tool_wait` does so inside a supervised future;
/// - `tool_now` supervises a future that is ready at once;
/// - `blocking` runs a blocking closure that waits for `release`, and answers at once when
///   cancelled (the closure runs on);
/// - `ask` makes a peer request (`sampling/createMessage`); `ask_slowly` one limited to 60 s;
/// - `panic` panics inside a supervised invocation; `timeout` supervises a future that never
///   ends, limited to 20 ms;
/// - anything else echoes its params.
///
/// A notification with method `panic` panics (inside the session actor).
#[derive(Default)]
pub struct Fake {
    pub started: Arc<Notify>,
    pub release: Arc<Notify>,
}

pub fn raw(value: Value) -> Reply {
    serde_json::value::to_raw_value(&value).map_err(actix_mcp_actors::ErrorObject::internal)
}

impl Dispatch for Fake {
    fn request(&self, request: Request, scope: RequestScope) -> BoxFuture<'static, Reply> {
        let started = self.started.clone();
        let release = self.release.clone();
        Box::pin(async move {
            match request.method.as_str() {
                "slow" => {
                    started.notify_one();
                    scope.token().cancelled().await;
                    raw(json!("finished"))
                }
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
                "blocking" => {
                    let call = scope.supervise_blocking(
                        move || futures::executor::block_on(release.notified()),
                        None,
                    );
                    tokio::select! {
                        outcome = call => raw(json!(format!("{outcome:?}"))),
                        () = scope.token().cancelled() => raw(json!("cancelled")),
                    }
                }
                "tool_now" => {
                    let value = scope.supervise(async { 5 }, None).await;
                    raw(json!(format!("{value:?}")))
                }
                "ask" => {
                    let answer = scope
                        .peer_request("sampling/createMessage", Some(json!({"q": 1})), None)
                        .await;
                    let value = answer.map_err(actix_mcp_actors::ErrorObject::internal)?;
                    raw(value)
                }
                "ask_slowly" => {
                    let outcome = scope
                        .peer_request("roots/list", None, Some(Duration::from_secs(60)))
                        .await;
                    raw(json!(format!("{outcome:?}")))
                }
                "panic" => {
                    let outcome = scope.supervise(async { panic!("boom") }, None).await;
                    let text = match outcome {
                        Err(SupervisedError::Panicked(message)) => format!("caught {message}"),
                        other => format!("unexpected {other:?}"),
                    };
                    raw(json!(text))
                }
                "timeout" => {
                    let outcome = scope
                        .supervise(
                            std::future::pending::<()>(),
                            Some(Duration::from_millis(20)),
                        )
                        .await;
                    raw(json!(format!("{outcome:?}")))
                }
                _ => raw(request.params.unwrap_or(Value::Null)),
            }
        })
    }

    fn notification(&self, notification: Notification, _: Option<&SessionHandle>) {
        assert!(
            notification.method != "panic",
            "a notification handler panicked"
        );
    }
}

/// A registry with these limits, its gauges, and optionally an event store.
pub fn registry(
    max_sessions: usize,
    idle_timeout: Option<Duration>,
    store: Option<Arc<dyn EventStore>>,
) -> RegistryHandle {
    Registry::start(
        RegistryConfig {
            max_sessions,
            idle_timeout,
            ..RegistryConfig::default()
        },
        Arc::new(Metrics::default()),
        store,
    )
}

/// Opens session `id` on `registry` with `dispatch`.
pub fn open(
    registry: &RegistryHandle,
    id: &str,
    dispatch: Arc<dyn Dispatch>,
    standalone: Option<Outlet>,
) -> SessionHandle {
    registry
        .open(SessionParts {
            id: SessionId::parse(id).unwrap(),
            dispatch,
            config: SessionConfig::default(),
            standalone,
            on_stopped: None,
            owner: None,
        })
        .unwrap()
}

/// A session on a registry of its own, driven by a [`Fake`], whose standalone outlet is a
/// channel: (registry, session, outlet, frames, the fake's `started`, the fake's `release`).
pub struct Harness {
    pub registry: RegistryHandle,
    pub session: SessionHandle,
    pub outlet: Outlet,
    pub rx: mpsc::UnboundedReceiver<Frame>,
    pub started: Arc<Notify>,
    pub release: Arc<Notify>,
}

pub fn harness() -> Harness {
    let registry = registry(16, None, None);
    let fake = Fake::default();
    let (started, release) = (fake.started.clone(), fake.release.clone());
    let (outlet, rx) = ChannelOutlet::channel();
    let session = open(
        &registry,
        "test-session",
        Arc::new(fake),
        Some(outlet.clone()),
    );
    Harness {
        registry,
        session,
        outlet,
        rx,
        started,
        release,
    }
}

impl Harness {
    /// The registry's gauges.
    pub fn metrics(&self) -> actix_mcp_actors::MetricsSnapshot {
        self.registry.metrics()
    }
}

pub fn request(id: i64, method: &str, params: Value) -> Request {
    Request::new(RequestId::Number(id), method, Some(params))
}

pub fn cancel(id: Value) -> Notification {
    Notification {
        method: "notifications/cancelled".into(),
        params: Some(json!({ "requestId": id })),
    }
}

/// The longest any test waits for one step (a frame, an event, a state it polls for): a broken
/// runtime fails, it never hangs.
pub const WAIT: Duration = Duration::from_secs(5);

/// The next frame, as JSON, within [`WAIT`].
pub async fn next(rx: &mut mpsc::UnboundedReceiver<Frame>) -> Value {
    next_within(rx, WAIT).await
}

/// The next frame, as JSON, within `limit` (a longer one under paused time, where it costs
/// nothing).
pub async fn next_within(rx: &mut mpsc::UnboundedReceiver<Frame>, limit: Duration) -> Value {
    let frame = within_for(limit, rx.recv()).await.expect("open");
    serde_json::from_str(&frame.json).unwrap()
}

/// The next event of a stream, or `None` at its end, within [`WAIT`].
pub async fn next_event(rx: &mut StreamReceiver) -> Option<SseEvent> {
    within(rx.recv()).await
}

/// `fut`'s output; fails, naming the wait's place in the test, if it takes longer than
/// [`WAIT`].
#[track_caller]
pub fn within<F: Future>(fut: F) -> impl Future<Output = F::Output> {
    within_for(WAIT, fut)
}

/// `fut`'s output; fails, naming the wait's place in the test, if it takes longer than `limit`.
#[track_caller]
pub fn within_for<F: Future>(limit: Duration, fut: F) -> impl Future<Output = F::Output> {
    let caller = Location::caller();
    async move {
        match tokio::time::timeout(limit, fut).await {
            Ok(output) => output,
            Err(_) => panic!("not done within {limit:?} (the wait at {caller})"),
        }
    }
}

/// Waits, at most [`WAIT`], until `condition` (a gauge or table reading) holds; the runtime's
/// bookkeeping is updated by actors as they run, so the wait lets them run between readings
/// (for a millisecond, which also lets paused time move on to the bound).
#[track_caller]
pub fn eventually(what: &str, mut condition: impl FnMut() -> bool) -> impl Future<Output = ()> {
    let caller = Location::caller();
    async move {
        let reached = tokio::time::timeout(WAIT, async {
            while !condition() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await;
        assert!(
            reached.is_ok(),
            "not within {WAIT:?}: {what} (the wait at {caller})"
        );
    }
}
