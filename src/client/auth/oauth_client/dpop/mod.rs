//! DPoP (RFC 9449): access tokens bound to a key the client holds, proven on every request.
//!
//! Turned on with [`OAuthBuilder::dpop`](super::OAuthBuilder::dpop) (a [`DpopKey`]),
//! [`dpop_generate`](super::OAuthBuilder::dpop_generate) (a fresh ES256 key) or
//! [`dpop_auto`](super::OAuthBuilder::dpop_auto) (a fresh key, used with the authorization
//! servers that list its algorithm in `dpop_signing_alg_values_supported`). [`Dpop`] is a
//! [`RequestHook`] of the flow; what it does is in the
//! [auth module docs](crate::client::auth#dpop). Nonces are kept per server role and origin
//! (the authorization server's and the MCP server's apart, even on one origin), at most a few
//! dozen; a request is sent again for a nonce only when the refused proof did not carry that
//! nonce already.
//!
//! Spec: <https://www.rfc-editor.org/rfc/rfc9449>,
//! <https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/dpop-extension.mdx>

mod key;
mod nonce;

use std::fmt;

use jsonwebtoken::Algorithm;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::error::AuthError;
use super::http::{HookRequest, HookResponse, HookVerdict, RequestHook, RequestKind};
use super::metadata::AuthorizationServerMetadata;
use super::token::TokenType;
use crate::client::error::ClientError;
use crate::client::error::describe;

pub use key::DpopKey;
pub(crate) use nonce::demands_nonce;
use nonce::{Nonces, ServerRole, proof_nonce, resource_nonce_demand, token_nonce_demand};

/// The header that carries a proof.
const DPOP_HEADER: HeaderName = HeaderName::from_static("dpop");

/// Where the flow uses DPoP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DpopUse {
    /// With every authorization server.
    Always,
    /// With the authorization servers that list the key's algorithm in
    /// `dpop_signing_alg_values_supported`.
    WhenSupported,
}

/// The DPoP request hook of a flow: a key, where to use it, and the nonces servers sent.
pub(crate) struct Dpop {
    key: DpopKey,
    usage: DpopUse,
    nonces: Nonces,
}

impl fmt::Debug for Dpop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dpop")
            .field("key", &self.key)
            .field("usage", &self.usage)
            .field("nonces", &self.nonces.lock().len())
            .finish()
    }
}

/// The JOSE name of an asymmetric `alg`, as servers list it.
fn alg_name(alg: Algorithm) -> Option<&'static str> {
    Some(match alg {
        Algorithm::ES256 => "ES256",
        Algorithm::ES384 => "ES384",
        Algorithm::RS256 => "RS256",
        Algorithm::RS384 => "RS384",
        Algorithm::RS512 => "RS512",
        Algorithm::PS256 => "PS256",
        Algorithm::PS384 => "PS384",
        Algorithm::PS512 => "PS512",
        Algorithm::EdDSA => "EdDSA",
        _ => return None,
    })
}

impl Dpop {
    pub(crate) fn new(key: DpopKey, usage: DpopUse) -> Self {
        Self {
            key,
            usage,
            nonces: Nonces::default(),
        }
    }

    /// The key.
    pub(crate) fn key(&self) -> &DpopKey {
        &self.key
    }

    /// Whether requests to the authorization server `server` carry proofs.
    pub(crate) fn applies_to(&self, server: Option<&AuthorizationServerMetadata>) -> bool {
        match self.usage {
            DpopUse::Always => true,
            DpopUse::WhenSupported => server
                .and_then(|server| server.dpop_signing_alg_values_supported.as_deref())
                .is_some_and(|algs| {
                    algs.iter()
                        .any(|alg| Some(alg.as_str()) == alg_name(self.key.algorithm()))
                }),
        }
    }
}

impl RequestHook for Dpop {
    fn headers(
        &self,
        request: &HookRequest<'_>,
        headers: &mut HeaderMap,
    ) -> Result<(), ClientError> {
        let (role, access_token) = match request.kind {
            RequestKind::Token if self.applies_to(request.server) => {
                (ServerRole::Authorization, None)
            }
            RequestKind::Resource => match request.token {
                Some(token) if *token.token_type() == TokenType::DPoP => {
                    (ServerRole::Resource, Some(token.access_token()))
                }
                _ => return Ok(()),
            },
            _ => return Ok(()),
        };
        let nonce = self.nonces.get(role, request.url);
        let signing = |reason: String| ClientError::Auth(AuthError::Signing(reason));
        let proof = self
            .key
            .proof(
                request.method.as_str(),
                request.url.as_str(),
                nonce.as_deref(),
                access_token,
            )
            .map_err(|err| signing(describe(&err)))?;
        let value = HeaderValue::from_str(&proof)
            .map_err(|_| signing("the DPoP proof cannot go in a header".into()))?;
        headers.insert(DPOP_HEADER, value);
        Ok(())
    }

    fn response(&self, request: &HookRequest<'_>, response: &HookResponse<'_>) -> HookVerdict {
        let role = match request.kind {
            RequestKind::Token => ServerRole::Authorization,
            RequestKind::Resource => ServerRole::Resource,
            _ => return HookVerdict::Proceed,
        };
        self.nonces.observe(role, request.url, response.headers);
        let Some(sent) = response.sent.get(DPOP_HEADER) else {
            return HookVerdict::Proceed;
        };
        let demanded = match role {
            ServerRole::Authorization => token_nonce_demand(
                response.status,
                response.headers,
                response.body.unwrap_or_default(),
            ),
            ServerRole::Resource => resource_nonce_demand(response.status, response.headers),
        };
        // Sent again only with a nonce the refused proof did not carry: a server that keeps
        // demanding the nonce it was given is not asked again.
        match demanded {
            Some(nonce) if proof_nonce(sent).as_deref() != Some(nonce) => HookVerdict::Retry,
            _ => HookVerdict::Proceed,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use reqwest::StatusCode;
    use url::Url;

    use super::key::access_token_hash;
    use super::key::tests::verify;
    use super::nonce::tests::headers;
    use super::*;

    fn server(algs: Option<&[&str]>) -> AuthorizationServerMetadata {
        let mut server = AuthorizationServerMetadata::with_token_endpoint(
            "https://as.test",
            "https://as.test/token",
        );
        server.dpop_signing_alg_values_supported =
            algs.map(|algs| algs.iter().map(|alg| (*alg).to_owned()).collect());
        server
    }

    /// The proof the hook adds to `request`, if any.
    fn proof_of(dpop: &Dpop, request: &HookRequest<'_>) -> Option<serde_json::Value> {
        let mut headers = HeaderMap::new();
        dpop.headers(request, &mut headers).unwrap();
        headers
            .get(DPOP_HEADER)
            .map(|proof| verify(proof.to_str().unwrap()).1)
    }

    #[test]
    fn auto_dpop_proves_only_to_servers_that_list_the_algorithm() {
        let token_url = Url::parse("https://as.test/token").unwrap();
        let post = reqwest::Method::POST;
        let auto = Dpop::new(DpopKey::generate().unwrap(), DpopUse::WhenSupported);
        let always = Dpop::new(DpopKey::generate().unwrap(), DpopUse::Always);
        for (algs, expected) in [
            (Some(&["RS256", "ES256"][..]), true),
            (Some(&["RS256"][..]), false),
            (None, false),
        ] {
            let server = server(algs);
            let request = HookRequest {
                kind: RequestKind::Token,
                method: &post,
                url: &token_url,
                token: None,
                server: Some(&server),
            };
            assert_eq!(proof_of(&auto, &request).is_some(), expected, "{algs:?}");
            let proof = proof_of(&always, &request).unwrap();
            assert_eq!(proof["htu"], "https://as.test/token");
            assert!(proof.get("ath").is_none());
        }
        let registration = HookRequest {
            kind: RequestKind::Registration,
            method: &post,
            url: &token_url,
            token: None,
            server: None,
        };
        assert!(proof_of(&always, &registration).is_none());
    }

    #[test]
    fn only_a_dpop_token_gets_a_resource_proof() {
        let mcp = Url::parse("https://mcp.test/mcp").unwrap();
        let get = reqwest::Method::GET;
        let dpop = Dpop::new(DpopKey::generate().unwrap(), DpopUse::Always);
        let bound = crate::client::auth::Token::new("bound", TokenType::DPoP);
        let bearer = crate::client::auth::Token::new("plain", TokenType::Bearer);
        let request = |token| HookRequest {
            kind: RequestKind::Resource,
            method: &get,
            url: &mcp,
            token: Some(token),
            server: None,
        };
        let proof = proof_of(&dpop, &request(&bound)).unwrap();
        assert_eq!(proof["htm"], "GET");
        assert_eq!(proof["ath"], access_token_hash("bound"));
        assert!(proof_of(&dpop, &request(&bearer)).is_none());
    }

    #[test]
    fn a_nonce_demand_is_met_once_with_the_new_nonce() {
        let mcp = Url::parse("https://mcp.test/mcp").unwrap();
        let post = reqwest::Method::POST;
        let dpop = Dpop::new(DpopKey::generate().unwrap(), DpopUse::Always);
        let bound = crate::client::auth::Token::new("bound", TokenType::DPoP);
        let request = HookRequest {
            kind: RequestKind::Resource,
            method: &post,
            url: &mcp,
            token: Some(&bound),
            server: None,
        };
        let demand = headers(&[
            ("www-authenticate", r#"DPoP error="use_dpop_nonce""#),
            ("dpop-nonce", "rs-1"),
        ]);
        let mut sent = HeaderMap::new();
        dpop.headers(&request, &mut sent).unwrap();
        let answer = |sent| HookResponse {
            status: StatusCode::UNAUTHORIZED,
            headers: &demand,
            body: None,
            sent,
        };
        assert_eq!(dpop.response(&request, &answer(&sent)), HookVerdict::Retry);
        // The next proof carries the nonce; the same demand again is not met again.
        let mut again = HeaderMap::new();
        dpop.headers(&request, &mut again).unwrap();
        let proof = again.get(DPOP_HEADER).unwrap().to_str().unwrap();
        assert_eq!(verify(proof).1["nonce"], "rs-1");
        assert_eq!(
            dpop.response(&request, &answer(&again)),
            HookVerdict::Proceed
        );
        // Without a proof sent, there is nothing to prove again.
        assert_eq!(
            dpop.response(&request, &answer(&HeaderMap::new())),
            HookVerdict::Proceed
        );
        // A nonce on a success is kept too.
        let fresh = headers(&[("dpop-nonce", "rs-2")]);
        let ok = HookResponse {
            status: StatusCode::OK,
            headers: &fresh,
            body: None,
            sent: &again,
        };
        assert_eq!(dpop.response(&request, &ok), HookVerdict::Proceed);
        assert_eq!(
            dpop.nonces.get(ServerRole::Resource, &mcp).as_deref(),
            Some("rs-2")
        );
    }
}
