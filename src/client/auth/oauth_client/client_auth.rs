//! How the client authenticates at the token endpoint (RFC 6749 section 2.3, OAuth 2.1
//! section 2.4): the method is chosen from what the authorization server lists in
//! `token_endpoint_auth_methods_supported` and what credentials the client has, unless the
//! registration fixed it.
//!
//! [`TokenEndpointAuth::apply`] is the one place a method turns into request parameters and
//! headers: the secret methods, and `private_key_jwt` (RFC 7523 section 2.2), whose assertion
//! is signed anew for every request with the client's [`SigningKey`](super::SigningKey),
//! addressed to the server's issuer.

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use super::assertion::{CLIENT_ASSERTION_TYPE_JWT_BEARER, client_assertion};
use super::error::AuthError;
use super::metadata::AuthorizationServerMetadata;
use super::registration::ClientRegistration;
use crate::client::error::ClientError;
use crate::client::error::describe;

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
    /// `private_key_jwt`: a client assertion signed with the client's private key
    /// ([`ClientRegistration::private_key`]) in `client_assertion` (RFC 7523 section 2.2).
    PrivateKeyJwt,
}

impl TokenEndpointAuth {
    /// The method's registered name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method registered as `name`, if this client knows it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "none" => Some(Self::None),
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            "private_key_jwt" => Some(Self::PrivateKeyJwt),
            _ => None,
        }
    }

    /// The method `client` uses with `server`, from its credentials and what the server lists
    /// in `token_endpoint_auth_methods_supported` (RFC 8414's default list is
    /// `client_secret_basic` alone): with a private key, `private_key_jwt` unless the server
    /// lists only secret methods and the client has a secret; with a secret, the first of
    /// `client_secret_basic` and `client_secret_post` the server lists; with neither, `none`.
    pub fn choose(server: &AuthorizationServerMetadata, client: &ClientRegistration) -> Self {
        let supported = server.token_endpoint_auth_methods_supported.as_deref();
        let listed = |method: &Self| {
            supported.map_or(*method == Self::ClientSecretBasic, |list| {
                list.iter().any(|name| name == method.name())
            })
        };
        let has_secret = client.client_secret().is_some();
        if client.signing_key().is_some() && (listed(&Self::PrivateKeyJwt) || !has_secret) {
            return Self::PrivateKeyJwt;
        }
        if !has_secret {
            return Self::None;
        }
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
    /// [`AuthError::Config`] when the method needs a secret or key the client lacks, or the
    /// credentials cannot go in a header; [`AuthError::Signing`] when an assertion cannot be
    /// signed.
    pub(crate) fn apply(
        &self,
        client: &ClientRegistration,
        server: &AuthorizationServerMetadata,
        form: &mut Vec<(String, String)>,
        headers: &mut HeaderMap,
    ) -> Result<(), ClientError> {
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
            Self::PrivateKeyJwt => {
                let key = client.signing_key().ok_or_else(|| {
                    AuthError::Config(format!(
                        "private_key_jwt needs a private key, and client {:?} has none",
                        client.client_id()
                    ))
                })?;
                let assertion = client_assertion(key, client.client_id(), &server.issuer)
                    .map_err(|err| AuthError::Signing(describe(&err)))?;
                form.push((
                    "client_assertion_type".into(),
                    CLIENT_ASSERTION_TYPE_JWT_BEARER.into(),
                ));
                form.push(("client_assertion".into(), assertion));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use jsonwebtoken::{DecodingKey, Validation};

    use super::*;
    use crate::client::auth::SigningKey;

    fn server(methods: Option<&[&str]>) -> AuthorizationServerMetadata {
        let mut server = AuthorizationServerMetadata::with_token_endpoint(
            "https://as.example.com",
            "https://as.example.com/token",
        );
        server.token_endpoint_auth_methods_supported =
            methods.map(|list| list.iter().map(|m| (*m).to_owned()).collect());
        server
    }

    #[test]
    fn the_method_follows_the_credentials_and_the_server_list() {
        let key = SigningKey::generate_es256().unwrap();
        let public = ClientRegistration::pre_registered("c");
        let secret = ClientRegistration::pre_registered("c").secret("s");
        let keyed = ClientRegistration::pre_registered("c").private_key(key.clone());
        let both = secret.clone().private_key(key);
        let choose = TokenEndpointAuth::choose;
        assert_eq!(choose(&server(None), &public), TokenEndpointAuth::None);
        assert_eq!(
            choose(&server(None), &secret),
            TokenEndpointAuth::ClientSecretBasic
        );
        assert_eq!(
            choose(&server(Some(&["client_secret_post"])), &secret),
            TokenEndpointAuth::ClientSecretPost
        );
        assert_eq!(
            choose(&server(None), &keyed),
            TokenEndpointAuth::PrivateKeyJwt
        );
        assert_eq!(
            choose(&server(Some(&["private_key_jwt"])), &both),
            TokenEndpointAuth::PrivateKeyJwt
        );
        assert_eq!(
            choose(&server(Some(&["client_secret_post"])), &both),
            TokenEndpointAuth::ClientSecretPost
        );
        assert_eq!(
            TokenEndpointAuth::from_name("private_key_jwt"),
            Some(TokenEndpointAuth::PrivateKeyJwt)
        );
    }

    #[test]
    fn private_key_jwt_signs_a_fresh_assertion_for_the_issuer() {
        let key = SigningKey::generate_es256().unwrap();
        let jwk = key.public_jwk().unwrap();
        let client = ClientRegistration::pre_registered("svc").private_key(key);
        let server = server(Some(&["private_key_jwt"]));
        let assertion = || {
            let (mut form, mut headers) = (Vec::new(), HeaderMap::new());
            TokenEndpointAuth::PrivateKeyJwt
                .apply(&client, &server, &mut form, &mut headers)
                .unwrap();
            assert!(headers.is_empty());
            assert!(!form.iter().any(|(name, _)| name == "client_id"));
            assert!(form.contains(&(
                "client_assertion_type".into(),
                CLIENT_ASSERTION_TYPE_JWT_BEARER.into()
            )));
            form.into_iter()
                .find(|(name, _)| name == "client_assertion")
                .map(|(_, value)| value)
                .unwrap()
        };
        let mut validation = Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.set_audience(&["https://as.example.com"]);
        validation.set_issuer(&["svc"]);
        let decode = |jwt: &str| {
            jsonwebtoken::decode::<serde_json::Value>(
                jwt,
                &DecodingKey::from_jwk(&jwk).unwrap(),
                &validation,
            )
            .unwrap()
            .claims
        };
        let (first, second) = (decode(&assertion()), decode(&assertion()));
        assert_eq!(first["sub"], "svc");
        assert_ne!(first["jti"], second["jti"]);

        let keyless = ClientRegistration::pre_registered("svc");
        let refused = TokenEndpointAuth::PrivateKeyJwt.apply(
            &keyless,
            &server,
            &mut Vec::new(),
            &mut HeaderMap::new(),
        );
        assert!(matches!(
            refused,
            Err(ClientError::Auth(AuthError::Config(_)))
        ));
    }
}
