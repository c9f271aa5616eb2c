//! Graceful drain of an HTTP endpoint ([`McpHttp::drain`](super::McpHttp::drain)), in
//! order:
//!
//! 1. stop accepting: every new POST and GET is answered 503 with `Retry-After` (DELETE still
//!    ends a session), requests waiting in the admission queue are refused the same way, and
//!    `/readyz` answers 503 so a load balancer stops routing here; every
//!    `subscriptions/listen` stream ends with its closing result (clients listen again
//!    elsewhere);
//! 2. let the requests in flight and the tasks running here (Tasks extension) finish, until
//!    the deadline;
//! 3. past the deadline, cancel the rest: a session's request gets `notifications/cancelled`
//!    (reason `"server shutting down"`) on its stream before it ends; a request without a
//!    session (both run under the endpoint's registry) is told as its revision allows: a
//!    2026-07-28 request is answered with a `-32800` error, one of the stateless mode gets
//!    `notifications/cancelled` where its answer streams, and one awaiting a JSON body gets a
//!    `-32800` error; a task is stored
//!    `failed` with [`TASK_SHUTDOWN_REASON`] (so `tasks/get` on any node of a cluster reports
//!    it) and its work cancelled;
//! 4. close every SSE stream with a `retry` hint, so clients reconnect (and resume with
//!    `Last-Event-ID`) on another node;
//! 5. flush the event store ([`EventStore::flush`](crate::EventStore::flush)).
//!
//! Then the server may stop: [`McpHttp::serve`](super::McpHttp::serve) does so on SIGTERM or
//! SIGINT and returns, so the process exits 0.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use tokio::sync::OnceCell;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use actix_mcp_actors::{ErrorObject, RequestId};
use serde_json::json;

use super::HttpShared;

pub use crate::transport::SHUTDOWN_REASON;

/// How long a request refused while draining is told to wait (`Retry-After`, in seconds): by
/// then a load balancer has moved it to another node.
const RETRY_AFTER_SECONDS: &str = "1";

/// How long the drain waits, after cancelling what was left, for those requests to end.
const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// How long the drain waits, after ending the tasks still running, for their final state to be
/// stored (its retries included).
const TASK_END_GRACE: Duration = Duration::from_secs(2);

/// The reason a task still running when its node's drain ends it fails with (its status
/// message and error), as every node of a cluster reports it.
pub const TASK_SHUTDOWN_REASON: &str = "the node running this task shut down";

/// How long the event store has to flush.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// What a drain did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DrainReport {
    /// Requests in flight when the drain began (a lower bound: request actors, or POST
    /// handlers still answering when there are more of those).
    pub in_flight_at_start: usize,
    /// Requests still running at the deadline, which were cancelled (counted as above).
    pub cancelled: usize,
    /// Tasks (Tasks extension) still running at the deadline, which were ended: stored
    /// `failed` with [`TASK_SHUTDOWN_REASON`].
    pub tasks_ended: usize,
    /// How long the drain took.
    pub elapsed: Duration,
}

/// The drain state of one endpoint, shared by its workers.
#[derive(Debug, Default)]
pub(super) struct DrainState {
    /// Step 1: no new requests.
    pub(super) stopping: CancellationToken,
    /// Step 3: the deadline passed; requests still running are cancelled.
    pub(super) cancelling: CancellationToken,
    /// Step 4: SSE streams close with a `retry` hint.
    pub(super) closing_streams: CancellationToken,
    /// POST handlers running now (reading, admitting, answering).
    pub(super) handlers: AtomicUsize,
    report: OnceCell<DrainReport>,
}

/// Counts one running POST handler while it lives.
#[derive(Debug)]
pub(super) struct HandlerGuard<'a>(&'a DrainState);

impl Drop for HandlerGuard<'_> {
    fn drop(&mut self) {
        self.0.handlers.fetch_sub(1, Ordering::AcqRel);
    }
}

impl DrainState {
    pub(super) fn is_draining(&self) -> bool {
        self.stopping.is_cancelled()
    }

    /// The 503 answer (with a `null` id) once the drain began.
    #[allow(clippy::result_large_err)] // the refusal, returned once and sent as it is
    pub(super) fn refuse_while_draining(&self) -> Result<(), HttpResponse> {
        if self.is_draining() {
            return Err(draining_response(None));
        }
        Ok(())
    }

    pub(super) fn enter(&self) -> HandlerGuard<'_> {
        self.handlers.fetch_add(1, Ordering::AcqRel);
        HandlerGuard(self)
    }
}

/// The 503 answer to a request that arrives (or waits) while the server drains.
pub(super) fn draining_response(id: Option<&RequestId>) -> HttpResponse {
    let error = ErrorObject::new(
        crate::error::code::SERVER_BUSY,
        "the server is shutting down; retry on another node",
    )
    .with_data(json!({ "retryAfterMs": 1000, "limit": "draining" }));
    let mut response = super::respond::error_response(StatusCode::SERVICE_UNAVAILABLE, id, &error);
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(RETRY_AFTER_SECONDS),
    );
    response
}

/// The answer of a request without a session awaiting a JSON body when the drain cancels it.
pub(super) fn cancelled_response(id: &RequestId) -> HttpResponse {
    let error = ErrorObject::new(
        crate::error::code::REQUEST_CANCELLED,
        format!("request cancelled: {SHUTDOWN_REASON}"),
    );
    let mut response =
        super::respond::error_response(StatusCode::SERVICE_UNAVAILABLE, Some(id), &error);
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(RETRY_AFTER_SECONDS),
    );
    response
}

/// Requests the endpoint is answering. Two counts overlap: request actors (a request still
/// pending after its first poll, answered over a stream or not) and POST handlers still
/// running (one awaiting a JSON answer also has an actor; one being read or admitted has
/// none). Zero when both are; otherwise the larger, a lower bound of the requests in flight.
fn in_flight(shared: &HttpShared) -> usize {
    let actors = shared.metrics.snapshot().in_flight;
    actors.max(shared.drain.handlers.load(Ordering::Acquire))
}

/// Tasks (of the Tasks extension) the server runs in this process: a drain waits for them as
/// for requests.
fn tasks_running(shared: &HttpShared) -> usize {
    shared
        .server
        .tasks
        .as_ref()
        .map_or(0, |tasks| tasks.running_count())
}

/// Waits until `done` holds or `until`, polling every 10 ms; whether it held.
async fn wait_until(until: Instant, mut done: impl FnMut() -> bool) -> bool {
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Runs the drain (see the module docs) once; later calls wait for the first and return its
/// report.
pub(super) async fn run(shared: &HttpShared, deadline: Duration) -> DrainReport {
    *shared
        .drain
        .report
        .get_or_init(|| drain(shared, deadline))
        .await
}

async fn drain(shared: &HttpShared, deadline: Duration) -> DrainReport {
    let started = Instant::now();
    let state = &shared.drain;
    state.stopping.cancel();
    // A listen stream runs until its client ends it: it ends now, with its closing result.
    shared.server.listeners.stop_on(&shared.metrics);
    // A parked input_required call waits for a retry this node will refuse: its retry replays
    // it wherever it lands.
    shared.server.mrtr.park.halt_on(&shared.metrics);
    let in_flight_at_start = in_flight(shared);
    tracing::info!(
        in_flight = in_flight_at_start,
        deadline_ms = deadline.as_millis() as u64,
        "draining: no new requests; waiting for those in flight"
    );
    let until = started + deadline;
    let mut cancelled = 0;
    let mut tasks_ended = 0;
    if !wait_until(until, || {
        in_flight(shared) == 0 && tasks_running(shared) == 0
    })
    .await
    {
        cancelled = in_flight(shared);
        tasks_ended = tasks_running(shared);
        tracing::warn!(
            remaining = cancelled,
            tasks = tasks_ended,
            "drain deadline passed; cancelling the requests and tasks still running"
        );
        state.cancelling.cancel();
        if let Some(registry) = shared.registry.get() {
            for session in registry.sessions() {
                session.abort_all(SHUTDOWN_REASON);
            }
            // Without a session: a 2026-07-28 request is answered with an error, one of the
            // stateless mode told `notifications/cancelled` where its answer streams.
            registry.abort_detached(SHUTDOWN_REASON);
        }
        if let Some(tasks) = &shared.server.tasks {
            tasks.shut_down_all(TASK_SHUTDOWN_REASON);
        }
    }
    // Whatever is left of them ends when its answer closes.
    state.closing_streams.cancel();
    if cancelled > 0 || tasks_ended > 0 {
        // A task's final state is written (with its retries) before its actor stops.
        let grace = Instant::now() + CANCEL_GRACE.max(TASK_END_GRACE * u32::from(tasks_ended > 0));
        let ended = || shared.metrics.snapshot().in_flight == 0 && tasks_running(shared) == 0;
        if !wait_until(grace, ended).await {
            tracing::warn!(
                remaining = shared.metrics.snapshot().in_flight,
                tasks = tasks_running(shared),
                "requests or tasks still ending after cancellation"
            );
        }
    }
    // The store the sessions use: a cluster's shared one, if it has one.
    let store = shared
        .node
        .get()
        .and_then(Option::as_ref)
        .and_then(|node| node.events())
        .unwrap_or_else(|| shared.config.store.clone());
    if tokio::time::timeout(FLUSH_TIMEOUT, store.flush())
        .await
        .is_err()
    {
        tracing::warn!("the event store did not flush in time");
    }
    let report = DrainReport {
        in_flight_at_start,
        cancelled,
        tasks_ended,
        elapsed: started.elapsed(),
    };
    tracing::info!(?report, "drained");
    report
}
