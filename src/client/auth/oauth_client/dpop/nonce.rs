//! DPoP nonces (RFC 9449 sections 8 and 9): the latest nonce each server sent, kept per server
//! role and origin, and the answers that demand one (a token endpoint's `use_dpop_nonce` error,
//! a resource's `WWW-Authenticate: DPoP` challenge).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use url::Url;

use super::super::challenge::Challenge;

/// The header in which a server sends a nonce.
const DPOP_NONCE_HEADER: &str = "dpop-nonce";
/// The OAuth error code of a nonce demand.
const USE_DPOP_NONCE: &str = "use_dpop_nonce";
/// Longest nonce kept; a longer `DPoP-Nonce` is ignored.
const MAX_NONCE_LEN: usize = 1024;
/// Most (server role, origin) entries the nonce cache keeps; past that, one is dropped.
const MAX_NONCE_ENTRIES: usize = 64;

/// Which server a nonce came from: each keeps its own (RFC 9449 sections 8 and 9), even when
/// both share an origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum ServerRole {
    /// An authorization server (its token endpoint).
    Authorization,
    /// The resource server (the MCP server).
    Resource,
}

/// The latest DPoP nonce each server sent, by server role and origin (scheme, host, port).
/// Bounded: holds at most a few dozen servers.
#[derive(Default)]
pub(super) struct Nonces {
    nonces: Mutex<HashMap<(ServerRole, String), String>>,
}

impl Nonces {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(ServerRole, String), String>> {
        self.nonces.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The nonce to send to `role` at `url`'s origin, if that server gave one.
    pub(super) fn get(&self, role: ServerRole, url: &Url) -> Option<String> {
        self.lock()
            .get(&(role, url.origin().ascii_serialization()))
            .cloned()
    }

    /// Remembers `nonce` for `role` at `url`'s origin; `false` (and nothing kept) when it is
    /// not valid RFC 9449 section 8.1 syntax or is over 1 KiB.
    fn set(&self, role: ServerRole, url: &Url, nonce: &str) -> bool {
        if !is_valid_nonce(nonce) {
            return false;
        }
        let mut nonces = self.lock();
        let key = (role, url.origin().ascii_serialization());
        if nonces.len() >= MAX_NONCE_ENTRIES
            && !nonces.contains_key(&key)
            && let Some(evicted) = nonces.keys().next().cloned()
        {
            nonces.remove(&evicted);
        }
        nonces.insert(key, nonce.to_owned());
        true
    }

    /// Records the `DPoP-Nonce` of an answer from `role` at `url`, if it has a valid one.
    pub(super) fn observe(&self, role: ServerRole, url: &Url, headers: &HeaderMap) {
        if let Some(nonce) = nonce_header(headers) {
            self.set(role, url, nonce);
        }
    }
}

/// The `nonce` claim of a proof this client sent.
pub(super) fn proof_nonce(proof: &HeaderValue) -> Option<String> {
    let payload = proof.to_str().ok()?.split('.').nth(1)?;
    let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&payload).ok()?;
    claims.get("nonce")?.as_str().map(str::to_owned)
}

/// Whether `nonce` is RFC 9449 section 8.1 `1*NQCHAR` (visible ASCII but `"` and `\`) and
/// short.
fn is_valid_nonce(nonce: &str) -> bool {
    !nonce.is_empty()
        && nonce.len() <= MAX_NONCE_LEN
        && nonce
            .bytes()
            .all(|byte| matches!(byte, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

/// The `DPoP-Nonce` header of an answer, when there is exactly one and it is valid.
fn nonce_header(headers: &HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(DPOP_NONCE_HEADER).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    let nonce = value.to_str().ok()?.trim();
    is_valid_nonce(nonce).then_some(nonce)
}

/// The nonce a token endpoint demands: a client error whose OAuth error is `use_dpop_nonce`
/// (RFC 9449 section 8, HTTP 400), with a valid `DPoP-Nonce` header.
pub(super) fn token_nonce_demand<'a>(
    status: StatusCode,
    headers: &'a HeaderMap,
    body: &[u8],
) -> Option<&'a str> {
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        error: String,
    }
    if !status.is_client_error() {
        return None;
    }
    let parsed: ErrorBody = serde_json::from_slice(body).ok()?;
    if parsed.error != USE_DPOP_NONCE {
        return None;
    }
    nonce_header(headers)
}

/// The nonce a resource demands: HTTP 401 with a `WWW-Authenticate: DPoP` challenge whose
/// `error` is `use_dpop_nonce` (RFC 9449 section 9), with a valid `DPoP-Nonce` header. Such a
/// 401 asks for the request again with the nonce, not for a new token.
pub(super) fn resource_nonce_demand(status: StatusCode, headers: &HeaderMap) -> Option<&str> {
    if status == StatusCode::UNAUTHORIZED && demands_nonce(headers) {
        nonce_header(headers)
    } else {
        None
    }
}

/// Whether an answer of the MCP server carries a `WWW-Authenticate: DPoP` challenge with
/// `error="use_dpop_nonce"`, among any others.
pub(crate) fn demands_nonce(headers: &HeaderMap) -> bool {
    headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Challenge::parse_all)
        .any(|challenge| challenge.is("dpop") && challenge.param("error") == Some(USE_DPOP_NONCE))
}

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// `pairs` as a header map, in order.
    pub(in super::super) fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn nonces_are_kept_per_server_role_and_origin() {
        let nonces = Nonces::default();
        let token = Url::parse("https://auth.test/token").unwrap();
        let other_path = Url::parse("https://auth.test/other?x").unwrap();
        let mcp = Url::parse("https://auth.test/mcp").unwrap();
        let elsewhere = Url::parse("https://auth.test:8443/token").unwrap();

        assert!(nonces.set(ServerRole::Authorization, &token, "as-nonce"));
        assert_eq!(
            nonces
                .get(ServerRole::Authorization, &other_path)
                .as_deref(),
            Some("as-nonce")
        );
        assert_eq!(nonces.get(ServerRole::Resource, &mcp), None);
        assert_eq!(nonces.get(ServerRole::Authorization, &elsewhere), None);

        nonces.observe(
            ServerRole::Resource,
            &mcp,
            &headers(&[("DPoP-Nonce", "rs-1")]),
        );
        assert_eq!(
            nonces.get(ServerRole::Resource, &mcp).as_deref(),
            Some("rs-1")
        );
        assert_eq!(
            nonces.get(ServerRole::Authorization, &token).as_deref(),
            Some("as-nonce")
        );

        // Invalid nonces are never stored.
        assert!(!nonces.set(ServerRole::Resource, &mcp, "has space"));
        assert!(!nonces.set(ServerRole::Resource, &mcp, "quote\""));
        assert!(!nonces.set(ServerRole::Resource, &mcp, ""));
        assert!(!nonces.set(ServerRole::Resource, &mcp, &"n".repeat(2000)));
        assert_eq!(
            nonces.get(ServerRole::Resource, &mcp).as_deref(),
            Some("rs-1")
        );
    }

    #[test]
    fn the_nonce_cache_is_bounded() {
        let nonces = Nonces::default();
        for port in 0..200u16 {
            let url = Url::parse(&format!("http://127.0.0.1:{}/", 1000 + port)).unwrap();
            assert!(nonces.set(ServerRole::Resource, &url, "n"));
        }
        assert!(nonces.lock().len() <= MAX_NONCE_ENTRIES);
        let last = Url::parse("http://127.0.0.1:1199/").unwrap();
        assert_eq!(
            nonces.get(ServerRole::Resource, &last).as_deref(),
            Some("n")
        );
    }

    #[test]
    fn a_token_endpoint_nonce_demand_is_recognised() {
        let nonce = headers(&[("dpop-nonce", "conformance-as-dpop-nonce")]);
        let body = br#"{"error":"use_dpop_nonce","error_description":"Authorization server requires a DPoP nonce"}"#;
        assert_eq!(
            token_nonce_demand(StatusCode::BAD_REQUEST, &nonce, body),
            Some("conformance-as-dpop-nonce")
        );
        // Another error, even with a nonce header, is not a demand.
        assert_eq!(
            token_nonce_demand(
                StatusCode::BAD_REQUEST,
                &nonce,
                br#"{"error":"invalid_grant"}"#
            ),
            None
        );
        // A demand without the header cannot be honoured.
        assert_eq!(
            token_nonce_demand(StatusCode::BAD_REQUEST, &HeaderMap::new(), body),
            None
        );
        assert_eq!(token_nonce_demand(StatusCode::OK, &nonce, body), None);
        assert_eq!(
            token_nonce_demand(StatusCode::BAD_REQUEST, &nonce, b"<html>"),
            None
        );
        // Two nonce headers are ambiguous.
        let twice = headers(&[("dpop-nonce", "a"), ("dpop-nonce", "b")]);
        assert_eq!(
            token_nonce_demand(StatusCode::BAD_REQUEST, &twice, body),
            None
        );
    }

    #[test]
    fn a_resource_nonce_challenge_is_recognised() {
        let demand = headers(&[
            (
                "www-authenticate",
                r#"DPoP error="use_dpop_nonce", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp""#,
            ),
            ("dpop-nonce", "conformance-rs-dpop-nonce"),
        ]);
        assert_eq!(
            resource_nonce_demand(StatusCode::UNAUTHORIZED, &demand),
            Some("conformance-rs-dpop-nonce")
        );
        assert_eq!(resource_nonce_demand(StatusCode::FORBIDDEN, &demand), None);

        // The first 401, without `error`, asks for a token: not a nonce demand.
        let first = headers(&[
            (
                "www-authenticate",
                r#"DPoP resource_metadata="http://x/prm""#,
            ),
            ("dpop-nonce", "n"),
        ]);
        assert_eq!(
            resource_nonce_demand(StatusCode::UNAUTHORIZED, &first),
            None
        );
        let challenge = crate::client::auth::BearerChallenge::from_headers(&first).unwrap();
        assert_eq!(challenge.scheme, "DPoP");
        assert_eq!(challenge.resource_metadata.as_deref(), Some("http://x/prm"));

        // A Bearer challenge with the same error is not a DPoP one.
        let bearer = headers(&[
            ("www-authenticate", r#"Bearer error="use_dpop_nonce""#),
            ("dpop-nonce", "n"),
        ]);
        assert_eq!(
            resource_nonce_demand(StatusCode::UNAUTHORIZED, &bearer),
            None
        );
    }

    #[test]
    fn a_demand_among_several_challenges_is_found() {
        let several = headers(&[
            ("www-authenticate", "Bearer realm=\"a, b\""),
            (
                "www-authenticate",
                r#"Basic abc==, dpop  ERROR = use_dpop_nonce ,algs="ES256 PS256""#,
            ),
            ("dpop-nonce", "n-2"),
        ]);
        assert_eq!(
            resource_nonce_demand(StatusCode::UNAUTHORIZED, &several),
            Some("n-2")
        );
        for junk in ["", ",,,", "DPoP error=\"unterminated", "= = =", "DPoP ,=,"] {
            let junk = headers(&[("www-authenticate", junk), ("dpop-nonce", "n")]);
            assert_eq!(resource_nonce_demand(StatusCode::UNAUTHORIZED, &junk), None);
        }
    }
}
