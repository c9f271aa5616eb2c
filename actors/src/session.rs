//! Sessions: one per connected client (one per stdio connection, one per `Mcp-Session-Id` over
//! HTTP), each a [`Session`] actor with a cheap, cloneable [`SessionHandle`].
//!
//! The handle reaches the state the session's workers share: the in-flight table (request id
//! → [`InFlight`](crate::dev::InFlight) actor), the standalone outlet (the stdio writer or the GET
//! stream), the session's live streams and its event log. A transport admits a request and a
//! `notifications/cancelled` acts on it at once, on the worker that received them, without a
//! hop through the session's mailbox ([`SessionHandle::request`]); both stay ordered with each
//! other because both act at once under the table's lock. Session-wide notifications go
//! straight to the standalone outlet ([`SessionHandle::notify`]), which never queues without
//! bound. What the actor itself owns (the server-to-client requests awaiting an answer, the
//! protocol layer's notifications, opening and resuming streams) is in [`Session`]'s handlers.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};
use std::time::Duration;

use actix::Addr;
use serde::Deserialize as _;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::carry::Carry;
use crate::cluster::Relay;
use crate::dispatch::Dispatch;
use crate::event_log::StreamReceiver;
use crate::event_store::SessionEvents;
use crate::ids::{EventId, SessionId};
use crate::in_flight::{Abort, Cancel, InFlight};
use crate::jsonrpc::{ErrorObject, Frame, Notification, Request, RequestId, Response};
use crate::metrics::Metrics;
use crate::outlet::Outlet;
use crate::scope::{Home, RequestScope};
use crate::sse_stream::{CloseStream, SseStream};

pub use crate::in_flight_table::SERVER_BUSY;
use crate::in_flight_table::{Cancelled, InFlightTable};
pub(crate) use crate::session_actor::Close;
pub use crate::session_actor::{
    ForgetPeerRequest, GetSessionStats, HandleNotification, HandleRelayedResponse, HandleRequest,
    HandleResponse, OpenStandalone, RequestFinished, Resume, Resumed, SendPeerRequest, Session,
    SessionStats, StreamClosed,
};

/// Limits of one session. Defaults are not part of semver.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Most requests one session may have in flight at once (default 256); past it a request is
    /// answered at once with [`SERVER_BUSY`].
    pub max_in_flight: usize,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self { max_in_flight: 256 }
    }
}

/// Called once when a session has stopped, with its id.
pub type OnStopped = Box<dyn FnOnce(&SessionId) + Send + Sync>;

/// Everything needed to open a session (see
/// [`RegistryHandle::open`](crate::RegistryHandle::open)).
pub struct SessionParts {
    /// The session's id.
    pub id: SessionId,
    /// The protocol layer.
    pub dispatch: Arc<dyn Dispatch>,
    /// The session's limits.
    pub config: SessionConfig,
    /// Where frames unrelated to any request go (the stdio writer); `None` until a GET stream
    /// opens.
    pub standalone: Option<Outlet>,
    /// Called once when the session has stopped and its registry has cleaned up after it.
    pub on_stopped: Option<OnStopped>,
    /// Who the session belongs to: an opaque key the transport derives from the credentials
    /// that open it (see [`SessionHandle::bind_owner`]), bound before the session is found, and
    /// counted against [`RegistryConfig::max_sessions_per_principal`](crate::dev::RegistryConfig).
    /// `None` for sessions opened without credentials.
    pub owner: Option<Arc<str>>,
}

impl fmt::Debug for SessionParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionParts")
            .field("id", &self.id)
            .field("config", &self.config)
            .field("owner", &self.owner)
            .finish()
    }
}

/// A session's live streams by number: a few at a time (its standalone stream, the POST
/// answers still streaming, at most [`SessionConfig::max_in_flight`] of those), so a list
/// searched in order, which costs a session one small allocation where a hash table costs
/// several times that.
#[derive(Default)]
pub(crate) struct StreamTable(Vec<(u64, Addr<SseStream>)>);

impl StreamTable {
    /// Adds or replaces stream `number`.
    pub(crate) fn insert(&mut self, number: u64, stream: Addr<SseStream>) {
        match self.0.iter_mut().find(|(n, _)| *n == number) {
            Some(entry) => entry.1 = stream,
            None => {
                if self.0.capacity() == 0 {
                    // Room for one (the usual: a standalone stream), not the four a first
                    // push makes room for; more grow the list as usual.
                    self.0.reserve_exact(1);
                }
                self.0.push((number, stream));
            }
        }
    }

    /// Takes stream `number` out.
    pub(crate) fn remove(&mut self, number: &u64) -> Option<Addr<SseStream>> {
        let at = self.0.iter().position(|(n, _)| n == number)?;
        let (_, stream) = self.0.swap_remove(at);
        if self.0.is_empty() {
            // A session whose streams have all ended holds no memory for them.
            self.0 = Vec::new();
        }
        Some(stream)
    }

    /// Stream `number`.
    pub(crate) fn get(&self, number: &u64) -> Option<&Addr<SseStream>> {
        self.0.iter().find(|(n, _)| n == number).map(|(_, s)| s)
    }

    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Every stream.
    fn into_streams(self) -> impl Iterator<Item = Addr<SseStream>> {
        self.0.into_iter().map(|(_, stream)| stream)
    }
}

pub(crate) struct SessionShared {
    pub(crate) id: SessionId,
    pub(crate) token: CancellationToken,
    pub(crate) dispatch: Arc<dyn Dispatch>,
    pub(crate) config: SessionConfig,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) requests: Mutex<InFlightTable>,
    pub(crate) data: RwLock<Option<Arc<dyn Any + Send + Sync>>>,
    pub(crate) next_peer_id: AtomicI64,
    pub(crate) next_stream: AtomicU64,
    pub(crate) last_seen: Mutex<Instant>,
    /// When the session was opened.
    pub(crate) opened: Instant,
    /// Whether the client finished the protocol's handshake (see [`SessionHandle::establish`]).
    pub(crate) established: AtomicBool,
    /// Open stream connections: a session with a connection is never idle.
    pub(crate) connections: AtomicUsize,
    pub(crate) standalone: Mutex<Option<(u64, Outlet)>>,
    /// When the standalone stream opened (ms since the Unix epoch), in a cluster.
    pub(crate) standalone_since: std::sync::atomic::AtomicU64,
    /// The live streams, by number, so `Last-Event-ID` can reattach to them.
    pub(crate) streams: Mutex<StreamTable>,
    pub(crate) events: Option<Arc<dyn SessionEvents>>,
    pub(crate) torn_down: AtomicBool,
    /// The way to the other nodes of a cluster, when there are any.
    pub(crate) relay: Option<Arc<dyn Relay>>,
    /// Who the session belongs to (an opaque key of the transport's choosing), bound once.
    pub(crate) owner: OnceLock<Arc<str>>,
    /// The address its handles share (the registry's handle keeps it), so that the actor makes
    /// a handle of itself without allocating a new address while any handle lives.
    pub(crate) addr: OnceLock<std::sync::Weak<Addr<Session>>>,
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SessionShared {
    pub(crate) fn lock_requests(&self) -> MutexGuard<'_, InFlightTable> {
        lock(&self.requests)
    }

    pub(crate) fn id(&self) -> &SessionId {
        &self.id
    }

    /// Tracks a POST answer's live stream so `Last-Event-ID` finds it, from the moment its
    /// actor exists (before that actor has run: a client may resume at once); `false` once the
    /// session is torn down, when the stream must close.
    pub(crate) fn track_stream(&self, number: u64, stream: Addr<SseStream>) -> bool {
        let mut streams = lock(&self.streams);
        // Checked under the map's lock: a tear-down drains the map after it sets the flag.
        if self.torn_down.load(Ordering::Acquire) {
            return false;
        }
        streams.insert(number, stream);
        true
    }

    /// Ends everything the session has: no request is admitted after this, every running
    /// request is cancelled (and sends nothing), every stream closes and the event log is
    /// dropped. Idempotent: run by the session actor when it stops, and by the registry when it
    /// learns the session is gone (also after a panic).
    pub(crate) fn tear_down(&self) {
        if self.torn_down.swap(true, Ordering::AcqRel) {
            return;
        }
        // Cancelled under the table's lock: no request is admitted after this point.
        let in_flight = {
            let mut table = self.lock_requests();
            self.token.cancel();
            table.drain()
        };
        for actor in in_flight {
            actor.do_send(Cancel {
                reason: Some("session closed".into()),
            });
        }
        lock(&self.standalone).take();
        let streams = std::mem::take(&mut *lock(&self.streams)).into_streams();
        for stream in streams {
            stream.do_send(CloseStream);
        }
        if let Some(events) = &self.events {
            events.close();
        }
    }
}

/// A cheap, cloneable handle on a live session: its shared state and its actor's address.
/// Cloning one allocates nothing (an actix address's own clone does).
#[derive(Clone)]
pub struct SessionHandle {
    pub(crate) shared: Arc<SessionShared>,
    pub(crate) addr: Arc<Addr<Session>>,
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
    pub(crate) fn shared_arc(&self) -> &Arc<SessionShared> {
        &self.shared
    }

    /// Whether both handles are on the same session.
    pub fn same_session(&self, other: &SessionHandle) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
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

    /// Binds the session to its owner: an opaque key the transport derives from the credentials
    /// that opened it (the HTTP transport uses the token's issuer and subject), so that later
    /// requests can be checked against it. Bound once: `false` when an owner was already bound
    /// (it is kept). Bind before the session id is handed out.
    pub fn bind_owner(&self, owner: Arc<str>) -> bool {
        self.shared.owner.set(owner).is_ok()
    }

    /// The owner bound with [`bind_owner`](Self::bind_owner), if any.
    pub fn owner(&self) -> Option<&str> {
        self.shared.owner.get().map(|owner| &**owner)
    }

    /// Marks the session as established: its client finished the protocol's handshake (MCP:
    /// `notifications/initialized` after a successful `initialize`). A session that is not
    /// established is closed once idle for
    /// [`RegistryConfig::handshake_timeout`](crate::dev::RegistryConfig).
    pub fn establish(&self) {
        self.shared.established.store(true, Ordering::Release);
    }

    /// Whether [`establish`](Self::establish) was called.
    pub fn is_established(&self) -> bool {
        self.shared.established.load(Ordering::Acquire)
    }

    /// How long ago the session was opened.
    pub fn age(&self) -> Duration {
        self.shared.opened.elapsed()
    }

    /// Marks the session as used now (idle expiry counts from the last use).
    pub fn touch(&self) {
        *lock(&self.shared.last_seen) = Instant::now();
    }

    /// How long the session has been idle: zero while it has requests in flight or stream
    /// connections open.
    pub fn idle_for(&self) -> Duration {
        if self.shared.connections.load(Ordering::Relaxed) > 0
            || self.shared.lock_requests().len() > 0
        {
            return Duration::ZERO;
        }
        lock(&self.shared.last_seen).elapsed()
    }

    /// Requests in flight (including those in their first poll).
    pub fn in_flight(&self) -> usize {
        self.shared.lock_requests().len()
    }

    pub(crate) fn activity(&self, delta: isize) {
        if delta >= 0 {
            self.shared
                .connections
                .fetch_add(delta.unsigned_abs(), Ordering::Relaxed);
        } else {
            self.shared
                .connections
                .fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
        }
    }

    /// The session's event log (for resumable streams), when its transport keeps one.
    pub fn events(&self) -> Option<&Arc<dyn SessionEvents>> {
        self.shared.events.as_ref()
    }

    /// Allocates the id of a new server-to-client request of this session.
    pub(crate) fn next_peer_id(&self) -> i64 {
        self.shared.next_peer_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Allocates the number of a new stream of this session.
    pub fn next_stream(&self) -> u64 {
        self.shared.next_stream.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Hands a request to the session; its frames go to `outlet`.
    ///
    /// The request's id is reserved in the in-flight table at once, on the caller's arbiter,
    /// or the request is refused with an error answer (its id is already in flight, or the
    /// session has [`SessionConfig::max_in_flight`] requests in flight). The handler is then
    /// polled once right here: answered at once, the request is done and its row released
    /// before the answer leaves; still pending, it becomes an [`InFlight`] actor on this
    /// arbiter and its row records the actor, where `notifications/cancelled` finds it. On a
    /// session that has ended, the outlet is finished without an answer.
    pub fn request(&self, request: Request, outlet: Outlet) {
        self.request_with(request, outlet, Carry::default());
    }

    /// Like [`request`](Self::request), with what the transport hands the runtime with it
    /// ([`Carry`]): where it came from (data only the transport knows, such as the caller's
    /// credentials or the HTTP headers, which the dispatch reads back from the request's
    /// scope), and what its work keeps until it ends (admission slots, a byte budget;
    /// released at once when the request is refused).
    pub fn request_with(&self, request: Request, outlet: Outlet, carry: Carry) {
        let shared = &self.shared;
        let dispatch = &shared.dispatch;
        let progress_token = match progress_token(&request) {
            Ok(token) => token,
            Err(error) => {
                outlet.deliver_or_log(Frame::error(Some(&request.id), &error), "refusal");
                outlet.finish();
                return;
            }
        };
        let cancellable = dispatch.is_cancellable(&request.method);
        let admitted = {
            let mut table = shared.lock_requests();
            if shared.token.is_cancelled() {
                None
            } else {
                Some(table.admit(&request.id, cancellable, shared.config.max_in_flight))
            }
        };
        let ticket = match admitted {
            None => {
                outlet.finish();
                return;
            }
            Some(Err(error)) => {
                outlet.deliver_or_log(Frame::error(Some(&request.id), &error), "refusal");
                outlet.finish();
                return;
            }
            Some(Ok(ticket)) => ticket,
        };
        let id = request.id.clone();
        let scope = RequestScope::new(
            id.clone(),
            outlet,
            Home::Session(self.clone(), ticket),
            progress_token,
            shared.metrics.clone(),
            carry,
        );
        // The handler's first poll runs outside the lock (it may call back into the session).
        if let Some(actor) = InFlight::begin(request, scope, dispatch) {
            let cancelled = shared.lock_requests().started(&id, ticket, actor.clone());
            if let Some(reason) = cancelled {
                actor.do_send(Cancel { reason });
            }
        }
    }

    /// Releases a finished request's row (called by the request). Only the row reserved under
    /// `ticket` goes: a later request that reused the id keeps its row.
    pub(crate) fn forget_request(&self, id: &RequestId, ticket: u64) {
        self.shared.lock_requests().forget(id, ticket);
    }

    /// Hands a request to the session in mailbox order, waiting while the mailbox is full
    /// (backpressure for transports that read as fast as the peer writes, such as stdio).
    ///
    /// # Errors
    /// When the session has stopped.
    pub async fn request_with_backpressure(
        &self,
        request: Request,
        outlet: Outlet,
        carry: Carry,
    ) -> Result<(), actix::MailboxError> {
        self.addr
            .send(HandleRequest {
                request,
                outlet,
                carry,
            })
            .await
    }

    /// Hands a notification from the peer to the session. A `notifications/cancelled` acts at
    /// once on the in-flight table (as requests are admitted at once), so it can never overtake
    /// or trail a request the peer sent around it; any other goes to the protocol layer through
    /// the session's mailbox.
    pub fn notification(&self, notification: Notification) {
        if notification.method == "notifications/cancelled" {
            let found = cancel_request(&self.shared, notification.params.as_ref());
            if !found && let Some(relay) = &self.shared.relay {
                relay.publish(crate::cluster::BusMessage::Cancel {
                    session: self.shared.id.clone(),
                    params: notification.params,
                });
            }
        } else {
            self.addr.do_send(HandleNotification(notification));
        }
    }

    /// Hands the peer's answer to one of our requests to the session.
    pub fn response(&self, response: Response) {
        self.addr.do_send(HandleResponse(response));
    }

    /// Acts on a `notifications/cancelled` another node of the cluster relayed: cancels the
    /// request it names when it is in flight here, and relays nothing.
    pub fn cancel_here(&self, params: Option<&Value>) {
        cancel_request(&self.shared, params);
    }

    /// Hands the peer's answer that another node of the cluster relayed to the session: it
    /// reaches the request waiting here for it, if any, and is relayed no further.
    pub fn response_here(&self, response: Response) {
        self.addr.do_send(HandleRelayedResponse(response));
    }

    /// Sends a frame that belongs to no request (list-changed, resource updates, session logs)
    /// on the session's standalone outlet, at once and without queueing: on a GET stream it is
    /// stored for resumption and sent if the connection keeps up (see
    /// [`EventLog`](crate::dev::EventLog)). Dropped (and logged) when no standalone outlet is open.
    ///
    /// In a cluster, a frame for a session with no standalone stream here is relayed to the
    /// node that has it.
    pub fn notify(&self, frame: Frame) {
        if let Err(frame) = self.try_notify(frame) {
            match &self.shared.relay {
                Some(relay) => relay.publish(crate::cluster::BusMessage::Notify {
                    session: self.shared.id.clone(),
                    frame: frame.json.to_string(),
                }),
                None => {
                    tracing::debug!(session = %self.shared.id, ?frame, "dropped a session notification: no standalone stream")
                }
            }
        }
    }

    /// Like [`notify`](Self::notify), but never relayed: a frame for a session with no
    /// standalone stream on this node is dropped (another node of the cluster relayed it, or
    /// it is a broadcast every node delivers itself).
    pub fn notify_here(&self, frame: Frame) {
        if let Err(frame) = self.try_notify(frame) {
            tracing::debug!(session = %self.shared.id, ?frame, "dropped a session notification: no standalone stream here");
        }
    }

    /// Closes the session's standalone stream on this node if it opened before `before_ms`
    /// (ms since the Unix epoch: when another node of the cluster opened one); whether it did.
    pub fn close_standalone_here(&self, before_ms: u64) -> bool {
        let mut standalone = lock(&self.shared.standalone);
        if standalone.is_none() || self.shared.standalone_since.load(Ordering::Acquire) >= before_ms
        {
            return false;
        }
        let Some((number, _)) = standalone.take() else {
            return false;
        };
        drop(standalone);
        if let Some(stream) = lock(&self.shared.streams).remove(&number) {
            stream.do_send(CloseStream);
        }
        true
    }

    /// Whether the session has a standalone stream (a GET stream, the stdio writer) open on
    /// this node.
    pub fn has_standalone(&self) -> bool {
        lock(&self.shared.standalone).is_some()
    }

    fn try_notify(&self, frame: Frame) -> Result<(), Frame> {
        let outlet = lock(&self.shared.standalone)
            .as_ref()
            .map(|(_, outlet)| outlet.clone());
        match outlet {
            Some(outlet) => {
                outlet.deliver_or_log(frame, "session notification");
                Ok(())
            }
            None => Err(frame),
        }
    }

    /// Aborts every request of the session that is still running (a server draining past its
    /// deadline), leaving the session open: each gets `notifications/cancelled` with `reason`
    /// on its outlet, its handler stops, and its outlet is finished. Returns how many there
    /// were.
    pub fn abort_all(&self, reason: &str) -> usize {
        let running = self.shared.lock_requests().take_running();
        for actor in &running {
            actor.do_send(Abort {
                reason: reason.to_owned(),
            });
        }
        running.len()
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
    ) -> Result<StreamReceiver, actix::MailboxError> {
        self.addr.send(OpenStandalone { retry }).await
    }

    /// Resumes a stream after `Last-Event-ID`: replays what it missed and, when the stream is
    /// still live, attaches the new connection to it; or tells why it cannot. The session's
    /// standalone stream (HTTP GET) goes on here after the replay, as a new standalone stream
    /// (its priming event carrying `retry`), wherever it lived before (another node of a
    /// cluster, or a connection that ended).
    ///
    /// # Errors
    /// When the session has stopped.
    pub async fn resume(
        &self,
        last: EventId,
        retry: Duration,
    ) -> Result<Resumed, actix::MailboxError> {
        self.addr.send(Resume { last, retry }).await
    }

    /// Counts of the session's live work.
    ///
    /// # Errors
    /// When the session has stopped.
    pub async fn stats(&self) -> Result<SessionStats, actix::MailboxError> {
        self.addr.send(GetSessionStats).await
    }
}

/// Cancels the in-flight request a `notifications/cancelled` names. Malformed or unknown
/// cancellations are ignored silently, as the spec asks.
///
/// `false` when the request it names is not known here (nor is it malformed): in a cluster,
/// it may be in flight on another node.
fn cancel_request(shared: &SessionShared, params: Option<&Value>) -> bool {
    let Some(id) = params
        .and_then(|p| p.get("requestId"))
        .and_then(|id| RequestId::deserialize(id).ok())
    else {
        return true;
    };
    let reason = params
        .and_then(|p| p.get("reason"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let outcome = shared.lock_requests().cancel(&id, reason.clone());
    match outcome {
        Cancelled::Running(actor) => actor.do_send(Cancel { reason }),
        Cancelled::Refused => {
            tracing::debug!(%id, "ignored a cancellation of a request that cannot be cancelled");
        }
        Cancelled::Marked => {}
        Cancelled::Unknown => return false,
    }
    true
}

/// The longest `progressToken` accepted, in bytes: the token is copied into every progress
/// notification (and every stored event of them), so it stays small.
pub const MAX_PROGRESS_TOKEN_LEN: usize = 256;

/// The member `key` of `value` when it is an object. The few members of params and `_meta`
/// are scanned, not looked up: a lookup hashes the key (a large object is looked up).
fn member<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    let object = value.as_object()?;
    if object.len() > 16 {
        return object.get(key);
    }
    object
        .iter()
        .find_map(|(name, member)| (name == key).then_some(member))
}

/// Reads `params._meta.progressToken` when it is a string or an integer (looked up once).
///
/// # Errors
/// The `-32602` refusal of a string token over [`MAX_PROGRESS_TOKEN_LEN`] bytes.
pub(crate) fn progress_token(request: &Request) -> Result<Option<Value>, ErrorObject> {
    let token = match &request.meta {
        // Without the key's capital `T` in it, nor an escape that could spell it, `_meta` has
        // no token: no need to read it. (Without branches, so that it compiles to vector code:
        // the envelope's own keys have no `T`.)
        Some(meta)
            if !meta.get().bytes().fold(false, |found, byte| {
                found | (byte == b'T') | (byte == b'\\')
            }) =>
        {
            return Ok(None);
        }
        Some(meta) => {
            let [token] = crate::jsonrpc::raw_members(meta, ["progressToken"]);
            match token.map(|raw| serde_json::from_str::<Value>(raw.get())) {
                Some(Ok(token)) => token,
                _ => return Ok(None),
            }
        }
        None => match request
            .params
            .as_ref()
            .and_then(|p| member(p, "_meta"))
            .and_then(|meta| member(meta, "progressToken"))
        {
            Some(token) => token.clone(),
            None => return Ok(None),
        },
    };
    if let Some(text) = token.as_str()
        && text.len() > MAX_PROGRESS_TOKEN_LEN
    {
        return Err(ErrorObject::invalid_params(format!(
            "_meta.progressToken is longer than {MAX_PROGRESS_TOKEN_LEN} bytes"
        )));
    }
    Ok((token.is_string() || token.is_i64() || token.is_u64()).then_some(token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{Incoming, parse, parse_keeping_meta};

    fn token(text: &str, keep_meta: bool) -> Result<Option<Value>, ErrorObject> {
        let parsed = if keep_meta {
            parse_keeping_meta(text.as_bytes())
        } else {
            parse(text.as_bytes())
        };
        match parsed {
            Ok(Incoming::Request(request)) => progress_token(&request),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_progress_token_is_found_however_meta_arrives_and_only_there() {
        let many: String = (0..20).map(|i| format!(r#""k{i}":{i},"#)).collect();
        for (meta, expected) in [
            (r#"{"a":"x"}"#.to_owned(), None),
            (
                r#"{"a":"T","progressToken":"p"}"#.to_owned(),
                Some(Value::from("p")),
            ),
            (r#"{"progressToken":7}"#.to_owned(), Some(Value::from(7))),
            // An escape can spell the key without a capital `T` in the text.
            (
                r#"{"progress\u0054oken":"e"}"#.to_owned(),
                Some(Value::from("e")),
            ),
            (
                format!(r#"{{{many}"progressToken":"big"}}"#),
                Some(Value::from("big")),
            ),
            (r#"{"nested":{"progressToken":"no"}}"#.to_owned(), None),
        ] {
            let text =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{meta}}}}}"#);
            for keep_meta in [true, false] {
                let found = token(&text, keep_meta).ok().flatten();
                assert_eq!(found, expected, "{meta} (kept as text: {keep_meta})");
            }
        }
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{{"progressToken":"{}"}}}}}}"#,
            "x".repeat(MAX_PROGRESS_TOKEN_LEN + 1)
        );
        assert!(token(&long, true).is_err() && token(&long, false).is_err());
    }
}
