//! SSE stream actor: one logical server-sent-event stream of a session (the stream answering
//! one POST, or the standalone GET stream), and the [`EventStore`] that makes it resumable.
//!
//! Started by the HTTP transport (POST) or by [`Session`](crate::Session) (GET). Owns the
//! bounded channel feeding the current HTTP connection's body, the stream's event numbering and
//! its link to the store. Receives [`Deliver`] (through [`SseOutlet`]), [`Attach`] (a resuming
//! connection) and [`CloseStream`].
//!
//! Every event is written to the store before it is sent, so a connection that drops (the
//! client vanished, or was too slow to drain its channel and was cut off) loses nothing: the
//! client resumes with `Last-Event-ID` and gets what it missed, from this stream only.
//!
//! Lifecycle: Started with a first connection (its priming event already queued) → Running →
//! Stopped after it delivered its request's response (POST streams), on [`CloseStream`], or when
//! its session stops. `stopped` tells the session with
//! [`StreamClosed`](crate::session::StreamClosed).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery>

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::{
    Actor, ActorContext, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message,
    MessageResult, SpawnHandle, WrapFuture,
};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use crate::ids::{EventId, SessionId};
use crate::jsonrpc::{Frame, FrameKind};
use crate::metrics::{Gauge, Metrics};
use crate::outlet::{FrameSink, Outlet};
use crate::session::{SessionHandle, StreamClosed};

/// Events a connection may have queued before it counts as too slow and is cut off.
pub const CONNECTION_BUFFER: usize = 128;

/// One event for an SSE body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event id (`<stream>-<seq>`).
    pub id: Option<EventId>,
    /// The data: one JSON-RPC message, or empty for a priming event.
    pub data: Arc<str>,
    /// Reconnection advice for the client.
    pub retry: Option<Duration>,
}

/// Keeps the events of a session's streams so a client can resume after a disconnect.
///
/// Implementations must be cheap and non-blocking: `append` runs for every event sent.
pub trait EventStore: Send + Sync + 'static {
    /// Records one event of a stream.
    fn append(&self, session: &SessionId, id: EventId, data: &Arc<str>);

    /// The events of `after.stream` that follow `after`, or `None` when the stream is unknown.
    fn replay(&self, session: &SessionId, after: EventId) -> Option<Vec<(EventId, Arc<str>)>>;

    /// The stream has ended; its buffer may be evicted after a while.
    fn finish(&self, session: &SessionId, stream: u64);

    /// The session has ended; drop all its streams.
    fn forget_session(&self, session: &SessionId);
}

/// The default [`EventStore`]: bounded per-stream ring buffers in memory, keeping the most
/// recently finished streams for late resumption.
#[derive(Debug)]
pub struct InMemoryEventStore {
    per_stream: usize,
    max_finished: usize,
    inner: Mutex<StoreInner>,
}

/// The buffered events of one stream: (sequence number, data).
type StreamBuffer = VecDeque<(u64, Arc<str>)>;

#[derive(Debug, Default)]
struct StoreInner {
    sessions: HashMap<SessionId, HashMap<u64, StreamBuffer>>,
    finished: VecDeque<(SessionId, u64)>,
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        Self::new(256, 1024)
    }
}

impl InMemoryEventStore {
    /// Keeps up to `per_stream` events of each stream, and the buffers of up to `max_finished`
    /// finished streams.
    pub fn new(per_stream: usize, max_finished: usize) -> Self {
        Self {
            per_stream: per_stream.max(1),
            max_finished,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StoreInner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many streams are buffered, over all sessions.
    pub fn buffered_streams(&self) -> usize {
        self.lock().sessions.values().map(HashMap::len).sum()
    }
}

impl EventStore for InMemoryEventStore {
    fn append(&self, session: &SessionId, id: EventId, data: &Arc<str>) {
        let mut inner = self.lock();
        let buffer = inner
            .sessions
            .entry(session.clone())
            .or_default()
            .entry(id.stream)
            .or_default();
        if buffer.len() == self.per_stream {
            buffer.pop_front();
        }
        buffer.push_back((id.seq, data.clone()));
    }

    fn replay(&self, session: &SessionId, after: EventId) -> Option<Vec<(EventId, Arc<str>)>> {
        let inner = self.lock();
        let buffer = inner.sessions.get(session)?.get(&after.stream)?;
        Some(
            buffer
                .iter()
                .filter(|(seq, _)| *seq > after.seq)
                .map(|(seq, data)| {
                    (
                        EventId {
                            stream: after.stream,
                            seq: *seq,
                        },
                        data.clone(),
                    )
                })
                .collect(),
        )
    }

    fn finish(&self, session: &SessionId, stream: u64) {
        let mut inner = self.lock();
        if !inner
            .sessions
            .get(session)
            .is_some_and(|streams| streams.contains_key(&stream))
        {
            return;
        }
        inner.finished.push_back((session.clone(), stream));
        while inner.finished.len() > self.max_finished {
            let Some((old_session, old_stream)) = inner.finished.pop_front() else {
                break;
            };
            if let Some(streams) = inner.sessions.get_mut(&old_session) {
                streams.remove(&old_stream);
                if streams.is_empty() {
                    inner.sessions.remove(&old_session);
                }
            }
        }
    }

    fn forget_session(&self, session: &SessionId) {
        let mut inner = self.lock();
        inner.sessions.remove(session);
        inner.finished.retain(|(s, _)| s != session);
    }
}

/// The SSE stream actor. See the module docs.
pub struct SseStream {
    session: SessionHandle,
    number: u64,
    answers: bool,
    store: Option<Arc<dyn EventStore>>,
    next_seq: u64,
    conn: Option<mpsc::Sender<SseEvent>>,
    watcher: Option<SpawnHandle>,
    metrics: Arc<Metrics>,
}

impl fmt::Debug for SseStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SseStream")
            .field("session", self.session.id())
            .field("stream", &self.number)
            .field("answers_request", &self.answers)
            .field("connected", &self.conn.is_some())
            .field("next_seq", &self.next_seq)
            .finish()
    }
}

impl SseStream {
    /// Starts a stream on the current arbiter with its first connection, whose priming event
    /// (id `<stream>-0`, empty data, `retry`) is already queued. A stream that `answers` a
    /// request ends after delivering a response.
    pub fn open(
        session: SessionHandle,
        number: u64,
        answers: bool,
        store: Option<Arc<dyn EventStore>>,
        retry: Duration,
        metrics: Arc<Metrics>,
    ) -> (Addr<Self>, mpsc::Receiver<SseEvent>) {
        let (tx, rx) = mpsc::channel(CONNECTION_BUFFER);
        let priming = SseEvent {
            id: Some(EventId {
                stream: number,
                seq: 0,
            }),
            data: Arc::from(""),
            retry: Some(retry),
        };
        // The channel is new and empty: the priming event always fits.
        let _ = tx.try_send(priming);
        metrics.inc(Gauge::Streams);
        let addr = Self::create(move |ctx| {
            ctx.set_mailbox_capacity(4096);
            let mut stream = Self {
                session,
                number,
                answers,
                store,
                next_seq: 1,
                conn: None,
                watcher: None,
                metrics,
            };
            stream.connect(tx, ctx);
            stream
        });
        (addr, rx)
    }

    fn connect(&mut self, tx: mpsc::Sender<SseEvent>, ctx: &mut Context<Self>) {
        self.disconnect(ctx);
        let probe = tx.clone();
        self.watcher =
            Some(
                ctx.spawn(async move { probe.closed().await }.into_actor(self).map(
                    |(), act, ctx| {
                        act.watcher = None;
                        act.disconnect(ctx);
                    },
                )),
            );
        self.conn = Some(tx);
        self.session.activity(1);
    }

    fn disconnect(&mut self, ctx: &mut Context<Self>) {
        if let Some(handle) = self.watcher.take() {
            ctx.cancel_future(handle);
        }
        if self.conn.take().is_some() {
            self.session.activity(-1);
        }
    }

    fn deliver(&mut self, frame: Frame, ctx: &mut Context<Self>) {
        let id = EventId {
            stream: self.number,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        if let Some(store) = &self.store {
            store.append(self.session.id(), id, &frame.json);
        }
        if let Some(conn) = &self.conn {
            match conn.try_send(SseEvent {
                id: Some(id),
                data: frame.json.clone(),
                retry: None,
            }) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    tracing::info!(session = %self.session.id(), stream = self.number, "closing an SSE connection whose client is too slow; it can resume");
                    self.disconnect(ctx);
                }
                Err(TrySendError::Closed(_)) => self.disconnect(ctx),
            }
        }
        if self.answers && frame.kind == FrameKind::Response {
            ctx.stop();
        }
    }
}

impl Actor for SseStream {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // A stream never outlives its session, even one the session never learned about.
        let token = self.session.token().clone();
        ctx.spawn(
            async move { token.cancelled().await }
                .into_actor(self)
                .map(|(), _, ctx| ctx.stop()),
        );
    }

    fn stopped(&mut self, ctx: &mut Self::Context) {
        self.disconnect(ctx);
        if let Some(store) = &self.store {
            store.finish(self.session.id(), self.number);
        }
        self.session.addr().do_send(StreamClosed {
            stream: self.number,
        });
        self.metrics.dec(Gauge::Streams);
    }
}

/// Deliver one frame on this stream. Sent through [`SseOutlet`].
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Deliver(pub Frame);

impl Handler<Deliver> for SseStream {
    type Result = ();

    fn handle(&mut self, msg: Deliver, ctx: &mut Self::Context) {
        self.deliver(msg.0, ctx);
    }
}

/// Attach a resuming connection: replays the events after `after` (when given), then carries
/// new ones. Replies with the connection's receiver. Sent by the session on `Last-Event-ID`.
#[derive(Debug, Message)]
#[rtype(result = "Option<mpsc::Receiver<SseEvent>>")]
pub struct Attach {
    /// The last sequence number the client saw.
    pub after: Option<u64>,
}

impl Handler<Attach> for SseStream {
    type Result = MessageResult<Attach>;

    fn handle(&mut self, msg: Attach, ctx: &mut Self::Context) -> Self::Result {
        let replay = match (msg.after, &self.store) {
            (Some(after), Some(store)) => store
                .replay(
                    self.session.id(),
                    EventId {
                        stream: self.number,
                        seq: after,
                    },
                )
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let (tx, rx) = mpsc::channel(CONNECTION_BUFFER + replay.len());
        for (id, data) in replay {
            // Sized above to hold the whole replay.
            let _ = tx.try_send(SseEvent {
                id: Some(id),
                data,
                retry: None,
            });
        }
        self.connect(tx, ctx);
        MessageResult(Some(rx))
    }
}

/// Close this stream (its connection ends; buffered events stay resumable until evicted).
/// Sent by the session when it stops or when a new GET stream replaces this one.
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
/// `Last-Event-ID` after the `retry` interval). Sent by the protocol layer.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct DropConnection;

impl Handler<DropConnection> for SseStream {
    type Result = ();

    fn handle(&mut self, _: DropConnection, ctx: &mut Self::Context) {
        self.disconnect(ctx);
    }
}

/// The request this stream answers has finished (answered or cancelled): a stream that answers
/// a request ends. Sent through [`SseOutlet`] when the request has finished (by its session, or
/// by the in-flight actor itself outside a session).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Finish;

impl Handler<Finish> for SseStream {
    type Result = ();

    fn handle(&mut self, _: Finish, ctx: &mut Self::Context) {
        if self.answers {
            ctx.stop();
        }
    }
}

/// A [`FrameSink`] feeding an [`SseStream`] actor's mailbox.
#[derive(Debug)]
pub struct SseOutlet(Addr<SseStream>);

impl SseOutlet {
    /// An outlet for `stream`.
    pub fn outlet(stream: Addr<SseStream>) -> Outlet {
        Outlet::new(Self(stream))
    }
}

impl FrameSink for SseOutlet {
    fn deliver(&self, frame: Frame) -> Result<(), Frame> {
        self.0
            .try_send(Deliver(frame))
            .map_err(|err| err.into_inner().0)
    }

    fn drop_connection(&self) {
        self.0.do_send(DropConnection);
    }

    fn finish(&self) {
        self.0.do_send(Finish);
    }
}
