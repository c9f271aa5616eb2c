//! The endpoint's gate when it has [`BearerAuth`]: the bearer token of each request turned into
//! an [`Identity`] (401 otherwise), the scopes a request needs checked against it (403), the
//! per-request [`TransportInfo`] handed to handlers, and the protected resource metadata
//! (RFC 9728), served without authentication.
//!
//! Without bearer auth none of this runs: [`authenticate`] answers `Ok(None)` at once and
//! [`transport_info`] builds nothing unless headers are captured, so the unauthenticated path
//! allocates nothing more than before.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization>

// Early-return helpers hand back the finished error response; it is built once and returned.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::Value;

use actix_mcp_actors::{ErrorCode, ErrorObject, RequestId, SessionHandle, dev::Frame};

use super::HttpShared;
use crate::server::auth::{AuthError, BearerAuth, Challenge, Identity, scopes};
use crate::server::context::TransportInfo;

/// Headers never copied into a handler's snapshot: credentials.
const WITHHELD: [header::HeaderName; 3] = [
    header::AUTHORIZATION,
    header::PROXY_AUTHORIZATION,
    header::COOKIE,
];

/// A JSON-RPC error answer with `status` and an optional `WWW-Authenticate`.
fn refusal(
    status: StatusCode,
    id: Option<&RequestId>,
    message: &str,
    challenge: Option<String>,
) -> HttpResponse {
    let frame = Frame::error(id, &ErrorObject::new(ErrorCode::INVALID_REQUEST, message));
    let mut builder = HttpResponse::build(status);
    builder
        .content_type(super::respond::APPLICATION_JSON)
        .insert_header((header::CACHE_CONTROL, "no-store"));
    if let Some(challenge) = challenge {
        builder.insert_header((header::WWW_AUTHENTICATE, challenge));
    }
    builder.body(frame.json.to_string())
}

/// 401 with a challenge: no error code for a request without credentials, `invalid_token`
/// with a description otherwise. The challenge names the server's base scopes.
fn unauthorized(
    auth: &BearerAuth,
    shared: &HttpShared,
    id: Option<&RequestId>,
    invalid: Option<&str>,
) -> HttpResponse {
    let base = &shared.server.config.required_scopes;
    let (challenge, message) = match invalid {
        None => (
            auth.challenge(&Challenge::Missing, base),
            "unauthorized: this endpoint needs an OAuth bearer token".to_owned(),
        ),
        Some(description) => (
            auth.challenge(&Challenge::InvalidToken(description), base),
            format!("unauthorized: {description}"),
        ),
    };
    refusal(StatusCode::UNAUTHORIZED, id, &message, Some(challenge))
}

/// RFC 6750 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

/// The bearer token of a request, or why there is none usable: `Err(None)` when it carries
/// no credentials at all, `Err(Some(description))` when they are unusable.
fn bearer_token(req: &HttpRequest) -> Result<&str, Option<&'static str>> {
    let in_query = url::form_urlencoded::parse(req.query_string().as_bytes())
        .any(|(key, _)| key == "access_token");
    if in_query {
        return Err(Some(
            "access tokens are not accepted in the query string; send Authorization: Bearer",
        ));
    }
    let mut values = req.headers().get_all(header::AUTHORIZATION);
    let Some(value) = values.next() else {
        return Err(None);
    };
    if values.next().is_some() {
        return Err(Some("more than one Authorization header"));
    }
    let value = value
        .to_str()
        .map_err(|_| Some("the Authorization header is not ASCII"))?;
    let (scheme, token) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(Some("the Authorization scheme must be Bearer"));
    }
    let token = token.trim_start_matches(' ');
    if !is_b64token(token) {
        return Err(Some("the bearer token is malformed"));
    }
    Ok(token)
}

/// Refuses, before its body is read, a request to an endpoint with bearer auth that carries no
/// usable credentials (none, another scheme, a malformed token, a token in the query string):
/// the 401 answer (with a `null` id: the body is never read). A request with a well-formed
/// token passes; the token is validated by [`authenticate`] once the message is read.
pub(super) fn refuse_without_credentials(
    req: &HttpRequest,
    shared: &HttpShared,
) -> Result<(), HttpResponse> {
    let Some(auth) = &shared.config.auth else {
        return Ok(());
    };
    match bearer_token(req) {
        Ok(_) => Ok(()),
        Err(description) => Err(unauthorized(auth, shared, None, description)),
    }
}

/// Authenticates a request on an endpoint with bearer auth: the caller's identity, or the
/// 401 (or 503) answer. `Ok(None)` at once when the endpoint has no bearer auth. `id` is the
/// request's id for the answer's body.
pub(super) async fn authenticate(
    req: &HttpRequest,
    shared: &HttpShared,
    id: Option<&RequestId>,
) -> Result<Option<Arc<Identity>>, HttpResponse> {
    let Some(auth) = &shared.config.auth else {
        return Ok(None);
    };
    let token = match bearer_token(req) {
        Ok(token) => token,
        Err(description) => return Err(unauthorized(auth, shared, id, description)),
    };
    match auth.validate(token).await {
        Ok(identity) => Ok(Some(Arc::new(identity))),
        Err(AuthError::InvalidToken(description)) => {
            tracing::debug!(%description, "refused a bearer token");
            Err(unauthorized(auth, shared, id, Some(&description)))
        }
        Err(err) => {
            tracing::warn!(%err, "could not validate a bearer token");
            let mut response = refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                "the access token cannot be validated now; retry later",
                None,
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            Err(response)
        }
    }
}

/// Checks that `identity` holds every scope a message needs: the server's base set, plus, for
/// a request, those of the tool, prompt or resource it targets. The 403 answer otherwise.
/// Always passes without an identity (no bearer auth).
pub(super) fn authorize(
    shared: &HttpShared,
    identity: Option<&Identity>,
    id: Option<&RequestId>,
    method: &str,
    params: Option<&Value>,
) -> Result<(), HttpResponse> {
    let (Some(identity), Some(auth)) = (identity, &shared.config.auth) else {
        return Ok(());
    };
    let Some(needed) = scopes::required(&shared.server, method, params) else {
        return Ok(());
    };
    let missing: Vec<&str> = needed
        .iter()
        .filter(|scope| !identity.has_scope(scope))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let description = format!("{method} needs the scopes: {}", missing.join(" "));
    let challenge = auth.challenge(&Challenge::InsufficientScope(&description), &needed);
    Err(refusal(
        StatusCode::FORBIDDEN,
        id,
        &format!("forbidden: {description}"),
        Some(challenge),
    ))
}

/// Whether a session may be used by the caller: on a protected endpoint, only by the identity
/// that opened it (any other is told the session does not exist).
pub(super) fn owns(session: &SessionHandle, identity: Option<&Identity>) -> bool {
    match identity {
        None => true,
        Some(identity) => session.owner() == Some(identity.owner_key().as_str()),
    }
}

/// What the transport hands this request's handlers; `None` (nothing built) without bearer
/// auth unless headers are captured (or, with the feature `otel`, the request carries a
/// `traceparent` header).
pub(super) fn transport_info(
    req: &HttpRequest,
    shared: &HttpShared,
    identity: Option<Arc<Identity>>,
) -> Option<Arc<TransportInfo>> {
    let capture = shared.config.capture_headers || shared.config.auth.is_some();
    #[cfg(feature = "otel")]
    let trace = crate::telemetry::enabled()
        .then(|| crate::telemetry::TraceHeaders::capture(req.headers()))
        .flatten();
    #[cfg(feature = "otel")]
    let traced = trace.is_some();
    #[cfg(not(feature = "otel"))]
    let traced = false;
    if identity.is_none() && !capture && !traced {
        return None;
    }
    let headers = capture.then(|| {
        let mut headers = HeaderMap::with_capacity(req.headers().len());
        for (name, value) in req.headers() {
            if !WITHHELD.contains(name) {
                headers.append(name.clone(), value.clone());
            }
        }
        headers
    });
    Some(Arc::new(TransportInfo {
        identity,
        headers,
        #[cfg(feature = "otel")]
        trace,
    }))
}

/// `GET` of the protected resource metadata: the document, CORS-open, never authenticated.
pub(super) async fn metadata(shared: web::Data<HttpShared>) -> HttpResponse {
    let Some(auth) = &shared.config.auth else {
        return HttpResponse::NotFound().finish();
    };
    let document = auth.metadata(|| scopes::all(&shared.server));
    HttpResponse::Ok()
        .content_type(super::respond::APPLICATION_JSON)
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
        .insert_header((header::CACHE_CONTROL, "max-age=300"))
        .body(document.to_string())
}

/// `OPTIONS` of the metadata: a CORS preflight for browser-based clients.
pub(super) async fn metadata_preflight(req: HttpRequest) -> HttpResponse {
    let mut builder = HttpResponse::NoContent();
    builder
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
        .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, "GET, OPTIONS"))
        .insert_header((header::ACCESS_CONTROL_MAX_AGE, "86400"));
    if let Some(asked) = req.headers().get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        builder.insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone()));
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn token_of(req: &HttpRequest) -> Result<&str, Option<&'static str>> {
        bearer_token(req)
    }

    #[test]
    fn only_a_well_formed_bearer_header_yields_a_token() {
        let req = TestRequest::default()
            .insert_header((header::AUTHORIZATION, "Bearer abc.DEF-_~+/=="))
            .to_http_request();
        assert_eq!(token_of(&req), Ok("abc.DEF-_~+/=="));
        let req = TestRequest::default()
            .insert_header((header::AUTHORIZATION, "bearer xyz"))
            .to_http_request();
        assert_eq!(token_of(&req), Ok("xyz"));
        let req = TestRequest::default().to_http_request();
        assert_eq!(token_of(&req), Err(None));
        for bad in [
            "Basic dXNlcjpwYXNz",
            "Bearer",
            "Bearer a b",
            "Bearer =abc",
            "Bearer a\"b",
        ] {
            let req = TestRequest::default()
                .insert_header((header::AUTHORIZATION, bad))
                .to_http_request();
            assert!(matches!(token_of(&req), Err(Some(_))), "{bad}");
        }
        let req = TestRequest::default()
            .uri("/mcp?access_token=abc")
            .to_http_request();
        assert!(matches!(token_of(&req), Err(Some(_))));
    }
}
