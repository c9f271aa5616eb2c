//! The OAuth 2.1 client (feature `auth`), re-exported whole by the `auth` module: one module
//! per part of the flow, beside the parts built without the feature (`error`, `provider`).

mod assertion;
mod authorizer;
mod builder;
mod challenge;
mod client_auth;
mod code;
mod dpop;
mod grant;
mod grants;
mod http;
mod metadata;
mod network;
mod oauth;
mod registration;
mod scope;
mod store;
mod token;

use super::error::{self, AuthError};
use super::provider;

pub use assertion::{JwtError, SigningKey};
pub use authorizer::{
    AuthorizationCallback, AuthorizationRequest, Authorizer, FnAuthorizer, HeadlessAuthorizer,
    authorize_with,
};
pub use builder::OAuthBuilder;
pub use challenge::{BearerChallenge, Challenge};
pub use client_auth::TokenEndpointAuth;
pub use code::{AuthorizationCode, validate_callback};
pub use dpop::DpopKey;
pub use grant::{Grant, GrantContext};
pub use grants::{
    ClientCredentials, EnterpriseAuthorization, FnTokenSource, GRANT_CLIENT_CREDENTIALS,
    GRANT_JWT_BEARER, GRANT_TOKEN_EXCHANGE, IdentityProvider, JwtBearer, TOKEN_TYPE_ID_JAG,
    TOKEN_TYPE_ID_TOKEN, TokenSource, token_with,
};
pub use http::{HookRequest, HookResponse, HookVerdict, RequestHook, RequestKind, checked_url};
pub use metadata::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, authorization_server_metadata_urls,
    protected_resource_metadata_urls, resource_matches,
};
pub use oauth::{DEFAULT_MAX_STEP_UP, OAuth};
pub use registration::{ClientCredential, ClientMetadata, ClientRegistration, RegistrationKind};
pub use scope::OFFLINE_ACCESS;
pub use store::{InMemoryTokenStore, TokenKey, TokenStore};
pub use token::{Token, TokenType};

/// The JOSE signature algorithms (re-exported from `jsonwebtoken`): what a [`SigningKey`]
/// signs with.
pub use jsonwebtoken::Algorithm;
/// A JSON Web Key (re-exported from `jsonwebtoken`): the public half of a [`SigningKey`].
pub use jsonwebtoken::jwk::Jwk;
