//! Errors of the runtime: peer requests and session bookkeeping.

use crate::jsonrpc::ErrorObject;

/// Why a server-to-client request produced no result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// Stateless mode: there is no session, so the peer cannot be asked anything.
    #[error("server-to-client requests need a session; this server runs in stateless mode")]
    Stateless,
    /// The request's stream cannot carry requests (JSON response mode).
    #[error(
        "this request's response channel cannot carry server-to-client requests (JSON response mode)"
    )]
    Unsupported,
    /// The peer did not declare the capability this request needs; nothing was sent.
    #[error("the client did not declare the `{0}` capability")]
    MissingCapability(String),
    /// The peer answered with a JSON-RPC error.
    #[error("the client answered with an error: {}", .0.message)]
    Rejected(ErrorObject),
    /// The peer did not answer in time; `notifications/cancelled` was sent for it.
    #[error("the client did not answer in time")]
    Timeout,
    /// The originating request was cancelled, or its session ended.
    #[error("cancelled before the client answered")]
    Cancelled,
    /// The session closed, or the request could not be delivered.
    #[error("the session closed or the request could not be delivered")]
    Closed,
    /// The peer's answer did not have the expected shape.
    #[error("the client's answer was malformed: {0}")]
    Malformed(String),
}

impl PeerError {
    /// Whether the error is a timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout)
    }

    /// Whether the error is a cancellation.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Self::Cancelled)
    }
}

/// Why a session could not be opened.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The server already holds its maximum number of live sessions, none of which has been
    /// idle long enough to be evicted.
    #[error("too many live sessions (limit {0})")]
    Full(usize),
    /// The session's owner already holds its maximum number of live sessions.
    #[error("too many live sessions for this owner (limit {0})")]
    OwnerFull(usize),
}
