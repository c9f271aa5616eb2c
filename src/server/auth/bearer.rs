//! [`BearerAuth`]: how an HTTP endpoint is protected: its resource identifier, its validator,
//! its protected resource metadata (RFC 9728), and the `WWW-Authenticate` challenges it
//! answers with (RFC 6750 §3).

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};
use url::Url;

use super::scope_token::is_scope_token;
use super::{AuthConfigError, AuthError, Identity, TokenValidator, fetch};

/// The well-known path prefix of protected resource metadata (RFC 9728 §3).
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Metadata fields the server fills in itself.
const RESERVED: [&str; 4] = [
    "resource",
    "authorization_servers",
    "scopes_supported",
    "bearer_methods_supported",
];

/// Bearer-token protection of a Streamable HTTP endpoint: the resource it protects, the
/// [`TokenValidator`] that checks tokens, and the protected resource metadata it publishes.
/// Give it to [`McpHttp::bearer_auth`](crate::transport::http::McpHttp::bearer_auth); see the
/// [module docs](crate::server::auth) for what the endpoint then answers. Cheap to clone.
///
/// ```
/// use actix_mcp::server::auth::{BearerAuth, JwtValidator};
///
/// let validator = JwtValidator::builder("https://auth.example.com/jwks")
///     .issuer("https://auth.example.com")
///     .audience("https://mcp.example.com/mcp")
///     .build()?;
/// let auth = BearerAuth::builder("https://mcp.example.com/mcp", validator)
///     .authorization_server("https://auth.example.com")
///     .metadata("resource_name", "Example MCP server")
///     .build()?;
/// assert_eq!(
///     auth.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// # Ok::<(), actix_mcp::server::auth::AuthConfigError>(())
/// ```
#[derive(Clone)]
pub struct BearerAuth {
    inner: Arc<BearerInner>,
}

struct BearerInner {
    validator: Arc<dyn TokenValidator>,
    resource: String,
    metadata_url: String,
    metadata_path: String,
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
    extra: Map<String, Value>,
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.inner.resource)
            .field("metadata_url", &self.inner.metadata_url)
            .field("authorization_servers", &self.inner.authorization_servers)
            .finish_non_exhaustive()
    }
}

/// Builds a [`BearerAuth`]; see [`BearerAuth::builder`].
#[must_use]
pub struct BearerAuthBuilder {
    resource: String,
    validator: Arc<dyn TokenValidator>,
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
    extra: Map<String, Value>,
    metadata_url: Option<String>,
}

impl fmt::Debug for BearerAuthBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuthBuilder")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .finish_non_exhaustive()
    }
}

/// The protected resource metadata URL of `resource`: the well-known prefix inserted between
/// its host and its path (RFC 9728 §3.1).
fn metadata_url_of(resource: &Url) -> String {
    let mut origin = resource.origin().ascii_serialization();
    origin.push_str(WELL_KNOWN);
    let path = resource.path().trim_end_matches('/');
    origin.push_str(path);
    origin
}

impl BearerAuth {
    /// Starts protecting the resource identified by `resource` (this endpoint's canonical
    /// URL, e.g. `https://mcp.example.com/mcp`: what clients send as the RFC 8707 `resource`
    /// parameter, and the audience tokens must carry) with `validator`. At least one
    /// authorization server is required.
    pub fn builder(
        resource: impl Into<String>,
        validator: impl TokenValidator,
    ) -> BearerAuthBuilder {
        BearerAuthBuilder {
            resource: resource.into(),
            validator: Arc::new(validator),
            authorization_servers: Vec::new(),
            scopes_supported: None,
            extra: Map::new(),
            metadata_url: None,
        }
    }

    /// The resource identifier (the metadata's `resource`).
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The URL of the protected resource metadata, as `WWW-Authenticate` challenges name it.
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The path of [`metadata_url`](Self::metadata_url) (one of the paths the metadata is
    /// served at).
    pub(crate) fn metadata_path(&self) -> &str {
        &self.inner.metadata_path
    }

    /// Validates a token with the configured validator, then refuses an identity the endpoint
    /// cannot use, whatever the validator (see [`Identity::check_usable`]).
    pub(crate) async fn validate(&self, token: &str) -> Result<Identity, AuthError> {
        let identity = self.inner.validator.validate(token).await?;
        identity.check_usable()?;
        Ok(identity)
    }

    /// The protected resource metadata document; `server_scopes` gives the default
    /// `scopes_supported` (every scope the server names) when none was set.
    pub(crate) fn metadata(&self, server_scopes: impl FnOnce() -> Vec<String>) -> Value {
        let inner = &self.inner;
        let mut document = Map::new();
        document.insert("resource".into(), Value::String(inner.resource.clone()));
        document.insert(
            "authorization_servers".into(),
            Value::from(inner.authorization_servers.clone()),
        );
        let scopes = match &inner.scopes_supported {
            Some(scopes) => scopes.clone(),
            None => server_scopes(),
        };
        if !scopes.is_empty() {
            document.insert("scopes_supported".into(), Value::from(scopes));
        }
        document.insert(
            "bearer_methods_supported".into(),
            Value::from(vec!["header"]),
        );
        for (key, value) in &inner.extra {
            document.insert(key.clone(), value.clone());
        }
        Value::Object(document)
    }

    /// A `WWW-Authenticate` value: `Bearer` with the error (if any), its description, the
    /// scopes needed (if any) and the metadata URL.
    pub(crate) fn challenge(&self, challenge: &Challenge<'_>, scopes: &[String]) -> String {
        let mut value = String::from("Bearer ");
        let (error, description) = match challenge {
            Challenge::Missing => (None, None),
            Challenge::InvalidToken(description) => (Some("invalid_token"), Some(*description)),
            Challenge::InsufficientScope(description) => {
                (Some("insufficient_scope"), Some(*description))
            }
        };
        if let Some(error) = error {
            value.push_str(&format!("error=\"{error}\", "));
        }
        if let Some(description) = description {
            value.push_str(&format!(
                "error_description=\"{}\", ",
                quoted_text(description)
            ));
        }
        let scopes: Vec<&str> = scopes
            .iter()
            .map(String::as_str)
            .filter(|s| is_scope_token(s))
            .collect();
        if !scopes.is_empty() {
            value.push_str(&format!("scope=\"{}\", ", scopes.join(" ")));
        }
        value.push_str(&format!(
            "resource_metadata=\"{}\"",
            quoted_text(&self.inner.metadata_url)
        ));
        value
    }
}

/// What a challenge says went wrong.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Challenge<'a> {
    /// No credentials: no error code (RFC 6750 §3.1).
    Missing,
    /// `invalid_token`, with a description.
    InvalidToken(&'a str),
    /// `insufficient_scope`, with a description.
    InsufficientScope(&'a str),
}

/// `text` restricted to what RFC 6750 allows inside its quoted values
/// (`%x20-21 / %x23-5B / %x5D-7E`): quotes become apostrophes, anything else a `?`.
fn quoted_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' => '\'',
            '\\' => '/',
            ' '..='~' => c,
            _ => '?',
        })
        .collect()
}

impl BearerAuthBuilder {
    /// An authorization server clients may get tokens from (its issuer URL), listed in the
    /// metadata's `authorization_servers`. At least one is required; call again for more.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The metadata's `scopes_supported` (default: every scope the server requires: its base
    /// set and those of its tools, prompts and resources, as registered when the metadata is
    /// fetched; omitted when there are none).
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// An extra metadata field (`resource_name`, `resource_documentation`,
    /// `resource_policy_uri`, ...). The fields the server fills in (`resource`,
    /// `authorization_servers`, `scopes_supported`, `bearer_methods_supported`) are refused by
    /// [`build`](Self::build).
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }

    /// The URL challenges name for the metadata (default: derived from the resource, e.g.
    /// `https://mcp.example.com/.well-known/oauth-protected-resource/mcp`). Set it when a
    /// proxy publishes the metadata elsewhere. The endpoint serves the metadata at this URL's
    /// path too.
    pub fn metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// Checks the settings and builds the protection.
    ///
    /// # Errors
    /// A resource that is not an absolute `http(s)` URL without a fragment, no authorization
    /// server or an invalid one, an invalid scope, a reserved metadata field, an invalid
    /// metadata URL.
    pub fn build(self) -> Result<BearerAuth, AuthConfigError> {
        let invalid = |what: &'static str, url: &str, reason: &str| AuthConfigError::InvalidUrl {
            what,
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let resource = Url::parse(&self.resource)
            .map_err(|err| invalid("resource", &self.resource, &err.to_string()))?;
        if !matches!(resource.scheme(), "http" | "https") || resource.host_str().is_none() {
            return Err(invalid(
                "resource",
                &self.resource,
                "it must be an absolute http(s) URL",
            ));
        }
        if resource.fragment().is_some() {
            return Err(invalid(
                "resource",
                &self.resource,
                "a resource identifier has no fragment",
            ));
        }
        if self.authorization_servers.is_empty() {
            return Err(AuthConfigError::MissingAuthorizationServer);
        }
        for server in &self.authorization_servers {
            fetch::parse_url("authorization server", server, false)?;
        }
        if let Some(scopes) = &self.scopes_supported
            && let Some(bad) = scopes.iter().find(|s| !is_scope_token(s))
        {
            return Err(AuthConfigError::InvalidScope(bad.clone()));
        }
        if let Some(key) = self.extra.keys().find(|k| RESERVED.contains(&k.as_str())) {
            return Err(AuthConfigError::ReservedMetadata(key.clone()));
        }
        let metadata_url = match self.metadata_url {
            Some(raw) => {
                let url = Url::parse(&raw)
                    .map_err(|err| invalid("metadata URL", &raw, &err.to_string()))?;
                if !matches!(url.scheme(), "http" | "https") {
                    return Err(invalid("metadata URL", &raw, "it must be an http(s) URL"));
                }
                url.to_string()
            }
            None => metadata_url_of(&resource),
        };
        let metadata_path = Url::parse(&metadata_url)
            .map(|url| url.path().to_owned())
            .unwrap_or_else(|_| WELL_KNOWN.to_owned());
        Ok(BearerAuth {
            inner: Arc::new(BearerInner {
                validator: self.validator,
                // As given: clients compare it with the URL they connect to.
                resource: self.resource,
                metadata_url,
                metadata_path,
                authorization_servers: self.authorization_servers,
                scopes_supported: self.scopes_supported,
                extra: self.extra,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::future::BoxFuture;

    struct Nobody;

    impl TokenValidator for Nobody {
        fn validate<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Identity, AuthError>> {
            Box::pin(async { Err(AuthError::invalid_token("no")) })
        }
    }

    fn auth(resource: &str) -> Result<BearerAuth, AuthConfigError> {
        BearerAuth::builder(resource, Nobody)
            .authorization_server("https://as.example.com")
            .build()
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_prefix_before_the_path() {
        let url = |r: &str| auth(r).map(|a| a.metadata_url().to_owned());
        assert_eq!(
            url("https://mcp.example.com/public/mcp"),
            Ok("https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp".into())
        );
        assert_eq!(
            url("https://mcp.example.com"),
            Ok("https://mcp.example.com/.well-known/oauth-protected-resource".into())
        );
        assert_eq!(
            url("http://127.0.0.1:8080/mcp/"),
            Ok("http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp".into())
        );
    }

    #[test]
    fn unusable_settings_are_refused_with_what_is_wrong() {
        assert!(matches!(
            auth("mcp.example.com/mcp"),
            Err(AuthConfigError::InvalidUrl { .. })
        ));
        assert!(matches!(
            auth("https://mcp.example.com/mcp#x"),
            Err(AuthConfigError::InvalidUrl { .. })
        ));
        assert_eq!(
            BearerAuth::builder("https://mcp.example.com/mcp", Nobody)
                .build()
                .err(),
            Some(AuthConfigError::MissingAuthorizationServer)
        );
        assert_eq!(
            BearerAuth::builder("https://mcp.example.com/mcp", Nobody)
                .authorization_server("https://as.example.com")
                .metadata("resource", "x")
                .build()
                .err(),
            Some(AuthConfigError::ReservedMetadata("resource".into()))
        );
        assert_eq!(
            BearerAuth::builder("https://mcp.example.com/mcp", Nobody)
                .authorization_server("https://as.example.com")
                .scopes_supported(["a b"])
                .build()
                .err(),
            Some(AuthConfigError::InvalidScope("a b".into()))
        );
    }

    #[test]
    fn challenges_quote_safely() {
        let auth = auth("https://mcp.example.com/mcp").unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(
            auth.challenge(&Challenge::Missing, &["a".into(), "b".into()]),
            "Bearer scope=\"a b\", resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""
        );
        assert_eq!(
            auth.challenge(&Challenge::InvalidToken("bad \"x\"\n\\"), &[]),
            "Bearer error=\"invalid_token\", error_description=\"bad 'x'?/\", resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""
        );
    }
}
