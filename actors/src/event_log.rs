//! The event log of one SSE stream: the single place where a stream's events are numbered,
//! stored for resumption and handed to whoever reads them.
//!
//! Every stream has one, whether it answers a POST or is a session's GET stream, and whether
//! or not it ever becomes an [`SseStream`] actor. A log is an [`Outlet`] (a request's frames go
//! straight into it) and feeds one of three sinks:
//!
//! | sink | when | an event |
//! | --- | --- | --- |
//! | buffer | a POST answer in its first moments, before anyone knows it needs a stream | is kept in order; [`EventLog::settle`] hands the whole buffer over |
//! | connection | an HTTP connection reads the stream | goes into the connection's bounded channel ([`CONNECTION_BUFFER`]) |
//! | detached | no connection (the client left, was too slow, or was asked to reconnect) | is only stored: the client resumes with `Last-Event-ID` |
//!
//! Delivery never waits and never queues without bound: a connection whose channel is full is
//! a client that does not read, and it is dropped (the client resumes from the store). A
//! stream that cannot be resumed (no session) keeps its connection instead: what does not fit
//! is dropped, except the response, which always goes in. That is
//! the fan-out policy of the whole runtime: broadcasts and session notifications reach a
//! stream through its log, never through an unbounded mailbox.
//!
//! A stream without a session (stateless mode) has no event ids, no store and no priming event.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use actix::Addr;
use std::collections::VecDeque;
use std::task::{Poll, Waker};

use tokio::sync::Notify;

use crate::event_store::{Replay, SessionEvents};
use crate::ids::EventId;
use crate::jsonrpc::{Frame, FrameKind};
use crate::outlet::{FrameSink, Outlet};
use crate::session::SessionHandle;
use crate::sse_stream::{Finish, SseStream};

/// Events a connection may have queued before its client counts as too slow and is dropped.
pub const CONNECTION_BUFFER: usize = 128;

/// One event for an SSE body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event id (`<stream>-<seq>`); `None` on streams that cannot be resumed.
    pub id: Option<EventId>,
    /// The data: one JSON-RPC message, or empty for a priming event.
    pub data: Arc<str>,
    /// Reconnection advice for the client.
    pub retry: Option<Duration>,
}

/// The priming event that opens a resumable stream: id `<stream>-0`, empty data, `retry`.
pub fn priming_event(number: u64, retry: Duration) -> SseEvent {
    SseEvent {
        id: Some(EventId {
            stream: number,
            seq: 0,
        }),
        data: EMPTY_DATA.with(Arc::clone),
        retry: Some(retry),
    }
}

thread_local! {
    /// The priming event's empty data, shared rather than allocated per stream.
    static EMPTY_DATA: Arc<str> = Arc::from("");
}

/// Where a log's next event goes.
enum Sink {
    Buffer(Vec<SseEvent>),
    Connection { queue: Arc<Connection>, number: u64 },
    Detached,
}

struct LogState {
    next_seq: u64,
    sink: Sink,
    /// A response has passed through.
    answered: bool,
    /// The request this stream answers has finished (answered or not).
    finished: bool,
    /// Buffered: something cannot wait for the buffer to be handed over (a request to the
    /// client, a drop of the connection, too many events).
    urgent: bool,
    /// Buffered: the request asked for its connection to be dropped once there is one.
    drop_requested: bool,
    /// The stream actor, once there is one.
    owner: Option<Addr<SseStream>>,
    /// The stream has ended: nothing more is appended.
    closed: bool,
}

/// The event log of one stream. See the module docs.
pub struct EventLog {
    number: u64,
    session: Option<SessionHandle>,
    events: Option<Arc<dyn SessionEvents>>,
    ends_with_response: bool,
    connections: AtomicU64,
    state: Mutex<LogState>,
    changed: Notify,
}

impl fmt::Debug for EventLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        let sink = match &state.sink {
            Sink::Buffer(events) => format!("buffer({})", events.len()),
            Sink::Connection { .. } => "connection".to_owned(),
            Sink::Detached => "detached".to_owned(),
        };
        f.debug_struct("EventLog")
            .field("stream", &self.number)
            .field("sink", &sink)
            .field("next_seq", &state.next_seq)
            .field("closed", &state.closed)
            .finish()
    }
}

/// How a buffered log settled: see [`EventLog::settle`].
#[derive(Debug)]
pub enum Settled {
    /// The request finished while its events were buffered: `events` holds every event in
    /// order (the priming event first on resumable streams); `answered` tells whether a
    /// response is among them (a cancelled request sends none).
    Complete {
        /// The events.
        events: Vec<SseEvent>,
        /// Whether the request's response is among them.
        answered: bool,
    },
    /// The stream goes on: the first connection, with the events so far queued on it. Start an
    /// [`SseStream`] over the log ([`SseStream::start`]) to own it from here on.
    Stream(StreamReceiver),
}

impl EventLog {
    fn new(
        number: u64,
        session: Option<SessionHandle>,
        ends_with_response: bool,
        sink: Sink,
    ) -> Self {
        let events = session.as_ref().and_then(|s| s.events().cloned());
        Self {
            number,
            session,
            events,
            ends_with_response,
            connections: AtomicU64::new(0),
            state: Mutex::new(LogState {
                next_seq: 1,
                sink,
                answered: false,
                finished: false,
                urgent: false,
                drop_requested: false,
                owner: None,
                closed: false,
            }),
            changed: Notify::new(),
        }
    }

    /// A log that buffers its events until [`settle`](Self::settle)d: the answer to one POST
    /// request (`ends_with_response`). With a session, its priming event (carrying `retry`) is
    /// buffered first and every event has an id; without one, nothing is resumable.
    pub fn buffered(
        session: Option<SessionHandle>,
        number: u64,
        retry: Duration,
        ends_with_response: bool,
    ) -> Arc<Self> {
        let mut buffer = Vec::with_capacity(2);
        if session.is_some() {
            buffer.push(priming_event(number, retry));
        }
        Arc::new(Self::new(
            number,
            session,
            ends_with_response,
            Sink::Buffer(buffer),
        ))
    }

    /// A log read by a connection from the start (a GET stream): its priming event is queued
    /// on the returned receiver.
    pub fn connected(
        session: SessionHandle,
        number: u64,
        retry: Duration,
        ends_with_response: bool,
    ) -> (Arc<Self>, StreamReceiver) {
        Self::connected_after(session, number, retry, ends_with_response, Vec::new())
    }

    /// A log read by a connection from the start that first hands it `earlier` (the replay of
    /// the stream it goes on from: a standalone stream resumed where it is not live), then its
    /// own priming event.
    pub fn connected_after(
        session: SessionHandle,
        number: u64,
        retry: Duration,
        ends_with_response: bool,
        mut earlier: Vec<SseEvent>,
    ) -> (Arc<Self>, StreamReceiver) {
        let log = Arc::new(Self::new(
            number,
            Some(session),
            ends_with_response,
            Sink::Detached,
        ));
        // Room for the priming event alone (a new GET stream's whole queue), not the four a
        // first push makes room for: the queue keeps this buffer.
        earlier.reserve_exact(1);
        earlier.push(priming_event(number, retry));
        let receiver = log.connect(earlier);
        (log, receiver)
    }

    /// The stream's number within its session.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The session the stream belongs to; `None` in stateless mode.
    pub fn session(&self) -> Option<&SessionHandle> {
        self.session.as_ref()
    }

    /// Whether the stream ends with its request's response.
    pub fn ends_with_response(&self) -> bool {
        self.ends_with_response
    }

    /// This log as a request's outlet.
    pub fn outlet(self: &Arc<Self>) -> Outlet {
        Outlet::from_arc(self.clone())
    }

    /// Resolves when a buffered log changed (an event, a finish, a drop of the connection), so
    /// [`settle`](Self::settle) may now give an answer.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LogState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Settles a buffered log: [`Settled::Complete`] when its request has finished,
    /// [`Settled::Stream`] when something is urgent or `force` is set, `None` while the request
    /// runs quietly (or once the log has settled).
    pub fn settle(self: &Arc<Self>, force: bool) -> Option<Settled> {
        let mut state = self.lock();
        let Sink::Buffer(_) = &state.sink else {
            return None;
        };
        let done = state.answered || state.finished;
        if !(done || state.urgent || force) {
            return None;
        }
        let Sink::Buffer(events) = std::mem::replace(&mut state.sink, Sink::Detached) else {
            return None;
        };
        if done {
            let answered = state.answered;
            state.closed = true;
            drop(state);
            if let Some(store) = &self.events {
                store.finish(self.number);
            }
            return Some(Settled::Complete { events, answered });
        }
        let drop_requested = state.drop_requested;
        let receiver = self.connect_locked(&mut state, events);
        if drop_requested {
            self.set_sink(&mut state, Sink::Detached);
        }
        Some(Settled::Stream(receiver))
    }

    fn set_sink(&self, state: &mut LogState, sink: Sink) {
        let was_connected = matches!(state.sink, Sink::Connection { .. });
        let connected = matches!(sink, Sink::Connection { .. });
        if let Sink::Connection { queue, .. } = std::mem::replace(&mut state.sink, sink) {
            // The connection ends after what it has queued.
            queue.close();
        }
        if let Some(session) = &self.session {
            match (was_connected, connected) {
                (false, true) => session.activity(1),
                (true, false) => session.activity(-1),
                _ => {}
            }
        }
    }

    /// A new connection, with `queued` events ahead of what follows.
    fn connect(self: &Arc<Self>, queued: Vec<SseEvent>) -> StreamReceiver {
        let mut state = self.lock();
        self.connect_locked(&mut state, queued)
    }

    fn connect_locked(
        self: &Arc<Self>,
        state: &mut LogState,
        queued: Vec<SseEvent>,
    ) -> StreamReceiver {
        let queue = Arc::new(Connection::new(queued));
        let number = self.connections.fetch_add(1, Ordering::Relaxed);
        if state.closed {
            // Nothing more will come: the receiver gets what was queued, then the end.
            queue.close();
        } else {
            self.set_sink(
                state,
                Sink::Connection {
                    queue: queue.clone(),
                    number,
                },
            );
        }
        StreamReceiver {
            queue,
            log: Arc::downgrade(self),
            connection: number,
        }
    }

    /// Attaches a resuming connection: the stored events after `after` (when given) are queued
    /// first; the previous connection, if any, ends.
    pub fn attach(self: &Arc<Self>, after: Option<u64>) -> StreamReceiver {
        // The replay is read under the log's lock, as `deliver` appends under it: an event sent
        // meanwhile is either in the replay or delivered to the new connection, never lost
        // between them.
        let mut state = self.lock();
        let replay = match (after, &self.events) {
            (Some(seq), Some(store)) => match store.replay_here(EventId {
                stream: self.number,
                seq,
            }) {
                Replay::Unknown => Vec::new(),
                Replay::Events { events, gap } => {
                    if gap {
                        tracing::warn!(
                            stream = self.number,
                            after = seq,
                            "resuming a live stream whose events were partly evicted"
                        );
                    }
                    events
                }
            }
            .into_iter()
            .map(|(id, data)| SseEvent {
                id: Some(id),
                data,
                retry: None,
            })
            .collect(),
            _ => Vec::new(),
        };
        self.connect_locked(&mut state, replay)
    }

    /// Drops the current connection (its client resumes with `Last-Event-ID`); what follows is
    /// only stored.
    pub fn detach(&self) {
        let mut state = self.lock();
        if matches!(state.sink, Sink::Connection { .. }) {
            self.set_sink(&mut state, Sink::Detached);
        }
    }

    fn detach_connection(&self, number: u64) {
        let mut state = self.lock();
        if matches!(state.sink, Sink::Connection { number: current, .. } if current == number) {
            self.set_sink(&mut state, Sink::Detached);
        }
    }

    /// Ends the stream: its connection ends after what it has queued, nothing more is appended,
    /// and its stored events may be evicted from now on.
    pub fn close(&self) {
        let mut state = self.lock();
        if state.closed {
            return;
        }
        state.closed = true;
        if !matches!(state.sink, Sink::Buffer(_)) {
            self.set_sink(&mut state, Sink::Detached);
        }
        state.owner = None;
        drop(state);
        if let Some(store) = &self.events {
            store.finish(self.number);
        }
    }

    /// Whether the request this stream answers has finished.
    pub fn is_finished(&self) -> bool {
        self.lock().finished
    }

    pub(crate) fn set_owner(&self, owner: Addr<SseStream>) {
        self.lock().owner = Some(owner);
    }
}

impl FrameSink for EventLog {
    fn deliver(&self, frame: Frame) -> Result<(), Frame> {
        let mut state = self.lock();
        if state.closed {
            return Err(frame);
        }
        let id = self.session.as_ref().map(|_| EventId {
            stream: self.number,
            seq: state.next_seq,
        });
        state.next_seq += 1;
        if let (Some(store), Some(id)) = (&self.events, id) {
            store.append(id, &frame.json);
        }
        let kind = frame.kind;
        if kind == FrameKind::Response {
            state.answered = true;
        }
        let event = SseEvent {
            id,
            data: frame.json.clone(),
            retry: None,
        };
        let stored = self.events.is_some();
        let delivered = match &mut state.sink {
            Sink::Buffer(events) => {
                events.push(event);
                // The client must see a request now: it cannot wait for the buffer.
                if kind == FrameKind::Request || events.len() > CONNECTION_BUFFER {
                    state.urgent = true;
                }
                drop(state);
                self.changed.notify_one();
                return Ok(());
            }
            Sink::Connection { queue, .. } => match queue.push(event) {
                Ok(()) => true,
                // A stream that cannot be resumed keeps its connection, or its client would
                // lose the answer: a notification that does not fit is dropped, the response
                // always goes in.
                Err(Refused::Full(event)) if self.session.is_none() => {
                    if kind == FrameKind::Response {
                        queue.push_anyway(event);
                        true
                    } else {
                        tracing::debug!(
                            "dropped a notification of a non-resumable stream whose client \
                             reads slower than it is sent"
                        );
                        false
                    }
                }
                Err(Refused::Full(_)) => {
                    tracing::info!(
                        stream = self.number,
                        "dropping an SSE connection whose client is too slow; it can resume"
                    );
                    self.set_sink(&mut state, Sink::Detached);
                    false
                }
                Err(Refused::Closed) => {
                    self.set_sink(&mut state, Sink::Detached);
                    false
                }
            },
            Sink::Detached => false,
        };
        if kind == FrameKind::Response && self.ends_with_response {
            // The stream ends with its response: the connection closes after it.
            self.set_sink(&mut state, Sink::Detached);
        }
        if delivered || stored {
            Ok(())
        } else {
            Err(frame)
        }
    }

    fn accepts(&self, kind: FrameKind) -> bool {
        // A stream without a session cannot carry requests: there is nobody to answer them to.
        kind != FrameKind::Request || self.session.is_some()
    }

    fn drop_connection(&self) {
        let mut state = self.lock();
        match &state.sink {
            Sink::Buffer(_) => {
                state.urgent = true;
                state.drop_requested = true;
                drop(state);
                self.changed.notify_one();
            }
            Sink::Connection { .. } => self.set_sink(&mut state, Sink::Detached),
            Sink::Detached => {}
        }
    }

    fn finish(&self) {
        let mut state = self.lock();
        state.finished = true;
        let owner = state.owner.clone();
        let buffered = matches!(state.sink, Sink::Buffer(_));
        drop(state);
        if buffered {
            self.changed.notify_one();
        } else if let Some(owner) = owner {
            owner.do_send(Finish);
        } else if self.ends_with_response {
            // No actor owns the stream (stateless): it ends here.
            self.close();
        }
    }
}

/// Why a connection did not take an event.
enum Refused {
    /// It holds [`CONNECTION_BUFFER`] events its client has not read (the event comes back).
    Full(SseEvent),
    /// Its client went away, or the stream moved on.
    Closed,
}

/// The queue of one connection: what the log has sent and the HTTP body has not yet read.
struct Connection {
    state: Mutex<ConnectionState>,
}

struct ConnectionState {
    events: VecDeque<SseEvent>,
    /// Room for this many events on top of those queued when the connection opened.
    capacity: usize,
    waker: Option<Waker>,
    closed: bool,
}

impl Connection {
    fn new(queued: Vec<SseEvent>) -> Self {
        let capacity = CONNECTION_BUFFER + queued.len();
        Self {
            state: Mutex::new(ConnectionState {
                events: queued.into(),
                capacity,
                waker: None,
                closed: false,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ConnectionState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(&self, event: SseEvent) -> Result<(), Refused> {
        let mut state = self.lock();
        if state.closed {
            return Err(Refused::Closed);
        }
        if state.events.len() >= state.capacity {
            return Err(Refused::Full(event));
        }
        state.events.push_back(event);
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    /// Queues `event` past the capacity (a non-resumable stream's response).
    fn push_anyway(&self, event: SseEvent) {
        let mut state = self.lock();
        state.events.push_back(event);
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// The receiving end of one connection to a stream: what an HTTP body reads. It yields what
/// was queued for the connection, then the end once the connection is closed (the stream
/// ended, moved on to a new connection, or dropped this one as too slow). Dropping it (the
/// client went away) detaches the connection, so what follows is only stored.
pub struct StreamReceiver {
    queue: Arc<Connection>,
    log: Weak<EventLog>,
    connection: u64,
}

impl fmt::Debug for StreamReceiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamReceiver")
            .field("queued", &self.queue.lock().events.len())
            .finish()
    }
}

impl StreamReceiver {
    /// A receiver of events that are all known now (a replay of a finished stream): it yields
    /// them, then the end.
    pub fn replay(events: Vec<SseEvent>) -> Self {
        let queue = Arc::new(Connection::new(events));
        queue.close();
        Self {
            queue,
            log: Weak::new(),
            connection: 0,
        }
    }

    /// The next event; `None` once the connection has ended and everything queued was read.
    ///
    /// # Cancel safety
    /// Cancel safe: an event is never lost when the future is dropped.
    pub async fn recv(&mut self) -> Option<SseEvent> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next event (see [`recv`](Self::recv)).
    pub fn poll_recv(&mut self, cx: &mut std::task::Context<'_>) -> Poll<Option<SseEvent>> {
        let mut state = self.queue.lock();
        if let Some(event) = state.events.pop_front() {
            return Poll::Ready(Some(event));
        }
        if state.closed {
            return Poll::Ready(None);
        }
        if state.events.capacity() > 0 {
            // Read to the end: a connection that waits (a GET stream, mostly idle) holds no
            // buffer meanwhile.
            state.events = VecDeque::new();
        }
        match &state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => state.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// An event already queued, without waiting.
    pub fn try_recv(&mut self) -> Option<SseEvent> {
        self.queue.lock().events.pop_front()
    }
}

impl Drop for StreamReceiver {
    fn drop(&mut self) {
        self.queue.close();
        if let Some(log) = self.log.upgrade() {
            log.detach_connection(self.connection);
        }
    }
}
