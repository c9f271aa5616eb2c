//! Reading SSE streams: the answer to a `POST`, its resumption with `GET` and
//! `Last-Event-ID`, and the standalone `GET` stream.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use actix_mcp_actors::{RequestId, dev::Incoming};
use bytes::BytesMut;
use reqwest::header::HeaderValue;
use reqwest::{Method, StatusCode};
use tokio_util::sync::CancellationToken;

use super::shared::{ACCEPT_SSE, AuthRetries, LAST_EVENT_ID_HEADER, Shared, lock, media_of, parse};
use super::sse::{Decoded, SseDecoder};
use crate::client::error::ClientError;
use crate::client::error::describe;
use crate::client::transport::Inbound;
use crate::transport::media::Media;

/// What a `GET` (a stream opened or resumed) gave.
pub(super) enum Get {
    /// An SSE stream.
    Stream(reqwest::Response),
    /// `405`: the server offers no such stream.
    NotOffered,
    /// `404` with a session id: the session is gone.
    SessionGone,
    /// Any other failure, worth another attempt.
    Failed(String),
    /// The server refused it and no authorization could be obtained: not worth another
    /// attempt.
    Refused(ClientError),
    /// The transport or the session stopped meanwhile.
    Stopped,
}

/// How reading an SSE stream ended.
pub(super) enum StreamEnd {
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
pub(super) struct Cursor {
    /// The last event id seen (`Last-Event-ID` of the next reconnection).
    pub(super) last_event_id: Option<String>,
    /// The server's latest `retry` advice.
    pub(super) retry: Option<Duration>,
    /// Whether the current connection brought anything new (another event id, or a message).
    pub(super) progressed: bool,
}

impl Cursor {
    pub(super) fn saw_id(&mut self, id: &str) {
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
pub(super) struct Reader {
    pub(super) shared: Arc<Shared>,
    pub(super) id: RequestId,
    pub(super) stop: CancellationToken,
}

impl Drop for Reader {
    fn drop(&mut self) {
        lock(&self.shared.readers).remove(&self.id);
    }
}

impl Shared {
    /// Reads the SSE answer to a `POST`; when it answers a request (`reader`), resumes it
    /// while it has not carried the response, and reports the response lost
    /// ([`Inbound::Lost`]) when it cannot.
    pub(super) async fn follow_post_stream(
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
        let lost = match self
            .read_stream(response, &mut cursor, Some(id), stop)
            .await
        {
            StreamEnd::Answered | StreamEnd::Stopped => return,
            // 2026: a broken stream is a lost request; there is no resumption.
            _ if self.stateless.load(Ordering::Acquire) => ClientError::Transport(
                "the server ended the answer's stream before the response".into(),
            ),
            _ if cursor.last_event_id.is_none() => ClientError::Transport(
                "the server ended the answer's stream before the response, without an event \
                 id to resume it from"
                    .into(),
            ),
            StreamEnd::Ended | StreamEnd::Failed(_) => match self.resume(cursor, id, stop).await {
                Some(lost) => lost,
                None => return,
            },
        };
        tracing::debug!(request = %id, %lost, "the response is lost");
        let lost = Inbound::Lost {
            id: id.clone(),
            error: lost,
        };
        self.deliver(lost, stop).await;
    }

    /// Resumes a `POST`'s stream with `GET` and `Last-Event-ID` until it carries the response
    /// to `id`, within the reconnection budget. `None` when the response came or the reader
    /// stopped; otherwise why the response is lost.
    pub(super) async fn resume(
        &self,
        mut cursor: Cursor,
        id: &RequestId,
        stop: &CancellationToken,
    ) -> Option<ClientError> {
        let mut failures = 0;
        loop {
            if failures >= self.limits.attempts {
                return Some(ClientError::Transport(format!(
                    "the answer's stream could not be resumed ({failures} attempts)"
                )));
            }
            let delay = self.limits.reconnect_delay(cursor.retry, failures);
            if self.pause(delay, stop).await {
                return None;
            }
            cursor.progressed = false;
            match self.open_get(cursor.last_event_id.as_deref(), stop).await {
                Get::Stream(response) => {
                    match self
                        .read_stream(response, &mut cursor, Some(id), stop)
                        .await
                    {
                        StreamEnd::Answered | StreamEnd::Stopped => return None,
                        StreamEnd::Ended => {}
                        StreamEnd::Failed(err) => {
                            tracing::debug!(request = %id, %err, "the resumed stream broke");
                        }
                    }
                }
                Get::NotOffered => {
                    return Some(ClientError::Transport(
                        "the answer's stream ended and the server does not resume streams \
                         (HTTP 405)"
                            .into(),
                    ));
                }
                Get::SessionGone => return Some(ClientError::SessionExpired),
                Get::Refused(error) => return Some(error),
                Get::Failed(err) => {
                    tracing::debug!(request = %id, %err, "resuming the answer's stream failed");
                }
                Get::Stopped => return None,
            }
            failures = if cursor.progressed { 0 } else { failures + 1 };
        }
    }

    /// The standalone `GET` stream, kept open until the transport stops, in this session and
    /// in the next one should the session be renewed while it runs. Once it gives up, a later
    /// [`Transport::initialized`](crate::client::transport::Transport::initialized) opens it
    /// again.
    pub(super) async fn listen(self: Arc<Self>) {
        loop {
            let session = lock(&self.session).clone();
            self.listen_in_session().await;
            if self.shutdown.is_cancelled() {
                return;
            }
            // Decided under the session's lock, which the next session's id is set under
            // before its `initialized`: either this task sees that session, or `initialized`
            // sees that this task is gone.
            let current = lock(&self.session);
            if current.is_some() && *current != session {
                continue;
            }
            self.listening.store(false, Ordering::Release);
            return;
        }
    }

    /// The `GET` stream of one session, until it ends for good.
    async fn listen_in_session(&self) {
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
                Get::Refused(error) => {
                    tracing::warn!(%error, "the server refused the GET stream; it stops");
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
    pub(super) async fn open_get(
        &self,
        last_event_id: Option<&str>,
        stop: &CancellationToken,
    ) -> Get {
        let mut retries = AuthRetries::default();
        let (response, sent_session) = loop {
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
            let sent_auth = tokio::select! {
                biased;
                () = stop.cancelled() => return Get::Stopped,
                sent = self.authorize(&Method::GET, &mut headers) => match sent {
                    Ok(sent) => sent,
                    Err(error) => return Get::Refused(error),
                },
            };
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
            let retry = tokio::select! {
                biased;
                () = stop.cancelled() => return Get::Stopped,
                retry = self.retry_refused(&response, &Method::GET, sent_auth, &mut retries) => retry,
            };
            match retry {
                Ok(true) => continue,
                Ok(false) => break (response, sent_session),
                Err(error) => return Get::Refused(error),
            }
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
        if media_of(&response) != Some(Media::EventStream) {
            return Get::Failed(format!(
                "the server answered GET with HTTP {status} but no SSE stream"
            ));
        }
        Get::Stream(response)
    }

    /// Reads one SSE connection: delivers each message, moves `cursor`; stops after the
    /// response to `awaiting` when given.
    pub(super) async fn read_stream(
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
}
