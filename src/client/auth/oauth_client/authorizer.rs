//! The interactive step of the authorization-code flow: sending the user to the
//! authorization URL and getting the redirect back. The application implements
//! [`Authorizer`] (open a browser and listen on the redirect URI, print the URL and read the
//! callback back, ...); [`HeadlessAuthorizer`] does it without a user, for authorization
//! servers that approve at once (tests, the conformance suite).

use std::fmt;
use std::future::Future;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::Url;
use reqwest::header::LOCATION;

use super::error::AuthError;
use super::http::{checked_url, no_redirect_client};
use crate::client::error::ClientError;
use crate::client::error::describe;

/// An authorization request, ready for the user's browser.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthorizationRequest {
    /// The authorization URL to send the user to (with `client_id`, `redirect_uri`,
    /// `state`, the PKCE challenge, `resource` and `scope`).
    pub url: Url,
    /// Where the authorization server sends the user back.
    pub redirect_uri: String,
    /// The `state` the response must carry (checked by the client; given for
    /// applications that route callbacks by state).
    pub state: String,
    /// The issuer of the authorization server.
    pub issuer: String,
    /// The scopes asked for.
    pub scopes: Vec<String>,
}

/// The authorization response: the parameters of the redirect back to the client. `Debug`
/// shows every parameter but the value of `code` (a credential: with the PKCE verifier, it
/// buys a token).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthorizationCallback {
    params: Vec<(String, String)>,
}

impl fmt::Debug for AuthorizationCallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: Vec<(&str, &str)> = self
            .params
            .iter()
            .map(|(name, value)| {
                let value = if name == "code" { ".." } else { value.as_str() };
                (name.as_str(), value)
            })
            .collect();
        f.debug_struct("AuthorizationCallback")
            .field("params", &shown)
            .finish()
    }
}

impl AuthorizationCallback {
    /// The callback from the URL the browser was redirected to (its query parameters).
    ///
    /// # Errors
    /// [`AuthError::InvalidCallback`] when `url` is not a URL.
    pub fn from_redirect_url(url: &str) -> Result<Self, AuthError> {
        let url = Url::parse(url)
            .map_err(|err| AuthError::InvalidCallback(format!("not a URL ({err})")))?;
        Ok(Self::from_query(url.query().unwrap_or_default()))
    }

    /// The callback from a query string (`code=...&state=...&iss=...`).
    pub fn from_query(query: &str) -> Self {
        Self {
            params: url::form_urlencoded::parse(query.trim_start_matches('?').as_bytes())
                .map(|(name, value)| (name.into_owned(), value.into_owned()))
                .collect(),
        }
    }

    /// A callback with `code` and `state` (add `iss` when the redirect had one).
    pub fn new(code: impl Into<String>, state: impl Into<String>) -> Self {
        Self {
            params: vec![("code".into(), code.into()), ("state".into(), state.into())],
        }
    }

    /// The same with the `iss` parameter (RFC 9207).
    #[must_use]
    pub fn iss(mut self, iss: impl Into<String>) -> Self {
        self.params.push(("iss".into(), iss.into()));
        self
    }

    /// The value of `name`: `Ok(None)` when absent.
    ///
    /// # Errors
    /// [`AuthError::InvalidCallback`] when it appears more than once.
    pub fn param(&self, name: &str) -> Result<Option<&str>, AuthError> {
        let mut found = self.params.iter().filter(|(key, _)| key == name);
        let first = found.next().map(|(_, value)| value.as_str());
        if found.next().is_some() {
            return Err(AuthError::InvalidCallback(format!(
                "the parameter {name:?} appears more than once"
            )));
        }
        Ok(first)
    }
}

/// The interactive step: shows the user the authorization URL and returns the authorization
/// response. Implemented by the application; a closure works through [`authorize_with`].
pub trait Authorizer: Send + Sync + fmt::Debug {
    /// Sends the user to `request.url` and waits for the redirect to `request.redirect_uri`.
    ///
    /// # Errors
    /// Any [`ClientError`]; [`AuthError::Authorizer`] is the usual one (the user closed the
    /// browser, the wait timed out).
    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'static, Result<AuthorizationCallback, ClientError>>;
}

/// An [`Authorizer`] made of a closure (see [`authorize_with`]).
pub struct FnAuthorizer<F>(F);

impl<F> fmt::Debug for FnAuthorizer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnAuthorizer")
    }
}

impl<F, Fut> Authorizer for FnAuthorizer<F>
where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<AuthorizationCallback, ClientError>> + Send + 'static,
{
    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'static, Result<AuthorizationCallback, ClientError>> {
        Box::pin((self.0)(request))
    }
}

/// An [`Authorizer`] from a closure that gets the request and returns the callback.
///
/// ```no_run
/// use actix_mcp::client::auth::{AuthError, AuthorizationCallback, authorize_with};
///
/// let authorizer = authorize_with(|request| async move {
///     eprintln!("Open {} and paste the URL you land on:", request.url);
///     let mut line = String::new();
///     std::io::stdin()
///         .read_line(&mut line)
///         .map_err(|err| AuthError::Authorizer(err.to_string()))?;
///     Ok(AuthorizationCallback::from_redirect_url(line.trim())?)
/// });
/// # let _ = authorizer;
/// ```
pub fn authorize_with<F, Fut>(f: F) -> FnAuthorizer<F>
where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<AuthorizationCallback, ClientError>> + Send + 'static,
{
    FnAuthorizer(f)
}

/// An [`Authorizer`] without a user: it fetches the authorization URL itself, without
/// following redirects, and takes the authorization response from the `Location` of the
/// redirect. Works with authorization servers that approve at once (test servers, the
/// conformance suite's); a server that shows a login page fails it.
#[derive(Debug, Clone)]
pub struct HeadlessAuthorizer {
    client: Option<reqwest::Client>,
    timeout: Duration,
}

impl Default for HeadlessAuthorizer {
    fn default() -> Self {
        Self::new()
    }
}

impl HeadlessAuthorizer {
    /// A headless authorizer with a 30 s time limit.
    pub fn new() -> Self {
        Self {
            client: None,
            timeout: Duration::from_secs(30),
        }
    }

    /// The same, sending with `client` (which must not follow redirects).
    #[must_use]
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The same with another time limit.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// Whether `location` is on the redirect URI (same scheme, host, port and path).
fn on_redirect_uri(location: &Url, redirect_uri: &str) -> bool {
    Url::parse(redirect_uri).is_ok_and(|expected| {
        location.scheme() == expected.scheme()
            && location.host_str() == expected.host_str()
            && location.port_or_known_default() == expected.port_or_known_default()
            && location.path() == expected.path()
    })
}

impl Authorizer for HeadlessAuthorizer {
    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'static, Result<AuthorizationCallback, ClientError>> {
        let this = self.clone();
        Box::pin(async move {
            let url = checked_url(request.url.as_str())?;
            let client = match this.client {
                Some(client) => client,
                None => no_redirect_client(this.timeout)?,
            };
            let fail = |why: String| ClientError::Auth(AuthError::Authorizer(why));
            let response = tokio::time::timeout(this.timeout, client.get(url.clone()).send())
                .await
                .map_err(|_| fail(format!("no answer within {:?}", this.timeout)))?
                .map_err(|err| fail(describe(&err)))?;
            let status = response.status();
            if !status.is_redirection() {
                return Err(fail(format!(
                    "the authorization endpoint answered HTTP {status}, not a redirect \
                     (it needs a user)"
                )));
            }
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|location| url.join(location).ok())
                .ok_or_else(|| fail("the redirect has no usable Location".into()))?;
            if !on_redirect_uri(&location, &request.redirect_uri) {
                return Err(fail(format!(
                    "the authorization endpoint redirected to {location}, not to the redirect URI"
                )));
            }
            Ok(AuthorizationCallback::from_redirect_url(location.as_str())?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callbacks_refuse_repeated_parameters() {
        let callback = AuthorizationCallback::from_query("code=a&state=s&iss=https%3A%2F%2Fx");
        assert_eq!(callback.param("iss").ok().flatten(), Some("https://x"));
        assert_eq!(callback.param("error").ok().flatten(), None);
        let twice = AuthorizationCallback::from_query("?code=a&code=b");
        assert!(twice.param("code").is_err());
    }

    #[test]
    fn debug_shows_no_code() {
        let callback =
            AuthorizationCallback::new("the-secret-code", "s1").iss("https://as.example");
        let shown = format!("{callback:?}");
        assert!(!shown.contains("the-secret-code"), "{shown}");
        assert!(
            shown.contains("code") && shown.contains("https://as.example"),
            "{shown}"
        );
        let repeated = AuthorizationCallback::from_query("code=one&code=two&error=x");
        let shown = format!("{repeated:?}");
        assert!(!shown.contains("one") && !shown.contains("two"), "{shown}");
        assert!(shown.contains("error"), "{shown}");
    }
}
