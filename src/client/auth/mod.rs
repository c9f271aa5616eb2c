//! Authorization: the OAuth 2.1 client of the MCP authorization spec (feature `auth`), used by
//! the HTTP transport when a server answers `401` (or `403 insufficient_scope`). Without the
//! feature, only [`AuthProvider`] is here: a transport's own way to authorize its requests.
//!
//! Give an [`OAuth`] to the transport with
//! [`HttpOptions::auth`](crate::client::transport::HttpOptions::auth). On a `401` it reads
//! the `WWW-Authenticate` challenge ([`BearerChallenge`]), finds the protected resource
//! metadata (RFC 9728) and checks that it describes this server, finds the authorization
//! server's metadata (RFC 8414 or OpenID discovery) and checks its issuer, identifies the
//! client (pre-registered credentials, a client ID metadata document, or dynamic
//! registration), selects the scopes, and obtains a token with its [`Grant`]: by default the
//! authorization-code flow with PKCE `S256`, `resource` indicators (RFC 8707) and RFC 9207
//! `iss` checks, the user's part done by the application's [`Authorizer`]. The request is then
//! sent again with the token. `oauth` module docs tabulate what happens on which answer.
//! The same applies to every `POST` in the 2026 era, and to `initialize`, later requests and
//! the `GET` stream in the 2025 era.
//!
//! ```no_run
//! # #[cfg(feature = "auth")]
//! # mod example {
//! use actix_mcp::client::Client;
//! use actix_mcp::client::auth::{AuthorizationCallback, OAuth, authorize_with};
//! use actix_mcp::client::transport::{HttpOptions, HttpTransport};
//!
//! # async fn run() -> Result<(), actix_mcp::client::ClientError> {
//! let authorizer = authorize_with(|request| async move {
//!     // Open `request.url` in the user's browser, serve `request.redirect_uri`, and hand
//!     // back the URL the browser was sent to.
//!     # let landed = String::new();
//!     Ok(AuthorizationCallback::from_redirect_url(&landed)?)
//! });
//! let oauth = OAuth::authorization_code("http://127.0.0.1:8765/callback", authorizer)
//!     .client_name("my-app")
//!     .build()?;
//! // The user's part may take up to `authorization_timeout` (5 minutes by default); it
//! // does not count against the client's request and discovery timeouts.
//! let client = Client::builder("my-app", "1.0.0")
//!     .connect(HttpTransport::with_options(
//!         "https://mcp.example.com/mcp",
//!         HttpOptions::default().auth(oauth),
//!     ))
//!     .await?;
//! # let _ = client;
//! # Ok(())
//! # }
//! # }
//! # fn main() {}
//! ```
//!
//! # Safety of what comes from the network
//!
//! Every URL the flow contacts is checked first ([`checked_url`]: `https://`, or `http://`
//! to a loopback host, no credentials, no fragment), and so is every address it resolves to:
//! a loopback, private, link-local or unique-local address only when the MCP server is on one
//! of the same kind itself, never an unspecified or multicast one, checked where the flow's own
//! HTTP client resolves the name so the connection goes where the check looked
//! ([`OAuthBuilder::allow_private_network`] has the rule, and the option to lift it);
//! metadata requests follow redirects only on the same origin, registration and token requests follow none; every answer is read within a
//! time limit and a size limit. A protected resource metadata document for another resource,
//! authorization server metadata for another issuer, an authorization response from another
//! issuer (or without `iss` where one was promised) or with another `state` are refused with
//! a specific [`AuthError`], before any code or credential is sent.
//!
//! The MCP server is not trusted with more than its own token:
//!
//! * credentials (a client secret, a private key) and the assertions of the browserless
//!   grants go only to the authorization server whose issuer they are bound to, never to one
//!   the MCP server merely names ([`ClientRegistration::pre_registered`] has the rule);
//! * a token is presented only to requests its resource covers (the same origin, a path under
//!   the resource identifier), not to another server or path that shares the client.
//!
//! # Seams for other grants and proof of possession
//!
//! * **How a token is obtained** once metadata is known is a [`Grant`] (`grant` module):
//!   [`Grant::obtain`] gets a [`GrantContext`] (resource, server metadata, registration,
//!   scopes) and sends its token request with [`GrantContext::token_request`].
//!   [`AuthorizationCode`] is one; [`ClientCredentials`], [`JwtBearer`] (RFC 7523) and
//!   [`EnterpriseAuthorization`] (RFC 8693 token exchange, then RFC 7523) implement the same
//!   trait, and so can an application's own grant, passed to [`OAuth::builder`].
//!   [`Grant::client_metadata`] fills in their registration metadata. The user's part of a
//!   grant runs through [`GrantContext::interact`]: outside the client's request timeouts,
//!   within [`OAuthBuilder::authorization_timeout`].
//! * **Client authentication** at the token endpoint is [`TokenEndpointAuth`]
//!   (`client_auth` module), applied in one place, `TokenEndpointAuth::apply`, where
//!   `private_key_jwt` signs its `client_assertion`.
//! * **Every request** to the token and registration endpoints leaves through one function,
//!   `AuthHttp::send` (`http` module), and every request to the MCP server gets its
//!   authorization headers from [`AuthProvider::headers`] (`OAuth::resource_headers`); both
//!   run the [`RequestHook`]s, which add headers (a DPoP proof) and read answers (a
//!   `DPoP-Nonce`, answering [`HookVerdict::Retry`] to send again; on the MCP server's `401`
//!   they are asked first, in `OAuth::on_refusal`, and they see its other answers through
//!   [`AuthProvider::answered`]). DPoP (`dpop` module) is such a hook, built in
//!   ([`OAuthBuilder::dpop`]); an application's own runs after it
//!   ([`OAuthBuilder::request_hook`]).
//! * The transport asks for the **whole set of authorization headers** of a request (its
//!   method and URL: [`RequestTarget`]), not for a bearer string, and the token keeps its
//!   [`TokenType`] (`Bearer`, `DPoP`), which names the `Authorization` scheme.
//!
//! # The OAuth extensions
//!
//! The MCP authorization extensions (<https://github.com/modelcontextprotocol/ext-auth>) are
//! grants and options of the same flow:
//!
//! | extension | use |
//! | --- | --- |
//! | client credentials | [`OAuth::client_credentials`] with the authorization server's issuer and a secret or a [`SigningKey`] (`private_key_jwt`) |
//! | workload identity federation | [`OAuth::jwt_bearer`] with the authorization server's issuer and the workload's identity token |
//! | enterprise-managed authorization | [`OAuth::enterprise`] with the authorization server's issuer, the enterprise [`IdentityProvider`] and the user's ID token |
//! | DPoP (sender-constrained tokens, RFC 9449) | [`OAuthBuilder::dpop`] with a [`DpopKey`], [`OAuthBuilder::dpop_generate`], or [`OAuthBuilder::dpop_auto`] (where the authorization server supports it), with any grant |
//!
//! The first three get tokens without a browser, through the same flow as the
//! authorization-code grant (discovery, scope selection, `resource`, client authentication,
//! DPoP); their credentials are bound to the issuer they are given with, so an MCP server that
//! names another authorization server gets nothing from them ([`AuthError::NoRegistration`]);
//! the client never registers dynamically for them, and a refused token request is
//! not retried (but for a DPoP nonce) nor another grant tried: the request that needed the
//! token fails with [`AuthError::TokenRequest`]. The tokens the application brings (a
//! workload's identity token, a user's ID token) come from a [`TokenSource`], asked each time a
//! token is needed: a `String`, or a closure through [`token_with`].
//!
//! # DPoP
//!
//! With DPoP on, the client:
//!
//! * adds a fresh proof (a JWT signed with the [`DpopKey`], header `typ: dpop+jwt` and the
//!   public `jwk`; claims `jti`, `htm`, `htu` without query or fragment, `iat`) in the `DPoP`
//!   header of every token request (authorization code, refresh, and the other grants), and
//!   sends the key's thumbprint as `dpop_jkt` in the authorization request;
//! * once the authorization server answers `token_type: "DPoP"` (the token is bound to the
//!   key), presents the token as `Authorization: DPoP <token>` with a proof carrying `ath` (the
//!   token's hash) on every request to the MCP server; a bound token is never sent as
//!   `Bearer`, and a `Bearer` token gets no proof;
//! * keeps the latest `DPoP-Nonce` each server sent, from every answer, and puts it in the
//!   next proof to that server;
//! * meets a nonce demand by sending the request once more with a fresh proof carrying the
//!   new nonce: the token endpoint's `400 {"error":"use_dpop_nonce"}`, the MCP server's `401`
//!   with `WWW-Authenticate: DPoP error="use_dpop_nonce"`. Such a `401` never leads to a new
//!   authorization. The MCP server's first `401` may use the `DPoP` scheme; its
//!   `resource_metadata` is read as from a `Bearer` challenge.
//!
//! A bound token is usable only with its key: a client that keeps tokens across runs
//! ([`TokenStore`]) must give the same key again ([`OAuthBuilder::dpop`], [`OAuth::dpop_key`]).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>

mod error;
#[cfg(feature = "auth")]
mod oauth_client;
mod provider;

pub use error::AuthError;
pub(crate) use error::redact_url;
#[cfg(feature = "auth")]
pub use oauth_client::*;
pub use provider::{AuthProvider, Refusal, RefusalAction, RequestTarget};
