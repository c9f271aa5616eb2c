//! [`OAuth`]: the authorization flow of one MCP server, driven by its HTTP transport.
//!
//! | the transport sees | the flow does |
//! | --- | --- |
//! | any request | adds `Authorization: <type> <token>` (and the request hook's headers) once there is a token for the request's URL (its resource covers it: same origin, a path under the resource's); refreshes an expired token first when it can |
//! | `401` | discovers the resource and its authorization server, then: a stored token other than the rejected one, else a refresh, else registration and the grant; the request is sent again |
//! | `401` with a DPoP `use_dpop_nonce` challenge | sent again once with a proof carrying the new nonce (DPoP on); never a new authorization |
//! | `403` with `insufficient_scope` | a new grant for the union of the scopes held (asked for before, and granted) and the challenge's (no refresh: it would give the same scopes), at most `max_step_up` times per request |
//! | `403` otherwise | nothing: the caller gets the refusal |
//!
//! Flows are serialized: a request refused while another request's flow runs waits for it,
//! then is sent again with the new token. The PRM is read again on every flow, so a server
//! that moves to another authorization server gets a registration and token from that one
//! (registrations and tokens are bound to their issuer).

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::StatusCode;
use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use super::authorizer::Authorizer;
use super::builder::OAuthBuilder;
use super::challenge::BearerChallenge;
use super::code::AuthorizationCode;
use super::dpop::{Dpop, DpopKey, demands_nonce};
use super::error::AuthError;
use super::grant::{Grant, GrantContext, Interaction};
use super::http::{AuthHttp, HookRequest, HookResponse, HookVerdict, RequestKind, checked_url};
use super::metadata::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, discover_resource, discover_server,
    resource_matches,
};
use super::provider::{AuthProvider, Refusal, RefusalAction, RequestTarget};
use super::registration::{ClientMetadata, ClientRegistration, RegistrationKind, register};
use super::scope;
use super::store::{TokenKey, TokenStore};
use super::token::{Token, request_token};
use crate::client::error::ClientError;

/// Default number of step-up authorizations for one request.
pub const DEFAULT_MAX_STEP_UP: u32 = 2;
/// Authorizations after `401`s for one request, before the client gives up.
const MAX_REAUTHORIZE: u32 = 2;
/// A token this close to its expiry is refreshed before use.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// The OAuth 2.1 client of one MCP server: give it to the server's HTTP transport with
/// [`HttpOptions::auth`](crate::client::transport::HttpOptions::auth). Cheap to clone.
///
/// ```no_run
/// use actix_mcp::client::Client;
/// use actix_mcp::client::auth::{HeadlessAuthorizer, OAuth};
/// use actix_mcp::client::transport::{HttpOptions, HttpTransport};
///
/// # async fn run() -> Result<(), actix_mcp::client::ClientError> {
/// let oauth = OAuth::authorization_code("http://127.0.0.1:8765/callback", HeadlessAuthorizer::new())
///     .client_name("my-app")
///     .client_metadata_url("https://my-app.example.com/oauth/client.json")
///     .build()?;
/// let options = HttpOptions::default().auth(oauth);
/// let client = Client::builder("my-app", "1.0.0")
///     .connect(HttpTransport::with_options("https://mcp.example.com/mcp", options))
///     .await?;
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OAuth {
    pub(super) inner: Arc<Inner>,
}

/// What an [`OAuth`] holds (made by its builder).
pub(super) struct Inner {
    pub(super) grant: Arc<dyn Grant>,
    pub(super) metadata: ClientMetadata,
    pub(super) document: Option<String>,
    pub(super) pre_registered: Vec<ClientRegistration>,
    pub(super) fallback_scope: Vec<String>,
    pub(super) max_step_up: u32,
    pub(super) store: Arc<dyn TokenStore>,
    pub(super) http: AuthHttp,
    /// DPoP, when on (also among the request hooks of `http`).
    pub(super) dpop: Option<Arc<Dpop>>,
    /// The user's part of the flow: its time limit and the time spent in it.
    pub(super) interaction: Interaction,
    pub(super) current: Mutex<Option<Current>>,
    /// Held while a flow (or a refresh) runs.
    pub(super) flow: tokio::sync::Mutex<()>,
}

/// The token in use, with what refreshing it needs.
#[derive(Clone)]
pub(super) struct Current {
    key: TokenKey,
    token: Token,
    server: Arc<AuthorizationServerMetadata>,
    client: Option<ClientRegistration>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let current = self.current();
        f.debug_struct("OAuth")
            .field("grant", &self.inner.grant)
            .field("client_metadata_url", &self.inner.document)
            .field("pre_registered", &self.inner.pre_registered)
            .field("store", &self.inner.store)
            .field("dpop", &self.inner.dpop)
            .field("token", &current.as_ref().map(|c| &c.token))
            .field("resource", &current.as_ref().map(|c| &c.key.resource))
            .field("issuer", &current.as_ref().map(|c| &c.key.issuer))
            .finish()
    }
}

/// Why a flow runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A `401`: any valid token will do.
    Unauthorized,
    /// A `403 insufficient_scope`: a token with more scopes.
    StepUp,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl OAuth {
    /// A builder for a client that obtains tokens with `grant`.
    pub fn builder(grant: impl Grant + 'static) -> OAuthBuilder {
        OAuthBuilder::new(Arc::new(grant))
    }

    /// A builder for the authorization-code flow (the MCP spec's): the user is sent to the
    /// authorization server by `authorizer`, which sends them back to `redirect_uri`.
    pub fn authorization_code(
        redirect_uri: impl Into<String>,
        authorizer: impl Authorizer + 'static,
    ) -> OAuthBuilder {
        Self::builder(AuthorizationCode::new(redirect_uri, authorizer))
    }

    /// The token in use, if any.
    pub fn token(&self) -> Option<Token> {
        self.current().map(|current| current.token)
    }

    /// The store of tokens and registrations.
    pub fn store(&self) -> Arc<dyn TokenStore> {
        self.inner.store.clone()
    }

    /// The DPoP key, when DPoP is on (to keep with tokens stored across runs: a bound token
    /// is usable only with it).
    pub fn dpop_key(&self) -> Option<&DpopKey> {
        self.inner.dpop.as_deref().map(Dpop::key)
    }

    fn current(&self) -> Option<Current> {
        lock(&self.inner.current).clone()
    }

    /// The token in use if it is for the resource at `url`: the same origin, and a path its
    /// resource identifier covers ([`resource_matches`], the check its metadata passed). A
    /// token is never presented anywhere else, not even to another path of the same server.
    fn current_for(&self, url: &Url) -> Option<Current> {
        self.current()
            .filter(|current| resource_matches(&current.key.resource, url))
    }

    fn set_current(&self, current: Option<Current>) {
        *lock(&self.inner.current) = current;
    }

    /// The headers of a request to the MCP server carrying `token`.
    fn resource_headers(
        &self,
        target: &RequestTarget,
        token: &Token,
    ) -> Result<HeaderMap, ClientError> {
        let mut headers = HeaderMap::new();
        let mut value =
            HeaderValue::from_str(&token.authorization()).map_err(|_| AuthError::Fetch {
                what: "token response".into(),
                reason: "the access token cannot go in a header".into(),
            })?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
        let request = HookRequest {
            kind: RequestKind::Resource,
            method: &target.method,
            url: &target.url,
            token: Some(token),
            server: None,
        };
        for hook in self.inner.http.hooks() {
            hook.headers(&request, &mut headers)?;
        }
        Ok(headers)
    }

    async fn headers_of(&self, target: &RequestTarget) -> Result<HeaderMap, ClientError> {
        let mut current = self.current_for(&target.url);
        let stale = current.as_ref().is_some_and(|c| {
            c.token.is_expired(EXPIRY_MARGIN) && c.token.refresh_token().is_some()
        });
        if stale {
            let _flow = self.inner.flow.lock().await;
            current = self.current_for(&target.url);
            if let Some(stale) = current
                .clone()
                .filter(|c| c.token.is_expired(EXPIRY_MARGIN))
            {
                let refreshed = match self.inner.http.for_server(&target.url).await {
                    Ok(http) => self.refresh(&http, &stale).await,
                    Err(error) => Err(error.into()),
                };
                current = match refreshed {
                    Ok(fresh) => Some(fresh),
                    Err(error) => {
                        tracing::debug!(%error, "refreshing the expired token failed");
                        self.inner.store.remove_token(&stale.key).await;
                        self.set_current(None);
                        None
                    }
                };
            }
        }
        match current {
            Some(current) => self.resource_headers(target, &current.token),
            None => Ok(HeaderMap::new()),
        }
    }

    /// Runs the request hooks on an answer of the MCP server to `target`.
    fn hook_verdict(
        &self,
        target: &RequestTarget,
        status: StatusCode,
        headers: &HeaderMap,
        sent: &HeaderMap,
    ) -> HookVerdict {
        let token = self.current_for(&target.url).map(|current| current.token);
        let request = HookRequest {
            kind: RequestKind::Resource,
            method: &target.method,
            url: &target.url,
            token: token.as_ref(),
            server: None,
        };
        let response = HookResponse {
            status,
            headers,
            body: None,
            sent,
        };
        self.inner.http.hook_verdict(&request, &response)
    }

    /// Refreshes `current`'s token through `http`; stores and uses the new one.
    async fn refresh(&self, http: &AuthHttp, current: &Current) -> Result<Current, ClientError> {
        let (Some(refresh_token), Some(client)) =
            (current.token.refresh_token(), current.client.as_ref())
        else {
            return Err(AuthError::Unauthorized("the token cannot be refreshed".into()).into());
        };
        let mut token = request_token(
            http,
            &current.server,
            client,
            &client.token_endpoint_auth(&current.server),
            Some(&current.key.resource),
            "refresh_token",
            &[("refresh_token", refresh_token)],
        )
        .await?;
        token.inherit(&current.token);
        self.inner
            .store
            .save_token(&current.key, token.clone())
            .await;
        let fresh = Current {
            token,
            ..current.clone()
        };
        self.set_current(Some(fresh.clone()));
        Ok(fresh)
    }

    async fn on_refusal(&self, refusal: &Refusal) -> Result<RefusalAction, ClientError> {
        let status = refusal.status;
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return Ok(RefusalAction::Return);
        }
        let sent = refusal
            .sent
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        // The hooks first: a proof-of-possession nonce challenge is met by sending again with
        // a fresh proof, not by a new token.
        if self.hook_verdict(&refusal.target, status, &refusal.headers, &refusal.sent)
            == HookVerdict::Retry
        {
            return Ok(RefusalAction::Retry);
        }
        if status == StatusCode::UNAUTHORIZED && demands_nonce(&refusal.headers) {
            // A nonce demand the hook did not meet (the nonce was sent already, or no proof
            // was): a new token would not help.
            return Err(
                AuthError::Unauthorized("the server keeps demanding a DPoP nonce".into()).into(),
            );
        }
        let challenge = BearerChallenge::from_headers(&refusal.headers).unwrap_or_default();
        let step = if status == StatusCode::UNAUTHORIZED {
            Step::Unauthorized
        } else if challenge.is_insufficient_scope() {
            Step::StepUp
        } else {
            return Ok(RefusalAction::Return);
        };
        let _flow = self.inner.flow.lock().await;
        // Another request's flow renewed the token meanwhile: send again with that one.
        if let Some(current) = self.current_for(&refusal.target.url)
            && Some(current.token.authorization()) != sent
        {
            return Ok(RefusalAction::Retry);
        }
        match step {
            Step::Unauthorized if refusal.unauthorized >= MAX_REAUTHORIZE => {
                return Err(AuthError::Unauthorized(
                    challenge
                        .error_description
                        .or(challenge.error)
                        .unwrap_or_else(|| "HTTP 401".into()),
                )
                .into());
            }
            Step::StepUp if refusal.forbidden >= self.inner.max_step_up => {
                return Err(AuthError::InsufficientScope {
                    scope: challenge.scope.map(|s| s.join(" ")).unwrap_or_default(),
                    attempts: refusal.forbidden,
                }
                .into());
            }
            _ => {}
        }
        self.authorize(&refusal.target.url, &challenge, step, sent.as_deref())
            .await?;
        Ok(RefusalAction::Retry)
    }

    /// Runs the flow for the MCP server at `server`: discovery, then a token (stored,
    /// refreshed, or from the grant).
    async fn authorize(
        &self,
        server_url: &Url,
        challenge: &BearerChallenge,
        step: Step,
        sent: Option<&str>,
    ) -> Result<(), ClientError> {
        let inner = &self.inner;
        // Every request of the flow reaches only what this MCP server may lead to.
        let http = inner.http.for_server(server_url).await?;
        let resource =
            discover_resource(&http, server_url, challenge.resource_metadata.as_deref()).await?;
        let issuer = resource
            .authorization_servers
            .iter()
            .find(|issuer| checked_url(issuer).is_ok())
            .ok_or(AuthError::NoAuthorizationServer)?
            .clone();
        let server = Arc::new(discover_server(&http, &issuer).await?);
        let key = TokenKey {
            resource: resource.resource.clone(),
            issuer,
        };
        let previous = self.current();
        if step == Step::Unauthorized && self.reuse_stored(&http, &key, &server, sent).await {
            return Ok(());
        }
        // What the client holds for this resource: the scopes it asked for and those the
        // authorization server said it granted (which may be more, e.g. its defaults when none
        // were asked for). A step-up keeps them all (SEP-2350).
        let before = previous
            .filter(|p| p.key.resource == key.resource)
            .map(|p| {
                scope::union(
                    p.token.requested_scope(),
                    p.token.scope().unwrap_or_default(),
                )
            })
            .unwrap_or_default();
        let selected = scope::select(challenge.scope.as_deref(), &resource, &inner.fallback_scope);
        let scopes = scope::with_offline_access(
            scope::union(&before, &selected),
            &server,
            inner.grant.refreshable(),
        );
        let client = self.registration(&http, &server).await?;
        let token = self
            .obtain(&http, &resource, &server, &client, &scopes)
            .await?;
        inner.store.save_token(&key, token.clone()).await;
        self.set_current(Some(Current {
            key,
            token,
            server,
            client: Some(client),
        }));
        Ok(())
    }

    /// After a `401`: uses a stored token other than the rejected one, or refreshes the
    /// stored one. `true` when there is a token to send again with.
    async fn reuse_stored(
        &self,
        http: &AuthHttp,
        key: &TokenKey,
        server: &Arc<AuthorizationServerMetadata>,
        sent: Option<&str>,
    ) -> bool {
        let store = &self.inner.store;
        let Some(stored) = store.token(key).await else {
            return false;
        };
        let client = self.known_registration(server).await;
        let current = Current {
            key: key.clone(),
            token: stored,
            server: server.clone(),
            client,
        };
        if Some(current.token.authorization().as_str()) != sent
            && !current.token.is_expired(EXPIRY_MARGIN)
        {
            self.set_current(Some(current));
            return true;
        }
        match self.refresh(http, &current).await {
            Ok(_) => true,
            Err(error) => {
                tracing::debug!(%error, "the stored token was refused and cannot be refreshed");
                store.remove_token(key).await;
                false
            }
        }
    }

    /// The grant's token, asking for `scopes`. A dynamic registration the token endpoint no
    /// longer knows (`invalid_client`) is forgotten, so that the next flow registers anew.
    async fn obtain(
        &self,
        http: &AuthHttp,
        resource: &ProtectedResourceMetadata,
        server: &AuthorizationServerMetadata,
        client: &ClientRegistration,
        scopes: &[String],
    ) -> Result<Token, ClientError> {
        let dpop = self
            .inner
            .dpop
            .as_deref()
            .filter(|dpop| dpop.applies_to(Some(server)))
            .map(Dpop::key);
        let cx = GrantContext {
            http,
            resource,
            server,
            client,
            scopes,
            dpop,
            interaction: &self.inner.interaction,
        };
        match self.inner.grant.obtain(cx).await {
            Ok(mut token) => {
                token.set_requested(scopes.to_vec());
                Ok(token)
            }
            Err(ClientError::Auth(AuthError::TokenRequest { error, .. }))
                if error == "invalid_client" && client.kind() == RegistrationKind::Dynamic =>
            {
                self.inner.store.remove_registration(&server.issuer).await;
                Err(AuthError::Registration {
                    issuer: server.issuer.clone(),
                    reason: "the token endpoint no longer knows the registered client".into(),
                }
                .into())
            }
            Err(error) => Err(error),
        }
    }

    /// The registration to use at `server` without registering: pre-registered credentials
    /// for it, a client ID metadata document it accepts, or a stored registration. A
    /// pre-registration bound to no issuer is used only when it is public and the grant sends
    /// nothing another server could replay (see [`ClientRegistration::pre_registered`]).
    async fn known_registration(
        &self,
        server: &AuthorizationServerMetadata,
    ) -> Option<ClientRegistration> {
        let issuer = &server.issuer;
        let inner = &self.inner;
        let pre_registered = inner
            .pre_registered
            .iter()
            .find(|c| c.issuer_id() == Some(issuer.as_str()))
            .or_else(|| {
                inner.pre_registered.iter().find(|c| {
                    c.issuer_id().is_none()
                        && c.valid_at(issuer)
                        && inner.grant.accepts_unbound_client()
                })
            });
        if let Some(client) = pre_registered {
            return Some(client.clone());
        }
        if server.client_id_metadata_document_supported
            && let Some(url) = &inner.document
        {
            return Some(ClientRegistration::metadata_document(url, issuer));
        }
        inner
            .store
            .registration(issuer)
            .await
            .filter(|client| client.valid_at(issuer) && !client.expired())
    }

    /// The registration to use at `server`: a known one, else a new dynamic registration.
    async fn registration(
        &self,
        http: &AuthHttp,
        server: &AuthorizationServerMetadata,
    ) -> Result<ClientRegistration, ClientError> {
        if let Some(client) = self.known_registration(server).await {
            return Ok(client);
        }
        if server.registration_endpoint.is_none() || !self.inner.grant.dynamic_registration() {
            return Err(AuthError::NoRegistration {
                issuer: server.issuer.clone(),
            }
            .into());
        }
        let mut metadata = self.inner.metadata.clone();
        self.inner.grant.client_metadata(&mut metadata);
        let client = register(http, server, metadata).await?;
        self.inner
            .store
            .save_registration(&server.issuer, client.clone())
            .await;
        Ok(client)
    }
}

impl AuthProvider for OAuth {
    fn headers<'a>(
        &'a self,
        target: &'a RequestTarget,
    ) -> BoxFuture<'a, Result<HeaderMap, ClientError>> {
        Box::pin(self.headers_of(target))
    }

    fn refused<'a>(
        &'a self,
        refusal: &'a Refusal,
    ) -> BoxFuture<'a, Result<RefusalAction, ClientError>> {
        Box::pin(self.on_refusal(refusal))
    }

    fn interaction_time(&self) -> Duration {
        self.inner.interaction.elapsed()
    }

    fn answered(&self, target: &RequestTarget, status: StatusCode, headers: &HeaderMap) {
        // What the hooks learn (a DPoP nonce) is kept; nothing is sent again.
        let _ = self.hook_verdict(target, status, headers, &HeaderMap::new());
    }
}
