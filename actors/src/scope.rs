//! The runtime side of one request: its id, cancellation token, outlet, progress token and
//! session, handed to [`Dispatch::request`](crate::dev::Dispatch::request).
//!
//! Everything a handler does that travels to the peer goes through here: progress and other
//! request-scoped notifications go straight to the request's outlet (so they stay ordered before
//! the response), and server-to-client requests go through the session actor, which matches the
//! answer by id.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::task::Poll;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use actix::Recipient;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::carry::{Carry, Holds};
use crate::error::PeerError;
use crate::invocation::{Begun, CancelCall, Deliver, Invocation, Outcome, SupervisedError};
use crate::jsonrpc::{ErrorObject, Frame, FrameKind, RequestId};
use crate::metrics::Metrics;
use crate::outlet::Outlet;
use crate::registry::RegistryHandle;
use crate::session::{ForgetPeerRequest, SendPeerRequest, SessionHandle};

/// The runtime's handle on one in-flight request. Cheap to clone.
#[derive(Clone)]
pub struct RequestScope {
    inner: Arc<ScopeInner>,
}

struct ScopeInner {
    id: RequestId,
    /// Set once the request is cancelled or has ended; the token, made on first use, follows.
    cancelled: AtomicBool,
    token: OnceLock<CancellationToken>,
    outlet: Outlet,
    /// Where the request is recorded while it runs.
    home: Home,
    /// Where the request came from, as its transport decided it (see [`Carry::origin`]).
    origin: Option<Arc<dyn Any + Send + Sync>>,
    progress_token: Option<Value>,
    last_progress: Mutex<Option<f64>>,
    made_peer_requests: AtomicBool,
    /// The tool calls running for this request, told when it ends.
    tool_calls: Mutex<Vec<Recipient<CancelCall>>>,
    /// What the request's work keeps until the request ends (see [`Holds`]).
    holds: Mutex<Holds>,
    /// When set, an aborted request is answered with an error of this code instead of being
    /// told `notifications/cancelled`.
    abort_code: OnceLock<crate::jsonrpc::ErrorCode>,
    metrics: Arc<Metrics>,
}

impl fmt::Debug for RequestScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestScope")
            .field("id", &self.inner.id)
            .field("cancelled", &self.is_cancelled())
            .field("in_session", &self.session().is_some())
            .finish()
    }
}

/// Why a progress notification was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgressError {
    /// The value did not increase over the last one sent (the spec requires it to).
    #[error("progress must increase with every notification")]
    NotIncreasing,
    /// The request is finished or cancelled.
    #[error("the request is no longer active")]
    Inactive,
}

/// Where a request is recorded while it runs: a cancellation finds it there, a drain or a
/// shutdown reaches it there, and its end frees its place.
pub(crate) enum Home {
    /// A session's in-flight table, under this ticket.
    Session(SessionHandle, u64),
    /// The registry's table of requests without a session, under this ticket.
    Registry(RegistryHandle, u64),
    /// Nowhere (a task's own scope, in-process tools, tests).
    Nowhere,
}

impl RequestScope {
    pub(crate) fn new(
        id: RequestId,
        outlet: Outlet,
        home: Home,
        progress_token: Option<Value>,
        metrics: Arc<Metrics>,
        carry: Carry,
    ) -> Self {
        Self {
            inner: Arc::new(ScopeInner {
                id,
                cancelled: AtomicBool::new(false),
                token: OnceLock::new(),
                outlet,
                home,
                origin: carry.origin,
                progress_token,
                last_progress: Mutex::new(None),
                made_peer_requests: AtomicBool::new(false),
                tool_calls: Mutex::new(Vec::new()),
                holds: Mutex::new(carry.holds),
                abort_code: OnceLock::new(),
                metrics,
            }),
        }
    }

    /// A scope recorded nowhere: the work of a task (which outlives any request), and tests.
    pub fn detached(id: RequestId, outlet: Outlet, progress_token: Option<Value>) -> Self {
        Self::new(
            id,
            outlet,
            Home::Nowhere,
            progress_token,
            Arc::default(),
            Carry::default(),
        )
    }

    /// What the request's transport said of where it came from, when it said it with a value
    /// of type `T` (see [`Carry::origin`]).
    pub fn carried<T: Any>(&self) -> Option<&T> {
        self.inner.origin.as_deref()?.downcast_ref()
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The request's cancellation token: cancelled when the request is cancelled, and when it
    /// has ended. Made on first use (most requests never need one).
    pub fn token(&self) -> &CancellationToken {
        let token = self.inner.token.get_or_init(CancellationToken::new);
        if self.inner.cancelled.load(Ordering::Acquire) {
            token.cancel();
        }
        token
    }

    /// Whether the request has been cancelled (or has ended).
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Cancels the request's token and tells its running tool calls to stop.
    ///
    /// The runtime calls this when the peer cancels the request or it ends; the owner of a
    /// [`detached`](Self::detached) scope that outlives any request (a task of the Tasks
    /// extension) calls it to stop the work it runs. Idempotent.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::Release);
        if let Some(token) = self.inner.token.get() {
            token.cancel();
        }
        let calls = std::mem::take(
            &mut *self
                .inner
                .tool_calls
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        for call in calls {
            call.do_send(CancelCall);
        }
    }

    /// Answers this request with an error of `code` (its message saying why) if it is aborted
    /// ([`Abort`](crate::dev::Abort): a drain's deadline passed), instead of telling the peer
    /// `notifications/cancelled`: for a protocol revision whose servers must not send that
    /// notification. The first call counts.
    pub fn answer_aborts_with(&self, code: crate::jsonrpc::ErrorCode) {
        let _ = self.inner.abort_code.set(code);
    }

    /// The code an aborted request is answered with, if any (see
    /// [`answer_aborts_with`](Self::answer_aborts_with)).
    pub(crate) fn abort_code(&self) -> Option<crate::jsonrpc::ErrorCode> {
        self.inner.abort_code.get().copied()
    }

    /// A share of what the request's work holds (admission slots, a byte budget), for work
    /// that outlives the request: what it holds stays held until the share is dropped too.
    /// Empty once the request has ended.
    pub fn share_holds(&self) -> Holds {
        lock(&self.inner.holds).clone()
    }

    /// Lets go of what the request held (it has ended); shares taken earlier keep it.
    pub(crate) fn release_holds(&self) {
        let released = std::mem::take(&mut *lock(&self.inner.holds));
        drop(released);
    }

    /// Releases the request's place: its row in its session's in-flight table, or in its
    /// registry's table of requests without a session.
    pub(crate) fn forget(&self) {
        match &self.inner.home {
            Home::Session(session, ticket) => session.forget_request(&self.inner.id, *ticket),
            Home::Registry(registry, ticket) => registry.forget_detached(*ticket),
            Home::Nowhere => {}
        }
    }

    /// The session this request belongs to; `None` without one.
    pub fn session(&self) -> Option<&SessionHandle> {
        match &self.inner.home {
            Home::Session(session, _) => Some(session),
            _ => None,
        }
    }

    /// The outlet this request's traffic travels on.
    pub fn outlet(&self) -> &Outlet {
        &self.inner.outlet
    }

    /// The `_meta.progressToken` the request carried, if any.
    pub fn progress_token(&self) -> Option<&Value> {
        self.inner.progress_token.as_ref()
    }

    /// Sends `notifications/progress` for this request. Does nothing (and succeeds) when the
    /// request carried no progress token.
    ///
    /// # Errors
    /// [`ProgressError::NotIncreasing`] when `progress` is not above the last value sent;
    /// [`ProgressError::Inactive`] once the request is cancelled.
    pub fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        let Some(token) = &self.inner.progress_token else {
            return Ok(());
        };
        if self.is_cancelled() {
            return Err(ProgressError::Inactive);
        }
        {
            let mut last = self
                .inner
                .last_progress
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if last.is_some_and(|last| progress <= last) || !progress.is_finite() {
                return Err(ProgressError::NotIncreasing);
            }
            *last = Some(progress);
        }
        let mut params = Map::with_capacity(4);
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), number(progress));
        if let Some(total) = total {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), Value::String(message.into()));
        }
        self.notify("notifications/progress", Some(&Value::Object(params)));
        Ok(())
    }

    /// Sends a notification related to this request (it travels on the request's stream). It is
    /// dropped when the outlet carries no notifications (JSON response mode) or has closed.
    pub fn notify(&self, method: &str, params: Option<&Value>) {
        self.inner
            .outlet
            .deliver_or_log(Frame::notification(method, params), "request notification");
    }

    /// Closes this request's SSE connection without ending its stream: the client resumes with
    /// `Last-Event-ID` and receives what follows (SSE polling, SEP-1699). A no-op elsewhere, and
    /// for a request without a session: its stream is not resumable, so closing it would lose
    /// the answer (and, with it, the request).
    pub fn close_connection(&self) {
        if self.session().is_some() {
            self.inner.outlet.drop_connection();
        }
    }

    /// Whether request-related notifications can reach the peer at all.
    pub fn can_notify(&self) -> bool {
        self.inner.outlet.accepts(FrameKind::Notification)
    }

    /// Sends a request to the peer (a server-to-client request such as sampling) on this
    /// request's stream and waits for the answer.
    ///
    /// # Errors
    /// [`PeerError::Stateless`] without a session; [`PeerError::Unsupported`] when the outlet
    /// cannot carry requests (JSON response mode); [`PeerError::Rejected`] when the peer answers
    /// with an error; [`PeerError::Timeout`] after `timeout`; [`PeerError::Cancelled`] when this
    /// request is cancelled or its session ends first.
    ///
    /// # Cancel safety
    /// Dropping the future forgets the pending request and sends `notifications/cancelled` for
    /// it to the peer.
    pub async fn peer_request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, PeerError> {
        self.peer_request_with(method, params, timeout, |_| {})
            .await
    }

    /// [`peer_request`](Self::peer_request), telling `sent_as` the id the request is sent with
    /// (before it is sent; not called when it is refused before that), for tracing.
    ///
    /// # Errors
    /// As [`peer_request`](Self::peer_request).
    ///
    /// # Cancel safety
    /// As [`peer_request`](Self::peer_request).
    pub async fn peer_request_with(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
        sent_as: impl FnOnce(&RequestId),
    ) -> Result<Value, PeerError> {
        let Some(session) = self.session() else {
            return Err(PeerError::Stateless);
        };
        if !self.inner.outlet.accepts(FrameKind::Request) {
            return Err(PeerError::Unsupported);
        }
        if self.is_cancelled() {
            return Err(PeerError::Cancelled);
        }
        let id = RequestId::Number(session.next_peer_id());
        sent_as(&id);
        self.inner.made_peer_requests.store(true, Ordering::Relaxed);
        let (tx, rx) = tokio::sync::oneshot::channel();
        let mut guard = ForgetOnDrop {
            id: Some(id.clone()),
            session: session.clone(),
        };
        session.addr().do_send(SendPeerRequest {
            id,
            method: method.to_owned(),
            params,
            outlet: self.inner.outlet.clone(),
            origin: Some(self.inner.id.clone()),
            reply: tx,
        });
        let answer = async {
            tokio::select! {
                biased;
                answer = rx => answer.map_err(|_| PeerError::Closed),
                () = self.token().cancelled() => Err(PeerError::Cancelled),
            }
        };
        let result = match timeout {
            Some(limit) => tokio::time::timeout(limit, answer)
                .await
                .unwrap_or(Err(PeerError::Timeout)),
            None => answer.await,
        };
        match result {
            Ok(Ok(value)) => {
                guard.id = None;
                Ok(value)
            }
            Ok(Err(error)) => {
                guard.id = None;
                Err(PeerError::Rejected(error))
            }
            Err(err @ PeerError::Closed) => {
                guard.id = None;
                Err(err)
            }
            Err(err) => Err(err),
        }
    }

    /// Begins `fut` supervised for this request (see [`Invocation::begin`]): a panic becomes
    /// [`SupervisedError::Panicked`], `timeout` stops it with [`SupervisedError::TimedOut`], and
    /// the request's cancellation (or end) stops it with [`SupervisedError::Cancelled`],
    /// dropping it at its next await. A future that finishes in its first poll (a tool that
    /// never awaits) is [`Started::Done`] at once, with no actor, task or channel; one still
    /// pending runs in an [`Invocation`] actor registered with this request
    /// ([`Started::Running`], a future of its outcome).
    pub fn start<F, T>(&self, fut: F, timeout: Option<Duration>) -> Started<T>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        if self.is_cancelled() {
            return Started::Done(Err(SupervisedError::Cancelled));
        }
        let mut receiver = None;
        let begun = Invocation::begin(Box::pin(fut), timeout, &self.inner.metrics, || {
            let (tx, rx) = tokio::sync::oneshot::channel();
            receiver = Some(rx);
            Box::new(move |outcome| {
                let _ = tx.send(outcome);
            })
        });
        match (begun, receiver) {
            (Begun::Running(call), Some(rx)) => {
                self.register(call.recipient());
                Started::Running(Running { rx })
            }
            (Begun::Done(outcome), _) => Started::Done(outcome),
            (Begun::Running(_), None) => Started::Done(Err(SupervisedError::Cancelled)),
        }
    }

    /// Runs `fut` supervised for this request and waits for its outcome (see
    /// [`start`](Self::start)).
    ///
    /// # Errors
    /// See [`SupervisedError`].
    ///
    /// # Cancel safety
    /// Dropping the future leaves the invocation running until the request ends.
    pub async fn supervise<F, T>(
        &self,
        fut: F,
        timeout: Option<Duration>,
    ) -> Result<T, SupervisedError>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        match self.start(fut, timeout) {
            Started::Done(outcome) => outcome,
            Started::Running(running) => running.await,
        }
    }

    /// Runs a blocking closure on the blocking thread pool under an [`Invocation`] actor, so the
    /// caller's worker never stalls. Cancellation and timeouts stop the wait; the closure itself
    /// runs to completion on its thread, and keeps the request's holds (its admission slots,
    /// its share of a byte budget) until it returns.
    ///
    /// # Errors
    /// See [`SupervisedError`].
    pub async fn supervise_blocking<F, T>(
        &self,
        f: F,
        timeout: Option<Duration>,
    ) -> Result<T, SupervisedError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        if self.is_cancelled() {
            return Err(SupervisedError::Cancelled);
        }
        let holds = self.share_holds();
        let f = move || {
            let _holds = holds;
            f()
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let deliver: Deliver<T> = Box::new(move |outcome| {
            let _ = tx.send(outcome);
        });
        let call = Invocation::begin_blocking(f, timeout, &self.inner.metrics, deliver);
        self.register(call.recipient());
        Running { rx }.await
    }

    /// Records an invocation of this request, so its end or cancellation reaches it as
    /// [`CancelCall`].
    fn register(&self, call: Recipient<CancelCall>) {
        self.inner
            .tool_calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(call);
        // The request may have ended while the call was being registered.
        if self.is_cancelled() {
            self.cancel();
        }
    }

    /// Whether this request has sent server-to-client requests.
    pub(crate) fn made_peer_requests(&self) -> bool {
        self.inner.made_peer_requests.load(Ordering::Relaxed)
    }

    /// The gauges of the transport serving this request.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.inner.metrics
    }
}

fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(value as i64)
    } else {
        serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

/// Forgets a pending peer request (and tells the peer) unless disarmed.
struct ForgetOnDrop {
    id: Option<RequestId>,
    session: SessionHandle,
}

impl Drop for ForgetOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.session.addr().do_send(ForgetPeerRequest {
                id,
                reason: "the server request was cancelled".into(),
            });
        }
    }
}

/// Builds the error object a request answers with when a peer request it needed failed.
pub fn peer_error_object(err: &PeerError) -> ErrorObject {
    match err {
        PeerError::Rejected(error) => error.clone(),
        other => ErrorObject::internal(other),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An invocation begun for a request ([`RequestScope::start`]).
#[derive(Debug)]
pub enum Started<T: Send + 'static> {
    /// It finished (or panicked) in its first poll.
    Done(Outcome<T>),
    /// It runs in an [`Invocation`] actor: await this for its outcome.
    Running(Running<T>),
}

/// The outcome of an invocation still running: a future. Its end comes from the invocation
/// actor; if the actor is gone without one, the outcome is [`SupervisedError::Cancelled`].
#[derive(Debug)]
pub struct Running<T> {
    rx: tokio::sync::oneshot::Receiver<Outcome<T>>,
}

impl<T> Future for Running<T> {
    type Output = Outcome<T>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Self::Output> {
        std::pin::Pin::new(&mut self.rx)
            .poll(cx)
            .map(|outcome| outcome.unwrap_or(Err(SupervisedError::Cancelled)))
    }
}
