//! SSE stream actor: one logical server-sent-event stream of a session (the stream answering
//! one POST, or the standalone GET stream), and the [`EventStore`] that makes it resumable.
//!
//! Started by a [`PostAnswer`] whose request is still running after its window (POST; a request
//! finished by then is written as one body and needs no stream actor), or by
//! [`Session`](crate::Session) (GET). Owns the
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
//! [`StreamClosed`].
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
        let priming = priming_event(number, retry);
        Self::adopt(session, number, answers, store, metrics, vec![priming], 1)
    }

    /// Starts a stream on the current arbiter whose first connection already carries `queued`
    /// (events numbered and stored by their first owner, such as a [`PostAnswer`]); the stream
    /// numbers what follows from `next_seq`.
    pub fn adopt(
        session: SessionHandle,
        number: u64,
        answers: bool,
        store: Option<Arc<dyn EventStore>>,
        metrics: Arc<Metrics>,
        queued: Vec<SseEvent>,
        next_seq: u64,
    ) -> (Addr<Self>, mpsc::Receiver<SseEvent>) {
        let (tx, rx) = mpsc::channel(CONNECTION_BUFFER + queued.len());
        for event in queued {
            // Sized above to hold every queued event.
            let _ = tx.try_send(event);
        }
        metrics.inc(Gauge::Streams);
        let addr = Self::create(move |ctx| {
            ctx.set_mailbox_capacity(4096);
            let mut stream = Self {
                session,
                number,
                answers,
                store,
                next_seq,
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

/// The priming event that opens a stream: id `<stream>-0`, empty data, `retry` advice.
pub fn priming_event(number: u64, retry: Duration) -> SseEvent {
    SseEvent {
        id: Some(EventId {
            stream: number,
            seq: 0,
        }),
        data: Arc::from(""),
        retry: Some(retry),
    }
}

/// The answer to one POST request in its first moments, before it is known to need a stream.
///
/// Most requests are answered within a millisecond: their priming event, any notifications
/// and the response can leave as one complete SSE body, and starting a stream actor (with its
/// task, mailbox and channel) for them would cost more than the answer itself. So the
/// transport hands a `PostAnswer` to the request as its outlet and [`settle`](Self::settle)s
/// it: frames are numbered and written to the [`EventStore`] as they arrive, exactly as an
/// [`SseStream`] does, and kept here. When the request finishes within the window, the
/// transport takes the events whole ([`Settled::Complete`]). When it is still running after
/// the window, sends the client a request (which must not wait), asks for SSE polling, or
/// piles up events, the answer becomes an [`SseStream`] actor that adopts the events kept so
/// far and carries everything after ([`Settled::Stream`]).
pub struct PostAnswer {
    session: SessionHandle,
    number: u64,
    store: Option<Arc<dyn EventStore>>,
    metrics: Arc<Metrics>,
    state: Mutex<PostState>,
    changed: tokio::sync::Notify,
}

enum PostState {
    Young {
        events: Vec<SseEvent>,
        next_seq: u64,
        answered: bool,
        finished: bool,
        urgent: bool,
        drop_connection: bool,
    },
    Streaming(Addr<SseStream>),
    Taken,
}

impl fmt::Debug for PostAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &*self.lock() {
            PostState::Young { .. } => "young",
            PostState::Streaming(_) => "streaming",
            PostState::Taken => "taken",
        };
        f.debug_struct("PostAnswer")
            .field("session", self.session.id())
            .field("stream", &self.number)
            .field("state", &state)
            .finish()
    }
}

/// How a [`PostAnswer`] settled.
#[derive(Debug)]
pub enum Settled {
    /// The request finished within the window. `events` holds the priming event and every
    /// frame it sent, in order; `answered` tells whether a response is among them (a cancelled
    /// request, or one whose session ended, sends none).
    Complete {
        /// The events, priming event first.
        events: Vec<SseEvent>,
        /// Whether the request's response is among them.
        answered: bool,
    },
    /// The request goes on as an [`SseStream`] actor: the receiver of its first connection,
    /// with the events so far queued on it.
    Stream(mpsc::Receiver<SseEvent>),
}

impl PostAnswer {
    /// A new answer for stream `number` of `session`, its priming event kept.
    pub fn new(
        session: SessionHandle,
        number: u64,
        store: Option<Arc<dyn EventStore>>,
        retry: Duration,
        metrics: Arc<Metrics>,
    ) -> Arc<Self> {
        let mut events = Vec::with_capacity(2);
        events.push(priming_event(number, retry));
        Arc::new(Self {
            session,
            number,
            store,
            metrics,
            state: Mutex::new(PostState::Young {
                events,
                next_seq: 1,
                answered: false,
                finished: false,
                urgent: false,
                drop_connection: false,
            }),
            changed: tokio::sync::Notify::new(),
        })
    }

    /// The outlet the request's frames go to.
    pub fn outlet(self: &Arc<Self>) -> Outlet {
        Outlet::from_arc(self.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PostState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits at most `window` for the request to finish. See [`Settled`]. Dropping the future
    /// before it resolves turns the answer into a stream without a connection, so what the
    /// request sends later stays resumable with `Last-Event-ID`.
    pub async fn settle(self: &Arc<Self>, window: Duration) -> Settled {
        let mut guard = SettleGuard(Some(self));
        let deadline = tokio::time::sleep(window);
        tokio::pin!(deadline);
        loop {
            if let Some(done) = self.take_if_done(false) {
                guard.0 = None;
                return done;
            }
            tokio::select! {
                biased;
                () = self.changed.notified() => {}
                () = &mut deadline => break,
            }
        }
        guard.0 = None;
        self.upgrade()
    }

    /// Settles the answer if it can be: complete when the request has finished, a stream when
    /// something is urgent or `force` is set; `None` while the request runs quietly (or when
    /// the answer has already settled).
    fn take_if_done(&self, force: bool) -> Option<Settled> {
        let mut state = self.lock();
        let PostState::Young {
            answered,
            finished,
            urgent,
            ..
        } = &*state
        else {
            return None;
        };
        let done = *answered || *finished;
        if !(done || *urgent || force) {
            return None;
        }
        let PostState::Young {
            events,
            next_seq,
            answered,
            drop_connection,
            ..
        } = std::mem::replace(&mut *state, PostState::Taken)
        else {
            return None;
        };
        if done {
            drop(state);
            if let Some(store) = &self.store {
                store.finish(self.session.id(), self.number);
            }
            return Some(Settled::Complete { events, answered });
        }
        let (addr, rx) = SseStream::adopt(
            self.session.clone(),
            self.number,
            true,
            self.store.clone(),
            self.metrics.clone(),
            events,
            next_seq,
        );
        *state = PostState::Streaming(addr.clone());
        drop(state);
        if drop_connection {
            addr.do_send(DropConnection);
        }
        self.session.register_stream(self.number, addr);
        Some(Settled::Stream(rx))
    }

    /// Settles now: complete, or a stream.
    fn upgrade(&self) -> Settled {
        self.take_if_done(true).unwrap_or(Settled::Complete {
            events: Vec::new(),
            answered: false,
        })
    }
}

/// Turns a [`PostAnswer`] whose settling was abandoned into a stream (see
/// [`PostAnswer::settle`]).
struct SettleGuard<'a>(Option<&'a Arc<PostAnswer>>);

impl Drop for SettleGuard<'_> {
    fn drop(&mut self) {
        if let Some(answer) = self.0.take() {
            // The receiver is dropped at once: the stream notices it has no connection.
            drop(answer.upgrade());
        }
    }
}

impl FrameSink for PostAnswer {
    fn deliver(&self, frame: Frame) -> Result<(), Frame> {
        let mut state = self.lock();
        match &mut *state {
            PostState::Young {
                events,
                next_seq,
                answered,
                urgent,
                ..
            } => {
                let id = EventId {
                    stream: self.number,
                    seq: *next_seq,
                };
                *next_seq += 1;
                if let Some(store) = &self.store {
                    store.append(self.session.id(), id, &frame.json);
                }
                match frame.kind {
                    FrameKind::Response => *answered = true,
                    // The client must see a request now: it cannot wait for the window.
                    FrameKind::Request => *urgent = true,
                    FrameKind::Notification => {}
                }
                events.push(SseEvent {
                    id: Some(id),
                    data: frame.json,
                    retry: None,
                });
                if events.len() > CONNECTION_BUFFER {
                    *urgent = true;
                }
                drop(state);
                self.changed.notify_one();
                Ok(())
            }
            PostState::Streaming(addr) => addr
                .try_send(Deliver(frame))
                .map_err(|err| err.into_inner().0),
            PostState::Taken => Err(frame),
        }
    }

    fn drop_connection(&self) {
        let mut state = self.lock();
        match &mut *state {
            PostState::Young {
                urgent,
                drop_connection,
                ..
            } => {
                *urgent = true;
                *drop_connection = true;
                drop(state);
                self.changed.notify_one();
            }
            PostState::Streaming(addr) => addr.do_send(DropConnection),
            PostState::Taken => {}
        }
    }

    fn finish(&self) {
        let mut state = self.lock();
        match &mut *state {
            PostState::Young { finished, .. } => {
                *finished = true;
                drop(state);
                self.changed.notify_one();
            }
            PostState::Streaming(addr) => addr.do_send(Finish),
            PostState::Taken => {}
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
