//! Access tokens, and the token endpoint: the one place a token request is built, client
//! authentication applied, sent (through [`AuthHttp::send`], the hook seam) and its answer
//! read. Every grant ([`Grant`](super::Grant)) and the refresh of a token go through
//! [`request_token`].
//!
//! Spec: <https://datatracker.ietf.org/doc/html/draft-ietf-oauth-v2-1-13#section-3.2>

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use oauth2::{AccessToken, RefreshToken};
use reqwest::header::{self, HeaderMap, HeaderValue};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::client_auth::TokenEndpointAuth;
use super::error::AuthError;
use super::http::{Answer, AuthHttp, RequestKind, checked_url};
use super::metadata::AuthorizationServerMetadata;
use super::registration::ClientRegistration;
use super::scope;
use crate::client::error::ClientError;

/// The longest OAuth error text quoted in an [`AuthError`].
const MAX_QUOTED: usize = 300;

/// The type of an access token: how it is presented to the MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TokenType {
    /// `Authorization: Bearer <token>` (RFC 6750).
    Bearer,
    /// `Authorization: DPoP <token>` with a proof in the `DPoP` header (RFC 9449).
    DPoP,
    /// Any other type, as the server named it.
    Other(String),
}

impl TokenType {
    /// The type from the token response's `token_type` (case-insensitive).
    pub fn from_name(name: &str) -> Self {
        if name.eq_ignore_ascii_case("bearer") {
            Self::Bearer
        } else if name.eq_ignore_ascii_case("dpop") {
            Self::DPoP
        } else {
            Self::Other(name.to_owned())
        }
    }

    /// The scheme of the `Authorization` header (`Bearer`, `DPoP`, or the name as given).
    pub fn scheme(&self) -> &str {
        match self {
            Self::Bearer => "Bearer",
            Self::DPoP => "DPoP",
            Self::Other(name) => name,
        }
    }
}

impl Serialize for TokenType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.scheme())
    }
}

impl<'de> Deserialize<'de> for TokenType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|name| Self::from_name(&name))
    }
}

/// An access token with what came with it. Serializable, for a [`TokenStore`](super::TokenStore)
/// that persists it; its `Debug` shows no secret.
#[derive(Clone, Serialize, Deserialize)]
pub struct Token {
    access_token: AccessToken,
    token_type: TokenType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<RefreshToken>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
    /// The granted scopes, when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<Vec<String>>,
    /// The scopes the client asked for.
    #[serde(default)]
    requested: Vec<String>,
    /// What the token is, for a token exchange (RFC 8693 section 2.2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issued_token_type: Option<String>,
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token")
            .field("token_type", &self.token_type)
            .field("refreshable", &self.refresh_token.is_some())
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("requested", &self.requested)
            .finish()
    }
}

impl Token {
    /// A token of type `token_type` (for tests and custom grants).
    pub fn new(access_token: impl Into<String>, token_type: TokenType) -> Self {
        Self {
            access_token: AccessToken::new(access_token.into()),
            token_type,
            refresh_token: None,
            expires_at: None,
            scope: None,
            requested: Vec::new(),
            issued_token_type: None,
        }
    }

    /// The same token with a refresh token.
    #[must_use]
    pub fn with_refresh_token(mut self, refresh_token: impl Into<String>) -> Self {
        self.refresh_token = Some(RefreshToken::new(refresh_token.into()));
        self
    }

    /// The same token, expiring `lifetime` from now.
    #[must_use]
    pub fn expiring_in(mut self, lifetime: Duration) -> Self {
        self.expires_at = Some(unix_now().saturating_add(lifetime.as_secs()));
        self
    }

    /// The access token itself (a secret: keep it out of logs).
    pub fn access_token(&self) -> &str {
        self.access_token.secret()
    }

    /// Its type.
    pub fn token_type(&self) -> &TokenType {
        &self.token_type
    }

    /// The refresh token, if the server issued one (a secret).
    pub fn refresh_token(&self) -> Option<&str> {
        self.refresh_token
            .as_ref()
            .map(|token| token.secret().as_str())
    }

    /// When it expires, if the server said.
    pub fn expires_at(&self) -> Option<SystemTime> {
        self.expires_at
            .map(|secs| UNIX_EPOCH + Duration::from_secs(secs))
    }

    /// Whether it has expired, or will within `margin`.
    pub fn is_expired(&self, margin: Duration) -> bool {
        self.expires_at
            .is_some_and(|at| at <= unix_now().saturating_add(margin.as_secs()))
    }

    /// The granted scopes, when the server said (else, per OAuth, those requested).
    pub fn scope(&self) -> Option<&[String]> {
        self.scope.as_deref()
    }

    /// What a token exchange issued (RFC 8693 `issued_token_type`, a
    /// `urn:ietf:params:oauth:token-type:*` URN), when the server said.
    pub fn issued_token_type(&self) -> Option<&str> {
        self.issued_token_type.as_deref()
    }

    /// The scopes the client asked for when it obtained the token.
    pub fn requested_scope(&self) -> &[String] {
        &self.requested
    }

    /// The `Authorization` header value: `<scheme> <token>`.
    pub fn authorization(&self) -> String {
        format!(
            "{} {}",
            self.token_type.scheme(),
            self.access_token.secret()
        )
    }

    pub(crate) fn set_requested(&mut self, scopes: Vec<String>) {
        self.requested = scopes;
    }

    /// A refreshed token keeps the old refresh token when the server sent no new one (RFC
    /// 6749 section 6), and the old scopes when it named none.
    pub(crate) fn inherit(&mut self, old: &Token) {
        if self.refresh_token.is_none() {
            self.refresh_token = old.refresh_token.clone();
        }
        if self.requested.is_empty() {
            self.requested = old.requested.clone();
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// A successful token response (RFC 6749 section 5.1), read leniently: `expires_in` may be a
/// number or a numeric string.
#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<Value>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    issued_token_type: Option<String>,
}

/// An error response (RFC 6749 section 5.2).
#[derive(Deserialize)]
struct ErrorResponse {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

fn shorten(mut text: String) -> String {
    if text.len() > MAX_QUOTED {
        let mut end = MAX_QUOTED;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// The OAuth error of an answer that is not a success, as an [`AuthError::TokenRequest`]
/// (also used for registration and other endpoint errors).
pub(crate) fn endpoint_error(answer: &Answer) -> AuthError {
    match serde_json::from_slice::<ErrorResponse>(&answer.body) {
        Ok(error) => AuthError::TokenRequest {
            status: answer.status.as_u16(),
            error: shorten(error.error),
            description: error.error_description.map(shorten),
        },
        Err(_) => AuthError::TokenRequest {
            status: answer.status.as_u16(),
            error: "(no OAuth error in the answer)".into(),
            description: None,
        },
    }
}

/// Reads a token endpoint's answer.
///
/// # Errors
/// [`AuthError::TokenRequest`] for an error answer, [`AuthError::Fetch`] for an unreadable
/// success.
pub(crate) fn read_token(answer: &Answer) -> Result<Token, AuthError> {
    if !answer.status.is_success() {
        return Err(endpoint_error(answer));
    }
    let response: TokenResponse = answer.json("token response")?;
    if response.access_token.is_empty() {
        return Err(AuthError::Fetch {
            what: "token response".into(),
            reason: "empty access_token".into(),
        });
    }
    let expires_in = match response.expires_in {
        Some(Value::Number(n)) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    Ok(Token {
        access_token: AccessToken::new(response.access_token),
        token_type: TokenType::from_name(&response.token_type),
        refresh_token: response
            .refresh_token
            .filter(|token| !token.is_empty())
            .map(RefreshToken::new),
        expires_at: expires_in.map(|secs| unix_now().saturating_add(secs)),
        scope: response.scope.as_deref().map(scope::parse),
        requested: Vec::new(),
        issued_token_type: response.issued_token_type,
    })
}

/// The form body of a request, `application/x-www-form-urlencoded`.
pub(crate) fn form_body(form: &[(String, String)]) -> Bytes {
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in form {
        serializer.append_pair(name, value);
    }
    Bytes::from(serializer.finish())
}

/// Sends a token request to `server`'s token endpoint: `grant_type`, then `params`, then
/// `resource` (RFC 8707, as the protected resource metadata publishes it), authenticated as
/// `client` with `auth`. The answer is read as a token.
///
/// This is the single path of every token request (all grants, refreshes): client
/// authentication is applied by [`TokenEndpointAuth::apply`] and the request leaves through
/// [`AuthHttp::send`], where the [`RequestHook`](super::RequestHook) adds its headers.
///
/// # Errors
/// [`AuthError::MissingEndpoint`], [`AuthError::InsecureUrl`], [`AuthError::TokenRequest`],
/// [`AuthError::Fetch`], or any error of the hook or the client authentication.
pub(crate) async fn request_token(
    http: &AuthHttp,
    server: &AuthorizationServerMetadata,
    client: &ClientRegistration,
    auth: &TokenEndpointAuth,
    resource: Option<&str>,
    grant_type: &str,
    params: &[(&str, &str)],
) -> Result<Token, ClientError> {
    let endpoint = server
        .token_endpoint
        .as_deref()
        .ok_or_else(|| AuthError::MissingEndpoint {
            issuer: server.issuer.clone(),
            endpoint: "token_endpoint",
        })?;
    let url = checked_url(endpoint)?;
    let mut form: Vec<(String, String)> = vec![("grant_type".into(), grant_type.into())];
    form.extend(
        params
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned())),
    );
    if let Some(resource) = resource {
        form.push(("resource".into(), resource.to_owned()));
    }
    let answer = http
        .send(
            RequestKind::Token,
            &url,
            Some(server),
            "token request",
            || {
                let mut headers = HeaderMap::new();
                headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/x-www-form-urlencoded"),
                );
                headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
                // Applied for each attempt: a client assertion is signed anew.
                let mut form = form.clone();
                auth.apply(client, server, &mut form, &mut headers)?;
                Ok((headers, form_body(&form)))
            },
        )
        .await?;
    Ok(read_token(&answer)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            status: reqwest::StatusCode::from_u16(status).unwrap_or_default(),
            headers: HeaderMap::new(),
            body: Bytes::from(body.to_owned()),
        }
    }

    #[test]
    fn token_responses_are_read_leniently() {
        let token = read_token(&answer(
            200,
            r#"{"access_token":"a","token_type":"bearer","expires_in":"60","scope":"x y","refresh_token":"r"}"#,
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(token.token_type(), &TokenType::Bearer);
        assert_eq!(token.authorization(), "Bearer a");
        assert_eq!(token.refresh_token(), Some("r"));
        assert_eq!(token.scope().map(<[String]>::len), Some(2));
        assert!(!token.is_expired(Duration::ZERO));
        assert!(token.is_expired(Duration::from_secs(120)));
        let dpop = read_token(&answer(200, r#"{"access_token":"a","token_type":"DPoP"}"#))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(dpop.authorization(), "DPoP a");
    }

    #[test]
    fn error_responses_name_the_oauth_error() {
        let err = read_token(&answer(
            400,
            r#"{"error":"invalid_grant","error_description":"no"}"#,
        ))
        .err();
        assert_eq!(
            err,
            Some(AuthError::TokenRequest {
                status: 400,
                error: "invalid_grant".into(),
                description: Some("no".into()),
            })
        );
        assert!(read_token(&answer(200, r#"{"token_type":"Bearer"}"#)).is_err());
    }

    #[test]
    fn an_unreadable_answer_quotes_no_secret() {
        for body in [
            r#"{"access_token":"secret-value","token_type":7}"#,
            r#"{"access_token":"secret-value"}"#,
        ] {
            let err = read_token(&answer(200, body)).err().map(|e| e.to_string());
            let err = err.unwrap_or_default();
            assert!(err.contains("token response"), "{err}");
            assert!(!err.contains("secret-value"), "{err}");
        }
        let exchange = read_token(&answer(
            200,
            r#"{"access_token":"jag","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}"#,
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            exchange.issued_token_type(),
            Some("urn:ietf:params:oauth:token-type:id-jag")
        );
        assert_eq!(exchange.token_type(), &TokenType::Other("N_A".into()));
    }

    #[test]
    fn debug_hides_the_secrets() {
        let token = Token::new("secret-value", TokenType::Bearer).with_refresh_token("r-secret");
        let shown = format!("{token:?}");
        assert!(!shown.contains("secret"), "{shown}");
    }
}
