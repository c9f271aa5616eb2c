//! A small server-sent-events reader over a reqwest byte stream.
//!
//! It splits the body into frames at blank lines and parses the `id:`, `data:` and `retry:`
//! fields and `:` comments of each. Every read is bounded by [`WAIT`](super::WAIT): a stream
//! that stalls fails the test instead of hanging it.

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use super::WAIT;

/// One SSE frame, as it travelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseFrame {
    /// The frame's exact text, without its terminating blank line.
    pub raw: String,
    /// The `id:` field.
    pub id: Option<String>,
    /// The `data:` lines, joined with `\n`; `None` when the frame had none.
    pub data: Option<String>,
    /// The `retry:` field, in milliseconds.
    pub retry: Option<u64>,
    /// The `:` comment lines.
    pub comments: Vec<String>,
}

impl SseFrame {
    fn parse(raw: &str) -> Self {
        let mut frame = SseFrame {
            raw: raw.to_owned(),
            id: None,
            data: None,
            retry: None,
            comments: Vec::new(),
        };
        for line in raw.split('\n') {
            if let Some(comment) = line.strip_prefix(':') {
                frame.comments.push(comment.trim_start().to_owned());
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => frame.id = Some(value.to_owned()),
                "data" => match &mut frame.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => frame.data = Some(value.to_owned()),
                },
                "retry" => {
                    frame.retry = Some(
                        value
                            .parse()
                            .unwrap_or_else(|_| panic!("malformed retry field in {raw:?}")),
                    );
                }
                other => panic!("unexpected SSE field `{other}` in {raw:?}"),
            }
        }
        frame
    }

    /// A keep-alive (comments only).
    pub fn is_comment(&self) -> bool {
        self.id.is_none() && self.data.is_none() && self.retry.is_none()
    }

    /// A frame that carries a JSON-RPC message (non-empty data).
    pub fn is_message(&self) -> bool {
        self.data.as_deref().is_some_and(|data| !data.is_empty())
    }

    /// The frame's data as JSON, validated against the MCP schema.
    pub fn json(&self) -> Value {
        let data = self
            .data
            .as_deref()
            .unwrap_or_else(|| panic!("the frame has no data: {:?}", self.raw));
        let message: Value = serde_json::from_str(data)
            .unwrap_or_else(|err| panic!("non-JSON SSE data ({err}): {data}"));
        super::assert_valid_message(&message);
        message
    }
}

/// Reads frames off an SSE response body.
pub struct SseReader {
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    buffer: String,
    ended: bool,
    /// How long [`next_frame`](Self::next_frame) waits for a frame.
    patience: Duration,
}

impl std::fmt::Debug for SseReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseReader")
            .field("buffered", &self.buffer.len())
            .field("ended", &self.ended)
            .finish()
    }
}

impl SseReader {
    /// Reads `response`'s body, which must be `text/event-stream`.
    pub fn new(response: reqwest::Response) -> Self {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        assert!(
            content_type.starts_with("text/event-stream"),
            "expected an SSE response, got {} with content type {content_type:?}",
            response.status()
        );
        Self {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
            ended: false,
            patience: WAIT,
        }
    }

    /// Waits up to `patience` for each frame instead of [`WAIT`]: for an answer the server
    /// itself holds back for a while.
    pub fn patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// The next frame, or `None` at the end of the stream; `Err` when nothing arrives within
    /// `wait`.
    pub async fn try_next_frame(&mut self, wait: Duration) -> Result<Option<SseFrame>, ()> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let raw: String = self.buffer.drain(..end + 2).collect();
                return Ok(Some(SseFrame::parse(&raw[..end])));
            }
            if self.ended {
                assert!(
                    self.buffer.is_empty(),
                    "the stream ended inside a frame: {:?}",
                    self.buffer
                );
                return Ok(None);
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Err(_) => return Err(()),
                Ok(None) => self.ended = true,
                // A connection the server cut (SSE polling) ends the stream too.
                Ok(Some(Err(_))) => self.ended = true,
                Ok(Some(Ok(chunk))) => {
                    let text = std::str::from_utf8(&chunk).expect("SSE bodies are UTF-8");
                    assert!(!text.contains('\r'), "the server writes LF line endings");
                    self.buffer.push_str(text);
                }
            }
        }
    }

    /// The next frame, or `None` at the end of the stream; fails after [`WAIT`] (or the
    /// reader's [`patience`](Self::patience)).
    pub async fn next_frame(&mut self) -> Option<SseFrame> {
        let patience = self.patience;
        self.try_next_frame(patience)
            .await
            .unwrap_or_else(|()| panic!("no SSE frame within {patience:?}"))
    }

    /// The next frame that is not a keep-alive comment; fails at the end of the stream.
    pub async fn next_event(&mut self) -> SseFrame {
        loop {
            let frame = self.next_frame().await.expect("the SSE stream ended early");
            if !frame.is_comment() {
                return frame;
            }
        }
    }

    /// The next event that carries an id (skipping keep-alives and a bare `retry` advice): a
    /// stream's priming event, or a message.
    pub async fn next_event_with_id(&mut self) -> SseFrame {
        loop {
            let frame = self.next_event().await;
            if frame.id.is_some() {
                return frame;
            }
        }
    }

    /// The next JSON-RPC message (skipping keep-alives, `retry` and priming events), validated
    /// against the schema, with its event id.
    pub async fn next_message_with_id(&mut self) -> (Option<String>, Value) {
        loop {
            let frame = self.next_event().await;
            if frame.is_message() {
                return (frame.id.clone(), frame.json());
            }
        }
    }

    /// The next JSON-RPC message; see [`next_message_with_id`](Self::next_message_with_id).
    pub async fn next_message(&mut self) -> Value {
        self.next_message_with_id().await.1
    }

    /// Fails unless the stream ends within [`WAIT`] without another JSON-RPC message (only
    /// keep-alives, `retry` and priming events may come first).
    pub async fn expect_end(&mut self) {
        while let Some(frame) = self.next_frame().await {
            assert!(
                !frame.is_message(),
                "expected the end of the stream, got {:?}",
                frame.raw
            );
        }
    }

    /// Fails if a JSON-RPC message arrives within `wait`; `true` when the stream ended.
    pub async fn expect_silence(&mut self, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.try_next_frame(left).await {
                Err(()) => return false,
                Ok(None) => return true,
                Ok(Some(frame)) => assert!(
                    !frame.is_message(),
                    "expected nothing on the stream, got {:?}",
                    frame.raw
                ),
            }
        }
    }
}
