//! Answers to messages without a session: every 2026-07-28 message, and every message of an
//! endpoint in stateless mode (2025-11-25 and older). One path for both: a request runs under
//! the endpoint's registry ([`RegistryHandle::start_detached`](actix_mcp_actors::RegistryHandle::start_detached)),
//! which sees it as a session's requests are seen, and is answered as one JSON body or an SSE
//! stream scoped to it (never resumable: no event ids, no priming event, nothing stored).
//!
//! Such a request is cancelled by closing its answer. In stateless mode on an endpoint with
//! bearer auth, its client may also POST `notifications/cancelled`: request ids are chosen by
//! clients, so a request is recorded under its caller's principal and its id
//! ([`RegistryHandle::start_detached_for`](actix_mcp_actors::RegistryHandle::start_detached_for)),
//! and a cancellation finds only the caller's own request of that id, on this node or, in a
//! cluster, on the node that runs it (a message on the cluster's bus when it is not here).
//! Without bearer auth nothing ties a cancellation to the client whose request it names, and
//! it is refused 400 ([`respond::sessionless_cancel`]); a 2026-07-28 one is refused 400 too,
//! as that revision cancels over HTTP only by closing the stream
//! ([`respond::v2026_cancel`]).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>

use actix_web::HttpResponse;
use futures::future::LocalBoxFuture;
use tokio::sync::oneshot::error::TryRecvError;

use std::sync::Arc;

use actix_mcp_actors::{
    ErrorObject, RequestId,
    dev::{EventLog, Frame, Holds, Notification, Request, ResponseOutlet, Settled},
};
use serde::Deserialize as _;
use serde_json::Value;

use super::HttpShared;
use super::answer::{self, ANSWER_WINDOW};
use super::drain;
use super::respond::{self, complete_sse_response, frame_response, json_response, sse_response};
use crate::error::code;
use crate::protocol::method;
use crate::server::origin::Arrival;
use crate::server::relay;

/// Answers a request without a session. In JSON-response mode it is one JSON body (a
/// 2026-07-28 error answer with the HTTP status its code calls for), except a
/// `subscriptions/listen`, a stream by nature; otherwise an SSE stream, handed over whole when
/// the request finishes within the answer window (a lone 2026-07-28 error as a JSON body with
/// its status).
///
/// Boxed, as the door's futures are: the future of the POST that awaits it stays under the
/// size that glibc serves from its per-thread cache (1,032 bytes).
pub(super) fn answer(
    shared: &HttpShared,
    request: Request,
    arrival: Arrival,
    holds: Holds,
) -> LocalBoxFuture<'_, HttpResponse> {
    Box::pin(answer_request(shared, request, arrival, holds))
}

/// [`answer`], unboxed.
async fn answer_request(
    shared: &HttpShared,
    request: Request,
    arrival: Arrival,
    holds: Holds,
) -> HttpResponse {
    let v2026 = arrival.origin.is_v2026();
    let registry = shared.registry();
    let dispatch = shared.dispatch();
    // Its caller may cancel it by notification (2025 stateless mode, with bearer auth).
    let owner = (!v2026)
        .then(|| caller_key(&arrival))
        .flatten()
        .map(Arc::<str>::from);
    let carry = arrival.carry().holding(holds);
    if shared.config.json_response && request.method != method::SUBSCRIPTIONS_LISTEN {
        let id = request.id.clone();
        let (outlet, mut rx) = ResponseOutlet::channel();
        let _guard = registry.start_detached_for(owner, request, &dispatch, outlet, carry);
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
            // Cancelled (by its caller's notification, or a shutdown). The POST of a request
            // is answered with its JSON-RPC response: the client that cancelled ignores it (as
            // the cancellation spec asks), others learn why.
            Err(()) => {
                let error = ErrorObject::new(code::REQUEST_CANCELLED, "request cancelled");
                json_response(&Frame::error(Some(&id), &error).json, None)
            }
        };
    }
    let log = EventLog::buffered(None, 0, shared.config.retry, true);
    let guard = registry.start_detached_for(owner, request, &dispatch, log.outlet(), carry);
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
/// `notifications/cancelled`, which only an authenticated caller may send ([`cancel`]).
pub(super) fn notify(
    shared: &HttpShared,
    notification: Notification,
    arrival: &Arrival,
) -> HttpResponse {
    if notification.method == method::NOTIFICATION_CANCELLED {
        return cancel(shared, &notification, arrival);
    }
    shared.dispatch.detached_notification(notification, arrival);
    HttpResponse::Accepted().finish()
}

/// The key of the caller of a request or notification on a protected endpoint (its issuer and
/// principal, as sessions are owned); `None` without bearer auth.
fn caller_key(arrival: &Arrival) -> Option<String> {
    let identity = arrival.transport.as_ref()?.identity.as_ref()?;
    Some(identity.owner_key())
}

/// A `notifications/cancelled` without a session: with bearer auth (2025 stateless mode), it
/// cancels the caller's own request of that id, here or on the node of the cluster that runs
/// it, and is accepted (202) whether or not such a request still runs (the spec has unknown
/// and malformed cancellations ignored). Refused 400 without bearer auth, and in 2026-07-28.
fn cancel(shared: &HttpShared, notification: &Notification, arrival: &Arrival) -> HttpResponse {
    if arrival.origin.is_v2026() {
        return respond::v2026_cancel();
    }
    let Some(owner) = caller_key(arrival) else {
        return respond::sessionless_cancel();
    };
    let params = notification.params.as_ref();
    let Some(id) = params
        .and_then(|p| p.get("requestId"))
        .and_then(|id| RequestId::deserialize(id).ok())
    else {
        return HttpResponse::Accepted().finish();
    };
    let reason = params
        .and_then(|p| p.get("reason"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let registry = shared.registry();
    if !registry.cancel_detached(&owner, &id, reason.clone()) {
        // Ended already, never existed, or runs on another node of the cluster.
        relay::relay_sessionless_cancel(registry, &owner, &id, reason);
    }
    HttpResponse::Accepted().finish()
}
