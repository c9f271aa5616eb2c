//! Token requests without a browser: the `client_credentials` grant, RFC 8693 token exchange
//! and the RFC 7523 JWT-bearer grant, with any client authentication and optional DPoP.
//!
//! A [`TokenRequest`] holds the grant and its parameters, a [`ClientAuth`] how the client
//! proves who it is (`none`, `client_secret_basic`, `client_secret_post`, `private_key_jwt`),
//! and a [`TokenEndpoint`] sends them (one form POST, bounded in time and size) and parses
//! the answer into a [`TokenResponse`] or a [`GrantError`]. With a [`Dpop`] the request carries
//! a proof, and a `use_dpop_nonce` demand is retried once with the server's nonce.
//!
//! The MCP authorization extensions use them so:
//!
//! | extension | requests |
//! | --- | --- |
//! | client credentials | [`TokenRequest::client_credentials`] with a secret or [`ClientAssertion`](super::assertion::ClientAssertion) |
//! | enterprise-managed (ID-JAG) | [`TokenRequest::id_jag`] at the IdP, then [`TokenRequest::jwt_bearer`] with the ID-JAG at the MCP server's authorization server |
//! | workload identity federation | [`TokenRequest::jwt_bearer`] with the workload's JWT |
//!
//! ```no_run
//! use actix_mcp::client::auth::grants::{ClientAuth, TokenEndpoint, TokenRequest};
//!
//! # async fn run() -> Result<(), actix_mcp::client::auth::grants::GrantError> {
//! let http = reqwest::Client::builder()
//!     .redirect(reqwest::redirect::Policy::none())
//!     .build()
//!     .expect("an HTTP client");
//! let endpoint = TokenEndpoint::new("https://auth.example.com/token")?;
//! let request = TokenRequest::client_credentials()
//!     .resource("https://mcp.example.com/mcp")
//!     .scope("mcp:read");
//! let token = endpoint
//!     .request(&http, &ClientAuth::basic("my-client", "my-secret"), &request, None)
//!     .await?;
//! println!("{} token, expires in {:?}", token.token_type, token.expires_in);
//! # Ok(()) }
//! ```
//!
//! Use an HTTP client that does not follow redirects: a token endpoint never redirects, and a
//! followed 307 would resend the credentials elsewhere. A redirect is reported as
//! [`GrantError::Status`].
//!
//! # Cancel safety
//!
//! Dropping [`TokenEndpoint::request`]'s future abandons the HTTP request; the server may still
//! issue a token nobody receives. The only state it touches is the DPoP nonce cache, which
//! stays consistent.
//!
//! Spec: <https://www.rfc-editor.org/rfc/rfc6749#section-4.4>,
//! <https://www.rfc-editor.org/rfc/rfc8693>, <https://www.rfc-editor.org/rfc/rfc7523>,
//! <https://github.com/modelcontextprotocol/ext-auth/tree/main/specification/draft>

use std::fmt;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use oauth2::{AccessToken, ClientSecret, RefreshToken};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use serde::Deserialize;
use url::Url;
use url::form_urlencoded;

use super::assertion::{CLIENT_ASSERTION_TYPE_JWT_BEARER, ClientAssertion, JwtError};
use super::dpop::{DPOP_HEADER, Dpop, ServerRole, token_nonce_demand};

/// `grant_type` of the authorization code grant (OAuth 2.1 §4.1).
pub const GRANT_AUTHORIZATION_CODE: &str = "authorization_code";
/// `grant_type` of the refresh token grant (OAuth 2.1 §4.3).
pub const GRANT_REFRESH_TOKEN: &str = "refresh_token";
/// `grant_type` of the client credentials grant (OAuth 2.1 §4.2).
pub const GRANT_CLIENT_CREDENTIALS: &str = "client_credentials";
/// `grant_type` of token exchange (RFC 8693 §2.1).
pub const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// `grant_type` of the JWT-bearer authorization grant (RFC 7523 §2.1).
pub const GRANT_JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Token type of an Identity Assertion JWT Authorization Grant (ID-JAG).
pub const TOKEN_TYPE_ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// Token type of an OpenID Connect ID token (RFC 8693 §3).
pub const TOKEN_TYPE_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
/// Token type of a SAML 2.0 assertion (RFC 8693 §3).
pub const TOKEN_TYPE_SAML2: &str = "urn:ietf:params:oauth:token-type:saml2";
/// Token type of an OAuth access token (RFC 8693 §3).
pub const TOKEN_TYPE_ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
/// Token type of a JWT (RFC 8693 §3).
pub const TOKEN_TYPE_JWT: &str = "urn:ietf:params:oauth:token-type:jwt";

/// Default time limit of one token request, response body included. Not part of semver.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default largest token endpoint answer read. Not part of semver.
const DEFAULT_MAX_RESPONSE: usize = 64 * 1024;
/// Longest `error` code kept from an error response.
const MAX_ERROR_CODE: usize = 128;
/// Longest `error_description` (and `error_uri`) kept from an error response.
const MAX_ERROR_TEXT: usize = 512;
/// `Content-Type` of a token request.
const FORM: &str = "application/x-www-form-urlencoded";

/// How the client authenticates to a token endpoint (its `token_endpoint_auth_method`).
///
/// `Debug` shows the method and client id, never a secret or key.
#[derive(Clone)]
pub struct ClientAuth(AuthKind);

#[derive(Clone)]
enum AuthKind {
    None,
    Public(String),
    Basic(String, ClientSecret),
    Post(String, ClientSecret),
    PrivateKeyJwt(ClientAssertion),
}

impl fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientAuth")
            .field("method", &self.method())
            .field("client_id", &self.client_id())
            .finish()
    }
}

impl ClientAuth {
    /// No client authentication and no `client_id`: a workload presenting only its JWT.
    pub fn none() -> Self {
        Self(AuthKind::None)
    }

    /// A public client: `client_id` in the body, no secret (method `none`).
    pub fn public(client_id: impl Into<String>) -> Self {
        Self(AuthKind::Public(client_id.into()))
    }

    /// `client_secret_basic`: `Authorization: Basic` with the form-urlencoded id and secret
    /// (RFC 6749 §2.3.1).
    pub fn basic(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self(AuthKind::Basic(
            client_id.into(),
            ClientSecret::new(client_secret.into()),
        ))
    }

    /// `client_secret_post`: `client_id` and `client_secret` in the body.
    pub fn post(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self(AuthKind::Post(
            client_id.into(),
            ClientSecret::new(client_secret.into()),
        ))
    }

    /// `private_key_jwt`: a fresh signed assertion in `client_assertion` on every request
    /// (RFC 7523 §2.2); no `client_id` parameter, the assertion names the client.
    pub fn private_key_jwt(assertion: ClientAssertion) -> Self {
        Self(AuthKind::PrivateKeyJwt(assertion))
    }

    /// The method's registered name, as in `token_endpoint_auth_methods_supported`
    /// (`none` for both [`none`](Self::none) and [`public`](Self::public)).
    pub fn method(&self) -> &'static str {
        match &self.0 {
            AuthKind::None | AuthKind::Public(_) => "none",
            AuthKind::Basic(..) => "client_secret_basic",
            AuthKind::Post(..) => "client_secret_post",
            AuthKind::PrivateKeyJwt(_) => "private_key_jwt",
        }
    }

    /// The client id, if the method names one.
    pub fn client_id(&self) -> Option<&str> {
        match &self.0 {
            AuthKind::None => None,
            AuthKind::Public(id) | AuthKind::Basic(id, _) | AuthKind::Post(id, _) => Some(id),
            AuthKind::PrivateKeyJwt(assertion) => Some(assertion.client_id()),
        }
    }
}

/// A token request: the grant type and its parameters (client authentication is added when
/// it is sent).
///
/// `Debug` shows the grant type and parameter names, never their values (they hold tokens and
/// assertions).
#[derive(Clone)]
pub struct TokenRequest {
    grant_type: String,
    params: Vec<(String, String)>,
}

impl fmt::Debug for TokenRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.params.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("TokenRequest")
            .field("grant_type", &self.grant_type)
            .field("params", &names)
            .finish()
    }
}

/// A request body and the `Authorization` header value, as sent.
struct Encoded {
    body: String,
    authorization: Option<String>,
}

impl TokenRequest {
    /// A request for any grant type; add its parameters with [`param`](Self::param).
    pub fn new(grant_type: impl Into<String>) -> Self {
        Self {
            grant_type: grant_type.into(),
            params: Vec::new(),
        }
    }

    /// The client credentials grant: a token for the client itself.
    pub fn client_credentials() -> Self {
        Self::new(GRANT_CLIENT_CREDENTIALS)
    }

    /// The authorization code grant's token request, with the PKCE `code_verifier`: for
    /// sending the code through [`TokenEndpoint::request`] when the token must be DPoP-bound.
    pub fn authorization_code(
        code: impl Into<String>,
        redirect_uri: impl Into<String>,
        code_verifier: impl Into<String>,
    ) -> Self {
        Self::new(GRANT_AUTHORIZATION_CODE)
            .param("code", code)
            .param("redirect_uri", redirect_uri)
            .param("code_verifier", code_verifier)
    }

    /// The refresh token grant. A DPoP-bound refresh token (issued to a public client) needs a
    /// proof from the same key.
    pub fn refresh_token(refresh_token: impl Into<String>) -> Self {
        Self::new(GRANT_REFRESH_TOKEN).param("refresh_token", refresh_token)
    }

    /// Token exchange (RFC 8693): trade `subject_token`, of type `subject_token_type` (a
    /// `TOKEN_TYPE_*` URN), for another token; say which with
    /// [`requested_token_type`](Self::requested_token_type) and
    /// [`audience`](Self::audience).
    pub fn token_exchange(
        subject_token: impl Into<String>,
        subject_token_type: impl Into<String>,
    ) -> Self {
        Self::new(GRANT_TOKEN_EXCHANGE)
            .param("subject_token", subject_token)
            .param("subject_token_type", subject_token_type)
    }

    /// The enterprise-managed authorization exchange at the IdP: an ID token for an ID-JAG
    /// addressed to the authorization server whose issuer is `audience`, for the MCP server
    /// whose resource identifier (its protected resource metadata `resource`) is `resource`.
    /// The answer's `access_token` is the ID-JAG; check
    /// [`issued_token_type`](TokenResponse::issued_token_type) is [`TOKEN_TYPE_ID_JAG`].
    pub fn id_jag(
        id_token: impl Into<String>,
        audience: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self::token_exchange(id_token, TOKEN_TYPE_ID_TOKEN)
            .requested_token_type(TOKEN_TYPE_ID_JAG)
            .audience(audience)
            .resource(resource)
    }

    /// The JWT-bearer grant (RFC 7523 §2.1): `assertion` (an ID-JAG, or a workload identity
    /// JWT) for an access token.
    pub fn jwt_bearer(assertion: impl Into<String>) -> Self {
        Self::new(GRANT_JWT_BEARER).param("assertion", assertion)
    }

    /// Adds a `resource` (RFC 8707): the MCP server the token is for. May be given more than
    /// once.
    #[must_use]
    pub fn resource(self, resource: impl Into<String>) -> Self {
        self.param("resource", resource)
    }

    /// Sets `scope`, space-separated; an empty scope is not sent.
    #[must_use]
    pub fn scope(self, scope: impl Into<String>) -> Self {
        let scope = scope.into();
        if scope.trim().is_empty() {
            self.without("scope")
        } else {
            self.set("scope", scope)
        }
    }

    /// Sets `audience` (RFC 8693): where the requested token will be used.
    #[must_use]
    pub fn audience(self, audience: impl Into<String>) -> Self {
        self.set("audience", audience.into())
    }

    /// Sets `requested_token_type` (RFC 8693), a `TOKEN_TYPE_*` URN.
    #[must_use]
    pub fn requested_token_type(self, token_type: impl Into<String>) -> Self {
        self.set("requested_token_type", token_type.into())
    }

    /// Adds a parameter as is (repeating a name sends it twice).
    #[must_use]
    pub fn param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.params.push((name.into(), value.into()));
        self
    }

    /// The grant type.
    pub fn grant_type(&self) -> &str {
        &self.grant_type
    }

    /// The first value of parameter `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    fn without(mut self, name: &str) -> Self {
        self.params.retain(|(key, _)| key != name);
        self
    }

    fn set(self, name: &str, value: String) -> Self {
        self.without(name).param(name, value)
    }

    /// The form body with the client's authentication, and the `Authorization` value if the
    /// method uses one. A `private_key_jwt` assertion is signed anew on each call.
    fn encode(&self, auth: &ClientAuth) -> Result<Encoded, JwtError> {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", &self.grant_type);
        for (name, value) in &self.params {
            form.append_pair(name, value);
        }
        let mut authorization = None;
        match &auth.0 {
            AuthKind::None => {}
            AuthKind::Public(id) => {
                form.append_pair("client_id", id);
            }
            AuthKind::Basic(id, secret) => {
                let encode = |text: &str| {
                    form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>()
                };
                let pair = format!("{}:{}", encode(id), encode(secret.secret()));
                authorization = Some(format!("Basic {}", STANDARD.encode(pair)));
            }
            AuthKind::Post(id, secret) => {
                form.append_pair("client_id", id);
                form.append_pair("client_secret", secret.secret());
            }
            AuthKind::PrivateKeyJwt(assertion) => {
                form.append_pair("client_assertion_type", CLIENT_ASSERTION_TYPE_JWT_BEARER);
                form.append_pair("client_assertion", &assertion.sign()?);
            }
        }
        Ok(Encoded {
            body: form.finish(),
            authorization,
        })
    }
}

/// A successful token response (RFC 6749 §5.1, RFC 8693 §2.2.1).
///
/// `Debug` redacts the tokens.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TokenResponse {
    /// The token issued: an access token, or for a token exchange the requested token (an
    /// ID-JAG for [`TokenRequest::id_jag`]).
    pub access_token: AccessToken,
    /// How to present it: `Bearer`, `DPoP` (bound to the DPoP key), or `N_A` for a token
    /// exchange result that is not an access token. Compare case-insensitively.
    pub token_type: String,
    /// How long the token lives, if the server said.
    pub expires_in: Option<Duration>,
    /// A refresh token, if one was issued.
    pub refresh_token: Option<RefreshToken>,
    /// The scope granted, if the server said (it may differ from the one requested).
    pub scope: Option<String>,
    /// The type of the issued token (token exchange only), a `TOKEN_TYPE_*` URN.
    pub issued_token_type: Option<String>,
}

impl TokenResponse {
    /// Whether the token is DPoP-bound (`token_type` `DPoP`): present it with
    /// `Authorization: DPoP` and a proof from the same key.
    pub fn is_dpop(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("DPoP")
    }

    /// Parses a token endpoint's 2xx body.
    fn from_json(body: &[u8]) -> Result<Self, GrantError> {
        #[derive(Deserialize)]
        struct Raw {
            access_token: String,
            token_type: Option<String>,
            expires_in: Option<serde_json::Value>,
            refresh_token: Option<String>,
            scope: Option<String>,
            issued_token_type: Option<String>,
        }
        // serde's messages may quote values (tokens): say only where it broke.
        let raw: Raw = serde_json::from_slice(body).map_err(|err| {
            GrantError::InvalidResponse(format!(
                "not a token response ({:?} error at line {}, column {})",
                err.classify(),
                err.line(),
                err.column()
            ))
        })?;
        if raw.access_token.is_empty() {
            return Err(GrantError::InvalidResponse("empty access_token".into()));
        }
        let token_type = raw
            .token_type
            .filter(|token_type| !token_type.is_empty())
            .ok_or_else(|| GrantError::InvalidResponse("no token_type".into()))?;
        Ok(Self {
            access_token: AccessToken::new(raw.access_token),
            token_type,
            expires_in: raw.expires_in.as_ref().and_then(seconds),
            refresh_token: raw
                .refresh_token
                .filter(|token| !token.is_empty())
                .map(RefreshToken::new),
            scope: raw.scope,
            issued_token_type: raw.issued_token_type,
        })
    }
}

/// `expires_in` as a duration: a non-negative number, or a string of digits (some servers).
fn seconds(value: &serde_json::Value) -> Option<Duration> {
    match value {
        serde_json::Value::Number(number) => number
            .as_u64()
            .or_else(|| {
                number
                    .as_f64()
                    .filter(|secs| *secs >= 0.0)
                    .map(|secs| secs as u64)
            })
            .map(Duration::from_secs),
        serde_json::Value::String(text) => text.trim().parse().ok().map(Duration::from_secs),
        _ => None,
    }
}

/// An OAuth error response (RFC 6749 §5.2): why the server refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthError {
    /// The HTTP status it came with (usually 400 or 401).
    pub status: StatusCode,
    /// The error code: `invalid_request`, `invalid_client`, `invalid_grant`,
    /// `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`, `invalid_target`,
    /// `use_dpop_nonce`, `invalid_dpop_proof`…
    pub error: String,
    /// The server's explanation (at most 512 bytes kept).
    pub error_description: Option<String>,
    /// A page about the error.
    pub error_uri: Option<String>,
}

impl fmt::Display for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (HTTP {})", self.error, self.status.as_u16())?;
        if let Some(description) = &self.error_description {
            write!(f, ": {description}")?;
        }
        Ok(())
    }
}

impl OAuthError {
    /// Parses an error body; `None` when it has no `error` string.
    fn from_json(status: StatusCode, body: &[u8]) -> Option<Self> {
        #[derive(Deserialize)]
        struct Raw {
            error: String,
            error_description: Option<String>,
            error_uri: Option<String>,
        }
        let raw: Raw = serde_json::from_slice(body).ok()?;
        if raw.error.is_empty() {
            return None;
        }
        Some(Self {
            status,
            error: truncate(raw.error, MAX_ERROR_CODE),
            error_description: raw
                .error_description
                .map(|text| truncate(text, MAX_ERROR_TEXT)),
            error_uri: raw.error_uri.map(|text| truncate(text, MAX_ERROR_TEXT)),
        })
    }
}

/// `text` cut to at most `max` bytes at a character boundary, marked with `…` when cut.
fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// Why a token request produced no token.
///
/// Do not depend on the wording of the messages; match on the variants.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GrantError {
    /// The token endpoint is not an absolute `http(s)` URL without a fragment.
    #[error("invalid token endpoint {0:?}")]
    InvalidEndpoint(String),
    /// The client assertion or the DPoP proof could not be made.
    #[error("could not sign the token request")]
    Jwt(#[from] JwtError),
    /// The request could not be sent or its answer not read (connection refused, TLS,
    /// reset).
    #[error("the token request failed")]
    Http(#[source] reqwest::Error),
    /// No whole answer within the time limit.
    #[error("no answer from the token endpoint within {0:?}")]
    Timeout(Duration),
    /// The server refused with an OAuth error. After a DPoP nonce demand this is the answer
    /// to the retry.
    #[error("the authorization server refused the token request: {0}")]
    OAuth(OAuthError),
    /// A status that is neither success nor an OAuth error (a redirect, a 500 page).
    #[error("the token endpoint answered HTTP {} without an OAuth error", .0.as_u16())]
    Status(StatusCode),
    /// The answer is larger than the limit ([`TokenEndpoint::max_response_size`]).
    #[error("the token endpoint's answer is over {0} bytes")]
    TooLarge(usize),
    /// A success status with a body that is not a usable token response.
    #[error("invalid token response: {0}")]
    InvalidResponse(String),
}

impl GrantError {
    /// The OAuth error the server refused with, if that is what this is.
    pub fn oauth(&self) -> Option<&OAuthError> {
        match self {
            Self::OAuth(error) => Some(error),
            _ => None,
        }
    }

    /// Whether the request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout(_))
    }
}

/// A token endpoint: its URL and the limits of a request to it.
#[derive(Debug, Clone)]
pub struct TokenEndpoint {
    url: Url,
    timeout: Duration,
    max_response: usize,
}

/// What came back from one POST.
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl TokenEndpoint {
    /// The token endpoint at `url` (from authorization server metadata, or given).
    ///
    /// # Errors
    /// [`GrantError::InvalidEndpoint`] unless `url` is an absolute `http` or `https` URL with
    /// a host and no fragment (RFC 6749 §3.2).
    pub fn new(url: &str) -> Result<Self, GrantError> {
        let invalid = || GrantError::InvalidEndpoint(url.to_owned());
        let parsed = Url::parse(url).map_err(|_| invalid())?;
        if !matches!(parsed.scheme(), "http" | "https")
            || parsed.host().is_none()
            || parsed.fragment().is_some()
        {
            return Err(invalid());
        }
        Ok(Self {
            url: parsed,
            timeout: DEFAULT_TIMEOUT,
            max_response: DEFAULT_MAX_RESPONSE,
        })
    }

    /// The longest one request may take, body included (30 seconds unless set; a DPoP nonce
    /// retry gets its own). Not part of semver.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest answer read (64 KiB unless set). Not part of semver.
    #[must_use]
    pub fn max_response_size(mut self, bytes: usize) -> Self {
        self.max_response = bytes;
        self
    }

    /// The endpoint's URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Sends `request` with the client's `auth`, with a DPoP proof when `dpop` is given, and
    /// returns the token. If the server demands a DPoP nonce (`use_dpop_nonce`), the request
    /// is sent once more with a new proof carrying it (and a new client assertion); every
    /// nonce the server sends is kept in `dpop`'s cache for later requests. Nothing else is
    /// retried: an OAuth error (an `invalid_grant` for a JWT-bearer assertion, say) is for the
    /// caller to surface.
    ///
    /// # Errors
    /// [`GrantError::OAuth`] when the server refuses; the other [`GrantError`] variants when
    /// the request cannot be made, sent or answered.
    pub async fn request(
        &self,
        http: &reqwest::Client,
        auth: &ClientAuth,
        request: &TokenRequest,
        dpop: Option<&Dpop>,
    ) -> Result<TokenResponse, GrantError> {
        let mut reply = self.post(http, auth, request, dpop).await?;
        if dpop.is_some() && token_nonce_demand(reply.status, &reply.headers, &reply.body).is_some()
        {
            // `post` stored the nonce; the new proof carries it.
            reply = self.post(http, auth, request, dpop).await?;
        }
        if reply.status.is_success() {
            return TokenResponse::from_json(&reply.body);
        }
        Err(match OAuthError::from_json(reply.status, &reply.body) {
            Some(error) if !reply.status.is_redirection() => GrantError::OAuth(error),
            _ => GrantError::Status(reply.status),
        })
    }

    /// One POST: a fresh body (and assertion) and proof, the answer read within the limits,
    /// its DPoP nonce recorded.
    async fn post(
        &self,
        http: &reqwest::Client,
        auth: &ClientAuth,
        request: &TokenRequest,
        dpop: Option<&Dpop>,
    ) -> Result<Reply, GrantError> {
        let encoded = request.encode(auth)?;
        let mut builder = http
            .post(self.url.clone())
            .timeout(self.timeout)
            .header(CONTENT_TYPE, FORM)
            .header(ACCEPT, "application/json")
            .body(encoded.body);
        if let Some(authorization) = encoded.authorization {
            builder = builder.header(AUTHORIZATION, authorization);
        }
        if let Some(dpop) = dpop {
            let proof = dpop.proof_for(ServerRole::Authorization, "POST", &self.url, None)?;
            builder = builder.header(DPOP_HEADER, proof);
        }
        let mut response = builder.send().await.map_err(|err| self.http_error(err))?;
        let status = response.status();
        let headers = std::mem::take(response.headers_mut());
        if let Some(dpop) = dpop {
            dpop.nonces()
                .observe(ServerRole::Authorization, &self.url, &headers);
        }
        if response
            .content_length()
            .is_some_and(|length| length > self.max_response as u64)
        {
            return Err(GrantError::TooLarge(self.max_response));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|err| self.http_error(err))? {
            if body.len() + chunk.len() > self.max_response {
                return Err(GrantError::TooLarge(self.max_response));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    fn http_error(&self, err: reqwest::Error) -> GrantError {
        if err.is_timeout() {
            GrantError::Timeout(self.timeout)
        } else {
            GrantError::Http(err)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::HashMap;
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
    use jsonwebtoken::{Algorithm, DecodingKey, Validation};

    use super::super::assertion::SigningKey;
    use super::*;

    fn form(body: &str) -> Vec<(String, String)> {
        form_urlencoded::parse(body.as_bytes())
            .into_owned()
            .collect()
    }

    fn form_map(body: &str) -> HashMap<String, String> {
        form(body).into_iter().collect()
    }

    #[test]
    fn client_credentials_with_basic_auth() {
        let request = TokenRequest::client_credentials()
            .resource("https://mcp.test/mcp")
            .scope("a b");
        let auth = ClientAuth::basic("conformance-test-client", "conformance-test-secret");
        let encoded = request.encode(&auth).unwrap();
        assert_eq!(
            encoded.body,
            "grant_type=client_credentials&resource=https%3A%2F%2Fmcp.test%2Fmcp&scope=a+b"
        );
        assert_eq!(
            encoded.authorization.as_deref(),
            Some("Basic Y29uZm9ybWFuY2UtdGVzdC1jbGllbnQ6Y29uZm9ybWFuY2UtdGVzdC1zZWNyZXQ=")
        );
        assert_eq!(auth.method(), "client_secret_basic");
    }

    #[test]
    fn basic_auth_form_encodes_the_id_and_secret() {
        // RFC 6749 §2.3.1: "a b" / "p:w%" → "a+b:p%3Aw%25".
        let encoded = TokenRequest::client_credentials()
            .encode(&ClientAuth::basic("a b", "p:w%"))
            .unwrap();
        assert_eq!(
            encoded.authorization.as_deref(),
            Some("Basic YStiOnAlM0F3JTI1")
        );
    }

    #[test]
    fn client_secret_post_puts_the_credentials_in_the_body() {
        let auth = ClientAuth::post("id", "s&cret");
        let encoded = TokenRequest::client_credentials().encode(&auth).unwrap();
        assert_eq!(encoded.authorization, None);
        assert_eq!(
            form(&encoded.body),
            [
                ("grant_type".to_owned(), "client_credentials".to_owned()),
                ("client_id".to_owned(), "id".to_owned()),
                ("client_secret".to_owned(), "s&cret".to_owned()),
            ]
        );
        assert_eq!(auth.method(), "client_secret_post");
    }

    #[test]
    fn private_key_jwt_sends_a_fresh_assertion_and_no_client_id() {
        let key = SigningKey::generate_es256().unwrap();
        let jwk = key.public_jwk().unwrap();
        let auth = ClientAuth::private_key_jwt(ClientAssertion::new(
            "conformance-test-client",
            "http://127.0.0.1:1",
            key,
        ));
        let request = TokenRequest::client_credentials().resource("http://127.0.0.1:2/mcp");
        let first = form_map(&request.encode(&auth).unwrap().body);
        let second = form_map(&request.encode(&auth).unwrap().body);

        assert_eq!(first["grant_type"], "client_credentials");
        assert_eq!(
            first["client_assertion_type"],
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        );
        assert!(!first.contains_key("client_id"));
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&["http://127.0.0.1:1"]);
        let claims = jsonwebtoken::decode::<serde_json::Value>(
            &first["client_assertion"],
            &DecodingKey::from_jwk(&jwk).unwrap(),
            &validation,
        )
        .unwrap()
        .claims;
        assert_eq!(claims["iss"], "conformance-test-client");
        assert_eq!(claims["sub"], "conformance-test-client");
        assert_ne!(first["client_assertion"], second["client_assertion"]);
        assert_eq!(auth.method(), "private_key_jwt");
        assert_eq!(auth.client_id(), Some("conformance-test-client"));
    }

    #[test]
    fn public_and_anonymous_clients() {
        let request = TokenRequest::jwt_bearer("wl.jwt");
        let public = request.encode(&ClientAuth::public("wif")).unwrap();
        assert_eq!(public.authorization, None);
        assert_eq!(form_map(&public.body)["client_id"], "wif");
        let anonymous = request.encode(&ClientAuth::none()).unwrap();
        assert_eq!(
            anonymous.body,
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=wl.jwt"
        );
        assert_eq!(ClientAuth::none().method(), "none");
        assert_eq!(ClientAuth::none().client_id(), None);
    }

    #[test]
    fn the_id_jag_exchange_has_the_parameters_the_extension_requires() {
        let request = TokenRequest::id_jag("id.token", "http://as.test", "http://mcp.test/mcp")
            .scope("chat.read chat.history");
        let body = form_map(
            &request
                .encode(&ClientAuth::public("conformance-test-idp-client"))
                .unwrap()
                .body,
        );
        assert_eq!(
            body["grant_type"],
            "urn:ietf:params:oauth:grant-type:token-exchange"
        );
        assert_eq!(
            body["requested_token_type"],
            "urn:ietf:params:oauth:token-type:id-jag"
        );
        assert_eq!(body["subject_token"], "id.token");
        assert_eq!(
            body["subject_token_type"],
            "urn:ietf:params:oauth:token-type:id_token"
        );
        assert_eq!(body["audience"], "http://as.test");
        assert_eq!(body["resource"], "http://mcp.test/mcp");
        assert_eq!(body["scope"], "chat.read chat.history");
        assert_eq!(body["client_id"], "conformance-test-idp-client");
        assert_eq!(body.len(), 8);
    }

    #[test]
    fn code_and_refresh_requests() {
        let code = TokenRequest::authorization_code("c0de", "http://127.0.0.1:1/cb", "v3rifier")
            .resource("http://mcp.test/mcp");
        assert_eq!(
            code.encode(&ClientAuth::public("id")).unwrap().body,
            "grant_type=authorization_code&code=c0de&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb\
             &code_verifier=v3rifier&resource=http%3A%2F%2Fmcp.test%2Fmcp&client_id=id"
        );
        let refresh = TokenRequest::refresh_token("rt");
        assert_eq!(refresh.grant_type(), "refresh_token");
        assert_eq!(refresh.get("refresh_token"), Some("rt"));
    }

    #[test]
    fn requests_can_run_on_any_thread() {
        fn assert_send<T: Send>(_: &T) {}
        let http = reqwest::Client::new();
        let endpoint = TokenEndpoint::new("http://127.0.0.1:1/token").unwrap();
        let auth = ClientAuth::none();
        let request = TokenRequest::client_credentials();
        let dpop = Dpop::generate().unwrap();
        assert_send(&endpoint.request(&http, &auth, &request, Some(&dpop)));
    }

    #[test]
    fn single_valued_parameters_are_replaced_and_resources_accumulate() {
        let request = TokenRequest::token_exchange("t", TOKEN_TYPE_ACCESS_TOKEN)
            .audience("a1")
            .audience("a2")
            .scope("x")
            .scope(" ")
            .resource("r1")
            .resource("r2");
        assert_eq!(request.get("audience"), Some("a2"));
        assert_eq!(request.get("scope"), None);
        let body = form(&request.encode(&ClientAuth::none()).unwrap().body);
        let resources: Vec<&str> = body
            .iter()
            .filter(|(name, _)| name == "resource")
            .map(|(_, value)| value.as_str())
            .collect();
        assert_eq!(resources, ["r1", "r2"]);
    }

    #[test]
    fn debug_output_hides_secrets_and_tokens() {
        let auth = format!("{:?}", ClientAuth::basic("id", "top-secret"));
        assert!(auth.contains("client_secret_basic") && !auth.contains("top-secret"));
        let request = format!("{:?}", TokenRequest::jwt_bearer("secret.assertion.jwt"));
        assert!(request.contains("assertion") && !request.contains("secret.assertion.jwt"));
        let response = TokenResponse::from_json(
            br#"{"access_token":"at-secret","token_type":"Bearer","refresh_token":"rt-secret"}"#,
        )
        .unwrap();
        let shown = format!("{response:?}");
        assert!(!shown.contains("at-secret") && !shown.contains("rt-secret"));
    }

    #[test]
    fn token_responses_are_parsed_leniently_but_need_a_token_and_type() {
        let exchange = TokenResponse::from_json(
            br#"{"access_token":"jag","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}"#,
        )
        .unwrap();
        assert_eq!(exchange.access_token.secret(), "jag");
        assert_eq!(
            exchange.issued_token_type.as_deref(),
            Some(TOKEN_TYPE_ID_JAG)
        );
        assert_eq!(exchange.expires_in, None);
        assert!(!exchange.is_dpop());

        let full = TokenResponse::from_json(
            br#"{"access_token":"a","token_type":"dpop","expires_in":"3600","refresh_token":"r","scope":"x y","extra":1}"#,
        )
        .unwrap();
        assert!(full.is_dpop());
        assert_eq!(full.expires_in, Some(Duration::from_secs(3600)));
        assert_eq!(full.refresh_token.unwrap().secret(), "r");
        assert_eq!(full.scope.as_deref(), Some("x y"));
        let float = TokenResponse::from_json(
            br#"{"access_token":"a","token_type":"Bearer","expires_in":59.9}"#,
        )
        .unwrap();
        assert_eq!(float.expires_in, Some(Duration::from_secs(59)));

        for bad in [
            &br#"{"token_type":"Bearer"}"#[..],
            br#"{"access_token":"","token_type":"Bearer"}"#,
            br#"{"access_token":"a"}"#,
            br#"{"access_token":"secret-value","token_type":7}"#,
            b"<html>",
        ] {
            let err = TokenResponse::from_json(bad).unwrap_err();
            assert!(matches!(err, GrantError::InvalidResponse(_)), "{err:?}");
            assert!(!err.to_string().contains("secret-value"));
        }
    }

    #[test]
    fn endpoints_must_be_absolute_http_urls_without_fragment() {
        assert!(TokenEndpoint::new("https://as.test/token?tenant=1").is_ok());
        for bad in [
            "/token",
            "ftp://as.test/token",
            "https://as.test/token#x",
            "nope",
        ] {
            assert!(
                matches!(TokenEndpoint::new(bad), Err(GrantError::InvalidEndpoint(_))),
                "{bad}"
            );
        }
    }

    /// One request as a test token endpoint saw it.
    #[derive(Debug, Clone)]
    struct Seen {
        authorization: Option<String>,
        content_type: Option<String>,
        dpop: Option<String>,
        form: HashMap<String, String>,
    }

    type Log = Arc<Mutex<Vec<Seen>>>;

    /// A token endpoint at `http://127.0.0.1:<port>/token` answering with `answer(request,
    /// how many came before)`, and the log of what it received.
    fn serve<F>(answer: F) -> (String, Log, actix_web::dev::ServerHandle)
    where
        F: Fn(&Seen, usize) -> HttpResponse + Clone + Send + 'static,
    {
        let log: Log = Arc::default();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let app_log = log.clone();
        let server = HttpServer::new(move || {
            let log = app_log.clone();
            let answer = answer.clone();
            App::new().route(
                "/token",
                web::post().to(move |req: HttpRequest, body: web::Bytes| {
                    let header = |name: &str| {
                        req.headers()
                            .get(name)
                            .map(|value| value.to_str().unwrap().to_owned())
                    };
                    let seen = Seen {
                        authorization: header("authorization"),
                        content_type: header("content-type"),
                        dpop: header("dpop"),
                        form: form_map(std::str::from_utf8(&body).unwrap()),
                    };
                    let mut log = log.lock().unwrap();
                    let response = answer(&seen, log.len());
                    log.push(seen);
                    async move { response }
                }),
            )
        })
        .workers(1)
        .disable_signals()
        .shutdown_timeout(1)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        (format!("http://127.0.0.1:{port}/token"), log, handle)
    }

    fn http() -> reqwest::Client {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
    }

    /// The claims of a DPoP proof, checked against its own key.
    fn proof_claims(proof: &str) -> serde_json::Value {
        let header = jsonwebtoken::decode_header(proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let key = DecodingKey::from_jwk(&header.jwk.unwrap()).unwrap();
        let mut validation = Validation::new(header.alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        jsonwebtoken::decode::<serde_json::Value>(proof, &key, &validation)
            .unwrap()
            .claims
    }

    const AS_NONCE: &str = "conformance-as-dpop-nonce";

    /// Demands [`AS_NONCE`] like the conformance suite's authorization server, then issues a
    /// DPoP token.
    fn nonce_demanding(seen: &Seen, _: usize) -> HttpResponse {
        let claims = proof_claims(seen.dpop.as_deref().unwrap());
        if claims.get("nonce").and_then(|nonce| nonce.as_str()) != Some(AS_NONCE) {
            return HttpResponse::BadRequest()
                .insert_header(("DPoP-Nonce", AS_NONCE))
                .json(serde_json::json!({
                    "error": "use_dpop_nonce",
                    "error_description": "Authorization server requires a DPoP nonce"
                }));
        }
        HttpResponse::Ok().json(serde_json::json!({
            "access_token": "bound", "token_type": "DPoP", "expires_in": 3600
        }))
    }

    #[actix_rt::test]
    async fn a_dpop_nonce_demand_is_retried_once_with_the_nonce() {
        let (url, log, handle) = serve(nonce_demanding);
        let endpoint = TokenEndpoint::new(&url).unwrap();
        let dpop = Dpop::generate().unwrap();
        let auth = ClientAuth::private_key_jwt(ClientAssertion::new(
            "c",
            "http://as.test",
            SigningKey::generate_es256().unwrap(),
        ));
        let request = TokenRequest::client_credentials().resource("http://mcp.test/mcp");

        let token = endpoint
            .request(&http(), &auth, &request, Some(&dpop))
            .await
            .unwrap();

        assert!(token.is_dpop());
        assert_eq!(token.access_token.secret(), "bound");
        assert_eq!(token.expires_in, Some(Duration::from_secs(3600)));
        let seen = log.lock().unwrap().clone();
        assert_eq!(seen.len(), 2);
        let first = proof_claims(seen[0].dpop.as_deref().unwrap());
        let second = proof_claims(seen[1].dpop.as_deref().unwrap());
        assert!(first.get("nonce").is_none());
        assert_eq!(second["nonce"], AS_NONCE);
        assert_ne!(first["jti"], second["jti"]);
        for claims in [&first, &second] {
            assert_eq!(claims["htm"], "POST");
            assert_eq!(claims["htu"], url.as_str());
            assert!(claims.get("ath").is_none());
        }
        assert_ne!(
            seen[0].form["client_assertion"], seen[1].form["client_assertion"],
            "a retry must not replay the client assertion"
        );
        assert_eq!(
            seen[0].content_type.as_deref(),
            Some("application/x-www-form-urlencoded")
        );
        // The nonce is kept for the next token request.
        assert_eq!(
            dpop.nonces()
                .get(ServerRole::Authorization, endpoint.url())
                .as_deref(),
            Some(AS_NONCE)
        );
        let again = endpoint
            .request(&http(), &auth, &request, Some(&dpop))
            .await
            .unwrap();
        assert!(again.is_dpop());
        assert_eq!(log.lock().unwrap().len(), 3, "no demand the second time");
        handle.stop(true).await;
    }

    #[actix_rt::test]
    async fn a_nonce_is_retried_only_once() {
        let (url, log, handle) = serve(|_: &Seen, count: usize| {
            HttpResponse::BadRequest()
                .insert_header(("DPoP-Nonce", format!("n{count}")))
                .json(serde_json::json!({"error": "use_dpop_nonce"}))
        });
        let dpop = Dpop::generate().unwrap();
        let err = TokenEndpoint::new(&url)
            .unwrap()
            .request(
                &http(),
                &ClientAuth::public("c"),
                &TokenRequest::client_credentials(),
                Some(&dpop),
            )
            .await
            .unwrap_err();
        assert_eq!(err.oauth().unwrap().error, "use_dpop_nonce");
        assert_eq!(log.lock().unwrap().len(), 2);
        handle.stop(true).await;
    }

    #[actix_rt::test]
    async fn without_dpop_nothing_is_retried_and_errors_are_typed() {
        let (url, log, handle) = serve(|seen: &Seen, _| {
            assert!(seen.dpop.is_none());
            if seen.authorization.is_none() {
                return HttpResponse::BadRequest()
                    .insert_header(("DPoP-Nonce", "n"))
                    .json(serde_json::json!({"error": "use_dpop_nonce"}));
            }
            HttpResponse::Unauthorized().json(serde_json::json!({
                "error": "invalid_client",
                "error_description": "x".repeat(2000),
                "error_uri": "https://as.test/errors"
            }))
        });
        let endpoint = TokenEndpoint::new(&url).unwrap();
        let request = TokenRequest::jwt_bearer("jag");

        let err = endpoint
            .request(&http(), &ClientAuth::none(), &request, None)
            .await
            .unwrap_err();
        assert_eq!(err.oauth().unwrap().error, "use_dpop_nonce");
        assert_eq!(log.lock().unwrap().len(), 1);

        let err = endpoint
            .request(&http(), &ClientAuth::basic("c", "s"), &request, None)
            .await
            .unwrap_err();
        let oauth = err.oauth().unwrap();
        assert_eq!(oauth.status, StatusCode::UNAUTHORIZED);
        assert_eq!(oauth.error, "invalid_client");
        assert!(oauth.error_description.as_ref().unwrap().len() <= MAX_ERROR_TEXT + 3);
        assert_eq!(oauth.error_uri.as_deref(), Some("https://as.test/errors"));
        assert!(err.to_string().contains("invalid_client (HTTP 401)"));
        assert_eq!(log.lock().unwrap().len(), 2);
        handle.stop(true).await;
    }

    #[actix_rt::test]
    async fn non_oauth_failures_are_reported_by_status() {
        let (url, _log, handle) = serve(|seen: &Seen, _| match seen.form["grant_type"].as_str() {
            "redirect" => HttpResponse::TemporaryRedirect()
                .insert_header(("Location", "http://evil.test/token"))
                .json(serde_json::json!({"error": "x"})),
            "large" => HttpResponse::Ok().body("x".repeat(10_000)),
            _ => HttpResponse::InternalServerError().body("<html>oops</html>"),
        });
        let endpoint = TokenEndpoint::new(&url).unwrap().max_response_size(1024);
        let send = |grant: &'static str| {
            let endpoint = endpoint.clone();
            async move {
                endpoint
                    .request(
                        &http(),
                        &ClientAuth::none(),
                        &TokenRequest::new(grant),
                        None,
                    )
                    .await
                    .unwrap_err()
            }
        };
        assert!(matches!(
            send("fail").await,
            GrantError::Status(StatusCode::INTERNAL_SERVER_ERROR)
        ));
        assert!(matches!(
            send("redirect").await,
            GrantError::Status(StatusCode::TEMPORARY_REDIRECT)
        ));
        assert!(matches!(send("large").await, GrantError::TooLarge(1024)));
        handle.stop(true).await;
    }

    #[actix_rt::test]
    async fn a_slow_token_endpoint_times_out() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = HttpServer::new(|| {
            App::new().route(
                "/token",
                web::post().to(|| async {
                    actix_rt::time::sleep(Duration::from_secs(5)).await;
                    HttpResponse::Ok().finish()
                }),
            )
        })
        .workers(1)
        .disable_signals()
        .shutdown_timeout(0)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_rt::spawn(server);

        let endpoint = TokenEndpoint::new(&format!("http://127.0.0.1:{port}/token"))
            .unwrap()
            .timeout(Duration::from_millis(200));
        let started = std::time::Instant::now();
        let err = endpoint
            .request(
                &http(),
                &ClientAuth::none(),
                &TokenRequest::client_credentials(),
                None,
            )
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(3));
        handle.stop(false).await;
    }

    #[actix_rt::test]
    async fn a_refused_connection_is_an_http_error() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let err = TokenEndpoint::new(&format!("http://127.0.0.1:{port}/token"))
            .unwrap()
            .request(
                &http(),
                &ClientAuth::none(),
                &TokenRequest::client_credentials(),
                None,
            )
            .await
            .unwrap_err();
        assert!(matches!(err, GrantError::Http(_)), "{err:?}");
    }
}
