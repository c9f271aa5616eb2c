//! The answers every handler of the endpoint shares: refusals with a JSON-RPC error body (the
//! status the spec names for each), JSON and SSE answers, and the status of a 2026-07-28 error.

// Early-return helpers hand back the finished error response; it is built once and returned.
#![allow(clippy::result_large_err)]

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{ConnectionType, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};

use actix_mcp_actors::{
    ErrorCode, ErrorObject, OpenError, RequestId, SessionId, StoreError,
    dev::{Frame, SseEvent, StreamReceiver},
};

use super::HttpShared;
use super::sse::{self, SseBody};
use crate::error::code;

/// An HTTP refusal with a JSON-RPC error body. The body always has an `id` member: the
/// request's id once the body was read and held a request, `null` before (or for a
/// notification or a response).
pub(super) fn http_error(
    status: StatusCode,
    id: Option<&RequestId>,
    code: ErrorCode,
    message: impl Into<String>,
) -> HttpResponse {
    error_response(status, id, &ErrorObject::new(code, message))
}

pub(super) fn header_str(req: &HttpRequest, name: impl header::AsHeaderName) -> Option<&str> {
    req.headers().get(name).and_then(super::headers::ascii_str)
}

/// The `Content-Type` of a JSON answer: static, so that no answer copies it (a `&str` given
/// as a header value is checked and copied each time).
pub(super) const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");

/// The headers of every SSE answer: its media type, and no compression (a compressing
/// middleware would hold a stream's events back).
fn sse_headers(builder: &mut actix_web::HttpResponseBuilder, session: Option<&SessionId>) {
    // Static names and values (each name checked once, when compiled): none of them is copied
    // or checked per response.
    builder
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        ))
        .insert_header((
            header::CONTENT_ENCODING,
            HeaderValue::from_static("identity"),
        ));
    session_header(builder, session);
}

/// The headers of an SSE answer that streams: those of every SSE answer, and neither a cache
/// nor a buffering proxy (nginx's `X-Accel-Buffering`) may hold its events back. An answer
/// that is whole when sent goes without them: nothing waits for more of it.
fn sse_stream_headers(builder: &mut actix_web::HttpResponseBuilder, session: Option<&SessionId>) {
    sse_headers(builder, session);
    builder
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
        .insert_header((
            super::headers::X_ACCEL_BUFFERING,
            HeaderValue::from_static("no"),
        ));
}

/// `Mcp-Session-Id`, on the answer of the `initialize` that opened the session.
fn session_header(builder: &mut actix_web::HttpResponseBuilder, session: Option<&SessionId>) {
    if let Some(id) = session {
        builder.insert_header((super::headers::SESSION, id.as_str()));
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
    sse_stream_headers(&mut builder, session);
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

pub(super) fn json_response(json: &str, session: Option<&SessionId>) -> HttpResponse {
    let mut builder = HttpResponse::Ok();
    builder.content_type(APPLICATION_JSON);
    session_header(&mut builder, session);
    builder.body(json.to_owned())
}

/// The 503 of a request that needs the cluster's session store while it fails.
pub(super) fn store_unavailable(id: Option<&RequestId>, err: &StoreError) -> HttpResponse {
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

/// The 503 (or 429 for a principal's own cap) of a session that cannot be opened here.
pub(super) fn busy(request_id: Option<&RequestId>, err: &OpenError) -> HttpResponse {
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

/// A refusal sent before the whole body was read, after which the connection closes: what is
/// left of the body is never read. (actix-web would otherwise drain a chunked body whose
/// reader went away, for as long as the client keeps sending it; it closes the connection
/// instead when the body's reader is still alive as the answer goes out, so the answer keeps
/// it until it is written.)
pub(super) fn close_unread(response: HttpResponse, payload: web::Payload) -> HttpResponse {
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

/// The 408 answer to a body that did not arrive in time.
pub(super) fn body_timed_out(limit: std::time::Duration) -> HttpResponse {
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

/// The refusal of a `notifications/cancelled` POSTed without a session (stateless mode) on an
/// endpoint without bearer auth. Request ids are unique only per client, and without
/// authentication nothing ties this POST to the client whose request it names, so honouring it
/// would let one client cancel another's request. The request is cancelled by closing its
/// answer; with bearer auth, its caller's notification cancels it too.
pub(super) fn sessionless_cancel() -> HttpResponse {
    http_error(
        StatusCode::BAD_REQUEST,
        None,
        ErrorCode::INVALID_REQUEST,
        "notifications/cancelled without a session requires authentication: this endpoint has \
         no bearer auth, so nothing ties the notification to the client whose request it names \
         (request ids are unique only per client); to cancel a request, close its response \
         stream",
    )
}

/// The refusal of a 2026-07-28 `notifications/cancelled` POSTed over HTTP: that revision
/// defines no client notification over Streamable HTTP, where closing a request's response
/// stream is its cancellation.
pub(super) fn v2026_cancel() -> HttpResponse {
    http_error(
        StatusCode::BAD_REQUEST,
        None,
        ErrorCode::INVALID_REQUEST,
        "protocol 2026-07-28 has no notifications/cancelled over HTTP: to cancel a request, \
         close its response stream",
    )
}

pub(super) fn not_allowed_in_stateless() -> HttpResponse {
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
pub(super) fn not_allowed(req: &HttpRequest) -> HttpResponse<BoxBody> {
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

/// The HTTP status of an error answer: 400 for envelope and header failures, 404 for unknown
/// or removed methods, 200 (a JSON-RPC error in a normal answer) otherwise.
pub(super) fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        code::HEADER_MISMATCH
        | code::MISSING_REQUIRED_CLIENT_CAPABILITY
        | code::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

pub(super) fn error_response(
    status: StatusCode,
    id: Option<&actix_mcp_actors::RequestId>,
    error: &ErrorObject,
) -> HttpResponse {
    let frame = Frame::error(id, error);
    HttpResponse::build(status)
        .content_type(APPLICATION_JSON)
        .body(frame.json.to_string())
}

/// The error code of a response frame, read without building it (`None` for a result).
pub(super) fn error_code(json: &str) -> Option<i32> {
    // The frames of this crate begin `{"jsonrpc":"2.0","id":`, then the id, then `,"result":`
    // or `,"error":` (see `Frame`): a result is told so after its id, without a scan.
    if json
        .strip_prefix(r#"{"jsonrpc":"2.0","id":"#)
        .and_then(after_id)
        .is_some_and(|rest| rest.starts_with(r#","result":"#))
    {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i32,
    }
    #[derive(serde::Deserialize)]
    struct Probe {
        error: Option<Code>,
    }
    serde_json::from_str::<Probe>(json)
        .ok()?
        .error
        .map(|e| e.code)
}

/// What follows the JSON-RPC id at the start of `text`: a string (its escapes skipped) or a
/// number. `None` for anything else (`null`, an unterminated string).
fn after_id(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    if bytes.first() == Some(&b'"') {
        let mut at = 1;
        while let Some(&byte) = bytes.get(at) {
            match byte {
                b'\\' => at += 2,
                // An ASCII quote: the slice after it starts on a character boundary.
                b'"' => return text.get(at + 1..),
                _ => at += 1,
            }
        }
        return None;
    }
    let end = bytes
        .iter()
        .position(|b| !(b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')))?;
    (end > 0).then(|| text.get(end..)).flatten()
}

/// A JSON answer, with the status of its error code when it is an error.
pub(super) fn frame_response(json: &str) -> HttpResponse {
    let status = error_code(json).map_or(StatusCode::OK, |c| status_of(ErrorCode(c)));
    HttpResponse::build(status)
        .content_type(APPLICATION_JSON)
        .body(json.to_owned())
}

#[cfg(test)]
mod tests {
    use super::error_code;

    #[test]
    fn an_error_code_is_read_only_from_the_top_level() {
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), None);
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":1,"result":{"a":1,"error":{"code":5}}}"#),
            None
        );
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#),
            Some(-32602)
        );
        // An id that looks like a member (its quotes are escaped) does not fool it.
        assert_eq!(
            error_code(
                r#"{"jsonrpc":"2.0","id":"x\",\"result\":","error":{"code":-32601,"message":"m"}}"#
            ),
            Some(-32601)
        );
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":"x\",\"error\":","result":{}}"#),
            None
        );
        // Ids of every shape, before a result or an error.
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#), None);
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":"é\\","result":1}"#),
            None
        );
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}"#),
            Some(-32700)
        );
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":"é","error":{"code":-32001,"message":"m"}}"#),
            Some(-32001)
        );
        // Text that is not a frame of ours is read whole.
        assert_eq!(
            error_code(r#"{"error":{"code":-1,"message":"m"},"jsonrpc":"2.0","id":1}"#),
            Some(-1)
        );
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":"unterminated"#), None);
    }
}
