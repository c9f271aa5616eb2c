//! [`OAuthBuilder`]: the settings of an [`OAuth`] client, checked when it is built.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::dpop::{Dpop, DpopKey, DpopUse};
use super::error::AuthError;
use super::grant::{DEFAULT_AUTHORIZATION_TIMEOUT, Grant, Interaction};
use super::http::{AuthHttp, DEFAULT_MAX_BODY, DEFAULT_TIMEOUT, RequestHook, Resolver};
use super::network::Network;
use super::oauth::{DEFAULT_MAX_STEP_UP, Inner, OAuth};
use super::registration::{ClientMetadata, ClientRegistration, check_metadata_document_url};
use super::scope;
use super::store::{InMemoryTokenStore, TokenStore};
use crate::client::error::ClientError;

/// The DPoP setting of a builder.
#[derive(Debug)]
enum DpopSetting {
    Key(Box<DpopKey>),
    Generate(DpopUse),
}

/// Builds an [`OAuth`]. Defaults are not part of semver.
#[derive(Debug)]
#[must_use]
pub struct OAuthBuilder {
    grant: Arc<dyn Grant>,
    metadata: ClientMetadata,
    document: Option<String>,
    pre_registered: Vec<ClientRegistration>,
    scope: Vec<String>,
    store: Option<Arc<dyn TokenStore>>,
    max_step_up: u32,
    timeout: Duration,
    max_body: usize,
    client: Option<reqwest::Client>,
    resolver: Option<Resolver>,
    allow_private_network: bool,
    hook: Option<Arc<dyn RequestHook>>,
    dpop: Option<DpopSetting>,
    authorization_timeout: Duration,
}

impl OAuthBuilder {
    pub(super) fn new(grant: Arc<dyn Grant>) -> Self {
        Self {
            grant,
            metadata: ClientMetadata::named("actix-mcp client"),
            document: None,
            pre_registered: Vec::new(),
            scope: Vec::new(),
            store: None,
            max_step_up: DEFAULT_MAX_STEP_UP,
            timeout: DEFAULT_TIMEOUT,
            max_body: DEFAULT_MAX_BODY,
            client: None,
            resolver: None,
            allow_private_network: false,
            hook: None,
            dpop: None,
            authorization_timeout: DEFAULT_AUTHORIZATION_TIMEOUT,
        }
    }

    /// The client's name in registrations (default `actix-mcp client`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.metadata.client_name = Some(name.into());
        self
    }

    /// The client metadata sent in dynamic registrations (the grant adds its redirect URIs,
    /// grant and response types; `application_type` is inferred when unset).
    pub fn client_metadata(mut self, metadata: ClientMetadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// The URL of the client's metadata document (an `https` URL with a path), used as its
    /// `client_id` at authorization servers that advertise
    /// `client_id_metadata_document_supported`. The document must be published there, with
    /// this URL as its `client_id` and the redirect URI among its `redirect_uris`.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.document = Some(url.into());
        self
    }

    /// Pre-registered credentials (call once per authorization server); preferred over any
    /// other registration at the server they are bound to. Bind them to their issuer
    /// ([`ClientRegistration::issuer`]); only a public client's may go unbound, with the
    /// authorization-code flow ([`ClientRegistration::pre_registered`] has the rule, which
    /// [`build`](Self::build) enforces).
    pub fn client_registration(mut self, registration: ClientRegistration) -> Self {
        self.pre_registered.push(registration);
        self
    }

    /// The scopes to ask for when neither the server's challenge nor its metadata name any
    /// (space-separated; default none).
    pub fn scope(mut self, scope: &str) -> Self {
        self.scope = scope::parse(scope);
        self
    }

    /// Where tokens and registrations are kept (default an [`InMemoryTokenStore`]).
    pub fn store(mut self, store: impl TokenStore + 'static) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// The same, shared.
    pub fn shared_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// How many step-up authorizations one request may cause before the client gives up on
    /// `403 insufficient_scope` (default 2).
    pub fn max_step_up(mut self, attempts: u32) -> Self {
        self.max_step_up = attempts;
        self
    }

    /// The time limit of each request to a metadata, registration or token endpoint
    /// (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long the user's part of an authorization (the [`Authorizer`](super::Authorizer)'s) may take (default
    /// 5 minutes). That time does not count against the client's request and discovery
    /// timeouts: a request waiting for the user keeps its own time limit for the server.
    pub fn authorization_timeout(mut self, timeout: Duration) -> Self {
        self.authorization_timeout = timeout;
        self
    }

    /// The size limit of each answer from those endpoints (default 1 MiB).
    pub fn max_response_size(mut self, bytes: usize) -> Self {
        self.max_body = bytes.max(1);
        self
    }

    /// The `reqwest` client for those requests. It must not follow redirects (the flow
    /// follows only same-origin ones itself); the default is built so. It connects through
    /// its own resolver, so the addresses of host names are checked before each request but
    /// not pinned to the connection as the built-in clients pin them
    /// ([`allow_private_network`](Self::allow_private_network) has the policy).
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The DNS resolver of the requests to metadata, registration and token endpoints, and of
    /// the MCP server's host when its addresses are classed (default the system's, through
    /// `getaddrinfo`). With a client given by [`http_client`](Self::http_client), which
    /// connects through its own resolver, it resolves for the address checks only.
    pub fn dns_resolver(mut self, resolver: impl reqwest::dns::Resolve + 'static) -> Self {
        self.resolver = Some(Resolver(Arc::new(resolver)));
        self
    }

    /// Whether the requests to metadata, registration and token endpoints may reach loopback,
    /// private (`10/8`, `172.16/12`, `192.168/16`, `100.64/10`), link-local (`169.254/16`,
    /// `fe80::/10`) and unique-local (`fc00::/7`) addresses whatever the MCP server is on
    /// (default `false`).
    ///
    /// By default such an address is reached only when the MCP server is on one of the same
    /// kind itself (its host resolves to one): an MCP server on loopback may lead the client to
    /// loopback, one on a private network to private addresses, a public one to public
    /// addresses only. Anything else the server's metadata points at is refused before a
    /// request goes out ([`AuthError::InsecureUrl`]): a hostile MCP server cannot have the
    /// client fetch from, or post credentials to, the services of the client's own network
    /// (server-side request forgery). Unspecified, multicast and broadcast addresses are never
    /// reached. Turn this on when the authorization server is on an internal network while
    /// the MCP server is not, and only for MCP servers you trust with that network.
    pub fn allow_private_network(mut self, allow: bool) -> Self {
        self.allow_private_network = allow;
        self
    }

    /// A hook that adds headers to every request to the MCP server and the token and
    /// registration endpoints, and reads their answers (runs after DPoP's, when on).
    pub fn request_hook(mut self, hook: impl RequestHook + 'static) -> Self {
        self.hook = Some(Arc::new(hook));
        self
    }

    /// DPoP (RFC 9449) with `key`, with every authorization server: token requests carry
    /// proofs, and a token the server binds to the key (`token_type` `DPoP`) is presented
    /// with a proof on every request to the MCP server; server nonces are honoured (see
    /// [DPoP](crate::client::auth#dpop)). Give the same key again with tokens kept across
    /// runs.
    pub fn dpop(mut self, key: DpopKey) -> Self {
        self.dpop = Some(DpopSetting::Key(Box::new(key)));
        self
    }

    /// DPoP as [`dpop`](Self::dpop), with a fresh ES256 key made by
    /// [`build`](Self::build).
    pub fn dpop_generate(mut self) -> Self {
        self.dpop = Some(DpopSetting::Generate(DpopUse::Always));
        self
    }

    /// DPoP with a fresh ES256 key, used only with the authorization servers that list
    /// `ES256` in `dpop_signing_alg_values_supported`; with the others the client sends no
    /// proofs and gets bearer tokens.
    pub fn dpop_auto(mut self) -> Self {
        self.dpop = Some(DpopSetting::Generate(DpopUse::WhenSupported));
        self
    }

    /// Checks the settings and builds the client.
    ///
    /// # Errors
    /// [`ClientError::Auth`] with [`AuthError::Config`] for an unusable redirect URI or
    /// client metadata URL, a pre-registration bound to no issuer that has a secret or a key
    /// or is given to a grant that needs it bound, or when the HTTP client cannot be built.
    pub fn build(self) -> Result<OAuth, ClientError> {
        if let Some(url) = &self.document {
            check_metadata_document_url(url)?;
        }
        self.grant.check()?;
        for client in self
            .pre_registered
            .iter()
            .filter(|c| c.issuer_id().is_none())
        {
            if client.is_confidential() || !self.grant.accepts_unbound_client() {
                let what = if client.is_confidential() {
                    "has a secret or a private key"
                } else {
                    "is for a grant that sends assertions or credentials"
                };
                return Err(AuthError::Config(format!(
                    "the pre-registered client {:?} {what}: bind it to the issuer of its \
                     authorization server (ClientRegistration::issuer), so that it is sent \
                     nowhere else",
                    client.client_id()
                ))
                .into());
            }
        }
        if !self.grant.dynamic_registration()
            && self.pre_registered.is_empty()
            && self.document.is_none()
        {
            return Err(AuthError::Config(
                "this grant needs the client's registration (client_registration)".into(),
            )
            .into());
        }
        let network = Network::new(self.resolver.map(|r| r.0), self.allow_private_network);
        let dpop = match self.dpop {
            None => None,
            Some(DpopSetting::Key(key)) => Some(Dpop::new(*key, DpopUse::Always)),
            Some(DpopSetting::Generate(usage)) => {
                let key = DpopKey::generate().map_err(|err| {
                    AuthError::Config(format!("could not make a DPoP key: {err}"))
                })?;
                Some(Dpop::new(key, usage))
            }
        }
        .map(Arc::new);
        let mut hooks: Vec<Arc<dyn RequestHook>> = Vec::new();
        if let Some(dpop) = &dpop {
            hooks.push(dpop.clone());
        }
        hooks.extend(self.hook);
        Ok(OAuth {
            inner: Arc::new(Inner {
                grant: self.grant,
                metadata: self.metadata,
                document: self.document,
                pre_registered: self.pre_registered,
                fallback_scope: self.scope,
                max_step_up: self.max_step_up,
                store: self
                    .store
                    .unwrap_or_else(|| Arc::new(InMemoryTokenStore::new())),
                http: AuthHttp::new(self.client, network, self.timeout, self.max_body, hooks)?,
                dpop,
                interaction: Interaction::new(self.authorization_timeout),
                current: Mutex::new(None),
                flow: tokio::sync::Mutex::new(()),
            }),
        })
    }
}
