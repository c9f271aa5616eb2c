//! Why authorizing a client failed: one variant per refusal, so that a caller can tell a
//! misconfigured server from a hostile one (and a test can tell which check fired). A URL in an
//! error is shown without the user credentials it may carry ([`redact_url`]).

/// Why the client could not obtain (or use) an access token. Carried by
/// [`ClientError::Auth`](crate::client::ClientError::Auth).
///
/// Do not depend on the wording of the messages; match on the variants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A URL from the network or the settings is refused before anything is sent to it: not
    /// `https://` (nor `http://` to a loopback host), with user credentials or a fragment, not
    /// a URL at all, or on an address the request may not reach (a loopback, private or
    /// link-local one the MCP server is not on:
    /// [`OAuthBuilder::allow_private_network`](super::OAuthBuilder::allow_private_network)).
    #[error("refused URL {url:?}: {reason}")]
    InsecureUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A metadata document, a registration or a token answer could not be fetched or read
    /// (network error, timeout, over the size limit, not JSON of the right shape).
    #[error("{what}: {reason}")]
    Fetch {
        /// What was being fetched.
        what: String,
        /// Why it failed.
        reason: String,
    },
    /// No protected resource metadata (RFC 9728) was found for the server: neither at the
    /// challenge's `resource_metadata` URL nor at the well-known ones.
    #[error("no protected resource metadata found for {server}")]
    NoResourceMetadata {
        /// The MCP server's URL.
        server: String,
    },
    /// The protected resource metadata describes another resource than the server the client
    /// talks to: its `resource` is neither the server's URL nor a prefix of it on the same
    /// origin.
    #[error("the protected resource metadata is for {resource:?}, not for {server}")]
    ResourceMismatch {
        /// The metadata's `resource`.
        resource: String,
        /// The MCP server's URL.
        server: String,
    },
    /// The protected resource metadata names no authorization server the client may use.
    #[error("the protected resource metadata names no usable authorization server")]
    NoAuthorizationServer,
    /// No authorization server metadata (RFC 8414 or OpenID discovery) was found at any of
    /// the well-known URLs built from the issuer.
    #[error("no authorization server metadata found for issuer {issuer:?}")]
    NoServerMetadata {
        /// The issuer identifier.
        issuer: String,
    },
    /// The authorization server metadata names another issuer than the one its well-known
    /// URL was built from (RFC 8414 section 3.3): it is not used.
    #[error("the metadata at {url} names issuer {found:?}, not {expected:?}")]
    IssuerMismatch {
        /// The issuer the URL was built from.
        expected: String,
        /// The metadata's `issuer`.
        found: String,
        /// Where the metadata came from.
        url: String,
    },
    /// The authorization server does not list `S256` in `code_challenge_methods_supported`:
    /// PKCE cannot be verified, so the client refuses to proceed.
    #[error("the authorization server {issuer:?} does not support PKCE with S256")]
    PkceUnsupported {
        /// The issuer.
        issuer: String,
    },
    /// The authorization server metadata lacks an endpoint the grant needs.
    #[error("the authorization server {issuer:?} has no {endpoint}")]
    MissingEndpoint {
        /// The issuer.
        issuer: String,
        /// The missing metadata field.
        endpoint: &'static str,
    },
    /// The client has no way to identify itself to this authorization server: no
    /// pre-registered credentials for it, no client ID metadata document it accepts, and no
    /// dynamic registration.
    #[error("no client registration for the authorization server {issuer:?}")]
    NoRegistration {
        /// The issuer.
        issuer: String,
    },
    /// Dynamic client registration (RFC 7591) was refused or answered unreadably.
    #[error("client registration at {issuer:?} failed: {reason}")]
    Registration {
        /// The issuer.
        issuer: String,
        /// The server's error, or what was wrong with its answer.
        reason: String,
    },
    /// The authorization response carries an error (the user or the server declined).
    #[error("the authorization server declined: {error}")]
    AccessDenied {
        /// The `error` code.
        error: String,
        /// The `error_description`, when given.
        description: Option<String>,
    },
    /// The authorization response's `state` is missing or is not the request's.
    #[error("the authorization response's state does not match the request's")]
    StateMismatch,
    /// The authorization response's `iss` is not the recorded issuer (RFC 9207; compared as
    /// strings, without URL normalization).
    #[error("the authorization response comes from issuer {found:?}, not {expected:?}")]
    IssMismatch {
        /// The issuer the request went to.
        expected: String,
        /// The response's `iss`.
        found: String,
    },
    /// The authorization response has no `iss`, although the authorization server advertises
    /// `authorization_response_iss_parameter_supported` (RFC 9207).
    #[error("the authorization response has no iss, which issuer {issuer:?} promised")]
    IssMissing {
        /// The issuer.
        issuer: String,
    },
    /// The authorization response (the redirect to the client) cannot be read: no code, a
    /// parameter given twice, not a URL.
    #[error("unreadable authorization response: {0}")]
    InvalidCallback(String),
    /// The token endpoint refused the request (an OAuth error response).
    #[error("the token endpoint answered HTTP {status} {error}")]
    TokenRequest {
        /// The HTTP status.
        status: u16,
        /// The `error` code (or a summary when the body was not an OAuth error).
        error: String,
        /// The `error_description`, when given.
        description: Option<String>,
    },
    /// The application's [`Authorizer`](super::Authorizer) did not complete the interactive
    /// step.
    #[error("authorization was not completed: {0}")]
    Authorizer(String),
    /// The server refused the request again right after the client authorized anew.
    #[error("the server still refuses the request after authorization: {0}")]
    Unauthorized(String),
    /// The server keeps answering `403 insufficient_scope`: the client gave up after the
    /// step-up retry limit.
    #[error("the server still wants scope {scope:?} after {attempts} step-up authorizations")]
    InsufficientScope {
        /// The scope the last challenge asked for.
        scope: String,
        /// How many step-up authorizations were made for the request.
        attempts: u32,
    },
    /// A client assertion or a DPoP proof could not be signed.
    #[error("could not sign a JWT: {0}")]
    Signing(String),
    /// The authorization settings are unusable (a bad redirect URI or client metadata URL).
    #[error("invalid authorization settings: {0}")]
    Config(String),
}

/// `raw` with the user credentials of its URL authority (`user:password@`) replaced by
/// `***@`, for error messages and logs: works on any text, parsable as a URL or not.
pub(crate) fn redact_url(raw: &str) -> String {
    let Some(scheme_end) = raw.find("://") else {
        return raw.to_owned();
    };
    let start = scheme_end + 3;
    let rest = &raw[start..];
    let authority_len = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
    match rest[..authority_len].rfind('@') {
        Some(at) => format!("{}***{}", &raw[..start], &rest[at..]),
        None => raw.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted_from_urls() {
        assert_eq!(
            redact_url("https://alice:pa55@as.example.com/x?y=z@w"),
            "https://***@as.example.com/x?y=z@w"
        );
        assert_eq!(
            redact_url("http://token@[::1]:8080"),
            "http://***@[::1]:8080"
        );
        assert_eq!(redact_url("https://a:b@c@host/"), "https://***@host/");
        assert_eq!(
            redact_url("https://as.example.com/a@b"),
            "https://as.example.com/a@b"
        );
        assert_eq!(redact_url("not a url, user:pw@"), "not a url, user:pw@");
    }
}
