//! The door of a POST of revision 2026-07-28 (on the same endpoint as the sessions of older
//! revisions): which era a POST belongs to, and the checks of its envelope and mirrored
//! headers, with the HTTP status the spec gives each failure. A POST past them is answered as
//! any request without a session ([`super::sessionless`]).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>

// Early-return helpers hand back the finished error response; it is built once and returned.
#![allow(clippy::result_large_err)]

use std::borrow::Cow;

use actix_web::HttpRequest;
use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::AsHeaderName;
use base64::Engine as _;
use serde_json::Value;

use actix_mcp_actors::{
    ErrorCode, ErrorObject,
    dev::{Incoming, Request},
};

use super::HttpShared;
use super::headers::{METHOD, NAME};
use super::respond::error_response;
use crate::protocol::v2026::{header_mismatch, unsupported_version};
use crate::protocol::{ProtocolVersion, RequestMeta, member, method};
use crate::server::origin::{Envelope, Origin};
use crate::server::tool::ParamHeader;

/// The `Mcp-Method` header.
pub const METHOD_HEADER: &str = "mcp-method";
/// The `Mcp-Name` header.
pub const NAME_HEADER: &str = "mcp-name";
/// The prefix of the headers mirroring `x-mcp-header` tool arguments.
pub const PARAM_HEADER_PREFIX: &str = "mcp-param-";

/// Whether a POST is of revision 2026-07-28: its `MCP-Protocol-Version` header names that
/// revision or an unknown one, its `_meta` names a version, or its method exists only in
/// 2026-07-28. Anything else is of the session era (2025-11-25 and older), as before.
pub(super) fn is_v2026(message: &Incoming, header: Option<&str>) -> bool {
    header_is_v2026(header)
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

/// Whether an `MCP-Protocol-Version` header makes a POST one of revision 2026-07-28 (it names
/// that revision or an unknown one): its body is parsed with `_meta` kept as text.
pub(super) fn header_is_v2026(header: Option<&str>) -> bool {
    header.is_some_and(|h| {
        h.parse::<ProtocolVersion>()
            .map_or(true, |v| !v.has_handshake())
    })
}

/// A header's value with optional whitespace trimmed; `Err` when it is not visible ASCII or
/// appears more than once (a mirrored header has one value: a second could disagree with the
/// body while the first agrees).
fn header_value(
    req: &HttpRequest,
    name: impl AsHeaderName + Copy + std::fmt::Display,
) -> Result<Option<&str>, ErrorObject> {
    let mut values = req.headers().get_all(name);
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(header_mismatch(format!(
            "the {name} header appears more than once"
        )));
    }
    super::headers::ascii_str(value)
        .map(|v| Some(v.trim_ascii()))
        .ok_or_else(|| header_mismatch(format!("the {name} header is not visible ASCII")))
}

/// Decodes a header value: `=?base64?<standard base64 of UTF-8>?=` (strict: padding and
/// alphabet checked), or the literal value (borrowed).
pub(crate) fn decode_header_value(value: &str) -> Result<Cow<'_, str>, String> {
    let Some(inner) = value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Ok(Cow::Borrowed(value));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .map_err(|err| format!("invalid base64: {err}"))?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| "the base64 value is not UTF-8".to_owned())
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
    member(params, key)?.as_str()
}

/// Checks `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers against the body.
fn check_headers(
    req: &HttpRequest,
    shared: &HttpShared,
    request: &Request,
) -> Result<(), ErrorObject> {
    match header_value(req, &METHOD)? {
        Some(value) if value == request.method => {}
        Some(value) => {
            return Err(header_mismatch(format!(
                "the Mcp-Method header ({value:?}) does not match the body's method ({:?})",
                request.method
            )));
        }
        None => return Err(header_mismatch("the Mcp-Method header is required")),
    }
    let header_name = header_value(req, &NAME)?;
    let body_name = name_in_body(request);
    match (body_name, header_name) {
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
        && let Some(name) = body_name
        && let Some(def) = shared.server.catalog().tools.get(name)
        && !def.param_headers.is_empty()
    {
        let arguments = request.params.as_ref().and_then(|p| member(p, "arguments"));
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
    let header = header_value(req, header_name.as_str())?;
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

/// The door of a 2026-07-28 request: checks its version header, its envelope and its mirrored
/// headers, and decides its origin (its envelope, parsed once, here); the error answer
/// otherwise.
pub(super) fn origin(
    req: &HttpRequest,
    shared: &HttpShared,
    request: &Request,
    header_version: Option<&str>,
) -> Result<Origin, HttpResponse> {
    let id = Some(&request.id);
    let bad = |error: ErrorObject| error_response(StatusCode::BAD_REQUEST, id, &error);
    // The envelope is read once; only when it is refused is its version looked up alone, so
    // that a header that disagrees is still the error answered first.
    let envelope = Envelope::of_request(request);
    let meta_version = match &envelope {
        Ok(meta) => Some(std::borrow::Cow::Borrowed(meta.version.as_str())),
        Err(_) => RequestMeta::version_of_request(request),
    };
    let meta_version = meta_version.as_deref();
    if let Some(meta_version) = meta_version {
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
    if meta_version.is_none()
        && let Some(header) = header_version
        && header.parse::<ProtocolVersion>().is_err()
    {
        // Neither era: the header names a revision this server does not know.
        return Err(bad(unsupported_version(header)));
    }
    // The whole envelope, inner shapes included: a malformed one is a 400 as a missing one; a
    // method the revision removed is a 404.
    let origin = Origin::v2026_of(request, envelope).map_err(|error| {
        let status = match error.code {
            ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            _ => StatusCode::BAD_REQUEST,
        };
        error_response(status, id, &error)
    })?;
    check_headers(req, shared, request).map_err(bad)?;
    Ok(origin)
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
}
