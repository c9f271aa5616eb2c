//! How a POST request's SSE answer leaves: whole, or as a stream.
//!
//! Most requests are answered within a millisecond. Their priming event, any notifications and
//! the response can leave as one complete SSE body with a `Content-Length` (one write), and
//! starting a stream actor for them would cost more than the answer itself. So the request's
//! events are buffered in its [`EventLog`] (numbered and stored exactly as a stream's) for at
//! most [`ANSWER_WINDOW`]: a request that finishes within it is answered whole; one that is
//! still running after it, sends the client a request (which must not wait), asks for SSE
//! polling, or piles up events becomes an [`SseStream`] actor that carries the events kept so
//! far and everything after. The window is this transport's policy; the runtime only offers
//! [`EventLog::settle`].

use std::sync::Arc;
use std::time::Duration;

use actix_mcp_actors::dev::{EventLog, Metrics, Settled, SseStream};

/// How long a POST answer stays buffered before its headers go out.
pub(super) const ANSWER_WINDOW: Duration = Duration::from_millis(2);

/// Waits at most `window` for the request behind `log` to finish; see the module docs. A
/// stream is handed to a new [`SseStream`] actor. Dropping the future before it resolves (the
/// client went away) turns the answer into a stream without a connection, so what the request
/// sends later stays resumable with `Last-Event-ID`.
pub(super) async fn settle(
    log: &Arc<EventLog>,
    window: Duration,
    metrics: &Arc<Metrics>,
) -> Settled {
    // Most requests have finished by now (their handler was polled once in place).
    if let Some(settled) = log.settle(false) {
        return adopt(log, settled, metrics);
    }
    let mut guard = Abandoned(Some((log, metrics)));
    let deadline = tokio::time::sleep(window);
    tokio::pin!(deadline);
    let settled = loop {
        tokio::select! {
            biased;
            () = log.changed() => {}
            () = &mut deadline => break log.settle(true),
        }
        if let Some(settled) = log.settle(false) {
            break Some(settled);
        }
    };
    guard.0 = None;
    match settled {
        Some(settled) => adopt(log, settled, metrics),
        // Settled elsewhere meanwhile: nothing is left to answer with.
        None => Settled::Complete {
            events: Vec::new(),
            answered: false,
        },
    }
}

fn adopt(log: &Arc<EventLog>, settled: Settled, metrics: &Arc<Metrics>) -> Settled {
    if let Settled::Stream(_) = &settled {
        SseStream::start(log.clone(), metrics.clone());
    }
    settled
}

/// Turns an answer whose settling was abandoned into a stream (see [`settle`]).
struct Abandoned<'a>(Option<(&'a Arc<EventLog>, &'a Arc<Metrics>)>);

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if let Some((log, metrics)) = self.0.take()
            && let Some(settled) = log.settle(true)
        {
            // The receiver is dropped at once: the stream has no connection.
            drop(adopt(log, settled, metrics));
        }
    }
}
