//! The grants of the MCP authorization extensions, which obtain a token without a browser:
//!
//! | grant | extension | token requests |
//! | --- | --- | --- |
//! | [`ClientCredentials`] | OAuth client credentials | `client_credentials` at the authorization server, authenticated with a secret or a private key (`private_key_jwt`) |
//! | [`JwtBearer`] | workload identity federation | the JWT-bearer grant (RFC 7523 section 2.1) with the workload's identity token as `assertion` |
//! | [`EnterpriseAuthorization`] | enterprise-managed authorization (ID-JAG) | a token exchange (RFC 8693) of the user's ID token for an ID-JAG at the enterprise identity provider, then the JWT-bearer grant with the ID-JAG at the authorization server |
//!
//! Each is a [`Grant`] used through the ordinary flow; see the
//! [auth module docs](crate::client::auth#the-oauth-extensions) for what they share.
//!
//! Spec: <https://github.com/modelcontextprotocol/ext-auth/tree/main/specification/draft>,
//! <https://www.rfc-editor.org/rfc/rfc7523#section-2.1>,
//! <https://www.rfc-editor.org/rfc/rfc8693>

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::error::{AuthError, redact_url};
use super::grant::{Grant, GrantContext};
use super::http::{AuthHttp, checked_url};
use super::metadata::{AuthorizationServerMetadata, discover_server};
use super::registration::{ClientCredential, ClientMetadata, ClientRegistration};
use super::scope;
use super::token::{Token, request_token};
use super::{OAuth, OAuthBuilder};
use crate::client::error::ClientError;

/// `grant_type` of the client credentials grant (OAuth 2.1 section 4.2).
pub const GRANT_CLIENT_CREDENTIALS: &str = "client_credentials";
/// `grant_type` of token exchange (RFC 8693 section 2.1).
pub const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// `grant_type` of the JWT-bearer authorization grant (RFC 7523 section 2.1).
pub const GRANT_JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// Token type of an Identity Assertion JWT Authorization Grant (ID-JAG).
pub const TOKEN_TYPE_ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// Token type of an OpenID Connect ID token (RFC 8693 section 3).
pub const TOKEN_TYPE_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// Supplies a token the application obtains elsewhere: a workload's identity token for
/// [`JwtBearer`], the user's ID token for [`EnterpriseAuthorization`]. Asked each time the
/// grant runs, so it may hand out a fresh one; a closure works through [`token_with`], and a
/// `String` always gives itself.
pub trait TokenSource: Send + Sync {
    /// The token (a secret: keep it out of logs).
    ///
    /// # Errors
    /// Any [`ClientError`]: the request that needed authorization fails with it.
    fn token(&self) -> BoxFuture<'_, Result<String, ClientError>>;
}

impl TokenSource for String {
    fn token(&self) -> BoxFuture<'_, Result<String, ClientError>> {
        Box::pin(std::future::ready(Ok(self.clone())))
    }
}

/// A [`TokenSource`] made of a closure (see [`token_with`]).
pub struct FnTokenSource<F>(F);

impl<F> fmt::Debug for FnTokenSource<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnTokenSource")
    }
}

impl<F, Fut> TokenSource for FnTokenSource<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = Result<String, ClientError>> + Send + 'static,
{
    fn token(&self) -> BoxFuture<'_, Result<String, ClientError>> {
        Box::pin((self.0)())
    }
}

/// A [`TokenSource`] that calls `source` for each token.
///
/// ```
/// use actix_mcp::client::auth::{OAuth, token_with};
///
/// let oauth = OAuth::jwt_bearer(
///     "https://auth.example.com",
///     "my-workload",
///     token_with(|| async {
///         // Read the token the platform mounts, which it rotates.
///         # let read = || Ok::<_, std::io::Error>(String::from("eyJ..."));
///         read().map_err(|err| actix_mcp::client::ClientError::Transport(err.to_string()))
///     }),
/// )
/// .build();
/// assert!(oauth.is_ok());
/// ```
pub fn token_with<F, Fut>(source: F) -> FnTokenSource<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = Result<String, ClientError>> + Send + 'static,
{
    FnTokenSource(source)
}

/// `scope` among `params` when there are scopes to ask for.
fn with_scope<'a>(params: &mut Vec<(&'a str, &'a str)>, scope: Option<&'a str>) {
    if let Some(scope) = scope {
        params.push(("scope", scope));
    }
}

/// The client credentials grant (OAuth 2.1 section 4.2): the client obtains a token for
/// itself, authenticated with its secret (`client_secret_basic` or `client_secret_post`) or
/// private key (`private_key_jwt`), as the server supports. For machine-to-machine use.
///
/// ```
/// use actix_mcp::client::auth::{ClientCredential, OAuth};
///
/// let oauth = OAuth::client_credentials(
///     "https://auth.example.com",
///     "my-service",
///     ClientCredential::secret("s3cret"),
/// )
/// .build();
/// assert!(oauth.is_ok());
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ClientCredentials {}

impl ClientCredentials {
    /// The grant.
    pub fn new() -> Self {
        Self {}
    }
}

impl Grant for ClientCredentials {
    fn obtain<'a>(&'a self, cx: GrantContext<'a>) -> BoxFuture<'a, Result<Token, ClientError>> {
        Box::pin(async move {
            let scope = scope::join(cx.scopes());
            let mut params = Vec::new();
            with_scope(&mut params, scope.as_deref());
            cx.token_request(GRANT_CLIENT_CREDENTIALS, &params).await
        })
    }

    fn client_metadata(&self, metadata: &mut ClientMetadata) {
        add_grant_type(metadata, GRANT_CLIENT_CREDENTIALS);
    }

    fn dynamic_registration(&self) -> bool {
        false
    }
}

fn add_grant_type(metadata: &mut ClientMetadata, grant: &str) {
    if !metadata.grant_types.iter().any(|g| g == grant) {
        metadata.grant_types.push(grant.to_owned());
    }
}

/// The JWT-bearer grant (RFC 7523 section 2.1) with a JWT the application supplies: workload
/// identity federation, where the workload presents the identity token its platform issued
/// (signed by the platform, addressed to the authorization server) and gets an access token.
///
/// ```
/// use actix_mcp::client::auth::OAuth;
///
/// # let workload_token = String::from("eyJ...");
/// let oauth = OAuth::jwt_bearer("https://auth.example.com", "my-workload", workload_token).build();
/// assert!(oauth.is_ok());
/// ```
#[derive(Clone)]
pub struct JwtBearer {
    assertion: Arc<dyn TokenSource>,
}

impl fmt::Debug for JwtBearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtBearer").finish_non_exhaustive()
    }
}

impl JwtBearer {
    /// The grant, presenting the JWT `assertion` gives.
    pub fn new(assertion: impl TokenSource + 'static) -> Self {
        Self {
            assertion: Arc::new(assertion),
        }
    }
}

/// Sends the JWT-bearer grant with `assertion` to the authorization server of `cx`.
async fn jwt_bearer(cx: &GrantContext<'_>, assertion: &str) -> Result<Token, ClientError> {
    let scope = scope::join(cx.scopes());
    let mut params = vec![("assertion", assertion)];
    with_scope(&mut params, scope.as_deref());
    cx.token_request(GRANT_JWT_BEARER, &params).await
}

impl Grant for JwtBearer {
    fn obtain<'a>(&'a self, cx: GrantContext<'a>) -> BoxFuture<'a, Result<Token, ClientError>> {
        Box::pin(async move {
            let assertion = self.assertion.token().await?;
            jwt_bearer(&cx, &assertion).await
        })
    }

    fn client_metadata(&self, metadata: &mut ClientMetadata) {
        add_grant_type(metadata, GRANT_JWT_BEARER);
    }

    fn dynamic_registration(&self) -> bool {
        false
    }
}

/// The enterprise identity provider of [`EnterpriseAuthorization`]: its issuer, its token
/// endpoint (discovered from the issuer, RFC 8414 or OpenID Connect, when not given) and the
/// client's registration there.
#[derive(Debug, Clone)]
pub struct IdentityProvider {
    issuer: String,
    token_endpoint: Option<String>,
    client: ClientRegistration,
}

impl IdentityProvider {
    /// The identity provider `issuer`, where the client is known as `client_id` (a public
    /// client unless [`credential`](Self::credential) is given).
    pub fn new(issuer: impl Into<String>, client_id: impl Into<String>) -> Self {
        let issuer = issuer.into();
        Self {
            client: ClientRegistration::pre_registered(client_id).issuer(issuer.clone()),
            issuer,
            token_endpoint: None,
        }
    }

    /// Its token endpoint (`https://`, or `http://` on a loopback host), when its metadata is
    /// not to be discovered.
    #[must_use]
    pub fn token_endpoint(mut self, url: impl Into<String>) -> Self {
        self.token_endpoint = Some(url.into());
        self
    }

    /// The client's secret or private key at the identity provider.
    #[must_use]
    pub fn credential(mut self, credential: impl Into<ClientCredential>) -> Self {
        self.client = self.client.credential(credential);
        self
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The HTTP side of the requests to it. The application named it, so they may reach the
    /// addresses of its own kind (an identity provider on the internal network), whatever the
    /// MCP server is on.
    async fn http(&self, cx: &GrantContext<'_>) -> Result<AuthHttp, AuthError> {
        cx.http.for_server(&checked_url(&self.issuer)?).await
    }

    /// Its metadata: the token endpoint given, or discovered.
    async fn metadata(&self, http: &AuthHttp) -> Result<AuthorizationServerMetadata, AuthError> {
        match &self.token_endpoint {
            Some(endpoint) => Ok(AuthorizationServerMetadata::with_token_endpoint(
                &self.issuer,
                endpoint,
            )),
            None => discover_server(http, &self.issuer).await,
        }
    }
}

/// Enterprise-managed authorization (the ID-JAG flow): the user signed in to the enterprise
/// identity provider, which the application holds an ID token of. The client exchanges it at
/// the identity provider's token endpoint (RFC 8693: `requested_token_type` ID-JAG, `audience`
/// the MCP server's authorization server, `resource` the MCP server) for an Identity Assertion
/// JWT Authorization Grant, then presents that with the JWT-bearer grant (RFC 7523) at the
/// authorization server, authenticated as the client registered there.
///
/// ```
/// use actix_mcp::client::auth::{ClientCredential, IdentityProvider, OAuth};
///
/// # let id_token = String::from("eyJ...");
/// let idp = IdentityProvider::new("https://idp.example.com", "mcp-client-at-idp");
/// let oauth = OAuth::enterprise(
///     "https://auth.example.com",
///     "mcp-client",
///     ClientCredential::secret("s3cret"),
///     idp,
///     id_token,
/// )
/// .build();
/// assert!(oauth.is_ok());
/// ```
#[derive(Clone)]
pub struct EnterpriseAuthorization {
    idp: IdentityProvider,
    id_token: Arc<dyn TokenSource>,
}

impl fmt::Debug for EnterpriseAuthorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseAuthorization")
            .field("idp", &self.idp)
            .finish_non_exhaustive()
    }
}

impl EnterpriseAuthorization {
    /// The grant, exchanging the ID token `id_token` gives at `idp`.
    pub fn new(idp: IdentityProvider, id_token: impl TokenSource + 'static) -> Self {
        Self {
            idp,
            id_token: Arc::new(id_token),
        }
    }
}

impl Grant for EnterpriseAuthorization {
    fn obtain<'a>(&'a self, cx: GrantContext<'a>) -> BoxFuture<'a, Result<Token, ClientError>> {
        Box::pin(async move {
            let http = self.idp.http(&cx).await?;
            let idp = self.idp.metadata(&http).await?;
            let id_token = self.id_token.token().await?;
            let scope = scope::join(cx.scopes());
            let mut params = vec![
                ("requested_token_type", TOKEN_TYPE_ID_JAG),
                ("subject_token", id_token.as_str()),
                ("subject_token_type", TOKEN_TYPE_ID_TOKEN),
                ("audience", cx.server().issuer.as_str()),
            ];
            with_scope(&mut params, scope.as_deref());
            let grant = request_token(
                &http,
                &idp,
                &self.idp.client,
                &self.idp.client.token_endpoint_auth(&idp),
                Some(cx.resource()),
                GRANT_TOKEN_EXCHANGE,
                &params,
            )
            .await?;
            if grant.issued_token_type() != Some(TOKEN_TYPE_ID_JAG) {
                return Err(AuthError::Fetch {
                    what: "token exchange".into(),
                    reason: format!(
                        "the identity provider {:?} issued {:?}, not an ID-JAG",
                        redact_url(&self.idp.issuer),
                        grant
                            .issued_token_type()
                            .unwrap_or("a token of no stated type")
                    ),
                }
                .into());
            }
            jwt_bearer(&cx, grant.access_token()).await
        })
    }

    fn client_metadata(&self, metadata: &mut ClientMetadata) {
        add_grant_type(metadata, GRANT_JWT_BEARER);
    }

    fn dynamic_registration(&self) -> bool {
        false
    }
}

impl OAuth {
    /// A builder for the client credentials grant ([`ClientCredentials`]): the client
    /// `client_id` of the authorization server `issuer`, authenticated with `credential` (a
    /// [`ClientCredential::Secret`], or a [`SigningKey`](super::SigningKey) for
    /// `private_key_jwt`).
    ///
    /// `issuer` is the issuer identifier of the authorization server the credentials were
    /// issued by, compared as a string with the one the MCP server names: the credentials are
    /// sent to that server only. An MCP server that names another one gets no token from this
    /// client ([`AuthError::NoRegistration`]).
    pub fn client_credentials(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        credential: impl Into<ClientCredential>,
    ) -> OAuthBuilder {
        Self::builder(ClientCredentials::new()).client_registration(
            ClientRegistration::pre_registered(client_id)
                .credential(credential)
                .issuer(issuer),
        )
    }

    /// A builder for workload identity federation ([`JwtBearer`]): the client `client_id`
    /// (a public client) of the authorization server `issuer` presents the workload identity
    /// token `assertion` gives, to that server only (as
    /// [`client_credentials`](Self::client_credentials) binds its credentials).
    pub fn jwt_bearer(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        assertion: impl TokenSource + 'static,
    ) -> OAuthBuilder {
        Self::builder(JwtBearer::new(assertion))
            .client_registration(ClientRegistration::pre_registered(client_id).issuer(issuer))
    }

    /// A builder for enterprise-managed authorization ([`EnterpriseAuthorization`]): the
    /// user's ID token from `id_token` is exchanged at `idp` for an ID-JAG, which the client
    /// `client_id`, authenticated with `credential`, presents to the authorization server
    /// `issuer`. Both the credentials and the exchange are for that server only (as
    /// [`client_credentials`](Self::client_credentials) binds its credentials): an MCP server
    /// that names another one gets nothing, and the identity provider is not asked.
    pub fn enterprise(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        credential: impl Into<ClientCredential>,
        idp: IdentityProvider,
        id_token: impl TokenSource + 'static,
    ) -> OAuthBuilder {
        Self::builder(EnterpriseAuthorization::new(idp, id_token)).client_registration(
            ClientRegistration::pre_registered(client_id)
                .credential(credential)
                .issuer(issuer),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_token() {
        let grant = JwtBearer::new(String::from("eyJ.workload.jwt"));
        assert!(!format!("{grant:?}").contains("eyJ"));
        let idp = IdentityProvider::new("https://idp.example.com", "c");
        let grant = EnterpriseAuthorization::new(idp, String::from("eyJ.id.token"));
        let shown = format!("{grant:?}");
        assert!(
            shown.contains("idp.example.com") && !shown.contains("eyJ"),
            "{shown}"
        );
    }
}
