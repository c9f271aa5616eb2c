//! The endpoint's POST, GET and DELETE handlers.

// Early-return helpers hand back the finished error response; it is built once and returned.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{ConnectionType, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use futures::StreamExt;

use actix_mcp_actors::{
    ErrorCode, ErrorObject, EventId, EventLog, Frame, Holds, InFlight, Incoming, OpenError,
    RequestId, ResponseOutlet, Resumed, SessionConfig, SessionHandle, SessionId, SessionParts,
    Settled, SseEvent, StoreError, StreamReceiver,
};

use super::admission::Permit;
use super::answer::{self, ANSWER_WINDOW};
use super::auth;
use super::budget::{ByteBudget, Reservation};
use super::drain;
use super::modern;
use super::sse::{self, SseBody};
use super::{HttpShared, PROTOCOL_VERSION_HEADER, SESSION_HEADER};
use crate::cluster::Lookup;
use crate::error::code;
use crate::protocol::{ProtocolVersion, method};
use crate::server::auth::Identity;
use crate::server::context::TransportInfo;
use crate::server::route::{McpDispatch, RequestDefaults};
use crate::server::session::SessionState;

/// An HTTP refusal with a JSON-RPC error body. The body always has an `id` member: the
/// request's id once the body was read and held a request, `null` before (or for a
/// notification or a response).
pub(super) fn http_error(
    status: StatusCode,
    id: Option<&RequestId>,
    code: ErrorCode,
    message: impl Into<String>,
) -> HttpResponse {
    let frame = Frame::error(id, &ErrorObject::new(code, message));
    HttpResponse::build(status)
        .content_type("application/json")
        .body(frame.json.to_string())
}

pub(super) fn header_str(req: &HttpRequest, name: impl header::AsHeaderName) -> Option<&str> {
    req.headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
}

/// Checks every request shares: Host/Origin.
fn check_host(req: &HttpRequest, shared: &HttpShared) -> Result<(), HttpResponse> {
    let local = req.app_config().local_addr();
    let loopback = local.ip().is_loopback();
    if shared.config.host_policy.leaves_host_unchecked(loopback) {
        super::security::warn_unchecked_host(&shared.host_warned, local);
    }
    if let Err(reason) = shared.config.host_policy.check(loopback, req.headers()) {
        tracing::warn!(
            host = ?req.headers().get(header::HOST),
            origin = ?req.headers().get(header::ORIGIN),
            reason,
            "refused a request (DNS-rebinding protection)"
        );
        return Err(http_error(
            StatusCode::FORBIDDEN,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("forbidden: {reason}"),
        ));
    }
    Ok(())
}

/// The `MCP-Protocol-Version` header, trimmed (`Err` when it is not ASCII).
fn raw_version<'a>(
    req: &'a HttpRequest,
    id: Option<&RequestId>,
) -> Result<Option<&'a str>, HttpResponse> {
    let mut values = req.headers().get_all(PROTOCOL_VERSION_HEADER);
    let Some(value) = values.next() else {
        return Ok(None);
    };
    let refuse = |message: &str| {
        http_error(
            StatusCode::BAD_REQUEST,
            id,
            crate::error::code::HEADER_MISMATCH,
            message,
        )
    };
    if values.next().is_some() {
        return Err(refuse(
            "the MCP-Protocol-Version header appears more than once",
        ));
    }
    value
        .to_str()
        .map(|v| Some(v.trim()))
        .map_err(|_| refuse("the MCP-Protocol-Version header is not ASCII"))
}

/// A session request's `MCP-Protocol-Version`: a supported stateful revision, or absent.
fn stateful_version(
    req: &HttpRequest,
    id: Option<&RequestId>,
) -> Result<Option<ProtocolVersion>, HttpResponse> {
    // Refuses a repeated header first: every value must be the one read here.
    raw_version(req, id)?;
    match req.headers().get(PROTOCOL_VERSION_HEADER) {
        None => Ok(None),
        Some(value) => match value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<ProtocolVersion>().ok())
        {
            Some(version) if !version.is_stateless() => Ok(Some(version)),
            _ => Err(http_error(
                StatusCode::BAD_REQUEST,
                id,
                ErrorCode::INVALID_REQUEST,
                format!(
                    "unsupported MCP-Protocol-Version {:?}; supported: {}",
                    value.to_str().unwrap_or("<non-ASCII>"),
                    ProtocolVersion::STATEFUL
                        .iter()
                        .map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        },
    }
}

fn accepts(req: &HttpRequest, needle: &str) -> bool {
    let needle = needle.as_bytes();
    req.headers().get_all(header::ACCEPT).any(|value| {
        value
            .as_bytes()
            .windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle))
    })
}

fn session_id<'a>(req: &'a HttpRequest, id: Option<&RequestId>) -> Result<&'a str, HttpResponse> {
    header_str(req, SESSION_HEADER)
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            http_error(
                StatusCode::BAD_REQUEST,
                id,
                ErrorCode::INVALID_REQUEST,
                "missing Mcp-Session-Id header; send initialize first",
            )
        })
}

/// The session a request names. On a protected endpoint a session of another identity is
/// unknown to the caller (404, the same answer as for an expired one). In a cluster, the
/// session comes from the shared store (503 when the store fails).
async fn lookup(
    req: &HttpRequest,
    shared: &HttpShared,
    caller: Option<&Identity>,
    id: Option<&RequestId>,
) -> Result<SessionHandle, HttpResponse> {
    let session = session_id(req, id)?;
    let unknown = || {
        http_error(
            StatusCode::NOT_FOUND,
            id,
            ErrorCode::INVALID_REQUEST,
            "unknown or expired session; initialize a new one",
        )
    };
    let Some(node) = shared.node() else {
        return shared
            .registry()
            .get(session)
            .filter(|session| auth::owns(session, caller))
            .ok_or_else(unknown);
    };
    let Some(session_id) = SessionId::parse(session) else {
        return Err(unknown());
    };
    match node
        .session(shared.registry(), &shared.server, &session_id)
        .await
    {
        Ok(session) if auth::owns(&session, caller) => Ok(session),
        Ok(_) | Err(Lookup::Unknown) => Err(unknown()),
        Err(Lookup::Unavailable(err)) => Err(store_unavailable(id, &err)),
        Err(Lookup::Refused(err)) => Err(busy(id, &err)),
    }
}

/// In a cluster, a client's `notifications/initialized`: the handshake is marked complete in
/// the store, in one round trip (it also checks that the session lives), then on the session's
/// actor here if this node holds one; none is started. `None` where this does not apply (no
/// cluster). Only without authentication: a caller's identity is checked against the
/// session's owner on the record, by the usual path.
async fn establish_elsewhere(req: &HttpRequest, shared: &HttpShared) -> Option<HttpResponse> {
    let node = shared.node()?;
    let session = header_str(req, SESSION_HEADER)?;
    let local = shared.registry().get(session);
    let unknown = || {
        http_error(
            StatusCode::NOT_FOUND,
            None,
            ErrorCode::INVALID_REQUEST,
            "unknown or expired session; initialize a new one",
        )
    };
    let Some(id) = SessionId::parse(session) else {
        return Some(unknown());
    };
    Some(match node.establish(&id).await {
        Ok(true) => {
            if let Some(session) = local {
                node.established_here(&session);
            }
            HttpResponse::Accepted().finish()
        }
        Ok(false) => {
            // Ended elsewhere, or expired: so it is here.
            shared.registry().close(session);
            unknown()
        }
        Err(err) => store_unavailable(None, &err),
    })
}

/// The 503 of a request that needs the cluster's session store while it fails.
fn store_unavailable(id: Option<&RequestId>, err: &StoreError) -> HttpResponse {
    tracing::warn!(%err, "the session store failed");
    let mut response = http_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        code::SERVER_BUSY,
        "the session store is unavailable; retry later",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// The 503 (or 429 for an identity's own cap) of a session that cannot be opened here.
fn busy(request_id: Option<&RequestId>, err: &OpenError) -> HttpResponse {
    let (status, message) = match err {
        OpenError::OwnerFull(limit) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "too many sessions for this identity (limit {limit}); end one with DELETE or \
                 let one expire"
            ),
        ),
        err => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("server busy: {err}; retry later"),
        ),
    };
    let mut response = http_error(status, request_id, code::SERVER_BUSY, message);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// The dispatch of one request on a session, when the transport has something to hand its
/// handlers (the caller, the headers); `None` uses the session's own.
fn request_dispatch(
    shared: &HttpShared,
    header_version: Option<ProtocolVersion>,
    transport: Option<Arc<TransportInfo>>,
) -> Option<Arc<dyn actix_mcp_actors::Dispatch>> {
    let transport = transport?;
    Some(Arc::new(McpDispatch {
        server: shared.server.clone(),
        defaults: RequestDefaults {
            version: header_version,
            stateless: false,
            #[cfg(feature = "otel")]
            network: crate::telemetry::Network::Tcp,
        },
        transport: Some(transport),
    }))
}

/// The refusals of a POST before its body is read: 503 while draining, 401 without usable
/// credentials on a protected endpoint, 429 past the rate limit of the live session it names.
fn admit_unread(req: &HttpRequest, shared: &HttpShared) -> Result<(), HttpResponse> {
    shared.drain.refuse_while_draining()?;
    auth::refuse_without_credentials(req, shared)?;
    if shared.config.admission.has_session_rate()
        && !shared.config.stateless
        && let Some(session) = header_str(req, SESSION_HEADER).map(str::trim)
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
    request: &actix_mcp_actors::Request,
) -> Result<Option<Permit>, HttpResponse> {
    if request.method == method::PING {
        return Ok(None);
    }
    let tool = (request.method == method::TOOLS_CALL)
        .then(|| request.params.as_ref()?.get("name")?.as_str())
        .flatten();
    let principal = caller.map(Identity::owner_key);
    shared
        .admission
        .admit(
            principal.as_deref(),
            tool,
            shared.drain.stopping.cancelled(),
        )
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
    }
    // The body is parsed into a tree, which holds far more than the text for structure-heavy
    // JSON (38 to 55 times for arrays of numbers or small objects): the reservation covers
    // what the parse will hold, not only the bytes read.
    let cost = actix_mcp_actors::parsed_size_estimate(&body);
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

/// A refusal sent before the whole body was read, after which the connection closes: what is
/// left of the body is never read. (actix-web would otherwise drain a chunked body whose
/// reader went away, for as long as the client keeps sending it; it closes the connection
/// instead when the body's reader is still alive as the answer goes out, so the answer keeps
/// it until it is written.)
fn close_unread(response: HttpResponse, payload: web::Payload) -> HttpResponse {
    let mut response = response.map_body(|head, body| {
        head.set_connection_type(ConnectionType::Close);
        UnreadBody {
            body,
            _payload: payload,
        }
    });
    response
        .head_mut()
        .set_connection_type(ConnectionType::Close);
    response.map_into_boxed_body()
}

/// A refusal's body, holding the reader of the request body it did not read (see
/// [`close_unread`]).
struct UnreadBody {
    body: BoxBody,
    _payload: web::Payload,
}

impl MessageBody for UnreadBody {
    type Error = <BoxBody as MessageBody>::Error;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<bytes::Bytes, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_next(cx)
    }
}

/// The 408 answer to a body that did not arrive in time.
fn body_timed_out(limit: std::time::Duration) -> HttpResponse {
    http_error(
        StatusCode::REQUEST_TIMEOUT,
        None,
        ErrorCode::INVALID_REQUEST,
        format!(
            "the request body did not arrive within {} ms",
            limit.as_millis()
        ),
    )
}

/// The headers of every SSE answer.
fn sse_headers(builder: &mut actix_web::HttpResponseBuilder, session: Option<&SessionId>) {
    builder
        .content_type("text/event-stream")
        .insert_header((header::CONTENT_ENCODING, "identity"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("x-accel-buffering", "no"));
    if let Some(id) = session {
        builder.insert_header((SESSION_HEADER, id.as_str()));
    }
}

/// An SSE response fed by `receiver`; `keep` lives as long as the body (a drop guard, for
/// example).
pub(super) fn sse_response<K: Unpin + 'static>(
    shared: &HttpShared,
    receiver: StreamReceiver,
    keep: K,
    session: Option<&SessionId>,
) -> HttpResponse {
    let mut builder = HttpResponse::Ok();
    sse_headers(&mut builder, session);
    builder.body(SseBody::new(
        receiver,
        shared.config.retry,
        shared.config.keep_alive,
        keep,
        shared.drain.closing_streams.clone(),
    ))
}

/// An SSE body that is already whole: every event at once, with its length (one write).
pub(super) fn complete_sse_response(
    shared: &HttpShared,
    events: Vec<SseEvent>,
    session: Option<&SessionId>,
) -> HttpResponse {
    let mut builder = HttpResponse::Ok();
    sse_headers(&mut builder, session);
    builder.body(sse::whole(events, shared.config.retry))
}

fn json_response(json: &str, session: Option<&SessionId>) -> HttpResponse {
    let mut builder = HttpResponse::Ok();
    builder.content_type("application/json");
    if let Some(id) = session {
        builder.insert_header((SESSION_HEADER, id.as_str()));
    }
    builder.body(json.to_owned())
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
    if !(accepts(&req, "application/json") && accepts(&req, "text/event-stream")) {
        return http_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorCode::INVALID_REQUEST,
            "the Accept header must list both application/json and text/event-stream",
        );
    }
    let json_content = header_str(&req, header::CONTENT_TYPE)
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"));
    if !json_content {
        return http_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            ErrorCode::INVALID_REQUEST,
            "Content-Type must be application/json",
        );
    }
    let read = read_body(&req, &mut payload, shared.config.body_limit, &shared.budget);
    let (body, reservation) = match tokio::time::timeout(shared.config.body_timeout, read).await {
        Ok(Ok(read)) => read,
        Ok(Err(response)) => return close_unread(response, payload),
        Err(_) => return close_unread(body_timed_out(shared.config.body_timeout), payload),
    };
    drop(payload);
    post_message(&req, &shared, &body, reservation).await
}

/// What a request's work keeps until it ends: its admission slots and its body's share of the
/// budget of request bytes in flight. A limit counts work, not connections: a client that goes
/// away while its request runs on frees neither.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) _permit: Option<Permit>,
    pub(super) _reservation: Reservation,
}

/// Answers a POSTed message whose body has been read (its size held by `reservation`).
async fn post_message(
    req: &HttpRequest,
    shared: &HttpShared,
    body: &[u8],
    reservation: Reservation,
) -> HttpResponse {
    let message = match actix_mcp_actors::parse_message(body) {
        Ok(message) => message,
        Err(rejection) => {
            return HttpResponse::BadRequest()
                .content_type("application/json")
                .body(rejection.to_frame().json.to_string());
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
    let raw = match raw_version(req, id) {
        Ok(raw) => raw,
        Err(response) => return response,
    };
    if modern::is_stateless(&message, raw) {
        return modern::post(req, shared, message, raw, caller, reservation).await;
    }
    let header_version = match stateful_version(req, id) {
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
    post_stateful(req, shared, message, header_version, caller, holds).await
}

/// Answers a message of the session era (or of stateless mode) once it is admitted.
async fn post_stateful(
    req: &HttpRequest,
    shared: &HttpShared,
    message: Incoming,
    header_version: Option<ProtocolVersion>,
    caller: Option<Arc<Identity>>,
    holds: Holds,
) -> HttpResponse {
    let message_id = match &message {
        Incoming::Request(request) => Some(request.id.clone()),
        _ => None,
    };
    let id = message_id.as_ref();
    let identity = caller.as_deref();
    if shared.config.stateless {
        let transport = auth::transport_info(req, shared, caller.clone());
        return post_stateless(shared, message, header_version, transport, holds).await;
    }
    // One initialize per session, as over stdio: an initialize that names a session is a
    // request of that session (refused there as a second initialize; 404 when it is gone),
    // and only one without `Mcp-Session-Id` opens a session.
    let opens_session = !req.headers().contains_key(SESSION_HEADER);
    match message {
        Incoming::Request(request) if request.method == method::INITIALIZE && opens_session => {
            let owner = identity.map(|identity| Arc::from(identity.owner_key()));
            let session = match open_session(shared, header_version, id, owner) {
                Ok(session) => session,
                Err(response) => return response,
            };
            let transport = auth::transport_info(req, shared, caller.clone());
            let dispatch = request_dispatch(shared, header_version, transport);
            answer(shared, &session, request, true, dispatch, holds).await
        }
        Incoming::Request(request) => match lookup(req, shared, identity, id).await {
            Ok(session) => {
                let transport = auth::transport_info(req, shared, caller.clone());
                let dispatch = request_dispatch(shared, header_version, transport);
                answer(shared, &session, request, false, dispatch, holds).await
            }
            Err(response) => response,
        },
        Incoming::Notification(notification) => {
            if notification.method == method::NOTIFICATION_INITIALIZED
                && identity.is_none()
                && let Some(response) = establish_elsewhere(req, shared).await
            {
                return response;
            }
            match lookup(req, shared, identity, id).await {
                Ok(session) => {
                    session.notification(notification);
                    HttpResponse::Accepted().finish()
                }
                Err(response) => response,
            }
        }
        Incoming::Response(response) => match lookup(req, shared, identity, id).await {
            Ok(session) => {
                session.response(response);
                HttpResponse::Accepted().finish()
            }
            Err(response) => response,
        },
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

/// Opens a session for an `initialize`, bound to `owner` (on a protected endpoint); the 503 or
/// 429 answer when there is no room.
fn open_session(
    shared: &HttpShared,
    header_version: Option<ProtocolVersion>,
    request_id: Option<&RequestId>,
    owner: Option<Arc<str>>,
) -> Result<SessionHandle, HttpResponse> {
    let dispatch = Arc::new(McpDispatch {
        server: shared.server.clone(),
        defaults: RequestDefaults {
            version: header_version,
            stateless: false,
            #[cfg(feature = "otel")]
            network: crate::telemetry::Network::Tcp,
        },
        transport: None,
    });
    let id = SessionId::parse(&uuid::Uuid::new_v4().simple().to_string()).ok_or_else(|| {
        http_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            request_id,
            ErrorCode::INTERNAL_ERROR,
            "could not mint a session id",
        )
    })?;
    let registry = shared.registry();
    registry
        .open(SessionParts {
            id,
            dispatch,
            config: SessionConfig {
                max_in_flight: shared.server.config.max_concurrent_requests,
            },
            standalone: None,
            on_stopped: None,
            owner,
        })
        .map_err(|err| busy(request_id, &err))
}

/// The id of a session opened for an `initialize`, sent back once the initialize succeeded
/// (in a cluster, once its record is stored: refused when the cluster holds
/// [`max_sessions`](super::McpHttp::max_sessions) already, where the store counts them). A
/// failed `initialize` leaves nothing behind: its session is closed at once (its place freed)
/// and its id never handed out.
async fn keep_if_initialized(
    shared: &HttpShared,
    session: &SessionHandle,
) -> Result<Option<SessionId>, Lookup> {
    if session.data::<SessionState>().is_some() {
        let Some(node) = shared.node() else {
            return Ok(Some(session.id().clone()));
        };
        match node.created(session, shared.config.max_sessions).await {
            Ok(()) => return Ok(Some(session.id().clone())),
            Err(err) => {
                shared.registry().close(session.id().as_str());
                return Err(err);
            }
        }
    }
    shared.registry().close(session.id().as_str());
    Ok(None)
}

/// Answers a request on its session: an SSE stream, or one JSON body.
async fn answer(
    shared: &HttpShared,
    session: &SessionHandle,
    request: actix_mcp_actors::Request,
    new: bool,
    dispatch: Option<Arc<dyn actix_mcp_actors::Dispatch>>,
    holds: Holds,
) -> HttpResponse {
    let id = request.id.clone();
    if shared.config.json_response {
        let (outlet, rx) = ResponseOutlet::channel();
        session.request_with(request, outlet, dispatch.as_ref(), holds);
        return match rx.await {
            Ok(frame) => match header_id(shared, session, new, &id).await {
                Ok(header) => json_response(&frame.json, header.as_ref()),
                Err(response) => response,
            },
            Err(_) if !session.is_alive() => http_error(
                StatusCode::NOT_FOUND,
                Some(&id),
                ErrorCode::INVALID_REQUEST,
                "the session ended before the request was answered",
            ),
            // Cancelled by the client. 202 is for notifications and responses only, and the
            // POST of a request must be answered with its JSON-RPC response: the client that
            // cancelled ignores it (as the cancellation spec asks), others learn why.
            Err(_) => {
                let error = ErrorObject::new(code::REQUEST_CANCELLED, "request cancelled");
                json_response(&Frame::error(Some(&id), &error).json, None)
            }
        };
    }
    let log = EventLog::buffered(
        Some(session.clone()),
        session.next_stream(),
        shared.config.retry,
        true,
    );
    session.request_with(request, log.outlet(), dispatch.as_ref(), holds);
    let metrics = shared.registry().metrics_handle();
    match answer::settle(&log, ANSWER_WINDOW, metrics).await {
        Settled::Complete {
            answered: false, ..
        } if !session.is_alive() => http_error(
            StatusCode::NOT_FOUND,
            Some(&id),
            ErrorCode::INVALID_REQUEST,
            "the session ended before the request was answered",
        ),
        Settled::Complete { events, .. } => match header_id(shared, session, new, &id).await {
            Ok(header) => complete_sse_response(shared, events, header.as_ref()),
            Err(response) => response,
        },
        Settled::Stream(receiver) => match header_id(shared, session, new, &id).await {
            Ok(header) => sse_response(shared, receiver, (), header.as_ref()),
            Err(response) => response,
        },
    }
}

/// The `Mcp-Session-Id` to send with the answer of a request: for the `initialize` that
/// opened the session, its id once it is kept; the 503 when a cluster could not store it.
async fn header_id(
    shared: &HttpShared,
    session: &SessionHandle,
    new: bool,
    id: &RequestId,
) -> Result<Option<SessionId>, HttpResponse> {
    if !new {
        return Ok(None);
    }
    keep_if_initialized(shared, session)
        .await
        .map_err(|err| match err {
            Lookup::Refused(err) => busy(Some(id), &err),
            Lookup::Unavailable(err) => store_unavailable(Some(id), &err),
            Lookup::Unknown => http_error(
                StatusCode::NOT_FOUND,
                Some(id),
                ErrorCode::INVALID_REQUEST,
                "the session ended before the request was answered",
            ),
        })
}

async fn post_stateless(
    shared: &HttpShared,
    message: Incoming,
    header_version: Option<ProtocolVersion>,
    transport: Option<Arc<TransportInfo>>,
    holds: Holds,
) -> HttpResponse {
    let request = match message {
        Incoming::Request(request) => request,
        Incoming::Notification(notification)
            if notification.method == method::NOTIFICATION_CANCELLED =>
        {
            return sessionless_cancel();
        }
        Incoming::Notification(notification) => {
            use actix_mcp_actors::Dispatch as _;
            let dispatch = McpDispatch {
                server: shared.server.clone(),
                defaults: RequestDefaults {
                    version: header_version,
                    stateless: false,
                    #[cfg(feature = "otel")]
                    network: crate::telemetry::Network::Tcp,
                },
                transport,
            };
            dispatch.notification(notification, None);
            return HttpResponse::Accepted().finish();
        }
        Incoming::Response(_) => return HttpResponse::Accepted().finish(),
    };
    let version = if request.method == method::INITIALIZE {
        request
            .params
            .as_ref()
            .and_then(|p| p.get("protocolVersion"))
            .and_then(|v| v.as_str())
            .map(|v| shared.server.effective_version(v))
    } else {
        Some(header_version.unwrap_or(ProtocolVersion::V2025_03_26))
    };
    let dispatch = Arc::new(McpDispatch {
        server: shared.server.clone(),
        defaults: RequestDefaults {
            version,
            stateless: false,
            #[cfg(feature = "otel")]
            network: crate::telemetry::Network::Tcp,
        },
        transport,
    });
    let metrics = shared.metrics.clone();
    if shared.config.json_response {
        let id = request.id.clone();
        let (outlet, rx) = ResponseOutlet::channel();
        let _guard = InFlight::start_detached(request, dispatch, outlet, metrics, holds);
        let answered = tokio::select! {
            answered = rx => answered,
            () = shared.drain.cancelling.cancelled() => return drain::cancelled_response(&id),
        };
        return match answered {
            Ok(frame) => json_response(&frame.json, None),
            Err(_) => http_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(&id),
                ErrorCode::INTERNAL_ERROR,
                "the request produced no response",
            ),
        };
    }
    // No session: nothing is resumable, so the answer's events carry no ids and no priming
    // event, and nothing is stored.
    let log = EventLog::buffered(None, 0, shared.config.retry, true);
    let guard = InFlight::start_detached(request, dispatch, log.outlet(), metrics.clone(), holds);
    match answer::settle(&log, ANSWER_WINDOW, &metrics).await {
        Settled::Complete { events, .. } => {
            guard.disarm();
            complete_sse_response(shared, events, None)
        }
        Settled::Stream(receiver) => sse_response(shared, receiver, guard, None),
    }
}

/// The refusal of a `notifications/cancelled` POSTed without a session (stateless mode, or a
/// 2026-07-28 request). Request ids are unique only per client, and nothing ties this POST to
/// the client whose request it names, so honouring it would let one client cancel another's
/// request. Without a session a request is cancelled only through its own connection: closing
/// its answer (the 2026-07-28 rule, applied to stateless mode too).
pub(super) fn sessionless_cancel() -> HttpResponse {
    http_error(
        StatusCode::BAD_REQUEST,
        None,
        ErrorCode::INVALID_REQUEST,
        "notifications/cancelled cannot be matched to a request without a session (request \
         ids are unique only per client); to cancel a request, close its response stream",
    )
}

/// `GET /mcp`: the session's standalone SSE stream, or a resumed stream after `Last-Event-ID`.
pub(super) async fn get(req: HttpRequest, shared: web::Data<HttpShared>) -> HttpResponse {
    if let Err(response) = check_host(&req, &shared) {
        return response;
    }
    if shared.drain.is_draining() {
        return drain::draining_response(None);
    }
    let caller = match auth::authenticate(&req, &shared, None).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    if let Err(response) = auth::authorize(&shared, caller.as_deref(), None, "", None) {
        return response;
    }
    if stateless_header(&req) {
        return not_allowed_in_stateless();
    }
    if let Err(response) = stateful_version(&req, None) {
        return response;
    }
    if shared.config.stateless {
        return not_allowed_in_stateless();
    }
    if !accepts(&req, "text/event-stream") {
        return http_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorCode::INVALID_REQUEST,
            "the Accept header must list text/event-stream",
        );
    }
    let session = match lookup(&req, &shared, caller.as_deref(), None).await {
        Ok(session) => session,
        Err(response) => return response,
    };
    if let Some(last) = header_str(&req, "last-event-id") {
        let Ok(last) = last.parse::<EventId>() else {
            return http_error(
                StatusCode::BAD_REQUEST,
                None,
                ErrorCode::INVALID_REQUEST,
                "malformed Last-Event-ID",
            );
        };
        match session.resume(last, shared.config.retry).await {
            Ok(Resumed::Stream(receiver)) => return sse_response(&shared, receiver, (), None),
            Ok(Resumed::Evicted) => {
                return http_error(
                    StatusCode::GONE,
                    None,
                    ErrorCode::INVALID_REQUEST,
                    "the events after Last-Event-ID are no longer kept (the server's event \
                     budget evicted them); they cannot be replayed",
                );
            }
            Ok(Resumed::Unknown) => {
                tracing::debug!(session = %session.id(), %last, "unknown stream to resume; opening a new standalone stream")
            }
            Err(_) => {
                return http_error(
                    StatusCode::NOT_FOUND,
                    None,
                    ErrorCode::INVALID_REQUEST,
                    "the session ended",
                );
            }
        }
    }
    match session.open_standalone(shared.config.retry).await {
        Ok(receiver) => sse_response(&shared, receiver, (), None),
        Err(_) => http_error(
            StatusCode::NOT_FOUND,
            None,
            ErrorCode::INVALID_REQUEST,
            "the session ended",
        ),
    }
}

/// `DELETE /mcp`: ends the session.
pub(super) async fn delete(req: HttpRequest, shared: web::Data<HttpShared>) -> HttpResponse {
    if let Err(response) = check_host(&req, &shared) {
        return response;
    }
    let caller = match auth::authenticate(&req, &shared, None).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    if let Err(response) = auth::authorize(&shared, caller.as_deref(), None, "", None) {
        return response;
    }
    if stateless_header(&req) {
        return not_allowed_in_stateless();
    }
    if let Err(response) = stateful_version(&req, None) {
        return response;
    }
    if shared.config.stateless {
        return not_allowed_in_stateless();
    }
    let id = match session_id(&req, None) {
        Ok(id) => id,
        Err(response) => return response,
    };
    if let Some(node) = shared.node() {
        // Its owner checked (on the local actor when this node holds one, else on the record
        // in the store), then ended on every node; the store says whether it was still live.
        let local = shared.registry().get(id);
        let session = match local {
            Some(session) if auth::owns(&session, caller.as_deref()) => session,
            _ => match lookup(&req, &shared, caller.as_deref(), None).await {
                Ok(session) => session,
                Err(response) => return response,
            },
        };
        return match node.delete(shared.registry(), session.id()).await {
            Ok(true) => HttpResponse::Ok().finish(),
            Ok(false) => http_error(
                StatusCode::NOT_FOUND,
                None,
                ErrorCode::INVALID_REQUEST,
                "unknown or expired session",
            ),
            Err(err) => store_unavailable(None, &err),
        };
    }
    let owned = caller.is_none()
        || shared
            .registry()
            .get(id)
            .is_some_and(|session| auth::owns(&session, caller.as_deref()));
    if owned && shared.registry().close(id) {
        HttpResponse::Ok().finish()
    } else {
        http_error(
            StatusCode::NOT_FOUND,
            None,
            ErrorCode::INVALID_REQUEST,
            "unknown or expired session",
        )
    }
}

/// Whether the request names a stateless revision (2026-07-28 has only POST).
fn stateless_header(req: &HttpRequest) -> bool {
    header_str(req, PROTOCOL_VERSION_HEADER)
        .and_then(|v| v.trim().parse::<ProtocolVersion>().ok())
        .is_some_and(ProtocolVersion::is_stateless)
}

fn not_allowed_in_stateless() -> HttpResponse {
    let mut response = http_error(
        StatusCode::METHOD_NOT_ALLOWED,
        None,
        ErrorCode::INVALID_REQUEST,
        "this server is stateless: only POST is served",
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

/// Any other method: 405.
pub(super) async fn not_allowed(req: HttpRequest) -> HttpResponse<BoxBody> {
    let mut response = http_error(
        StatusCode::METHOD_NOT_ALLOWED,
        None,
        ErrorCode::INVALID_REQUEST,
        format!("method {} is not allowed on the MCP endpoint", req.method()),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    response
}
