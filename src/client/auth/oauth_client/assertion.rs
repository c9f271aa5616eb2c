//! Signed JWTs the client makes, and the key behind them: `private_key_jwt` client
//! assertions (RFC 7523 section 2.2) and DPoP proofs ([`DpopKey`](super::DpopKey)).
//!
//! A [`SigningKey`] holds an asymmetric private key (ES256 by default; ES384, EdDSA, RS256–512
//! and PS256–512 from a PEM too). Given to a pre-registered client
//! ([`ClientRegistration::private_key`](super::ClientRegistration::private_key)), it
//! authenticates the client at the token endpoint in place of a secret
//! ([`TokenEndpointAuth::PrivateKeyJwt`](super::TokenEndpointAuth::PrivateKeyJwt)): each token
//! request carries a fresh short-lived assertion with `iss` = `sub` = the client id, `aud` =
//! the authorization server's issuer, a new `jti`, as `client_assertion` with
//! `client_assertion_type` `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`.
//!
//! Which audience: RFC 7523 lets `aud` be the token endpoint URL or the authorization
//! server's issuer identifier; its update (draft-ietf-oauth-rfc7523bis) requires the issuer,
//! and so does the MCP client-credentials extension.
//!
//! Spec: <https://www.rfc-editor.org/rfc/rfc7523#section-2.2>,
//! <https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/oauth-client-credentials.mdx>

use std::fmt;
use std::time::Duration;

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, AlgorithmFamily, EncodingKey, Header};
use serde::{Deserialize, Serialize};

/// `client_assertion_type` of a JWT client assertion (RFC 7523 section 2.2).
pub(crate) const CLIENT_ASSERTION_TYPE_JWT_BEARER: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Default lifetime of a client assertion: long enough for one token request, short enough
/// that a leaked one is soon useless. Not part of semver.
const DEFAULT_ASSERTION_LIFETIME: Duration = Duration::from_secs(60);

/// Why a JWT (a client assertion or a DPoP proof) could not be made.
///
/// Do not depend on the wording of the messages; match on the variants.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// The algorithm is not an asymmetric signature algorithm (HS256 and friends are not
    /// accepted for client assertions or DPoP).
    #[error("{0:?} is not an asymmetric signature algorithm")]
    UnsupportedAlgorithm(Algorithm),
    /// The PEM is not a private key of the algorithm's kind (an RSA key for ES256, a P-384 key
    /// for ES256, not PKCS#8, not PEM at all).
    #[error("the key is not a valid private key for {alg:?}")]
    InvalidKey {
        /// The algorithm the key was meant for.
        alg: Algorithm,
        /// What the JOSE library said.
        #[source]
        source: jsonwebtoken::errors::Error,
    },
    /// A fresh key pair could not be generated.
    #[error("could not generate a key pair")]
    KeyGeneration,
    /// Signing failed.
    #[error("could not sign the JWT")]
    Signing(#[source] jsonwebtoken::errors::Error),
    /// A URL the JWT names (a DPoP `htu`) is not an absolute `http(s)` URL.
    #[error("{0:?} is not an absolute http(s) URL")]
    InvalidUrl(String),
    /// A DPoP `htm` is not an HTTP method.
    #[error("{0:?} is not an HTTP method")]
    InvalidMethod(String),
}

/// A private key that signs JWTs: client assertions, DPoP proofs, or any claims.
///
/// `Debug` shows the algorithm and key id, never the key.
#[derive(Clone)]
pub struct SigningKey {
    key: EncodingKey,
    alg: Algorithm,
    kid: Option<String>,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A key from a PEM private key for `alg`: PKCS#8 (`BEGIN PRIVATE KEY`) for ECDSA and
    /// EdDSA, PKCS#1 or PKCS#8 for RSA. The key is checked against the algorithm here (curve,
    /// kind), so signing later cannot fail on it.
    ///
    /// # Errors
    /// [`JwtError::UnsupportedAlgorithm`] for a symmetric algorithm, [`JwtError::InvalidKey`]
    /// when the PEM is not a private key for `alg`.
    pub fn from_pem(pem: impl AsRef<[u8]>, alg: Algorithm) -> Result<Self, JwtError> {
        let pem = pem.as_ref();
        let invalid = |source| JwtError::InvalidKey { alg, source };
        let key = match alg.family() {
            AlgorithmFamily::Ec => EncodingKey::from_ec_pem(pem).map_err(invalid)?,
            AlgorithmFamily::Rsa => EncodingKey::from_rsa_pem(pem).map_err(invalid)?,
            AlgorithmFamily::Ed => EncodingKey::from_ed_pem(pem).map_err(invalid)?,
            AlgorithmFamily::Hmac => return Err(JwtError::UnsupportedAlgorithm(alg)),
        };
        let key = Self {
            key,
            alg,
            kid: None,
        };
        // Deriving the public half parses the key for `alg`: a wrong curve fails here.
        key.public_jwk()?;
        Ok(key)
    }

    /// A fresh ES256 (P-256) key.
    ///
    /// # Errors
    /// [`JwtError::KeyGeneration`] if the system's randomness or the crypto library fails.
    pub fn generate_es256() -> Result<Self, JwtError> {
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
            .map_err(|_| JwtError::KeyGeneration)?;
        let pkcs8 = pair.to_pkcs8v1().map_err(|_| JwtError::KeyGeneration)?;
        Ok(Self {
            key: EncodingKey::from_ec_der(pkcs8.as_ref()),
            alg: Algorithm::ES256,
            kid: None,
        })
    }

    /// Names the key in the JWT header (`kid`), for a server that holds several keys of this
    /// client (a `jwks` or `jwks_uri` registration).
    #[must_use]
    pub fn with_key_id(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// The algorithm this key signs with.
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// The key id sent in the header, if any.
    pub fn key_id(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// The public half as a JWK: only the public parameters (`kty`, `crv`, `x`, `y`; `n`, `e`),
    /// no `alg`, `use` or `kid`. This is what a DPoP proof carries and what a server
    /// registers for `private_key_jwt`.
    ///
    /// # Errors
    /// [`JwtError::InvalidKey`] if the key does not parse for its algorithm (only possible for
    /// a key built from DER elsewhere).
    pub fn public_jwk(&self) -> Result<Jwk, JwtError> {
        let mut jwk =
            Jwk::from_encoding_key(&self.key, self.alg).map_err(|source| JwtError::InvalidKey {
                alg: self.alg,
                source,
            })?;
        jwk.common = Default::default();
        Ok(jwk)
    }

    /// Signs `claims` as a compact JWS with header `alg`, `typ` (`"JWT"` when `None`) and the
    /// key id if set.
    pub(crate) fn sign<T: Serialize>(
        &self,
        typ: Option<&str>,
        claims: &T,
    ) -> Result<String, JwtError> {
        let mut header = self.header();
        if let Some(typ) = typ {
            header.typ = Some(typ.to_owned());
        }
        self.sign_with(&header, claims)
    }

    /// A header with this key's algorithm and id.
    pub(super) fn header(&self) -> Header {
        let mut header = Header::new(self.alg);
        header.kid.clone_from(&self.kid);
        header
    }

    /// Signs `claims` under a header the caller built (from [`header`](Self::header)).
    pub(super) fn sign_with<T: Serialize>(
        &self,
        header: &Header,
        claims: &T,
    ) -> Result<String, JwtError> {
        jsonwebtoken::encode(header, claims, &self.key).map_err(JwtError::Signing)
    }
}

/// The registered claims of an assertion JWT (RFC 7523 section 3), plus any others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct AssertionClaims {
    /// Who made the JWT: the client id for a client assertion.
    pub(crate) iss: String,
    /// Whom it is about: the client id for a client assertion.
    pub(crate) sub: String,
    /// Who must accept it: the authorization server's issuer.
    pub(crate) aud: String,
    /// Expiry, seconds since the Unix epoch.
    pub(crate) exp: u64,
    /// Issue time, seconds since the Unix epoch.
    pub(crate) iat: u64,
    /// A unique id, so the server can refuse a replay.
    pub(crate) jti: String,
    /// Further claims, flattened into the JWT.
    #[serde(flatten)]
    pub(crate) extra: serde_json::Map<String, serde_json::Value>,
}

impl AssertionClaims {
    /// Claims issued now, valid for `lifetime`, with a random `jti` and no extra claims.
    pub(crate) fn new(
        iss: impl Into<String>,
        sub: impl Into<String>,
        aud: impl Into<String>,
        lifetime: Duration,
    ) -> Self {
        let iat = jsonwebtoken::get_current_timestamp();
        Self {
            iss: iss.into(),
            sub: sub.into(),
            aud: aud.into(),
            exp: iat.saturating_add(lifetime.as_secs()),
            iat,
            jti: uuid::Uuid::new_v4().to_string(),
            extra: serde_json::Map::new(),
        }
    }
}

/// A fresh `private_key_jwt` client assertion (RFC 7523 section 2.2) for `client_id`,
/// addressed to `audience` (the authorization server's issuer), signed with `key`: `iss` =
/// `sub` = the client id, valid for a minute, with a new `jti`, so that a retried request
/// never replays one.
pub(crate) fn client_assertion(
    key: &SigningKey,
    client_id: &str,
    audience: &str,
) -> Result<String, JwtError> {
    let claims = AssertionClaims::new(client_id, client_id, audience, DEFAULT_ASSERTION_LIFETIME);
    key.sign(None, &claims)
}

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used)]

    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use jsonwebtoken::{DecodingKey, Validation};

    use super::*;

    /// A PKCS#8 DER document as a `BEGIN PRIVATE KEY` PEM.
    pub(crate) fn pem(der: &[u8]) -> String {
        let body = STANDARD.encode(der);
        let mut pem = String::from("-----BEGIN PRIVATE KEY-----\n");
        for line in body.as_bytes().chunks(64) {
            pem.push_str(std::str::from_utf8(line).unwrap());
            pem.push('\n');
        }
        pem.push_str("-----END PRIVATE KEY-----\n");
        pem
    }

    /// A fresh P-256 private key as PKCS#8 PEM, like the suite's `private_key_pem`.
    pub(crate) fn p256_pem() -> String {
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        pem(pair.to_pkcs8v1().unwrap().as_ref())
    }

    /// Decodes `jwt` with `jwk`, checking the signature and `aud`, and returns its claims.
    pub(crate) fn verify(jwt: &str, jwk: &Jwk, alg: Algorithm, aud: &str) -> serde_json::Value {
        let key = DecodingKey::from_jwk(jwk).unwrap();
        let mut validation = Validation::new(alg);
        validation.set_audience(&[aud]);
        validation.set_required_spec_claims(&["exp", "aud"]);
        jsonwebtoken::decode::<serde_json::Value>(jwt, &key, &validation)
            .unwrap()
            .claims
    }

    #[test]
    fn a_client_assertion_names_the_client_as_issuer_and_subject() {
        let key = SigningKey::from_pem(p256_pem(), Algorithm::ES256).unwrap();
        let jwk = key.public_jwk().unwrap();
        let jwt = client_assertion(&key, "conformance-test-client", "http://as.test").unwrap();
        let claims = verify(&jwt, &jwk, Algorithm::ES256, "http://as.test");

        assert_eq!(claims["iss"], "conformance-test-client");
        assert_eq!(claims["sub"], "conformance-test-client");
        assert_eq!(claims["aud"], "http://as.test");
        let iat = claims["iat"].as_u64().unwrap();
        let now = jsonwebtoken::get_current_timestamp();
        assert!(iat.abs_diff(now) <= 2);
        assert_eq!(claims["exp"].as_u64().unwrap(), iat + 60);
        assert!(!claims["jti"].as_str().unwrap().is_empty());
        let header = jsonwebtoken::decode_header(&jwt).unwrap();
        assert_eq!(header.alg, Algorithm::ES256);
        assert_eq!(header.typ.as_deref(), Some("JWT"));
    }

    #[test]
    fn each_assertion_has_its_own_jti() {
        let key = SigningKey::generate_es256().unwrap();
        let jwk = key.public_jwk().unwrap();
        let sign = || client_assertion(&key, "c", "https://as.test").unwrap();
        let first = verify(&sign(), &jwk, Algorithm::ES256, "https://as.test");
        let second = verify(&sign(), &jwk, Algorithm::ES256, "https://as.test");
        assert_ne!(first["jti"], second["jti"]);
    }

    #[test]
    fn an_rsa_key_signs_rs256() {
        use aws_lc_rs::encoding::AsDer;
        use aws_lc_rs::rsa::{KeyPair, KeySize};
        let pair = KeyPair::generate(KeySize::Rsa2048).unwrap();
        let der = AsDer::<aws_lc_rs::encoding::Pkcs8V1Der>::as_der(&pair).unwrap();
        let key = SigningKey::from_pem(pem(der.as_ref()), Algorithm::RS256)
            .unwrap()
            .with_key_id("k1");
        let jwk = key.public_jwk().unwrap();
        let jwt = client_assertion(&key, "c", "https://as.test").unwrap();
        let claims = verify(&jwt, &jwk, Algorithm::RS256, "https://as.test");
        assert_eq!(claims["iss"], "c");
        let header = jsonwebtoken::decode_header(&jwt).unwrap();
        assert_eq!(header.kid.as_deref(), Some("k1"));
    }

    #[test]
    fn keys_that_do_not_fit_the_algorithm_are_refused() {
        let p256 = p256_pem();
        assert!(matches!(
            SigningKey::from_pem(&p256, Algorithm::HS256),
            Err(JwtError::UnsupportedAlgorithm(Algorithm::HS256))
        ));
        // A P-256 key cannot sign ES384, nor be read as RSA.
        assert!(matches!(
            SigningKey::from_pem(&p256, Algorithm::ES384),
            Err(JwtError::InvalidKey { .. })
        ));
        assert!(matches!(
            SigningKey::from_pem(&p256, Algorithm::RS256),
            Err(JwtError::InvalidKey { .. })
        ));
        assert!(matches!(
            SigningKey::from_pem("not a pem", Algorithm::ES256),
            Err(JwtError::InvalidKey { .. })
        ));
    }

    #[test]
    fn the_public_jwk_has_no_private_or_optional_members() {
        let key = SigningKey::generate_es256().unwrap();
        let jwk = serde_json::to_value(key.public_jwk().unwrap()).unwrap();
        let mut names: Vec<&str> = jwk
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        assert_eq!(names, ["crv", "kty", "x", "y"]);
        assert_eq!(jwk["crv"], "P-256");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let key = SigningKey::generate_es256().unwrap();
        let shown = format!("{key:?}");
        assert!(shown.contains("ES256"));
        assert!(!shown.contains("content"));
    }

    #[test]
    fn extra_claims_are_flattened_into_a_generic_jwt() {
        let key = SigningKey::generate_es256().unwrap();
        let jwk = key.public_jwk().unwrap();
        let mut claims = AssertionClaims::new(
            "https://idp.test",
            "workload",
            "https://as.test",
            Duration::from_secs(30),
        );
        claims
            .extra
            .insert("client_id".into(), serde_json::json!("c"));
        let jwt = key.sign(Some("oauth-id-jag+jwt"), &claims).unwrap();
        let decoded = verify(&jwt, &jwk, Algorithm::ES256, "https://as.test");
        assert_eq!(decoded["client_id"], "c");
        assert_eq!(
            jsonwebtoken::decode_header(&jwt).unwrap().typ.as_deref(),
            Some("oauth-id-jag+jwt")
        );
    }
}
