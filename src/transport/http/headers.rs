//! The request headers every method of the endpoint checks (POST at its door, GET and DELETE
//! in the session): Host and Origin, `MCP-Protocol-Version`, `Accept`.

// A refusal is the finished error response; it is built once and returned.
#![allow(clippy::result_large_err)]

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};

use actix_mcp_actors::{ErrorCode, RequestId};

use super::respond::{header_str, http_error};
use super::v2026::{METHOD_HEADER, NAME_HEADER};
use super::{HttpShared, PROTOCOL_VERSION_HEADER, SESSION_HEADER};
use crate::protocol::ProtocolVersion;
use crate::transport::media::Media;

// The endpoint's own headers as names: a lookup by a `&str` outside the standard set copies
// the name first, and these are looked up on every request.
/// `Mcp-Session-Id`.
pub(super) const SESSION: header::HeaderName = header::HeaderName::from_static(SESSION_HEADER);
/// `MCP-Protocol-Version`.
pub(super) const PROTOCOL_VERSION: header::HeaderName =
    header::HeaderName::from_static(PROTOCOL_VERSION_HEADER);
/// `Mcp-Method`.
pub(super) const METHOD: header::HeaderName = header::HeaderName::from_static(METHOD_HEADER);
/// `Mcp-Name`.
pub(super) const NAME: header::HeaderName = header::HeaderName::from_static(NAME_HEADER);
/// `Last-Event-ID`.
pub(super) const LAST_EVENT_ID: header::HeaderName =
    header::HeaderName::from_static("last-event-id");
/// `X-Accel-Buffering`, on every SSE answer (a reverse proxy must not buffer the stream).
pub(super) const X_ACCEL_BUFFERING: header::HeaderName =
    header::HeaderName::from_static("x-accel-buffering");

/// A header value as text when it is visible ASCII, as [`HeaderValue::to_str`] reads it, but
/// checked a word at a time rather than a byte at a time: a value holds no control bytes but
/// tabs (actix-http's parser and `HeaderValue`'s constructors refuse them), so it is visible
/// ASCII exactly when it is ASCII. For the same reason, `str::trim_ascii` trims exactly a
/// value's optional whitespace (spaces and tabs), without decoding characters.
pub(crate) fn ascii_str(value: &header::HeaderValue) -> Option<&str> {
    let bytes = value.as_bytes();
    if bytes.is_ascii() {
        std::str::from_utf8(bytes).ok()
    } else {
        None
    }
}

/// Checks every request shares: Host/Origin.
pub(super) fn check_host(req: &HttpRequest, shared: &HttpShared) -> Result<(), HttpResponse> {
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

/// A request's `MCP-Protocol-Version` header, read once: a POST's door decides from it how to
/// parse the body, and then, knowing the message's id, refuses a header it cannot take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VersionHeader<'a> {
    /// No such header.
    Absent,
    /// One value, trimmed.
    One(&'a str),
    /// More than one value.
    Repeated,
    /// One value that is not ASCII.
    NotAscii,
}

impl<'a> VersionHeader<'a> {
    /// The request's header.
    pub(super) fn of(req: &'a HttpRequest) -> Self {
        let mut values = req.headers().get_all(&PROTOCOL_VERSION);
        let Some(value) = values.next() else {
            return Self::Absent;
        };
        if values.next().is_some() {
            return Self::Repeated;
        }
        ascii_str(value).map_or(Self::NotAscii, |value| Self::One(value.trim_ascii()))
    }

    /// Its one value, if it has one.
    pub(super) fn value(self) -> Option<&'a str> {
        match self {
            Self::One(value) => Some(value),
            _ => None,
        }
    }

    /// Its value (`None` when absent), or the refusal of a request (of `id`) that repeats the
    /// header or sends it in other than ASCII.
    pub(super) fn checked(self, id: Option<&RequestId>) -> Result<Option<&'a str>, HttpResponse> {
        let refusal = match self {
            Self::Absent => return Ok(None),
            Self::One(value) => return Ok(Some(value)),
            Self::Repeated => "the MCP-Protocol-Version header appears more than once",
            Self::NotAscii => "the MCP-Protocol-Version header is not ASCII",
        };
        Err(http_error(
            StatusCode::BAD_REQUEST,
            id,
            crate::error::code::HEADER_MISMATCH,
            refusal,
        ))
    }
}

/// A session request's `MCP-Protocol-Version` (its value as [`VersionHeader::checked`] read
/// it): a supported stateful revision, or absent.
pub(super) fn stateful_version_of(
    req: &HttpRequest,
    raw: Option<&str>,
    id: Option<&RequestId>,
) -> Result<Option<ProtocolVersion>, HttpResponse> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    match raw.parse::<ProtocolVersion>() {
        Ok(version) if version.has_handshake() => Ok(Some(version)),
        _ => Err(http_error(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST,
            format!(
                "unsupported MCP-Protocol-Version {:?}; supported: {}",
                // The value as sent, untrimmed.
                header_str(req, &PROTOCOL_VERSION).unwrap_or("<non-ASCII>"),
                ProtocolVersion::WITH_HANDSHAKE
                    .iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Which of the endpoint's two media types the request's `Accept` headers list: each media
/// range's type and subtype, its parameters (such as `q`) aside, compared without regard to
/// ASCII case. One pass over the header's bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Accepted {
    /// `application/json` is listed.
    pub(super) json: bool,
    /// `text/event-stream` is listed.
    pub(super) event_stream: bool,
}

/// What the request's `Accept` headers list (see [`Accepted`]).
pub(super) fn accepted(req: &HttpRequest) -> Accepted {
    let mut accepted = Accepted::default();
    for value in req.headers().get_all(header::ACCEPT) {
        // What the SDKs send, matched at once.
        if value.as_bytes() == b"application/json, text/event-stream" {
            return Accepted {
                json: true,
                event_stream: true,
            };
        }
        for range in value.as_bytes().split(|&byte| byte == b',') {
            match Media::of(range) {
                Some(Media::Json) => accepted.json = true,
                Some(Media::EventStream) => accepted.event_stream = true,
                None => {}
            }
        }
    }
    accepted
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn accepted_of(values: &[&str]) -> Accepted {
        let mut req = TestRequest::default();
        for value in values {
            req = req.append_header((header::ACCEPT, *value));
        }
        accepted(&req.to_http_request())
    }

    /// Media ranges are read whole: their parameters aside, in any case, across several
    /// headers; a type that only begins like one of ours is another type.
    #[test]
    fn accept_lists_media_ranges_not_substrings() {
        let both = Accepted {
            json: true,
            event_stream: true,
        };
        assert_eq!(accepted_of(&["application/json, text/event-stream"]), both);
        assert_eq!(
            accepted_of(&["Text/Event-Stream;q=0.5 ,APPLICATION/JSON ; q=1"]),
            both
        );
        assert_eq!(
            accepted_of(&["application/json", "text/event-stream"]),
            both
        );
        assert_eq!(
            accepted_of(&["application/json-seq, text/event-streams"]),
            Accepted::default()
        );
        assert_eq!(
            accepted_of(&["application/json"]),
            Accepted {
                json: true,
                event_stream: false,
            }
        );
        assert_eq!(accepted_of(&[]), Accepted::default());
        assert_eq!(accepted_of(&["*/*"]), Accepted::default());
    }

    /// The same answer as `HeaderValue::to_str` for any value a `HeaderValue` can hold.
    #[test]
    fn ascii_str_reads_what_to_str_reads() {
        let values: [&[u8]; 6] = [
            b"",
            b"2025-11-25",
            b"a\tb c~",
            b"caf\xe9",
            b"\xc3\xa9t\xc3\xa9",
            b"x\x80",
        ];
        for bytes in values {
            let value = header::HeaderValue::from_bytes(bytes).expect("a valid header value");
            assert_eq!(ascii_str(&value), value.to_str().ok(), "{bytes:?}");
        }
        for refused in [&b"a\x01"[..], b"\x7f", b"a\nb"] {
            assert!(
                header::HeaderValue::from_bytes(refused).is_err(),
                "{refused:?}"
            );
        }
    }
}
