//! What every task of one HTTP connection shares, and the `POST` and `DELETE` exchanges.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use actix_mcp_actors::{
    RequestId,
    dev::{FrameKind, Incoming},
};
use bytes::BytesMut;
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use tokio_util::sync::CancellationToken;

use super::HttpTransport;
use super::options::Limits;
use super::streams::Reader;
use crate::client::auth::{AuthProvider, Refusal, RefusalAction, RequestTarget, redact_url};
use crate::client::error::{ClientError, describe};
use crate::client::transport::{Inbound, Inbox, Outgoing};
use crate::protocol::method;
use crate::transport::media::Media;

/// The longest server error message quoted in a [`ClientError::Transport`].
pub(super) const MAX_QUOTED_ERROR: usize = 512;

/// The longest a message waits for the server's answer to the first standalone `GET`.
const GET_STREAM_WAIT: Duration = Duration::from_secs(5);

pub(super) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
pub(super) const PROTOCOL_VERSION_HEADER: HeaderName =
    HeaderName::from_static("mcp-protocol-version");
pub(super) const LAST_EVENT_ID_HEADER: HeaderName = HeaderName::from_static("last-event-id");
pub(super) const ACCEPT_POST: HeaderValue =
    HeaderValue::from_static("application/json, text/event-stream");
pub(super) const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
pub(super) const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// What every task of one connection shares.
pub(super) struct Shared {
    pub(super) client: reqwest::Client,
    pub(super) url: Url,
    /// The custom headers.
    pub(super) headers: HeaderMap,
    pub(super) limits: Limits,
    pub(super) get_stream: bool,
    pub(super) inbox: Inbox,
    pub(super) session: Mutex<Option<HeaderValue>>,
    pub(super) version: Mutex<Option<HeaderValue>>,
    /// The stop switch of each request's stream reader, to stop it when the request is
    /// cancelled.
    pub(super) readers: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Stops every task (on `close`).
    pub(super) shutdown: CancellationToken,
    pub(super) listening: AtomicBool,
    /// Cancelled once the first `GET` of the standalone stream has an outcome, or when none is
    /// made after all: messages sent after initialization wait for it.
    pub(super) get_settled: CancellationToken,
    pub(super) closed: AtomicBool,
    /// The server answered `404` for the session: every message but a new `initialize` fails
    /// with [`ClientError::SessionExpired`] without being sent.
    pub(super) expired: AtomicBool,
    /// The 2026 era: no session, no resumption, cancellation by dropping the answer's stream.
    pub(super) stateless: AtomicBool,
    /// The statuses of refused `server/discover` requests, until the client takes them.
    pub(super) refusals: Mutex<HashMap<RequestId, u16>>,
    /// Authorizes every request, when set.
    pub(super) auth: Option<Arc<dyn AuthProvider>>,
}

/// At most this many refusal statuses are kept for the client to take.
const MAX_REFUSALS: usize = 16;

/// One request is sent again after a `401` or `403` at most this many times, whatever the
/// auth provider says.
const MAX_AUTH_RETRIES: u32 = 8;

/// How often one request was refused for authorization so far.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct AuthRetries {
    unauthorized: u32,
    forbidden: u32,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Which of Streamable HTTP's media types a response's `Content-Type` names, if any.
pub(super) fn media_of(response: &reqwest::Response) -> Option<Media> {
    Media::of(response.headers().get(header::CONTENT_TYPE)?.as_bytes())
}

/// One message from the server's bytes.
pub(super) fn parse(data: &[u8]) -> Inbound {
    match actix_mcp_actors::dev::parse_message(data) {
        Ok(message) => Inbound::Message(message),
        Err(rejection) => Inbound::Malformed(ClientError::Protocol(format!(
            "the server sent an unreadable message: {}",
            rejection.error.message
        ))),
    }
}

/// The `error.message` of a JSON-RPC error body, shortened.
pub(super) fn error_message(body: &[u8]) -> Option<String> {
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
pub(super) enum BodyError {
    TooLarge,
    Failed(String),
}

/// Reads a whole body of at most `max` bytes, within `within`.
pub(super) async fn read_body(
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

impl Shared {
    pub(super) fn new(transport: HttpTransport, inbox: Inbox) -> Result<Self, ClientError> {
        let HttpTransport { url, options } = transport;
        let url = Url::parse(&url).map_err(|err| {
            ClientError::Transport(format!("invalid server URL {:?}: {err}", redact_url(&url)))
        })?;
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
            expired: AtomicBool::new(false),
            stateless: AtomicBool::new(false),
            refusals: Mutex::new(HashMap::new()),
            auth: options.auth,
        })
    }

    /// The headers of a request: the custom ones, `Accept`, then the session id and protocol
    /// version when known. Also returns the session id sent.
    pub(super) fn request_headers(&self, accept: HeaderValue) -> (HeaderMap, Option<HeaderValue>) {
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

    /// Adds the auth provider's headers of a `method` request to `headers` (replacing custom
    /// ones of the same name); returns them, for [`retry_refused`](Self::retry_refused).
    pub(super) async fn authorize(
        &self,
        method: &Method,
        headers: &mut HeaderMap,
    ) -> Result<HeaderMap, ClientError> {
        let Some(auth) = &self.auth else {
            return Ok(HeaderMap::new());
        };
        let target = RequestTarget::new(method.clone(), self.url.clone());
        let sent = auth.headers(&target).await?;
        for (name, value) in &sent {
            headers.insert(name.clone(), value.clone());
        }
        Ok(sent)
    }

    /// After an answer to a `method` request that carried the auth headers `sent`: whether
    /// to send it again (the server refused it with `401` or `403` and the auth provider has
    /// obtained what it asked for). Any other answer is shown to the provider
    /// ([`AuthProvider::answered`]).
    ///
    /// # Errors
    /// The provider's: why it could not obtain authorization.
    pub(super) async fn retry_refused(
        &self,
        response: &reqwest::Response,
        method: &Method,
        sent: HeaderMap,
        retries: &mut AuthRetries,
    ) -> Result<bool, ClientError> {
        let Some(auth) = &self.auth else {
            return Ok(false);
        };
        let status = response.status();
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            let target = RequestTarget::new(method.clone(), self.url.clone());
            auth.answered(&target, status, response.headers());
            return Ok(false);
        }
        if retries.unauthorized + retries.forbidden >= MAX_AUTH_RETRIES {
            tracing::debug!(%status, "the request was refused too often; giving up");
            return Ok(false);
        }
        let refusal = Refusal {
            target: RequestTarget::new(method.clone(), self.url.clone()),
            status,
            headers: response.headers().clone(),
            sent,
            unauthorized: retries.unauthorized,
            forbidden: retries.forbidden,
        };
        match auth.refused(&refusal).await? {
            RefusalAction::Retry => {
                if status == StatusCode::UNAUTHORIZED {
                    retries.unauthorized += 1;
                } else {
                    retries.forbidden += 1;
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The server no longer knows the session `sent`: unless another one has replaced it
    /// meanwhile, its id is forgotten and the session is expired.
    pub(super) fn session_expired(&self, sent: &HeaderValue) {
        let mut session = lock(&self.session);
        if session.as_ref() == Some(sent) {
            *session = None;
            self.expired.store(true, Ordering::Release);
        }
    }

    /// Keeps the session id the server assigned in its `initialize` answer.
    pub(super) fn capture_session(&self, response: &reqwest::Response) {
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
    pub(super) async fn exchange(
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
    pub(super) async fn deliver(&self, event: Inbound, stop: &CancellationToken) -> bool {
        tokio::select! {
            biased;
            () = stop.cancelled() => false,
            delivered = self.inbox.deliver(event) => delivered,
        }
    }

    /// Waits `delay`; `true` when the transport or the session stopped first.
    pub(super) async fn pause(&self, delay: Duration, stop: &CancellationToken) -> bool {
        tokio::select! {
            biased;
            () = stop.cancelled() => true,
            () = self.inbox.closed() => true,
            () = tokio::time::sleep(delay) => false,
        }
    }

    /// The reader of the answer to request `id`, registered before the request leaves so that
    /// a cancellation sent at any time stops it.
    pub(super) fn register_reader(self: &Arc<Self>, id: &RequestId) -> Reader {
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
    pub(super) fn stop_reader_of_cancelled(&self, frame: &str) {
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
    pub(super) async fn post(self: Arc<Self>, message: Outgoing) -> Result<(), ClientError> {
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
            self.expired.store(false, Ordering::Release);
        } else if self.expired.load(Ordering::Acquire) {
            return Err(ClientError::SessionExpired);
        }
        let stateless = self.stateless.load(Ordering::Acquire);
        if message.method.as_deref() == Some(method::NOTIFICATION_CANCELLED) {
            self.stop_reader_of_cancelled(&message.frame.json);
            if stateless {
                // 2026: closing the answer's stream is the cancellation; nothing is sent.
                return Ok(());
            }
        }
        // Only a request has a response to wait for (and a stream worth resuming).
        let awaited = match message.frame.kind {
            FrameKind::Request => message.id.as_ref(),
            FrameKind::Notification | FrameKind::Response => None,
        };
        let reader = awaited.map(|id| self.register_reader(id));
        let mut retries = AuthRetries::default();
        let (response, sent_session) = loop {
            let (mut headers, sent_session) = self.request_headers(ACCEPT_POST);
            headers.insert(header::CONTENT_TYPE, JSON);
            for (name, value) in &message.headers {
                let (Ok(name), Ok(value)) = (
                    HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(value),
                ) else {
                    return Err(ClientError::Protocol(format!(
                        "the request-metadata header {name:?} cannot be sent"
                    )));
                };
                headers.insert(name, value);
            }
            let sent_auth = self.authorize(&Method::POST, &mut headers).await?;
            let request = self
                .client
                .post(self.url.clone())
                .headers(headers)
                .body(message.frame.json.to_string());
            let response = self.exchange(request, "POST").await?;
            if self
                .retry_refused(&response, &Method::POST, sent_auth, &mut retries)
                .await?
            {
                continue;
            }
            break (response, sent_session);
        };
        let status = response.status();
        if status == StatusCode::NOT_FOUND
            && let Some(sent) = &sent_session
        {
            self.session_expired(sent);
            return Err(ClientError::SessionExpired);
        }
        if !status.is_success() {
            let discover = message.method.as_deref() == Some(method::SERVER_DISCOVER);
            let record = (stateless && discover).then_some(status);
            return self.refused(response, awaited, record).await;
        }
        if initialize && !stateless {
            self.capture_session(&response);
        }
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        match media_of(&response) {
            Some(Media::EventStream) => {
                tokio::spawn(self.clone().follow_post_stream(response, reader));
                Ok(())
            }
            Some(Media::Json) => {
                tokio::spawn(self.clone().deliver_json(response));
                Ok(())
            }
            // Notifications and responses need no answer: whatever came is ignored.
            _ if reader.is_none() => Ok(()),
            None => Err(ClientError::Protocol(format!(
                "the server answered a request with HTTP {status} and content type {:?}, \
                 neither JSON nor an SSE stream",
                response
                    .headers()
                    .get(header::CONTENT_TYPE)
                    .map_or("(none)".into(), |value| String::from_utf8_lossy(
                        value.as_bytes()
                    ))
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
    /// With `record`, the status of a JSON-RPC error answer is kept for
    /// [`Transport::take_refusal_status`](crate::client::transport::Transport::take_refusal_status).
    pub(super) async fn refused(
        self: &Arc<Self>,
        response: reqwest::Response,
        awaited: Option<&RequestId>,
        record: Option<StatusCode>,
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
            && let Ok(Incoming::Response(answer)) = actix_mcp_actors::dev::parse_message(body)
            && Some(&answer.id) == awaited
        {
            if let Some(status) = record {
                let mut refusals = lock(&self.refusals);
                if refusals.len() < MAX_REFUSALS {
                    refusals.insert(answer.id.clone(), status.as_u16());
                }
            }
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
    pub(super) async fn deliver_json(self: Arc<Self>, response: reqwest::Response) {
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

    /// Ends the session with `DELETE` (when there is one).
    pub(super) async fn delete_session(&self) -> Result<(), ClientError> {
        let (mut headers, session) = self.request_headers(JSON);
        let Some(session) = session else {
            return Ok(());
        };
        *lock(&self.session) = None;
        if let Err(err) = self.authorize(&Method::DELETE, &mut headers).await {
            tracing::debug!(%err, "ending the session without authorization headers");
        }
        let request = self.client.delete(self.url.clone()).headers(headers);
        let response = self.exchange(request, "DELETE").await?;
        let status = response.status();
        if let Some(auth) = &self.auth {
            let target = RequestTarget::new(Method::DELETE, self.url.clone());
            auth.answered(&target, status, response.headers());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn error_messages_are_read_from_json_rpc_bodies() {
        let body = br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad session"}}"#;
        assert_eq!(error_message(body).as_deref(), Some("bad session"));
        assert_eq!(error_message(b"<html>"), None);
    }
}
