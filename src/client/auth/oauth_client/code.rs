//! The authorization-code grant with PKCE (OAuth 2.1 section 4.1): the MCP spec's flow.
//!
//! The client makes a PKCE `S256` challenge and a `state`, records the issuer, and hands the
//! authorization URL to the application's [`Authorizer`]. The response it gets back is checked
//! before the code goes anywhere (RFC 9207 section 2.4, as the MCP spec tabulates it): a
//! present `iss` must equal the recorded issuer as a string (whether or not the server
//! advertises `iss`); a missing one is refused when the server advertises
//! `authorization_response_iss_parameter_supported`; `state` must be the request's; only then
//! are `error` and `code` read. The code is exchanged with its verifier, the redirect URI and
//! `resource`.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#authorization-response-validation>

use std::sync::Arc;

use futures::future::BoxFuture;
use oauth2::{CsrfToken, PkceCodeChallenge};

use super::authorizer::{AuthorizationCallback, AuthorizationRequest, Authorizer};
use super::error::{AuthError, redact_url};
use super::grant::{Grant, GrantContext};
use super::http::{checked_url, is_loopback};
use super::metadata::AuthorizationServerMetadata;
use super::registration::ClientMetadata;
use super::scope;
use super::token::Token;
use crate::client::error::ClientError;

/// The authorization-code grant: the user authorizes in a browser (through the
/// [`Authorizer`]), and the code is exchanged with PKCE.
#[derive(Debug, Clone)]
pub struct AuthorizationCode {
    redirect_uri: String,
    authorizer: Arc<dyn Authorizer>,
    refresh: bool,
}

impl AuthorizationCode {
    /// The grant, with the authorization server sending the user back to `redirect_uri`
    /// (`https://`, or `http://` on a loopback host) and `authorizer` doing the interactive
    /// step.
    pub fn new(redirect_uri: impl Into<String>, authorizer: impl Authorizer + 'static) -> Self {
        Self {
            redirect_uri: redirect_uri.into(),
            authorizer: Arc::new(authorizer),
            refresh: true,
        }
    }

    /// Whether to ask for refresh tokens (`offline_access` where the server lists it, the
    /// `refresh_token` grant type in the registration). Default `true`.
    #[must_use]
    pub fn refresh_tokens(mut self, wanted: bool) -> Self {
        self.refresh = wanted;
        self
    }

    /// The redirect URI.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }
}

impl AuthorizationCode {
    /// Checks the redirect URI: `https://`, or `http://` on a loopback host, no fragment.
    fn check_redirect_uri(&self) -> Result<(), AuthError> {
        let url = reqwest::Url::parse(&self.redirect_uri).map_err(|err| {
            AuthError::Config(format!("redirect URI {:?}: {err}", self.redirect_uri))
        })?;
        let ok = match url.scheme() {
            "https" => true,
            "http" => is_loopback(&url),
            _ => false,
        };
        if !ok || url.fragment().is_some() {
            return Err(AuthError::Config(format!(
                "redirect URI {:?} must be https or loopback http, without a fragment",
                self.redirect_uri
            )));
        }
        Ok(())
    }
}

/// Checks an authorization response against the request (`state`) and the authorization
/// server (`issuer`, whether it advertises `iss`); returns the code.
///
/// # Errors
/// [`AuthError::IssMismatch`], [`AuthError::IssMissing`], [`AuthError::StateMismatch`],
/// [`AuthError::AccessDenied`], [`AuthError::InvalidCallback`].
pub fn validate_callback(
    callback: &AuthorizationCallback,
    state: &str,
    server: &AuthorizationServerMetadata,
) -> Result<String, AuthError> {
    // RFC 9207 first: nothing else of a response from the wrong issuer is acted on.
    match callback.param("iss")? {
        Some(iss) if iss != server.issuer => {
            return Err(AuthError::IssMismatch {
                expected: server.issuer.clone(),
                found: redact_url(iss),
            });
        }
        None if server.authorization_response_iss_parameter_supported => {
            return Err(AuthError::IssMissing {
                issuer: server.issuer.clone(),
            });
        }
        _ => {}
    }
    let code = callback.param("code")?;
    let error = callback.param("error")?;
    if callback.param("state")? != Some(state) {
        return Err(AuthError::StateMismatch);
    }
    if let Some(error) = error {
        return Err(AuthError::AccessDenied {
            error: error.to_owned(),
            description: callback.param("error_description")?.map(str::to_owned),
        });
    }
    match code {
        Some(code) if !code.is_empty() => Ok(code.to_owned()),
        _ => Err(AuthError::InvalidCallback("no code".into())),
    }
}

impl Grant for AuthorizationCode {
    fn obtain<'a>(&'a self, cx: GrantContext<'a>) -> BoxFuture<'a, Result<Token, ClientError>> {
        Box::pin(async move {
            let server = cx.server();
            let pkce = server
                .code_challenge_methods_supported
                .as_ref()
                .is_some_and(|methods| methods.iter().any(|m| m == "S256"));
            if !pkce {
                return Err(AuthError::PkceUnsupported {
                    issuer: server.issuer.clone(),
                }
                .into());
            }
            let endpoint = server.authorization_endpoint.as_deref().ok_or_else(|| {
                AuthError::MissingEndpoint {
                    issuer: server.issuer.clone(),
                    endpoint: "authorization_endpoint",
                }
            })?;
            let mut url = checked_url(endpoint)?;
            let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
            let state = CsrfToken::new_random();
            {
                let mut query = url.query_pairs_mut();
                query
                    .append_pair("response_type", "code")
                    .append_pair("client_id", cx.client().client_id())
                    .append_pair("redirect_uri", &self.redirect_uri)
                    .append_pair("state", state.secret())
                    .append_pair("code_challenge", challenge.as_str())
                    .append_pair("code_challenge_method", "S256")
                    .append_pair("resource", cx.resource());
                if let Some(scope) = scope::join(cx.scopes()) {
                    query.append_pair("scope", &scope);
                }
                if let Some(key) = cx.dpop_key() {
                    // RFC 9449 section 10: the code is bound to the key that will redeem it.
                    query.append_pair("dpop_jkt", key.thumbprint());
                }
            }
            let request = AuthorizationRequest {
                url,
                redirect_uri: self.redirect_uri.clone(),
                state: state.secret().clone(),
                issuer: server.issuer.clone(),
                scopes: cx.scopes().to_vec(),
            };
            // The user's part: outside the client's request timeouts, within the flow's own.
            let callback = cx.interact(self.authorizer.authorize(request)).await?;
            let code = validate_callback(&callback, state.secret(), server)?;
            cx.token_request(
                "authorization_code",
                &[
                    ("code", &code),
                    ("redirect_uri", &self.redirect_uri),
                    ("code_verifier", verifier.secret()),
                ],
            )
            .await
        })
    }

    fn client_metadata(&self, metadata: &mut ClientMetadata) {
        if !metadata.redirect_uris.contains(&self.redirect_uri) {
            metadata.redirect_uris.push(self.redirect_uri.clone());
        }
        let mut grants = vec!["authorization_code".to_owned()];
        if self.refresh {
            grants.push("refresh_token".to_owned());
        }
        for grant in grants {
            if !metadata.grant_types.contains(&grant) {
                metadata.grant_types.push(grant);
            }
        }
        if !metadata.response_types.iter().any(|r| r == "code") {
            metadata.response_types.push("code".into());
        }
    }

    fn check(&self) -> Result<(), AuthError> {
        self.check_redirect_uri()
    }

    fn refreshable(&self) -> bool {
        self.refresh
    }

    fn accepts_unbound_client(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(advertised: bool) -> AuthorizationServerMetadata {
        let mut server: AuthorizationServerMetadata = serde_json::from_value(serde_json::json!({
            "issuer": "https://as.example.com",
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        server.authorization_response_iss_parameter_supported = advertised;
        server
    }

    #[test]
    fn iss_is_checked_before_anything_else() {
        let ok = AuthorizationCallback::new("c", "s").iss("https://as.example.com");
        assert_eq!(
            validate_callback(&ok, "s", &server(true)).ok(),
            Some("c".into())
        );
        let slash = AuthorizationCallback::new("c", "s").iss("https://as.example.com/");
        assert!(matches!(
            validate_callback(&slash, "s", &server(false)),
            Err(AuthError::IssMismatch { .. })
        ));
        let missing = AuthorizationCallback::new("c", "s");
        assert!(matches!(
            validate_callback(&missing, "s", &server(true)),
            Err(AuthError::IssMissing { .. })
        ));
        assert_eq!(
            validate_callback(&missing, "s", &server(false)).ok(),
            Some("c".into())
        );
        let wrong_state = AuthorizationCallback::new("c", "t");
        assert_eq!(
            validate_callback(&wrong_state, "s", &server(false)),
            Err(AuthError::StateMismatch)
        );
        let denied = AuthorizationCallback::from_query("error=access_denied&state=s");
        assert!(matches!(
            validate_callback(&denied, "s", &server(false)),
            Err(AuthError::AccessDenied { .. })
        ));
    }
}
