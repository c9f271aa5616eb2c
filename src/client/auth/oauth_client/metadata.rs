//! Discovery: where the MCP server's authorization server is (protected resource metadata,
//! RFC 9728) and how to talk to it (authorization server metadata, RFC 8414 and OpenID
//! Connect Discovery 1.0).
//!
//! **Protected resource metadata** is looked for at the challenge's `resource_metadata` URL
//! when there is one, then at the path-aware well-known URL
//! (`/.well-known/oauth-protected-resource/<path>`), then at the root one
//! (`/.well-known/oauth-protected-resource`). Its `resource` must be this server: the same
//! origin, and a path that is the server's path or a parent of it on a segment boundary;
//! otherwise it is refused ([`AuthError::ResourceMismatch`]). The `resource` is kept exactly
//! as published (it is what the `resource` parameter of RFC 8707 sends).
//!
//! **Authorization server metadata** is looked for at the URLs the MCP spec lists, in its
//! order ([`authorization_server_metadata_urls`]); the first document found must name the
//! issuer its URL was built from, compared as strings ([`AuthError::IssuerMismatch`]).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/authorization-server-discovery>

use reqwest::Url;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{AuthError, redact_url};
use super::http::{AuthHttp, checked_url, same_origin};

const PRM_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
const OAUTH_WELL_KNOWN: &str = "/.well-known/oauth-authorization-server";
const OPENID_WELL_KNOWN: &str = "/.well-known/openid-configuration";

/// OAuth 2.0 protected resource metadata (RFC 9728): what the MCP server says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier, as published (sent as the `resource` parameter).
    pub resource: String,
    /// The issuer identifiers of the authorization servers that issue tokens for it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes it uses, if it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// OAuth 2.0 authorization server metadata (RFC 8414, or an OpenID Connect provider
/// configuration): the members the MCP flow reads, and every other one in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// Where the user authorizes (authorization-code grant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where tokens are obtained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Where clients register dynamically (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// The scopes it knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// The response types it supports.
    #[serde(default)]
    pub response_types_supported: Vec<String>,
    /// The grant types it supports (`authorization_code` and `implicit` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// How clients may authenticate at the token endpoint (`client_secret_basic` when
    /// absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// The signing algorithms of client assertions at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// The PKCE methods it supports; without `S256` the client refuses to proceed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether it puts `iss` in authorization responses (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// Whether it accepts client ID metadata documents (an `https` URL as `client_id`).
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// The DPoP proof algorithms it accepts (RFC 9449).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AuthorizationServerMetadata {
    /// The metadata of a server known only by its issuer and token endpoint (given by the
    /// application rather than discovered).
    pub(crate) fn with_token_endpoint(issuer: &str, token_endpoint: &str) -> Self {
        Self {
            issuer: issuer.to_owned(),
            authorization_endpoint: None,
            token_endpoint: Some(token_endpoint.to_owned()),
            registration_endpoint: None,
            scopes_supported: None,
            response_types_supported: Vec::new(),
            grant_types_supported: None,
            token_endpoint_auth_methods_supported: None,
            token_endpoint_auth_signing_alg_values_supported: None,
            code_challenge_methods_supported: None,
            authorization_response_iss_parameter_supported: false,
            client_id_metadata_document_supported: false,
            dpop_signing_alg_values_supported: None,
            extra: Map::new(),
        }
    }

    /// Whether it lists `grant_type` in `grant_types_supported` (or lists none, when the
    /// default `authorization_code` is asked about).
    pub fn supports_grant(&self, grant_type: &str) -> bool {
        match &self.grant_types_supported {
            Some(list) => list.iter().any(|g| g == grant_type),
            None => grant_type == "authorization_code",
        }
    }
}

/// The path of `url` without its trailing slash (`""` for the root).
fn trimmed_path(url: &Url) -> &str {
    url.path().trim_end_matches('/')
}

/// `url`'s origin with `path` as its path.
fn at_path(url: &Url, path: &str) -> Url {
    let mut built = url.clone();
    built.set_path(path);
    built.set_query(None);
    built.set_fragment(None);
    built
}

/// The well-known URLs of the protected resource metadata of the MCP server at `server`,
/// in the order they are tried (after the challenge's `resource_metadata`): path-aware, then
/// root. A server at the root has only the root one.
///
/// ```
/// use actix_mcp::client::auth::protected_resource_metadata_urls;
///
/// let server = "https://mcp.example.com/tenant/mcp".parse().unwrap();
/// let urls: Vec<String> = protected_resource_metadata_urls(&server)
///     .iter()
///     .map(|u| u.to_string())
///     .collect();
/// assert_eq!(urls, [
///     "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp",
///     "https://mcp.example.com/.well-known/oauth-protected-resource",
/// ]);
/// ```
pub fn protected_resource_metadata_urls(server: &Url) -> Vec<Url> {
    let path = trimmed_path(server);
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(at_path(server, &format!("{PRM_WELL_KNOWN}{path}")));
    }
    urls.push(at_path(server, PRM_WELL_KNOWN));
    urls
}

/// The URLs of the metadata of the authorization server `issuer`, in the order the MCP spec
/// says to try them. With a path (`https://as.example.com/tenant1`): RFC 8414 path insertion,
/// OpenID path insertion, OpenID path appending. Without one: RFC 8414, then OpenID.
///
/// ```
/// use actix_mcp::client::auth::authorization_server_metadata_urls;
///
/// let issuer = "https://as.example.com/tenant1".parse().unwrap();
/// let urls: Vec<String> = authorization_server_metadata_urls(&issuer)
///     .iter()
///     .map(|u| u.to_string())
///     .collect();
/// assert_eq!(urls, [
///     "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
///     "https://as.example.com/.well-known/openid-configuration/tenant1",
///     "https://as.example.com/tenant1/.well-known/openid-configuration",
/// ]);
/// ```
pub fn authorization_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = trimmed_path(issuer);
    if path.is_empty() {
        return vec![
            at_path(issuer, OAUTH_WELL_KNOWN),
            at_path(issuer, OPENID_WELL_KNOWN),
        ];
    }
    vec![
        at_path(issuer, &format!("{OAUTH_WELL_KNOWN}{path}")),
        at_path(issuer, &format!("{OPENID_WELL_KNOWN}{path}")),
        at_path(issuer, &format!("{path}{OPENID_WELL_KNOWN}")),
    ]
}

/// Whether the protected resource `resource` (as its metadata publishes it) covers the MCP
/// server at `server`: the same origin (scheme and host compared without case, default ports
/// elided), no fragment, and a path equal to the server's or a parent of it on a segment
/// boundary (a trailing slash aside).
///
/// ```
/// use actix_mcp::client::auth::resource_matches;
///
/// let server = "https://mcp.example.com/mcp".parse().unwrap();
/// assert!(resource_matches("https://mcp.example.com/mcp", &server));
/// assert!(resource_matches("https://mcp.example.com", &server));
/// assert!(!resource_matches("https://mcp.example.com/mc", &server));
/// assert!(!resource_matches("https://evil.example.com/mcp", &server));
/// ```
pub fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(parsed) = Url::parse(resource) else {
        return false;
    };
    if parsed.fragment().is_some() || !same_origin(&parsed, server) {
        return false;
    }
    if parsed.query().is_some() && parsed.query() != server.query() {
        return false;
    }
    let resource_path = trimmed_path(&parsed);
    let server_path = trimmed_path(server);
    server_path == resource_path
        || server_path
            .strip_prefix(resource_path)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Finds and checks the protected resource metadata of the MCP server at `server`: at
/// `hinted` (the challenge's `resource_metadata`) first, then at the well-known URLs.
pub(crate) async fn discover_resource(
    http: &AuthHttp,
    server: &Url,
    hinted: Option<&str>,
) -> Result<ProtectedResourceMetadata, AuthError> {
    let mut candidates = Vec::new();
    if let Some(hinted) = hinted {
        candidates.push(checked_url(hinted)?);
    }
    for url in protected_resource_metadata_urls(server) {
        if !candidates.contains(&url) {
            candidates.push(url);
        }
    }
    for url in candidates {
        let Some((metadata, _)) = http
            .get_json::<ProtectedResourceMetadata>(&url, "protected resource metadata")
            .await?
        else {
            continue;
        };
        if !resource_matches(&metadata.resource, server) {
            return Err(AuthError::ResourceMismatch {
                resource: redact_url(&metadata.resource),
                server: redact_url(server.as_str()),
            });
        }
        return Ok(metadata);
    }
    Err(AuthError::NoResourceMetadata {
        server: redact_url(server.as_str()),
    })
}

/// Finds and checks the metadata of the authorization server `issuer` (as the protected
/// resource metadata names it).
pub(crate) async fn discover_server(
    http: &AuthHttp,
    issuer: &str,
) -> Result<AuthorizationServerMetadata, AuthError> {
    let issuer_url = checked_url(issuer)?;
    if issuer_url.query().is_some() {
        return Err(AuthError::InsecureUrl {
            url: issuer.to_owned(),
            reason: "an issuer identifier has no query".into(),
        });
    }
    for url in authorization_server_metadata_urls(&issuer_url) {
        let Some((metadata, _)) = http
            .get_json::<AuthorizationServerMetadata>(&url, "authorization server metadata")
            .await?
        else {
            continue;
        };
        if metadata.issuer != issuer {
            return Err(AuthError::IssuerMismatch {
                expected: issuer.to_owned(),
                found: redact_url(&metadata.issuer),
                url: url.to_string(),
            });
        }
        return Ok(metadata);
    }
    Err(AuthError::NoServerMetadata {
        issuer: issuer.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn a_root_server_has_one_well_known_url() {
        let urls = protected_resource_metadata_urls(&url("https://mcp.example.com/"));
        assert_eq!(urls.len(), 1);
        assert_eq!(
            urls[0].as_str(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn an_issuer_without_path_has_two_metadata_urls() {
        let urls = authorization_server_metadata_urls(&url("https://as.example.com"));
        assert_eq!(
            urls.iter().map(Url::as_str).collect::<Vec<_>>(),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn resources_match_by_origin_and_path_prefix() {
        let server = url("http://localhost:3000/a/mcp");
        assert!(resource_matches("http://localhost:3000/a/mcp/", &server));
        assert!(resource_matches("http://LOCALHOST:3000/a", &server));
        assert!(resource_matches("http://localhost:3000/", &server));
        assert!(!resource_matches("https://localhost:3000/a/mcp", &server));
        assert!(!resource_matches("http://localhost:3001/a/mcp", &server));
        assert!(!resource_matches(
            "http://localhost:3000/a/mcp/more",
            &server
        ));
        assert!(!resource_matches("http://localhost:3000/a/mcp#x", &server));
        assert!(!resource_matches("not a url", &server));
    }
}
