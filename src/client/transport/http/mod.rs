//! Streamable HTTP (2025-11-25), the client side: the transport our server speaks in
//! [`crate::transport::http`], for any conforming server.
//!
//! The public side is [`HttpTransport`] (whose docs say how it behaves) and [`HttpOptions`]
//! (`options`). Inside: `shared`, the state of one connection (session id, protocol version,
//! the stop switches of the answer readers) with the `POST` and `DELETE` exchanges;
//! `streams`, the reading of SSE answers, their resumption and the `GET` stream; `sse`, a
//! size-bounded decoder over `russe`.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>

mod options;
mod shared;
mod sse;
mod streams;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::HeaderValue;

pub use options::HttpOptions;
use shared::{Shared, lock};

use super::{Connect, Inbound, Inbox, Outgoing, Transport};
use crate::client::error::ClientError;

/// Fuzzing entry point (feature `fuzzing`, for `tests/fuzz`): decodes `chunks`, arriving one
/// after the other, with the decoder the SSE reader uses (data limit `max`). Returns what it
/// found, one line per item, and the most bytes it ever held buffered.
#[cfg(feature = "fuzzing")]
pub(crate) fn fuzz_sse_decode(max: usize, chunks: &[&[u8]]) -> (Vec<String>, usize) {
    let mut decoder = sse::SseDecoder::new(max);
    let mut buf = bytes::BytesMut::new();
    let (mut found, mut most) = (Vec::new(), 0);
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        most = most.max(buf.len());
        while let Some(decoded) = decoder.decode(&mut buf) {
            found.push(match decoded {
                sse::Decoded::Event(event) => format!("{event:?}"),
                sse::Decoded::Oversized { id } => format!("oversized {id:?}"),
                sse::Decoded::Unreadable(_) => "unreadable".to_owned(),
            });
        }
    }
    (found, most)
}

/// How long `close` waits to hand the session its final [`Inbound::Closed`].
const CLOSED_DELIVERY_WAIT: Duration = Duration::from_secs(1);

/// A connection to an MCP server over Streamable HTTP (2025-11-25): the endpoint's URL and its
/// [`HttpOptions`].
///
/// Every message is its own `POST` to the endpoint; [`Transport::send`] resolves once the
/// server answered it. A background task reads the answer into the session's [`Inbox`]:
///
/// | answer to a `POST` | what happens |
/// | --- | --- |
/// | `202 Accepted` | nothing more (notifications and responses) |
/// | `200`, `application/json` | the body is one message, delivered |
/// | `200`, `text/event-stream` | each event's `data` is a message, delivered; an event without data (a priming event) only records its id |
/// | `404` on a request that carried a session id | [`ClientError::SessionExpired`]; the session id is forgotten, and every later message but a new `initialize` fails the same way without being sent |
/// | any other error status | [`ClientError::Transport`] with the status and the server's error message, unless the body is a JSON-RPC error response to a request: that is delivered, and `send` succeeds |
///
/// **Resumption (SSE polling).** A `POST`'s SSE stream that ends before it carried the
/// response to its request is resumed with `GET` and `Last-Event-ID` (the last event id seen),
/// never before the server's `retry` advice has passed (1 s when it gave none), and read until
/// the response arrives. Attempts that bring nothing new count against a reconnection budget,
/// with exponential backoff; when it is spent, the request is left to the session's timeout
/// (and a warning is logged). Sending `notifications/cancelled` for a request stops the
/// reading of its stream.
///
/// **The `GET` stream.** After initialization ([`Transport::initialized`]) a task opens the
/// standalone `GET` stream for what the server sends outside any request, and keeps it open
/// the same way (`Last-Event-ID`, `retry`, the budget); `405` means the server offers none.
/// Messages sent after initialization wait until the server has answered that first `GET`
/// (at most 5 s, and at most the request timeout), so that what the server sends on the
/// stream while it handles them (such as an `elicitation/create` not tied to the call) is not
/// lost to a stream that is not open yet.
///
/// **Sessions.** The `Mcp-Session-Id` of the `initialize` answer labels every later request,
/// and so does `MCP-Protocol-Version` once the session set it. [`Transport::close`] stops every
/// task, ends the session with `DELETE` (a `405` or `404` answer is fine) and delivers
/// [`Inbound::Closed`]; later sends fail with [`ClientError::TransportClosed`].
///
/// **The 2026 era.** Once the client settles on 2026-07-28
/// ([`Transport::set_stateless`]), every message is a `POST` carrying `MCP-Protocol-Version`
/// and the request-metadata headers the client computed ([`Outgoing::headers`]: `Mcp-Method`,
/// `Mcp-Name`, `Mcp-Param-*`); no session id is kept or sent, no `GET` stream is opened, no
/// `DELETE` ends anything, and an answer's stream that ends before the response is not
/// resumed (the request fails). Cancelling a request closes its answer's stream, which is the
/// cancellation in 2026: `notifications/cancelled` is not sent. A JSON-RPC error in the body
/// of a `4xx` answer (`-32022`, `-32020`, ...) is delivered as the request's error.
///
/// Everything the server sends is bounded: a message over the size limit, or one that is not
/// JSON-RPC, is reported as [`Inbound::Malformed`] and skipped; every request waits at most the
/// request timeout for its headers, and every task stops with the transport or the session.
///
/// Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>
///
/// ```no_run
/// use std::time::Duration;
/// use actix_mcp::client::transport::{Connect, HttpOptions, HttpTransport, Inbox};
///
/// # async fn run() -> Result<(), actix_mcp::client::ClientError> {
/// let options = HttpOptions::default()
///     .header("Authorization", "Bearer secret")
///     .request_timeout(Duration::from_secs(30));
/// let (inbox, _events) = Inbox::channel();
/// let transport = HttpTransport::with_options("http://127.0.0.1:8080/mcp", options)
///     .connect(inbox)
///     .await?;
/// # let _ = transport;
/// # Ok(())
/// # }
/// ```
pub struct HttpTransport {
    url: String,
    options: HttpOptions,
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &crate::client::auth::redact_url(&self.url))
            .field("options", &self.options)
            .finish()
    }
}

impl HttpTransport {
    /// The MCP endpoint at `url` (`http://` or `https://`), with default options. A malformed
    /// URL fails [`connect`](Connect::connect) with [`ClientError::Transport`].
    pub fn new(url: impl AsRef<str>) -> Self {
        Self::with_options(url, HttpOptions::default())
    }

    /// The MCP endpoint at `url`, with `options`.
    pub fn with_options(url: impl AsRef<str>, options: HttpOptions) -> Self {
        Self {
            url: url.as_ref().to_owned(),
            options,
        }
    }
}

impl Connect for HttpTransport {
    fn connect(self, inbox: Inbox) -> BoxFuture<'static, Result<Arc<dyn Transport>, ClientError>> {
        Box::pin(async move {
            let shared = Shared::new(self, inbox)?;
            Ok(Arc::new(HttpConnection(Arc::new(shared))) as Arc<dyn Transport>)
        })
    }
}

/// The connected transport.
struct HttpConnection(Arc<Shared>);

impl Transport for HttpConnection {
    fn session_id(&self) -> Option<String> {
        shared::lock(&self.0.session)
            .as_ref()
            .and_then(|id| id.to_str().ok())
            .map(str::to_owned)
    }

    fn send(&self, message: Outgoing) -> BoxFuture<'static, Result<(), ClientError>> {
        Box::pin(self.0.clone().post(message))
    }

    fn set_protocol_version(&self, version: &str) {
        match HeaderValue::from_str(version) {
            Ok(value) => *lock(&self.0.version) = Some(value),
            Err(_) => tracing::warn!(
                version,
                "the protocol version cannot be sent in a header; requests go without it"
            ),
        }
    }

    fn set_stateless(&self, stateless: bool) {
        self.0.stateless.store(stateless, Ordering::Release);
        if !stateless {
            *lock(&self.0.version) = None;
        }
    }

    fn mirrors_headers(&self) -> bool {
        true
    }

    fn interaction_time(&self) -> Duration {
        self.0
            .auth
            .as_ref()
            .map_or(Duration::ZERO, |auth| auth.interaction_time())
    }

    fn take_refusal_status(&self, id: &actix_mcp_actors::RequestId) -> Option<u16> {
        lock(&self.0.refusals).remove(id)
    }

    fn initialized(&self) {
        let shared = &self.0;
        if !shared.get_stream
            || shared.closed.load(Ordering::Acquire)
            || shared.listening.swap(true, Ordering::AcqRel)
        {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(shared.clone().listen());
            }
            Err(_) => {
                shared.get_settled.cancel();
                tracing::warn!("no Tokio runtime: the GET stream is not opened");
            }
        }
    }

    fn close(&self) -> BoxFuture<'static, Result<(), ClientError>> {
        let shared = self.0.clone();
        Box::pin(async move {
            if shared.closed.swap(true, Ordering::AcqRel) {
                return Ok(());
            }
            // Stop every task first: the GET stream must not (re)open while the session is
            // being ended, when it would go without the session id.
            shared.shutdown.cancel();
            let result = shared.delete_session().await;
            let closed = Inbound::Closed(ClientError::TransportClosed(
                "the client closed the connection".into(),
            ));
            let _ = tokio::time::timeout(CLOSED_DELIVERY_WAIT, shared.inbox.deliver(closed)).await;
            result
        })
    }
}
