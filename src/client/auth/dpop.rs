//! DPoP (RFC 9449): access tokens bound to a key the client holds, proven on every request.
//!
//! Turned on with [`OAuthBuilder::dpop`](super::OAuthBuilder::dpop) (a [`DpopKey`]),
//! [`dpop_generate`](super::OAuthBuilder::dpop_generate) (a fresh ES256 key) or
//! [`dpop_auto`](super::OAuthBuilder::dpop_auto) (a fresh key, used with the authorization
//! servers that list its algorithm in `dpop_signing_alg_values_supported`). [`Dpop`] is a
//! [`RequestHook`] of the flow; what it does is in the [auth module docs](super#dpop). Nonces
//! are kept per server role and origin (the authorization server's and the MCP server's
//! apart, even on one origin), at most a few dozen; a request is sent again for a nonce only
//! when the refused proof did not carry that nonce already.
//!
//! Spec: <https://www.rfc-editor.org/rfc/rfc9449>,
//! <https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/dpop-extension.mdx>

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use serde::Serialize;
use sha2::{Digest, Sha256};
use url::Url;

use super::assertion::{JwtError, SigningKey};
use super::challenge::Challenge;
use super::error::AuthError;
use super::http::{HookRequest, HookResponse, HookVerdict, RequestHook, RequestKind, describe};
use super::metadata::AuthorizationServerMetadata;
use super::token::TokenType;
use crate::client::error::ClientError;

/// The header that carries a proof.
const DPOP_HEADER: HeaderName = HeaderName::from_static("dpop");
/// The header in which a server sends a nonce.
const DPOP_NONCE_HEADER: &str = "dpop-nonce";
/// The OAuth error code of a nonce demand.
const USE_DPOP_NONCE: &str = "use_dpop_nonce";
/// The `typ` header of a proof.
const PROOF_TYPE: &str = "dpop+jwt";
/// Longest nonce kept; a longer `DPoP-Nonce` is ignored.
const MAX_NONCE_LEN: usize = 1024;
/// Most (server role, origin) entries the nonce cache keeps; past that, one is dropped.
const MAX_NONCE_ENTRIES: usize = 64;

/// A DPoP key pair: signs proofs and names itself by its public JWK and RFC 7638 thumbprint.
///
/// Give one to [`OAuthBuilder::dpop`](super::OAuthBuilder::dpop): generate it
/// ([`generate`](Self::generate)) or load a persistent one ([`from_pem`](Self::from_pem)); a
/// token is only usable with the key it was bound to, so a client that stores tokens across
/// runs must keep the key too. `Debug` shows the algorithm
/// and thumbprint, never the key.
///
/// ```
/// use actix_mcp::client::auth::DpopKey;
///
/// let key = DpopKey::generate()?;
/// let proof = key.proof("POST", "https://mcp.example.com/mcp?x=1", None, Some("token"))?;
/// assert_eq!(proof.split('.').count(), 3);
/// println!("dpop_jkt={}", key.thumbprint());
/// # Ok::<(), actix_mcp::client::auth::JwtError>(())
/// ```
#[derive(Clone)]
pub struct DpopKey {
    key: SigningKey,
    jwk: Jwk,
    thumbprint: String,
}

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey")
            .field("alg", &self.key.algorithm())
            .field("thumbprint", &self.thumbprint)
            .finish_non_exhaustive()
    }
}

/// The claims of a proof (RFC 9449 section 4.2).
#[derive(Serialize)]
struct ProofClaims<'a> {
    jti: String,
    htm: &'a str,
    htu: &'a str,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<&'a str>,
}

impl DpopKey {
    /// A fresh ES256 (P-256) key, the algorithm every DPoP server supports.
    ///
    /// # Errors
    /// [`JwtError::KeyGeneration`] if the crypto library fails.
    pub fn generate() -> Result<Self, JwtError> {
        Self::from_signing_key(SigningKey::generate_es256()?)
    }

    /// A key from a PEM private key for `alg` (PKCS#8 for ECDSA and EdDSA; see
    /// [`SigningKey::from_pem`]).
    ///
    /// # Errors
    /// [`JwtError::UnsupportedAlgorithm`] for a symmetric algorithm, [`JwtError::InvalidKey`]
    /// when the PEM does not hold a private key for `alg`.
    pub fn from_pem(pem: impl AsRef<[u8]>, alg: Algorithm) -> Result<Self, JwtError> {
        Self::from_signing_key(SigningKey::from_pem(pem, alg)?)
    }

    /// A DPoP key around a signing key (its `kid`, if any, is not sent: a proof carries the
    /// whole public key).
    ///
    /// # Errors
    /// [`JwtError::InvalidKey`] if the public key cannot be derived.
    pub fn from_signing_key(key: SigningKey) -> Result<Self, JwtError> {
        let jwk = key.public_jwk()?;
        let thumbprint = jwk_thumbprint(&jwk).map_err(|source| JwtError::InvalidKey {
            alg: key.algorithm(),
            source,
        })?;
        Ok(Self {
            key,
            jwk,
            thumbprint,
        })
    }

    /// The algorithm proofs are signed with (to check against the authorization server's
    /// `dpop_signing_alg_values_supported`).
    pub fn algorithm(&self) -> Algorithm {
        self.key.algorithm()
    }

    /// The public key, as sent in each proof's `jwk` header.
    pub fn public_jwk(&self) -> &Jwk {
        &self.jwk
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key, base64url: the `cnf.jkt` of a bound
    /// token and the value of the `dpop_jkt` authorization request parameter.
    pub fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// A fresh proof for a request with method `htm` to `htu` (its query and fragment are
    /// dropped, as RFC 9449 section 4.2 requires). Give the server's `nonce` when it demanded one,
    /// and the `access_token` when presenting one to a resource (adds `ath`); a token request
    /// has neither token nor `ath`.
    ///
    /// # Errors
    /// [`JwtError::InvalidMethod`], [`JwtError::InvalidUrl`] for a bad `htm` or `htu`,
    /// [`JwtError::Signing`] if signing fails.
    pub fn proof(
        &self,
        htm: &str,
        htu: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> Result<String, JwtError> {
        if reqwest::Method::from_bytes(htm.as_bytes()).is_err() {
            return Err(JwtError::InvalidMethod(htm.to_owned()));
        }
        let htu = normalize_htu(htu)?;
        let claims = ProofClaims {
            jti: uuid::Uuid::new_v4().to_string(),
            htm,
            htu: &htu,
            iat: jsonwebtoken::get_current_timestamp(),
            ath: access_token.map(access_token_hash),
            nonce,
        };
        let mut header = self.key.header();
        header.typ = Some(PROOF_TYPE.to_owned());
        header.kid = None;
        header.jwk = Some(self.jwk.clone());
        self.key.sign_with(&header, &claims)
    }
}

/// The `htu` of a proof for `url`: the absolute `http(s)` URL without query, fragment or user
/// info (RFC 9449 section 4.2: the HTTP target URI without query and fragment).
///
/// # Errors
/// [`JwtError::InvalidUrl`] if `url` is not an absolute `http` or `https` URL.
fn normalize_htu(url: &str) -> Result<String, JwtError> {
    let invalid = || JwtError::InvalidUrl(url.to_owned());
    let mut parsed = Url::parse(url).map_err(|_| invalid())?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(invalid());
    }
    parsed.set_query(None);
    parsed.set_fragment(None);
    // Both only fail for URLs without a host, excluded above.
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    Ok(parsed.into())
}

/// `ath`: base64url (no padding) of the SHA-256 of the access token's ASCII bytes
/// (RFC 9449 section 4.2).
fn access_token_hash(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

/// The RFC 7638 SHA-256 thumbprint of a public JWK (EC, RSA or OKP), base64url.
///
/// # Errors
/// When the JWK is of a kind without a defined thumbprint.
fn jwk_thumbprint(jwk: &Jwk) -> Result<String, jsonwebtoken::errors::Error> {
    jwk.thumbprint(ThumbprintHash::SHA256)
}

/// Which server a nonce came from: each keeps its own (RFC 9449 sections 8 and 9), even when
/// both share an origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ServerRole {
    /// An authorization server (its token endpoint).
    Authorization,
    /// The resource server (the MCP server).
    Resource,
}

/// The latest DPoP nonce each server sent, by server role and origin (scheme, host, port).
/// Bounded: holds at most a few dozen servers.
#[derive(Default)]
struct Nonces {
    nonces: Mutex<HashMap<(ServerRole, String), String>>,
}

impl Nonces {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(ServerRole, String), String>> {
        self.nonces.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The nonce to send to `role` at `url`'s origin, if that server gave one.
    fn get(&self, role: ServerRole, url: &Url) -> Option<String> {
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
    fn observe(&self, role: ServerRole, url: &Url, headers: &HeaderMap) {
        if let Some(nonce) = nonce_header(headers) {
            self.set(role, url, nonce);
        }
    }
}

/// Where the flow uses DPoP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DpopUse {
    /// With every authorization server.
    Always,
    /// With the authorization servers that list the key's algorithm in
    /// `dpop_signing_alg_values_supported`.
    WhenSupported,
}

/// The DPoP request hook of a flow: a key, where to use it, and the nonces servers sent.
pub(crate) struct Dpop {
    key: DpopKey,
    usage: DpopUse,
    nonces: Nonces,
}

impl fmt::Debug for Dpop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dpop")
            .field("key", &self.key)
            .field("usage", &self.usage)
            .field("nonces", &self.nonces.lock().len())
            .finish()
    }
}

/// The JOSE name of an asymmetric `alg`, as servers list it.
fn alg_name(alg: Algorithm) -> Option<&'static str> {
    Some(match alg {
        Algorithm::ES256 => "ES256",
        Algorithm::ES384 => "ES384",
        Algorithm::RS256 => "RS256",
        Algorithm::RS384 => "RS384",
        Algorithm::RS512 => "RS512",
        Algorithm::PS256 => "PS256",
        Algorithm::PS384 => "PS384",
        Algorithm::PS512 => "PS512",
        Algorithm::EdDSA => "EdDSA",
        _ => return None,
    })
}

impl Dpop {
    pub(crate) fn new(key: DpopKey, usage: DpopUse) -> Self {
        Self {
            key,
            usage,
            nonces: Nonces::default(),
        }
    }

    /// The key.
    pub(crate) fn key(&self) -> &DpopKey {
        &self.key
    }

    /// Whether requests to the authorization server `server` carry proofs.
    pub(crate) fn applies_to(&self, server: Option<&AuthorizationServerMetadata>) -> bool {
        match self.usage {
            DpopUse::Always => true,
            DpopUse::WhenSupported => server
                .and_then(|server| server.dpop_signing_alg_values_supported.as_deref())
                .is_some_and(|algs| {
                    algs.iter()
                        .any(|alg| Some(alg.as_str()) == alg_name(self.key.algorithm()))
                }),
        }
    }
}

impl RequestHook for Dpop {
    fn headers(
        &self,
        request: &HookRequest<'_>,
        headers: &mut HeaderMap,
    ) -> Result<(), ClientError> {
        let (role, access_token) = match request.kind {
            RequestKind::Token if self.applies_to(request.server) => {
                (ServerRole::Authorization, None)
            }
            RequestKind::Resource => match request.token {
                Some(token) if *token.token_type() == TokenType::DPoP => {
                    (ServerRole::Resource, Some(token.access_token()))
                }
                _ => return Ok(()),
            },
            _ => return Ok(()),
        };
        let nonce = self.nonces.get(role, request.url);
        let signing = |reason: String| ClientError::Auth(AuthError::Signing(reason));
        let proof = self
            .key
            .proof(
                request.method.as_str(),
                request.url.as_str(),
                nonce.as_deref(),
                access_token,
            )
            .map_err(|err| signing(describe(&err)))?;
        let value = HeaderValue::from_str(&proof)
            .map_err(|_| signing("the DPoP proof cannot go in a header".into()))?;
        headers.insert(DPOP_HEADER, value);
        Ok(())
    }

    fn response(&self, request: &HookRequest<'_>, response: &HookResponse<'_>) -> HookVerdict {
        let role = match request.kind {
            RequestKind::Token => ServerRole::Authorization,
            RequestKind::Resource => ServerRole::Resource,
            _ => return HookVerdict::Proceed,
        };
        self.nonces.observe(role, request.url, response.headers);
        let Some(sent) = response.sent.get(DPOP_HEADER) else {
            return HookVerdict::Proceed;
        };
        let demanded = match role {
            ServerRole::Authorization => token_nonce_demand(
                response.status,
                response.headers,
                response.body.unwrap_or_default(),
            ),
            ServerRole::Resource => resource_nonce_demand(response.status, response.headers),
        };
        // Sent again only with a nonce the refused proof did not carry: a server that keeps
        // demanding the nonce it was given is not asked again.
        match demanded {
            Some(nonce) if proof_nonce(sent).as_deref() != Some(nonce) => HookVerdict::Retry,
            _ => HookVerdict::Proceed,
        }
    }
}

/// The `nonce` claim of a proof this client sent.
fn proof_nonce(proof: &HeaderValue) -> Option<String> {
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
fn token_nonce_demand<'a>(
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
fn resource_nonce_demand(status: StatusCode, headers: &HeaderMap) -> Option<&str> {
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
mod tests {
    #![allow(clippy::unwrap_used)]

    use jsonwebtoken::{DecodingKey, Validation};
    use reqwest::header::HeaderValue;

    use super::super::assertion::tests::p256_pem;
    use super::*;

    /// Verifies `proof` with the `jwk` of its own header and returns header and claims.
    fn verify(proof: &str) -> (jsonwebtoken::Header, serde_json::Value) {
        let header = jsonwebtoken::decode_header(proof).unwrap();
        let jwk = header.jwk.clone().unwrap();
        let key = DecodingKey::from_jwk(&jwk).unwrap();
        let mut validation = Validation::new(header.alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<serde_json::Value>(proof, &key, &validation)
            .unwrap()
            .claims;
        (header, claims)
    }

    #[test]
    fn a_proof_verifies_against_its_own_public_key() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof("POST", "https://as.example.com/token", None, None)
            .unwrap();
        let (header, claims) = verify(&proof);

        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        assert_eq!(header.alg, Algorithm::ES256);
        assert_eq!(header.kid, None);
        assert_eq!(header.jwk.as_ref(), Some(key.public_jwk()));
        let jwk = serde_json::to_value(header.jwk.unwrap()).unwrap();
        assert!(
            jwk.get("d").is_none(),
            "the proof must not carry the private key"
        );

        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://as.example.com/token");
        let iat = claims["iat"].as_u64().unwrap();
        assert!(iat.abs_diff(jsonwebtoken::get_current_timestamp()) <= 2);
        assert!(!claims["jti"].as_str().unwrap().is_empty());
        for absent in ["ath", "nonce", "content_digest"] {
            assert!(claims.get(absent).is_none(), "{absent} must be absent");
        }
    }

    #[test]
    fn a_resource_proof_carries_ath_nonce_and_a_fresh_jti() {
        let key = DpopKey::generate().unwrap();
        let first = key
            .proof("GET", "https://mcp.test/mcp", Some("n-1"), Some("tok"))
            .unwrap();
        let second = key
            .proof("GET", "https://mcp.test/mcp", Some("n-1"), Some("tok"))
            .unwrap();
        let (_, first) = verify(&first);
        let (_, second) = verify(&second);
        assert_eq!(first["nonce"], "n-1");
        assert_eq!(first["htm"], "GET");
        assert_eq!(first["ath"], access_token_hash("tok"));
        assert_ne!(first["jti"], second["jti"]);
    }

    #[test]
    fn ath_matches_the_rfc_9449_example() {
        // RFC 9449 §7.1: the access token and the `ath` of the proof sent with it.
        assert_eq!(
            access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
            "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        );
    }

    #[test]
    fn htu_has_no_query_fragment_or_credentials() {
        assert_eq!(
            normalize_htu("https://user:pw@MCP.Example.com:443/mcp?session=1#frag").unwrap(),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            normalize_htu("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080/"
        );
        for bad in ["/relative", "ftp://host/x", "not a url", "mailto:a@b"] {
            assert!(
                matches!(normalize_htu(bad), Err(JwtError::InvalidUrl(_))),
                "{bad}"
            );
        }
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof("POST", "https://mcp.test/mcp?a=b#c", None, None)
            .unwrap();
        assert_eq!(verify(&proof).1["htu"], "https://mcp.test/mcp");
        assert!(matches!(
            key.proof("PO ST", "https://mcp.test/", None, None),
            Err(JwtError::InvalidMethod(_))
        ));
    }

    #[test]
    fn the_thumbprint_matches_rfc_7638s_example() {
        // RFC 7638 §3.1.
        let jwk: Jwk = serde_json::from_value(serde_json::json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB",
            "alg": "RS256",
            "kid": "2011-04-29"
        }))
        .unwrap();
        assert_eq!(
            jwk_thumbprint(&jwk).unwrap(),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }

    #[test]
    fn an_ec_thumbprint_hashes_the_required_members_in_order() {
        let key = DpopKey::generate().unwrap();
        let jwk = serde_json::to_value(key.public_jwk()).unwrap();
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        assert_eq!(
            key.thumbprint(),
            URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
        );
    }

    #[test]
    fn a_key_loads_from_pem_and_keeps_its_thumbprint() {
        let pem = p256_pem();
        let first = DpopKey::from_pem(&pem, Algorithm::ES256).unwrap();
        let second = DpopKey::from_pem(&pem, Algorithm::ES256).unwrap();
        assert_eq!(first.thumbprint(), second.thumbprint());
        assert_eq!(first.thumbprint().len(), 43);
        let (header, _) = verify(
            &first
                .proof("POST", "https://as.test/t", None, None)
                .unwrap(),
        );
        assert_eq!(header.jwk.as_ref(), Some(second.public_jwk()));
        assert!(DpopKey::from_pem(&pem, Algorithm::HS256).is_err());
        assert!(!format!("{first:?}").contains("PRIVATE"));
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
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

    fn server(algs: Option<&[&str]>) -> AuthorizationServerMetadata {
        let mut server = AuthorizationServerMetadata::with_token_endpoint(
            "https://as.test",
            "https://as.test/token",
        );
        server.dpop_signing_alg_values_supported =
            algs.map(|algs| algs.iter().map(|alg| (*alg).to_owned()).collect());
        server
    }

    /// The proof the hook adds to `request`, if any.
    fn proof_of(dpop: &Dpop, request: &HookRequest<'_>) -> Option<serde_json::Value> {
        let mut headers = HeaderMap::new();
        dpop.headers(request, &mut headers).unwrap();
        headers
            .get(DPOP_HEADER)
            .map(|proof| verify(proof.to_str().unwrap()).1)
    }

    #[test]
    fn auto_dpop_proves_only_to_servers_that_list_the_algorithm() {
        let token_url = Url::parse("https://as.test/token").unwrap();
        let post = reqwest::Method::POST;
        let auto = Dpop::new(DpopKey::generate().unwrap(), DpopUse::WhenSupported);
        let always = Dpop::new(DpopKey::generate().unwrap(), DpopUse::Always);
        for (algs, expected) in [
            (Some(&["RS256", "ES256"][..]), true),
            (Some(&["RS256"][..]), false),
            (None, false),
        ] {
            let server = server(algs);
            let request = HookRequest {
                kind: RequestKind::Token,
                method: &post,
                url: &token_url,
                token: None,
                server: Some(&server),
            };
            assert_eq!(proof_of(&auto, &request).is_some(), expected, "{algs:?}");
            let proof = proof_of(&always, &request).unwrap();
            assert_eq!(proof["htu"], "https://as.test/token");
            assert!(proof.get("ath").is_none());
        }
        let registration = HookRequest {
            kind: RequestKind::Registration,
            method: &post,
            url: &token_url,
            token: None,
            server: None,
        };
        assert!(proof_of(&always, &registration).is_none());
    }

    #[test]
    fn only_a_dpop_token_gets_a_resource_proof() {
        let mcp = Url::parse("https://mcp.test/mcp").unwrap();
        let get = reqwest::Method::GET;
        let dpop = Dpop::new(DpopKey::generate().unwrap(), DpopUse::Always);
        let bound = crate::client::auth::Token::new("bound", TokenType::DPoP);
        let bearer = crate::client::auth::Token::new("plain", TokenType::Bearer);
        let request = |token| HookRequest {
            kind: RequestKind::Resource,
            method: &get,
            url: &mcp,
            token: Some(token),
            server: None,
        };
        let proof = proof_of(&dpop, &request(&bound)).unwrap();
        assert_eq!(proof["htm"], "GET");
        assert_eq!(proof["ath"], access_token_hash("bound"));
        assert!(proof_of(&dpop, &request(&bearer)).is_none());
    }

    #[test]
    fn a_nonce_demand_is_met_once_with_the_new_nonce() {
        let mcp = Url::parse("https://mcp.test/mcp").unwrap();
        let post = reqwest::Method::POST;
        let dpop = Dpop::new(DpopKey::generate().unwrap(), DpopUse::Always);
        let bound = crate::client::auth::Token::new("bound", TokenType::DPoP);
        let request = HookRequest {
            kind: RequestKind::Resource,
            method: &post,
            url: &mcp,
            token: Some(&bound),
            server: None,
        };
        let demand = headers(&[
            ("www-authenticate", r#"DPoP error="use_dpop_nonce""#),
            ("dpop-nonce", "rs-1"),
        ]);
        let mut sent = HeaderMap::new();
        dpop.headers(&request, &mut sent).unwrap();
        let answer = |sent| HookResponse {
            status: StatusCode::UNAUTHORIZED,
            headers: &demand,
            body: None,
            sent,
        };
        assert_eq!(dpop.response(&request, &answer(&sent)), HookVerdict::Retry);
        // The next proof carries the nonce; the same demand again is not met again.
        let mut again = HeaderMap::new();
        dpop.headers(&request, &mut again).unwrap();
        let proof = again.get(DPOP_HEADER).unwrap().to_str().unwrap();
        assert_eq!(verify(proof).1["nonce"], "rs-1");
        assert_eq!(
            dpop.response(&request, &answer(&again)),
            HookVerdict::Proceed
        );
        // Without a proof sent, there is nothing to prove again.
        assert_eq!(
            dpop.response(&request, &answer(&HeaderMap::new())),
            HookVerdict::Proceed
        );
        // A nonce on a success is kept too.
        let fresh = headers(&[("dpop-nonce", "rs-2")]);
        let ok = HookResponse {
            status: StatusCode::OK,
            headers: &fresh,
            body: None,
            sent: &again,
        };
        assert_eq!(dpop.response(&request, &ok), HookVerdict::Proceed);
        assert_eq!(
            dpop.nonces.get(ServerRole::Resource, &mcp).as_deref(),
            Some("rs-2")
        );
    }
}
