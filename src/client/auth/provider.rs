//! The contract between the HTTP transport and whatever authorizes its requests: before each
//! request the transport asks for its authorization headers; when the server refuses one
//! (`401`, or `403`), it asks whether to send it again. [`OAuth`](super::OAuth) is the
//! implementation this SDK provides.

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};

use crate::client::error::ClientError;

/// One request to the MCP server, as the auth layer sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestTarget {
    /// Its method.
    pub method: Method,
    /// The MCP endpoint's URL.
    pub url: Url,
}

impl RequestTarget {
    /// A request with `method` to `url`.
    pub fn new(method: Method, url: Url) -> Self {
        Self { method, url }
    }
}

/// The server refused a request with `401 Unauthorized` or `403 Forbidden`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Refusal {
    /// The refused request.
    pub target: RequestTarget,
    /// The status (`401` or `403`).
    pub status: StatusCode,
    /// The answer's headers (`WWW-Authenticate`, and for DPoP `DPoP-Nonce`).
    pub headers: HeaderMap,
    /// The authorization headers the request carried (empty when it carried none).
    pub sent: HeaderMap,
    /// How many `401`s this request had before this one.
    pub unauthorized: u32,
    /// How many `403`s this request had before this one.
    pub forbidden: u32,
}

/// What the transport does with a refused request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalAction {
    /// Send it again, with the headers [`AuthProvider::headers`] now gives.
    Retry,
    /// Give the refusal to the caller as it is (an HTTP error).
    Return,
}

/// Authorizes the requests of an HTTP transport; set with
/// [`HttpOptions::auth`](crate::client::transport::HttpOptions::auth).
///
/// The transport bounds the retries of one request whatever the provider answers.
pub trait AuthProvider: Send + Sync + fmt::Debug {
    /// The authorization headers of a request (empty before any authorization).
    ///
    /// # Errors
    /// Fails the request.
    fn headers<'a>(
        &'a self,
        target: &'a RequestTarget,
    ) -> BoxFuture<'a, Result<HeaderMap, ClientError>>;

    /// The server refused a request: whether to send it again, after obtaining whatever the
    /// server asked for.
    ///
    /// # Errors
    /// Fails the request with why authorization could not be obtained.
    fn refused<'a>(
        &'a self,
        refusal: &'a Refusal,
    ) -> BoxFuture<'a, Result<RefusalAction, ClientError>>;

    /// The server answered a request other than with `401` or `403` (those go to
    /// [`refused`](Self::refused)): a chance to read what the answer carries (a DPoP nonce).
    /// The default reads nothing.
    fn answered(&self, target: &RequestTarget, status: StatusCode, headers: &HeaderMap) {
        let _ = (target, status, headers);
    }

    /// The time the provider has spent waiting for the user (an interactive authorization),
    /// in all, since it was made. The client does not count it against its request
    /// timeouts: a call's time limit is extended by the time spent waiting for the user while
    /// the call was pending. The default is zero (a provider that never waits for a user).
    fn interaction_time(&self) -> Duration {
        Duration::ZERO
    }
}
