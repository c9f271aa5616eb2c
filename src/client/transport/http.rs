//! Streamable HTTP (2025-11-25), the client side: the transport our server speaks in
//! [`crate::transport::http`], for any conforming server.
//!
//! The public side is [`HttpTransport`] (whose docs say how it behaves) and [`HttpOptions`].
//! Inside: one shared state per connection (session id, protocol version, the stop switches of
//! the answer readers), the `POST` exchange, the SSE reader over a size-bounded `russe`
//! decoder, resumption of answer streams, the `GET` stream task and `DELETE` on close.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use actix_mcp_actors::{FrameKind, Incoming, RequestId};
use bytes::{Buf as _, BytesMut};
use futures::future::BoxFuture;
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};
use tokio_util::codec::Decoder as _;
use tokio_util::sync::CancellationToken;

use super::{Connect, Inbound, Inbox, Outgoing, Transport};
use crate::client::error::ClientError;
use crate::protocol::method;

/// Default longest message accepted from the server: 4 MiB.
const DEFAULT_MAX_MESSAGE: usize = 4 * 1024 * 1024;
/// The wait before reconnecting when the server advised no `retry`, and the first backoff step.
const DEFAULT_RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// The longest backoff step.
const DEFAULT_MAX_RECONNECT_DELAY: Duration = Duration::from_secs(30);
/// Reconnections in a row that bring nothing new before a stream is given up.
const DEFAULT_RECONNECT_ATTEMPTS: u32 = 5;
/// How long establishing a TCP (and TLS) connection may take.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one request may wait for the server's response headers.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest a message waits for the server's answer to the first standalone `GET`.
const GET_STREAM_WAIT: Duration = Duration::from_secs(5);
/// How long `close` waits to hand the session its final [`Inbound::Closed`].
const CLOSED_DELIVERY_WAIT: Duration = Duration::from_secs(1);
/// The longest server error message quoted in a [`ClientError::Transport`].
const MAX_QUOTED_ERROR: usize = 512;

const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID_HEADER: HeaderName = HeaderName::from_static("last-event-id");
const ACCEPT_POST: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// Settings of an [`HttpTransport`]. Start from [`HttpOptions::default`] and chain the
/// setters. Default values are not part of semver.
#[derive(Clone)]
pub struct HttpOptions {
    headers: HeaderMap,
    invalid_header: Option<String>,
    connect_timeout: Duration,
    request_timeout: Duration,
    max_message_size: usize,
    reconnect_attempts: u32,
    reconnect_initial_delay: Duration,
    reconnect_max_delay: Duration,
    get_stream: bool,
    client: Option<reqwest::Client>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            headers: HeaderMap::new(),
            invalid_header: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_message_size: DEFAULT_MAX_MESSAGE,
            reconnect_attempts: DEFAULT_RECONNECT_ATTEMPTS,
            reconnect_initial_delay: DEFAULT_RECONNECT_DELAY,
            reconnect_max_delay: DEFAULT_MAX_RECONNECT_DELAY,
            get_stream: true,
            client: None,
        }
    }
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may be credentials: only their names are shown.
        let names: Vec<&str> = self.headers.keys().map(HeaderName::as_str).collect();
        f.debug_struct("HttpOptions")
            .field("headers", &names)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_message_size", &self.max_message_size)
            .field("reconnect_attempts", &self.reconnect_attempts)
            .field("reconnect_initial_delay", &self.reconnect_initial_delay)
            .field("reconnect_max_delay", &self.reconnect_max_delay)
            .field("get_stream", &self.get_stream)
            .field("custom_client", &self.client.is_some())
            .finish()
    }
}

impl HttpOptions {
    /// Adds a header to every request (`Authorization`, for example); call it once per header.
    /// The same name twice sends both values. The transport's own headers (`Accept`,
    /// `Content-Type`, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`) replace
    /// custom ones of the same name. A name or value that is not a valid HTTP header fails
    /// [`connect`](Connect::connect) with [`ClientError::Transport`].
    #[must_use]
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let (name, value) = (name.as_ref(), value.as_ref());
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(name), Ok(mut value)) => {
                value.set_sensitive(true);
                self.headers.append(name, value);
            }
            _ => {
                self.invalid_header
                    .get_or_insert_with(|| format!("invalid HTTP header {name:?}"));
            }
        }
        self
    }

    /// How long opening a connection to the server may take (default 10 s). Not used with a
    /// custom [`client`](Self::client), which has its own.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long each HTTP request waits for the server's response headers (default 120 s).
    /// An SSE answer's stream may last longer; a JSON answer's headers come with the answer,
    /// so for a server in JSON-response mode this also bounds each call.
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Longest message accepted from the server, in bytes (default 4 MiB): a larger JSON body
    /// or SSE event is reported as [`Inbound::Malformed`] with [`ClientError::Protocol`] and
    /// skipped.
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes.max(1);
        self
    }

    /// Reconnections in a row that bring nothing new before a stream is given up (default 5).
    /// `0` never reconnects.
    #[must_use]
    pub fn max_reconnect_attempts(mut self, attempts: u32) -> Self {
        self.reconnect_attempts = attempts;
        self
    }

    /// The backoff between failed reconnections: `initial`, doubled after each failure, at
    /// most `max` (defaults 1 s and 30 s). The server's `retry` advice is always waited out
    /// first; `initial` is also the wait when the server gave none.
    #[must_use]
    pub fn reconnect_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.reconnect_initial_delay = initial;
        self.reconnect_max_delay = max.max(initial);
        self
    }

    /// Whether to open the standalone `GET` stream after initialization (default `true`).
    /// Without it, the server can reach the client only within its answers to requests.
    #[must_use]
    pub fn get_stream(mut self, open: bool) -> Self {
        self.get_stream = open;
        self
    }

    /// The `reqwest` client to send with (default: a new one with the connect timeout, and
    /// whatever TLS backend your build of `reqwest` has; this crate enables none). Use it for
    /// TLS settings, proxies or a shared connection pool.
    #[must_use]
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }
}

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
/// | `404` on a request that carried a session id | [`ClientError::SessionExpired`]; the session id is forgotten |
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
/// and so does `MCP-Protocol-Version` once the session set it. [`Transport::close`] ends the
/// session with `DELETE` (a `405` or `404` answer is fine), stops every task and delivers
/// [`Inbound::Closed`]; later sends fail with [`ClientError::TransportClosed`].
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
            .field("url", &self.url)
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

/// Reconnection settings and size and time limits.
#[derive(Debug, Clone, Copy)]
struct Limits {
    request_timeout: Duration,
    max_message: usize,
    attempts: u32,
    initial_delay: Duration,
    max_delay: Duration,
}

impl Limits {
    /// The wait before the next reconnection, after `failures` reconnections in a row that
    /// brought nothing new: the server's `retry` advice at least, and the backoff after a
    /// failure.
    fn reconnect_delay(&self, retry: Option<Duration>, failures: u32) -> Duration {
        let backoff = |step: u32| {
            self.initial_delay
                .saturating_mul(2u32.saturating_pow(step.min(20)))
                .min(self.max_delay)
        };
        match (retry, failures) {
            (Some(retry), 0) => retry,
            (Some(retry), n) => retry.max(backoff(n - 1)),
            (None, n) => backoff(n),
        }
    }
}

/// What every task of one connection shares.
struct Shared {
    client: reqwest::Client,
    url: Url,
    /// The custom headers.
    headers: HeaderMap,
    limits: Limits,
    get_stream: bool,
    inbox: Inbox,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    /// The stop switch of each request's stream reader, to stop it when the request is
    /// cancelled.
    readers: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Stops every task (on `close`).
    shutdown: CancellationToken,
    listening: AtomicBool,
    /// Cancelled once the first `GET` of the standalone stream has an outcome, or when none is
    /// made after all: messages sent after initialization wait for it.
    get_settled: CancellationToken,
    closed: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An error and its causes, on one line (reqwest's own message alone says little).
fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The essence of a response's `Content-Type`, lowercased.
fn content_type(response: &reqwest::Response) -> Option<String> {
    let value = response
        .headers()
        .get(header::CONTENT_TYPE)?
        .to_str()
        .ok()?;
    let essence = value.split(';').next().unwrap_or_default().trim();
    Some(essence.to_ascii_lowercase())
}

/// One message from the server's bytes.
fn parse(data: &[u8]) -> Inbound {
    match actix_mcp_actors::parse_message(data) {
        Ok(message) => Inbound::Message(message),
        Err(rejection) => Inbound::Malformed(ClientError::Protocol(format!(
            "the server sent an unreadable message: {}",
            rejection.error.message
        ))),
    }
}

/// The `error.message` of a JSON-RPC error body, shortened.
fn error_message(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let message = value.get("error")?.get("message")?.as_str()?;
    let mut message = message.to_owned();
    if message.len() > MAX_QUOTED_ERROR {
        let mut end = MAX_QUOTED_ERROR;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    Some(message)
}

/// Why a body could not be read.
enum BodyError {
    TooLarge,
    Failed(String),
}

/// Reads a whole body of at most `max` bytes, within `within`.
async fn read_body(
    mut response: reqwest::Response,
    max: usize,
    within: Duration,
) -> Result<BytesMut, BodyError> {
    if response
        .content_length()
        .is_some_and(|length| length > max as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let read = async {
        let mut body = BytesMut::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| BodyError::Failed(describe(&err)))?
        {
            if body.len() + chunk.len() > max {
                return Err(BodyError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    match tokio::time::timeout(within, read).await {
        Ok(result) => result,
        Err(_) => Err(BodyError::Failed(format!(
            "no whole body within {within:?}"
        ))),
    }
}

/// What a `GET` (a stream opened or resumed) gave.
enum Get {
    /// An SSE stream.
    Stream(reqwest::Response),
    /// `405`: the server offers no such stream.
    NotOffered,
    /// `404` with a session id: the session is gone.
    SessionGone,
    /// Any other failure, worth another attempt.
    Failed(String),
    /// The transport or the session stopped meanwhile.
    Stopped,
}

/// How reading an SSE stream ended.
enum StreamEnd {
    /// It delivered the response that was awaited.
    Answered,
    /// The server ended it.
    Ended,
    /// The connection failed.
    Failed(String),
    /// The transport or the session stopped.
    Stopped,
}

/// Where a stream stands: what a reconnection needs.
#[derive(Debug, Default)]
struct Cursor {
    /// The last event id seen (`Last-Event-ID` of the next reconnection).
    last_event_id: Option<String>,
    /// The server's latest `retry` advice.
    retry: Option<Duration>,
    /// Whether the current connection brought anything new (another event id, or a message).
    progressed: bool,
}

impl Cursor {
    fn saw_id(&mut self, id: &str) {
        // SSE: an empty id resets the last event id.
        let id = (!id.is_empty()).then(|| id.to_owned());
        if id != self.last_event_id {
            self.last_event_id = id;
            self.progressed = true;
        }
    }
}

/// The stop switch of the reader of one request's answer, registered in the table of readers
/// (so that cancelling the request stops it) until dropped.
struct Reader {
    shared: Arc<Shared>,
    id: RequestId,
    stop: CancellationToken,
}

impl Drop for Reader {
    fn drop(&mut self) {
        lock(&self.shared.readers).remove(&self.id);
    }
}

impl Shared {
    fn new(transport: HttpTransport, inbox: Inbox) -> Result<Self, ClientError> {
        let HttpTransport { url, options } = transport;
        let url = Url::parse(&url)
            .map_err(|err| ClientError::Transport(format!("invalid server URL {url:?}: {err}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ClientError::Transport(format!(
                "the server URL must be http:// or https://, not {}://",
                url.scheme()
            )));
        }
        if let Some(invalid) = options.invalid_header {
            return Err(ClientError::Transport(invalid));
        }
        let client = match options.client {
            Some(client) => client,
            None => reqwest::Client::builder()
                .connect_timeout(options.connect_timeout)
                .build()
                .map_err(|err| {
                    ClientError::Transport(format!(
                        "could not build the HTTP client: {}",
                        describe(&err)
                    ))
                })?,
        };
        Ok(Self {
            client,
            url,
            headers: options.headers,
            limits: Limits {
                request_timeout: options.request_timeout,
                max_message: options.max_message_size,
                attempts: options.reconnect_attempts,
                initial_delay: options.reconnect_initial_delay,
                max_delay: options.reconnect_max_delay,
            },
            get_stream: options.get_stream,
            inbox,
            session: Mutex::new(None),
            version: Mutex::new(None),
            readers: Mutex::new(HashMap::new()),
            shutdown: CancellationToken::new(),
            listening: AtomicBool::new(false),
            get_settled: CancellationToken::new(),
            closed: AtomicBool::new(false),
        })
    }

    /// The headers of a request: the custom ones, `Accept`, then the session id and protocol
    /// version when known. Also returns the session id sent.
    fn request_headers(&self, accept: HeaderValue) -> (HeaderMap, Option<HeaderValue>) {
        let mut headers = self.headers.clone();
        headers.insert(header::ACCEPT, accept);
        let session = lock(&self.session).clone();
        if let Some(session) = &session {
            headers.insert(SESSION_HEADER, session.clone());
        }
        if let Some(version) = lock(&self.version).clone() {
            headers.insert(PROTOCOL_VERSION_HEADER, version);
        }
        (headers, session)
    }

    /// Forgets the session id `sent`, unless another one has replaced it meanwhile.
    fn forget_session(&self, sent: &HeaderValue) {
        let mut session = lock(&self.session);
        if session.as_ref() == Some(sent) {
            *session = None;
        }
    }

    /// Keeps the session id the server assigned in its `initialize` answer.
    fn capture_session(&self, response: &reqwest::Response) {
        let Some(value) = response.headers().get(SESSION_HEADER) else {
            return;
        };
        let bytes = value.as_bytes();
        if bytes.is_empty() || !bytes.iter().all(|b| (0x21..=0x7e).contains(b)) {
            tracing::warn!(
                "the server assigned a session id with characters other than visible ASCII; \
                 it is ignored"
            );
            return;
        }
        *lock(&self.session) = Some(value.clone());
    }

    /// Sends a request and waits for its response headers, within the request timeout.
    async fn exchange(
        &self,
        request: reqwest::RequestBuilder,
        what: &str,
    ) -> Result<reqwest::Response, ClientError> {
        let within = self.limits.request_timeout;
        match tokio::time::timeout(within, request.send()).await {
            Err(_) => Err(ClientError::Transport(format!(
                "no answer to the {what} within {within:?}"
            ))),
            Ok(Err(err)) => Err(ClientError::Transport(format!(
                "the {what} failed: {}",
                describe(&err)
            ))),
            Ok(Ok(response)) => Ok(response),
        }
    }

    /// Delivers one event, unless `stop` comes first. `false` when reading should stop.
    async fn deliver(&self, event: Inbound, stop: &CancellationToken) -> bool {
        tokio::select! {
            biased;
            () = stop.cancelled() => false,
            delivered = self.inbox.deliver(event) => delivered,
        }
    }

    /// Waits `delay`; `true` when the transport or the session stopped first.
    async fn pause(&self, delay: Duration, stop: &CancellationToken) -> bool {
        tokio::select! {
            biased;
            () = stop.cancelled() => true,
            () = self.inbox.closed() => true,
            () = tokio::time::sleep(delay) => false,
        }
    }

    /// The reader of the answer to request `id`, registered before the request leaves so that
    /// a cancellation sent at any time stops it.
    fn register_reader(self: &Arc<Self>, id: &RequestId) -> Reader {
        let stop = self.shutdown.child_token();
        lock(&self.readers).insert(id.clone(), stop.clone());
        Reader {
            shared: self.clone(),
            id: id.clone(),
            stop,
        }
    }

    /// The client cancels a request (`notifications/cancelled`): its stream is not read any
    /// longer, nor resumed.
    fn stop_reader_of_cancelled(&self, frame: &str) {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(frame) else {
            return;
        };
        let Some(id) = value
            .get("params")
            .and_then(|params| params.get("requestId"))
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
        else {
            return;
        };
        if let Some(stop) = lock(&self.readers).remove(&id) {
            stop.cancel();
        }
    }

    /// `POST`s one message; see [`HttpTransport`] for the answers.
    async fn post(self: Arc<Self>, message: Outgoing) -> Result<(), ClientError> {
        let initialize = message.method.as_deref() == Some(method::INITIALIZE);
        if !initialize && self.listening.load(Ordering::Acquire) {
            self.await_get_stream().await;
        }
        if self.closed.load(Ordering::Acquire) {
            return Err(ClientError::TransportClosed(
                "the HTTP transport is closed".into(),
            ));
        }
        if initialize {
            // A new session starts without the old one's id and version.
            *lock(&self.session) = None;
            *lock(&self.version) = None;
        }
        if message.method.as_deref() == Some(method::NOTIFICATION_CANCELLED) {
            self.stop_reader_of_cancelled(&message.frame.json);
        }
        // Only a request has a response to wait for (and a stream worth resuming).
        let awaited = match message.frame.kind {
            FrameKind::Request => message.id.as_ref(),
            FrameKind::Notification | FrameKind::Response => None,
        };
        let reader = awaited.map(|id| self.register_reader(id));
        let (mut headers, sent_session) = self.request_headers(ACCEPT_POST);
        headers.insert(header::CONTENT_TYPE, JSON);
        let request = self
            .client
            .post(self.url.clone())
            .headers(headers)
            .body(message.frame.json.to_string());
        let response = self.exchange(request, "POST").await?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND
            && let Some(sent) = &sent_session
        {
            self.forget_session(sent);
            return Err(ClientError::SessionExpired);
        }
        if !status.is_success() {
            return self.refused(response, awaited).await;
        }
        if initialize {
            self.capture_session(&response);
        }
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        match content_type(&response).as_deref() {
            Some("text/event-stream") => {
                tokio::spawn(self.clone().follow_post_stream(response, reader));
                Ok(())
            }
            Some("application/json") => {
                tokio::spawn(self.clone().deliver_json(response));
                Ok(())
            }
            // Notifications and responses need no answer: whatever came is ignored.
            _ if reader.is_none() => Ok(()),
            other => Err(ClientError::Protocol(format!(
                "the server answered a request with HTTP {status} and content type {:?}, \
                 neither JSON nor an SSE stream",
                other.unwrap_or("(none)")
            ))),
        }
    }

    /// Waits until the server has answered the first `GET` of the standalone stream (or the
    /// transport stopped), at most [`GET_STREAM_WAIT`].
    async fn await_get_stream(&self) {
        tokio::select! {
            biased;
            () = self.get_settled.cancelled() => {}
            () = self.shutdown.cancelled() => {}
            () = tokio::time::sleep(GET_STREAM_WAIT) => {
                tracing::debug!("the server has not answered the GET yet; sending without it");
            }
        }
    }

    /// An error status: a JSON-RPC error response to the request that was sent (`awaited`) is
    /// delivered (the request gets the server's error); anything else is a
    /// [`ClientError::Transport`].
    async fn refused(
        self: &Arc<Self>,
        response: reqwest::Response,
        awaited: Option<&RequestId>,
    ) -> Result<(), ClientError> {
        let status = response.status();
        let body = read_body(
            response,
            self.limits.max_message,
            self.limits.request_timeout,
        )
        .await
        .ok();
        if let Some(body) = &body
            && let Ok(Incoming::Response(answer)) = actix_mcp_actors::parse_message(body)
            && Some(&answer.id) == awaited
        {
            let shared = self.clone();
            tokio::spawn(async move {
                let stop = shared.shutdown.clone();
                let answer = Inbound::Message(Incoming::Response(answer));
                shared.deliver(answer, &stop).await
            });
            return Ok(());
        }
        Err(ClientError::Transport(
            match body.as_deref().and_then(error_message) {
                Some(message) => format!("HTTP {status}: {message}"),
                None => format!("HTTP {status}"),
            },
        ))
    }

    /// Delivers the one message of a JSON answer.
    async fn deliver_json(self: Arc<Self>, response: reqwest::Response) {
        let max = self.limits.max_message;
        let event = match read_body(response, max, self.limits.request_timeout).await {
            Ok(body) => parse(&body),
            Err(BodyError::TooLarge) => Inbound::Malformed(ClientError::Protocol(format!(
                "the server sent a JSON answer over {max} bytes; it was skipped"
            ))),
            Err(BodyError::Failed(err)) => Inbound::Malformed(ClientError::Transport(format!(
                "reading the server's JSON answer failed: {err}"
            ))),
        };
        self.deliver(event, &self.shutdown).await;
    }

    /// Reads the SSE answer to a `POST`; when it answers a request (`reader`), resumes it
    /// while it has not carried the response.
    async fn follow_post_stream(
        self: Arc<Self>,
        response: reqwest::Response,
        reader: Option<Reader>,
    ) {
        let Some(reader) = reader else {
            // Not a request: there is no response to wait for, nor a stream to resume.
            let stop = self.shutdown.clone();
            self.read_stream(response, &mut Cursor::default(), None, &stop)
                .await;
            return;
        };
        let (id, stop) = (&reader.id, &reader.stop);
        let mut cursor = Cursor::default();
        match self
            .read_stream(response, &mut cursor, Some(id), stop)
            .await
        {
            StreamEnd::Answered | StreamEnd::Stopped => return,
            StreamEnd::Ended => {
                tracing::debug!(request = %id, "the answer's stream ended before the response")
            }
            StreamEnd::Failed(err) => {
                tracing::debug!(request = %id, %err, "the answer's stream broke before the response")
            }
        }
        if cursor.last_event_id.is_none() {
            tracing::warn!(
                request = %id,
                "the server ended the answer's stream before the response, without an event id \
                 to resume it from; the response is lost"
            );
            return;
        }
        self.resume(cursor, id, stop).await;
    }

    /// Resumes a `POST`'s stream with `GET` and `Last-Event-ID` until it carries the response
    /// to `id`, within the reconnection budget.
    async fn resume(&self, mut cursor: Cursor, id: &RequestId, stop: &CancellationToken) {
        let mut failures = 0;
        loop {
            if failures >= self.limits.attempts {
                tracing::warn!(
                    request = %id,
                    attempts = failures,
                    "could not resume the answer's stream; the response is lost"
                );
                return;
            }
            let delay = self.limits.reconnect_delay(cursor.retry, failures);
            if self.pause(delay, stop).await {
                return;
            }
            cursor.progressed = false;
            match self.open_get(cursor.last_event_id.as_deref(), stop).await {
                Get::Stream(response) => {
                    match self
                        .read_stream(response, &mut cursor, Some(id), stop)
                        .await
                    {
                        StreamEnd::Answered | StreamEnd::Stopped => return,
                        StreamEnd::Ended => {}
                        StreamEnd::Failed(err) => {
                            tracing::debug!(request = %id, %err, "the resumed stream broke");
                        }
                    }
                }
                Get::NotOffered => {
                    tracing::warn!(
                        request = %id,
                        "the server does not resume streams (405); the response is lost"
                    );
                    return;
                }
                Get::SessionGone => {
                    tracing::debug!(request = %id, "the session ended before the response");
                    return;
                }
                Get::Failed(err) => {
                    tracing::debug!(request = %id, %err, "resuming the answer's stream failed");
                }
                Get::Stopped => return,
            }
            failures = if cursor.progressed { 0 } else { failures + 1 };
        }
    }

    /// The standalone `GET` stream, kept open until the transport or the session stops.
    async fn listen(self: Arc<Self>) {
        let stop = self.shutdown.clone();
        let mut cursor = Cursor::default();
        let mut failures = 0;
        let mut first = true;
        loop {
            if !first {
                if failures >= self.limits.attempts {
                    tracing::warn!(
                        attempts = failures,
                        "could not reopen the GET stream; server messages outside requests \
                         are no longer received"
                    );
                    return;
                }
                let delay = self.limits.reconnect_delay(cursor.retry, failures);
                if self.pause(delay, &stop).await {
                    return;
                }
            }
            first = false;
            cursor.progressed = false;
            let opened = self.open_get(cursor.last_event_id.as_deref(), &stop).await;
            self.get_settled.cancel();
            match opened {
                Get::Stream(response) => {
                    match self.read_stream(response, &mut cursor, None, &stop).await {
                        StreamEnd::Stopped => return,
                        StreamEnd::Answered | StreamEnd::Ended => {
                            tracing::debug!("the GET stream ended; reopening it");
                        }
                        StreamEnd::Failed(err) => {
                            tracing::debug!(%err, "the GET stream broke; reopening it");
                        }
                    }
                }
                Get::NotOffered => {
                    tracing::debug!("the server offers no GET stream (405)");
                    return;
                }
                Get::SessionGone => {
                    tracing::debug!("the session ended; the GET stream stops");
                    return;
                }
                Get::Failed(err) => tracing::debug!(%err, "opening the GET stream failed"),
                Get::Stopped => return,
            }
            failures = if cursor.progressed { 0 } else { failures + 1 };
        }
    }

    /// Opens an SSE stream with `GET`: the standalone stream, or with `last_event_id` the
    /// stream to resume.
    async fn open_get(&self, last_event_id: Option<&str>, stop: &CancellationToken) -> Get {
        let (mut headers, sent_session) = self.request_headers(ACCEPT_SSE);
        if let Some(last) = last_event_id {
            match HeaderValue::from_str(last) {
                Ok(value) => {
                    headers.insert(LAST_EVENT_ID_HEADER, value);
                }
                Err(_) => {
                    return Get::Failed(format!(
                        "the last event id {last:?} cannot be sent in a header"
                    ));
                }
            }
        }
        let request = self.client.get(self.url.clone()).headers(headers);
        let response = tokio::select! {
            biased;
            () = stop.cancelled() => return Get::Stopped,
            response = self.exchange(request, "GET") => response,
        };
        let response = match response {
            Ok(response) => response,
            Err(err) => return Get::Failed(err.to_string()),
        };
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Get::NotOffered;
        }
        if status == StatusCode::NOT_FOUND && sent_session.is_some() {
            return Get::SessionGone;
        }
        if !status.is_success() {
            return Get::Failed(format!("HTTP {status}"));
        }
        if content_type(&response).as_deref() != Some("text/event-stream") {
            return Get::Failed(format!(
                "the server answered GET with HTTP {status} but no SSE stream"
            ));
        }
        Get::Stream(response)
    }

    /// Reads one SSE connection: delivers each message, moves `cursor`; stops after the
    /// response to `awaiting` when given.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        cursor: &mut Cursor,
        awaiting: Option<&RequestId>,
        stop: &CancellationToken,
    ) -> StreamEnd {
        let max = self.limits.max_message;
        let mut decoder = SseDecoder::new(max);
        let mut buf = BytesMut::new();
        loop {
            while let Some(decoded) = decoder.decode(&mut buf) {
                let inbound = match decoded {
                    Decoded::Event(russe::Event::Retry(retry)) => {
                        cursor.retry = Some(retry);
                        continue;
                    }
                    Decoded::Event(russe::Event::Comment(_)) => continue,
                    Decoded::Event(russe::Event::Message(message)) => {
                        if let Some(retry) = message.retry {
                            cursor.retry = Some(retry);
                        }
                        if let Some(id) = &message.id {
                            cursor.saw_id(id);
                        }
                        if message
                            .event
                            .as_deref()
                            .is_some_and(|kind| kind != "message")
                        {
                            tracing::debug!(event = ?message.event, "skipped an SSE event of an unknown type");
                            continue;
                        }
                        if message.data.is_empty() {
                            // A priming event: only its id matters.
                            continue;
                        }
                        cursor.progressed = true;
                        parse(message.data.as_bytes())
                    }
                    Decoded::Oversized { id } => {
                        if let Some(id) = &id {
                            cursor.saw_id(id);
                        }
                        Inbound::Malformed(ClientError::Protocol(format!(
                            "the server sent an SSE event over {max} bytes; it was skipped"
                        )))
                    }
                    Decoded::Unreadable(err) => Inbound::Malformed(ClientError::Protocol(format!(
                        "the server sent an unreadable SSE event: {err}"
                    ))),
                };
                let answered = matches!(
                    (&inbound, awaiting),
                    (Inbound::Message(Incoming::Response(response)), Some(id)) if response.id == *id
                );
                if !self.deliver(inbound, stop).await {
                    return StreamEnd::Stopped;
                }
                if answered {
                    return StreamEnd::Answered;
                }
            }
            let chunk = tokio::select! {
                biased;
                () = stop.cancelled() => return StreamEnd::Stopped,
                () = self.inbox.closed() => return StreamEnd::Stopped,
                chunk = response.chunk() => chunk,
            };
            match chunk {
                Ok(Some(bytes)) => buf.extend_from_slice(&bytes),
                // SSE: an event not ended by a blank line when the stream ends is dropped.
                Ok(None) => return StreamEnd::Ended,
                Err(err) => return StreamEnd::Failed(describe(&err)),
            }
        }
    }

    /// Ends the session with `DELETE` (when there is one).
    async fn delete_session(&self) -> Result<(), ClientError> {
        let (headers, session) = self.request_headers(JSON);
        let Some(session) = session else {
            return Ok(());
        };
        *lock(&self.session) = None;
        let request = self.client.delete(self.url.clone()).headers(headers);
        let response = self.exchange(request, "DELETE").await?;
        let status = response.status();
        if status.is_success()
            || status == StatusCode::NOT_FOUND
            || status == StatusCode::METHOD_NOT_ALLOWED
        {
            Ok(())
        } else {
            tracing::debug!(?session, %status, "the server refused to end the session");
            Err(ClientError::Transport(format!(
                "the server refused to end the session: HTTP {status}"
            )))
        }
    }
}

/// What [`SseDecoder`] found.
enum Decoded {
    /// An event.
    Event(russe::Event),
    /// An event over the size limit (skipped), with its id when it was read whole.
    Oversized { id: Option<String> },
    /// An event that could not be decoded (not UTF-8), skipped.
    Unreadable(String),
}

/// The SSE decoder of `russe`, bounded: an event whose data exceeds `max` bytes, or whose
/// frame grows past [`SseDecoder::frame_limit`] before it ends, is reported and skipped without
/// buffering it whole.
struct SseDecoder {
    inner: russe::Decoder,
    max: usize,
    /// Inside an oversized frame: dropping bytes until its blank line.
    skipping: bool,
}

impl SseDecoder {
    fn new(max: usize) -> Self {
        Self {
            inner: russe::Decoder::default(),
            max,
            skipping: false,
        }
    }

    /// The most bytes one frame may buffer: twice the data limit (field names and line breaks
    /// of many short `data` lines), plus room for `id`, `event` and `retry`.
    fn frame_limit(&self) -> usize {
        self.max.saturating_mul(2).saturating_add(4096)
    }

    fn decode(&mut self, buf: &mut BytesMut) -> Option<Decoded> {
        if self.skipping {
            match blank_line_end(buf) {
                Some(end) => {
                    buf.advance(end);
                    self.skipping = false;
                    self.inner = russe::Decoder::default();
                }
                None => {
                    // Keep the last byte: it may start the blank line.
                    buf.advance(buf.len().saturating_sub(1));
                    return None;
                }
            }
        }
        let before = buf.len();
        match self.inner.decode(buf) {
            Ok(Some(russe::Event::Message(message))) if message.data.len() > self.max => {
                Some(Decoded::Oversized {
                    id: message.id.map(|id| id.to_string()),
                })
            }
            Ok(Some(event)) => Some(Decoded::Event(event)),
            Ok(None) if buf.len() > self.frame_limit() => {
                self.skipping = true;
                Some(Decoded::Oversized { id: None })
            }
            Ok(None) => None,
            Err(err) => {
                if buf.len() == before {
                    // Nothing was consumed: drop the input rather than fail on it forever.
                    buf.clear();
                }
                Some(Decoded::Unreadable(err.to_string()))
            }
        }
    }
}

/// Where the first blank line (an event's end) in `buf` ends: `\n\n`, `\r\r`, `\r\n\r\n` or
/// a mix.
fn blank_line_end(buf: &[u8]) -> Option<usize> {
    let at = buf
        .windows(2)
        .position(|pair| matches!(pair, [b'\n', b'\n'] | [b'\r', b'\r'] | [b'\n', b'\r']))?;
    let mut end = at + 2;
    if buf[at + 1] == b'\r' && buf.get(end) == Some(&b'\n') {
        end += 1;
    }
    Some(end)
}

/// The connected transport.
struct HttpConnection(Arc<Shared>);

impl Transport for HttpConnection {
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
            let result = shared.delete_session().await;
            shared.shutdown.cancel();
            let closed = Inbound::Closed(ClientError::TransportClosed(
                "the client closed the connection".into(),
            ));
            let _ = tokio::time::timeout(CLOSED_DELIVERY_WAIT, shared.inbox.deliver(closed)).await;
            result
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn decode_all(decoder: &mut SseDecoder, buf: &mut BytesMut) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(decoded) = decoder.decode(buf) {
            out.push(match decoded {
                Decoded::Event(russe::Event::Message(m)) => format!("data:{}", m.data),
                Decoded::Event(russe::Event::Retry(r)) => format!("retry:{}", r.as_millis()),
                Decoded::Event(russe::Event::Comment(c)) => format!("comment:{c}"),
                Decoded::Oversized { id } => format!("oversized:{id:?}"),
                Decoded::Unreadable(_) => "unreadable".into(),
            });
        }
        out
    }

    #[test]
    fn events_under_the_limit_pass_and_larger_ones_are_skipped() {
        let mut decoder = SseDecoder::new(8);
        let mut buf =
            BytesMut::from("retry: 200\n\nid: 1\ndata: \n\nid: 2\ndata: 123456789\n\ndata: ok\n\n");
        assert_eq!(
            decode_all(&mut decoder, &mut buf),
            ["retry:200", "data:", "oversized:Some(\"2\")", "data:ok"]
        );
    }

    #[test]
    fn an_oversized_frame_is_skipped_chunk_by_chunk_without_buffering_it() {
        let mut decoder = SseDecoder::new(8);
        let limit = decoder.frame_limit();
        let mut buf = BytesMut::from(&b"data: "[..]);
        buf.extend(std::iter::repeat_n(b'x', limit));
        assert_eq!(decode_all(&mut decoder, &mut buf), ["oversized:None"]);
        assert!(buf.len() <= 1, "{} bytes kept", buf.len());
        // More of the same event, then its end split across chunks, then a good event.
        buf.extend_from_slice(&[b'x'; 100]);
        assert!(decode_all(&mut decoder, &mut buf).is_empty());
        buf.extend_from_slice(b"x\r\n");
        assert!(decode_all(&mut decoder, &mut buf).is_empty());
        buf.extend_from_slice(b"\r\ndata: ok\r\n\r\n");
        assert_eq!(decode_all(&mut decoder, &mut buf), ["data:ok"]);
    }

    #[test]
    fn an_event_that_is_not_utf8_is_reported_and_the_stream_goes_on() {
        let mut decoder = SseDecoder::new(64);
        let mut buf = BytesMut::from(&b"data: \xff\xfe\n\ndata: ok\n\n"[..]);
        assert_eq!(
            decode_all(&mut decoder, &mut buf),
            ["unreadable", "data:ok"]
        );
    }

    #[test]
    fn blank_lines_of_every_line_ending_end_an_event() {
        assert_eq!(blank_line_end(b"ab\n\ncd"), Some(4));
        assert_eq!(blank_line_end(b"ab\r\rcd"), Some(4));
        assert_eq!(blank_line_end(b"ab\r\n\r\ncd"), Some(6));
        assert_eq!(blank_line_end(b"ab\r\ncd"), None);
    }

    #[test]
    fn reconnections_wait_for_the_retry_advice_then_back_off() {
        let limits = Limits {
            request_timeout: Duration::from_secs(1),
            max_message: 1,
            attempts: 5,
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(5),
        };
        let ms = Duration::from_millis;
        assert_eq!(limits.reconnect_delay(Some(ms(200)), 0), ms(200));
        assert_eq!(limits.reconnect_delay(Some(ms(200)), 1), ms(1000));
        assert_eq!(limits.reconnect_delay(Some(ms(3000)), 1), ms(3000));
        assert_eq!(limits.reconnect_delay(None, 0), ms(1000));
        assert_eq!(limits.reconnect_delay(None, 2), ms(4000));
        assert_eq!(limits.reconnect_delay(None, 9), ms(5000));
    }

    #[test]
    fn error_messages_are_read_from_json_rpc_bodies() {
        let body = br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad session"}}"#;
        assert_eq!(error_message(body).as_deref(), Some("bad session"));
        assert_eq!(error_message(b"<html>"), None);
    }
}
