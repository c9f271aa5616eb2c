//! [`JwtValidator`]: JWT access tokens verified against the authorization server's JWKS.
//!
//! A token without a key id (`kid`) is tried against the first four keys of the set whose type
//! and algorithm fit it, in the set's order, and no more: name the key in tokens when the set
//! holds more keys of one algorithm.
//!
//! A token typed in its JOSE header (`typ`) must be typed `at+jwt` (or `application/at+jwt`,
//! RFC 9068 §4), unless [`accept_token_type`](JwtValidatorBuilder::accept_token_type) admits
//! another type: an ID token or a logout token of the same issuer is not an access token. A
//! token without `typ` is accepted.
//!
//! The key set is fetched on first use and cached; it is fetched again every
//! [`refresh_interval`](JwtValidatorBuilder::refresh_interval), and at once when a token names
//! a key id the cache does not hold (key rotation), at most once per
//! [`min_refresh_interval`](JwtValidatorBuilder::min_refresh_interval). A failed refresh keeps
//! the keys it had. One refresh runs at a time; requests arriving meanwhile wait for it and use
//! its result.

use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::future::BoxFuture;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::{Map, Value};
use tokio::time::Instant;
use url::Url;

use super::fetch;
use super::{AuthConfigError, AuthError, Identity, TokenValidator};

/// The longest token looked at; a longer one is refused unparsed.
const MAX_TOKEN_LEN: usize = 16 * 1024;

/// The most keys a token's signature is tried against: those of its key id (normally one) or,
/// for a token without `kid`, the first keys of the set whose type and algorithm fit it. A key
/// set of many keys does not make a token without `kid` cost as many verifications.
const MAX_CANDIDATE_KEYS: usize = 4;

/// Why a token without `kid` is refused when no key verifies it.
const UNNAMED_KEY_NOT_FOUND: &str = "no key of the issuer verifies the token (without `kid`, \
                                     only the first 4 keys of its algorithm are tried)";

/// The longest interval or leeway honoured (longer ones are cut to it): a year.
pub(super) const MAX_INTERVAL: Duration = Duration::from_secs(365 * 24 * 3600);

/// The algorithms allowed by default: every asymmetric one.
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Validates JWT access tokens: the signature against the issuer's JWKS, then `iss`, `aud`,
/// `exp` and `nbf` (with a small leeway). Cheap to clone; clones share the key cache.
///
/// ```
/// use std::time::Duration;
/// use actix_mcp::server::auth::JwtValidator;
///
/// let validator = JwtValidator::builder("https://auth.example.com/.well-known/jwks.json")
///     .issuer("https://auth.example.com")
///     .audience("https://mcp.example.com/mcp")
///     .leeway(Duration::from_secs(30))
///     .build()?;
/// # Ok::<(), actix_mcp::server::auth::AuthConfigError>(())
/// ```
#[derive(Clone)]
pub struct JwtValidator {
    inner: Arc<JwtInner>,
}

struct JwtInner {
    jwks_uri: Url,
    issuer: String,
    audience: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    refresh_interval: Duration,
    min_refresh_interval: Duration,
    fetch_timeout: Duration,
    max_jwks_bytes: usize,
    /// The accepted `typ` values, as [`media_type`] gives them.
    token_types: Vec<String>,
    http: reqwest::Client,
    keys: RwLock<Arc<KeySet>>,
    /// Held while the key set is fetched: one fetch at a time.
    refreshing: tokio::sync::Mutex<()>,
}

/// The cached key set, replaced as a whole.
#[derive(Default)]
struct KeySet {
    keys: Arc<Vec<CachedKey>>,
    /// When the last fetch was tried (successful or not).
    attempted: Option<Instant>,
    /// When the set is due for a refresh.
    due: Option<Instant>,
}

struct CachedKey {
    kid: Option<String>,
    family: AlgorithmFamily,
    /// The key's `alg`, when the JWKS pins one.
    alg: Option<Algorithm>,
    key: DecodingKey,
}

impl fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys = self.snapshot();
        f.debug_struct("JwtValidator")
            .field("jwks_uri", &self.inner.jwks_uri.as_str())
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .field("algorithms", &self.inner.algorithms)
            .field("cached_keys", &keys.keys.len())
            .finish()
    }
}

/// Builds a [`JwtValidator`]; see [`JwtValidator::builder`]. Defaults are not part of semver.
#[must_use]
#[derive(Debug)]
pub struct JwtValidatorBuilder {
    jwks_uri: String,
    issuer: Option<String>,
    audience: Vec<String>,
    algorithms: Option<Vec<String>>,
    leeway: Duration,
    refresh_interval: Duration,
    min_refresh_interval: Duration,
    fetch_timeout: Duration,
    max_jwks_bytes: usize,
    token_types: Vec<String>,
    allow_http: bool,
    http: Option<reqwest::Client>,
}

/// The `typ` of a JWT access token (RFC 9068 §2.1), as [`media_type`] gives it.
const ACCESS_TOKEN_TYPE: &str = "at+jwt";

/// A JOSE `typ` as compared: in lower case, without the `application/` prefix RFC 7515 §4.1.9
/// lets it omit.
fn media_type(typ: &str) -> String {
    let typ = typ.trim().to_ascii_lowercase();
    match typ.strip_prefix("application/") {
        Some(short) => short.to_owned(),
        None => typ,
    }
}

impl JwtValidator {
    /// Starts a validator for tokens signed by the keys published at `jwks_uri` (the
    /// authorization server's `jwks_uri` metadata). An issuer and an audience are required.
    pub fn builder(jwks_uri: impl Into<String>) -> JwtValidatorBuilder {
        JwtValidatorBuilder {
            jwks_uri: jwks_uri.into(),
            issuer: None,
            audience: Vec::new(),
            algorithms: None,
            leeway: Duration::from_secs(30),
            refresh_interval: Duration::from_secs(15 * 60),
            min_refresh_interval: Duration::from_secs(30),
            fetch_timeout: Duration::from_secs(5),
            max_jwks_bytes: 256 * 1024,
            token_types: vec![ACCESS_TOKEN_TYPE.to_owned()],
            allow_http: false,
            http: None,
        }
    }

    fn snapshot(&self) -> Arc<KeySet> {
        self.inner
            .keys
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn store(&self, keys: KeySet) -> Arc<KeySet> {
        let keys = Arc::new(keys);
        *self
            .inner
            .keys
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = keys.clone();
        keys
    }

    /// The key set to verify with: the cached one, refreshed first when it is due. A failed
    /// refresh keeps the keys there are; without any, the token cannot be checked.
    async fn current_keys(&self) -> Result<Arc<KeySet>, AuthError> {
        let keys = self.snapshot();
        if keys.due.is_some_and(|due| Instant::now() < due) {
            return Ok(keys);
        }
        match self.refresh(&keys).await {
            Ok(fresh) => Ok(fresh),
            Err(err) if !keys.keys.is_empty() => {
                tracing::warn!(%err, jwks_uri = %self.inner.jwks_uri, "JWKS refresh failed; using the cached keys");
                Ok(keys)
            }
            Err(err) => Err(err),
        }
    }

    /// Fetches the key set again, unless another caller replaced `seen` meanwhile (then its
    /// result is used).
    async fn refresh(&self, seen: &Arc<KeySet>) -> Result<Arc<KeySet>, AuthError> {
        let _one_at_a_time = self.inner.refreshing.lock().await;
        let current = self.snapshot();
        if !Arc::ptr_eq(&current, seen) {
            return Ok(current);
        }
        let now = Instant::now();
        let request = self
            .inner
            .http
            .get(self.inner.jwks_uri.clone())
            .timeout(self.inner.fetch_timeout)
            .header(reqwest::header::ACCEPT, "application/json");
        let fetched = fetch::json_object("JWKS", request, self.inner.max_jwks_bytes)
            .await
            .and_then(|document| parse_jwks(&document));
        match fetched {
            Ok(keys) => {
                tracing::debug!(keys = keys.len(), jwks_uri = %self.inner.jwks_uri, "fetched the JWKS");
                Ok(self.store(KeySet {
                    keys: Arc::new(keys),
                    attempted: Some(now),
                    due: Some(now + self.inner.refresh_interval),
                }))
            }
            Err(err) => {
                // Keep the keys; try again no sooner than the minimum interval.
                self.store(KeySet {
                    keys: current.keys.clone(),
                    attempted: Some(now),
                    due: Some(now + self.inner.min_refresh_interval),
                });
                Err(err)
            }
        }
    }

    /// Refreshes for a key id the set lacks, unless the set was fetched less than the minimum
    /// interval ago. `None` when no refresh was allowed.
    async fn refresh_for_unknown_key(
        &self,
        keys: &Arc<KeySet>,
    ) -> Result<Option<Arc<KeySet>>, AuthError> {
        let recent = keys
            .attempted
            .is_some_and(|at| at.elapsed() < self.inner.min_refresh_interval);
        if recent {
            return Ok(None);
        }
        self.refresh(keys).await.map(Some)
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.leeway = self.inner.leeway.as_secs();
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.set_issuer(&[&self.inner.issuer]);
        validation.set_audience(&self.inner.audience);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation
    }

    async fn check(&self, token: &str) -> Result<Identity, AuthError> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(AuthError::invalid_token("the token is too long"));
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            AuthError::invalid_token(
                "the token is not a well-formed JWT with a supported algorithm",
            )
        })?;
        if let Some(typ) = &header.typ
            && !self.inner.token_types.contains(&media_type(typ))
        {
            return Err(AuthError::invalid_token(
                "the token is not typed as an access token (its `typ` is not `at+jwt`)",
            ));
        }
        let alg = header.alg;
        if !self.inner.algorithms.contains(&alg) {
            return Err(AuthError::invalid_token(format!(
                "the algorithm {alg:?} is not accepted"
            )));
        }
        let mut keys = self.current_keys().await?;
        if keys.keys.is_empty() {
            // The key set could not be fetched yet (and is not retried before its time).
            return Err(AuthError::unavailable(
                "no signing keys: the JWKS could not be fetched",
            ));
        }
        if header.kid.is_some() && matching(&keys, header.kid.as_deref(), alg).next().is_none() {
            // Perhaps a rotated key: look again, if the set is not brand new.
            if let Some(fresh) = self.refresh_for_unknown_key(&keys).await? {
                keys = fresh;
            }
        }
        let validation = self.validation(alg);
        let mut outcome = Err(AuthError::invalid_token(match header.kid {
            Some(_) => "the token's key id is unknown",
            None => UNNAMED_KEY_NOT_FOUND,
        }));
        let candidates = matching(&keys, header.kid.as_deref(), alg).take(MAX_CANDIDATE_KEYS);
        for candidate in candidates {
            match jsonwebtoken::decode::<Map<String, Value>>(token, &candidate.key, &validation) {
                Ok(data) => {
                    let identity = Identity::from_claims(data.claims);
                    identity.check_usable()?;
                    return Ok(identity);
                }
                // Without a key id the next candidate may be the one.
                Err(err) if *err.kind() == ErrorKind::InvalidSignature => {
                    outcome = Err(match header.kid {
                        Some(_) => describe(err.kind()),
                        None => AuthError::invalid_token(UNNAMED_KEY_NOT_FOUND),
                    });
                }
                Err(err) => return Err(describe(err.kind())),
            }
        }
        outcome
    }
}

/// The cached keys that may verify a token with this key id (any, without one) and algorithm.
fn matching<'a>(
    keys: &'a KeySet,
    kid: Option<&'a str>,
    alg: Algorithm,
) -> impl Iterator<Item = &'a CachedKey> {
    keys.keys.iter().filter(move |key| {
        kid.is_none_or(|kid| key.kid.as_deref() == Some(kid))
            && key.family == alg.family()
            && key.alg.is_none_or(|pinned| pinned == alg)
    })
}

/// What a verification failure is called in `error_description`.
fn describe(kind: &ErrorKind) -> AuthError {
    let text = match kind {
        ErrorKind::ExpiredSignature => "the token has expired".to_owned(),
        ErrorKind::ImmatureSignature => "the token is not valid yet".to_owned(),
        ErrorKind::InvalidAudience => "the token was not issued for this server".to_owned(),
        ErrorKind::InvalidIssuer => "the token comes from another issuer".to_owned(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".to_owned(),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key".to_owned(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        ErrorKind::InvalidClaimFormat(claim) => format!("the token's `{claim}` claim is malformed"),
        _ => "the token is malformed".to_owned(),
    };
    AuthError::InvalidToken(text)
}

/// The signing keys of a JWKS document. Symmetric keys (`kty: oct`), encryption keys and keys
/// this library cannot use are skipped.
fn parse_jwks(document: &Map<String, Value>) -> Result<Vec<CachedKey>, AuthError> {
    let Some(Value::Array(entries)) = document.get("keys") else {
        return Err(AuthError::unavailable("the JWKS has no `keys` array"));
    };
    let keys: Vec<CachedKey> = entries.iter().filter_map(signing_key).collect();
    if keys.is_empty() {
        return Err(AuthError::unavailable(
            "the JWKS holds no usable signing key",
        ));
    }
    Ok(keys)
}

fn signing_key(entry: &Value) -> Option<CachedKey> {
    let jwk: Jwk = serde_json::from_value(entry.clone()).ok()?;
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return None;
    }
    let family = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => AlgorithmFamily::Rsa,
        AlgorithmParameters::EllipticCurve(_) => AlgorithmFamily::Ec,
        AlgorithmParameters::OctetKeyPair(_) => AlgorithmFamily::Ed,
        // Never a shared secret: anyone who can read the JWKS could sign with it.
        _ => return None,
    };
    let alg = match jwk.common.key_algorithm {
        None => None,
        Some(pinned) => {
            let alg = Algorithm::try_from(pinned).ok()?;
            if alg.family() != family {
                return None;
            }
            Some(alg)
        }
    };
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    Some(CachedKey {
        kid: jwk.common.key_id,
        family,
        alg,
        key,
    })
}

impl TokenValidator for JwtValidator {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
        Box::pin(self.check(token))
    }
}

/// Parses the allowed algorithm names, refusing `none` and the HMAC ones.
fn parse_algorithms(names: &[String]) -> Result<Vec<Algorithm>, AuthConfigError> {
    if names.is_empty() {
        return Err(AuthConfigError::NoAlgorithms);
    }
    names
        .iter()
        .map(|name| {
            name.parse::<Algorithm>()
                .ok()
                .filter(|alg| alg.family() != AlgorithmFamily::Hmac)
                .ok_or_else(|| AuthConfigError::Algorithm(name.clone()))
        })
        .collect()
}

impl JwtValidatorBuilder {
    /// The issuer tokens must come from (`iss`, exactly). Required.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// An audience tokens may be issued for (`aud` must contain one of them): this server's
    /// resource URL, as clients name it in their `resource` parameter (RFC 8707). Required;
    /// call again to accept several.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience.push(audience.into());
        self
    }

    /// The signature algorithms accepted, by JOSE name (default: `RS256`, `RS384`, `RS512`,
    /// `PS256`, `PS384`, `PS512`, `ES256`, `ES384`, `EdDSA`). `none` and the HMAC algorithms
    /// (`HS256`, ...) are refused by [`build`](Self::build): a JWKS is public.
    pub fn algorithms<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.algorithms = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Clock skew tolerated on `exp` and `nbf` (default 30 s; whole seconds).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.min(MAX_INTERVAL);
        self
    }

    /// How long the fetched key set is used before it is fetched again (default 15 min; at
    /// most a year).
    pub fn refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval.min(MAX_INTERVAL);
        self
    }

    /// The least time between two fetches of the key set (default 30 s): a token with an
    /// unknown key id triggers a fetch only when the last one is older; a failed fetch is
    /// retried after it. At most a year.
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.min_refresh_interval = interval.min(MAX_INTERVAL);
        self
    }

    /// Time limit of one key set fetch (default 5 s).
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = timeout.min(MAX_INTERVAL);
        self
    }

    /// Largest key set accepted, in bytes (default 256 KiB).
    pub fn max_jwks_size(mut self, bytes: usize) -> Self {
        self.max_jwks_bytes = bytes;
        self
    }

    /// Also accepts tokens whose JOSE header names this type (`typ`, compared without case and
    /// with or without `application/`), for an authorization server that does not type its
    /// access tokens `at+jwt` (RFC 9068), e.g. `JWT`. By default only `at+jwt` is accepted, and
    /// tokens without `typ`. Accepting a generic type such as `JWT` lets the issuer's other
    /// tokens of that type through when their audience is this server; call again for more.
    pub fn accept_token_type(mut self, typ: impl AsRef<str>) -> Self {
        self.token_types.push(media_type(typ.as_ref()));
        self
    }

    /// Accepts a plain `http` JWKS URI to a host that is not loopback (default off: `https`,
    /// or `http` to `localhost`, `127.0.0.1` or `[::1]`). Whoever can alter the key set can
    /// mint tokens: allow it only inside a trusted network.
    pub fn allow_http(mut self, allow: bool) -> Self {
        self.allow_http = allow;
        self
    }

    /// Fetches with this client (custom TLS roots, proxies) instead of the validator's own
    /// (which follows no redirects). The fetch timeout still applies to each fetch.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Checks the settings and builds the validator. Nothing is fetched yet.
    ///
    /// # Errors
    /// An invalid or insecure JWKS URI, no issuer, no audience, an empty or forbidden
    /// algorithm list, or an HTTP client that cannot be built.
    pub fn build(self) -> Result<JwtValidator, AuthConfigError> {
        let jwks_uri = fetch::parse_url("JWKS URI", &self.jwks_uri, self.allow_http)?;
        let issuer = self
            .issuer
            .filter(|issuer| !issuer.is_empty())
            .ok_or(AuthConfigError::MissingIssuer)?;
        if self.audience.iter().all(String::is_empty) {
            return Err(AuthConfigError::MissingAudience);
        }
        let algorithms = match &self.algorithms {
            Some(names) => parse_algorithms(names)?,
            None => DEFAULT_ALGORITHMS.to_vec(),
        };
        let http = match self.http {
            Some(client) => client,
            None => fetch::client(self.fetch_timeout)?,
        };
        Ok(JwtValidator {
            inner: Arc::new(JwtInner {
                jwks_uri,
                issuer,
                audience: self
                    .audience
                    .into_iter()
                    .filter(|a| !a.is_empty())
                    .collect(),
                algorithms,
                leeway: self.leeway,
                refresh_interval: self.refresh_interval,
                min_refresh_interval: self.min_refresh_interval,
                fetch_timeout: self.fetch_timeout,
                max_jwks_bytes: self.max_jwks_bytes,
                token_types: self.token_types,
                http,
                keys: RwLock::default(),
                refreshing: tokio::sync::Mutex::new(()),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn builder() -> JwtValidatorBuilder {
        JwtValidator::builder("https://as.example.com/jwks")
            .issuer("https://as.example.com")
            .audience("https://mcp.example.com/mcp")
    }

    #[test]
    fn settings_that_cannot_be_safe_are_refused_at_build() {
        assert!(builder().build().is_ok());
        for alg in ["HS256", "HS512", "none", "XS1"] {
            assert_eq!(
                builder().algorithms([alg]).build().err(),
                Some(AuthConfigError::Algorithm(alg.into()))
            );
        }
        assert_eq!(
            builder().algorithms(Vec::<String>::new()).build().err(),
            Some(AuthConfigError::NoAlgorithms)
        );
        let no_audience = JwtValidator::builder("https://as.example.com/jwks").issuer("x");
        assert_eq!(
            no_audience.build().err(),
            Some(AuthConfigError::MissingAudience)
        );
        let no_issuer = JwtValidator::builder("https://as.example.com/jwks").audience("x");
        assert_eq!(
            no_issuer.build().err(),
            Some(AuthConfigError::MissingIssuer)
        );
        let insecure = JwtValidator::builder("http://as.example.com/jwks")
            .issuer("x")
            .audience("y");
        assert!(matches!(
            insecure.build(),
            Err(AuthConfigError::InsecureUrl { .. })
        ));
    }

    #[test]
    fn the_refusal_of_a_token_without_kid_states_the_bound() {
        assert!(UNNAMED_KEY_NOT_FOUND.contains(&format!(" {MAX_CANDIDATE_KEYS} keys")));
    }

    #[test]
    fn token_types_compare_without_case_or_application_prefix() {
        assert_eq!(media_type("at+jwt"), "at+jwt");
        assert_eq!(media_type("application/AT+JWT"), "at+jwt");
        assert_eq!(media_type(" JWT "), "jwt");
        assert_eq!(
            media_type("application/application/at+jwt"),
            "application/at+jwt"
        );
    }

    #[test]
    fn a_jwks_yields_only_asymmetric_signing_keys() {
        let document = json!({"keys": [
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
            {"kty": "EC", "kid": "enc", "use": "enc", "crv": "P-256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "kid": "sig", "crv": "P-256", "alg": "ES256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "kid": "mismatched", "crv": "P-256", "alg": "RS256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "weird"}
        ]});
        let keys = parse_jwks(document.as_object().unwrap_or(&Map::new())).unwrap_or_default();
        let kids: Vec<_> = keys.iter().map(|k| k.kid.as_deref()).collect();
        assert_eq!(kids, [Some("sig")]);
        assert!(parse_jwks(&Map::new()).is_err());
        let only_secret = json!({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]});
        assert!(parse_jwks(only_secret.as_object().unwrap_or(&Map::new())).is_err());
    }
}
