//! The seam between the runtime and the protocol: one trait the SDK implements.
//!
//! The runtime parses JSON-RPC, owns sessions, in-flight requests and streams, and calls
//! [`Dispatch`] for the meaning of each message. It never looks at MCP method names except the
//! two notifications every request needs (`notifications/cancelled`, `notifications/progress`).

use futures::future::BoxFuture;
use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, Notification, Request};
use crate::scope::RequestScope;
use crate::session::SessionHandle;

/// What a request handler answers: the serialised result, or an error object.
pub type Reply = Result<Box<RawValue>, ErrorObject>;

/// Gives meaning to incoming messages. Implemented by the `actix-mcp` server.
pub trait Dispatch: Send + Sync + 'static {
    /// Answers one request. The future is polled once in place by the transport that received
    /// the request; if it is still pending then, it moves into the request's
    /// [`InFlight`](crate::dev::InFlight) actor, which polls it to the end. It is dropped (and
    /// nothing is sent) when the request is cancelled or its session ends.
    fn request(&self, request: Request, scope: RequestScope) -> BoxFuture<'static, Reply>;

    /// Handles one notification from the peer (cancellations are handled by the runtime and
    /// never reach this method). `session` is `None` in stateless mode.
    fn notification(&self, notification: Notification, session: Option<&SessionHandle>);

    /// Whether a request with this method may be cancelled by the peer. Default: all.
    fn is_cancellable(&self, method: &str) -> bool {
        let _ = method;
        true
    }
}
