//! The settings of an HTTP endpoint ([`McpHttpBuilder`]), checked once by
//! [`build`](McpHttpBuilder::build) into the endpoint ([`McpHttp`]).

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use actix_mcp_actors::{EventStore, InMemoryEventStore, MetricsSnapshot, dev::Metrics};
use actix_web::web;

use super::admission::AdmissionConfig;
use super::drain::DrainReport;
use super::health::{self, ReadinessCheck};
use super::security::HostPolicy;
use super::{HttpConfig, HttpShared, HttpStats, McpHttp};
use crate::cluster::Cluster;
use crate::server::auth::BearerAuth;
use crate::server::{Server, ServerInner};

/// The settings of a Streamable HTTP endpoint, from [`Server::http`] or [`McpHttp::builder`].
/// [`build`](Self::build) checks them and returns the endpoint, which has no setters: every
/// setting is made before the endpoint exists.
///
/// ```
/// # fn run(server: actix_mcp::Server) -> Result<(), actix_mcp::transport::http::HttpConfigError> {
/// let mcp = server.http("/mcp").json_response(true).build()?;
/// assert_eq!(mcp.path(), "/mcp");
/// # Ok(()) }
/// ```
#[must_use = "an endpoint exists once `build` is called"]
#[derive(Clone)]
pub struct McpHttpBuilder {
    path: String,
    server: Arc<ServerInner>,
    config: HttpConfig,
    /// The settings only a stateful endpoint uses that were set, for [`build`](Self::build).
    session_settings: Vec<&'static str>,
    /// The endpoint the deprecated methods of the builder serve, made on first use.
    shared_endpoint: Arc<OnceLock<McpHttp>>,
}

impl fmt::Debug for McpHttpBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttpBuilder")
            .field("path", &self.path)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Settings of an HTTP endpoint that contradict each other ([`McpHttpBuilder::build`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpConfigError {
    /// A stateless endpoint had no sessions to share with a cluster. No longer returned: a
    /// stateless endpoint may join a cluster, which carries its callers' cancellations to the
    /// node running their requests (see [`McpHttpBuilder::cluster`]). Kept so that code
    /// naming it still compiles.
    #[error("a stateless endpoint has no sessions to share: `cluster` needs `stateless(false)`")]
    StatelessCluster,
    /// A setting of sessions was made on a stateless endpoint, which has none.
    #[error("a stateless endpoint has no sessions: `{0}` needs `stateless(false)`")]
    StatelessSessions(&'static str),
    /// A duration that must not be zero is.
    #[error("`{0}` must be longer than zero")]
    ZeroDuration(&'static str),
}

impl McpHttp {
    /// The settings of a Streamable HTTP endpoint for `server` at `path` (the same as
    /// [`Server::http`]); [`build`](McpHttpBuilder::build) makes the endpoint.
    pub fn builder(server: &Server, path: impl Into<String>) -> McpHttpBuilder {
        server.http(path)
    }
}

impl Server {
    /// The settings of a Streamable HTTP endpoint for this server at `path`, with their
    /// defaults; [`build`](McpHttpBuilder::build) makes the endpoint, to mount with
    /// `App::new().configure(mcp.configure())`.
    pub fn http(&self, path: impl Into<String>) -> McpHttpBuilder {
        McpHttpBuilder {
            path: path.into(),
            server: self.inner.clone(),
            config: HttpConfig {
                stateless: false,
                json_response: false,
                body_limit: 4 * 1024 * 1024,
                body_timeout: Duration::from_secs(10),
                max_request_bytes_in_flight: 64 * 1024 * 1024,
                idle_timeout: Some(Duration::from_secs(30 * 60)),
                max_sessions: 10_000,
                handshake_timeout: Some(Duration::from_secs(10)),
                evict_idle_after: Some(Duration::from_secs(60)),
                max_sessions_per_principal: 100,
                keep_alive: Duration::from_secs(15),
                retry: Duration::from_secs(1),
                host_policy: HostPolicy::LoopbackOnly,
                store: Arc::new(InMemoryEventStore::default()),
                auth: None,
                capture_headers: false,
                admission: AdmissionConfig::default(),
                readiness: Vec::new(),
                drain_deadline: Duration::from_secs(30),
                cluster: None,
            },
            session_settings: Vec::new(),
            shared_endpoint: Arc::default(),
        }
    }
}

impl McpHttpBuilder {
    fn with_config(mut self, change: impl FnOnce(&mut HttpConfig)) -> Self {
        change(&mut self.config);
        self.shared_endpoint = Arc::default();
        self
    }

    fn with_session_setting(
        mut self,
        name: &'static str,
        change: impl FnOnce(&mut HttpConfig),
    ) -> Self {
        if !self.session_settings.contains(&name) {
            self.session_settings.push(name);
        }
        self.with_config(change)
    }

    /// Checks the settings and makes the endpoint. Cheap to clone: clones (one per worker)
    /// share its sessions, its gauges and its drain.
    ///
    /// # Errors
    /// When settings contradict each other: a setting of
    /// sessions ([`idle_timeout`](Self::idle_timeout), [`max_sessions`](Self::max_sessions),
    /// [`handshake_timeout`](Self::handshake_timeout),
    /// [`evict_idle_after`](Self::evict_idle_after),
    /// [`max_sessions_per_principal`](Self::max_sessions_per_principal)) on a
    /// [`stateless`](Self::stateless) endpoint; a zero [`keep_alive`](Self::keep_alive),
    /// [`body_timeout`](Self::body_timeout) or [`drain_deadline`](Self::drain_deadline).
    pub fn build(self) -> Result<McpHttp, HttpConfigError> {
        let config = &self.config;
        if config.stateless
            && let Some(name) = self.session_settings.first()
        {
            return Err(HttpConfigError::StatelessSessions(name));
        }
        for (name, duration) in [
            ("keep_alive", config.keep_alive),
            ("body_timeout", config.body_timeout),
            ("drain_deadline", config.drain_deadline),
        ] {
            if duration.is_zero() {
                return Err(HttpConfigError::ZeroDuration(name));
            }
        }
        Ok(self.endpoint())
    }

    /// The endpoint of these settings, unchecked (as the deprecated methods always made it).
    fn endpoint(self) -> McpHttp {
        let metrics = Arc::new(Metrics::default());
        #[cfg(feature = "otel")]
        crate::telemetry::track(&metrics);
        // Shared tools defined from now on are recorded for every node (not only once the
        // node has started listening to its cluster).
        if let Some(catalog) = self.config.cluster.as_ref().and_then(|c| c.catalog.clone()) {
            self.server.shared.link(catalog);
        }
        McpHttp {
            path: self.path,
            shared: Arc::new(HttpShared::new(self.server, self.config, metrics)),
        }
    }

    /// The endpoint the deprecated methods serve: one for these settings, shared by clones.
    fn shared_endpoint(&self) -> &McpHttp {
        self.shared_endpoint.get_or_init(|| self.clone().endpoint())
    }

    /// Stateless mode (default off): no sessions, no GET stream; every POST stands alone, and
    /// server-to-client requests fail with a clear error. A request is cancelled by closing
    /// its answer; with [`bearer_auth`](Self::bearer_auth), also by its caller's
    /// `notifications/cancelled`, which finds only the caller's own request of that id (on
    /// any node of a [`cluster`](Self::cluster)); without it, that notification is refused
    /// 400 (see the [module docs](super)).
    pub fn stateless(self, on: bool) -> Self {
        self.with_config(|c| c.stateless = on)
    }

    /// Answers requests with one JSON body instead of an SSE stream (default off).
    /// Request-scoped notifications (progress, logs) are then dropped, and server-to-client
    /// requests fail; session-wide notifications still reach a GET stream.
    pub fn json_response(self, on: bool) -> Self {
        self.with_config(|c| c.json_response = on)
    }

    /// Largest accepted POST body in bytes (default 4 MiB); larger is 413.
    pub fn body_limit(self, bytes: usize) -> Self {
        self.with_config(|c| c.body_limit = bytes)
    }

    /// The most request bytes the endpoint holds at once, over all clients: the sum of the body
    /// sizes of the POSTs being read or answered (default 64 MiB). A POST that does not fit is
    /// answered 503 with `Retry-After` and a JSON-RPC error saying so. A request's bytes are
    /// released when its answer is done (a streamed answer, when its stream ends).
    pub fn max_request_bytes_in_flight(self, bytes: usize) -> Self {
        self.with_config(|c| c.max_request_bytes_in_flight = bytes)
    }

    /// How long a POST body may take to arrive, counted from when the endpoint starts reading it
    /// (default 10 s). A body that has not ended by then (a short `Content-Length`, an
    /// unfinished chunked body, a client that trickles bytes) is answered 408 with a JSON-RPC
    /// error and `Connection: close`, so the worker and the socket are not held. The request
    /// line and headers have actix-web's own deadline, `HttpServer::client_request_timeout`
    /// (default 5 s; [`Server::serve`] keeps it).
    pub fn body_timeout(self, timeout: Duration) -> Self {
        self.with_config(|c| c.body_timeout = timeout)
    }

    /// Sessions without requests or open streams for this long are closed (default 30 min;
    /// `None` keeps them).
    pub fn idle_timeout(self, timeout: Option<Duration>) -> Self {
        self.with_session_setting("idle_timeout", |c| c.idle_timeout = timeout)
    }

    /// Most live sessions (default 10,000). An `initialize` past it evicts the least recently
    /// active session idle for at least [`evict_idle_after`](Self::evict_idle_after), or is
    /// answered 503 (with `Retry-After`) when none is.
    pub fn max_sessions(self, limit: usize) -> Self {
        self.with_session_setting("max_sessions", |c| c.max_sessions = limit.max(1))
    }

    /// Sessions whose client has not completed the handshake (`initialize`, then
    /// `notifications/initialized`) and has left them idle this long (no request in flight,
    /// no stream open) are closed (default 10 s; `None` waits for the idle timeout), so
    /// clients that open sessions and walk away cannot fill the table. An `initialize` that
    /// fails opens no session at all.
    pub fn handshake_timeout(self, timeout: Option<Duration>) -> Self {
        self.with_session_setting("handshake_timeout", |c| c.handshake_timeout = timeout)
    }

    /// At [`max_sessions`](Self::max_sessions), a new session evicts the least recently active
    /// session idle for at least this long (default 60 s; `None` never evicts: past the cap,
    /// `initialize` is 503).
    pub fn evict_idle_after(self, idle: Option<Duration>) -> Self {
        self.with_session_setting("evict_idle_after", |c| c.evict_idle_after = idle)
    }

    /// With [`bearer_auth`](Self::bearer_auth), most live sessions one principal may hold
    /// (default 100); one more `initialize` is answered 429 (with `Retry-After`). Without bearer
    /// auth there is no principal to count by.
    pub fn max_sessions_per_principal(self, limit: usize) -> Self {
        self.with_session_setting("max_sessions_per_principal", |c| {
            c.max_sessions_per_principal = limit.max(1)
        })
    }

    /// How often idle SSE streams get a keep-alive comment (default 15 s).
    pub fn keep_alive(self, every: Duration) -> Self {
        self.with_config(|c| c.keep_alive = every)
    }

    /// The `retry` advice sent with each stream's priming event (default 1 s).
    pub fn retry(self, after: Duration) -> Self {
        self.with_config(|c| c.retry = after)
    }

    /// How `Host` and `Origin` are checked (default: [`HostPolicy::LoopbackOnly`]).
    pub fn host_policy(self, policy: HostPolicy) -> Self {
        self.with_config(|c| c.host_policy = policy)
    }

    /// Where SSE events are kept for `Last-Event-ID` resumption (default: an
    /// [`InMemoryEventStore`]).
    pub fn event_store(self, store: Arc<dyn EventStore>) -> Self {
        self.with_config(|c| c.store = store)
    }

    /// Protects the endpoint with bearer tokens (default: none): every request must carry a
    /// token `auth`'s validator accepts, with the scopes the request needs, and a session
    /// serves only the identity that opened it. [`McpHttp::configure`] then also
    /// mounts the protected resource metadata (RFC 9728) at
    /// `/.well-known/oauth-protected-resource` followed by this endpoint's path, at the root
    /// `/.well-known/oauth-protected-resource`, and at the path of
    /// [`BearerAuth::metadata_url`] if it differs. Handlers see the caller through
    /// [`RequestContext::identity`](crate::RequestContext::identity), and the request's
    /// headers (credentials withheld) through
    /// [`RequestContext::http_headers`](crate::RequestContext::http_headers). See
    /// [`auth`](crate::server::auth).
    pub fn bearer_auth(self, auth: BearerAuth) -> Self {
        self.with_config(|c| c.auth = Some(auth))
    }

    /// Gives handlers a snapshot of each request's headers through
    /// [`RequestContext::http_headers`](crate::RequestContext::http_headers), without
    /// `Authorization`, `Proxy-Authorization` and `Cookie` (default off, which copies nothing;
    /// always on with [`bearer_auth`](Self::bearer_auth)).
    pub fn capture_headers(self, on: bool) -> Self {
        self.with_config(|c| c.capture_headers = on)
    }

    /// Admission control: concurrency limits (global, per principal, per tool) with a bounded
    /// wait queue, and rate limits (per session, per principal); see [`AdmissionConfig`]
    /// (default: no limits besides the per-session
    /// [`max_concurrent_requests`](crate::server::ServerBuilder::max_concurrent_requests)).
    pub fn admission(self, admission: AdmissionConfig) -> Self {
        self.with_config(|c| c.admission = admission)
    }

    /// Adds a dependency `/readyz` checks (see [`McpHttp::health`]): while `check` fails,
    /// or does not answer within [`READINESS_TIMEOUT`](super::READINESS_TIMEOUT), the endpoint
    /// is not ready.
    pub fn readiness_check(self, name: impl Into<String>, check: impl ReadinessCheck) -> Self {
        let named = health::NamedCheck {
            name: Arc::from(name.into()),
            check: Arc::new(check),
        };
        self.with_config(|c| c.readiness.push(named))
    }

    /// How long [`McpHttp::serve`] lets requests in flight finish when asked to stop
    /// (default 30 s); see [`McpHttp::drain`].
    pub fn drain_deadline(self, deadline: Duration) -> Self {
        self.with_config(|c| c.drain_deadline = deadline)
    }

    /// Serves the sessions of a cluster: any node behind any load balancer serves any session,
    /// with no sticky routing (default: none, every session lives in this process). Each node
    /// mounts an endpoint with the same cluster settings (see [`cluster`](crate::cluster)).
    /// The session cap ([`max_sessions`](Self::max_sessions)) then counts the cluster's
    /// sessions when its store can count them. A [`stateless`](Self::stateless) endpoint may
    /// join a cluster too: it has no sessions to share, but a caller's
    /// `notifications/cancelled` (with [`bearer_auth`](Self::bearer_auth)) reaches the node
    /// running its request, and list changes reach every node's `subscriptions/listen`
    /// streams.
    pub fn cluster(self, cluster: Cluster) -> Self {
        self.with_config(|c| c.cluster = Some(cluster))
    }

    /// The endpoint's [`configure`](McpHttp::configure), for code written before the builder.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and `configure` the endpoint it returns"
    )]
    pub fn configure(&self) -> impl FnOnce(&mut web::ServiceConfig) + Clone + 'static {
        self.shared_endpoint().configure()
    }

    /// The endpoint's [`health`](McpHttp::health), for code written before the builder.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and take `health` of the endpoint it returns"
    )]
    pub fn health(&self) -> impl FnOnce(&mut web::ServiceConfig) + Clone + 'static {
        self.shared_endpoint().health()
    }

    /// The endpoint's runtime gauges, for code written before the builder.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and read `stats().runtime` of the endpoint it returns"
    )]
    pub fn metrics(&self) -> MetricsSnapshot {
        self.shared_endpoint().stats().runtime
    }

    /// The endpoint's [`stats`](McpHttp::stats), for code written before the builder.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and read `stats` of the endpoint it returns"
    )]
    pub fn stats(&self) -> HttpStats {
        self.shared_endpoint().stats()
    }

    /// The endpoint's [`is_draining`](McpHttp::is_draining), for code written before the
    /// builder.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and ask the endpoint it returns"
    )]
    pub fn is_draining(&self) -> bool {
        self.shared_endpoint().is_draining()
    }

    /// The endpoint's [`drain`](McpHttp::drain), for code written before the builder.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and `drain` the endpoint it returns"
    )]
    pub async fn shutdown(&self, deadline: Duration) -> DrainReport {
        self.shared_endpoint().drain(deadline).await
    }

    /// The endpoint's [`serve`](McpHttp::serve), for code written before the builder (the
    /// settings are not checked).
    ///
    /// # Errors
    /// When binding fails.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and `serve` the endpoint it returns"
    )]
    pub async fn serve(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<()> {
        self.shared_endpoint().clone().serve(addr).await
    }

    /// The endpoint's [`session_count`](McpHttp::session_count), for code written before the
    /// builder.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and ask the endpoint it returns"
    )]
    pub fn session_count(&self) -> usize {
        self.shared_endpoint().session_count()
    }

    /// The endpoint's [`close_all_sessions`](McpHttp::close_all_sessions), for code written
    /// before the builder.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and ask the endpoint it returns"
    )]
    pub fn close_all_sessions(&self) {
        self.shared_endpoint().close_all_sessions();
    }

    /// The bearer-token protection set, if any.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and read `bearer_auth()` of the endpoint it returns"
    )]
    pub fn auth(&self) -> Option<&BearerAuth> {
        self.config.auth.as_ref()
    }

    /// The path the endpoint is mounted at.
    #[deprecated(
        since = "0.2.0",
        note = "call `build()?` and read `path()` of the endpoint it returns"
    )]
    pub fn path(&self) -> &str {
        &self.path
    }
}
