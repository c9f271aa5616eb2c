//! The HTTP side of authorization: which URLs the client will contact, and the one way every
//! authorization request goes out.
//!
//! Every URL that comes from the network (a `resource_metadata` link, an authorization
//! server, an endpoint in its metadata, a redirect) or from the settings is checked before
//! anything is sent to it ([`checked_url`]): `https://`, or `http://` to a loopback host
//! (`localhost`, `127.0.0.0/8`, `::1`), with neither user credentials nor a fragment. The
//! addresses it leads to are checked too (`network` module): loopback, private and link-local
//! ones only where the MCP server is on one itself, by a resolver inside the flow's own HTTP
//! client, so that a connection goes only to the addresses checked.
//! Metadata `GET`s follow at most a few redirects, and only on the same origin; `POST`s
//! (registration, token) follow none. Every answer is read within a time limit and up to a
//! size limit.
//!
//! [`AuthHttp::send`] is the single function through which every request to an
//! authorization server's endpoints (registration, token) leaves, and it runs the
//! [`RequestHook`], as does [`OAuth`](super::OAuth) for every request to the MCP server: the
//! seam where DPoP proofs (RFC 9449) are added and server nonces picked up.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use reqwest::dns::Resolve;
use reqwest::header::{self, HeaderMap, HeaderValue, LOCATION};
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;

use super::error::{AuthError, redact_url};
use super::metadata::AuthorizationServerMetadata;
use super::network::{Network, Reach, Refused, refusal_in};
use super::token::Token;
use crate::client::error::{ClientError, describe};

/// Default time limit of one authorization request (headers and body).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default size limit of one authorization answer.
pub(crate) const DEFAULT_MAX_BODY: usize = 1024 * 1024;
/// Same-origin redirects a metadata `GET` follows.
const MAX_REDIRECTS: usize = 3;

/// What kind of request is going out, for a [`RequestHook`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestKind {
    /// A request to the MCP server (the protected resource), carrying the access token.
    Resource,
    /// A request to an authorization server's token endpoint.
    Token,
    /// A dynamic client registration request.
    Registration,
}

/// One outgoing request, as a [`RequestHook`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct HookRequest<'a> {
    /// What the request is.
    pub kind: RequestKind,
    /// Its method.
    pub method: &'a Method,
    /// Its URL.
    pub url: &'a Url,
    /// The access token it carries (requests to the MCP server).
    pub token: Option<&'a Token>,
    /// The metadata of the server it goes to (requests to an authorization server, or to the
    /// identity provider of an enterprise grant).
    pub server: Option<&'a AuthorizationServerMetadata>,
}

/// The answer to a request, as a [`RequestHook`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct HookResponse<'a> {
    /// Its status.
    pub status: StatusCode,
    /// Its headers.
    pub headers: &'a HeaderMap,
    /// Its body, for answers from an authorization server (read whole before the hook sees
    /// them); `None` for answers from the MCP server.
    pub body: Option<&'a [u8]>,
    /// The headers the request carried, the hook's included (for the MCP server: the
    /// authorization headers only).
    pub sent: &'a HeaderMap,
}

/// What a [`RequestHook`] makes of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookVerdict {
    /// Nothing to do.
    Proceed,
    /// Send the request once more, with headers the hook computes afresh (a DPoP nonce came).
    Retry,
}

/// Adds headers to every request to the MCP server and to an authorization server's
/// endpoints, and reads every answer to them: the seam for proof-of-possession schemes
/// (DPoP, RFC 9449), which sign each request and learn server nonces from the answers.
///
/// Set with [`OAuthBuilder::request_hook`](super::OAuthBuilder::request_hook). DPoP itself is
/// built in ([`OAuthBuilder::dpop`](super::OAuthBuilder::dpop)); a hook set beside it runs after
/// it.
pub trait RequestHook: Send + Sync + fmt::Debug {
    /// The extra headers of `request` (added to, or replacing, the ones already in
    /// `headers`).
    ///
    /// # Errors
    /// Fails the request (a proof could not be made).
    fn headers(
        &self,
        request: &HookRequest<'_>,
        headers: &mut HeaderMap,
    ) -> Result<(), ClientError>;

    /// Reads the answer to `request`; [`HookVerdict::Retry`] sends it once more (heeded for
    /// an authorization server's answers, and for the MCP server's `401` and `403`; every
    /// other answer of the MCP server is shown too, for what it carries). The default reads
    /// nothing.
    fn response(&self, request: &HookRequest<'_>, response: &HookResponse<'_>) -> HookVerdict {
        let _ = (request, response);
        HookVerdict::Proceed
    }
}

/// Whether `host` is a loopback host (plain `http://` is allowed there).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => {
            name.eq_ignore_ascii_case("localhost")
                || name.to_ascii_lowercase().ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// `raw` as a URL the client may contact: `https://`, or `http://` to a loopback host;
/// no user credentials, no fragment. (Which addresses a request to it may then reach is
/// checked when it is sent: see
/// [`OAuthBuilder::allow_private_network`](super::OAuthBuilder::allow_private_network).)
///
/// # Errors
/// [`AuthError::InsecureUrl`] saying why not.
pub fn checked_url(raw: &str) -> Result<Url, AuthError> {
    let refuse = |reason: &str| AuthError::InsecureUrl {
        url: redact_url(raw),
        reason: reason.to_owned(),
    };
    let url = Url::parse(raw).map_err(|err| refuse(&format!("not a URL ({err})")))?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        "http" => return Err(refuse("plain http is allowed only to a loopback host")),
        _ => return Err(refuse("not an https URL")),
    }
    if url.host().is_none() {
        return Err(refuse("no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("carries user credentials"));
    }
    if url.fragment().is_some() {
        return Err(refuse("has a fragment"));
    }
    Ok(url)
}

/// Whether `a` and `b` have the same origin (scheme, host, port).
pub(crate) fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str().map(str::to_ascii_lowercase) == b.host_str().map(str::to_ascii_lowercase)
        && a.port_or_known_default() == b.port_or_known_default()
}

/// An answer, read whole.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Answer {
    /// The body as JSON of type `T`. The error says where the body broke, not what it held
    /// (serde's messages may quote values, and a token response holds secrets).
    pub(crate) fn json<T: DeserializeOwned>(&self, what: &str) -> Result<T, AuthError> {
        serde_json::from_slice(&self.body).map_err(|err| AuthError::Fetch {
            what: what.to_owned(),
            reason: format!(
                "unreadable JSON ({:?} error at line {}, column {})",
                err.classify(),
                err.line(),
                err.column()
            ),
        })
    }
}

/// The HTTP client of the authorization flow, with its limits, hooks and address policy
/// (`network` module). A flow works with the view [`for_server`](Self::for_server) gives for its
/// MCP server, which reaches only what that server may lead to.
#[derive(Clone)]
pub(crate) struct AuthHttp {
    clients: Arc<Clients>,
    network: Arc<Network>,
    /// What this view's requests may reach.
    reach: Reach,
    /// The client of this view: the application's, or the built-in one of `reach`.
    client: reqwest::Client,
    timeout: Duration,
    max_body: usize,
    hooks: Vec<Arc<dyn RequestHook>>,
}

/// The HTTP clients of the flow: the application's, or one built per [`Reach`], whose
/// resolver checks every address it answers.
struct Clients {
    given: Option<reqwest::Client>,
    built: Mutex<HashMap<Reach, reqwest::Client>>,
    timeout: Duration,
}

impl fmt::Debug for AuthHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthHttp")
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .field("network", &self.network)
            .field("reach", &self.reach)
            .field("hooks", &self.hooks)
            .finish()
    }
}

/// Builds a client that follows no redirects (the flow decides which to follow).
pub(crate) fn no_redirect_client(timeout: Duration) -> Result<reqwest::Client, AuthError> {
    resolving_client(timeout, None)
}

/// The same, resolving host names with `resolver` when given.
fn resolving_client(
    timeout: Duration,
    resolver: Option<Arc<dyn Resolve>>,
) -> Result<reqwest::Client, AuthError> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(timeout)
        .timeout(timeout);
    if let Some(resolver) = resolver {
        builder = builder.dns_resolver(resolver);
    }
    builder
        .build()
        .map_err(|err| AuthError::Config(format!("could not build the HTTP client: {err}")))
}

/// A DNS resolver given by the application ([`OAuthBuilder::dns_resolver`](super::OAuthBuilder::dns_resolver)).
#[derive(Clone)]
pub(crate) struct Resolver(pub(crate) Arc<dyn Resolve>);

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Resolver(..)")
    }
}

impl Clients {
    /// The client whose requests may reach `reach`.
    fn get(&self, network: &Arc<Network>, reach: Reach) -> Result<reqwest::Client, AuthError> {
        if let Some(client) = &self.given {
            return Ok(client.clone());
        }
        let mut built = self
            .built
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(client) = built.get(&reach) {
            return Ok(client.clone());
        }
        let client = resolving_client(self.timeout, Some(network.checking_resolver(reach)))?;
        built.insert(reach, client.clone());
        Ok(client)
    }
}

impl AuthHttp {
    /// The flow's HTTP side: `given` (the application's client) or built-in clients, with the
    /// address policy `network`; this view reaches public addresses only.
    pub(crate) fn new(
        given: Option<reqwest::Client>,
        network: Network,
        timeout: Duration,
        max_body: usize,
        hooks: Vec<Arc<dyn RequestHook>>,
    ) -> Result<Self, AuthError> {
        let clients = Arc::new(Clients {
            given,
            built: Mutex::default(),
            timeout,
        });
        let network = Arc::new(network);
        let client = clients.get(&network, Reach::PUBLIC)?;
        Ok(Self {
            clients,
            network,
            reach: Reach::PUBLIC,
            client,
            timeout,
            max_body,
            hooks,
        })
    }

    /// The view for the requests of a flow for the server at `server` (the MCP server, or an
    /// identity provider the application named): they may reach public addresses and those
    /// of the classes the server is on.
    ///
    /// # Errors
    /// [`AuthError::Config`] when an HTTP client cannot be built.
    pub(crate) async fn for_server(&self, server: &Url) -> Result<Self, AuthError> {
        let reach = self.network.reach_of(server).await;
        let client = self.clients.get(&self.network, reach)?;
        Ok(Self {
            reach,
            client,
            ..self.clone()
        })
    }

    /// Checks the address of `url` before a request to it: a literal one always; a host name
    /// only where the connection does not resolve it through the checking resolver (a proxy,
    /// the application's client).
    async fn check_target(&self, url: &Url) -> Result<(), AuthError> {
        let refuse = |refused: Refused| AuthError::InsecureUrl {
            url: url.to_string(),
            reason: refused.to_string(),
        };
        self.network
            .check_literal(self.reach, url)
            .map_err(refuse)?;
        let given = self.clients.given.is_some();
        if given || self.network.proxied() {
            // The application's client resolves names itself: a name that does not resolve
            // here is refused. Through a proxy, which may resolve what this host cannot, it
            // goes to the proxy.
            let unresolved_passes = !given;
            self.network
                .check_name(self.reach, url, unresolved_passes)
                .await
                .map_err(refuse)?;
        }
        Ok(())
    }

    /// The request hooks, in the order they run.
    pub(crate) fn hooks(&self) -> &[Arc<dyn RequestHook>] {
        &self.hooks
    }

    /// Runs every hook's [`RequestHook::response`]: [`HookVerdict::Retry`] when one asks for
    /// it (each sees the answer).
    pub(crate) fn hook_verdict(
        &self,
        request: &HookRequest<'_>,
        response: &HookResponse<'_>,
    ) -> HookVerdict {
        let mut verdict = HookVerdict::Proceed;
        for hook in &self.hooks {
            if hook.response(request, response) == HookVerdict::Retry {
                verdict = HookVerdict::Retry;
            }
        }
        verdict
    }

    /// Sends one request and reads its answer whole, within the limits.
    async fn exchange(
        &self,
        method: Method,
        url: &Url,
        headers: HeaderMap,
        body: Option<Bytes>,
        what: &str,
    ) -> Result<Answer, AuthError> {
        let fail = |reason: String| AuthError::Fetch {
            what: what.to_owned(),
            reason,
        };
        // A refusal of the checking resolver comes back wrapped in the client's error.
        let failed = |err: reqwest::Error| match refusal_in(&err) {
            Some(refused) => AuthError::InsecureUrl {
                url: url.to_string(),
                reason: refused.to_string(),
            },
            None => fail(describe(&err)),
        };
        let mut request = self
            .client
            .request(method, url.clone())
            .headers(headers)
            .timeout(self.timeout);
        if let Some(body) = body {
            request = request.body(body);
        }
        let send = async {
            self.check_target(url).await?;
            let mut response = request.send().await.map_err(failed)?;
            if response
                .content_length()
                .is_some_and(|length| length > self.max_body as u64)
            {
                return Err(fail(format!("the answer is over {} bytes", self.max_body)));
            }
            let status = response.status();
            let headers = response.headers().clone();
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|err| fail(describe(&err)))? {
                if body.len() + chunk.len() > self.max_body {
                    return Err(fail(format!("the answer is over {} bytes", self.max_body)));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Answer {
                status,
                headers,
                body: Bytes::from(body),
            })
        };
        tokio::time::timeout(self.timeout, send)
            .await
            .map_err(|_| fail(format!("no answer within {:?}", self.timeout)))?
    }

    /// `GET`s a JSON document, following same-origin redirects. `Ok(None)` when the server
    /// has none there (any `4xx`).
    ///
    /// # Errors
    /// [`AuthError::Fetch`] on a network error, a `5xx`, an unreadable body, or a redirect
    /// elsewhere; [`AuthError::InsecureUrl`] for a redirect to a refused URL.
    pub(crate) async fn get_json<T: DeserializeOwned>(
        &self,
        url: &Url,
        what: &str,
    ) -> Result<Option<(T, Url)>, AuthError> {
        let mut url = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
            let answer = self
                .exchange(Method::GET, &url, headers, None, what)
                .await?;
            let status = answer.status;
            if status.is_redirection() {
                let next = answer
                    .headers
                    .get(LOCATION)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|location| url.join(location).ok())
                    .ok_or_else(|| AuthError::Fetch {
                        what: what.to_owned(),
                        reason: format!("HTTP {status} without a usable Location"),
                    })?;
                let next = checked_url(next.as_str())?;
                if !same_origin(&url, &next) {
                    return Err(AuthError::Fetch {
                        what: what.to_owned(),
                        reason: format!("redirected to another origin ({next})"),
                    });
                }
                url = next;
                continue;
            }
            if status.is_client_error() {
                tracing::debug!(%url, %status, "no {what} here");
                return Ok(None);
            }
            if !status.is_success() {
                return Err(AuthError::Fetch {
                    what: what.to_owned(),
                    reason: format!("HTTP {status} from {url}"),
                });
            }
            return answer.json(what).map(|value| Some((value, url)));
        }
        Err(AuthError::Fetch {
            what: what.to_owned(),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// Sends a request to an authorization server's endpoint: the one way such requests
    /// leave. `build` makes the request's headers and body, afresh for each attempt (a client
    /// assertion is never sent twice); the [`RequestHook`]s add their headers, read the answer,
    /// and may have the request sent once more. Redirects are not followed.
    ///
    /// # Errors
    /// [`AuthError::Fetch`] when no answer could be read; any error of `build` or a hook.
    pub(crate) async fn send(
        &self,
        kind: RequestKind,
        url: &Url,
        server: Option<&AuthorizationServerMetadata>,
        what: &str,
        build: impl Fn() -> Result<(HeaderMap, Bytes), ClientError>,
    ) -> Result<Answer, ClientError> {
        let method = Method::POST;
        let request = HookRequest {
            kind,
            method: &method,
            url,
            token: None,
            server,
        };
        let mut retried = false;
        loop {
            let (mut headers, body) = build()?;
            for hook in &self.hooks {
                hook.headers(&request, &mut headers)?;
            }
            let answer = self
                .exchange(method.clone(), url, headers.clone(), Some(body), what)
                .await?;
            let response = HookResponse {
                status: answer.status,
                headers: &answer.headers,
                body: Some(&answer.body),
                sent: &headers,
            };
            if self.hook_verdict(&request, &response) == HookVerdict::Retry && !retried {
                retried = true;
                continue;
            }
            return Ok(answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_is_contacted() {
        assert!(checked_url("https://as.example.com/x").is_ok());
        assert!(checked_url("http://localhost:8080/x").is_ok());
        assert!(checked_url("http://127.0.0.2/x").is_ok());
        assert!(checked_url("http://[::1]:9/x").is_ok());
        assert!(checked_url("http://as.example.com/x").is_err());
        assert!(checked_url("ftp://as.example.com/x").is_err());
        assert!(checked_url("https://user:pw@as.example.com/").is_err());
        assert!(checked_url("https://as.example.com/#frag").is_err());
        assert!(checked_url("not a url").is_err());
    }

    #[test]
    fn refused_urls_are_shown_without_their_credentials() {
        for raw in [
            "https://alice:pa55word@as.example.com/x",
            "http://alice:pa55word@as.example.com/x",
            "ftp://alice:pa55word@as.example.com/x",
        ] {
            let shown = checked_url(raw).map_err(|err| err.to_string()).err();
            assert!(
                shown
                    .as_deref()
                    .is_some_and(|s| !s.contains("pa55word") && !s.contains("alice")),
                "{shown:?}"
            );
        }
    }
}
