//! Messages of a 2025-11-25 (or older) session over Streamable HTTP: the `initialize` that
//! opens one, its requests (answered on an SSE stream or as one JSON body), notifications and
//! answers, its standalone GET stream (and resumption with `Last-Event-ID`), and its DELETE.
//! In a cluster, a session held by another node is served here from the shared store.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management>

// Early-return helpers hand back the finished error response; it is built once and returned.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};

use actix_mcp_actors::{
    ErrorCode, ErrorObject, EventId, RequestId, SessionHandle, SessionId,
    dev::{
        EventLog, Frame, Holds, Incoming, ResponseOutlet, Resumed, SessionConfig, SessionParts,
        Settled,
    },
};

use super::HttpShared;
use super::answer::{self, ANSWER_WINDOW};
use super::auth;
use super::drain;
use super::headers::{
    LAST_EVENT_ID, SESSION, VersionHeader, accepted, check_host, stateful_version_of,
};
use super::respond::{
    busy, complete_sse_response, header_str, http_error, json_response, not_allowed_in_stateless,
    sse_response, store_unavailable,
};
use crate::cluster::Lookup;
use crate::error::code;
use crate::protocol::{ProtocolVersion, method};
use crate::server::auth::Identity;
use crate::server::context::TransportInfo;
use crate::server::origin::{Arrival, Origin};
use crate::server::session::SessionState;

fn session_id<'a>(req: &'a HttpRequest, id: Option<&RequestId>) -> Result<&'a str, HttpResponse> {
    header_str(req, &SESSION)
        .map(str::trim_ascii)
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
    // Boxed: the store's future is large, and only a cluster pays for it.
    let found = Box::pin(node.session(
        shared.registry(),
        &shared.server,
        &shared.dispatch(),
        &session_id,
    ))
    .await;
    match found {
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
    let session = header_str(req, &SESSION)?;
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
    Some(match Box::pin(node.establish(&id)).await {
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
/// Opens a session for an `initialize`, bound to `owner` (on a protected endpoint); the 503 or
/// 429 answer when there is no room.
fn open_session(
    shared: &HttpShared,
    request_id: Option<&RequestId>,
    owner: Option<Arc<str>>,
) -> Result<SessionHandle, HttpResponse> {
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
            dispatch: shared.dispatch(),
            config: SessionConfig {
                max_in_flight: shared.server.config.max_concurrent_requests,
            },
            standalone: None,
            on_stopped: None,
            owner,
        })
        .map_err(|err| busy(request_id, &err))
}
/// A message of a session (or the `initialize` that opens one), past the door: one
/// `initialize` per session, as over stdio (an `initialize` that names a session is a request
/// of that session, refused there as a second `initialize`; 404 when it is gone), and only one
/// without `Mcp-Session-Id` opens a session.
pub(super) async fn post(
    req: &HttpRequest,
    shared: &HttpShared,
    message: Incoming,
    caller: Option<Arc<Identity>>,
    transport: Option<Arc<TransportInfo>>,
    holds: Holds,
) -> HttpResponse {
    let message_id = match &message {
        Incoming::Request(request) => Some(request.id.clone()),
        _ => None,
    };
    let id = message_id.as_ref();
    let identity = caller.as_deref();
    let opens_session = !req.headers().contains_key(&SESSION);
    let carry = || {
        Arrival::of(Origin::Session)
            .with_transport(transport.clone())
            .carry()
            .holding(holds.clone())
    };
    match message {
        Incoming::Request(request) if request.method == method::INITIALIZE && opens_session => {
            let owner = identity.map(|identity| Arc::from(identity.owner_key()));
            let session = match open_session(shared, id, owner) {
                Ok(session) => session,
                Err(response) => return response,
            };
            answer(shared, &session, request, true, carry()).await
        }
        Incoming::Request(request) => {
            // Bound first: a scrutinee's temporaries would live on across the answer's await.
            let found = lookup(req, shared, identity, id).await;
            match found {
                Ok(session) => answer(shared, &session, request, false, carry()).await,
                Err(response) => response,
            }
        }
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

/// The id of a session opened for an `initialize`, sent back once the initialize succeeded
/// (in a cluster, once its record is stored: refused when the cluster holds
/// [`max_sessions`](super::McpHttpBuilder::max_sessions) already, where the store counts them). A
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
        // Boxed: the store's future is large, and only a cluster pays for it.
        match Box::pin(node.created(session, shared.config.max_sessions)).await {
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
/// Answers a request on its session: an SSE stream, or one JSON body. Boxed, as
/// [`sessionless::answer`](super::sessionless::answer) is.
fn answer<'a>(
    shared: &'a HttpShared,
    session: &'a SessionHandle,
    request: actix_mcp_actors::dev::Request,
    new: bool,
    carry: actix_mcp_actors::dev::Carry,
) -> futures::future::LocalBoxFuture<'a, HttpResponse> {
    Box::pin(answer_request(shared, session, request, new, carry))
}

/// [`answer`], unboxed.
async fn answer_request(
    shared: &HttpShared,
    session: &SessionHandle,
    request: actix_mcp_actors::dev::Request,
    new: bool,
    carry: actix_mcp_actors::dev::Carry,
) -> HttpResponse {
    let id = request.id.clone();
    if shared.config.json_response {
        let (outlet, rx) = ResponseOutlet::channel();
        session.request_with(request, outlet, carry);
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
    session.request_with(request, log.outlet(), carry);
    let metrics = shared.registry().metrics_handle();
    let settled = answer::settle(&log, ANSWER_WINDOW, metrics).await;
    match settled {
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
/// What GET and DELETE check after Host (and, for GET, the drain): the caller's credentials
/// and scopes, then that the request is one of a 2025-11-25 session (a repeated or non-ASCII
/// `MCP-Protocol-Version`, a 2026-07-28 one, an unsupported version and a stateless endpoint
/// are refused; the header is read once). The authenticated caller.
async fn session_caller(
    req: &HttpRequest,
    shared: &HttpShared,
) -> Result<Option<Arc<Identity>>, HttpResponse> {
    let caller = auth::authenticate(req, shared, None).await?;
    auth::authorize(shared, caller.as_deref(), None, "", None)?;
    let version = VersionHeader::of(req).checked(None)?;
    // Revision 2026-07-28 has no sessions: these methods are not there (405).
    if version
        .and_then(|v| v.parse::<ProtocolVersion>().ok())
        .is_some_and(|v| !v.has_handshake())
    {
        return Err(not_allowed_in_stateless());
    }
    stateful_version_of(req, version, None)?;
    if shared.config.stateless {
        return Err(not_allowed_in_stateless());
    }
    Ok(caller)
}

/// `GET /mcp`: the session's standalone SSE stream, or a resumed stream after `Last-Event-ID`.
pub(super) async fn get(req: HttpRequest, shared: web::Data<HttpShared>) -> HttpResponse {
    if let Err(response) = check_host(&req, &shared) {
        return response;
    }
    if shared.drain.is_draining() {
        return drain::draining_response(None);
    }
    let caller = match session_caller(&req, &shared).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    if !accepted(&req).event_stream {
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
    if let Some(last) = header_str(&req, &LAST_EVENT_ID) {
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
    let caller = match session_caller(&req, &shared).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
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
