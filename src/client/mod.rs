//! The MCP client: connect to any MCP server, ours or anyone's, over stdio or Streamable HTTP,
//! and use everything it offers.
//!
//! ```no_run
//! use actix_mcp::client::{Client, transport::ChildProcess};
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), actix_mcp::client::ClientError> {
//! let client = Client::builder("my-app", "1.0.0")
//!     .connect(ChildProcess::new("my-mcp-server").arg("--stdio"))
//!     .await?;
//! for tool in client.tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let result = client.call_tool("echo", json!({"message": "hi"})).await?;
//! println!("{}", result.text_content());
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! A client runs inside an actix system (`#[actix_web::main]`, `#[actix::main]` or
//! `actix_rt::System::new().block_on(..)`): its session is an actor
//! ([`session`](self::session) docs), which owns the outgoing request table, answers the
//! server's requests with the handlers given to the [`ClientBuilder`], and hands notifications
//! to its callbacks. Requests run concurrently on one connection.
//!
//! # Cancel safety
//!
//! Dropping a call's future (or calling [`PendingRequest::cancel`]) before its answer forgets
//! the request and sends `notifications/cancelled` for it; its id is never reused.

mod api;
mod builder;
#[allow(dead_code)] // used by the 2026 client, next
mod cache;
pub mod error;
mod handlers;
#[allow(dead_code)] // used by the 2026 client, next
pub(crate) mod headers;
pub(crate) mod session;
pub mod transport;

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix::Addr;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::oneshot;

pub use api::{CallOptions, DEFAULT_PAGE_LIMIT};
pub use builder::ClientBuilder;
pub use error::ClientError;
pub use handlers::{HandlerResult, ServerRequest, fill_elicitation_defaults};
pub use session::ProgressCallback;

use crate::protocol::{Implementation, InitializeResult, ProtocolVersion, ServerCapabilities};
use session::{CancelCall, ClientSession, Shutdown};

/// A connection to one MCP server. Cheap to clone; clones share the connection, which closes
/// when [`close`](Self::close) is called or the last clone is dropped.
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    session: Addr<ClientSession>,
    init: InitializeResult,
    version: ProtocolVersion,
    timeout: Option<Duration>,
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        // The last handle is gone: nobody can use the connection any more.
        self.session.do_send(Shutdown);
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.inner.init.server_info.name)
            .field("protocol_version", &self.inner.version)
            .field("connected", &self.inner.session.connected())
            .finish()
    }
}

impl Client {
    /// A builder for a client called `name`, at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(name, version)
    }

    /// What the server said about itself.
    pub fn server_info(&self) -> &Implementation {
        &self.inner.init.server_info
    }

    /// What the server can do.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.inner.init.capabilities
    }

    /// The server's instructions for using it, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.init.instructions.as_deref()
    }

    /// The protocol version the handshake settled on.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// The whole `initialize` result.
    pub fn initialize_result(&self) -> &InitializeResult {
        &self.inner.init
    }

    /// Whether the connection is still open.
    pub fn is_connected(&self) -> bool {
        self.inner.session.connected()
    }

    /// Sends a request and returns a handle on its answer at once (see [`PendingRequest`]).
    ///
    /// # Errors
    /// When the connection is closed.
    pub async fn start_request<R: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<PendingRequest<R>, ClientError> {
        let (reply, answer) = oneshot::channel();
        let call = session::Call {
            method: Arc::from(method),
            params,
            timeout: options.timeout.or(self.inner.timeout),
            progress: options.progress,
            reply,
        };
        let id =
            self.inner.session.send(call).await.map_err(|_| {
                ClientError::TransportClosed("the client session has stopped".into())
            })??;
        Ok(PendingRequest {
            id: Some(id),
            session: self.inner.session.clone(),
            answer,
            _result: PhantomData,
        })
    }

    /// Sends a request and waits for its answer, deserialised as `R`.
    ///
    /// # Errors
    /// See [`ClientError`]: the server's JSON-RPC error, a timeout, a closed connection, or an
    /// answer that is not an `R` ([`ClientError::Protocol`]).
    ///
    /// # Cancel safety
    /// Dropping the future before the answer sends `notifications/cancelled` for the request.
    pub async fn request<R: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<R, ClientError> {
        self.start_request(method, params, options).await?.await
    }

    /// Sends a notification.
    ///
    /// # Errors
    /// When the connection is closed or the transport fails.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.inner
            .session
            .send(session::Notify {
                method: Arc::from(method),
                params,
            })
            .await
            .map_err(|_| ClientError::TransportClosed("the client session has stopped".into()))?
    }

    /// Closes the connection: pending calls fail with [`ClientError::TransportClosed`], an
    /// HTTP session is ended with `DELETE`, a child process has its stdin closed and is killed
    /// after a grace period. Other clones of this client are closed too.
    pub async fn close(&self) {
        let _ = self.inner.session.send(Shutdown).await;
    }
}

/// An answer still to come: a future of the request's result, which can be cancelled.
///
/// Dropping it before the answer, or calling [`cancel`](Self::cancel), forgets the request and
/// sends `notifications/cancelled` for it.
#[must_use = "a pending request is cancelled when dropped"]
pub struct PendingRequest<R> {
    id: Option<actix_mcp_actors::RequestId>,
    session: Addr<ClientSession>,
    answer: oneshot::Receiver<Result<Value, ClientError>>,
    _result: PhantomData<fn() -> R>,
}

impl<R> fmt::Debug for PendingRequest<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingRequest")
            .field("id", &self.id)
            .finish()
    }
}

impl<R> PendingRequest<R> {
    /// The request's id.
    pub fn id(&self) -> Option<&actix_mcp_actors::RequestId> {
        self.id.as_ref()
    }

    /// Cancels the request: the server is told, and the answer, if it comes, is ignored.
    pub fn cancel(mut self, reason: impl Into<String>) {
        if let Some(id) = self.id.take() {
            self.session.do_send(CancelCall {
                id,
                reason: reason.into(),
            });
        }
    }
}

impl<R> Drop for PendingRequest<R> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.session.do_send(CancelCall {
                id,
                reason: "the client no longer waits for the answer".into(),
            });
        }
    }
}

impl<R: DeserializeOwned> Future for PendingRequest<R> {
    type Output = Result<R, ClientError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let outcome = match Pin::new(&mut self.answer).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(outcome)) => outcome,
            Poll::Ready(Err(_)) => Err(ClientError::TransportClosed(
                "the client session has stopped".into(),
            )),
        };
        // Answered: nothing to cancel any more.
        self.id = None;
        Poll::Ready(outcome.and_then(|value| {
            serde_json::from_value(value).map_err(|err| {
                ClientError::Protocol(format!("the server's answer has the wrong shape: {err}"))
            })
        }))
    }
}
