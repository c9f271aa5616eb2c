//! The session actor and its messages.
//!
//! Started by a [`Registry`](crate::dev::Registry) (over HTTP on the worker that accepted
//! `initialize`; on stdio when the connection opens). Owns the server-to-client requests
//! awaiting an answer, hands the peer's notifications to the protocol layer in order, and opens
//! and resumes the session's streams.
//!
//! Lifecycle: Started → Running (handles the messages below) → Stopping on [`Close`], idle
//! expiry or the registry's shutdown → Stopped: the session's work is torn down (every
//! in-flight request is cancelled and sends nothing, streams close, pending server-to-client
//! requests fail with `Closed`). When the actor is gone (stopped, or killed by a panic in one
//! of its handlers) its registry receives [`SessionStopped`](crate::registry::SessionStopped)
//! and cleans up after it.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use actix::{
    Actor, ActorContext, ActorFutureExt as _, AsyncContext, Context, Handler, Message,
    MessageResult, Recipient, WrapFuture as _,
};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::carry::Carry;
use crate::cluster::Relay;
use crate::event_log::{EventLog, SseEvent, StreamReceiver};
use crate::event_store::{Replay, SessionEvents};
use crate::ids::EventId;
use crate::jsonrpc::{ErrorObject, Frame, Notification, Request, RequestId, Response};
use crate::metrics::{Gauge, Metrics};
use crate::outlet::Outlet;
use crate::registry::SessionStopped;
use crate::session::{SessionHandle, SessionParts, SessionShared, lock};
use crate::sse_stream::{Attach, CloseStream, SseStream};

struct PendingPeer {
    reply: oneshot::Sender<Result<Value, ErrorObject>>,
    outlet: Outlet,
    origin: Option<RequestId>,
}

/// The session actor. See the module docs.
pub struct Session {
    shared: Arc<SessionShared>,
    pending: HashMap<RequestId, PendingPeer>,
    registry: Option<Recipient<SessionStopped>>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.shared.id)
            .field("in_flight", &self.shared.lock_requests().len())
            .field("pending_peer_requests", &self.pending.len())
            .field("streams", &lock(&self.shared.streams).len())
            .finish()
    }
}

impl Session {
    /// Starts a session actor on the current arbiter; `registry` learns when it is gone.
    pub(crate) fn start(
        parts: SessionParts,
        registry: Recipient<SessionStopped>,
        events: Option<Arc<dyn SessionEvents>>,
        metrics: Arc<Metrics>,
        relay: Option<Arc<dyn Relay>>,
    ) -> SessionHandle {
        // In a cluster, other nodes may serve the same session: numbers from a random base
        // (below 2^52, so ids stay exact in JSON numbers everywhere) keep theirs apart.
        let (first_peer_id, first_stream) = match relay {
            Some(_) => {
                let base = crate::cluster::random_u64() >> 12;
                (i64::try_from(base).unwrap_or(1).max(1), base)
            }
            None => (1, 0),
        };
        let shared = Arc::new(SessionShared {
            id: parts.id,
            token: CancellationToken::new(),
            dispatch: parts.dispatch,
            config: parts.config,
            metrics: metrics.clone(),
            requests: Mutex::default(),
            data: RwLock::new(None),
            next_peer_id: AtomicI64::new(first_peer_id),
            next_stream: AtomicU64::new(first_stream),
            last_seen: Mutex::new(Instant::now()),
            opened: Instant::now(),
            established: AtomicBool::new(false),
            connections: AtomicUsize::new(0),
            standalone: Mutex::new(parts.standalone.map(|outlet| (0, outlet))),
            standalone_since: AtomicU64::new(0),
            streams: Mutex::default(),
            events,
            torn_down: AtomicBool::new(false),
            owner: std::sync::OnceLock::new(),
            addr: std::sync::OnceLock::new(),
            relay,
        });
        metrics.inc(Gauge::Sessions);
        let actor_shared = shared.clone();
        let addr = Session::create(move |ctx| {
            ctx.set_mailbox_capacity(1024);
            Session {
                shared: actor_shared,
                pending: HashMap::new(),
                registry: Some(registry),
            }
        });
        let addr = Arc::new(addr);
        let _ = shared.addr.set(Arc::downgrade(&addr));
        SessionHandle { shared, addr }
    }

    /// A handle of this session: the address its handles share while any lives, else a new
    /// one.
    fn session_handle(&self, ctx: &Context<Self>) -> SessionHandle {
        let addr = self
            .shared
            .addr
            .get()
            .and_then(std::sync::Weak::upgrade)
            .unwrap_or_else(|| Arc::new(ctx.address()));
        SessionHandle {
            shared: self.shared.clone(),
            addr,
        }
    }

    /// Forgets a pending server-to-client request and tells the peer it is cancelled, on the
    /// stream it travelled (or the standalone one when that has ended).
    fn forget_peer(&mut self, id: &RequestId, reason: &str, ctx: &Context<Self>) {
        let Some(pending) = self.pending.remove(id) else {
            return;
        };
        self.shared.metrics.dec(Gauge::PeerRequests);
        let frame = Frame::notification(
            "notifications/cancelled",
            Some(&json!({"requestId": id, "reason": reason})),
        );
        if pending.outlet.deliver(frame.clone()).is_err() {
            self.session_handle(ctx).notify(frame);
        }
    }
}

impl Actor for Session {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Self::Context) {
        self.shared.tear_down();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        for _ in self.pending.drain() {
            self.shared.metrics.dec(Gauge::PeerRequests);
        }
        self.shared.metrics.dec(Gauge::Sessions);
        if let Some(registry) = self.registry.take() {
            // Also after a panic in a handler, when `stopped` never ran.
            registry.do_send(SessionStopped {
                shared: self.shared.clone(),
            });
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
    /// What its transport hands the runtime with it.
    pub carry: Carry,
}

impl Handler<HandleRequest> for Session {
    type Result = ();

    fn handle(&mut self, msg: HandleRequest, ctx: &mut Self::Context) {
        self.session_handle(ctx)
            .request_with(msg.request, msg.outlet, msg.carry);
    }
}

/// Handle one notification from the peer (other than `notifications/cancelled`, which acts at
/// once). Sent by the transport.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct HandleNotification(pub Notification);

impl Handler<HandleNotification> for Session {
    type Result = ();

    fn handle(&mut self, msg: HandleNotification, ctx: &mut Self::Context) {
        let handle = self.session_handle(ctx);
        self.shared.dispatch.notification(msg.0, Some(&handle));
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
                self.shared.metrics.dec(Gauge::PeerRequests);
                // The waiting request may have gone meanwhile; the answer is then moot.
                let _ = pending.reply.send(msg.0.outcome);
            }
            None => match &self.shared.relay {
                Some(relay) => relay.publish(crate::cluster::BusMessage::Response {
                    session: self.shared.id.clone(),
                    message: Frame::response(&msg.0.id, &msg.0.outcome).json.to_string(),
                }),
                None => {
                    tracing::debug!(session = %self.shared.id, id = %msg.0.id, "ignored a response to an unknown request")
                }
            },
        }
    }
}

/// Hand the peer's answer to one of our requests to the session, when another node of the
/// cluster relayed it: an answer that matches nothing here is dropped, not relayed again.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct HandleRelayedResponse(pub Response);

impl Handler<HandleRelayedResponse> for Session {
    type Result = ();

    fn handle(&mut self, msg: HandleRelayedResponse, _: &mut Self::Context) {
        if let Some(pending) = self.pending.remove(&msg.0.id) {
            self.shared.metrics.dec(Gauge::PeerRequests);
            let _ = pending.reply.send(msg.0.outcome);
        }
    }
}

/// Send a request to the peer and route its answer back. Sent by
/// [`RequestScope::peer_request`](crate::dev::RequestScope::peer_request); the answer arrives on
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
        self.shared.metrics.inc(Gauge::PeerRequests);
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

    fn handle(&mut self, msg: ForgetPeerRequest, ctx: &mut Self::Context) {
        self.forget_peer(&msg.id, &msg.reason, ctx);
    }
}

/// An in-flight request that made server-to-client requests has ended. Sent by
/// [`InFlight`](crate::dev::InFlight) when it stops. The session cancels the server-to-client
/// requests it still awaited (their `notifications/cancelled` travel on its stream), then
/// finishes its outlet, so a cancelled request's stream ends after them. (A request that made
/// none finishes its outlet itself.)
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

    fn handle(&mut self, msg: RequestFinished, ctx: &mut Self::Context) {
        let nested: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, pending)| pending.origin.as_ref() == Some(&msg.id))
            .map(|(id, _)| id.clone())
            .collect();
        for id in nested {
            self.forget_peer(&id, "the request that needed it has ended", ctx);
        }
        msg.outlet.finish();
    }
}

/// A stream of this session has stopped. Sent by [`SseStream`] when it stops.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct StreamClosed {
    /// The stream's number.
    pub stream: u64,
}

impl Handler<StreamClosed> for Session {
    type Result = ();

    fn handle(&mut self, msg: StreamClosed, _: &mut Self::Context) {
        lock(&self.shared.streams).remove(&msg.stream);
        let mut standalone = lock(&self.shared.standalone);
        if standalone
            .as_ref()
            .is_some_and(|(number, _)| *number == msg.stream)
        {
            *standalone = None;
        }
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

/// Open the standalone SSE stream (HTTP GET); replies with its connection. A previous
/// standalone stream is closed.
#[derive(Debug, Message)]
#[rtype(result = "StreamReceiver")]
pub struct OpenStandalone {
    /// The `retry` advice of the priming event.
    pub retry: Duration,
}

impl Handler<OpenStandalone> for Session {
    type Result = MessageResult<OpenStandalone>;

    fn handle(&mut self, msg: OpenStandalone, ctx: &mut Self::Context) -> Self::Result {
        MessageResult(self.open_standalone(msg.retry, Vec::new(), ctx))
    }
}

impl Session {
    /// Opens the standalone stream, which first hands its connection `earlier` (the replay of
    /// the standalone stream it goes on from); a previous standalone stream is closed.
    fn open_standalone(
        &mut self,
        retry: Duration,
        earlier: Vec<SseEvent>,
        ctx: &mut Context<Self>,
    ) -> StreamReceiver {
        let handle = self.session_handle(ctx);
        let number = handle.next_stream() | EventId::STANDALONE;
        let (log, receiver) = EventLog::connected_after(handle, number, retry, false, earlier);
        let stream = SseStream::start(log.clone(), self.shared.metrics.clone());
        let opened_ms = crate::cluster::epoch_ms();
        let previous = {
            let mut standalone = lock(&self.shared.standalone);
            self.shared
                .standalone_since
                .store(opened_ms, Ordering::Release);
            standalone.replace((number, log.outlet()))
        };
        let mut streams = lock(&self.shared.streams);
        if let Some(old) = previous.and_then(|(old, _)| streams.remove(&old)) {
            old.do_send(CloseStream);
        }
        streams.insert(number, stream);
        drop(streams);
        if let Some(relay) = &self.shared.relay {
            relay.publish(crate::cluster::BusMessage::StandaloneOpened {
                session: self.shared.id.clone(),
                at_ms: opened_ms,
            });
        }
        receiver
    }
}

/// Resume a stream after `Last-Event-ID`. Replies with the new connection, or why there is
/// none.
#[derive(Debug, Message)]
#[rtype(result = "Resumed")]
pub struct Resume {
    /// The last event the client saw.
    pub last: EventId,
    /// The `retry` advice of the priming event, when a standalone stream goes on as a new one
    /// here.
    pub retry: Duration,
}

/// The outcome of a [`Resume`].
#[derive(Debug)]
pub enum Resumed {
    /// The connection: the kept events after the last one seen, then (when the stream is still
    /// live, or is the session's standalone stream, which goes on here as a new one) what it
    /// sends next. Events the store evicted meanwhile are missing (logged).
    Stream(StreamReceiver),
    /// The stream is unknown: it never existed, or nothing of it is remembered.
    Unknown,
    /// The stream has finished and every event after the last one seen was evicted: there is
    /// nothing left to replay.
    Evicted,
}

impl Resumed {
    /// The connection, if there is one.
    pub fn into_stream(self) -> Option<StreamReceiver> {
        match self {
            Self::Stream(receiver) => Some(receiver),
            Self::Unknown | Self::Evicted => None,
        }
    }
}

impl Handler<Resume> for Session {
    type Result = actix::ResponseActFuture<Self, Resumed>;

    fn handle(&mut self, msg: Resume, _: &mut Self::Context) -> Self::Result {
        let Resume { last, retry } = msg;
        let events = self.shared.events.clone();
        let live = lock(&self.shared.streams).get(&last.stream).cloned();
        if let Some(stream) = live {
            let attach = stream.send(Attach {
                after: Some(last.seq),
            });
            return Box::pin(
                async move {
                    match attach.await {
                        Ok(receiver) => Resumed::Stream(receiver),
                        // The stream ended while the resume was on its way: it is finished
                        // now, and what it sent is in the store.
                        Err(_) => finished(replay(events.as_deref(), last).await),
                    }
                }
                .into_actor(self),
            );
        }
        if !last.is_standalone() {
            // A stream kept on the node that served it, and not here: that node is asked.
            let elsewhere = match (&events, &self.shared.relay) {
                (Some(kept), Some(relay)) if kept.kept_on_its_node(last.stream) => {
                    Some((relay.clone(), self.shared.id.clone()))
                }
                _ => None,
            };
            return Box::pin(
                async move {
                    let mut found = replay(events.as_deref(), last).await;
                    if let (Err(Resumed::Unknown), Some((relay, id))) = (&found, elsewhere) {
                        found = replayed(relay.replay_elsewhere(&id, last).await, last);
                    }
                    finished(found)
                }
                .into_actor(self),
            );
        }
        // The standalone stream, not live here (it lived on another node of a cluster, or its
        // connection ended): what the store holds of it, then it goes on here as the session's
        // standalone stream, so that what the session is sent from now on reaches the client.
        Box::pin(
            async move { replay(events.as_deref(), last).await }
                .into_actor(self)
                .map(move |replay, act, ctx| match replay {
                    Ok(earlier) => Resumed::Stream(act.open_standalone(retry, earlier, ctx)),
                    Err(not) => not,
                }),
        )
    }
}

/// What the store holds of `last`'s stream after it, as events for a connection; or why it
/// cannot be resumed.
async fn replay(
    events: Option<&dyn SessionEvents>,
    last: EventId,
) -> Result<Vec<SseEvent>, Resumed> {
    let replay = match events {
        Some(events) => events.replay(last).await,
        None => Replay::Unknown,
    };
    replayed(replay, last)
}

/// `replay`, what was found of `last`'s stream after it, as events for a connection; or why it
/// cannot be resumed.
fn replayed(replay: Replay, last: EventId) -> Result<Vec<SseEvent>, Resumed> {
    match replay {
        Replay::Unknown => Err(Resumed::Unknown),
        Replay::Events { events, gap: true } if events.is_empty() => Err(Resumed::Evicted),
        Replay::Events { events, gap } => {
            if gap {
                tracing::warn!(%last, "resuming a stream whose events were partly evicted");
            }
            Ok(events
                .into_iter()
                .map(|(id, data)| SseEvent {
                    id: Some(id),
                    data,
                    retry: None,
                })
                .collect())
        }
    }
}

/// The resume of a finished stream (or of a request's stream that lives on another node of a
/// cluster): what the store still holds after the last event seen, then the end.
fn finished(replay: Result<Vec<SseEvent>, Resumed>) -> Resumed {
    match replay {
        Ok(events) => Resumed::Stream(StreamReceiver::replay(events)),
        Err(not) => not,
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
            streams: lock(&self.shared.streams).len(),
        })
    }
}
