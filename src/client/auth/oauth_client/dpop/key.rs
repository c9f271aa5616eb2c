//! A DPoP key and the proofs it signs (RFC 9449 section 4): the proof's claims, its `htu`,
//! the `ath` of an access token, and the key's RFC 7638 thumbprint.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use serde::Serialize;
use sha2::{Digest, Sha256};
use url::Url;

use super::super::assertion::{JwtError, SigningKey};

/// The `typ` header of a proof.
const PROOF_TYPE: &str = "dpop+jwt";

/// A DPoP key pair: signs proofs and names itself by its public JWK and RFC 7638 thumbprint.
///
/// Give one to [`OAuthBuilder::dpop`](crate::client::auth::OAuthBuilder::dpop): generate it
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
pub(super) fn access_token_hash(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

/// The RFC 7638 SHA-256 thumbprint of a public JWK (EC, RSA or OKP), base64url.
///
/// # Errors
/// When the JWK is of a kind without a defined thumbprint.
fn jwk_thumbprint(jwk: &Jwk) -> Result<String, jsonwebtoken::errors::Error> {
    jwk.thumbprint(ThumbprintHash::SHA256)
}

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used)]

    use jsonwebtoken::{DecodingKey, Validation};

    use super::super::super::assertion::tests::p256_pem;
    use super::*;

    /// Verifies `proof` with the `jwk` of its own header and returns header and claims.
    pub(in super::super) fn verify(proof: &str) -> (jsonwebtoken::Header, serde_json::Value) {
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
}
