//! [`RequestContext`]: what every handler (tool, prompt, resource read, completion, subscribe,
//! custom method) knows about the request it serves, and what it can do with it: report
//! progress, log to this request's client, watch for cancellation, and ask the client for
//! sampling, elicitation and roots.
//!
//! The protocol version and client capabilities belong to the request: the session only
//! supplies them as defaults (the 2026 protocol carries them in every request's `_meta`).
//!
//! The same handler code serves both eras: asking the client (`elicit`, `create_message`,
//! `list_roots`) sends a real request in a session, and becomes a multi round-trip
//! `input_required` round for a 2026-07-28 client (see `server::mrtr`).

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

#[cfg(feature = "http")]
use actix_web::http::header::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use actix_mcp_actors::{PeerError, RequestId, SessionId, dev::RequestScope};

use crate::protocol::InputRequest;
use crate::protocol::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationSchema, Implementation, InputResponses, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParams, Meta, ProtocolVersion, method,
};
use crate::server::auth::Identity;
use crate::server::mrtr::call::CallLink;
use crate::server::mrtr::round::{Mrtr, RoundInput};
use crate::server::report::{LogMessage, Progress};
use crate::server::session::SessionState;
use crate::server::{Server, ServerInner};

/// A request's `_meta`: parsed, or its text, parsed when a handler first reads it (a
/// 2026-07-28 request's whole envelope, which the door has read what it needs from).
#[derive(Clone)]
pub(crate) enum MetaCell {
    Parsed(Meta),
    Text {
        text: Box<RawValue>,
        parsed: OnceLock<Meta>,
    },
}

impl MetaCell {
    /// `_meta` kept as text, parsed on first use.
    pub(crate) fn text(text: Box<RawValue>) -> Self {
        Self::Text {
            text,
            parsed: OnceLock::new(),
        }
    }

    fn get(&self) -> &Meta {
        match self {
            Self::Parsed(meta) => meta,
            // The text is an object the request's parse read once already.
            Self::Text { text, parsed } => {
                parsed.get_or_init(|| serde_json::from_str(text.get()).unwrap_or_default())
            }
        }
    }
}

/// Everything a handler knows about its request. Cheap to clone.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<ContextInner>,
}

pub(crate) struct ContextInner {
    pub(crate) scope: RequestScope,
    pub(crate) server: Arc<ServerInner>,
    pub(crate) method: std::borrow::Cow<'static, str>,
    /// Held in the context itself, not shared apart: a context is built once per request,
    /// and rebuilt (for a task, or a session's round of input) seldom.
    pub(crate) meta: Option<MetaCell>,
    pub(crate) version: ProtocolVersion,
    pub(crate) client_capabilities: Arc<ClientCapabilities>,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) session: Option<Arc<SessionState>>,
    /// The log level a 2026-07-28 request opted in to (2026: without one, no log messages).
    pub(crate) log_level: Option<LoggingLevel>,
    /// What the client sent back for an earlier `input_required` round.
    pub(crate) input: Option<Arc<RoundInput>>,
    /// The MRTR side of a 2026-07-28 `tools/call`, `prompts/get` or `resources/read`.
    pub(crate) mrtr: Option<Arc<Mrtr>>,
    /// The implicit-style call this handler runs in (a 2026-07-28 MRTR request's): its asks
    /// for input become `input_required` rounds, and its notifications follow the request
    /// serving it. Made on first use (see [`call_link`](Self::call_link)): most handlers never
    /// ask, log or watch for cancellation, and finish in their first poll without one.
    pub(crate) link: OnceLock<Arc<CallLink>>,
    /// The task this invocation runs in (Tasks extension).
    pub(crate) task_id: Option<Arc<str>>,
    /// What the HTTP transport knows of the request: the caller, the headers.
    pub(crate) transport: Option<Arc<TransportInfo>>,
}

/// What the HTTP transport hands a request's handlers: the caller's identity (on a
/// bearer-protected endpoint) and a snapshot of the request's headers (without credentials).
#[derive(Debug, Default)]
pub(crate) struct TransportInfo {
    pub(crate) identity: Option<Arc<Identity>>,
    #[cfg(feature = "http")]
    pub(crate) headers: Option<HeaderMap>,
    /// The HTTP request's W3C trace context headers.
    #[cfg(feature = "otel")]
    pub(crate) trace: Option<crate::telemetry::TraceHeaders>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", self.request_id())
            .field("method", &self.inner.method)
            .field("version", &self.inner.version)
            .field("session", &self.session_id())
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl RequestContext {
    pub(crate) fn new(inner: ContextInner) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The request's JSON-RPC id.
    pub fn request_id(&self) -> &RequestId {
        self.inner.scope.id()
    }

    /// The method being served.
    pub fn method(&self) -> &str {
        &self.inner.method
    }

    /// The request's `params._meta`, unknown keys included.
    pub fn meta(&self) -> Option<&Meta> {
        self.inner.meta.as_ref().map(MetaCell::get)
    }

    /// The protocol version this request is served under.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// The client's answers to the `input_required` round this request retries, by the keys
    /// of the input requests (see [`McpError::input_required`](crate::McpError::input_required)).
    pub fn input_responses(&self) -> Option<&InputResponses> {
        self.inner.input.as_ref().map(|input| &input.responses)
    }

    /// The client's answer to one input request of the round this request retries.
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        self.input_responses()?.get(key)
    }

    /// The client's answer to one input request, read as `T` (an [`ElicitResult`], a
    /// [`CreateMessageResult`] or a [`ListRootsResult`]); `None` when absent or of another
    /// shape.
    pub fn input_response_as<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        T::deserialize(self.input_response(key)?).ok()
    }

    /// The state the handler put in the `input_required` result this request retries, as the
    /// handler wrote it. A client never supplies it unchecked: a 2026-07-28 client echoes it
    /// sealed, and the SDK opens and checks it before the handler runs; in a 2025-11-25 session
    /// it never leaves the process; anything else a request says of its rounds is ignored.
    pub fn request_state(&self) -> Option<&str> {
        self.inner.input.as_ref()?.state.as_deref()
    }

    /// This context with another round's input (the same request otherwise).
    pub(crate) fn with_input(&self, input: Option<RoundInput>) -> Self {
        self.rebuilt(|inner| inner.input = input.map(Arc::new))
    }

    /// The implicit-style call this context's handler runs in: only a 2026-07-28 MRTR request
    /// has one, made on first use. A handler resumed from the park keeps the context (and the
    /// call) of the request that began it.
    pub(crate) fn call_link(&self) -> Option<&Arc<CallLink>> {
        Some(self.call_link_of(self.inner.mrtr.as_ref()?))
    }

    /// The call of this context's MRTR request `mrtr`, made on first use, knowing the answers
    /// the request carries.
    pub(crate) fn call_link_of(&self, mrtr: &Mrtr) -> &Arc<CallLink> {
        let inner = &*self.inner;
        inner.link.get_or_init(|| {
            CallLink::new(
                inner.scope.clone(),
                inner.log_level,
                mrtr.known_answers(),
                inner.server.mrtr.park.clone(),
                inner.scope.metrics().clone(),
            )
        })
    }

    fn rebuilt(&self, change: impl FnOnce(&mut ContextInner)) -> Self {
        let inner = &self.inner;
        let mut next = ContextInner {
            scope: inner.scope.clone(),
            server: inner.server.clone(),
            method: inner.method.clone(),
            meta: inner.meta.clone(),
            version: inner.version,
            client_capabilities: inner.client_capabilities.clone(),
            client_info: inner.client_info.clone(),
            session: inner.session.clone(),
            log_level: inner.log_level,
            input: inner.input.clone(),
            mrtr: inner.mrtr.clone(),
            link: inner.link.clone(),
            task_id: inner.task_id.clone(),
            transport: inner.transport.clone(),
        };
        change(&mut next);
        Self::new(next)
    }

    /// The log level this request's own `_meta` opted in to (2026).
    pub(crate) fn request_log_level(&self) -> Option<LoggingLevel> {
        self.inner.log_level
    }

    /// The MRTR side of this request (2026-07-28 `tools/call`, `prompts/get`,
    /// `resources/read`).
    pub(crate) fn mrtr(&self) -> Option<&Arc<Mrtr>> {
        self.inner.mrtr.as_ref()
    }

    /// This context for the task `task_id` (Tasks extension): the task's own `scope`, which
    /// outlives the request, no log messages (a task has no stream), the same round input.
    pub(crate) fn for_task(&self, scope: RequestScope, task_id: &str) -> Self {
        let inner = &self.inner;
        Self::new(ContextInner {
            scope,
            server: inner.server.clone(),
            method: inner.method.clone(),
            meta: inner.meta.clone(),
            version: inner.version,
            client_capabilities: inner.client_capabilities.clone(),
            client_info: inner.client_info.clone(),
            session: None,
            log_level: None,
            input: inner.input.clone(),
            // A task asks for input by answering `input_required` (explicitly); its rounds go
            // through `tasks/update`, not through a parked request.
            mrtr: None,
            link: OnceLock::new(),
            task_id: Some(Arc::from(task_id)),
            transport: inner.transport.clone(),
        })
    }

    /// The task this invocation runs in, when a `tools/call` may become a task (Tasks
    /// extension): the tool then runs after its request was answered, until it finishes, is
    /// cancelled with `tasks/cancel`, or the task expires. A call the tool finishes in its
    /// first poll is answered inline instead, and its task id is dropped unused.
    pub fn task_id(&self) -> Option<&str> {
        self.inner.task_id.as_deref()
    }

    /// Who made this request: the identity the endpoint's token validator established from
    /// its `Authorization: Bearer` token (see [`auth`](crate::server::auth)). `None` without
    /// bearer auth: over stdio, on an unprotected HTTP endpoint, in process, and in a custom
    /// notification handler of a 2025-11-25 session (notifications reach it through the
    /// session, after the transport checked the token). A task keeps the identity of the
    /// request that started it.
    ///
    /// The token itself is not available to handlers: a server must not pass it on (token
    /// passthrough is forbidden); call upstream APIs with tokens of its own.
    pub fn identity(&self) -> Option<&Identity> {
        self.inner.transport.as_ref()?.identity.as_deref()
    }

    /// A read-only snapshot of the HTTP request's headers, taken when the request arrived,
    /// without `Authorization`, `Proxy-Authorization` and `Cookie`. Present on an endpoint with
    /// [`bearer_auth`](crate::transport::http::McpHttp::bearer_auth) or
    /// [`capture_headers`](crate::transport::http::McpHttpBuilder::capture_headers); `None` otherwise
    /// and over stdio. On a 2025-11-25 session these are the headers of this request, not of
    /// the one that opened the session.
    #[cfg(feature = "http")]
    pub fn http_headers(&self) -> Option<&HeaderMap> {
        self.inner.transport.as_ref()?.headers.as_ref()
    }

    /// Whether this request is served under revision 2026-07-28 or later: its version and
    /// capabilities came from its own `_meta`, and the client can only be asked for input
    /// through `input_required` results.
    #[deprecated(
        since = "0.2.0",
        note = "ask what the handler needs: `protocol_version()` (e.g. \
                `!protocol_version().has_handshake()`) or `session_id().is_some()`"
    )]
    pub fn is_stateless(&self) -> bool {
        self.is_v2026()
    }

    /// Whether this request is served under revision 2026-07-28 or later (no handshake, its
    /// version and capabilities from its own `_meta`).
    pub(crate) fn is_v2026(&self) -> bool {
        !self.inner.version.has_handshake()
    }

    /// The capabilities the client declared for this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.client_capabilities
    }

    /// What the client said about itself, when it did.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.client_info.as_deref()
    }

    /// The session id; `None` on a 2026-07-28 request and on a sessionless 2025 HTTP request.
    pub fn session_id(&self) -> Option<&SessionId> {
        self.inner.scope.session().map(|session| session.id())
    }

    /// Application state registered with [`ServerBuilder::state`](crate::ServerBuilder::state).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner.server.state.get::<T>()
    }

    /// The size of the pages the server splits lists into ([`ServerBuilder::page_size`](crate::ServerBuilder::page_size)),
    /// for an extension's own paginated methods; `None`: one page.
    pub fn page_size(&self) -> Option<usize> {
        self.inner.server.config.page_size
    }

    /// The server (to register tools at run time or send list-changed notifications).
    pub fn server(&self) -> Server {
        Server {
            inner: self.inner.server.clone(),
        }
    }

    /// Whether the client cancelled this request (or its session ended).
    pub fn is_cancelled(&self) -> bool {
        match self.call_link() {
            Some(link) => link.token().is_cancelled(),
            None => self.inner.scope.is_cancelled(),
        }
    }

    /// Completes when the request is cancelled.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub async fn cancelled(&self) {
        self.cancellation_token().cancelled().await;
    }

    /// The request's cancellation token (a child of its session's).
    ///
    /// In an implicit-style call of a 2026 request (one whose asks for input became
    /// `input_required` rounds) this is the call's token: the end of a round does not cancel
    /// it; the client cancelling (or leaving) the request that serves the call does.
    pub fn cancellation_token(&self) -> CancellationToken {
        match self.call_link() {
            Some(link) => link.token().clone(),
            None => self.inner.scope.token().clone(),
        }
    }

    /// Reports progress (`notifications/progress`) on this request's stream:
    /// `cx.progress(Progress::new(1.0).total(4.0).message("copying"))`, or `cx.progress(1.0)`
    /// for progress alone. A no-op when the request carried no `progressToken`; values must
    /// increase (a value that does not is dropped and logged).
    pub fn progress(&self, progress: impl Into<Progress>) {
        let Progress {
            progress,
            total,
            message,
        } = progress.into();
        if let Err(err) = self.scope().progress(progress, total, message.as_deref()) {
            tracing::debug!(id = %self.request_id(), %err, progress, "progress not sent");
        }
    }

    /// Whether the client has sent `notifications/initialized` (always `false` outside a
    /// session).
    pub fn is_client_initialized(&self) -> bool {
        self.inner
            .session
            .as_ref()
            .is_some_and(|s| s.is_initialized())
    }

    /// Whether this request carried a progress token.
    pub fn has_progress_token(&self) -> bool {
        self.scope().progress_token().is_some()
    }

    /// Sends a log message (`notifications/message`) to this request's client only:
    /// `cx.log(LogMessage::new(LoggingLevel::Info, "done").logger("db"))`. Sent when its
    /// level is at or above the level the client set (`info` until it sets one; a 2026
    /// request gets messages only at or above the `logLevel` of its `_meta`, and none without
    /// one).
    ///
    /// **Deprecated in protocol 2026-07-28** (SEP-2577: logging is still specified, and served
    /// here, but new code should report through its own observability instead).
    pub fn log(&self, message: LogMessage) {
        let LogMessage {
            level,
            data,
            logger,
        } = message;
        if !self.log_enabled(level) {
            return;
        }
        let params = LoggingMessageNotificationParams {
            level,
            logger,
            data,
            meta: None,
        };
        match serde_json::to_value(&params) {
            Ok(params) => self
                .scope()
                .notify(method::NOTIFICATION_MESSAGE, Some(&params)),
            Err(err) => tracing::warn!(%err, "could not serialise a log message"),
        }
    }

    /// Whether a message at `level` would be sent. A 2026 request gets log messages only at or
    /// above the level its `_meta` names, and none without one.
    pub fn log_enabled(&self, level: LoggingLevel) -> bool {
        if self.is_v2026() {
            // A resumed call logs under the level of the request serving it now.
            let threshold = match self.call_link() {
                Some(link) => link.log_level(),
                None => self.inner.log_level,
            };
            return threshold.is_some_and(|threshold| level >= threshold);
        }
        let threshold = self
            .inner
            .session
            .as_ref()
            .and_then(|s| s.log_level())
            .unwrap_or(LoggingLevel::Info);
        level >= threshold
    }

    /// Outside a session (the HTTP transport's stateless mode, in-process calls) the client cannot be asked
    /// anything, whatever it declared: say so before checking capabilities, which are unknown
    /// there.
    fn require_session(&self) -> Result<(), PeerError> {
        if self.inner.scope.session().is_some() || self.call_link().is_some() {
            Ok(())
        } else {
            Err(PeerError::Stateless)
        }
    }

    /// Asks for input as an `input_required` round (implicit style), when this handler runs
    /// in such a call.
    async fn ask_round<R: DeserializeOwned>(
        &self,
        kind: &str,
        request: InputRequest,
    ) -> Option<Result<R, PeerError>> {
        let link = self.call_link()?;
        Some(match link.ask(kind, request).await {
            Ok(value) => {
                serde_json::from_value(value).map_err(|err| PeerError::Malformed(err.to_string()))
            }
            Err(err) => Err(err),
        })
    }

    fn peer_timeout(&self) -> Option<Duration> {
        self.inner.server.config.peer_request_timeout
    }

    async fn peer<P: serde::Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, PeerError> {
        let params =
            serde_json::to_value(params).map_err(|err| PeerError::Malformed(err.to_string()))?;
        let value = self.send_peer(method, Some(params)).await?;
        serde_json::from_value(value).map_err(|err| PeerError::Malformed(err.to_string()))
    }

    /// Asks the client to sample an LLM (`sampling/createMessage`) and waits for the result.
    ///
    /// In a 2026-07-28 `tools/call`, `prompts/get` or `resources/read` (no session) the ask
    /// becomes an `input_required` round instead: the handler waits, parked, until the client
    /// retries with the answer, and goes on where it waited (see the `mrtr` module docs).
    ///
    /// **Deprecated in protocol 2026-07-28** (still specified and served; new code should call
    /// a model itself).
    ///
    /// # Errors
    /// [`PeerError::Stateless`] outside a session (and outside the requests that may ask for
    /// input); [`PeerError::MissingCapability`] when the client lacks `sampling` (or `sampling.tools` while `tools` or `toolChoice` are set):
    /// nothing is sent then. Otherwise see [`RequestScope::peer_request`].
    ///
    /// # Cancel safety
    /// Dropping the future sends `notifications/cancelled` for the nested request.
    pub async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, PeerError> {
        self.require_session()?;
        let caps = self.client_capabilities();
        if !caps.supports_sampling() {
            return Err(PeerError::MissingCapability("sampling".into()));
        }
        if (params.tools.is_some() || params.tool_choice.is_some())
            && !caps.supports_sampling_tools()
        {
            return Err(PeerError::MissingCapability("sampling.tools".into()));
        }
        if let Some(answer) = self
            .ask_round("sampling", InputRequest::sampling(&params))
            .await
        {
            return answer;
        }
        self.peer(method::SAMPLING_CREATE_MESSAGE, &params).await
    }

    /// Asks the client for input (`elicitation/create`), form or URL mode.
    ///
    /// In a 2026-07-28 `tools/call`, `prompts/get` or `resources/read` (no session) the ask
    /// becomes an `input_required` round instead: the handler waits, parked, until the client
    /// retries with the answer, and goes on where it waited (see the `mrtr` module docs).
    ///
    /// # Errors
    /// [`PeerError::Stateless`] outside a session; [`PeerError::MissingCapability`] when the
    /// client did not declare the mode; otherwise see [`RequestScope::peer_request`].
    ///
    /// # Cancel safety
    /// Dropping the future sends `notifications/cancelled` for the nested request.
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, PeerError> {
        self.require_session()?;
        let caps = self.client_capabilities();
        match &params {
            ElicitRequestParams::Form(_) if !caps.supports_elicitation_form() => {
                return Err(PeerError::MissingCapability("elicitation.form".into()));
            }
            ElicitRequestParams::Url(_) if !caps.supports_elicitation_url() => {
                return Err(PeerError::MissingCapability("elicitation.url".into()));
            }
            _ => {}
        }
        if let Some(answer) = self
            .ask_round("elicitation", InputRequest::elicitation(&params))
            .await
        {
            return answer;
        }
        self.peer(method::ELICITATION_CREATE, &params).await
    }

    /// Asks the user to fill a form (form-mode elicitation).
    ///
    /// # Errors
    /// See [`elicit`](Self::elicit).
    pub async fn elicit_form(
        &self,
        message: impl Into<String>,
        schema: ElicitationSchema,
    ) -> Result<ElicitResult, PeerError> {
        self.elicit(ElicitRequestParams::form(message, schema))
            .await
    }
    /// Asks the user to visit a URL (URL-mode elicitation, 2025-11-25+). `elicitation_id` is
    /// sent in a 2025-11-25 session, which requires it; a 2026-07-28 input request has none.
    ///
    /// # Errors
    /// See [`elicit`](Self::elicit).
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<ElicitResult, PeerError> {
        self.elicit(ElicitRequestParams::url(message, url, elicitation_id))
            .await
    }

    /// Tells the client a URL-mode elicitation finished (`notifications/elicitation/complete`).
    /// It travels on this request's stream, or the session's when that one is closed. Does
    /// nothing in a 2026-07-28 request: that revision has no such notification (the client
    /// learns of the completion when it retries).
    pub fn notify_elicitation_complete(&self, elicitation_id: &str) {
        if self.is_v2026() {
            tracing::debug!(
                elicitation_id,
                "notifications/elicitation/complete is not sent to a 2026-07-28 client"
            );
            return;
        }
        let params = serde_json::json!({ "elicitationId": elicitation_id });
        let frame = actix_mcp_actors::dev::Frame::notification(
            method::NOTIFICATION_ELICITATION_COMPLETE,
            Some(&params),
        );
        let scope = self.scope();
        if let Err(frame) = scope.outlet().deliver(frame)
            && let Some(session) = scope.session()
        {
            session.notify(frame);
        }
    }

    /// Asks the client for its roots (`roots/list`).
    ///
    /// In a 2026-07-28 `tools/call`, `prompts/get` or `resources/read` (no session) the ask
    /// becomes an `input_required` round instead: the handler waits, parked, until the client
    /// retries with the answer, and goes on where it waited (see the `mrtr` module docs).
    ///
    /// **Deprecated in protocol 2026-07-28** (still specified and served; prefer explicit
    /// arguments).
    ///
    /// # Errors
    /// [`PeerError::Stateless`] outside a session; [`PeerError::MissingCapability`] when the
    /// client lacks `roots`; otherwise see [`RequestScope::peer_request`].
    ///
    /// # Cancel safety
    /// Dropping the future sends `notifications/cancelled` for the nested request.
    pub async fn list_roots(&self) -> Result<ListRootsResult, PeerError> {
        self.require_session()?;
        if !self.client_capabilities().supports_roots() {
            return Err(PeerError::MissingCapability("roots".into()));
        }
        if let Some(answer) = self.ask_round("roots", InputRequest::list_roots()).await {
            return answer;
        }
        self.peer(method::ROOTS_LIST, &serde_json::json!({})).await
    }

    /// Sends any request to the client and returns its raw result. In a 2026-07-28 request
    /// that may ask for input, `elicitation/create`, `sampling/createMessage` and `roots/list`
    /// become an `input_required` round (see [`elicit`](Self::elicit)).
    ///
    /// # Errors
    /// [`PeerError::MissingCapability`] for an input kind the request did not declare (nothing
    /// is asked); otherwise see [`RequestScope::peer_request`].
    pub async fn request_client(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, PeerError> {
        if let Some(kind) = input_kind(method)
            && let Some(link) = self.call_link()
        {
            let request = InputRequest {
                method: method.to_owned(),
                params,
            };
            let (_, declared) = request.capability(self.client_capabilities());
            if !declared {
                return Err(PeerError::MissingCapability(kind.to_owned()));
            }
            return link.ask(kind, request).await;
        }
        self.send_peer(method, params).await
    }

    /// Sends a request to the client on this request's stream (see
    /// [`RequestScope::peer_request`]); with the feature `otel`, under a span whose context
    /// travels in the request's `_meta`.
    async fn send_peer(&self, method: &str, params: Option<Value>) -> Result<Value, PeerError> {
        let scope = self.scope();
        let timeout = self.peer_timeout();
        #[cfg(feature = "otel")]
        {
            crate::telemetry::peer_request(
                method,
                params,
                self.session_id(),
                self.protocol_version(),
                |params, sent_as| async move {
                    scope
                        .peer_request_with(method, params, timeout, |id| sent_as.record(id))
                        .await
                },
            )
            .await
        }
        #[cfg(not(feature = "otel"))]
        scope.peer_request(method, params, timeout).await
    }

    /// Sends any notification related to this request (it travels on the request's stream).
    pub fn notify(&self, method: &str, params: Option<Value>) {
        self.scope().notify(method, params.as_ref());
    }

    /// Closes this request's SSE connection early (Streamable HTTP only); the client resumes
    /// the stream with `Last-Event-ID` after the `retry` interval and receives the rest,
    /// including the result. Lets long calls run without holding a connection (SSE polling).
    /// A no-op where the stream is not resumable: a request without a session (2025-11-25
    /// stateless mode, every 2026-07-28 request), stdio, JSON answers.
    pub fn close_sse_stream(&self) {
        self.scope().close_connection();
    }

    /// The scope of the request this context was made for (a resumed call's handler is served
    /// by a later request's: see [`scope`](Self::scope)).
    pub(crate) fn request_scope(&self) -> &RequestScope {
        &self.inner.scope
    }

    /// The scope of the request serving this handler now: the request's own, or, for a
    /// resumed implicit-style call, the retry's (so notifications reach the client that
    /// waits).
    pub(crate) fn scope(&self) -> RequestScope {
        match self.call_link() {
            Some(link) => link.scope(),
            None => self.inner.scope.clone(),
        }
    }

    pub(crate) fn session_state(&self) -> Option<&Arc<SessionState>> {
        self.inner.session.as_ref()
    }
}

/// The key prefix of an input request's method, when it is one MRTR carries.
fn input_kind(method_name: &str) -> Option<&'static str> {
    match method_name {
        method::ELICITATION_CREATE => Some("elicitation"),
        method::SAMPLING_CREATE_MESSAGE => Some("sampling"),
        method::ROOTS_LIST => Some("roots"),
        _ => None,
    }
}
