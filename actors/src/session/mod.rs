//! Session actor: one per connected client (one for a stdio server, one per `Mcp-Session-Id`
//! over HTTP).
//!
//! Started by the transport (over HTTP, on the worker that accepted `initialize`; see
//! [`RegistryHandle::open`](crate::RegistryHandle::open)). Owns the table of outgoing
//! server-to-client requests awaiting an answer, the session's live SSE streams, its standalone
//! outlet (stdio writer or GET stream) and its [`CancellationToken`], the parent of every
//! request token.
//!
//! The in-flight table (request id → [`InFlight`] actor) sits beside the actor, in the state
//! its [`SessionHandle`]s share: a transport admits a request and a `notifications/cancelled`
//! acts on it at once, on the worker that received them, without a hop through this mailbox
//! (see [`SessionHandle::request`]). Both stay ordered with each other because both act at
//! once.
//!
//! Lifecycle: Started → Running (handles the messages below) → Stopping on [`Close`], idle
//! expiry or registry shutdown → Stopped: the token is cancelled (every in-flight request stops
//! and sends nothing), pending peer requests fail with `Closed`, streams close, and the session
//! leaves its registry.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use actix::{
    Actor, ActorContext, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message,
    MessageResult,
};
use serde::Deserialize as _;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::dispatch::Dispatch;
use crate::ids::{EventId, SessionId};
use crate::in_flight::{Cancel, InFlight};
use crate::jsonrpc::{ErrorCode, ErrorObject, Frame, Notification, Request, RequestId, Response};
use crate::metrics::{Gauge, Metrics};
use crate::outlet::Outlet;
use crate::scope::RequestScope;
use crate::sse_stream::{Attach, CloseStream, SseEvent, SseStream};

/// Limits of one session. Defaults are not part of semver.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Most requests one session may have in flight at once (default 256); past it a request is
    /// answered at once with an error.
    pub max_in_flight: usize,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self { max_in_flight: 256 }
    }
}

/// Called once when a session has stopped, with its id.
pub type OnStopped = Box<dyn FnOnce(&SessionId) + Send>;

/// JSON-RPC code for "too many concurrent requests in this session" (implementation-defined).
pub const SERVER_BUSY: ErrorCode = ErrorCode(-32000);

pub(crate) struct SessionShared {
    id: SessionId,
    token: CancellationToken,
    dispatch: Arc<dyn Dispatch>,
    config: SessionConfig,
    metrics: Arc<Metrics>,
    /// The in-flight table (request id → in-flight actor). Shared rather than owned by the
    /// session actor so a transport admits a request without a hop through the session's
    /// mailbox; cancellations and the session's end still arrive as messages.
    requests: Mutex<HashMap<RequestId, InFlightEntry>>,
    data: RwLock<Option<Arc<dyn Any + Send + Sync>>>,
    pub(crate) next_peer_id: AtomicI64,
    next_stream: AtomicU64,
    last_seen: Mutex<Instant>,
    /// In-flight requests plus attached stream connections: a busy session is never idle.
    active: AtomicUsize,
}

/// One row of the in-flight table.
struct InFlightEntry {
    addr: Addr<InFlight>,
    cancellable: bool,
}

impl SessionShared {
    fn lock_requests(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, InFlightEntry>> {
        self.requests
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A cheap, cloneable handle on a live session: its shared state and its actor's address.
#[derive(Clone)]
pub struct SessionHandle {
    shared: Arc<SessionShared>,
    addr: Addr<Session>,
}

impl fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionHandle")
            .field("id", &self.shared.id)
            .field("closed", &self.shared.token.is_cancelled())
            .finish()
    }
}

impl SessionHandle {
    pub(crate) fn shared(&self) -> &SessionShared {
        &self.shared
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.shared.id
    }

    /// The session actor's address.
    pub fn addr(&self) -> &Addr<Session> {
        &self.addr
    }

    /// The session's cancellation token; cancelled when the session ends.
    pub fn token(&self) -> &CancellationToken {
        &self.shared.token
    }

    /// Whether the session is still running.
    pub fn is_alive(&self) -> bool {
        !self.shared.token.is_cancelled() && self.addr.connected()
    }

    /// The protocol layer's data for this session (negotiated version, client info, ...).
    pub fn data<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let data = self
            .shared
            .data
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()?;
        data.downcast::<T>().ok()
    }

    /// Replaces the protocol layer's data for this session.
    pub fn set_data<T: Any + Send + Sync>(&self, value: T) {
        *self
            .shared
            .data
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Arc::new(value));
    }

    /// Marks the session as used now (idle expiry counts from the last use).
    pub fn touch(&self) {
        *self
            .shared
            .last_seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Instant::now();
    }

    /// How long the session has been idle: zero while it has requests in flight or streams
    /// attached.
    pub fn idle_for(&self) -> Duration {
        if self.shared.active.load(Ordering::Relaxed) > 0 {
            return Duration::ZERO;
        }
        self.shared
            .last_seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .elapsed()
    }

    pub(crate) fn activity(&self, delta: isize) {
        if delta >= 0 {
            self.shared
                .active
                .fetch_add(delta.unsigned_abs(), Ordering::Relaxed);
        } else {
            self.shared
                .active
                .fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
        }
    }

    /// Allocates the number of a new stream of this session.
    pub fn next_stream(&self) -> u64 {
        self.shared.next_stream.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Hands a request to the session; its frames go to `outlet`. The request is admitted at
    /// once, on the caller's arbiter, or refused with an error answer (its id is already in
    /// flight, or the session has too many requests in flight). An admitted request's handler
    /// is polled once right here: answered at once, it is done; still pending, it becomes an
    /// in-flight actor on this arbiter and enters the session's in-flight table, where
    /// `notifications/cancelled` finds it. On a session that has ended, the outlet is finished
    /// without an answer.
    pub fn request(&self, request: Request, outlet: Outlet) {
        let shared = &self.shared;
        let table = shared.lock_requests();
        if shared.token.is_cancelled() {
            drop(table);
            outlet.finish();
            return;
        }
        let refusal = if table.contains_key(&request.id) {
            Some(ErrorObject::invalid_request(format!(
                "request id {} is already in flight",
                request.id
            )))
        } else if table.len() >= shared.config.max_in_flight {
            Some(ErrorObject::new(
                SERVER_BUSY,
                format!(
                    "too many concurrent requests in this session (limit {})",
                    shared.config.max_in_flight
                ),
            ))
        } else {
            None
        };
        drop(table);
        if let Some(error) = refusal {
            outlet.deliver_or_log(Frame::error(Some(&request.id), &error), "refusal");
            return;
        }
        let progress_token = progress_token(request.params.as_ref());
        let id = request.id.clone();
        let scope = RequestScope::new(
            id.clone(),
            shared.token.child_token(),
            outlet,
            Some(self.clone()),
            progress_token,
            shared.metrics.clone(),
        );
        let cancellable = shared.dispatch.is_cancellable(&request.method);
        // The handler's first poll runs outside the lock (it may call back into the session).
        if let Some(addr) = InFlight::begin(request, scope, &shared.dispatch, cancellable) {
            let mut table = shared.lock_requests();
            if shared.token.is_cancelled() {
                // The session ended during that poll and did not see this request.
                addr.do_send(Cancel {
                    reason: Some("session closed".into()),
                });
            } else {
                table.insert(id, InFlightEntry { addr, cancellable });
                shared.active.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Removes a finished request from the in-flight table (called by its actor). Only that
    /// actor's own row goes: a later request that reused the id keeps its row.
    pub(crate) fn forget_request(&self, id: &RequestId, addr: &Addr<InFlight>) {
        let mut table = self.shared.lock_requests();
        if table.get(id).is_some_and(|entry| entry.addr == *addr) {
            table.remove(id);
            self.shared.active.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Registers a POST answer stream that outlived its first moments, so `Last-Event-ID`
    /// can reattach to it while it is live.
    pub fn register_stream(&self, number: u64, stream: Addr<SseStream>) {
        self.addr.do_send(RegisterStream { number, stream });
    }

    /// Hands a request to the session, waiting while its mailbox is full (backpressure for
    /// transports that read as fast as the peer writes, such as stdio).
    ///
    /// # Errors
    /// When the session has stopped.
    pub async fn request_with_backpressure(
        &self,
        request: Request,
        outlet: Outlet,
    ) -> Result<(), actix::MailboxError> {
        self.addr.send(HandleRequest { request, outlet }).await
    }

    /// Hands a notification from the peer to the session. A `notifications/cancelled` acts at
    /// once on the in-flight table (as requests are admitted at once), so it can never overtake
    /// or trail a request the peer sent around it.
    pub fn notification(&self, notification: Notification) {
        if notification.method == "notifications/cancelled" {
            cancel_request(&self.shared, notification.params.as_ref());
        } else {
            self.addr.do_send(HandleNotification(notification));
        }
    }

    /// Hands the peer's answer to one of our requests to the session.
    pub fn response(&self, response: Response) {
        self.addr.do_send(HandleResponse(response));
    }

    /// Sends a frame that belongs to no request (list-changed, resource updates, session logs)
    /// on the session's standalone outlet; dropped (and logged) when none is attached.
    pub fn notify(&self, frame: Frame) {
        self.addr.do_send(Notify(frame));
    }

    /// Ends the session.
    pub fn close(&self) {
        self.shared.token.cancel();
        self.addr.do_send(Close);
    }

    /// Opens the standalone stream (HTTP GET). A previous standalone stream is closed.
    ///
    /// # Errors
    /// When the session has stopped.
    pub async fn open_standalone(
        &self,
        retry: Duration,
    ) -> Result<mpsc::Receiver<SseEvent>, actix::MailboxError> {
        self.addr.send(OpenStandalone { retry }).await
    }

    /// Resumes a stream after `Last-Event-ID`: replays what it missed and, when the stream is
    /// still live, attaches the new connection to it. `None` when the stream is unknown.
    ///
    /// # Errors
    /// When the session has stopped.
    pub async fn resume(
        &self,
        last: EventId,
    ) -> Result<Option<mpsc::Receiver<SseEvent>>, actix::MailboxError> {
        self.addr.send(Resume { last }).await
    }

    /// Counts of the session's live work.
    ///
    /// # Errors
    /// When the session has stopped.
    pub async fn stats(&self) -> Result<SessionStats, actix::MailboxError> {
        self.addr.send(GetSessionStats).await
    }
}

struct PendingPeer {
    reply: oneshot::Sender<Result<Value, ErrorObject>>,
    outlet: Outlet,
    origin: Option<RequestId>,
}

/// The session actor. See the module docs.
pub struct Session {
    shared: Arc<SessionShared>,
    pending: HashMap<RequestId, PendingPeer>,
    streams: HashMap<u64, Addr<SseStream>>,
    standalone: Option<(u64, Outlet)>,
    store: Option<Arc<dyn crate::sse_stream::EventStore>>,
    metrics: Arc<Metrics>,
    on_stopped: Option<OnStopped>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.shared.id)
            .field("in_flight", &self.shared.lock_requests().len())
            .field("pending_peer_requests", &self.pending.len())
            .field("streams", &self.streams.len())
            .finish()
    }
}

/// Everything needed to start a session.
pub struct SessionParts {
    /// The session's id.
    pub id: SessionId,
    /// The protocol layer.
    pub dispatch: Arc<dyn Dispatch>,
    /// The session's limits.
    pub config: SessionConfig,
    /// Where frames unrelated to any request go (the stdio writer); `None` until a GET stream
    /// attaches.
    pub standalone: Option<Outlet>,
    /// Where SSE events are kept for resumption; `None` when the transport has no streams.
    pub store: Option<Arc<dyn crate::sse_stream::EventStore>>,
    /// Shared gauges.
    pub metrics: Arc<Metrics>,
    /// Called once when the session has stopped (the registry removes it here).
    pub on_stopped: Option<OnStopped>,
    /// The parent token (the server's), if any.
    pub parent_token: Option<CancellationToken>,
}

impl fmt::Debug for SessionParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionParts")
            .field("id", &self.id)
            .field("config", &self.config)
            .finish()
    }
}

impl Session {
    /// Starts a session actor on the current arbiter and returns its handle.
    pub fn start(parts: SessionParts) -> SessionHandle {
        let token = parts
            .parent_token
            .map_or_else(CancellationToken::new, |parent| parent.child_token());
        let shared = Arc::new(SessionShared {
            id: parts.id,
            token,
            dispatch: parts.dispatch,
            config: parts.config,
            metrics: parts.metrics.clone(),
            requests: Mutex::new(HashMap::new()),
            data: RwLock::new(None),
            next_peer_id: AtomicI64::new(1),
            next_stream: AtomicU64::new(0),
            last_seen: Mutex::new(Instant::now()),
            active: AtomicUsize::new(0),
        });
        parts.metrics.inc(Gauge::Sessions);
        let actor_shared = shared.clone();
        let addr = Session::create(move |ctx| {
            ctx.set_mailbox_capacity(1024);
            Session {
                shared: actor_shared,
                pending: HashMap::new(),
                streams: HashMap::new(),
                standalone: parts.standalone.map(|outlet| (0, outlet)),
                store: parts.store,
                metrics: parts.metrics,
                on_stopped: parts.on_stopped,
            }
        });
        SessionHandle { shared, addr }
    }

    fn session_handle(&self, ctx: &Context<Self>) -> SessionHandle {
        SessionHandle {
            shared: self.shared.clone(),
            addr: ctx.address(),
        }
    }

    /// Forgets a pending server-to-client request and tells the peer it is cancelled, on the
    /// stream it travelled (or the standalone one when that has ended).
    fn forget_peer(&mut self, id: &RequestId, reason: &str) {
        let Some(pending) = self.pending.remove(id) else {
            return;
        };
        self.metrics.dec(Gauge::PeerRequests);
        let frame = Frame::notification(
            "notifications/cancelled",
            Some(&json!({"requestId": id, "reason": reason})),
        );
        if let Err(frame) = pending.outlet.deliver(frame) {
            self.deliver_standalone(frame);
        }
    }

    fn deliver_standalone(&self, frame: Frame) {
        match &self.standalone {
            Some((_, outlet)) => outlet.deliver_or_log(frame, "session notification"),
            None => {
                tracing::debug!(session = %self.shared.id, ?frame, "dropped a session notification: no standalone stream")
            }
        }
    }
}

/// Cancels the in-flight request a `notifications/cancelled` names. Malformed or unknown
/// cancellations are ignored silently, as the spec asks.
fn cancel_request(shared: &SessionShared, params: Option<&Value>) {
    let Some(id) = params
        .and_then(|p| p.get("requestId"))
        .and_then(|id| RequestId::deserialize(id).ok())
    else {
        return;
    };
    let addr = {
        let mut table = shared.lock_requests();
        match table.get(&id) {
            // Out of the table at once: the id is free again, and the request is no longer
            // counted, whenever its actor gets to stop.
            Some(entry) if entry.cancellable => {
                shared.active.fetch_sub(1, Ordering::Relaxed);
                table.remove(&id).map(|entry| entry.addr)
            }
            Some(_) => {
                tracing::debug!(%id, "ignored a cancellation of a request that cannot be cancelled");
                None
            }
            None => None,
        }
    };
    let Some(addr) = addr else {
        return;
    };
    let reason = params
        .and_then(|p| p.get("reason"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    addr.do_send(Cancel { reason });
}

/// Reads `params._meta.progressToken` when it is a string or an integer.
pub(crate) fn progress_token(params: Option<&Value>) -> Option<Value> {
    let token = params?.get("_meta")?.get("progressToken")?;
    (token.is_string() || token.is_i64() || token.is_u64()).then(|| token.clone())
}

impl Actor for Session {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // The token can be cancelled from outside (server shutdown): stop with it.
        let token = self.shared.token.clone();
        ctx.spawn(
            actix::fut::wrap_future(async move { token.cancelled().await })
                .map(|(), _: &mut Session, ctx: &mut Context<Session>| ctx.stop()),
        );
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        // Cancelled under the table's lock: no request is admitted after this point.
        let in_flight: Vec<_> = {
            let mut table = self.shared.lock_requests();
            self.shared.token.cancel();
            table.drain().map(|(_, entry)| entry.addr).collect()
        };
        // Each request stops, sends nothing and finishes its own outlet.
        for addr in in_flight {
            addr.do_send(Cancel {
                reason: Some("session closed".into()),
            });
        }
        for (_, stream) in self.streams.drain() {
            stream.do_send(CloseStream);
        }
        for _ in self.pending.drain() {
            self.metrics.dec(Gauge::PeerRequests);
        }
        if let Some(store) = &self.store {
            store.forget_session(&self.shared.id);
        }
        self.metrics.dec(Gauge::Sessions);
        if let Some(on_stopped) = self.on_stopped.take() {
            on_stopped(&self.shared.id);
        }
    }
}

/// Handle one request from the peer, in mailbox order. Sent by transports that want
/// backpressure ([`SessionHandle::request_with_backpressure`]); no reply (the answer travels on
/// `outlet`).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct HandleRequest {
    /// The request.
    pub request: Request,
    /// Where its response and related messages go.
    pub outlet: Outlet,
}

impl Handler<HandleRequest> for Session {
    type Result = ();

    fn handle(&mut self, msg: HandleRequest, ctx: &mut Self::Context) {
        self.session_handle(ctx).request(msg.request, msg.outlet);
    }
}

/// Track a live POST answer stream for `Last-Event-ID` resumption. Sent through
/// [`SessionHandle::register_stream`].
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct RegisterStream {
    /// The stream's number.
    pub number: u64,
    /// Its actor.
    pub stream: Addr<SseStream>,
}

impl Handler<RegisterStream> for Session {
    type Result = ();

    fn handle(&mut self, msg: RegisterStream, _: &mut Self::Context) {
        if msg.stream.connected() {
            self.streams.insert(msg.number, msg.stream);
        }
    }
}

/// Handle one notification from the peer. Sent by the transport.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct HandleNotification(pub Notification);

impl Handler<HandleNotification> for Session {
    type Result = ();

    fn handle(&mut self, msg: HandleNotification, ctx: &mut Self::Context) {
        if msg.0.method == "notifications/cancelled" {
            cancel_request(&self.shared, msg.0.params.as_ref());
        } else {
            let handle = self.session_handle(ctx);
            self.shared.dispatch.notification(msg.0, Some(&handle));
        }
    }
}

/// The peer answered one of our requests. Sent by the transport.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct HandleResponse(pub Response);

impl Handler<HandleResponse> for Session {
    type Result = ();

    fn handle(&mut self, msg: HandleResponse, _: &mut Self::Context) {
        match self.pending.remove(&msg.0.id) {
            Some(pending) => {
                self.metrics.dec(Gauge::PeerRequests);
                // The waiting request may have gone meanwhile; the answer is then moot.
                let _ = pending.reply.send(msg.0.outcome);
            }
            None => {
                tracing::debug!(session = %self.shared.id, id = %msg.0.id, "ignored a response to an unknown request")
            }
        }
    }
}

/// Send a request to the peer and route its answer back. Sent by
/// [`RequestScope::peer_request`](crate::RequestScope::peer_request); the answer arrives on
/// `reply` (dropped unanswered when it cannot be delivered).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct SendPeerRequest {
    /// The id we give the request.
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The params.
    pub params: Option<Value>,
    /// The stream it travels on (the originating request's).
    pub outlet: Outlet,
    /// The request that needs the answer.
    pub origin: Option<RequestId>,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Result<Value, ErrorObject>>,
}

impl Handler<SendPeerRequest> for Session {
    type Result = ();

    fn handle(&mut self, msg: SendPeerRequest, _: &mut Self::Context) {
        let frame = Frame::request(&msg.id, &msg.method, msg.params.as_ref());
        if msg.outlet.deliver(frame).is_err() {
            tracing::debug!(session = %self.shared.id, id = %msg.id, "a server-to-client request could not be delivered");
            return; // dropping `reply` tells the waiter
        }
        self.metrics.inc(Gauge::PeerRequests);
        self.pending.insert(
            msg.id,
            PendingPeer {
                reply: msg.reply,
                outlet: msg.outlet,
                origin: msg.origin,
            },
        );
    }
}

/// Forget a pending peer request and tell the peer it is cancelled. Sent when the waiting
/// future is dropped (its request was cancelled or timed out).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ForgetPeerRequest {
    /// The id of our request.
    pub id: RequestId,
    /// Why, for `notifications/cancelled`.
    pub reason: String,
}

impl Handler<ForgetPeerRequest> for Session {
    type Result = ();

    fn handle(&mut self, msg: ForgetPeerRequest, _: &mut Self::Context) {
        self.forget_peer(&msg.id, &msg.reason);
    }
}

/// An in-flight request that made server-to-client requests has stopped. Sent by [`InFlight`]
/// from `stopped`. The session cancels the server-to-client requests it still awaited (their
/// `notifications/cancelled` travel on its stream), then finishes its outlet, so a cancelled
/// request's stream ends after them. (A request that made none finishes its outlet itself.)
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct RequestFinished {
    /// The finished request's id.
    pub id: RequestId,
    /// Its outlet, finished once the nested requests are cancelled.
    pub outlet: Outlet,
}

impl Handler<RequestFinished> for Session {
    type Result = ();

    fn handle(&mut self, msg: RequestFinished, _: &mut Self::Context) {
        let nested: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, pending)| pending.origin.as_ref() == Some(&msg.id))
            .map(|(id, _)| id.clone())
            .collect();
        for id in nested {
            self.forget_peer(&id, "the request that needed it has ended");
        }
        msg.outlet.finish();
    }
}

/// An SSE stream of this session has stopped. Sent by [`SseStream`] from `stopped`.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct StreamClosed {
    /// The stream's number.
    pub stream: u64,
}

impl Handler<StreamClosed> for Session {
    type Result = ();

    fn handle(&mut self, msg: StreamClosed, _: &mut Self::Context) {
        self.streams.remove(&msg.stream);
        if self
            .standalone
            .as_ref()
            .is_some_and(|(number, _)| *number == msg.stream)
        {
            self.standalone = None;
        }
    }
}

/// Deliver a frame that belongs to no request on the standalone outlet. Sent by
/// [`SessionHandle::notify`] and by registry broadcasts.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Notify(pub Frame);

impl Handler<Notify> for Session {
    type Result = ();

    fn handle(&mut self, msg: Notify, _: &mut Self::Context) {
        self.deliver_standalone(msg.0);
    }
}

/// End the session. Sent by [`SessionHandle::close`] (HTTP DELETE, idle expiry, shutdown).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Close;

impl Handler<Close> for Session {
    type Result = ();

    fn handle(&mut self, _: Close, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

/// Open the standalone SSE stream (HTTP GET); replies with the connection's receiver.
#[derive(Debug, Message)]
#[rtype(result = "mpsc::Receiver<SseEvent>")]
pub struct OpenStandalone {
    /// The `retry` advice of the priming event.
    pub retry: Duration,
}

impl Handler<OpenStandalone> for Session {
    type Result = MessageResult<OpenStandalone>;

    fn handle(&mut self, msg: OpenStandalone, ctx: &mut Self::Context) -> Self::Result {
        if let Some((number, _)) = self.standalone.take()
            && let Some(old) = self.streams.remove(&number)
        {
            old.do_send(CloseStream);
        }
        let number = self.shared.next_stream.fetch_add(1, Ordering::Relaxed) + 1;
        let (addr, rx) = SseStream::open(
            self.session_handle(ctx),
            number,
            false,
            self.store.clone(),
            msg.retry,
            self.metrics.clone(),
        );
        self.streams.insert(number, addr.clone());
        self.standalone = Some((number, crate::sse_stream::SseOutlet::outlet(addr)));
        MessageResult(rx)
    }
}

/// Resume a stream after `Last-Event-ID`. Replies with the new connection's receiver, or
/// `None` when the stream is unknown (never existed, or its buffer was evicted).
#[derive(Debug, Message)]
#[rtype(result = "Option<mpsc::Receiver<SseEvent>>")]
pub struct Resume {
    /// The last event the client saw.
    pub last: EventId,
}

impl Handler<Resume> for Session {
    type Result = actix::ResponseFuture<Option<mpsc::Receiver<SseEvent>>>;

    fn handle(&mut self, msg: Resume, _: &mut Self::Context) -> Self::Result {
        if let Some(stream) = self.streams.get(&msg.last.stream) {
            let attach = stream.send(Attach {
                after: Some(msg.last.seq),
            });
            return Box::pin(async move { attach.await.ok().flatten() });
        }
        // The stream has finished: replay what the store still holds, then end.
        let replay = self
            .store
            .as_ref()
            .and_then(|store| store.replay(&self.shared.id, msg.last));
        Box::pin(async move {
            let events = replay?;
            let (tx, rx) = mpsc::channel(events.len().max(1));
            for (id, data) in events {
                let _ = tx.try_send(SseEvent {
                    id: Some(id),
                    data,
                    retry: None,
                });
            }
            Some(rx)
        })
    }
}

/// Counts of one session's live work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionStats {
    /// Requests in flight.
    pub in_flight: usize,
    /// Server-to-client requests awaiting an answer.
    pub pending_peer_requests: usize,
    /// Live SSE streams.
    pub streams: usize,
}

/// Query the session's counts.
#[derive(Debug, Message)]
#[rtype(result = "SessionStats")]
pub struct GetSessionStats;

impl Handler<GetSessionStats> for Session {
    type Result = MessageResult<GetSessionStats>;

    fn handle(&mut self, _: GetSessionStats, _: &mut Self::Context) -> Self::Result {
        MessageResult(SessionStats {
            in_flight: self.shared.lock_requests().len(),
            pending_peer_requests: self.pending.len(),
            streams: self.streams.len(),
        })
    }
}
