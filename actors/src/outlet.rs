//! Outlets: where the frames of one request (or of a session) are delivered.
//!
//! Each transport supplies its own: the stdio writer actor, an SSE stream actor answering a
//! POST, a one-shot JSON body, or the session's standalone GET stream. The runtime only ever
//! calls [`FrameSink::deliver`], which never blocks: a sink that cannot take a frame hands it
//! back, and the caller decides (drop it and log, or fail a peer request).

use std::fmt;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::jsonrpc::{Frame, FrameKind};

/// Something that carries outgoing frames to the peer.
pub trait FrameSink: Send + Sync + 'static {
    /// Delivers one frame without blocking.
    ///
    /// # Errors
    /// Returns the frame when the sink is closed, full, or does not carry this kind of frame.
    fn deliver(&self, frame: Frame) -> Result<(), Frame>;

    /// Whether frames of this kind can travel here at all (a JSON response body carries only
    /// the response; a one-way channel never carries requests).
    fn accepts(&self, kind: FrameKind) -> bool {
        let _ = kind;
        true
    }

    /// Drops the current connection but keeps the logical stream, so the client resumes it
    /// (SSE polling). A no-op for sinks without connections.
    fn drop_connection(&self) {}

    /// The request this sink serves has finished, answered or not (a cancelled request sends
    /// no response): a per-request sink ends here. A no-op for shared sinks.
    fn finish(&self) {}
}

/// A shared, type-erased [`FrameSink`].
#[derive(Clone)]
pub struct Outlet(Arc<dyn FrameSink>);

impl Outlet {
    /// Wraps a sink.
    pub fn new(sink: impl FrameSink) -> Self {
        Self(Arc::new(sink))
    }

    /// Wraps a shared sink the caller keeps a handle on.
    pub fn from_arc(sink: Arc<dyn FrameSink>) -> Self {
        Self(sink)
    }

    /// See [`FrameSink::deliver`].
    ///
    /// # Errors
    /// Returns the frame when it could not be delivered.
    pub fn deliver(&self, frame: Frame) -> Result<(), Frame> {
        if !self.0.accepts(frame.kind) {
            return Err(frame);
        }
        self.0.deliver(frame)
    }

    /// Delivers a frame, logging (not failing) when it cannot travel.
    pub fn deliver_or_log(&self, frame: Frame, what: &'static str) {
        if let Err(frame) = self.deliver(frame) {
            tracing::debug!(
                ?frame,
                what,
                "dropped an outgoing frame: its outlet is closed or does not carry it"
            );
        }
    }

    /// See [`FrameSink::accepts`].
    pub fn accepts(&self, kind: FrameKind) -> bool {
        self.0.accepts(kind)
    }

    /// See [`FrameSink::drop_connection`].
    pub fn drop_connection(&self) {
        self.0.drop_connection();
    }

    /// See [`FrameSink::finish`].
    pub fn finish(&self) {
        self.0.finish();
    }

    /// Whether both outlets are the same sink.
    pub fn same_as(&self, other: &Outlet) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for Outlet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Outlet")
    }
}

/// An outlet for exactly one response, as a JSON body (`application/json` answers, stateless
/// requests, in-process calls). Notifications are dropped and requests refused.
#[derive(Debug)]
pub struct ResponseOutlet(Mutex<Option<oneshot::Sender<Frame>>>);

impl ResponseOutlet {
    /// A new outlet and the receiver its single response arrives on.
    pub fn channel() -> (Outlet, oneshot::Receiver<Frame>) {
        let (tx, rx) = oneshot::channel();
        (Outlet::new(Self(Mutex::new(Some(tx)))), rx)
    }
}

impl FrameSink for ResponseOutlet {
    fn deliver(&self, frame: Frame) -> Result<(), Frame> {
        let sender = match self.0.lock() {
            Ok(mut slot) => slot.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        match sender {
            Some(tx) => tx.send(frame),
            None => Err(frame),
        }
    }

    fn accepts(&self, kind: FrameKind) -> bool {
        kind == FrameKind::Response
    }

    fn finish(&self) {
        // Dropping the sender tells the waiter that no response will come.
        match self.0.lock() {
            Ok(mut slot) => drop(slot.take()),
            Err(poisoned) => drop(poisoned.into_inner().take()),
        }
    }
}

/// An outlet over an unbounded channel: every frame, in order (tests and in-process peers).
#[derive(Debug)]
pub struct ChannelOutlet(tokio::sync::mpsc::UnboundedSender<Frame>);

impl ChannelOutlet {
    /// A new outlet and the receiver its frames arrive on.
    pub fn channel() -> (Outlet, tokio::sync::mpsc::UnboundedReceiver<Frame>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (Outlet::new(Self(tx)), rx)
    }
}

impl FrameSink for ChannelOutlet {
    fn deliver(&self, frame: Frame) -> Result<(), Frame> {
        self.0.send(frame).map_err(|err| err.0)
    }
}
