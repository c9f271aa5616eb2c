//! SSE response bodies: a whole answer in one buffer, or a live stream read from its
//! connection, both encoded by `russe` (the SSE codec actix-web-lab uses).
//!
//! Every body starts with the `retry` advice, then the events (`id` and `data`); a live
//! stream sends a `: keep-alive` comment after each quiet keep-alive period, starting one
//! period in.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_mcp_actors::dev::{SseEvent, StreamReceiver};
use actix_web::body::{BodySize, MessageBody};
use bytes::{Bytes, BytesMut};
use tokio::time::{Instant, Sleep};
use tokio_util::codec::Encoder as _;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Events a live stream writes in one chunk at most, when several are waiting.
const EVENTS_PER_CHUNK: usize = 32;

fn put(body: &mut BytesMut, event: russe::Event) {
    if let Err(err) = russe::Encoder::default().encode(event, body) {
        tracing::error!(%err, "could not encode an SSE event");
    }
}

fn put_event(body: &mut BytesMut, event: SseEvent) {
    // The common case, a one-line `data` (compact JSON, or the priming event's empty one),
    // written in place; anything with a line break goes through the codec, which splits it.
    if memchr::memchr2(b'\n', b'\r', event.data.as_bytes()).is_none() {
        if let Some(id) = event.id {
            put_id(body, id);
        }
        body.extend_from_slice(b"data: ");
        body.extend_from_slice(event.data.as_bytes());
        body.extend_from_slice(b"\n\n");
        return;
    }
    put(
        body,
        russe::Event::Message(russe::Message {
            data: event.data.as_ref().into(),
            event: None,
            retry: None,
            id: event.id.map(|id| id.to_string().into()),
        }),
    );
}

/// `id: <stream>-<seq>` and its line end.
fn put_id(body: &mut BytesMut, id: actix_mcp_actors::EventId) {
    let mut digits = itoa::Buffer::new();
    body.extend_from_slice(b"id: ");
    body.extend_from_slice(digits.format(id.stream).as_bytes());
    body.extend_from_slice(b"-");
    body.extend_from_slice(digits.format(id.seq).as_bytes());
    body.extend_from_slice(b"\n");
}

/// `retry: <milliseconds>` and the blank line that ends it, as the codec writes it (whole
/// milliseconds, fractions dropped), in place.
fn put_retry(body: &mut BytesMut, retry: Duration) {
    body.extend_from_slice(b"retry: ");
    body.extend_from_slice(itoa::Buffer::new().format(retry.as_millis()).as_bytes());
    body.extend_from_slice(b"\n\n");
}

/// A whole SSE body: the `retry` advice, then every event, into one buffer.
pub(super) fn whole(events: Vec<SseEvent>, retry: Duration) -> Bytes {
    let size = 32 + events.iter().map(|e| e.data.len() + 32).sum::<usize>();
    let mut body = BytesMut::with_capacity(size);
    put_retry(&mut body, retry);
    for event in events {
        put_event(&mut body, event);
    }
    body.freeze()
}

/// A live SSE body read from one connection to a stream. `keep` lives as long as the body (a
/// guard that cancels the request when the client goes away, for example).
pub(super) struct SseBody<K> {
    receiver: StreamReceiver,
    retry: Option<Duration>,
    period: Duration,
    keep_alive: Pin<Box<Sleep>>,
    /// Fires when the server drains: the body ends, after a last `retry` hint.
    closing: Pin<Box<WaitForCancellationFutureOwned>>,
    /// The `retry` advice, also sent last when the server drains.
    retry_hint: Duration,
    /// The drain's last chunk has gone out: the body is over.
    closed: bool,
    _keep: K,
}

impl<K> SseBody<K> {
    pub(super) fn new(
        receiver: StreamReceiver,
        retry: Duration,
        period: Duration,
        keep: K,
        closing: CancellationToken,
    ) -> Self {
        Self {
            receiver,
            retry: Some(retry),
            period,
            keep_alive: Box::pin(tokio::time::sleep(period)),
            closing: Box::pin(closing.cancelled_owned()),
            retry_hint: retry,
            closed: false,
            _keep: keep,
        }
    }
}

impl<K: Unpin> MessageBody for SseBody<K> {
    type Error = Infallible;

    fn size(&self) -> BodySize {
        BodySize::Stream
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.get_mut();
        if this.closed {
            return Poll::Ready(None);
        }
        let mut chunk = BytesMut::new();
        if let Some(retry) = this.retry.take() {
            put_retry(&mut chunk, retry);
        }
        let mut ended = false;
        for _ in 0..EVENTS_PER_CHUNK {
            match this.receiver.poll_recv(cx) {
                Poll::Ready(Some(event)) => put_event(&mut chunk, event),
                Poll::Ready(None) => {
                    ended = true;
                    break;
                }
                Poll::Pending => break,
            }
        }
        if !chunk.is_empty() {
            let deadline = Instant::now() + this.period;
            this.keep_alive.as_mut().reset(deadline);
            return Poll::Ready(Some(Ok(chunk.freeze())));
        }
        if ended {
            return Poll::Ready(None);
        }
        if this.closing.as_mut().poll(cx).is_ready() {
            // The server drains: reconnect (elsewhere) after the retry delay, and resume.
            put_retry(&mut chunk, this.retry_hint);
            this.closed = true;
            return Poll::Ready(Some(Ok(chunk.freeze())));
        }
        if this.keep_alive.as_mut().poll(cx).is_ready() {
            let deadline = Instant::now() + this.period;
            this.keep_alive.as_mut().reset(deadline);
            put(&mut chunk, russe::Event::Comment("keep-alive".into()));
            return Poll::Ready(Some(Ok(chunk.freeze())));
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use actix_mcp_actors::EventId;

    use super::*;

    #[test]
    fn a_retry_is_written_as_the_codec_writes_it() {
        for retry in [
            Duration::ZERO,
            Duration::from_micros(1_999),
            Duration::from_secs(3),
            Duration::MAX,
        ] {
            let (mut ours, mut codec) = (BytesMut::new(), BytesMut::new());
            put_retry(&mut ours, retry);
            put(&mut codec, russe::Event::Retry(retry));
            assert_eq!(ours, codec);
        }
    }

    #[test]
    fn a_whole_body_is_the_retry_advice_then_each_event() {
        let events = vec![
            SseEvent {
                id: Some(EventId { stream: 3, seq: 0 }),
                data: Arc::from(""),
                retry: None,
            },
            SseEvent {
                id: Some(EventId { stream: 3, seq: 1 }),
                data: Arc::from(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
                retry: None,
            },
        ];
        let body = whole(events, Duration::from_millis(1500));
        assert_eq!(
            &body[..],
            b"retry: 1500\n\nid: 3-0\ndata: \n\nid: 3-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
        );
    }

    #[actix_rt::test]
    async fn a_live_body_sends_what_is_queued_then_ends() {
        let receiver = StreamReceiver::replay(vec![SseEvent {
            id: None,
            data: Arc::from("{}"),
            retry: None,
        }]);
        let body = SseBody::new(
            receiver,
            Duration::from_secs(1),
            Duration::from_secs(15),
            (),
            CancellationToken::new(),
        );
        let bytes = actix_web::body::to_bytes(body).await.unwrap_or_default();
        assert_eq!(&bytes[..], b"retry: 1000\n\ndata: {}\n\n");
    }

    fn live_receiver() -> (
        StreamReceiver,
        std::sync::Arc<actix_mcp_actors::dev::EventLog>,
    ) {
        let log = actix_mcp_actors::dev::EventLog::buffered(None, 0, Duration::from_secs(1), true);
        (log.attach(None), log)
    }

    #[actix_rt::test]
    async fn a_draining_server_ends_a_live_body_with_a_retry_hint() {
        let (receiver, _log) = live_receiver();
        let closing = CancellationToken::new();
        closing.cancel();
        let body = SseBody::new(
            receiver,
            Duration::from_millis(250),
            Duration::from_secs(15),
            (),
            closing,
        );
        let bytes = tokio::time::timeout(Duration::from_secs(10), actix_web::body::to_bytes(body))
            .await
            .unwrap_or_else(|_| panic!("the body did not end"))
            .unwrap_or_default();
        assert_eq!(&bytes[..], b"retry: 250\n\nretry: 250\n\n");
    }
}
