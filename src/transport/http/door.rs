//! The door of the endpoint's POSTs: the checks every POST passes (Host and Origin, drain,
//! credentials before the body, `Accept`, `Content-Type`, the body's size, time and budget),
//! then, once the body is read, the one place a message's era is decided. What the door
//! decides travels with each request to the protocol layer as its origin
//! ([`Arrival`](crate::server::origin::Arrival)).
//!
//! | the message | goes to |
//! | --- | --- |
//! | of revision 2026-07-28 ([`v2026::is_v2026`]) | [`v2026::origin`], then [`sessionless::answer`] |
//! | older, on an endpoint in stateless mode | [`sessionless::answer`] |
//! | older | [`session::post`]: its session's, or the `initialize` that opens one |

// Early-return helpers hand back the finished error response; it is built once and returned.
#![allow(clippy::result_large_err)]

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use futures::StreamExt;

use actix_mcp_actors::{
    ErrorCode, ErrorObject,
    dev::{Holds, Incoming},
};

use super::HttpShared;
use super::admission::Permit;
use super::auth;
use super::budget::{ByteBudget, Reservation};
use super::headers::{SESSION, VersionHeader, accepted, check_host, stateful_version_of};
use super::respond::{body_timed_out, close_unread, error_response, header_str, http_error};
use super::watch::Watched;
use super::{session, sessionless, v2026};
use crate::error::code;
use crate::protocol::v2026::unsupported_version;
use crate::protocol::{ProtocolVersion, method};
use crate::server::auth::Identity;
use crate::server::context::TransportInfo;
use crate::server::origin::{Arrival, Envelope, Origin};
use crate::transport::media::Media;

/// The refusals of a POST before its body is read: 503 while draining, 401 without usable
/// credentials on a protected endpoint, 429 past the rate limit of the live session it names.
fn admit_unread(req: &HttpRequest, shared: &HttpShared) -> Result<(), HttpResponse> {
    shared.drain.refuse_while_draining()?;
    auth::refuse_without_credentials(req, shared)?;
    if shared.config.admission.has_session_rate()
        && !shared.config.stateless
        && let Some(session) = header_str(req, &SESSION).map(str::trim)
        && shared.registry().get(session).is_some()
        && let Err(refusal) = shared.admission.session_rate(session)
    {
        return Err(shared.admission.refusal(refusal, None));
    }
    Ok(())
}
/// Admits a request past the endpoint's concurrency limits (waiting in the bounded queue when
/// one is full): the slots it holds until answered, `None` for `ping` (a liveness probe never
/// waits), or the refusal.
pub(super) async fn admission_permit(
    shared: &HttpShared,
    caller: Option<&Identity>,
    request: &actix_mcp_actors::dev::Request,
) -> Result<Option<Permit>, HttpResponse> {
    if request.method == method::PING {
        return Ok(None);
    }
    let tool = (request.method == method::TOOLS_CALL)
        .then(|| crate::protocol::member(request.params.as_ref()?, "name")?.as_str())
        .flatten();
    let principal = caller.map(Identity::owner_key);
    if let Some(permit) = shared.admission.admit_unlimited(principal.as_deref(), tool) {
        return Ok(Some(permit));
    }
    // Boxed apart: a request that may wait for its slots is the rare one, and every POST's
    // future (which actix-web boxes) stays small without it.
    Box::pin(shared.admission.admit(
        principal.as_deref(),
        tool,
        shared.drain.stopping.cancelled(),
    ))
    .await
    .map(Some)
    .map_err(|refusal| shared.admission.refusal(refusal, Some(&request.id)))
}
/// Reads the body, refusing more than `limit` bytes, and reserves its size in the server's
/// budget of request bytes in flight (503 when it does not fit).
async fn read_body(
    req: &HttpRequest,
    payload: &mut web::Payload,
    limit: usize,
    budget: &Arc<ByteBudget>,
) -> Result<(web::BytesMut, Reservation), HttpResponse> {
    let too_large = || {
        http_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("body exceeds {limit} bytes"),
        )
    };
    let over_budget = || {
        let mut response = http_error(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            code::SERVER_BUSY,
            format!(
                "server busy: the request bytes in flight would exceed the server's budget \
                 ({} bytes); retry later",
                budget.limit()
            ),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        response
    };
    let length = header_str(req, header::CONTENT_LENGTH).and_then(|l| l.parse::<usize>().ok());
    if length.is_some_and(|length| length > limit) {
        return Err(too_large());
    }
    let mut reservation = budget
        .reserve(length.unwrap_or(0))
        .ok_or_else(over_budget)?;
    let mut body = web::BytesMut::with_capacity(length.unwrap_or(0));
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|err| {
            http_error(
                StatusCode::BAD_REQUEST,
                None,
                ErrorCode::PARSE_ERROR,
                format!("could not read the body: {err}"),
            )
        })?;
        let total = body.len() + chunk.len();
        if total > limit {
            return Err(too_large());
        }
        if !reservation.grow_to(total) {
            return Err(over_budget());
        }
        body.extend_from_slice(&chunk);
        // The whole declared body is here: the end of the stream would only cost another
        // poll (and a wake-up) to learn it.
        if length == Some(body.len()) {
            break;
        }
    }
    // The body is parsed into a tree, which holds far more than the text for structure-heavy
    // JSON (47 to 96 times for arrays of numbers, small objects or small arrays): the reservation covers
    // what the parse will hold, not only the bytes read.
    let cost = actix_mcp_actors::dev::parsed_size_estimate(&body);
    if cost > budget.limit() {
        return Err(http_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "the message is too complex: parsed, it would hold about {cost} bytes, more \
                 than the server's budget of {} bytes for all requests in flight",
                budget.limit()
            ),
        ));
    }
    if !reservation.grow_to(cost) {
        return Err(over_budget());
    }
    Ok((body, reservation))
}
/// `POST /mcp`: one JSON-RPC message.
pub(super) async fn post(
    req: HttpRequest,
    mut payload: web::Payload,
    shared: web::Data<HttpShared>,
) -> HttpResponse {
    if let Err(response) = check_host(&req, &shared) {
        return response;
    }
    let _handler = shared.drain.enter();
    if let Err(response) = admit_unread(&req, &shared) {
        return close_unread(response, payload);
    }
    let accepted = accepted(&req);
    if !(accepted.json && accepted.event_stream) {
        return http_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorCode::INVALID_REQUEST,
            "the Accept header must list both application/json and text/event-stream",
        );
    }
    let json_content = req
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|ct| Media::of(ct.as_bytes()) == Some(Media::Json));
    if !json_content {
        return http_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            ErrorCode::INVALID_REQUEST,
            "Content-Type must be application/json",
        );
    }
    let read = read_body(&req, &mut payload, shared.config.body_limit, &shared.budget);
    // HTTP/1: the connection's dispatcher polls the handler again in the turn it feeds the body.
    let fed_in_turn = req.version() < actix_web::http::Version::HTTP_2;
    let (body, reservation) = match within(shared.config.body_timeout, fed_in_turn, read).await {
        Some(Ok(read)) => read,
        Some(Err(response)) => return close_unread(response, payload),
        None => return close_unread(body_timed_out(shared.config.body_timeout), payload),
    };
    drop(payload);
    post_message(&req, &shared, &body, reservation).await
}
/// Reads a body within `limit` (`None` past it), with a timer armed only for a body that is
/// not complete at the read's second poll.
///
/// actix-http's HTTP/1 dispatcher polls a handler once as soon as the request's head is parsed,
/// before it feeds the body bytes that came with the head, then again in the same turn once it
/// has fed them (`fed_in_turn`). A body that came with its head is read at that second poll,
/// and most bodies do:
/// - arming a timer for them (a timer-wheel entry, registered and then removed, and a clock
///   read) would cost each request more than reading the body;
/// - a first read that registered the task's waker with the body would be woken by that feed,
///   and the connection's task polled once more after the turn, for nothing (or, while the
///   request waits on something else, such as a shared store, before it could go on). With
///   `fed_in_turn`, the first read is polled with a waker that does nothing.
///
/// Until the second poll the read is on its thread's [`watch`](super::watch), which makes sure
/// it comes; a body that is not complete then is under its deadline, counted from that poll,
/// and its read is woken by the body's bytes as they arrive.
async fn within<F: Future>(
    limit: std::time::Duration,
    fed_in_turn: bool,
    read: F,
) -> Option<F::Output> {
    let mut read = std::pin::pin!(read);
    let mut first = true;
    let mut watched: Option<Watched> = None;
    let mut timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    std::future::poll_fn(|cx| {
        let first = std::mem::take(&mut first);
        let polled = if first && fed_in_turn {
            read.as_mut()
                .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
        } else {
            read.as_mut().poll(cx)
        };
        if let Poll::Ready(output) = polled {
            return Poll::Ready(Some(output));
        }
        if first {
            watched = Some(Watched::new(cx.waker()));
            return Poll::Pending;
        }
        watched = None;
        let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        timer.as_mut().poll(cx).map(|()| None)
    })
    .await
}

/// What a request's work keeps until it ends: its admission slots and its body's share of the
/// budget of request bytes in flight. A limit counts work, not connections: a client that goes
/// away while its request runs on frees neither.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) _permit: Option<Permit>,
    pub(super) _reservation: Reservation,
}
/// Answers a POSTed message whose body has been read (its size held by `reservation`): the
/// door. It authenticates the caller and decides the message's era once: a 2026-07-28 message
/// goes through [`v2026::origin`] to [`sessionless`]; one of an older revision to its session
/// ([`session::post`]), or to [`sessionless`] in stateless mode.
async fn post_message(
    req: &HttpRequest,
    shared: &HttpShared,
    body: &[u8],
    reservation: Reservation,
) -> HttpResponse {
    let version_header = VersionHeader::of(req);
    let message = match parse_body(version_header, body) {
        Ok(message) => message,
        Err(rejection) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                rejection.id.as_ref(),
                &rejection.error,
            );
        }
    };
    let message_id = match &message {
        Incoming::Request(request) => Some(request.id.clone()),
        _ => None,
    };
    let id = message_id.as_ref();
    let caller = match auth::authenticate(req, shared, id).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    if let Some(identity) = &caller
        && let Err(refusal) = shared.admission.principal_rate(&identity.owner_key())
    {
        return shared.admission.refusal(refusal, id);
    }
    let raw = match version_header.checked(id) {
        Ok(raw) => raw,
        Err(response) => return response,
    };
    // The paths of the two eras are boxed apart, as each request's answer is
    // (`session::answer`, `sessionless::answer`): actix-web boxes this POST's future, and glibc
    // serves a box of up to 1,032 bytes from its per-thread cache, while a larger one first
    // sorts its free lists, for every request. Each box of a POST stays under that size.
    if v2026::is_v2026(&message, raw) {
        return Box::pin(post_v2026(req, shared, message, raw, caller, reservation)).await;
    }
    let header_version = match stateful_version_of(req, raw, id) {
        Ok(version) => version,
        Err(response) => return response,
    };
    if let Err(response) = authorize(shared, caller.as_deref(), &message) {
        return response;
    }
    let permit = match &message {
        Incoming::Request(request) => {
            match admission_permit(shared, caller.as_deref(), request).await {
                Ok(permit) => permit,
                Err(response) => return response,
            }
        }
        _ => None,
    };
    let holds = Holds::new(Held {
        _permit: permit,
        _reservation: reservation,
    });
    let transport = auth::transport_info(req, shared, caller.clone());
    if shared.config.stateless {
        return post_sessionless_2025(shared, message, header_version, transport, holds).await;
    }
    Box::pin(session::post(
        req, shared, message, caller, transport, holds,
    ))
    .await
}

/// The message a POST's body holds. A 2026-07-28 request's `_meta` stays text: the door reads a
/// few members of it, and the handler's context the rest only if it asks.
fn parse_body(
    header: VersionHeader<'_>,
    body: &[u8],
) -> Result<Incoming, actix_mcp_actors::dev::Rejection> {
    if v2026::header_is_v2026(header.value()) {
        actix_mcp_actors::dev::parse_message_keeping_meta(body)
    } else {
        actix_mcp_actors::dev::parse_message(body)
    }
}

/// A 2026-07-28 message: its door's checks and its origin ([`v2026::origin`]), then answered
/// without a session.
async fn post_v2026(
    req: &HttpRequest,
    shared: &HttpShared,
    message: Incoming,
    header_version: Option<&str>,
    caller: Option<Arc<Identity>>,
    reservation: Reservation,
) -> HttpResponse {
    let request = match message {
        Incoming::Request(request) => request,
        Incoming::Notification(notification) => {
            if let Some(header) = header_version
                && header.parse::<ProtocolVersion>().is_err()
            {
                return error_response(StatusCode::BAD_REQUEST, None, &unsupported_version(header));
            }
            if let Err(response) =
                auth::authorize(shared, caller.as_deref(), None, &notification.method, None)
            {
                return response;
            }
            let origin = Origin::V2026(Envelope::of_notification(&notification));
            let transport = auth::transport_info(req, shared, caller);
            let arrival = Arrival::of(origin).with_transport(transport);
            return sessionless::notify(shared, notification, &arrival);
        }
        Incoming::Response(response) => {
            let error = ErrorObject::invalid_request(
                "protocol 2026-07-28 has no server-to-client requests to answer",
            );
            return error_response(StatusCode::BAD_REQUEST, Some(&response.id), &error);
        }
    };
    let origin = match v2026::origin(req, shared, &request, header_version) {
        Ok(origin) => origin,
        Err(response) => return response,
    };
    // After the header checks: `Mcp-Name` agrees with the body the scopes are read from.
    if let Err(response) = auth::authorize(
        shared,
        caller.as_deref(),
        Some(&request.id),
        &request.method,
        request.params.as_ref(),
    ) {
        return response;
    }
    let permit = match admission_permit(shared, caller.as_deref(), &request).await {
        Ok(permit) => permit,
        Err(response) => return response,
    };
    let holds = Holds::new(Held {
        _permit: permit,
        _reservation: reservation,
    });
    let transport = auth::transport_info(req, shared, caller);
    let arrival = Arrival::of(origin).with_transport(transport);
    sessionless::answer(shared, request, arrival, holds).await
}

/// A message of the HTTP transport's stateless mode (2025-11-25 and older, no sessions): a
/// request is served under the version its header names (`initialize`: the one it asks for;
/// without a header, 2025-03-26, as the spec allows).
async fn post_sessionless_2025(
    shared: &HttpShared,
    message: Incoming,
    header_version: Option<ProtocolVersion>,
    transport: Option<Arc<TransportInfo>>,
    holds: Holds,
) -> HttpResponse {
    match message {
        Incoming::Request(request) => {
            let version = if request.method == method::INITIALIZE {
                request
                    .params
                    .as_ref()
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(|v| v.as_str())
                    .map_or(ProtocolVersion::LATEST_WITH_HANDSHAKE, |v| {
                        shared.server.effective_version(v)
                    })
            } else {
                header_version.unwrap_or(ProtocolVersion::V2025_03_26)
            };
            let arrival = Arrival::of(Origin::Sessionless { version }).with_transport(transport);
            sessionless::answer(shared, request, arrival, holds).await
        }
        Incoming::Notification(notification) => {
            let version = header_version.unwrap_or(ProtocolVersion::LATEST_WITH_HANDSHAKE);
            let arrival = Arrival::of(Origin::Sessionless { version }).with_transport(transport);
            sessionless::notify(shared, notification, &arrival)
        }
        Incoming::Response(_) => HttpResponse::Accepted().finish(),
    }
}

/// The scope check of a POSTed message (see [`auth::authorize`]).
fn authorize(
    shared: &HttpShared,
    caller: Option<&Identity>,
    message: &Incoming,
) -> Result<(), HttpResponse> {
    match message {
        Incoming::Request(request) => auth::authorize(
            shared,
            caller,
            Some(&request.id),
            &request.method,
            request.params.as_ref(),
        ),
        Incoming::Notification(notification) => {
            auth::authorize(shared, caller, None, &notification.method, None)
        }
        Incoming::Response(_) => auth::authorize(shared, caller, None, "", None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Wake, Waker};
    use std::time::Duration;

    /// Counts the wake-ups of the connection's task.
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Polls `within` as actix-http's dispatcher does (once before it feeds the body, once in
    /// the same turn after), over a read that keeps the waker of each of its polls; the body's
    /// feed wakes the waker of the read's first poll. Gives the connection's wake-ups after that
    /// feed, after a later byte wakes the waker of the second poll, and the read's answer once
    /// the body is complete.
    fn turns(fed_in_turn: bool) -> (usize, usize, Poll<Option<()>>) {
        let wakers: RefCell<Vec<Waker>> = RefCell::default();
        let complete = Cell::new(false);
        let read = std::future::poll_fn(|cx| {
            wakers.borrow_mut().push(cx.waker().clone());
            if complete.get() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        });
        let mut within = std::pin::pin!(within(Duration::from_secs(60), fed_in_turn, read));
        let wakes = Arc::new(Wakes(AtomicUsize::new(0)));
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(within.as_mut().poll(&mut cx).is_pending());
        wakers.borrow()[0].wake_by_ref();
        let after_feed = wakes.0.load(Ordering::SeqCst);
        assert!(within.as_mut().poll(&mut cx).is_pending());
        wakers.borrow()[1].wake_by_ref();
        let after_byte = wakes.0.load(Ordering::SeqCst);
        complete.set(true);
        (after_feed, after_byte, within.as_mut().poll(&mut cx))
    }

    /// On HTTP/1 the body's feed wakes nothing (the dispatcher polls the handler again in the
    /// same turn); a body still incomplete at that second poll wakes its connection as its
    /// bytes come. Elsewhere the first read already waits with the task's waker.
    #[actix_rt::test]
    async fn an_http1_first_read_leaves_its_connection_unscheduled() {
        assert_eq!(turns(true), (0, 1, Poll::Ready(Some(()))));
        assert_eq!(turns(false), (1, 2, Poll::Ready(Some(()))));
    }
}
