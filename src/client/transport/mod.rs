//! Client transports: how a [`Client`](crate::client::Client) reaches a server.
//!
//! A transport is two halves. Outgoing, the client's session actor hands it one message at a
//! time ([`Transport::send`]). Incoming, the transport delivers everything the server sends
//! (responses, notifications, server-to-client requests), parsed, into the session's
//! [`Inbox`], a bounded queue: a transport that reads faster than the session handles waits.
//!
//! | transport | connects to | built by |
//! | --- | --- | --- |
//! | [`IoTransport`] | any `AsyncRead` + `AsyncWrite` pair carrying newline-delimited JSON | [`IoTransport::new`] |
//! | [`ChildProcess`] | a server started as a child process, over its stdin and stdout | [`ChildProcess::new`] |
//! | [`HttpTransport`] | a Streamable HTTP endpoint (2025-11-25): POST, SSE answers and resumption, the GET stream, sessions | [`HttpTransport::new`], [`HttpTransport::with_options`] |
//!
//! Implement [`Connect`] and [`Transport`] to bring your own.

mod child;
#[cfg(feature = "client-http")]
mod http;
mod io;

use std::fmt;
use std::sync::Arc;

use actix_mcp_actors::{
    RequestId,
    dev::{Frame, Incoming},
};
use futures::future::BoxFuture;
use tokio::sync::mpsc;

pub use child::{ChildProcess, StderrMode};
#[cfg(feature = "client-http")]
pub use http::{HttpOptions, HttpTransport};
pub use io::IoTransport;

#[cfg(feature = "fuzzing")]
pub(crate) use http::fuzz_sse_decode;

use super::error::ClientError;

/// One message for the server.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The serialised JSON-RPC message.
    pub frame: Frame,
    /// The method, for requests and notifications (transports that route or label by method,
    /// such as HTTP, read it here rather than parse the frame).
    pub method: Option<Arc<str>>,
    /// The id, for requests.
    pub id: Option<RequestId>,
    /// Request-metadata headers (name, value), for transports that mirror them: in the 2026
    /// era, HTTP sends them with the `POST` (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); stdio
    /// ignores them. Empty in the 2025 era.
    pub headers: Vec<(String, String)>,
}

/// What a transport hands the session: a message, or the end of the connection.
#[derive(Debug)]
pub enum Inbound {
    /// A message from the server.
    Message(Incoming),
    /// Something the server sent could not be read (malformed JSON, an oversized message);
    /// the connection goes on.
    Malformed(ClientError),
    /// The answer to request `id` will not come (its stream ended and could not be resumed,
    /// or its session ended): the call fails with `error` at once rather than at its time
    /// limit. The connection goes on.
    Lost {
        /// The request whose answer is lost.
        id: RequestId,
        /// Why: [`ClientError::SessionExpired`] when the session ended.
        error: ClientError,
    },
    /// The connection is gone, with the reason; nothing more will arrive.
    Closed(ClientError),
}

/// Where a transport delivers what the server sends. Cheap to clone.
#[derive(Clone)]
pub struct Inbox(mpsc::Sender<Inbound>);

impl fmt::Debug for Inbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbox")
            .field("closed", &self.0.is_closed())
            .finish()
    }
}

/// Messages the inbox holds before a transport waits for the session to catch up.
pub(crate) const INBOX_CAPACITY: usize = 256;

impl Inbox {
    /// A new inbox and its receiving end (the session's).
    pub fn channel() -> (Self, mpsc::Receiver<Inbound>) {
        let (tx, rx) = mpsc::channel(INBOX_CAPACITY);
        (Self(tx), rx)
    }

    /// Delivers one event, waiting while the session is behind. `false` once the session is
    /// gone (the transport should stop reading).
    ///
    /// # Cancel safety
    /// Dropping the future before it resolves drops the event.
    pub async fn deliver(&self, event: Inbound) -> bool {
        self.0.send(event).await.is_ok()
    }

    /// Whether the session has stopped listening.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Resolves once the session has stopped listening.
    #[cfg(feature = "client-http")]
    pub(crate) async fn closed(&self) {
        self.0.closed().await;
    }
}

/// The outgoing half of a connected transport.
pub trait Transport: Send + Sync + 'static {
    /// Sends one message. Resolves once the message is handed to the connection (for HTTP:
    /// once the server accepted the POST; its answers arrive in the inbox).
    ///
    /// # Errors
    /// When the message cannot be sent; for HTTP, also the refusals the spec names (a 404 on a
    /// session request is [`ClientError::SessionExpired`]).
    fn send(&self, message: Outgoing) -> BoxFuture<'static, Result<(), ClientError>>;

    /// The handshake settled on this protocol version; transports that label requests with
    /// it (HTTP's `MCP-Protocol-Version`) do so from now on.
    fn set_protocol_version(&self, version: &str) {
        let _ = version;
    }

    /// Whether the connection speaks 2026-07-28 or later: no session,
    /// no standalone stream, no resumption, cancellation by closing the answer's stream
    /// rather than by `notifications/cancelled` (HTTP). Turning it off also forgets the
    /// protocol version set before. Called by the client when it settles on an era.
    fn set_stateless(&self, stateless: bool) {
        let _ = stateless;
    }

    /// Whether the transport sends [`Outgoing::headers`] (HTTP does; stdio does not). A client
    /// in the 2026 era reads `tools/list` before calling a tool it has not seen listed, to
    /// know its `Mcp-Param-*` headers, only over a transport that sends them.
    fn mirrors_headers(&self) -> bool {
        false
    }

    /// The HTTP status that refused request `id` with a JSON-RPC error, for transports that
    /// have statuses and recorded one (HTTP records it for `server/discover` in the 2026 era,
    /// where `404` with `-32601` marks a 2026-07-28 server); forgotten once taken.
    fn take_refusal_status(&self, id: &RequestId) -> Option<u16> {
        let _ = id;
        None
    }

    /// The time the transport has spent waiting for the user (an interactive authorization
    /// of HTTP's [`AuthProvider`](crate::client::auth::AuthProvider)), in all, since it was
    /// connected. The session does not count it against its calls' time limits. Zero by
    /// default.
    fn interaction_time(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// The session id the server assigned, while there is one (Streamable HTTP in a
    /// 2025-11-25 session: the `Mcp-Session-Id` of its `initialize` answer, or of a renewal).
    /// `None` by default.
    fn session_id(&self) -> Option<String> {
        None
    }

    /// Whether the server can send messages outside a request's answer (HTTP opens its GET
    /// stream here, after initialization). Called once, after `notifications/initialized`.
    fn initialized(&self) {}

    /// Ends the connection: HTTP ends its session with `DELETE`; a child process gets its
    /// stdin closed, then a grace period, then is killed.
    fn close(&self) -> BoxFuture<'static, Result<(), ClientError>>;
}

/// Something that can open a connection to a server, delivering what arrives into an
/// [`Inbox`].
pub trait Connect: Send + 'static {
    /// Opens the connection.
    ///
    /// # Errors
    /// When the connection cannot be opened (the process cannot be started, the URL is
    /// malformed).
    fn connect(self, inbox: Inbox) -> BoxFuture<'static, Result<Arc<dyn Transport>, ClientError>>;
}
