//! Answers to messages without a session: every 2026-07-28 message, and every message of an
//! endpoint in stateless mode (2025-11-25 and older). One path for both: a request runs under
//! the endpoint's registry ([`RegistryHandle::start_detached`](actix_mcp_actors::RegistryHandle::start_detached)),
//! which sees it as a session's requests are seen, and is answered as one JSON body or an SSE
//! stream scoped to it (never resumable: no event ids, no priming event, nothing stored). Such
//! a request is cancelled only by closing its answer: a `notifications/cancelled` POSTed apart
//! cannot be matched to it (see [`respond::sessionless_cancel`]).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use tokio::sync::oneshot::error::TryRecvError;

use actix_mcp_actors::{
    ErrorCode,
    dev::{EventLog, Holds, Notification, Request, ResponseOutlet, Settled},
};

use super::HttpShared;
use super::answer::{self, ANSWER_WINDOW};
use super::drain;
use super::respond::{
    self, complete_sse_response, frame_response, http_error, json_response, sse_response,
};
use crate::protocol::method;
use crate::server::origin::Arrival;

/// Answers a request without a session. In JSON-response mode it is one JSON body (a
/// 2026-07-28 error answer with the HTTP status its code calls for), except a
/// `subscriptions/listen`, a stream by nature; otherwise an SSE stream, handed over whole when
/// the request finishes within the answer window (a lone 2026-07-28 error as a JSON body with
/// its status).
pub(super) async fn answer(
    shared: &HttpShared,
    request: Request,
    arrival: Arrival,
    holds: Holds,
) -> HttpResponse {
    let v2026 = arrival.origin.is_v2026();
    let registry = shared.registry();
    let dispatch = shared.dispatch();
    let carry = arrival.carry().holding(holds);
    if shared.config.json_response && request.method != method::SUBSCRIPTIONS_LISTEN {
        let id = request.id.clone();
        let (outlet, mut rx) = ResponseOutlet::channel();
        let _guard = registry.start_detached(request, &dispatch, outlet, carry);
        // Most requests are answered while they start (their handler is polled once in
        // place): only one still running waits, and watches the drain.
        let answered = match rx.try_recv() {
            Ok(frame) => Ok(frame),
            Err(TryRecvError::Closed) => Err(()),
            Err(TryRecvError::Empty) => tokio::select! {
                answered = rx => answered.map_err(drop),
                () = shared.drain.cancelling.cancelled() => {
                    return drain::cancelled_response(&id);
                }
            },
        };
        return match answered {
            Ok(frame) if v2026 => frame_response(&frame.json),
            Ok(frame) => json_response(&frame.json, None),
            Err(_) => http_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(&id),
                ErrorCode::INTERNAL_ERROR,
                "the request produced no response",
            ),
        };
    }
    let log = EventLog::buffered(None, 0, shared.config.retry, true);
    let guard = registry.start_detached(request, &dispatch, log.outlet(), carry);
    match answer::settle(&log, ANSWER_WINDOW, &shared.metrics).await {
        Settled::Complete { events, .. } => {
            guard.disarm();
            // A lone 2026 error answer takes the status its code calls for, as a JSON body.
            if v2026
                && let [event] = events.as_slice()
                && event.data.contains("\"error\"")
            {
                return frame_response(&event.data);
            }
            complete_sse_response(shared, events, None)
        }
        Settled::Stream(receiver) => sse_response(shared, receiver, guard, None),
    }
}

/// A notification without a session: handled with what its transport knows of it (202), but a
/// `notifications/cancelled`, which cannot be matched to a request without a session.
pub(super) fn notify(
    shared: &HttpShared,
    notification: Notification,
    arrival: &Arrival,
) -> HttpResponse {
    if notification.method == method::NOTIFICATION_CANCELLED {
        return respond::sessionless_cancel();
    }
    shared.dispatch.detached_notification(notification, arrival);
    HttpResponse::Accepted().finish()
}
