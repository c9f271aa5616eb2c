//! How the client is known to an authorization server: pre-registered credentials, a client
//! ID metadata document (an `https` URL as `client_id`), or dynamic client registration (RFC
//! 7591), tried in that order (the MCP spec's priority). Every registration is bound to the
//! issuer it is valid at: credentials of one authorization server are never sent to another.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/client-registration>

use std::fmt;

use oauth2::ClientSecret;
use reqwest::header::{self, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::assertion::SigningKey;
use super::client_auth::TokenEndpointAuth;
use super::error::{AuthError, redact_url};
use super::http::{AuthHttp, RequestKind, checked_url, is_loopback};
use super::metadata::AuthorizationServerMetadata;
use super::token::endpoint_error;
use crate::client::error::ClientError;

/// OAuth client metadata (RFC 7591 section 2): what a dynamic registration sends, and what a
/// client ID metadata document publishes. The grant fills in its part (`redirect_uris`,
/// `grant_types`, `response_types`); empty fields are left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientMetadata {
    /// The client's name, shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    /// The client's home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    /// Where authorization responses may be sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirect_uris: Vec<String>,
    /// The grants the client uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grant_types: Vec<String>,
    /// The response types the client uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_types: Vec<String>,
    /// How it authenticates at the token endpoint (chosen from the server's list when
    /// unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// `native` or `web` (OpenID Connect registration; the MCP spec requires it): inferred
    /// from the redirect URIs when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_type: Option<String>,
    /// The scopes the client may ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The software's identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software_id: Option<String>,
    /// The software's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software_version: Option<String>,
    /// Any other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ClientMetadata {
    /// Metadata for a client called `name`.
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            client_name: Some(name.into()),
            ..Self::default()
        }
    }

    /// `native` when every redirect URI is a loopback or custom-scheme one, else `web`.
    pub(crate) fn inferred_application_type(&self) -> &'static str {
        let native = self.redirect_uris.iter().all(|uri| {
            reqwest::Url::parse(uri)
                .is_ok_and(|url| !matches!(url.scheme(), "http" | "https") || is_loopback(&url))
        });
        if native { "native" } else { "web" }
    }
}

/// How a [`ClientRegistration`] came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RegistrationKind {
    /// Given by the application (registered beforehand with the authorization server).
    PreRegistered,
    /// The client ID is the URL of the client's metadata document.
    MetadataDocument,
    /// Obtained by dynamic client registration (RFC 7591).
    Dynamic,
}

/// What an authorization server knows the client as: its `client_id`, its credentials (a
/// secret, or a private key for `private_key_jwt`, if it has any), how it authenticates at the
/// token endpoint, and the issuer it is valid at. Serializable, for a
/// [`TokenStore`](super::TokenStore) that persists it (a private key is not serialized: it stays
/// with the application, which gives it again with the pre-registration); `Debug` shows no
/// secret.
#[derive(Clone, Serialize, Deserialize)]
pub struct ClientRegistration {
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<ClientSecret>,
    #[serde(skip)]
    signing_key: Option<SigningKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    auth_method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issuer: Option<String>,
    /// When the secret expires, seconds since the Unix epoch (`0`: never).
    #[serde(default)]
    secret_expires_at: u64,
    kind: RegistrationKind,
}

impl fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("client_id", &self.client_id)
            .field("has_secret", &self.client_secret.is_some())
            .field("signing_key", &self.signing_key)
            .field("auth_method", &self.auth_method)
            .field("issuer", &self.issuer)
            .field("kind", &self.kind)
            .finish()
    }
}

impl ClientRegistration {
    /// Pre-registered credentials: `client_id`, for the authorization server
    /// [`issuer`](Self::issuer) names.
    ///
    /// Bind them to their issuer: they are then used with that authorization server only.
    /// Without an issuer they are used with whichever authorization server the MCP server
    /// names, so only where that gives nothing away:
    ///
    /// * a public client's `client_id` alone (no [`secret`](Self::secret), no
    ///   [`private_key`](Self::private_key)), with a grant that sends nothing another server
    ///   could replay: the authorization-code flow
    ///   ([`Grant::accepts_unbound_client`](super::Grant::accepts_unbound_client));
    /// * never a confidential client's (with a secret or a private key), and never with the
    ///   client credentials, JWT-bearer or enterprise grants (an assertion or an ID-JAG
    ///   is as good as a secret to whoever receives it):
    ///   [`OAuthBuilder::build`](super::OAuthBuilder::build) refuses such a registration
    ///   ([`AuthError::Config`]).
    pub fn pre_registered(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            signing_key: None,
            auth_method: None,
            issuer: None,
            secret_expires_at: 0,
            kind: RegistrationKind::PreRegistered,
        }
    }

    /// The same with a client secret (a confidential client).
    #[must_use]
    pub fn secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(ClientSecret::new(secret.into()));
        self
    }

    /// The same with a private key: the client authenticates with `private_key_jwt` (RFC 7523
    /// section 2.2), a fresh assertion signed with `key` in every token request, where the
    /// server accepts it (or the client has no secret).
    #[must_use]
    pub fn private_key(mut self, key: SigningKey) -> Self {
        self.signing_key = Some(key);
        self
    }

    /// The same, with `credential`: a secret or a private key.
    #[must_use]
    pub fn credential(self, credential: impl Into<ClientCredential>) -> Self {
        match credential.into() {
            ClientCredential::Secret(secret) => self.secret(secret),
            ClientCredential::PrivateKey(key) => self.private_key(key),
        }
    }

    /// The same, valid only at the authorization server whose issuer identifier is `issuer`
    /// (compared as a string with the issuer the MCP server's metadata names, which its own
    /// metadata must confirm).
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The same, with a fixed token endpoint authentication method (by default it is chosen
    /// from what the server supports).
    #[must_use]
    pub fn auth_method(mut self, method: &TokenEndpointAuth) -> Self {
        self.auth_method = Some(method.name().to_owned());
        self
    }

    pub(crate) fn metadata_document(url: &str, issuer: &str) -> Self {
        Self {
            client_id: url.to_owned(),
            client_secret: None,
            signing_key: None,
            auth_method: Some(TokenEndpointAuth::None.name().to_owned()),
            issuer: Some(issuer.to_owned()),
            secret_expires_at: 0,
            kind: RegistrationKind::MetadataDocument,
        }
    }

    /// The client ID.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The client secret, if any (a secret: keep it out of logs).
    pub fn client_secret(&self) -> Option<&str> {
        self.client_secret.as_ref().map(|s| s.secret().as_str())
    }

    /// The private key it signs client assertions with, if any.
    pub fn signing_key(&self) -> Option<&SigningKey> {
        self.signing_key.as_ref()
    }

    /// The issuer it is valid at (`None`: a pre-registration not bound to one).
    pub fn issuer_id(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// How it came about.
    pub fn kind(&self) -> RegistrationKind {
        self.kind
    }

    /// Whether it has credentials (a secret or a private key): a confidential client.
    pub fn is_confidential(&self) -> bool {
        self.client_secret.is_some() || self.signing_key.is_some()
    }

    /// Whether it may be used with the authorization server `issuer`: bound to that issuer,
    /// or bound to none and public (see [`pre_registered`](Self::pre_registered)). A
    /// confidential registration bound to no issuer is valid nowhere.
    pub fn valid_at(&self, issuer: &str) -> bool {
        match self.issuer.as_deref() {
            Some(bound) => bound == issuer,
            None => !self.is_confidential(),
        }
    }

    /// Whether its secret has expired.
    pub(crate) fn expired(&self) -> bool {
        self.secret_expires_at != 0
            && std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .is_ok_and(|now| now.as_secs() >= self.secret_expires_at)
    }

    /// The token endpoint authentication method to use with `server`.
    pub fn token_endpoint_auth(&self, server: &AuthorizationServerMetadata) -> TokenEndpointAuth {
        self.auth_method
            .as_deref()
            .and_then(TokenEndpointAuth::from_name)
            .unwrap_or_else(|| TokenEndpointAuth::choose(server, self))
    }
}

/// How a confidential client proves who it is at the token endpoint: a secret
/// (`client_secret_basic` or `client_secret_post`) or a private key (`private_key_jwt`).
/// `Debug` shows which, never the secret or key.
#[derive(Clone)]
#[non_exhaustive]
pub enum ClientCredential {
    /// A client secret.
    Secret(String),
    /// A private key that signs client assertions.
    PrivateKey(SigningKey),
}

impl ClientCredential {
    /// A client secret.
    pub fn secret(secret: impl Into<String>) -> Self {
        Self::Secret(secret.into())
    }
}

impl fmt::Debug for ClientCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Secret(_) => f.write_str("Secret(..)"),
            Self::PrivateKey(key) => f.debug_tuple("PrivateKey").field(key).finish(),
        }
    }
}

impl From<SigningKey> for ClientCredential {
    fn from(key: SigningKey) -> Self {
        Self::PrivateKey(key)
    }
}

/// A registration response (RFC 7591 section 3.2.1): the members the client keeps.
#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    client_secret_expires_at: Option<u64>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Registers the client at `server`'s registration endpoint with `metadata`.
///
/// # Errors
/// [`AuthError::Registration`] when the server refuses or answers unreadably;
/// [`AuthError::InsecureUrl`] for a refused endpoint; any error of the hook.
pub(crate) async fn register(
    http: &AuthHttp,
    server: &AuthorizationServerMetadata,
    mut metadata: ClientMetadata,
) -> Result<ClientRegistration, ClientError> {
    let issuer = server.issuer.clone();
    let endpoint =
        server
            .registration_endpoint
            .as_deref()
            .ok_or_else(|| AuthError::NoRegistration {
                issuer: issuer.clone(),
            })?;
    let url = checked_url(endpoint)?;
    if metadata.application_type.is_none() {
        metadata.application_type = Some(metadata.inferred_application_type().to_owned());
    }
    let requested = match metadata.token_endpoint_auth_method.clone() {
        Some(method) => method,
        None => {
            let method = TokenEndpointAuth::for_registration(server)
                .name()
                .to_owned();
            metadata.token_endpoint_auth_method = Some(method.clone());
            method
        }
    };
    let body: bytes::Bytes = serde_json::to_vec(&metadata)
        .map_err(|err| AuthError::Registration {
            issuer: issuer.clone(),
            reason: format!("the client metadata cannot be serialized: {err}"),
        })?
        .into();
    let answer = http
        .send(
            RequestKind::Registration,
            &url,
            Some(server),
            "client registration",
            || {
                let mut headers = HeaderMap::new();
                headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
                Ok((headers, body.clone()))
            },
        )
        .await?;
    if !answer.status.is_success() {
        return Err(AuthError::Registration {
            issuer,
            reason: endpoint_error(&answer).to_string(),
        }
        .into());
    }
    let response: RegistrationResponse =
        answer
            .json("client registration")
            .map_err(|err| AuthError::Registration {
                issuer: issuer.clone(),
                reason: err.to_string(),
            })?;
    if response.client_id.is_empty() {
        return Err(AuthError::Registration {
            issuer,
            reason: "the answer has an empty client_id".into(),
        }
        .into());
    }
    let secret = response.client_secret.filter(|s| !s.is_empty());
    // The server's word on the method wins; without one, what was asked for, unless that
    // needs a secret the server did not issue.
    let method = response.token_endpoint_auth_method.unwrap_or_else(|| {
        if secret.is_none() {
            TokenEndpointAuth::None.name().to_owned()
        } else {
            requested
        }
    });
    Ok(ClientRegistration {
        client_id: response.client_id,
        client_secret: secret.map(ClientSecret::new),
        signing_key: None,
        auth_method: Some(method),
        issuer: Some(issuer),
        secret_expires_at: response.client_secret_expires_at.unwrap_or(0),
        kind: RegistrationKind::Dynamic,
    })
}

/// Checks a client ID metadata document URL: `https`, a path other than `/`, no fragment,
/// no query, no credentials, no dot segments.
///
/// # Errors
/// [`AuthError::Config`] saying why not.
pub(crate) fn check_metadata_document_url(raw: &str) -> Result<(), AuthError> {
    let refuse = |why: &str| {
        AuthError::Config(format!(
            "client metadata document URL {:?} {why}",
            redact_url(raw)
        ))
    };
    let url = reqwest::Url::parse(raw).map_err(|_| refuse("is not a URL"))?;
    if url.scheme() != "https" {
        return Err(refuse("is not https"));
    }
    if url.path() == "/" || url.path().is_empty() {
        return Err(refuse("has no path"));
    }
    if url.fragment().is_some() || url.query().is_some() {
        return Err(refuse("has a query or fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("carries credentials"));
    }
    if raw.contains("/./") || raw.contains("/../") || raw.ends_with("/.") || raw.ends_with("/..") {
        return Err(refuse("has dot segments"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_type_follows_the_redirect_uris() {
        let mut metadata = ClientMetadata::named("x");
        metadata.redirect_uris = vec!["http://127.0.0.1:3000/cb".into()];
        assert_eq!(metadata.inferred_application_type(), "native");
        metadata.redirect_uris = vec!["com.example.app:/cb".into()];
        assert_eq!(metadata.inferred_application_type(), "native");
        metadata.redirect_uris = vec!["https://app.example.com/cb".into()];
        assert_eq!(metadata.inferred_application_type(), "web");
    }

    #[test]
    fn metadata_document_urls_are_checked() {
        assert!(check_metadata_document_url("https://app.example.com/client.json").is_ok());
        assert!(check_metadata_document_url("http://app.example.com/client.json").is_err());
        assert!(check_metadata_document_url("https://app.example.com/").is_err());
        assert!(check_metadata_document_url("https://app.example.com/c.json?x=1").is_err());
        assert!(check_metadata_document_url("https://app.example.com/a/../c.json").is_err());
        let shown = check_metadata_document_url("https://alice:pa55word@app.example.com/c.json")
            .map_err(|err| err.to_string())
            .err();
        assert!(
            shown
                .as_deref()
                .is_some_and(|s| s.contains("credentials") && !s.contains("pa55word")),
            "{shown:?}"
        );
    }

    #[test]
    fn registrations_are_bound_to_their_issuer() {
        let bound = ClientRegistration::pre_registered("id").issuer("https://as.example.com");
        assert!(bound.valid_at("https://as.example.com"));
        assert!(!bound.valid_at("https://as.example.com/"));
        assert!(ClientRegistration::pre_registered("id").valid_at("https://other.example.com"));
        assert!(!format!("{:?}", bound.secret("s3cret")).contains("s3cret"));
        // A confidential client bound to no issuer is valid nowhere.
        let unbound = ClientRegistration::pre_registered("id").secret("s3cret");
        assert!(unbound.is_confidential());
        assert!(!unbound.valid_at("https://as.example.com"));
        let keyed = ClientRegistration::pre_registered("id")
            .private_key(SigningKey::generate_es256().unwrap_or_else(|err| panic!("a key: {err}")));
        assert!(!keyed.valid_at("https://as.example.com"));
    }
}
