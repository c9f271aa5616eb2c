//! SSE stream actor: one live server-sent-event stream of a session (a POST answer that
//! outlived its first moments, or the session's GET stream).
//!
//! Started by the session for a GET stream, and by a transport for a POST answer whose
//! [`EventLog`] settled into a stream ([`Settled::Stream`](crate::dev::Settled::Stream)). Owns the
//! stream's [`EventLog`], through which every event is numbered, stored and sent (see its docs
//! for the delivery and slow-client policy); the actor owns the stream's life. Receives
//! [`Attach`] (a resuming connection, from the session), [`DropConnection`] (SSE polling),
//! [`Finish`] (its request finished, from the log) and [`CloseStream`] (from the session).
//!
//! Lifecycle: Created (a POST answer is tracked by its session at once, so `Last-Event-ID`
//! finds it even before the actor first runs) → Running →
//! Stopped when it answers a request that finished, on [`CloseStream`] (its session stopped, or
//! a new GET stream replaced it). `stopped` closes the log (the connection ends after what it
//! has queued; the stored events stay resumable until evicted) and tells the session
//! ([`StreamClosed`]).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery>

use std::fmt;
use std::sync::Arc;

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message, MessageResult};

use crate::event_log::{EventLog, StreamReceiver};
use crate::metrics::{Gauge, Metrics};
use crate::session::StreamClosed;

/// The SSE stream actor. See the module docs.
pub struct SseStream {
    log: Arc<EventLog>,
    metrics: Arc<Metrics>,
}

impl fmt::Debug for SseStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SseStream").field("log", &self.log).finish()
    }
}

impl SseStream {
    /// Starts the actor that owns `log` from now on, on the current arbiter.
    pub fn start(log: Arc<EventLog>, metrics: Arc<Metrics>) -> Addr<Self> {
        metrics.inc(Gauge::Streams);
        let tracked = log
            .session()
            .filter(|_| log.ends_with_response())
            .map(|session| session.shared_arc().clone());
        let number = log.number();
        let addr = Actor::create(|ctx: &mut Context<Self>| {
            ctx.set_mailbox_capacity(64);
            Self { log, metrics }
        });
        // A POST answer is resumable from now on, before the actor first runs: its client may
        // have seen the priming event, lost the connection and resumed already. (A GET stream
        // is tracked by the session that opens it.)
        if let Some(session) = tracked
            && !session.track_stream(number, addr.clone())
        {
            addr.do_send(CloseStream);
        }
        addr
    }

    /// The stream's log.
    pub fn log(&self) -> &Arc<EventLog> {
        &self.log
    }
}

impl Actor for SseStream {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // The log tells its owner when the request it answers finishes; a stream that answers
        // none (a GET stream) is never told, and holds no address of itself (two allocations).
        if self.log.ends_with_response() {
            self.log.set_owner(ctx.address());
        }
        if self
            .log
            .session()
            .is_some_and(|session| !session.is_alive())
        {
            ctx.stop();
            return;
        }
        // The request may have finished before the actor started.
        if self.log.ends_with_response() && self.log.is_finished() {
            ctx.stop();
        }
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.log.close();
        if let Some(session) = self.log.session() {
            session.addr().do_send(StreamClosed {
                stream: self.log.number(),
            });
        }
        self.metrics.dec(Gauge::Streams);
    }
}

/// Attach a resuming connection: replays the stored events after `after` (when given), then
/// carries new ones. Replies with the connection. Sent by the session on `Last-Event-ID`.
#[derive(Debug, Message)]
#[rtype(result = "StreamReceiver")]
pub struct Attach {
    /// The last sequence number the client saw.
    pub after: Option<u64>,
}

impl Handler<Attach> for SseStream {
    type Result = MessageResult<Attach>;

    fn handle(&mut self, msg: Attach, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.log.attach(msg.after))
    }
}

/// Close this stream (its connection ends; stored events stay resumable until evicted). Sent
/// by the session when it stops or when a new GET stream replaces this one.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct CloseStream;

impl Handler<CloseStream> for SseStream {
    type Result = ();

    fn handle(&mut self, _: CloseStream, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

/// Drop the current connection but keep the stream (SSE polling: the client reconnects with
/// `Last-Event-ID` after the `retry` interval).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct DropConnection;

impl Handler<DropConnection> for SseStream {
    type Result = ();

    fn handle(&mut self, _: DropConnection, _: &mut Self::Context) {
        self.log.detach();
    }
}

/// The request this stream answers has finished (answered or cancelled): a stream that answers
/// a request ends. Sent by the stream's log when its request finishes.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Finish;

impl Handler<Finish> for SseStream {
    type Result = ();

    fn handle(&mut self, _: Finish, ctx: &mut Self::Context) {
        if self.log.ends_with_response() {
            ctx.stop();
        }
    }
}
