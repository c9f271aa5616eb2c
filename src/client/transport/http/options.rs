//! The settings of an [`HttpTransport`](super::HttpTransport) and the limits derived from them.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::client::auth::AuthProvider;

/// Default longest message accepted from the server: 4 MiB.
pub(super) const DEFAULT_MAX_MESSAGE: usize = 4 * 1024 * 1024;
/// The wait before reconnecting when the server advised no `retry`, and the first backoff step.
pub(super) const DEFAULT_RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// The longest backoff step.
pub(super) const DEFAULT_MAX_RECONNECT_DELAY: Duration = Duration::from_secs(30);
/// Reconnections in a row that bring nothing new before a stream is given up.
pub(super) const DEFAULT_RECONNECT_ATTEMPTS: u32 = 5;
/// How long establishing a TCP (and TLS) connection may take.
pub(super) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one request may wait for the server's response headers.
pub(super) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Settings of an [`HttpTransport`](super::HttpTransport). Start from [`HttpOptions::default`] and chain the
/// setters. Default values are not part of semver.
#[derive(Clone)]
pub struct HttpOptions {
    pub(super) headers: HeaderMap,
    pub(super) invalid_header: Option<String>,
    pub(super) connect_timeout: Duration,
    pub(super) request_timeout: Duration,
    pub(super) max_message_size: usize,
    pub(super) reconnect_attempts: u32,
    pub(super) reconnect_initial_delay: Duration,
    pub(super) reconnect_max_delay: Duration,
    pub(super) get_stream: bool,
    pub(super) client: Option<reqwest::Client>,
    pub(super) auth: Option<Arc<dyn AuthProvider>>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            headers: HeaderMap::new(),
            invalid_header: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_message_size: DEFAULT_MAX_MESSAGE,
            reconnect_attempts: DEFAULT_RECONNECT_ATTEMPTS,
            reconnect_initial_delay: DEFAULT_RECONNECT_DELAY,
            reconnect_max_delay: DEFAULT_MAX_RECONNECT_DELAY,
            get_stream: true,
            client: None,
            auth: None,
        }
    }
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may be credentials: only their names are shown.
        let names: Vec<&str> = self.headers.keys().map(HeaderName::as_str).collect();
        f.debug_struct("HttpOptions")
            .field("headers", &names)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_message_size", &self.max_message_size)
            .field("reconnect_attempts", &self.reconnect_attempts)
            .field("reconnect_initial_delay", &self.reconnect_initial_delay)
            .field("reconnect_max_delay", &self.reconnect_max_delay)
            .field("get_stream", &self.get_stream)
            .field("custom_client", &self.client.is_some())
            .field("auth", &self.auth)
            .finish()
    }
}

impl HttpOptions {
    /// Adds a header to every request (`Authorization`, for example); call it once per header.
    /// The same name twice sends both values. The transport's own headers (`Accept`,
    /// `Content-Type`, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`) replace
    /// custom ones of the same name. A name or value that is not a valid HTTP header fails
    /// [`connect`](crate::client::transport::Connect::connect) with
    /// [`ClientError::Transport`](crate::client::ClientError::Transport).
    #[must_use]
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let (name, value) = (name.as_ref(), value.as_ref());
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(name), Ok(mut value)) => {
                value.set_sensitive(true);
                self.headers.append(name, value);
            }
            _ => {
                self.invalid_header
                    .get_or_insert_with(|| format!("invalid HTTP header {name:?}"));
            }
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request: a token the application
    /// holds already (an API token, one it refreshes itself). A server that refuses it fails
    /// the call with its 401 or 403; to obtain and refresh tokens with OAuth, give the
    /// transport an [`AuthProvider`] instead.
    #[must_use]
    pub fn bearer_token(self, token: impl AsRef<str>) -> Self {
        self.header("authorization", format!("Bearer {}", token.as_ref()))
    }

    /// How long opening a connection to the server may take (default 10 s). Not used with a
    /// custom [`client`](Self::client), which has its own.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long each HTTP request waits for the server's response headers (default 120 s).
    /// An SSE answer's stream may last longer; a JSON answer's headers come with the answer,
    /// so for a server in JSON-response mode this also bounds each call.
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Longest message accepted from the server, in bytes (default 4 MiB): a larger JSON body
    /// or SSE event is reported as [`Inbound::Malformed`](crate::client::transport::Inbound::Malformed) with
    /// [`ClientError::Protocol`](crate::client::ClientError::Protocol) and
    /// skipped.
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes.max(1);
        self
    }

    /// Reconnections in a row that bring nothing new before a stream is given up (default 5).
    /// `0` never reconnects.
    #[must_use]
    pub fn max_reconnect_attempts(mut self, attempts: u32) -> Self {
        self.reconnect_attempts = attempts;
        self
    }

    /// The backoff between failed reconnections: `initial`, doubled after each failure, at
    /// most `max` (defaults 1 s and 30 s). The server's `retry` advice is always waited out
    /// first; `initial` is also the wait when the server gave none.
    #[must_use]
    pub fn reconnect_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.reconnect_initial_delay = initial;
        self.reconnect_max_delay = max.max(initial);
        self
    }

    /// Whether to open the standalone `GET` stream after initialization (default `true`).
    /// Without it, the server can reach the client only within its answers to requests.
    #[must_use]
    pub fn get_stream(mut self, open: bool) -> Self {
        self.get_stream = open;
        self
    }

    /// The `reqwest` client to send with. The default is a new one with the connect timeout
    /// and, with this crate's `rustls` feature (on by default), reqwest's TLS for `https://`
    /// servers: rustls with the platform's certificate verifier. Give your own
    /// for other TLS settings (client certificates, extra roots), proxies or a shared
    /// connection pool; it is used as it is.
    #[must_use]
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }
}

impl HttpOptions {
    /// Authorizes every request with `provider`, usually an
    /// [`OAuth`](crate::client::auth::OAuth) client: each request carries the headers it
    /// gives, and a request the server refuses with `401` (or `403`) is sent again when the
    /// provider has obtained what the server asked for. Its headers replace custom ones of
    /// the same name (`Authorization`).
    ///
    /// One request is sent at most a few times whatever the provider answers; when it gives
    /// up, the request fails with its error ([`ClientError::Auth`] for OAuth) or, when it
    /// hands the refusal back, with the HTTP status.
    ///
    /// [`ClientError::Auth`]: crate::client::ClientError::Auth
    #[must_use]
    pub fn auth(mut self, provider: impl AuthProvider + 'static) -> Self {
        self.auth = Some(Arc::new(provider));
        self
    }

    /// The same, with a shared provider.
    #[must_use]
    pub fn shared_auth(mut self, provider: Arc<dyn AuthProvider>) -> Self {
        self.auth = Some(provider);
        self
    }
}

/// Reconnection settings and size and time limits.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) request_timeout: Duration,
    pub(super) max_message: usize,
    pub(super) attempts: u32,
    pub(super) initial_delay: Duration,
    pub(super) max_delay: Duration,
}

impl Limits {
    /// The wait before the next reconnection, after `failures` reconnections in a row that
    /// brought nothing new: the server's `retry` advice at least, and the backoff after a
    /// failure.
    pub(super) fn reconnect_delay(&self, retry: Option<Duration>, failures: u32) -> Duration {
        let backoff = |step: u32| {
            self.initial_delay
                .saturating_mul(2u32.saturating_pow(step.min(20)))
                .min(self.max_delay)
        };
        match (retry, failures) {
            (Some(retry), 0) => retry,
            (Some(retry), n) => retry.max(backoff(n - 1)),
            (None, n) => backoff(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnections_wait_for_the_retry_advice_then_back_off() {
        let limits = Limits {
            request_timeout: Duration::from_secs(1),
            max_message: 1,
            attempts: 5,
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(5),
        };
        let ms = Duration::from_millis;
        assert_eq!(limits.reconnect_delay(Some(ms(200)), 0), ms(200));
        assert_eq!(limits.reconnect_delay(Some(ms(200)), 1), ms(1000));
        assert_eq!(limits.reconnect_delay(Some(ms(3000)), 1), ms(3000));
        assert_eq!(limits.reconnect_delay(None, 0), ms(1000));
        assert_eq!(limits.reconnect_delay(None, 2), ms(4000));
        assert_eq!(limits.reconnect_delay(None, 9), ms(5000));
    }
}
