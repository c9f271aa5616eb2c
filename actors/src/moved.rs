//! The root paths of the items that moved under [`dev`](crate::dev), kept for one release:
//! each is deprecated and hidden. The traits (`Dispatch`, `Relay`, `FrameSink`) cannot be
//! deprecated where they are re-exported, so they stay at the root, hidden, for this release.

#![allow(deprecated)]

#[doc(hidden)]
pub use crate::dev::{Dispatch, FrameSink, Relay, ToolCall};

/// Deprecated aliases at the root for types now under [`dev`](crate::dev).
macro_rules! moved {
    ($($name:ident $(<$($generic:ident),+>)?),+ $(,)?) => {$(
        /// Moved to [`dev`](crate::dev).
        #[doc(hidden)]
        #[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
        pub type $name $(<$($generic),+>)? = crate::dev::$name $(<$($generic),+>)?;
    )+};
}

moved!(
    Carry,
    Holds,
    Reply,
    Abort,
    Cancel,
    CancelOnDrop,
    InFlight,
    Begun<T>,
    CallStatus,
    CancelCall,
    Deliver<T>,
    GetCallStatus,
    Invocation<T>,
    Outcome<T>,
    SupervisedError,
    Frame,
    FrameKind,
    Incoming,
    Notification,
    Rejection,
    Request,
    Response,
    Counted,
    Counting,
    Metrics,
    ChannelOutlet,
    Outlet,
    ResponseOutlet,
    Broadcast,
    Registry,
    RegistryConfig,
    Sweep,
    ProgressError,
    RequestScope,
    Running<T>,
    Started<T>,
    ForgetPeerRequest,
    GetSessionStats,
    HandleNotification,
    HandleRequest,
    HandleResponse,
    OnStopped,
    OpenStandalone,
    RequestFinished,
    Resume,
    Resumed,
    SendPeerRequest,
    Session,
    SessionConfig,
    SessionParts,
    StreamClosed,
    Attach,
    CloseStream,
    DropConnection,
    EventLog,
    Finish,
    Settled,
    SseEvent,
    SseStream,
    StreamReceiver,
);

/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
pub const BYTES_PER_TOKEN: usize = crate::dev::BYTES_PER_TOKEN;
/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
pub const JSONRPC_VERSION: &str = crate::dev::JSONRPC_VERSION;
/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
pub const MAX_ID_LEN: usize = crate::dev::MAX_ID_LEN;
/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
pub const MAX_METHOD_LEN: usize = crate::dev::MAX_METHOD_LEN;
/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
pub const MAX_PROGRESS_TOKEN_LEN: usize = crate::dev::MAX_PROGRESS_TOKEN_LEN;
/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
pub const CONNECTION_BUFFER: usize = crate::dev::CONNECTION_BUFFER;

/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
#[allow(clippy::result_large_err)]
pub fn parse_message(bytes: &[u8]) -> Result<crate::dev::Incoming, crate::dev::Rejection> {
    crate::dev::parse_message(bytes)
}

/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
pub fn parsed_size_estimate(bytes: &[u8]) -> usize {
    crate::dev::parsed_size_estimate(bytes)
}

/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
pub fn priming_event(number: u64, retry: std::time::Duration) -> crate::dev::SseEvent {
    crate::dev::priming_event(number, retry)
}

/// Moved to [`dev`](crate::dev).
#[doc(hidden)]
#[deprecated(since = "0.2.0", note = "moved to `actix_mcp_actors::dev`")]
pub fn peer_error_object(err: &crate::PeerError) -> crate::ErrorObject {
    crate::dev::peer_error_object(err)
}
