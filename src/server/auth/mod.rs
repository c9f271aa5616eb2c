//! Bearer-protected servers: the MCP server as an OAuth 2.1 resource server.
//!
//! A [`BearerAuth`] given to [`McpHttp::bearer_auth`](crate::transport::http::McpHttp::bearer_auth)
//! protects the Streamable HTTP endpoint. Every request to it (POST, GET and DELETE, sessions
//! of 2025-11-25 and 2026-07-28 requests alike) must carry
//! `Authorization: Bearer <token>`, which a [`TokenValidator`] turns into an [`Identity`]:
//!
//! | validator | checks |
//! | --- | --- |
//! | [`JwtValidator`] | a JWT's signature against the authorization server's JWKS (cached, refreshed, one rate-limited refresh for an unknown `kid`; without `kid`, the first 4 keys of the token's algorithm), `iss`, `aud`, `exp`, `nbf`, the allowed algorithms (never `none`, never HMAC), the type (`typ`, when present: `at+jwt`, RFC 9068) |
//! | [`IntrospectionValidator`] | RFC 7662 introspection at the authorization server (authenticated as a client): `active`, `iss`, `aud`, `exp`; answers and refusals cached briefly, one call per token at a time, a bounded number at once |
//! | your own | implement [`TokenValidator`] |
//!
//! What the endpoint answers:
//!
//! | request | answer |
//! | --- | --- |
//! | no `Authorization` header | 401, `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` |
//! | a bad token (one naming no subject nor client, a DPoP-bound one), another scheme, a token in the query string | 401, the same plus `error="invalid_token", error_description="…"` |
//! | a valid token without the scopes the request needs | 403, `WWW-Authenticate: Bearer error="insufficient_scope", scope="…", resource_metadata="…"` |
//! | another identity's session | 404, as if the session did not exist |
//! | the validator cannot reach the authorization server (or, introspecting, waited past its timeout for a free call) | 503 with `Retry-After` |
//!
//! Each error answer carries a JSON-RPC error body with the request's id (`null` when the
//! message is not a request, and for a POST refused before its body is read). The endpoint's
//! protected resource metadata (RFC 9728) is served without authentication at
//! `/.well-known/oauth-protected-resource` plus the endpoint's path, and at the root
//! `/.well-known/oauth-protected-resource`.
//!
//! A POST without credentials, or with unusable ones (another scheme, a malformed token, a
//! token in the query), is refused as soon as its headers are in: its body is not read, and the
//! connection is closed. A well-formed token is validated once the body is read.
//!
//! A token must name its holder: a subject (`sub`) or, for a client acting for itself, a client
//! (`client_id` or `azp`). One naming neither is refused (401 `invalid_token`) whatever the
//! validator: sessions, tasks, request states and per-principal limits are keyed by issuer and
//! holder, so every such token of an issuer would otherwise be the same caller. A token bound
//! to a DPoP key (a `cnf.jkt` claim, or introspection answer member; RFC 9449) is refused too:
//! the endpoint accepts bearer tokens only, and a DPoP-bound token is valid only with its proof.
//!
//! # Scopes
//!
//! [`ServerBuilder::required_scopes`](crate::ServerBuilder::required_scopes) sets the scopes
//! every request needs; [`ToolDef::required_scopes`](crate::ToolDef::required_scopes),
//! [`PromptDef::required_scopes`](crate::PromptDef::required_scopes),
//! [`ResourceDef::required_scopes`](crate::ResourceDef::required_scopes) and
//! [`ResourceTemplateDef::required_scopes`](crate::ResourceTemplateDef::required_scopes) add
//! what a call of one tool, a get of one prompt, or a read (or subscription, or completion) of
//! one resource needs; a 2026-07-28 `subscriptions/listen` needs those of every resource it
//! subscribes to by URI. The transport checks them before it answers, from the parsed request
//! (the `Mcp-Name` header of a 2026 request has been checked against the body by then), so a
//! missing scope is a 403 status, not a JSON-RPC error inside a 200, and comes before any
//! handler runs or any stream opens. Its one challenge names every scope the request needs,
//! the server's and the item's together, not only those missing (the client's step-up asks for
//! them with those it already holds; SEP-2350).
//!
//! Lists (`tools/list`, `prompts/list`, `resources/list`) show every item registered, whatever
//! the caller's scopes: a client learns what it lacks from the 403 challenge of a call and can
//! then ask for more (the spec's step-up authorization). The resources a template's
//! [`list`](crate::ResourceTemplateDef::list) callback enumerates are data, not registrations:
//! they are listed only to callers whose scopes would let them read each one. Scopes are checked only on an HTTP endpoint
//! with bearer auth; over stdio (whose credentials come from the environment) and in process
//! they are ignored.
//!
//! # Identity and tokens in handlers
//!
//! Every handler reads the caller through
//! [`RequestContext::identity`](crate::RequestContext::identity), and the request's headers
//! through [`RequestContext::http_headers`](crate::RequestContext::http_headers) (without
//! `Authorization`). The access token itself is never handed to handlers: a server must not pass
//! the client's token on to other services (token passthrough is forbidden); it obtains tokens of
//! its own for upstream APIs.
//!
//! # Sessions
//!
//! A 2025-11-25 session is bound to the identity that opened it (issuer and subject, or client
//! id without a subject): a request on it with another identity's token is answered 404, as if
//! the session did not exist.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization>,
//! RFC 6750 (bearer tokens), RFC 9728 (protected resource metadata), RFC 7662 (introspection),
//! RFC 8707 (resource indicators, audience).

#[cfg(feature = "http")]
mod bearer;
#[cfg(feature = "http")]
mod fetch;
mod identity;
#[cfg(all(feature = "auth", feature = "http"))]
mod introspection;
#[cfg(all(feature = "auth", feature = "http"))]
mod jwt;
#[cfg(all(feature = "auth", feature = "http"))]
mod refusals;
pub(crate) mod scope_token;
pub(crate) mod scopes;

use futures::future::BoxFuture;

#[cfg(feature = "http")]
pub use bearer::{BearerAuth, BearerAuthBuilder};
pub use identity::Identity;
#[cfg(all(feature = "auth", feature = "http"))]
pub use introspection::{ClientAuth, IntrospectionValidator, IntrospectionValidatorBuilder};
#[cfg(all(feature = "auth", feature = "http"))]
pub use jwt::{JwtValidator, JwtValidatorBuilder};

#[cfg(feature = "http")]
pub(crate) use bearer::{Challenge, WELL_KNOWN};

/// Turns a bearer token into the [`Identity`] of its holder, or refuses it.
///
/// Implement it to validate tokens your own way (an opaque token looked up in a database, a
/// JWT with extra checks); [`JwtValidator`] and [`IntrospectionValidator`] are the built-in
/// ones. A validator must check that the token was issued for this server (its audience).
/// An async closure taking the token as a `String` is one as well (see the implementations).
///
/// ```
/// use actix_mcp::server::auth::{AuthError, Identity, TokenValidator};
/// use futures::future::BoxFuture;
///
/// struct Static;
///
/// impl TokenValidator for Static {
///     fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
///         Box::pin(async move {
///             match token {
///                 "let-me-in" => Ok(Identity::new("tester").with_scopes(["mcp"])),
///                 _ => Err(AuthError::invalid_token("unknown token")),
///             }
///         })
///     }
/// }
/// ```
pub trait TokenValidator: Send + Sync + 'static {
    /// Validates one token (the credentials of `Authorization: Bearer <token>`).
    ///
    /// # Errors
    /// [`AuthError::InvalidToken`] when the token is not acceptable (answered 401);
    /// [`AuthError::Unavailable`] when it cannot be decided now (answered 503).
    ///
    /// # Cancel safety
    /// The future is dropped when the client goes away; a validator must leave its caches
    /// consistent at every await point.
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>>;
}

/// An async closure that takes the token is a validator too:
///
/// ```
/// use actix_mcp::server::auth::{AuthError, Identity, TokenValidator};
///
/// fn validator() -> impl TokenValidator {
///     |token: String| async move {
///         match token.as_str() {
///             "let-me-in" => Ok(Identity::new("tester").with_scopes(["mcp"])),
///             _ => Err(AuthError::invalid_token("unknown token")),
///         }
///     }
/// }
/// # let _ = validator();
/// ```
impl<F, Fut> TokenValidator for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Identity, AuthError>> + Send + 'static,
{
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
        Box::pin(self(token.to_owned()))
    }
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The token is malformed, expired, not yet valid, badly signed, for another audience or
    /// issuer, revoked or inactive. Answered 401 with `error="invalid_token"`; the text is the
    /// `error_description` (so it must not contain secrets).
    #[error("invalid token: {0}")]
    InvalidToken(String),
    /// The validator could not decide: the JWKS or the introspection endpoint is unreachable
    /// or answered nonsense. Answered 503; the text is logged, not sent.
    #[error("token validation unavailable: {0}")]
    Unavailable(String),
}

impl AuthError {
    /// An [`AuthError::InvalidToken`] described by `description`.
    pub fn invalid_token(description: impl Into<String>) -> Self {
        Self::InvalidToken(description.into())
    }

    /// An [`AuthError::Unavailable`] for `reason`.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self::Unavailable(reason.into())
    }
}

/// A bearer-auth setting that cannot work, found when it is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthConfigError {
    /// A URL does not parse, or is not an absolute `http(s)` URL.
    #[error("invalid {what} `{url}`: {reason}")]
    InvalidUrl {
        /// Which setting (`resource`, `JWKS URI`, ...).
        what: &'static str,
        /// The URL as given.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// A URL tokens or keys are fetched from is plain `http` to a host that is not loopback
    /// (allow it with `allow_http(true)` only behind a trusted network).
    #[error("{what} `{url}` must use https")]
    InsecureUrl {
        /// Which setting.
        what: &'static str,
        /// The URL as given.
        url: String,
    },
    /// No expected audience: a resource server must check tokens were issued for it.
    #[error("no audience: set the audience tokens must be issued for (this server's URL)")]
    MissingAudience,
    /// A JWT validator without the issuer its tokens must come from.
    #[error("no issuer: set the issuer tokens must come from")]
    MissingIssuer,
    /// An algorithm that a JWKS must never verify (`none`, `HS*`) or that is unknown.
    #[error("algorithm `{0}` is not allowed: use RS*, PS*, ES256, ES384 or EdDSA")]
    Algorithm(String),
    /// The allowed algorithms list is empty.
    #[error("no algorithm is allowed")]
    NoAlgorithms,
    /// Protected resource metadata without an authorization server.
    #[error("no authorization server: the protected resource metadata must name at least one")]
    MissingAuthorizationServer,
    /// A scope is not an RFC 6749 scope token (empty, or with spaces, quotes or backslashes).
    #[error(
        "invalid scope {0:?}: a scope is one or more printable ASCII characters, without spaces, `\"` or `\\`"
    )]
    InvalidScope(String),
    /// An extra metadata field would replace one the server computes.
    #[error("metadata field `{0}` is set by the server")]
    ReservedMetadata(String),
    /// The HTTP client for fetches could not be built.
    #[error("could not build the HTTP client: {0}")]
    HttpClient(String),
}
