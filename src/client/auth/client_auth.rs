//! How the client authenticates at the token endpoint (RFC 6749 section 2.3, OAuth 2.1
//! section 2.4): the method is chosen from what the authorization server lists in
//! `token_endpoint_auth_methods_supported` and what credentials the client has, unless the
//! registration fixed it.
//!
//! [`TokenEndpointAuth::apply`] is the one place a method turns into request parameters and
//! headers; a new method (such as `private_key_jwt`, RFC 7523 client assertions) is a new
//! variant and a new arm there.

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use super::error::AuthError;
use super::metadata::AuthorizationServerMetadata;
use super::registration::ClientRegistration;
use crate::client::error::ClientError;

/// A token endpoint authentication method.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenEndpointAuth {
    /// `none`: a public client; `client_id` goes in the request body.
    None,
    /// `client_secret_basic`: HTTP Basic with the form-encoded client id and secret.
    ClientSecretBasic,
    /// `client_secret_post`: `client_id` and `client_secret` in the request body.
    ClientSecretPost,
}

impl TokenEndpointAuth {
    /// The method's registered name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
        }
    }

    /// The method registered as `name`, if this client knows it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "none" => Some(Self::None),
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            _ => None,
        }
    }

    /// The method to use with `server` for a client that has a secret or not: with a secret,
    /// the first of `client_secret_basic` and `client_secret_post` the server lists (RFC
    /// 8414's default list is `client_secret_basic` alone); without one, `none`.
    pub fn choose(server: &AuthorizationServerMetadata, has_secret: bool) -> Self {
        if !has_secret {
            return Self::None;
        }
        let supported = server.token_endpoint_auth_methods_supported.as_deref();
        let listed = |method: &Self| {
            supported.map_or(*method == Self::ClientSecretBasic, |list| {
                list.iter().any(|name| name == method.name())
            })
        };
        [Self::ClientSecretBasic, Self::ClientSecretPost]
            .into_iter()
            .find(listed)
            .unwrap_or(Self::ClientSecretBasic)
    }

    /// The method to ask for in a dynamic registration with `server`: the first of
    /// `client_secret_basic`, `client_secret_post` and `none` it lists.
    pub(crate) fn for_registration(server: &AuthorizationServerMetadata) -> Self {
        let Some(supported) = server.token_endpoint_auth_methods_supported.as_deref() else {
            return Self::ClientSecretBasic;
        };
        [Self::ClientSecretBasic, Self::ClientSecretPost, Self::None]
            .into_iter()
            .find(|method| supported.iter().any(|name| name == method.name()))
            .unwrap_or(Self::None)
    }

    /// Authenticates a token request as `client`: adds to its form and headers. `server` is
    /// there for methods that need it (a client assertion's audience is the issuer).
    ///
    /// # Errors
    /// [`AuthError::Config`] when the method needs a secret the client lacks, or the
    /// credentials cannot go in a header.
    pub(crate) fn apply(
        &self,
        client: &ClientRegistration,
        server: &AuthorizationServerMetadata,
        form: &mut Vec<(String, String)>,
        headers: &mut HeaderMap,
    ) -> Result<(), ClientError> {
        let _unused_by_the_secret_methods = server;
        let secret = || {
            client.client_secret().ok_or_else(|| {
                AuthError::Config(format!(
                    "{} needs a client secret, and client {:?} has none",
                    self.name(),
                    client.client_id()
                ))
            })
        };
        match self {
            Self::None => form.push(("client_id".into(), client.client_id().to_owned())),
            Self::ClientSecretPost => {
                let secret = secret()?;
                form.push(("client_id".into(), client.client_id().to_owned()));
                form.push(("client_secret".into(), secret.to_owned()));
            }
            Self::ClientSecretBasic => {
                let secret = secret()?;
                // RFC 6749 section 2.3.1: each part form-encoded, then joined and base64.
                let encode = |text: &str| {
                    url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>()
                };
                let pair = format!("{}:{}", encode(client.client_id()), encode(secret));
                let value = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                );
                let mut value = HeaderValue::from_str(&value).map_err(|_| {
                    AuthError::Config("the client credentials cannot go in a header".into())
                })?;
                value.set_sensitive(true);
                headers.insert(AUTHORIZATION, value);
            }
        }
        Ok(())
    }
}
