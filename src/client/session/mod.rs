//! The client session actor: one per connection to a server.
//!
//! Started by [`ClientBuilder::connect`](crate::client::ClientBuilder::connect). Owns the table
//! of outgoing requests awaiting an answer (their ids, time limits and progress callbacks), the
//! server-to-client requests it is answering, and the connection's outgoing half. Everything
//! the server sends arrives, parsed, as [`Inbound`] events from the transport (a stream this
//! actor handles); everything the client sends leaves through [`Transport::send`].
//!
//! | message | sent by | does |
//! | --- | --- | --- |
//! | [`Call`] | a client call | gives the request an id, records it, sends it; the answer, a timeout (time the transport spent waiting for the user, [`Transport::interaction_time`], not counted), or the connection's end settles it |
//! | [`CancelCall`] | a dropped or cancelled call | forgets it and sends `notifications/cancelled` |
//! | [`Notify`] | `Client::notify` | sends a notification |
//! | [`Shutdown`] | `Client::close` | fails what is pending, closes the transport, stops |
//! | [`EnableRenewal`] | `ClientBuilder::connect`, with `renew_expired_sessions` | keeps what a new session needs |
//! | [`SetEnvelope`] | `ClientBuilder::connect` and the client, in the 2026 era | sets (or clears) the `_meta` every request carries |
//!
//! **The 2026 era.** With an [`Envelope`] set, every request gets its `_meta` keys
//! (protocol version, client capabilities, client info, log level) and every message the
//! request-metadata headers of [`headers`](crate::client::headers) (the transport mirrors them
//! on HTTP). The session learns each tool's `x-mcp-header` annotations from the `tools/list`
//! results it sees, routes the notifications of `subscriptions/listen` streams to their
//! listeners by `_meta["io.modelcontextprotocol/subscriptionId"]`, and drops the cached
//! results a change notification makes stale.
//!
//! With renewal on, a request the server refuses because it forgot the session (HTTP 404, see
//! [`renewal`]) waits while the session initializes a new one, then is sent again.
//!
//! Server-to-client requests (`sampling/createMessage`, `elicitation/create`, `roots/list`,
//! `ping`) run as futures of this actor ([`serve`]), each cancellable by the server's
//! `notifications/cancelled`; a handler that fails or panics answers with a JSON-RPC error and
//! the session goes on. In the 2026 era, where servers send no requests and clients no
//! responses, such a request is logged and ignored.
//!
//! Lifecycle: Started (reads its inbox) → Running → Stopped on [`Shutdown`] or when the
//! connection closes: every pending call fails with [`ClientError::TransportClosed`] (or the
//! reason the connection gave), and every running handler is dropped.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use actix::{
    Actor, ActorContext, ActorFutureExt, AsyncContext, Context, Handler, Message, SpawnHandle,
    StreamHandler, WrapFuture,
};
use serde::Deserialize as _;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use actix_mcp_actors::{
    RequestId,
    dev::{Frame, Incoming, Notification, Response},
};

use super::cache::ResultCache;
use super::error::ClientError;
use super::handlers::Handlers;
use super::headers::{self, ToolHeaders};
use super::transport::{Inbound, Outgoing, Transport};
use crate::protocol::{
    LoggingLevel, ProgressNotificationParams, ProtocolVersion, method,
    v2026::{
        META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
        META_SUBSCRIPTION_ID,
    },
};

mod renewal;
mod serve;

pub(crate) use renewal::EnableRenewal;
use renewal::Renewal;
pub(crate) use serve::answer;

/// Called with each `notifications/progress` for a call.
pub type ProgressCallback = Arc<dyn Fn(ProgressNotificationParams) + Send + Sync>;

struct Pending {
    method: Arc<str>,
    reply: oneshot::Sender<Result<Value, ClientError>>,
    progress: Option<(Value, ProgressCallback)>,
    timer: Option<SpawnHandle>,
    /// The transport's interaction time when the call was made, and how much of the time
    /// spent waiting for the user since has been added to its time limit.
    waited: (Duration, Duration),
    /// The request as sent, kept (with renewal on) to send it again in a new session if the
    /// server refuses it for an expired one; taken when it is re-sent, so that happens once.
    resend: Option<Outgoing>,
}

/// The client session actor. See the module docs.
pub(crate) struct ClientSession {
    transport: Arc<dyn Transport>,
    handlers: Arc<Handlers>,
    inbox: Option<mpsc::Receiver<Inbound>>,
    next_id: i64,
    pending: HashMap<RequestId, Pending>,
    /// Progress token → the call it belongs to.
    progress: HashMap<String, RequestId>,
    serving: HashMap<RequestId, (SpawnHandle, CancellationToken)>,
    closed: Option<ClientError>,
    /// Set by [`EnableRenewal`]: how to initialize a new session when the server forgets this
    /// one.
    renewal: Option<Renewal>,
    /// The 2026 era's per-request `_meta`; `None` in the 2025 era.
    envelope: Option<Envelope>,
    /// Each tool's `x-mcp-header` arguments, from the last `tools/list` results.
    tool_headers: ToolHeaders,
    /// `subscriptions/listen` requests (by subscription id) and where their notifications go.
    listeners: HashMap<String, mpsc::Sender<Notification>>,
    /// The results cache, invalidated by change notifications.
    cache: Option<Arc<ResultCache>>,
}

/// What every 2026 request carries in `params._meta`.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: Value,
    pub(crate) client_info: Value,
    pub(crate) log_level: Option<LoggingLevel>,
}

impl Envelope {
    /// Adds the envelope's keys to `params._meta` (creating both as needed).
    pub(crate) fn stamp(&self, params: &mut Option<Value>) {
        let params = params.get_or_insert_with(|| Value::Object(Map::new()));
        let Some(object) = params.as_object_mut() else {
            return;
        };
        let meta = object
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(
                META_PROTOCOL_VERSION.into(),
                Value::from(self.version.as_str()),
            );
            meta.insert(META_CLIENT_CAPABILITIES.into(), self.capabilities.clone());
            meta.insert(META_CLIENT_INFO.into(), self.client_info.clone());
            match self
                .log_level
                .and_then(|level| serde_json::to_value(level).ok())
            {
                Some(level) => meta.insert(META_LOG_LEVEL.into(), level),
                None => meta.remove(META_LOG_LEVEL),
            };
        }
    }
}

/// The text of a request id or subscription id, whatever its JSON type: the key of the
/// listener table.
fn id_key(id: &Value) -> String {
    match id {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

impl fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSession")
            .field("pending", &self.pending.len())
            .field("serving", &self.serving.len())
            .field("closed", &self.closed)
            .finish()
    }
}

/// A progress token as the key of the progress table: its JSON text, whatever its type.
fn progress_key<T: serde::Serialize>(token: &T) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

impl ClientSession {
    pub(crate) fn new(
        transport: Arc<dyn Transport>,
        handlers: Arc<Handlers>,
        inbox: mpsc::Receiver<Inbound>,
    ) -> Self {
        Self {
            transport,
            handlers,
            inbox: Some(inbox),
            next_id: 0,
            pending: HashMap::new(),
            progress: HashMap::new(),
            serving: HashMap::new(),
            closed: None,
            renewal: None,
            envelope: None,
            tool_headers: ToolHeaders::new(),
            listeners: HashMap::new(),
            cache: None,
        }
    }

    /// The cache the session keeps fresh.
    pub(crate) fn with_cache(mut self, cache: Option<Arc<ResultCache>>) -> Self {
        self.cache = cache;
        self
    }

    /// The request-metadata headers of a message, in the 2026 era.
    fn headers_of(&self, method_name: &str, params: Option<&Value>) -> Vec<(String, String)> {
        if self.envelope.is_none() {
            return Vec::new();
        }
        headers::request_headers(method_name, params, &self.tool_headers)
    }

    /// Learns the `x-mcp-header` annotations of the tools of a `tools/list` page.
    fn learn_tools(&mut self, result: &Value) {
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let schema = tool.get("inputSchema").and_then(Value::as_object);
            match schema.map(headers::param_headers) {
                Some(Ok(annotated)) => {
                    self.tool_headers.insert(name.to_owned(), annotated);
                }
                Some(Err(_)) | None => {
                    self.tool_headers.remove(name);
                }
            }
        }
    }

    /// Settles a pending call (once): its timer and progress callback go.
    fn settle(
        &mut self,
        id: &RequestId,
        outcome: Result<Value, ClientError>,
        ctx: &mut Context<Self>,
    ) {
        let Some(pending) = self.pending.remove(id) else {
            return;
        };
        if &*pending.method == method::SUBSCRIPTIONS_LISTEN
            && let Ok(id) = serde_json::to_value(id)
        {
            self.listeners.remove(&id_key(&id));
        }
        if let Some(timer) = pending.timer {
            ctx.cancel_future(timer);
        }
        if let Some((token, _)) = &pending.progress {
            self.progress.remove(&progress_key(token));
        }
        let _ = pending.reply.send(outcome);
    }

    /// Sends a message, ignoring the outcome (a notification, an answer to the server): a
    /// failure shows up as the connection closing.
    fn send_quietly(&self, frame: Frame, method: Option<&str>, ctx: &mut Context<Self>) {
        let headers = method.map(|m| self.headers_of(m, None)).unwrap_or_default();
        let send = self.transport.send(Outgoing {
            frame,
            method: method.map(Arc::from),
            id: None,
            headers,
        });
        ctx.spawn(
            async move {
                if let Err(err) = send.await {
                    tracing::debug!(%err, "a message to the server could not be sent");
                }
            }
            .into_actor(self),
        );
    }

    fn cancel_at_server(&self, id: &RequestId, reason: &str, ctx: &mut Context<Self>) {
        let params = json!({"requestId": id, "reason": reason});
        self.send_quietly(
            Frame::notification(method::NOTIFICATION_CANCELLED, Some(&params)),
            Some(method::NOTIFICATION_CANCELLED),
            ctx,
        );
    }

    fn fail_all(&mut self, error: &ClientError, ctx: &mut Context<Self>) {
        let ids: Vec<RequestId> = self.pending.keys().cloned().collect();
        for id in ids {
            self.settle(&id, Err(error.clone()), ctx);
        }
        for (_, (handle, token)) in self.serving.drain() {
            token.cancel();
            ctx.cancel_future(handle);
        }
    }

    fn on_response(&mut self, response: Response, ctx: &mut Context<Self>) {
        if !self.pending.contains_key(&response.id) {
            tracing::debug!(id = %response.id, "ignored an answer to no pending request");
            return;
        }
        let outcome = response.outcome.map_err(ClientError::Rpc);
        if self.envelope.is_some()
            && let Ok(result) = &outcome
            && self
                .pending
                .get(&response.id)
                .is_some_and(|p| &*p.method == method::TOOLS_LIST)
        {
            self.learn_tools(result);
        }
        self.settle(&response.id, outcome, ctx);
    }

    fn on_notification(&mut self, notification: Notification, ctx: &mut Context<Self>) {
        if let Some(cache) = &self.cache {
            cache.invalidate(&notification.method, notification.params.as_ref());
        }
        let subscription = notification
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|meta| meta.get(META_SUBSCRIPTION_ID))
            .map(id_key);
        if let Some(listener) = subscription.and_then(|id| self.listeners.get(&id))
            && let Err(err) = listener.try_send(notification.clone())
        {
            tracing::warn!(
                method = %notification.method,
                "a subscription's notification was dropped: {err}"
            );
        }
        let Notification { method, mut params } = notification;
        let handlers = &self.handlers;
        if !handlers.middleware.is_empty()
            && !handlers.middleware.notification(&method, &mut params)
        {
            return;
        }
        match method.as_str() {
            method::NOTIFICATION_PROGRESS => {
                let Some(params) =
                    params.and_then(|p| ProgressNotificationParams::deserialize(p).ok())
                else {
                    return;
                };
                let call = self.progress.get(&progress_key(&params.progress_token));
                if let Some((_, callback)) = call
                    .and_then(|id| self.pending.get(id))
                    .and_then(|pending| pending.progress.as_ref())
                {
                    callback(params);
                }
            }
            method::NOTIFICATION_CANCELLED => {
                let Some(id) = params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .and_then(|id| RequestId::deserialize(id).ok())
                else {
                    return;
                };
                if let Some((handle, token)) = self.serving.remove(&id) {
                    token.cancel();
                    ctx.cancel_future(handle);
                } else if self
                    .pending
                    .get(&id)
                    .is_some_and(|p| &*p.method == method::SUBSCRIPTIONS_LISTEN)
                {
                    // The server ends a subscription (stdio): it is over, as with a result.
                    self.settle(&id, Ok(Value::Null), ctx);
                }
            }
            method::NOTIFICATION_MESSAGE => {
                if let (Some(callback), Some(params)) = (&handlers.on_log, params)
                    && let Ok(params) = serde_json::from_value(params)
                {
                    callback(params);
                }
            }
            method::NOTIFICATION_TOOLS_LIST_CHANGED => {
                if let Some(callback) = &handlers.on_tools_changed {
                    callback(());
                }
            }
            method::NOTIFICATION_PROMPTS_LIST_CHANGED => {
                if let Some(callback) = &handlers.on_prompts_changed {
                    callback(());
                }
            }
            method::NOTIFICATION_RESOURCES_LIST_CHANGED => {
                if let Some(callback) = &handlers.on_resources_changed {
                    callback(());
                }
            }
            method::NOTIFICATION_RESOURCES_UPDATED => {
                if let (Some(callback), Some(params)) = (&handlers.on_resource_updated, params)
                    && let Ok(params) = serde_json::from_value(params)
                {
                    callback(params);
                }
            }
            method::NOTIFICATION_ELICITATION_COMPLETE => {
                if let (Some(callback), Some(params)) = (&handlers.on_elicitation_complete, params)
                    && let Ok(params) = serde_json::from_value(params)
                {
                    callback(params);
                }
            }
            _ => {
                if let Some(callback) = handlers.notifications.get(&method) {
                    callback(params);
                } else if let Some(callback) = &handlers.on_notification {
                    callback((method, params));
                }
            }
        }
    }
}

impl Actor for ClientSession {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(inbox) = self.inbox.take() {
            ctx.add_stream(tokio_stream_from(inbox));
        }
    }

    fn stopped(&mut self, ctx: &mut Self::Context) {
        let error = self
            .closed
            .clone()
            .unwrap_or_else(|| ClientError::TransportClosed("the client was closed".into()));
        self.fail_all(&error, ctx);
    }
}

/// An inbox as a stream, without another dependency.
fn tokio_stream_from(mut rx: mpsc::Receiver<Inbound>) -> impl futures::Stream<Item = Inbound> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

impl StreamHandler<Inbound> for ClientSession {
    fn handle(&mut self, event: Inbound, ctx: &mut Self::Context) {
        match event {
            Inbound::Message(Incoming::Response(response)) => self.on_response(response, ctx),
            Inbound::Message(Incoming::Notification(notification)) => {
                self.on_notification(notification, ctx);
            }
            Inbound::Message(Incoming::Request(request)) => self.on_request(request, ctx),
            Inbound::Malformed(error) => {
                tracing::warn!(%error, "the server sent something unreadable");
            }
            Inbound::Lost { id, error } => {
                if matches!(error, ClientError::SessionExpired) {
                    // Its answer went with the old session; it is not sent again (it may
                    // have run), but later requests get a new session.
                    self.renew_session(ctx);
                }
                self.settle(&id, Err(error), ctx);
            }
            Inbound::Closed(error) => {
                tracing::debug!(%error, "the connection to the server closed");
                self.fail_all(&error, ctx);
                self.closed = Some(error);
                ctx.stop();
            }
        }
    }

    fn finished(&mut self, ctx: &mut Self::Context) {
        if self.closed.is_none() {
            self.closed = Some(ClientError::TransportClosed(
                "the transport stopped delivering".into(),
            ));
        }
        ctx.stop();
    }
}

/// Send a request and settle `reply` with its answer. Replies with the request's id (for
/// [`CancelCall`]), or the reason it could not be sent at all.
#[derive(Message)]
#[rtype(result = "Result<RequestId, ClientError>")]
pub(crate) struct Call {
    pub(crate) method: Arc<str>,
    pub(crate) params: Option<Value>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) progress: Option<ProgressCallback>,
    pub(crate) reply: oneshot::Sender<Result<Value, ClientError>>,
    /// For `subscriptions/listen`: where the stream's notifications go.
    pub(crate) listener: Option<mpsc::Sender<Notification>>,
}

impl fmt::Debug for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("method", &self.method)
            .finish()
    }
}

impl Handler<Call> for ClientSession {
    type Result = Result<RequestId, ClientError>;

    fn handle(&mut self, msg: Call, ctx: &mut Self::Context) -> Self::Result {
        if let Some(error) = &self.closed {
            return Err(error.clone());
        }
        self.next_id += 1;
        let id = RequestId::Number(self.next_id);
        let mut params = msg.params;
        if let Some(envelope) = &self.envelope {
            envelope.stamp(&mut params);
        }
        if let Some(listener) = msg.listener {
            self.listeners.insert(self.next_id.to_string(), listener);
        }
        let progress = msg.progress.map(|callback| {
            let token = Value::from(format!("progress-{}", self.next_id));
            let object = params
                .get_or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut();
            if let Some(object) = object {
                let meta = object
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert("progressToken".into(), token.clone());
                }
            }
            self.progress.insert(progress_key(&token), id.clone());
            (token, callback)
        });
        let timer = msg
            .timeout
            .map(|limit| Self::arm_timer(id.clone(), limit, limit, ctx));
        let outgoing = Outgoing {
            frame: Frame::request(&id, &msg.method, params.as_ref()),
            headers: self.headers_of(&msg.method, params.as_ref()),
            method: Some(msg.method.clone()),
            id: Some(id.clone()),
        };
        let resend = (self.renewal.is_some()
            && outgoing.method.as_deref() != Some(method::INITIALIZE))
        .then(|| outgoing.clone());
        self.pending.insert(
            id.clone(),
            Pending {
                method: msg.method,
                reply: msg.reply,
                progress,
                timer,
                waited: (self.transport.interaction_time(), Duration::ZERO),
                resend,
            },
        );
        self.send_request(id.clone(), outgoing, ctx);
        Ok(id)
    }
}

impl ClientSession {
    /// Checks call `id`'s time limit `limit` after `delay`.
    fn arm_timer(
        id: RequestId,
        limit: Duration,
        delay: Duration,
        ctx: &mut Context<Self>,
    ) -> SpawnHandle {
        ctx.run_later(delay, move |act, ctx| act.time_up(id, limit, ctx))
    }

    /// Call `id`'s time limit `limit` has passed: it times out, unless the transport waited
    /// for the user meanwhile (an interactive authorization), which does not count: the limit
    /// is then extended by that time.
    fn time_up(&mut self, id: RequestId, limit: Duration, ctx: &mut Context<Self>) {
        let waited = self.transport.interaction_time();
        let Some(pending) = self.pending.get_mut(&id) else {
            return;
        };
        let (base, added) = pending.waited;
        let owed = waited.saturating_sub(base);
        if owed > added {
            pending.waited.1 = owed;
            pending.timer = Some(Self::arm_timer(id, limit, owed - added, ctx));
            return;
        }
        self.cancel_at_server(&id, "timed out", ctx);
        self.settle(&id, Err(ClientError::Timeout(limit)), ctx);
    }

    /// Sends request `id`; a refusal settles it, unless it can wait for a new session.
    fn send_request(&mut self, id: RequestId, outgoing: Outgoing, ctx: &mut Context<Self>) {
        let send = self.transport.send(outgoing);
        ctx.spawn(
            send.into_actor(self)
                .map(move |outcome, act, ctx| match outcome {
                    Ok(()) => {}
                    Err(ClientError::SessionExpired) if act.wait_for_new_session(&id, ctx) => {}
                    Err(error) => act.settle(&id, Err(error), ctx),
                }),
        );
    }
}

/// Forget a pending call and tell the server it is cancelled. Sent when a call is dropped or
/// cancelled before its answer.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(crate) struct CancelCall {
    pub(crate) id: RequestId,
    pub(crate) reason: String,
}

impl Handler<CancelCall> for ClientSession {
    type Result = ();

    fn handle(&mut self, msg: CancelCall, ctx: &mut Self::Context) {
        if self.pending.contains_key(&msg.id) {
            self.cancel_at_server(&msg.id, &msg.reason, ctx);
            self.settle(&msg.id, Err(ClientError::Cancelled), ctx);
        }
    }
}

/// Send a notification. Replies once it is handed to the transport.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), ClientError>")]
pub(crate) struct Notify {
    pub(crate) method: Arc<str>,
    pub(crate) params: Option<Value>,
}

impl Handler<Notify> for ClientSession {
    type Result = actix::ResponseActFuture<Self, Result<(), ClientError>>;

    fn handle(&mut self, msg: Notify, _: &mut Self::Context) -> Self::Result {
        if let Some(error) = &self.closed {
            let error = error.clone();
            return Box::pin(actix::fut::ready(Err(error)));
        }
        let send = self.transport.send(Outgoing {
            frame: Frame::notification(&msg.method, msg.params.as_ref()),
            headers: self.headers_of(&msg.method, msg.params.as_ref()),
            method: Some(msg.method),
            id: None,
        });
        Box::pin(send.into_actor(self).map(|outcome, act, ctx| {
            if matches!(outcome, Err(ClientError::SessionExpired)) {
                // The notification is lost with the old session; later messages get a new one.
                act.renew_session(ctx);
            }
            outcome
        }))
    }
}

/// Close the session: pending calls fail, the transport closes, the actor stops.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(crate) struct Shutdown;

impl Handler<Shutdown> for ClientSession {
    type Result = actix::ResponseActFuture<Self, ()>;

    fn handle(&mut self, _: Shutdown, ctx: &mut Self::Context) -> Self::Result {
        let error = ClientError::TransportClosed("the client was closed".into());
        self.fail_all(&error, ctx);
        self.closed = Some(error);
        let close = self.transport.close();
        Box::pin(close.into_actor(self).map(|outcome, _, ctx| {
            if let Err(err) = outcome {
                tracing::debug!(%err, "closing the transport failed");
            }
            ctx.stop();
        }))
    }
}

/// Set (or, with `None`, clear) the 2026 era's per-request `_meta`; the transport is told
/// whether it is stateless and which version it labels requests with.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(crate) struct SetEnvelope(pub(crate) Option<Envelope>);

impl Handler<SetEnvelope> for ClientSession {
    type Result = ();

    fn handle(&mut self, msg: SetEnvelope, _: &mut Self::Context) {
        match &msg.0 {
            Some(envelope) => {
                self.transport.set_stateless(true);
                self.transport
                    .set_protocol_version(envelope.version.as_str());
            }
            None => self.transport.set_stateless(false),
        }
        self.envelope = msg.0;
    }
}

/// Whether the session knows the `x-mcp-header` annotations of tool `0` (from a `tools/list`
/// result). `None` when it does not matter: the 2025 era, or a transport that sends no
/// headers.
#[derive(Debug, Message)]
#[rtype(result = "Option<bool>")]
pub(crate) struct KnowsTool(pub(crate) String);

impl Handler<KnowsTool> for ClientSession {
    type Result = Option<bool>;

    fn handle(&mut self, msg: KnowsTool, _: &mut Self::Context) -> Self::Result {
        (self.envelope.is_some() && self.transport.mirrors_headers())
            .then(|| self.tool_headers.contains_key(&msg.0))
    }
}
