//! [`IntrospectionValidator`]: opaque (or any) access tokens checked by asking the
//! authorization server (RFC 7662).
//!
//! The server authenticates to the introspection endpoint as a client ([`ClientAuth`]). An
//! active answer is cached for a short while (never past the token's `exp`), keyed by the
//! token's SHA-256 so the cache holds no token; the cache is bounded, and a full cache drops
//! expired answers first, then the ones expiring soonest.
//!
//! A refused token (inactive, or failing a check of the answer) is refused again without
//! asking for a short while too ([`negative_cache_ttl`](IntrospectionValidatorBuilder::negative_cache_ttl),
//! in a cache of its own, bounded, the oldest refusals dropped first), so a client repeating a
//! bad token costs one call. Validations of one token at the same time share one call. An
//! unreachable or failing endpoint is not remembered: the next validation asks again.
//!
//! At most [`max_concurrent_calls`](IntrospectionValidatorBuilder::max_concurrent_calls) calls
//! (default 16) are in flight at once, whatever arrives: a validation beyond them waits for a
//! call to end, for at most the request [`timeout`](IntrospectionValidatorBuilder::timeout),
//! then cannot be decided ([`AuthError::Unavailable`]: the endpoint answers 503 with
//! `Retry-After`).
//!
//! Spec: <https://www.rfc-editor.org/rfc/rfc7662>

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tokio::time::Instant;
use url::Url;

use super::fetch;
use super::identity::numeric_date;
use super::jwt::MAX_INTERVAL;
use super::refusals::{Refusals, TokenKey};
use super::{AuthConfigError, AuthError, Identity, TokenValidator};

/// The longest token sent for introspection; a longer one is refused at once.
const MAX_TOKEN_LEN: usize = 16 * 1024;

/// How the server authenticates to the introspection endpoint.
#[derive(Clone)]
#[non_exhaustive]
pub enum ClientAuth {
    /// HTTP Basic with the client id and secret (`client_secret_basic`, the default of
    /// RFC 6749).
    Basic {
        /// The server's client id at the authorization server.
        client_id: String,
        /// Its secret.
        client_secret: String,
    },
    /// The client id and secret in the form body (`client_secret_post`).
    Post {
        /// The server's client id at the authorization server.
        client_id: String,
        /// Its secret.
        client_secret: String,
    },
    /// A bearer token of the server's own for the introspection endpoint.
    Bearer(String),
}

impl ClientAuth {
    /// `client_secret_basic`.
    pub fn basic(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self::Basic {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        }
    }

    /// `client_secret_post`.
    pub fn post(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self::Post {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        }
    }
}

impl fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Basic { client_id, .. } => f
                .debug_struct("Basic")
                .field("client_id", client_id)
                .finish_non_exhaustive(),
            Self::Post { client_id, .. } => f
                .debug_struct("Post")
                .field("client_id", client_id)
                .finish_non_exhaustive(),
            Self::Bearer(_) => f.write_str("Bearer(..)"),
        }
    }
}

/// Validates tokens by introspection (RFC 7662): `active`, then `iss`, `aud`, `exp` and
/// `nbf` of the answer. Cheap to clone; clones share the cache.
///
/// ```
/// use actix_mcp::server::auth::{ClientAuth, IntrospectionValidator};
///
/// let validator = IntrospectionValidator::builder(
///         "https://auth.example.com/oauth2/introspect",
///         ClientAuth::basic("mcp-server", "s3cret"),
///     )
///     .issuer("https://auth.example.com")
///     .audience("https://mcp.example.com/mcp")
///     .build()?;
/// # Ok::<(), actix_mcp::server::auth::AuthConfigError>(())
/// ```
#[derive(Clone)]
pub struct IntrospectionValidator {
    inner: Arc<IntrospectionInner>,
}

struct IntrospectionInner {
    endpoint: Url,
    auth: ClientAuth,
    issuer: Option<String>,
    audience: Vec<String>,
    leeway: Duration,
    cache_ttl: Duration,
    cache_capacity: usize,
    timeout: Duration,
    max_response_bytes: usize,
    http: reqwest::Client,
    cache: Mutex<HashMap<TokenKey, Cached>>,
    refusals: Refusals,
    /// One permit per introspection call in flight.
    calls: tokio::sync::Semaphore,
    max_calls: usize,
    /// The calls in flight by token, with how many validations share each: validations of a
    /// token meanwhile wait for its answer.
    flights: Mutex<HashMap<TokenKey, (Flight, usize)>>,
}

/// One introspection call, shared by the validations of its token that arrive while it runs.
type Flight = Arc<tokio::sync::OnceCell<Result<Identity, AuthError>>>;

/// A validation's share in a [`Flight`]: the last share to go (answered or cancelled) removes
/// the flight, so the next validation asks again unless a cache answers it.
struct Share<'a> {
    validator: &'a IntrospectionValidator,
    key: TokenKey,
    flight: Flight,
}

impl Drop for Share<'_> {
    fn drop(&mut self) {
        let mut flights = self.validator.lock_flights();
        // The flight of this key is this share's: it goes only with its last share.
        if let Some((_, shares)) = flights.get_mut(&self.key) {
            *shares = shares.saturating_sub(1);
            if *shares == 0 {
                flights.remove(&self.key);
            }
        }
    }
}

struct Cached {
    identity: Identity,
    until: Instant,
}

impl fmt::Debug for IntrospectionValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntrospectionValidator")
            .field("endpoint", &self.inner.endpoint.as_str())
            .field("auth", &self.inner.auth)
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .field("cached", &self.lock_cache().len())
            .field("refused", &self.inner.refusals.len())
            .finish()
    }
}

/// Builds an [`IntrospectionValidator`]; see [`IntrospectionValidator::builder`]. Defaults
/// are not part of semver.
#[must_use]
#[derive(Debug)]
pub struct IntrospectionValidatorBuilder {
    endpoint: String,
    auth: ClientAuth,
    issuer: Option<String>,
    audience: Vec<String>,
    leeway: Duration,
    cache_ttl: Duration,
    cache_capacity: usize,
    negative_cache_ttl: Duration,
    negative_cache_capacity: usize,
    max_calls: usize,
    timeout: Duration,
    max_response_bytes: usize,
    allow_http: bool,
    http: Option<reqwest::Client>,
}

impl IntrospectionValidator {
    /// Starts a validator asking `endpoint` (the authorization server's
    /// `introspection_endpoint`), authenticated with `auth`. An audience is required.
    pub fn builder(endpoint: impl Into<String>, auth: ClientAuth) -> IntrospectionValidatorBuilder {
        IntrospectionValidatorBuilder {
            endpoint: endpoint.into(),
            auth,
            issuer: None,
            audience: Vec::new(),
            leeway: Duration::from_secs(30),
            cache_ttl: Duration::from_secs(30),
            cache_capacity: 1024,
            negative_cache_ttl: Duration::from_secs(30),
            negative_cache_capacity: 4096,
            max_calls: 16,
            timeout: Duration::from_secs(5),
            max_response_bytes: 64 * 1024,
            allow_http: false,
            http: None,
        }
    }

    fn lock_cache(&self) -> MutexGuard<'_, HashMap<TokenKey, Cached>> {
        self.inner
            .cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lock_flights(&self) -> MutexGuard<'_, HashMap<TokenKey, (Flight, usize)>> {
        self.inner
            .flights
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A share in the call in flight for this token, or in a new one.
    fn join(&self, key: TokenKey) -> Share<'_> {
        let mut flights = self.lock_flights();
        let (flight, shares) = flights.entry(key).or_default();
        *shares += 1;
        Share {
            validator: self,
            key,
            flight: flight.clone(),
        }
    }

    /// What the caches say of a token: its identity, its refusal, or nothing.
    fn remembered(&self, key: &TokenKey) -> Option<Result<Identity, AuthError>> {
        if let Some(identity) = self.cached(key) {
            return Some(Ok(identity));
        }
        self.inner.refusals.get(key).map(Err)
    }

    fn cached(&self, key: &TokenKey) -> Option<Identity> {
        let mut cache = self.lock_cache();
        match cache.get(key) {
            Some(entry) if Instant::now() < entry.until => Some(entry.identity.clone()),
            Some(_) => {
                cache.remove(key);
                None
            }
            None => None,
        }
    }

    fn remember(&self, key: TokenKey, identity: &Identity) {
        let capacity = self.inner.cache_capacity;
        if capacity == 0 || self.inner.cache_ttl.is_zero() {
            return;
        }
        let mut ttl = self.inner.cache_ttl;
        if let Some(left) = identity
            .expires_at()
            .map(|exp| exp.duration_since(SystemTime::now()).unwrap_or_default())
        {
            ttl = ttl.min(left);
        }
        let now = Instant::now();
        let mut cache = self.lock_cache();
        if cache.len() >= capacity && !cache.contains_key(&key) {
            cache.retain(|_, entry| now < entry.until);
            while cache.len() >= capacity {
                let soonest = cache
                    .iter()
                    .min_by_key(|(_, entry)| entry.until)
                    .map(|(key, _)| *key);
                match soonest {
                    Some(soonest) => cache.remove(&soonest),
                    None => break,
                };
            }
        }
        cache.insert(
            key,
            Cached {
                identity: identity.clone(),
                until: now + ttl,
            },
        );
    }

    fn request(&self, token: &str) -> reqwest::RequestBuilder {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("token", token)
            .append_pair("token_type_hint", "access_token");
        let mut request = self
            .inner
            .http
            .post(self.inner.endpoint.clone())
            .timeout(self.inner.timeout)
            .header(reqwest::header::ACCEPT, "application/json");
        match &self.inner.auth {
            ClientAuth::Basic {
                client_id,
                client_secret,
            } => {
                // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
                let encode = |part: &str| -> String {
                    url::form_urlencoded::byte_serialize(part.as_bytes()).collect()
                };
                let credentials = format!("{}:{}", encode(client_id), encode(client_secret));
                let value = base64::engine::general_purpose::STANDARD.encode(credentials);
                request = request.header(reqwest::header::AUTHORIZATION, format!("Basic {value}"));
            }
            ClientAuth::Post {
                client_id,
                client_secret,
            } => {
                form.append_pair("client_id", client_id)
                    .append_pair("client_secret", client_secret);
            }
            ClientAuth::Bearer(token) => {
                request = request.header(reqwest::header::AUTHORIZATION, format!("Bearer {token}"));
            }
        }
        request
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form.finish())
    }

    async fn check(&self, token: &str) -> Result<Identity, AuthError> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(AuthError::invalid_token("the token is too long"));
        }
        let key: TokenKey = Sha256::digest(token.as_bytes()).into();
        if let Some(outcome) = self.remembered(&key) {
            return outcome;
        }
        let share = self.join(key);
        share
            .flight
            .get_or_init(|| self.introspect(key, token))
            .await
            .clone()
    }

    /// Asks the authorization server about a token (the one call of its flight), and remembers
    /// the verdict: an identity, or a refusal that lasts. An endpoint that cannot answer is not
    /// remembered.
    async fn introspect(&self, key: TokenKey, token: &str) -> Result<Identity, AuthError> {
        // A flight that ended as this one began left its verdict in a cache.
        if let Some(outcome) = self.remembered(&key) {
            return outcome;
        }
        let inner = &self.inner;
        let _call = match tokio::time::timeout(inner.timeout, inner.calls.acquire()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) | Err(_) => {
                return Err(AuthError::unavailable(format!(
                    "token introspection: {} calls in flight, and none ended within {} ms",
                    inner.max_calls,
                    inner.timeout.as_millis()
                )));
            }
        };
        let answer = fetch::json_object(
            "token introspection",
            self.request(token),
            self.inner.max_response_bytes,
        )
        .await?;
        // A token not valid yet may become valid while its refusal would be remembered.
        let lasting = !self.not_yet_valid(&answer);
        match self.judge(answer) {
            Ok(identity) => {
                self.remember(key, &identity);
                Ok(identity)
            }
            Err(refusal) => {
                if lasting && matches!(refusal, AuthError::InvalidToken(_)) {
                    self.inner.refusals.insert(key, &refusal);
                }
                Err(refusal)
            }
        }
    }

    /// Whether the answer's `nbf` is still ahead, beyond the leeway.
    fn not_yet_valid(&self, answer: &Map<String, Value>) -> bool {
        numeric_date(answer.get("nbf"))
            .is_some_and(|nbf| nbf > SystemTime::now() + self.inner.leeway)
    }

    /// Accepts an introspection answer, or says why not.
    fn judge(&self, answer: Map<String, Value>) -> Result<Identity, AuthError> {
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(AuthError::invalid_token("the token is not active"));
        }
        let now = SystemTime::now();
        let leeway = self.inner.leeway;
        if let Some(exp) = numeric_date(answer.get("exp"))
            && exp.checked_add(leeway).is_some_and(|end| end <= now)
        {
            return Err(AuthError::invalid_token("the token has expired"));
        }
        if self.not_yet_valid(&answer) {
            return Err(AuthError::invalid_token("the token is not valid yet"));
        }
        let identity = Identity::from_claims(answer);
        if let Some(issuer) = &self.inner.issuer
            && identity.issuer() != Some(issuer.as_str())
        {
            return Err(AuthError::invalid_token(
                "the token comes from another issuer",
            ));
        }
        let ours = identity
            .audience()
            .iter()
            .any(|aud| self.inner.audience.contains(aud));
        if !ours {
            return Err(AuthError::invalid_token(
                "the token was not issued for this server",
            ));
        }
        identity.check_usable()?;
        Ok(identity)
    }
}

impl TokenValidator for IntrospectionValidator {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
        Box::pin(self.check(token))
    }
}

impl IntrospectionValidatorBuilder {
    /// The issuer active tokens must name (`iss`, exactly); unset, `iss` is not checked.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// An audience tokens may be issued for (the answer's `aud` must contain one): this
    /// server's resource URL. Required; call again to accept several. An answer without `aud`
    /// is refused.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience.push(audience.into());
        self
    }

    /// Clock skew tolerated on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.min(MAX_INTERVAL);
        self
    }

    /// How long an active answer is reused (default 30 s; never past the token's `exp`;
    /// zero turns the cache off; at most a year). A revoked token stays accepted for at most
    /// this long.
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl.min(MAX_INTERVAL);
        self
    }

    /// Most answers cached at once (default 1024; zero turns the cache off).
    pub fn cache_capacity(mut self, entries: usize) -> Self {
        self.cache_capacity = entries;
        self
    }

    /// How long a refused token (inactive, or failing a check of the answer) is refused again
    /// without asking (default 30 s; zero turns the negative cache off; at most a year). A
    /// token that is not valid yet (`nbf`) is asked about again each time.
    pub fn negative_cache_ttl(mut self, ttl: Duration) -> Self {
        self.negative_cache_ttl = ttl.min(MAX_INTERVAL);
        self
    }

    /// Most refusals remembered at once (default 4096; the oldest are dropped first; zero
    /// turns the negative cache off). Kept apart from the answers of
    /// [`cache_capacity`](Self::cache_capacity): a flood of bad tokens does not evict good
    /// ones.
    pub fn negative_cache_capacity(mut self, entries: usize) -> Self {
        self.negative_cache_capacity = entries;
        self
    }

    /// Most introspection calls in flight at once (default 16; at least 1). A validation beyond
    /// them waits for one to end, for at most the [`timeout`](Self::timeout); then it cannot
    /// be decided ([`AuthError::Unavailable`], answered 503 with `Retry-After`). Validations of
    /// one token share one call.
    pub fn max_concurrent_calls(mut self, calls: usize) -> Self {
        self.max_calls = calls.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        self
    }

    /// Time limit of one introspection request (default 5 s), and of the wait for a free call
    /// ([`max_concurrent_calls`](Self::max_concurrent_calls)).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.min(MAX_INTERVAL);
        self
    }

    /// Largest answer accepted, in bytes (default 64 KiB).
    pub fn max_response_size(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Accepts a plain `http` endpoint on a host that is not loopback (default off). Tokens
    /// and the server's client secret travel to it: allow it only inside a trusted network.
    pub fn allow_http(mut self, allow: bool) -> Self {
        self.allow_http = allow;
        self
    }

    /// Sends with this client (custom TLS roots, proxies) instead of the validator's own
    /// (which follows no redirects). The timeout still applies to each request.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Checks the settings and builds the validator.
    ///
    /// # Errors
    /// An invalid or insecure endpoint, no audience, or an HTTP client that cannot be built.
    pub fn build(self) -> Result<IntrospectionValidator, AuthConfigError> {
        let endpoint = fetch::parse_url("introspection endpoint", &self.endpoint, self.allow_http)?;
        if self.audience.iter().all(String::is_empty) {
            return Err(AuthConfigError::MissingAudience);
        }
        let http = match self.http {
            Some(client) => client,
            None => fetch::client(self.timeout)?,
        };
        Ok(IntrospectionValidator {
            inner: Arc::new(IntrospectionInner {
                endpoint,
                auth: self.auth,
                issuer: self.issuer.filter(|issuer| !issuer.is_empty()),
                audience: self
                    .audience
                    .into_iter()
                    .filter(|a| !a.is_empty())
                    .collect(),
                leeway: self.leeway,
                cache_ttl: self.cache_ttl,
                cache_capacity: self.cache_capacity,
                timeout: self.timeout,
                max_response_bytes: self.max_response_bytes,
                http,
                cache: Mutex::default(),
                refusals: Refusals::new(self.negative_cache_ttl, self.negative_cache_capacity),
                calls: tokio::sync::Semaphore::new(self.max_calls),
                max_calls: self.max_calls,
                flights: Mutex::default(),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator(capacity: usize) -> IntrospectionValidator {
        IntrospectionValidator::builder(
            "https://as.example.com/introspect",
            ClientAuth::basic("a", "b"),
        )
        .issuer("https://as.example.com")
        .audience("https://mcp.example.com/mcp")
        .cache_capacity(capacity)
        .build()
        .unwrap_or_else(|err| panic!("{err}"))
    }

    fn answer(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn only_active_answers_for_this_server_pass() {
        let v = validator(4);
        let good = json!({"active": true, "sub": "u", "iss": "https://as.example.com",
                          "aud": ["https://mcp.example.com/mcp"], "scope": "a b"});
        assert!(v.judge(answer(good.clone())).is_ok());
        let mut inactive = good.clone();
        inactive["active"] = json!(false);
        assert!(v.judge(answer(inactive)).is_err());
        let mut stringly = good.clone();
        stringly["active"] = json!("true");
        assert!(v.judge(answer(stringly)).is_err());
        let mut other_aud = good.clone();
        other_aud["aud"] = json!("https://other.example.com");
        assert!(v.judge(answer(other_aud)).is_err());
        let mut no_aud = good.clone();
        no_aud.as_object_mut().map(|m| m.remove("aud"));
        assert!(v.judge(answer(no_aud)).is_err());
        let mut other_iss = good.clone();
        other_iss["iss"] = json!("https://evil.example.com");
        assert!(v.judge(answer(other_iss)).is_err());
        let mut nobody = good.clone();
        nobody.as_object_mut().map(|m| m.remove("sub"));
        assert!(v.judge(answer(nobody)).is_err());
        let mut expired = good;
        expired["exp"] = json!(1_000);
        assert!(v.judge(answer(expired)).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_validation_waits_for_a_free_call_no_longer_than_the_timeout() {
        let v = IntrospectionValidator::builder(
            "https://as.example.com/introspect",
            ClientAuth::basic("a", "b"),
        )
        .audience("https://mcp.example.com/mcp")
        .max_concurrent_calls(2)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap_or_else(|err| panic!("{err}"));
        // Both calls are taken (as by two slow calls): the endpoint is never reached.
        let busy = v.inner.calls.try_acquire_many(2);
        assert!(busy.is_ok());
        let started = Instant::now();
        let err = v.validate("opaque").await.err();
        assert!(
            matches!(&err, Some(AuthError::Unavailable(why)) if why.contains("2 calls in flight")),
            "{err:?}"
        );
        assert_eq!(started.elapsed(), Duration::from_millis(300));
        assert!(
            v.lock_flights().is_empty(),
            "the flight is gone with its last share"
        );
    }

    #[actix_rt::test]
    async fn the_cache_stays_within_its_capacity() {
        let v = validator(2);
        for i in 0u8..5 {
            v.remember([i; 32], &Identity::new(format!("u{i}")));
        }
        assert_eq!(v.lock_cache().len(), 2);
        assert!(v.cached(&[4; 32]).is_some(), "the newest answer is kept");
    }
}
