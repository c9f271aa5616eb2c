//! POSTs of the stateless revision (2026-07-28) on the same endpoint as the sessions of older
//! ones: which era a POST belongs to, the checks of its envelope and headers (with the HTTP
//! status the spec gives each failure), and its answer (one JSON body or an SSE stream scoped to
//! the request, never resumable).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>

// Early-return helpers hand back the finished error response; it is built once and returned.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use base64::Engine as _;
use serde_json::Value;

use actix_mcp_actors::{
    Dispatch as _, ErrorCode, ErrorObject, EventLog, Frame, Holds, InFlight, Incoming, Request,
    ResponseOutlet, Settled,
};

use super::HttpShared;
use super::answer::{self, ANSWER_WINDOW};
use super::auth;
use super::budget::Reservation;
use super::handlers::{complete_sse_response, sse_response};
use crate::error::code;
use crate::protocol::modern::{header_mismatch, unsupported_version};
use crate::protocol::{ProtocolVersion, RequestMeta, method};
use crate::server::auth::Identity;
use crate::server::route::{McpDispatch, RequestDefaults};
use crate::server::tool::ParamHeader;

/// The `Mcp-Method` header.
pub const METHOD_HEADER: &str = "mcp-method";
/// The `Mcp-Name` header.
pub const NAME_HEADER: &str = "mcp-name";
/// The prefix of the headers mirroring `x-mcp-header` tool arguments.
pub const PARAM_HEADER_PREFIX: &str = "mcp-param-";

/// Whether a POST belongs to the stateless revision: its `MCP-Protocol-Version` header names a
/// stateless or unknown revision, its `_meta` names a version, or its method exists only in
/// 2026-07-28. Anything else is served with sessions, as before.
pub(super) fn is_stateless(message: &Incoming, header: Option<&str>) -> bool {
    let header_stateless = header.is_some_and(|h| {
        h.parse::<ProtocolVersion>()
            .map_or(true, ProtocolVersion::is_stateless)
    });
    header_stateless
        || match message {
            Incoming::Request(request) => {
                RequestMeta::version_of(request.params.as_ref()).is_some()
                    || method::ADDED_IN_2026.contains(&request.method.as_str())
            }
            Incoming::Notification(notification) => {
                RequestMeta::version_of(notification.params.as_ref()).is_some()
            }
            Incoming::Response(_) => false,
        }
}

/// The HTTP status of an error answer: 400 for envelope and header failures, 404 for unknown
/// or removed methods, 200 (a JSON-RPC error in a normal answer) otherwise.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        code::HEADER_MISMATCH
        | code::MISSING_REQUIRED_CLIENT_CAPABILITY
        | code::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

fn error_response(
    status: StatusCode,
    id: Option<&actix_mcp_actors::RequestId>,
    error: &ErrorObject,
) -> HttpResponse {
    let frame = Frame::error(id, error);
    HttpResponse::build(status)
        .content_type("application/json")
        .body(frame.json.to_string())
}

/// A header's value with optional whitespace trimmed; `Err` when it is not visible ASCII or
/// appears more than once (a mirrored header has one value: a second could disagree with the
/// body while the first agrees).
fn header_value<'a>(req: &'a HttpRequest, name: &str) -> Result<Option<&'a str>, ErrorObject> {
    let mut values = req.headers().get_all(name);
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(header_mismatch(format!(
            "the {name} header appears more than once"
        )));
    }
    value
        .to_str()
        .map(|v| Some(v.trim_matches(|c| c == ' ' || c == '\t')))
        .map_err(|_| header_mismatch(format!("the {name} header is not visible ASCII")))
}

/// Decodes a header value: `=?base64?<standard base64 of UTF-8>?=` (strict: padding and
/// alphabet checked), or the literal value.
pub(crate) fn decode_header_value(value: &str) -> Result<String, String> {
    let Some(inner) = value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Ok(value.to_owned());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .map_err(|err| format!("invalid base64: {err}"))?;
    String::from_utf8(bytes).map_err(|_| "the base64 value is not UTF-8".to_owned())
}

/// The body value `Mcp-Name` must mirror.
fn name_in_body(request: &Request) -> Option<&str> {
    let params = request.params.as_ref()?;
    let key = match request.method.as_str() {
        method::TOOLS_CALL | method::PROMPTS_GET => "name",
        method::RESOURCES_READ => "uri",
        method::TASKS_GET | method::TASKS_UPDATE | method::TASKS_CANCEL => "taskId",
        _ => return None,
    };
    params.get(key)?.as_str()
}

/// Checks `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers against the body.
fn check_headers(
    req: &HttpRequest,
    shared: &HttpShared,
    request: &Request,
) -> Result<(), ErrorObject> {
    match header_value(req, METHOD_HEADER)? {
        Some(value) if value == request.method => {}
        Some(value) => {
            return Err(header_mismatch(format!(
                "the Mcp-Method header ({value:?}) does not match the body's method ({:?})",
                request.method
            )));
        }
        None => return Err(header_mismatch("the Mcp-Method header is required")),
    }
    let header_name = header_value(req, NAME_HEADER)?;
    match (name_in_body(request), header_name) {
        (Some(body), Some(header)) => {
            let decoded = decode_header_value(header).map_err(|err| {
                header_mismatch(format!("the Mcp-Name header is malformed: {err}"))
            })?;
            if decoded != body {
                return Err(header_mismatch(format!(
                    "the Mcp-Name header ({decoded:?}) does not match the body ({body:?})"
                )));
            }
        }
        (Some(_), None) => {
            return Err(header_mismatch(format!(
                "the Mcp-Name header is required on {}",
                request.method
            )));
        }
        (None, _) => {}
    }
    if request.method == method::TOOLS_CALL
        && let Some(name) = name_in_body(request)
        && let Some(def) = shared.server.catalog().tools.get(name)
    {
        let arguments = request.params.as_ref().and_then(|p| p.get("arguments"));
        for param in &def.param_headers {
            check_param_header(req, param, param.value(arguments))?;
        }
    }
    Ok(())
}

/// Checks one `Mcp-Param-{Name}` header against its argument.
fn check_param_header(
    req: &HttpRequest,
    param: &ParamHeader,
    body: Option<&Value>,
) -> Result<(), ErrorObject> {
    let header_name = format!("{PARAM_HEADER_PREFIX}{}", param.header);
    let header = header_value(req, &header_name)?;
    let body = body.filter(|v| !v.is_null());
    let (header, body) = match (header, body) {
        (None, None) => return Ok(()),
        (Some(_), None) => {
            return Err(header_mismatch(format!(
                "the Mcp-Param-{} header is set but argument `{}` is absent",
                param.header, param.property
            )));
        }
        (None, Some(_)) => {
            return Err(header_mismatch(format!(
                "the Mcp-Param-{} header is required: argument `{}` is present",
                param.header, param.property
            )));
        }
        (Some(header), Some(body)) => (header, body),
    };
    let decoded = decode_header_value(header).map_err(|err| {
        header_mismatch(format!(
            "the Mcp-Param-{} header is malformed: {err}",
            param.header
        ))
    })?;
    let matches = match body {
        Value::String(s) => decoded == *s,
        Value::Bool(b) => decoded == if *b { "true" } else { "false" },
        Value::Number(n) => match (n.as_i64(), decoded.parse::<i64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => n.as_f64().is_some_and(|a| decoded.parse::<f64>() == Ok(a)),
        },
        _ => false,
    };
    if matches {
        Ok(())
    } else {
        Err(header_mismatch(format!(
            "the Mcp-Param-{} header ({decoded:?}) does not match argument `{}`",
            param.header, param.property
        )))
    }
}

/// Checks a stateless request's version header, envelope and headers; the error answer
/// otherwise.
fn check(
    req: &HttpRequest,
    shared: &HttpShared,
    request: &Request,
    header_version: Option<&str>,
) -> Result<(), HttpResponse> {
    let id = Some(&request.id);
    let bad = |error: ErrorObject| error_response(StatusCode::BAD_REQUEST, id, &error);
    if let Some(meta_version) = RequestMeta::version_of(request.params.as_ref()) {
        match header_version {
            Some(header) if header == meta_version => {}
            Some(header) => {
                return Err(bad(header_mismatch(format!(
                    "the MCP-Protocol-Version header ({header:?}) does not match \
                     _meta's protocol version ({meta_version:?})"
                ))));
            }
            None => {
                return Err(bad(header_mismatch(
                    "the MCP-Protocol-Version header is required",
                )));
            }
        }
    }
    if RequestMeta::version_of(request.params.as_ref()).is_none()
        && let Some(header) = header_version
        && header.parse::<ProtocolVersion>().is_err()
    {
        // Neither era: the header names a revision this server does not know.
        return Err(bad(unsupported_version(header)));
    }
    // The whole envelope, inner shapes included: a malformed one is a 400 as a missing one.
    if let Err(error) = RequestMeta::parse(request.params.as_ref()) {
        return Err(bad(error));
    }
    if method::REMOVED_IN_2026.contains(&request.method.as_str()) {
        let error = ErrorObject::method_not_found(&format!(
            "{} (removed in protocol 2026-07-28)",
            request.method
        ));
        return Err(error_response(StatusCode::NOT_FOUND, id, &error));
    }
    check_headers(req, shared, request).map_err(bad)
}

/// Answers a stateless POST; `caller` is who sent it (on a protected endpoint).
pub(super) async fn post(
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
            if notification.method == method::NOTIFICATION_CANCELLED {
                return super::handlers::sessionless_cancel();
            }
            let dispatch = dispatch(req, shared, caller);
            dispatch.notification(notification, None);
            return HttpResponse::Accepted().finish();
        }
        Incoming::Response(response) => {
            let error = ErrorObject::invalid_request(
                "protocol 2026-07-28 has no server-to-client requests to answer",
            );
            return error_response(StatusCode::BAD_REQUEST, Some(&response.id), &error);
        }
    };
    if let Err(response) = check(req, shared, &request, header_version) {
        return response;
    }
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
    let permit = match super::handlers::admission_permit(shared, caller.as_deref(), &request).await
    {
        Ok(permit) => permit,
        Err(response) => return response,
    };
    let holds = Holds::new(super::handlers::Held {
        _permit: permit,
        _reservation: reservation,
    });
    answer(req, shared, request, caller, holds).await
}

/// Answers an admitted stateless request.
async fn answer(
    req: &HttpRequest,
    shared: &HttpShared,
    request: Request,
    caller: Option<Arc<Identity>>,
    holds: Holds,
) -> HttpResponse {
    let dispatch = dispatch(req, shared, caller);
    let metrics = shared.metrics.clone();
    // A listen request is a stream by nature: it is answered as one in JSON-response mode too.
    if shared.config.json_response && request.method != method::SUBSCRIPTIONS_LISTEN {
        let id = request.id.clone();
        let (outlet, rx) = ResponseOutlet::channel();
        let _guard = InFlight::start_detached(request, dispatch, outlet, metrics, holds);
        let answered = tokio::select! {
            answered = rx => answered,
            () = shared.drain.cancelling.cancelled() => {
                return super::drain::cancelled_response(&id);
            }
        };
        return match answered {
            Ok(frame) => frame_response(&frame.json),
            Err(_) => super::handlers::http_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(&id),
                ErrorCode::INTERNAL_ERROR,
                "the request produced no response",
            ),
        };
    }
    // Not resumable: no ids, no priming event, nothing stored.
    let log = EventLog::buffered(None, 0, shared.config.retry, true);
    let guard = InFlight::start_detached(request, dispatch, log.outlet(), metrics.clone(), holds);
    match answer::settle(&log, ANSWER_WINDOW, &metrics).await {
        Settled::Complete { events, .. } => {
            guard.disarm();
            // A lone error answer takes the status its code calls for, as a JSON body.
            if let [event] = events.as_slice()
                && event.data.contains("\"error\"")
            {
                return frame_response(&event.data);
            }
            complete_sse_response(shared, events, None)
        }
        Settled::Stream(receiver) => sse_response(shared, receiver, guard, None),
    }
}

/// The dispatch of one stateless message, with what the transport hands its handlers.
fn dispatch(
    req: &HttpRequest,
    shared: &HttpShared,
    caller: Option<Arc<Identity>>,
) -> Arc<McpDispatch> {
    Arc::new(McpDispatch {
        server: shared.server.clone(),
        defaults: RequestDefaults {
            version: None,
            stateless: true,
            #[cfg(feature = "otel")]
            network: crate::telemetry::Network::Tcp,
        },
        transport: auth::transport_info(req, shared, caller),
    })
}

/// The error code of a response frame, read without building it (`None` for a result).
fn error_code(json: &str) -> Option<i32> {
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

/// A JSON answer, with the status of its error code when it is an error.
fn frame_response(json: &str) -> HttpResponse {
    let status = error_code(json).map_or(StatusCode::OK, |c| status_of(ErrorCode(c)));
    HttpResponse::build(status)
        .content_type("application/json")
        .body(json.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_base64_strictly_and_literals_as_they_are() {
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=?="),
            Ok("Hello".into())
        );
        assert!(decode_header_value("=?base64?SGVsbG8?=").is_err());
        assert!(decode_header_value("=?base64?SGVs!!!bG8=?=").is_err());
        assert_eq!(decode_header_value("SGVsbG8="), Ok("SGVsbG8=".into()));
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8="),
            Ok("=?base64?SGVsbG8=".into())
        );
    }

    #[test]
    fn statuses_follow_the_spec() {
        assert_eq!(status_of(code::HEADER_MISMATCH), StatusCode::BAD_REQUEST);
        assert_eq!(
            status_of(code::UNSUPPORTED_PROTOCOL_VERSION),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status_of(ErrorCode::METHOD_NOT_FOUND),
            StatusCode::NOT_FOUND
        );
        assert_eq!(status_of(ErrorCode::INVALID_PARAMS), StatusCode::OK);
    }
}
