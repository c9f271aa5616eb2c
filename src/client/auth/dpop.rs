//! DPoP (RFC 9449): access tokens bound to a key the client holds, proven on every request.
//!
//! The client makes a key pair ([`DpopKey`], ES256 unless built from a PEM) and sends a fresh
//! proof — a JWT signed with it, header `typ: dpop+jwt` and the public `jwk` — in the `DPoP`
//! header of each token request and each request to the resource. A proof names the request
//! (`htm`, `htu` without query or fragment), is unique (`jti`) and recent (`iat`); at the
//! resource it also carries `ath`, the hash of the access token. The authorization server
//! binds the token to the key's thumbprint (`cnf.jkt`, [`DpopKey::thumbprint`], also the
//! `dpop_jkt` authorization request parameter) and answers `token_type: "DPoP"`; the client
//! then presents it as `Authorization: DPoP <token>`.
//!
//! Either server may demand a nonce it chose: the authorization server with HTTP 400
//! `{"error":"use_dpop_nonce"}` ([`token_nonce_demand`]), the resource with HTTP 401 and
//! `WWW-Authenticate: DPoP error="use_dpop_nonce"` ([`resource_nonce_demand`]), both with the
//! nonce in the `DPoP-Nonce` header. The client retries once with a new proof carrying it, and
//! keeps using the latest nonce each server sent ([`DpopNonces`], kept per server role and
//! origin). [`Dpop`] bundles a key and its nonces, shared by the token requests of
//! the token requests of the flow and the HTTP transport.
//!
//! The MCP DPoP profile (draft) also binds a resource proof to the request body with a
//! `content_digest` claim: [`DpopKey::proof_with_body`].
//!
//! Spec: <https://www.rfc-editor.org/rfc/rfc9449>,
//! <https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/dpop-extension.mdx>

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};
use serde::Serialize;
use sha2::{Digest, Sha256};
use url::Url;

use super::assertion::{JwtError, SigningKey};

/// The header that carries a proof (case-insensitive on the wire).
pub const DPOP_HEADER: &str = "dpop";
/// The header in which a server sends a nonce (case-insensitive on the wire).
pub const DPOP_NONCE_HEADER: &str = "dpop-nonce";
/// The OAuth error code of a nonce demand.
pub const USE_DPOP_NONCE: &str = "use_dpop_nonce";
/// The `typ` header of a proof.
pub const PROOF_TYPE: &str = "dpop+jwt";

/// Longest nonce kept; a longer `DPoP-Nonce` is ignored.
const MAX_NONCE_LEN: usize = 1024;
/// Most (server role, origin) entries a [`DpopNonces`] keeps; past that, one is dropped.
const MAX_NONCE_ENTRIES: usize = 64;

/// A DPoP key pair: signs proofs and names itself by its public JWK and RFC 7638 thumbprint.
///
/// Generate one per client ([`generate`](Self::generate)) or load a persistent one
/// ([`from_pem`](Self::from_pem)); a token is only usable with the key it was bound to, so a
/// client that stores tokens across runs must store the key too. `Debug` shows the algorithm
/// and thumbprint, never the key.
///
/// ```
/// use actix_mcp::client::auth::dpop::DpopKey;
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

/// The claims of a proof (RFC 9449 §4.2), plus the MCP profile's `content_digest`.
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
    #[serde(skip_serializing_if = "Option::is_none")]
    content_digest: Option<String>,
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
    /// dropped, as RFC 9449 §4.2 requires). Give the server's `nonce` when it demanded one,
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
        self.sign_proof(htm, htu, nonce, access_token, None)
    }

    /// [`proof`](Self::proof) plus the MCP DPoP profile's `content_digest` claim
    /// (`sha-256=:<base64 of SHA-256(body)>:`, RFC 9530 syntax), binding the proof to this
    /// request body. Only for requests to the MCP server, not to the token endpoint.
    ///
    /// # Errors
    /// As [`proof`](Self::proof).
    pub fn proof_with_body(
        &self,
        htm: &str,
        htu: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
        body: &[u8],
    ) -> Result<String, JwtError> {
        self.sign_proof(htm, htu, nonce, access_token, Some(content_digest(body)))
    }

    fn sign_proof(
        &self,
        htm: &str,
        htu: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
        content_digest: Option<String>,
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
            content_digest,
        };
        let mut header = self.key.header();
        header.typ = Some(PROOF_TYPE.to_owned());
        header.kid = None;
        header.jwk = Some(self.jwk.clone());
        self.key.sign_with(&header, &claims)
    }
}

/// The `htu` of a proof for `url`: the absolute `http(s)` URL without query, fragment or user
/// info (RFC 9449 §4.2: the HTTP target URI without query and fragment).
///
/// # Errors
/// [`JwtError::InvalidUrl`] if `url` is not an absolute `http` or `https` URL.
pub fn normalize_htu(url: &str) -> Result<String, JwtError> {
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
/// (RFC 9449 §4.2).
pub fn access_token_hash(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

/// The MCP DPoP profile's `content_digest` of a body: `sha-256=:<standard base64>:`.
pub fn content_digest(body: &[u8]) -> String {
    format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body)))
}

/// The RFC 7638 SHA-256 thumbprint of a public JWK (EC, RSA or OKP), base64url.
///
/// # Errors
/// When the JWK is of a kind without a defined thumbprint.
pub fn jwk_thumbprint(jwk: &Jwk) -> Result<String, jsonwebtoken::errors::Error> {
    jwk.thumbprint(ThumbprintHash::SHA256)
}

/// Which server a nonce came from: each keeps its own (RFC 9449 §8, §9), even when both share
/// an origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerRole {
    /// The authorization server (its token endpoint).
    Authorization,
    /// The resource server (the MCP server).
    Resource,
}

/// The latest DPoP nonce each server sent, by server role and origin (scheme, host, port).
///
/// Record every response's `DPoP-Nonce` with [`observe`](Self::observe) — a server may hand out
/// a new one on any response — and put [`get`](Self::get) into the next proof to that server.
/// Bounded: holds at most a few dozen servers. Thread-safe; `Debug` shows only the count.
#[derive(Default)]
pub struct DpopNonces {
    nonces: Mutex<HashMap<(ServerRole, String), String>>,
}

impl fmt::Debug for DpopNonces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.lock().len();
        f.debug_struct("DpopNonces")
            .field("servers", &count)
            .finish()
    }
}

impl DpopNonces {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(ServerRole, String), String>> {
        self.nonces.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The nonce to send to `role` at `url`'s origin, if that server gave one.
    pub fn get(&self, role: ServerRole, url: &Url) -> Option<String> {
        self.lock()
            .get(&(role, url.origin().ascii_serialization()))
            .cloned()
    }

    /// Remembers `nonce` for `role` at `url`'s origin. Returns `false` (and keeps nothing) when
    /// the nonce is not valid RFC 9449 §8.1 syntax or is over 1 KiB.
    pub fn set(&self, role: ServerRole, url: &Url, nonce: &str) -> bool {
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

    /// Records the `DPoP-Nonce` of a response from `role` at `url`, if it has a valid one, and
    /// returns it.
    pub fn observe(&self, role: ServerRole, url: &Url, headers: &HeaderMap) -> Option<String> {
        let nonce = nonce_header(headers)?;
        self.set(role, url, nonce).then(|| nonce.to_owned())
    }

    /// Forgets every nonce.
    pub fn clear(&self) {
        self.lock().clear();
    }
}

/// A DPoP key with its nonce cache: what a client shares between its token requests and its
/// HTTP transport. Cheap to clone (one `Arc`).
///
/// ```
/// use actix_mcp::client::auth::dpop::{Dpop, ServerRole};
/// use url::Url;
///
/// let dpop = Dpop::generate()?;
/// let mcp = Url::parse("https://mcp.example.com/mcp").unwrap();
/// let proof = dpop.proof_for(ServerRole::Resource, "POST", &mcp, Some("access-token"))?;
/// // Send `Authorization: DPoP access-token` and `DPoP: {proof}`, then record the answer's
/// // nonce with `dpop.nonces().observe(ServerRole::Resource, &mcp, response.headers())`.
/// # let _ = proof;
/// # Ok::<(), actix_mcp::client::auth::JwtError>(())
/// ```
#[derive(Clone)]
pub struct Dpop {
    inner: Arc<DpopInner>,
}

struct DpopInner {
    key: DpopKey,
    nonces: DpopNonces,
}

impl fmt::Debug for Dpop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dpop")
            .field("key", &self.inner.key)
            .field("nonces", &self.inner.nonces)
            .finish()
    }
}

impl Dpop {
    /// Proofs signed with `key`, no nonces known yet.
    pub fn new(key: DpopKey) -> Self {
        Self {
            inner: Arc::new(DpopInner {
                key,
                nonces: DpopNonces::new(),
            }),
        }
    }

    /// A fresh ES256 key ([`DpopKey::generate`]).
    ///
    /// # Errors
    /// [`JwtError::KeyGeneration`] if the crypto library fails.
    pub fn generate() -> Result<Self, JwtError> {
        Ok(Self::new(DpopKey::generate()?))
    }

    /// The key.
    pub fn key(&self) -> &DpopKey {
        &self.inner.key
    }

    /// The nonces servers sent.
    pub fn nonces(&self) -> &DpopNonces {
        &self.inner.nonces
    }

    /// A fresh proof for a request to `role` at `url`, carrying the nonce that server last
    /// sent, if any.
    ///
    /// # Errors
    /// As [`DpopKey::proof`].
    pub fn proof_for(
        &self,
        role: ServerRole,
        htm: &str,
        url: &Url,
        access_token: Option<&str>,
    ) -> Result<String, JwtError> {
        let nonce = self.inner.nonces.get(role, url);
        self.inner
            .key
            .proof(htm, url.as_str(), nonce.as_deref(), access_token)
    }

    /// [`proof_for`](Self::proof_for) with the MCP profile's `content_digest` of `body`.
    ///
    /// # Errors
    /// As [`DpopKey::proof`].
    pub fn proof_for_body(
        &self,
        role: ServerRole,
        htm: &str,
        url: &Url,
        access_token: Option<&str>,
        body: &[u8],
    ) -> Result<String, JwtError> {
        let nonce = self.inner.nonces.get(role, url);
        self.inner
            .key
            .proof_with_body(htm, url.as_str(), nonce.as_deref(), access_token, body)
    }
}

/// Whether `nonce` is RFC 9449 §8.1 `1*NQCHAR` (visible ASCII but `"` and `\`) and short.
fn is_valid_nonce(nonce: &str) -> bool {
    !nonce.is_empty()
        && nonce.len() <= MAX_NONCE_LEN
        && nonce
            .bytes()
            .all(|byte| matches!(byte, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

/// The `DPoP-Nonce` header of a response, when there is exactly one and it is valid.
pub fn nonce_header(headers: &HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(DPOP_NONCE_HEADER).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    let nonce = value.to_str().ok()?.trim();
    is_valid_nonce(nonce).then_some(nonce)
}

/// The nonce a token endpoint demands: `Some` when the response is a client error whose
/// OAuth error body says `use_dpop_nonce` (RFC 9449 §8, HTTP 400) and carries a valid
/// `DPoP-Nonce` header.
pub fn token_nonce_demand(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Option<String> {
    if !status.is_client_error() {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        error: String,
    }
    let parsed: ErrorBody = serde_json::from_slice(body).ok()?;
    if parsed.error != USE_DPOP_NONCE {
        return None;
    }
    nonce_header(headers).map(str::to_owned)
}

/// The nonce a resource demands: `Some` when the response is HTTP 401 with a
/// `WWW-Authenticate: DPoP` challenge whose `error` is `use_dpop_nonce` (RFC 9449 §9) and a
/// valid `DPoP-Nonce` header. Such a 401 asks for a retry with the nonce, not for a new token.
pub fn resource_nonce_demand(status: StatusCode, headers: &HeaderMap) -> Option<String> {
    if status != StatusCode::UNAUTHORIZED {
        return None;
    }
    let challenge = dpop_challenge(headers)?;
    if challenge.error.as_deref() != Some(USE_DPOP_NONCE) {
        return None;
    }
    nonce_header(headers).map(str::to_owned)
}

/// A `WWW-Authenticate: DPoP` challenge (RFC 9449 §7.1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DpopChallenge {
    /// `error`, e.g. `invalid_token`, `invalid_dpop_proof`, `use_dpop_nonce`.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
    /// `algs`: the proof algorithms the resource accepts, space-separated on the wire.
    pub algs: Vec<String>,
    /// Every parameter, names lowercased, in order (`resource_metadata`, `scope`, `realm`…).
    pub params: Vec<(String, String)>,
}

impl DpopChallenge {
    /// The value of parameter `name` (case-insensitive).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// The first `DPoP` challenge among a response's `WWW-Authenticate` headers, which may hold
/// several challenges each (`Bearer realm="x", DPoP algs="ES256"`).
pub fn dpop_challenge(headers: &HeaderMap) -> Option<DpopChallenge> {
    headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(parse_challenges)
        .find(|(scheme, _)| scheme.eq_ignore_ascii_case("DPoP"))
        .map(|(_, params)| {
            let get = |name: &str| {
                params
                    .iter()
                    .find(|(key, _)| key == name)
                    .map(|(_, value)| value.clone())
            };
            DpopChallenge {
                error: get("error"),
                error_description: get("error_description"),
                algs: get("algs")
                    .map(|algs| algs.split_ascii_whitespace().map(str::to_owned).collect())
                    .unwrap_or_default(),
                params,
            }
        })
}

/// The challenges of one `WWW-Authenticate` value (RFC 9110 §11.6.1): each scheme with its
/// auth-params (names lowercased). A token68 is skipped; a malformed part ends the parse.
fn parse_challenges(value: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut cursor = Cursor {
        bytes: value.as_bytes(),
        pos: 0,
    };
    let mut challenges = Vec::new();
    loop {
        cursor.skip(|byte| byte == b',' || is_space(byte));
        let Some(scheme) = cursor.token() else {
            break;
        };
        let mut params = Vec::new();
        cursor.skip(is_space);
        loop {
            let start = cursor.pos;
            let Some(name) = cursor.token() else {
                // A token68 (or garbage): skip to the next comma.
                cursor.skip(|byte| byte != b',');
                break;
            };
            cursor.skip(is_space);
            if !cursor.eat(b'=') {
                // `name` is the next challenge's scheme.
                cursor.pos = start;
                break;
            }
            cursor.skip(is_space);
            let value = if cursor.peek() == Some(b'"') {
                cursor.quoted()
            } else {
                cursor.token()
            };
            let Some(value) = value else {
                // `token68=` padding or a malformed value: give up on this challenge.
                cursor.skip(|byte| byte != b',');
                break;
            };
            params.push((name.to_ascii_lowercase(), value));
            cursor.skip(is_space);
            if !cursor.eat(b',') {
                break;
            }
            cursor.skip(|byte| byte == b',' || is_space(byte));
        }
        challenges.push((scheme, params));
        if cursor.peek().is_none() {
            break;
        }
    }
    challenges
}

fn is_space(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

/// RFC 9110 `tchar`.
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// A position in a header value; every step consumes at least one byte or returns `None`, so
/// parsing is linear.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let matched = self.peek() == Some(byte);
        if matched {
            self.pos += 1;
        }
        matched
    }

    fn skip(&mut self, while_: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&while_) {
            self.pos += 1;
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.pos;
        self.skip(is_tchar);
        (self.pos > start)
            .then(|| String::from_utf8_lossy(&self.bytes[start..self.pos]).into_owned())
    }

    /// A quoted-string, unescaped; `None` when unterminated.
    fn quoted(&mut self) -> Option<String> {
        self.pos += 1;
        let mut out = Vec::new();
        while let Some(byte) = self.peek() {
            self.pos += 1;
            match byte {
                b'"' => return Some(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    if let Some(escaped) = self.peek() {
                        self.pos += 1;
                        out.push(escaped);
                    }
                }
                _ => out.push(byte),
            }
        }
        None
    }
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

    #[test]
    fn content_digest_uses_standard_base64_in_structured_field_syntax() {
        // RFC 9530 §2: SHA-256 of `{"hello": "world"}`.
        assert_eq!(
            content_digest(b"{\"hello\": \"world\"}"),
            "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"
        );
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof_with_body("POST", "https://mcp.test/mcp", None, Some("t"), b"{}")
            .unwrap();
        assert_eq!(verify(&proof).1["content_digest"], content_digest(b"{}"));
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
        let nonces = DpopNonces::new();
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

        let observed = nonces.observe(
            ServerRole::Resource,
            &mcp,
            &headers(&[("DPoP-Nonce", "rs-1")]),
        );
        assert_eq!(observed.as_deref(), Some("rs-1"));
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
        let nonces = DpopNonces::new();
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
    fn a_dpop_handle_puts_the_servers_nonce_into_its_proofs() {
        let dpop = Dpop::generate().unwrap();
        let token = Url::parse("http://127.0.0.1:9/token").unwrap();
        let (_, claims) = verify(
            &dpop
                .proof_for(ServerRole::Authorization, "POST", &token, None)
                .unwrap(),
        );
        assert!(claims.get("nonce").is_none());
        dpop.nonces().set(
            ServerRole::Authorization,
            &token,
            "conformance-as-dpop-nonce",
        );
        let (_, claims) = verify(
            &dpop
                .proof_for(ServerRole::Authorization, "POST", &token, None)
                .unwrap(),
        );
        assert_eq!(claims["nonce"], "conformance-as-dpop-nonce");
        // The resource has its own nonce.
        let (_, claims) = verify(
            &dpop
                .proof_for_body(ServerRole::Resource, "POST", &token, Some("t"), b"{}")
                .unwrap(),
        );
        assert!(claims.get("nonce").is_none());
    }

    #[test]
    fn a_token_endpoint_nonce_demand_is_recognised() {
        let nonce = headers(&[("dpop-nonce", "conformance-as-dpop-nonce")]);
        let body = br#"{"error":"use_dpop_nonce","error_description":"Authorization server requires a DPoP nonce"}"#;
        assert_eq!(
            token_nonce_demand(StatusCode::BAD_REQUEST, &nonce, body).as_deref(),
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
            resource_nonce_demand(StatusCode::UNAUTHORIZED, &demand).as_deref(),
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
        assert_eq!(
            dpop_challenge(&first).unwrap().param("resource_metadata"),
            Some("http://x/prm")
        );

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
    fn challenges_are_split_correctly() {
        let several = headers(&[(
            "www-authenticate",
            r#"Basic abc==, Bearer realm="a, b", scope="x y", DPoP algs="ES256 PS256", error="use_dpop_nonce", error_description="say \"hi\"""#,
        )]);
        let challenge = dpop_challenge(&several).unwrap();
        assert_eq!(challenge.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(challenge.algs, ["ES256", "PS256"]);
        assert_eq!(challenge.error_description.as_deref(), Some("say \"hi\""));
        let all = parse_challenges(several["www-authenticate"].to_str().unwrap());
        let schemes: Vec<&str> = all.iter().map(|(scheme, _)| scheme.as_str()).collect();
        assert_eq!(schemes, ["Basic", "Bearer", "DPoP"]);
        assert_eq!(
            all[1].1,
            [
                ("realm".to_owned(), "a, b".to_owned()),
                ("scope".to_owned(), "x y".to_owned())
            ]
        );

        // Separate header lines, token values, odd spacing, case.
        let split = headers(&[
            ("www-authenticate", "Bearer"),
            (
                "www-authenticate",
                "dpop  ERROR = use_dpop_nonce ,algs=ES256",
            ),
        ]);
        let challenge = dpop_challenge(&split).unwrap();
        assert_eq!(challenge.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(challenge.algs, ["ES256"]);

        // Garbage never panics.
        for junk in [
            "",
            ",,,",
            "DPoP error=\"unterminated",
            "= = =",
            "DPoP ,=,",
            "\"\"",
        ] {
            let _ = parse_challenges(junk);
        }
        assert_eq!(
            dpop_challenge(&headers(&[("www-authenticate", "DPoP error=\"x")]))
                .unwrap()
                .error,
            None
        );
    }
}
