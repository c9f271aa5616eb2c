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
//! A client runs in any tokio application: inside an actix system (`#[actix_web::main]`,
//! `#[actix::main]`) on the current arbiter, elsewhere (`#[tokio::main]`) on an actix system
//! of the SDK's own ([`ClientBuilder::connect`]). Its session is an actor
//! (`session` module docs), which owns the outgoing request table, answers the
//! server's requests with the handlers given to the [`ClientBuilder`], and hands notifications
//! to its callbacks. Requests run concurrently on one connection.
//!
//! # Eras: 2025-11-25 and 2026-07-28
//!
//! By default ([`Lifecycle::Auto`]) a client probes the server with `server/discover` and
//! speaks 2026-07-28 to a server that answers in that revision, or
//! runs the 2025 `initialize` handshake otherwise ([`lifecycle`] docs);
//! [`ClientBuilder::lifecycle`] pins either era, [`Client::era`] tells which one was chosen.
//! The same calls work in both. In the 2026 era every request carries the client's version,
//! capabilities and info in `_meta` (and on HTTP the request-metadata headers `Mcp-Method`,
//! `Mcp-Name` and `Mcp-Param-*`); a result that asks for input is driven through the same
//! handlers that answer the server's requests in 2025 ([`mrtr`]); change
//! notifications come from [`Client::listen`]; list and read results are cached for the
//! time their `ttlMs` allows ([`ClientBuilder::cache`]).
//!
//! # Cancel safety
//!
//! Dropping a call's future (or calling [`PendingRequest::cancel`]) before its answer forgets
//! the request and cancels it at the server: `notifications/cancelled` (2025, and 2026 over
//! stdio), or closing the answer's stream (2026 over HTTP); its id is never reused.

mod api;
#[cfg(feature = "client-http")]
pub mod auth;
mod builder;
mod cache;
pub mod error;
pub mod extension;
mod handlers;
pub(crate) mod headers;
pub mod lifecycle;
pub mod listen;
pub mod mrtr;
pub(crate) mod runtime;
pub(crate) mod session;
#[cfg(feature = "skills")]
pub mod skills;
mod task_watch;
pub mod tasks;
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
pub use extension::{ClientExtension, ClientMiddleware};
pub use handlers::{HandlerResult, ServerRequest, fill_elicitation_defaults};
pub use lifecycle::{Era, Lifecycle};
pub use listen::{ListenEvent, Subscription};
pub use mrtr::{CallOutcome, DEFAULT_MAX_INPUT_ROUNDS, InputRetry};
pub use session::ProgressCallback;
pub use tasks::TaskHandle;

use std::sync::Mutex;

use actix_mcp_actors::dev::Notification;
use tokio::sync::mpsc;

use crate::error::{ErrorCode, code};
use crate::protocol::{
    DiscoverResult, Implementation, InitializeResult, InputRequiredResult, InputResponses,
    ProtocolVersion, ResultType, ServerCapabilities, v2026::result_type_of,
};
use cache::ResultCache;
use handlers::Handlers;
use session::{CancelCall, ClientSession, Envelope, SetEnvelope, Shutdown};

/// A connection to one MCP server. Cheap to clone; clones share the connection, which closes
/// when [`close`](Self::close) is called or the last clone is dropped.
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    session: Addr<ClientSession>,
    /// The connection, asked for what it knows (the session id).
    transport: Arc<dyn transport::Transport>,
    handlers: Arc<Handlers>,
    /// The server's description: the `initialize` result, or in the 2026 era one made from
    /// the `server/discover` result.
    init: InitializeResult,
    discover: Option<DiscoverResult>,
    era: Era,
    version: Mutex<ProtocolVersion>,
    /// The 2026 era's per-request `_meta` (a copy of the session's).
    envelope: Mutex<Option<Envelope>>,
    timeout: Option<Duration>,
    /// Whether `input_required` rounds are driven by the client.
    auto_input: bool,
    max_input_rounds: usize,
    cache: Option<Arc<ResultCache>>,
    /// The SDK's own actix system, when the client was connected outside one.
    runtime: Option<Arc<runtime::ClientRuntime>>,
    /// One listen stream for the tasks the client's handles wait for.
    task_watch: task_watch::TaskWatch,
    /// Reports the connection's duration when it ends.
    #[cfg(feature = "otel")]
    telemetry: crate::telemetry::ClientSessionTimer,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        // The last handle is gone: nobody can use the connection any more.
        match self.runtime.take() {
            None => self.session.do_send(Shutdown),
            Some(runtime) => {
                // The SDK's own system stops (with the last client's runtime handle) only once
                // the session has closed its transport.
                let session = self.session.clone();
                let arbiter = runtime.arbiter().clone();
                arbiter.spawn(async move {
                    let _ = session.send(Shutdown).await;
                    drop(runtime);
                });
            }
        }
        #[cfg(feature = "otel")]
        self.telemetry.record(*lock(&self.version));
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.inner.init.server_info.name)
            .field("era", &self.inner.era)
            .field("protocol_version", &self.protocol_version())
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

    /// The session id the server assigned, while there is one: over Streamable HTTP in the
    /// 2025 era (it changes when an expired session is renewed). `None` over stdio and in the
    /// 2026 era, which have no session ids.
    pub fn session_id(&self) -> Option<String> {
        self.inner.transport.session_id()
    }

    /// The protocol version in use: the one the handshake settled on (2025 era), or the one
    /// every request carries (2026 era).
    pub fn protocol_version(&self) -> ProtocolVersion {
        *lock(&self.inner.version)
    }

    /// The era the client speaks (see [`Lifecycle`]).
    pub fn era(&self) -> Era {
        self.inner.era
    }

    /// Whether the client speaks 2026-07-28 (or later).
    pub(crate) fn is_v2026(&self) -> bool {
        self.inner.era == Era::V2026
    }

    /// The whole `initialize` result; in the 2026 era, one made from the `server/discover`
    /// result (its protocol version is the one in use).
    pub fn initialize_result(&self) -> &InitializeResult {
        &self.inner.init
    }

    /// The `server/discover` result the client connected with (2026 era; `None` in the 2025
    /// era, or when a 2026-07-28 server refused the probe with a 2026 error).
    pub fn discover_result(&self) -> Option<&DiscoverResult> {
        self.inner.discover.as_ref()
    }

    /// Whether the connection is still open.
    pub fn is_connected(&self) -> bool {
        self.inner.session.connected()
    }

    /// Sends a request and returns a handle on its answer at once (see [`PendingRequest`]).
    ///
    /// In the 2026 era over HTTP a `tools/call` of a tool whose `x-mcp-header` marks the
    /// client has not learnt yet reads `tools/list` first, so that the call carries its
    /// `Mcp-Param-*` headers (the `-32020` retry needs [`request`](Self::request)).
    ///
    /// # Errors
    /// When the connection is closed, or the `tools/list` read first fails.
    pub async fn start_request<R: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<PendingRequest<R>, ClientError> {
        self.learn_tool_headers(method, params.as_ref()).await?;
        self.send_call(
            method,
            params,
            options.timeout.or(self.inner.timeout),
            options.progress,
            None,
        )
        .await
    }

    /// Sends a `subscriptions/listen` request, without a time limit, whose notifications go
    /// to `listener`.
    pub(crate) async fn start_listen(
        &self,
        params: Value,
        listener: mpsc::Sender<Notification>,
    ) -> Result<PendingRequest<Value>, ClientError> {
        let method = crate::protocol::method::SUBSCRIPTIONS_LISTEN;
        self.send_call(method, Some(params), None, None, Some(listener))
            .await
    }

    async fn send_call<R>(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
        progress: Option<ProgressCallback>,
        listener: Option<mpsc::Sender<Notification>>,
    ) -> Result<PendingRequest<R>, ClientError> {
        #[cfg(feature = "otel")]
        let mut params = params;
        #[cfg(feature = "otel")]
        let span = crate::telemetry::ClientSpan::start(
            method,
            &mut params,
            self.protocol_version(),
            self.inner.telemetry.network,
        );
        let (reply, answer) = oneshot::channel();
        let call = session::Call {
            method: Arc::from(method),
            params,
            timeout,
            progress,
            reply,
            listener,
        };
        let sent = self
            .inner
            .session
            .send(call)
            .await
            .map_err(|_| ClientError::TransportClosed("the client session has stopped".into()))
            .and_then(|sent| sent);
        let id = match sent {
            Ok(id) => id,
            Err(error) => {
                #[cfg(feature = "otel")]
                if let Some(span) = span {
                    span.finish(Err(error.failure()));
                }
                return Err(error);
            }
        };
        #[cfg(feature = "otel")]
        if let Some(span) = &span {
            span.set_id(&id);
        }
        Ok(PendingRequest {
            id: Some(id),
            session: self.inner.session.clone(),
            answer,
            _result: PhantomData,
            #[cfg(feature = "otel")]
            span,
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
    ///
    /// In the 2026 era the request also gets its `_meta`; a `-32022` answer is retried once
    /// with a version the server lists; a `tools/call` carries the `Mcp-Param-*` headers of
    /// its tool (learnt from `tools/list`, read first when the tool was not listed yet) and a
    /// `-32020` answer to it is retried once after reading `tools/list` again; a result that
    /// asks for input (`tools/call`, `prompts/get`, `resources/read`) is driven to its end with
    /// the builder's handlers ([`mrtr`]); list and read results may come from the cache.
    ///
    /// The client's middleware ([`ClientMiddleware`]) run around it.
    pub async fn request<R: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<R, ClientError> {
        let middleware = &self.inner.handlers.middleware;
        let value = if middleware.is_empty() {
            self.request_value(method, params, options).await?
        } else {
            middleware
                .around(method, params, |method, params| async move {
                    self.request_value(&method, params, options).await
                })
                .await?
        };
        decode(value)
    }

    /// What the server declared of extension `id` (its settings), if it declared it.
    pub fn server_extension(&self, id: &str) -> Option<&serde_json::Map<String, Value>> {
        self.server_capabilities()
            .extra
            .get("extensions")?
            .get(id)?
            .as_object()
    }

    /// The names of the client's middleware, in the order their `before` hooks run.
    pub fn middleware(&self) -> Vec<&str> {
        self.inner.handlers.middleware.names()
    }

    /// [`request`](Self::request), with the answer as JSON: a task the server answered with
    /// (Tasks extension) is waited for ([`tasks`]).
    async fn request_value(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<Value, ClientError> {
        let timeout = options.timeout.or(self.inner.timeout);
        match self.drive(method, params, options).await? {
            CallOutcome::Task(task) => {
                // Boxed: following the task sends requests of its own.
                let handle = TaskHandle::from_task(self.clone(), *task, timeout);
                let result = Box::pin(handle.result()).await?;
                serde_json::to_value(result)
                    .map_err(|err| ClientError::Protocol(format!("unserialisable result: {err}")))
            }
            CallOutcome::Complete(value) => Ok(value),
            CallOutcome::InputRequired(_) => Err(ClientError::Protocol(format!(
                "{method}: input rounds were not driven"
            ))),
        }
    }

    /// A request driven through its input rounds (2026 era): its final result, or the task
    /// the server answered a `tools/call` with (never `InputRequired`).
    async fn drive(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<CallOutcome<Value>, ClientError> {
        if !self.is_v2026() {
            return self
                .start_request(method, params, options)
                .await?
                .await
                .map(CallOutcome::Complete);
        }
        // The ticket is taken before the request goes: a change that concerns it from now on
        // keeps its result out of the cache.
        let cached = self.inner.cache.as_ref().and_then(|cache| {
            let key = ResultCache::key(method, params.as_ref())?;
            Some((cache, key, cache.ticket()))
        });
        if let Some((cache, key, _)) = &cached
            && let Some(hit) = cache.get(key)
        {
            return Ok(CallOutcome::Complete(hit));
        }
        let mut retry: Option<InputRetry> = None;
        let mut rounds = 0;
        loop {
            let sent = match &retry {
                Some(retry) => Some(retry.apply(params.clone())),
                None => params.clone(),
            };
            let outcome = match self.v2026_round(method, sent, options.clone()).await {
                Err(ClientError::Rpc(error))
                    if error.code == ErrorCode::INVALID_PARAMS
                        && params.as_ref().and_then(|p| p.get("cursor")).is_some() =>
                {
                    // An invalid cursor: every cached page of the list may be stale.
                    if let Some((cache, ..)) = &cached {
                        cache.forget(method);
                    }
                    return Err(ClientError::Rpc(error));
                }
                outcome => outcome?,
            };
            match outcome {
                CallOutcome::Complete(value) => {
                    if retry.is_none()
                        && let Some((cache, key, ticket)) = cached
                    {
                        cache.put(key, method, params.as_ref(), &value, ticket);
                    }
                    return Ok(CallOutcome::Complete(value));
                }
                CallOutcome::Task(task) => return Ok(CallOutcome::Task(task)),
                CallOutcome::InputRequired(round) => {
                    if !self.inner.auto_input {
                        return Err(ClientError::InputRequired(Box::new(round)));
                    }
                    rounds += 1;
                    if rounds > self.inner.max_input_rounds {
                        return Err(ClientError::Protocol(format!(
                            "{method}: the server still asks for input after {} rounds",
                            self.inner.max_input_rounds
                        )));
                    }
                    let responses = mrtr::fulfil(&self.inner.handlers, &round).await?;
                    retry = Some(InputRetry::new(&round, responses));
                }
            }
        }
    }

    /// One request of the 2026 era, retried once on `-32022` with a version the server
    /// lists, and (a `tools/call`) once on `-32020` after reading `tools/list` again; its
    /// `resultType` read.
    async fn v2026_round(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<CallOutcome<Value>, ClientError> {
        let mut version_retried = false;
        let mut headers_retried = false;
        loop {
            let answer = self
                .start_request::<Value>(method, params.clone(), options.clone())
                .await?
                .await;
            let value = match answer {
                Err(ClientError::Rpc(error))
                    if error.code == code::UNSUPPORTED_PROTOCOL_VERSION && !version_retried =>
                {
                    version_retried = true;
                    if self.adopt_supported_version(&error).await {
                        continue;
                    }
                    return Err(ClientError::Rpc(error));
                }
                Err(ClientError::Rpc(error))
                    if error.code == code::HEADER_MISMATCH
                        && method == crate::protocol::method::TOOLS_CALL
                        && !headers_retried =>
                {
                    headers_retried = true;
                    tracing::debug!("header mismatch; reading tools/list again");
                    self.relist_tools().await?;
                    continue;
                }
                other => other?,
            };
            return classify(method, value, self.declares_tasks());
        }
    }

    /// After a `-32022`: speaks the newest version of `error.data.supported` this SDK knows
    /// from now on. `false` when there is none.
    pub(crate) async fn adopt_supported_version(
        &self,
        error: &actix_mcp_actors::ErrorObject,
    ) -> bool {
        let Some(version) = lifecycle::supported_version(error) else {
            return false;
        };
        let envelope = {
            let mut envelope = lock(&self.inner.envelope);
            let Some(envelope) = envelope.as_mut() else {
                return false;
            };
            envelope.version = version;
            envelope.clone()
        };
        *lock(&self.inner.version) = version;
        tracing::debug!(
            version = version.as_str(),
            "the server asked for another version"
        );
        self.inner
            .session
            .send(SetEnvelope(Some(envelope)))
            .await
            .is_ok()
    }

    /// Changes the 2026 envelope (the log level) for the requests that follow.
    pub(crate) async fn update_envelope(
        &self,
        change: impl FnOnce(&mut Envelope),
    ) -> Result<(), ClientError> {
        let envelope = {
            let mut envelope = lock(&self.inner.envelope);
            let Some(envelope) = envelope.as_mut() else {
                return Err(ClientError::Protocol("not in the 2026 era".into()));
            };
            change(envelope);
            envelope.clone()
        };
        self.inner
            .session
            .send(SetEnvelope(Some(envelope)))
            .await
            .map_err(|_| ClientError::TransportClosed("the client session has stopped".into()))
    }

    /// One round of a request that may ask for input (2026 era), without driving it:
    /// `retry` answers the previous round. For the manual mode of [`mrtr`];
    /// see also the typed `*_step` calls.
    ///
    /// # Errors
    /// See [`ClientError`]; [`ClientError::Protocol`] in the 2025 era.
    ///
    /// # Cancel safety
    /// As [`request`](Self::request).
    pub async fn request_step<R: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
        retry: Option<InputRetry>,
        options: CallOptions,
    ) -> Result<CallOutcome<R>, ClientError> {
        if !self.is_v2026() {
            return Err(ClientError::Protocol(
                "input rounds need the 2026 era; this server speaks an older revision".into(),
            ));
        }
        let params = match &retry {
            Some(retry) => Some(retry.apply(params)),
            None => params,
        };
        match self.v2026_round(method, params, options).await? {
            CallOutcome::Complete(value) => decode(value).map(CallOutcome::Complete),
            CallOutcome::InputRequired(round) => Ok(CallOutcome::InputRequired(round)),
            CallOutcome::Task(task) => Ok(CallOutcome::Task(task)),
        }
    }

    /// Answers every input request of `round` with the builder's handlers (elicitation,
    /// sampling, roots), for a manual retry: `InputRetry::new(&round, responses)`.
    ///
    /// # Errors
    /// [`ClientError::InputFailed`] for the first request a handler refused or has no
    /// handler for.
    pub async fn fulfil_input(
        &self,
        round: &InputRequiredResult,
    ) -> Result<InputResponses, ClientError> {
        mrtr::fulfil(&self.inner.handlers, round).await
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
    /// HTTP session (2025 era) is ended with `DELETE`, a child process has its stdin closed and is killed
    /// after a grace period. Other clones of this client are closed too.
    pub async fn close(&self) {
        let _ = self.inner.session.send(Shutdown).await;
    }
}

/// Deserialises an answer as `R`.
fn decode<R: DeserializeOwned>(value: Value) -> Result<R, ClientError> {
    serde_json::from_value(value).map_err(|err| {
        ClientError::Protocol(format!("the server's answer has the wrong shape: {err}"))
    })
}

/// Reads a 2026 result's `resultType`: absent or `complete` is final; `input_required` only
/// for the methods that may ask; `task` only for a `tools/call` of a client that declares the
/// Tasks extension (`tasks`); anything else is a protocol violation.
fn classify(method: &str, value: Value, tasks: bool) -> Result<CallOutcome<Value>, ClientError> {
    match result_type_of(&value) {
        Ok(ResultType::Complete) => Ok(CallOutcome::Complete(value)),
        Ok(ResultType::InputRequired) if mrtr::MRTR_METHODS.contains(&method) => {
            let round: InputRequiredResult = decode(value)?;
            if round.input_requests.is_none() && round.request_state.is_none() {
                return Err(ClientError::Protocol(format!(
                    "{method}: an input_required result with neither inputRequests nor \
                     requestState"
                )));
            }
            Ok(CallOutcome::InputRequired(round))
        }
        Ok(ResultType::InputRequired) => Err(ClientError::Protocol(format!(
            "the server asked for input on {method}, which cannot take any"
        ))),
        Ok(ResultType::Task) if tasks && method == crate::protocol::method::TOOLS_CALL => {
            let task: crate::protocol::DetailedTask = decode(value)?;
            Ok(CallOutcome::Task(Box::new(task)))
        }
        Ok(ResultType::Task) => Err(ClientError::Protocol(format!(
            "the server answered {method} with a task, but this client does not declare the \
             tasks extension for it"
        ))),
        Err(unknown) => Err(ClientError::Protocol(format!(
            "the server answered {method} with the unknown resultType {unknown:?}"
        ))),
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
    /// The request's span, ended with its answer.
    #[cfg(feature = "otel")]
    span: Option<crate::telemetry::ClientSpan>,
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
        #[cfg(feature = "otel")]
        if let Some(span) = self.span.take() {
            span.finish(outcome.as_ref().map_err(ClientError::failure));
        }
        Poll::Ready(outcome.and_then(|value| {
            serde_json::from_value(value).map_err(|err| {
                ClientError::Protocol(format!("the server's answer has the wrong shape: {err}"))
            })
        }))
    }
}
