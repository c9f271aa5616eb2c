//! Streamable HTTP on actix-web: one endpoint answering POST, GET and DELETE.
//!
//! [`Server::http`] gives an [`McpHttpBuilder`], whose [`build`](McpHttpBuilder::build) checks the
//! settings and gives an [`McpHttp`], whose [`configure`](McpHttp::configure) mounts the
//! endpoint in any `App` beside the user's own routes; [`Server::serve`] is the turnkey server.
//! Every worker holds the same [`RegistryHandle`], so a session opened through one worker is
//! served by all of them; sessions live on the worker that accepted their `initialize`.
//!
//! | request | answer |
//! | --- | --- |
//! | POST request | an SSE stream (default) or one JSON body (`json_response(true)`) |
//! | POST `initialize` | opens a session when it carries no `Mcp-Session-Id`; with one it is a request of that session, refused `-32600` there (one `initialize` per session, as over stdio) |
//! | POST notification or response | 202 |
//! | GET | the session's standalone SSE stream; with `Last-Event-ID`, the resumed stream |
//! | DELETE | ends the session (200) |
//! | bad `Accept` / `Content-Type` / size / JSON | 406 / 415 / 413 / 400, with a JSON-RPC error body |
//! | a body that does not arrive within [`body_timeout`](McpHttpBuilder::body_timeout) | 408, and the connection is closed |
//! | a body past [`max_request_bytes_in_flight`](McpHttpBuilder::max_request_bytes_in_flight) | 503 with `Retry-After` |
//! | missing / unknown session | 400 / 404 |
//! | `initialize` past the session cap, none idle enough to evict / past the cap per principal | 503 / 429, with `Retry-After` |
//! | past a rate or concurrency limit of [`admission`](McpHttpBuilder::admission) | 429 with `Retry-After`, `-32003` with `data.retryAfterMs` |
//! | any POST or GET once [`drain`](McpHttp::drain) began | 503 with `Retry-After` |
//! | bad `Host` or `Origin` | 403 |
//! | with [`bearer_auth`](McpHttp::bearer_auth): no or bad token / missing scope / another identity's session | 401 / 403 / 404, see [`auth`](crate::server::auth) |
//!
//! Every refusal's body is a JSON-RPC error object with an `id` member: the request's id once
//! the body has been read and held a request, `null` before (JSON-RPC 2.0 §5), so a client can
//! always tell which request failed, or that the server could not know.
//!
//! # Cancellation without a session
//!
//! In a session (2025-11-25), a client cancels with `notifications/cancelled`, and a dropped
//! connection is not a cancellation: the answer stays resumable with `Last-Event-ID`. Without
//! a session ([`stateless`](McpHttpBuilder::stateless) mode, and every 2026-07-28 request),
//! **closing a request's answer (its SSE stream, or the connection awaiting its JSON body)
//! cancels that request**: its handler stops and nothing more is sent for it. The server
//! notices a closed connection at once only if actix-web does not keep half-closed connections
//! alive: serve the endpoint with `HttpServer::h1_allow_half_closed(false)` ([`Server::serve`]
//! does); otherwise an SSE answer notices at its next keep-alive and a JSON answer not at all.
//!
//! A `notifications/cancelled` POSTed without a session names a request by its id, and ids are
//! unique only per client, so it is honoured only when the endpoint knows who sent it:
//!
//! | endpoint | `notifications/cancelled` without a session |
//! | --- | --- |
//! | stateless, with [`bearer_auth`](McpHttpBuilder::bearer_auth) | 202: cancels the caller's own in-flight request of that id (requests are recorded under the caller's principal, its issuer and subject or client, and their id), on this node or, in a [`cluster`](McpHttpBuilder::cluster), on the node running it; never another identity's request of the same id. Unknown ids (finished, or never sent) and malformed params are ignored, as the spec asks |
//! | stateless, without bearer auth | 400: it requires authentication, since nothing ties it to the client whose request it names |
//! | a 2026-07-28 notification | 400: that revision defines no client notification over HTTP; closing the response stream is the cancellation |
//!
//! Clients that share one principal share its ids too: a cancellation names every request of
//! the principal with that id. A cancelled request's SSE answer ends without a response; one
//! awaiting a JSON body is answered with its `-32800` error, which the client that cancelled
//! ignores.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#cancellation>

mod admission;
mod admission_cluster;
mod answer;
mod auth;
mod budget;
mod builder;
mod door;
mod drain;
mod headers;
mod health;
mod respond;
mod security;
mod session;
mod sessionless;
mod sse;
mod v2026;
mod watch;

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use futures::future::{Either, LocalBoxFuture};

use actix_mcp_actors::{
    EventStore, MetricsSnapshot, RegistryHandle,
    dev::{Metrics, RegistryConfig},
};

pub use admission::{AdmissionConfig, MAX_BUCKETS, Rate};
pub use builder::{HttpConfigError, McpHttpBuilder};
pub use drain::{DrainReport, SHUTDOWN_REASON, TASK_SHUTDOWN_REASON};
pub use health::{CLUSTER_STORE_CHECK, READINESS_TIMEOUT, ReadinessCheck};
pub use security::HostPolicy;

use crate::cluster::{Cluster, ClusterNode};
use crate::server::auth::{BearerAuth, WELL_KNOWN};
use crate::server::route::{McpDispatch, Network};
use crate::server::{Server, ServerInner};

/// The header carrying the session id.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The header carrying the protocol version.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// Settings of the HTTP transport. Defaults are not part of semver.
#[derive(Clone)]
pub(crate) struct HttpConfig {
    pub(crate) stateless: bool,
    pub(crate) json_response: bool,
    pub(crate) body_limit: usize,
    pub(crate) body_timeout: Duration,
    pub(crate) max_request_bytes_in_flight: usize,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) max_sessions: usize,
    pub(crate) handshake_timeout: Option<Duration>,
    pub(crate) evict_idle_after: Option<Duration>,
    pub(crate) max_sessions_per_principal: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) retry: Duration,
    pub(crate) host_policy: HostPolicy,
    pub(crate) store: Arc<dyn EventStore>,
    /// Bearer-token protection, when the endpoint has it.
    pub(crate) auth: Option<BearerAuth>,
    /// Handlers get a snapshot of the request headers (always with bearer auth).
    pub(crate) capture_headers: bool,
    /// Concurrency and rate limits.
    pub(crate) admission: AdmissionConfig,
    /// What `/readyz` asks about.
    readiness: Vec<health::NamedCheck>,
    /// How long [`McpHttp::serve`] lets requests finish on SIGTERM.
    drain_deadline: Duration,
    /// The other nodes serving the same sessions, when there are any.
    pub(crate) cluster: Option<Cluster>,
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("stateless", &self.stateless)
            .field("json_response", &self.json_response)
            .field("body_limit", &self.body_limit)
            .field("body_timeout", &self.body_timeout)
            .field(
                "max_request_bytes_in_flight",
                &self.max_request_bytes_in_flight,
            )
            .field("idle_timeout", &self.idle_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("handshake_timeout", &self.handshake_timeout)
            .field("evict_idle_after", &self.evict_idle_after)
            .field(
                "max_sessions_per_principal",
                &self.max_sessions_per_principal,
            )
            .field("host_policy", &self.host_policy)
            .field("auth", &self.auth)
            .field("capture_headers", &self.capture_headers)
            .field("admission", &self.admission)
            .field("readiness", &self.readiness)
            .field("drain_deadline", &self.drain_deadline)
            .field("cluster", &self.cluster)
            .finish()
    }
}

pub(crate) struct HttpShared {
    pub(crate) server: Arc<ServerInner>,
    /// The endpoint's dispatch, shared by its sessions and its requests without a session.
    pub(crate) dispatch: Arc<McpDispatch>,
    pub(crate) config: HttpConfig,
    registry: OnceLock<RegistryHandle>,
    /// This endpoint's side of its cluster (set with the registry).
    node: OnceLock<Option<Arc<ClusterNode>>>,
    pub(crate) metrics: Arc<Metrics>,
    /// The request bytes in flight, shared by every worker.
    budget: Arc<budget::ByteBudget>,
    /// Concurrency slots, wait queue and rate buckets, shared by every worker.
    admission: Arc<admission::Admission>,
    /// Where a drain stands.
    drain: drain::DrainState,
    /// Whether the endpoint has said that it checks no `Host` on the address it listens on.
    pub(crate) host_warned: std::sync::atomic::AtomicBool,
}

impl HttpShared {
    fn new(server: Arc<ServerInner>, config: HttpConfig, metrics: Arc<Metrics>) -> Self {
        Self {
            dispatch: McpDispatch::new(server.clone(), Network::Tcp),
            server,
            budget: budget::ByteBudget::new(config.max_request_bytes_in_flight),
            admission: admission::Admission::new(config.admission.clone(), config.cluster.as_ref()),
            config,
            registry: OnceLock::new(),
            node: OnceLock::new(),
            metrics,
            drain: drain::DrainState::default(),
            host_warned: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The endpoint's dispatch, as the runtime takes it.
    pub(crate) fn dispatch(&self) -> Arc<dyn actix_mcp_actors::dev::Dispatch> {
        self.dispatch.clone()
    }

    /// The registry, started on first use (on the arbiter of the worker that first needs it).
    pub(crate) fn registry(&self) -> &RegistryHandle {
        self.registry.get_or_init(|| {
            let node = self.config.cluster.clone().map(|cluster| {
                // A record lives as long as a session may stay idle; without an idle timeout,
                // a day (a shared store keeps nothing forever).
                let ttl = self
                    .config
                    .idle_timeout
                    .unwrap_or(Duration::from_secs(24 * 60 * 60));
                ClusterNode::new(cluster, ttl)
            });
            let mut store = self.config.store.clone();
            let mut idle_timeout = self.config.idle_timeout;
            if let Some(node) = &node {
                store = node.events().unwrap_or(store);
                // The record keeps the session; the local actor only its work here.
                idle_timeout = Some(idle_timeout.map_or(LOCAL_IDLE, |idle| idle.min(LOCAL_IDLE)));
            }
            let config = RegistryConfig {
                max_sessions: self.config.max_sessions,
                idle_timeout,
                handshake_timeout: self.config.handshake_timeout,
                evict_idle_after: self.config.evict_idle_after,
                // Sessions have owners only on a protected endpoint.
                max_sessions_per_principal: Some(self.config.max_sessions_per_principal),
                relay: node.as_ref().map(|node| node.relay()),
            };
            let registry =
                actix_mcp_actors::dev::Registry::start(config, self.metrics.clone(), Some(store));
            self.server.add_registry(registry.clone());
            if let Some(node) = &node {
                node.start(registry.clone(), Arc::downgrade(&self.server));
            }
            let _ = self.node.set(node);
            registry
        })
    }

    /// This endpoint's side of its cluster, if it has one.
    pub(crate) fn node(&self) -> Option<&Arc<ClusterNode>> {
        self.registry();
        self.node.get().and_then(Option::as_ref)
    }
}

/// How long a node of a cluster keeps the actor of a session with no work on it (the session
/// itself lives on in the store for its idle timeout).
const LOCAL_IDLE: Duration = Duration::from_secs(120);

/// A Streamable HTTP endpoint for a [`Server`], to mount in an actix-web `App`, drain, and
/// ask for its state. Made by [`McpHttpBuilder::build`] from [`Server::http`] (or
/// [`McpHttp::builder`]), it has no setters. Cheap to clone: clones (one per worker) share
/// sessions, gauges and the drain.
///
/// ```no_run
/// use actix_web::{App, HttpServer};
/// # async fn run(server: actix_mcp::Server) -> std::io::Result<()> {
/// let mcp = server
///     .http("/mcp")
///     .json_response(false)
///     .build()
///     .map_err(std::io::Error::other)?;
/// HttpServer::new(move || App::new().configure(mcp.configure()))
///     .tcp_nodelay(true)
///     .h1_allow_half_closed(false) // a closed connection cancels at once (no session)
///     .bind(("127.0.0.1", 8080))?
///     .run()
///     .await
/// # }
/// ```
#[derive(Clone)]
pub struct McpHttp {
    path: String,
    shared: Arc<HttpShared>,
}

impl fmt::Debug for McpHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttp")
            .field("path", &self.path)
            .field("config", &self.shared.config)
            .finish()
    }
}

impl McpHttp {
    /// The bearer-token protection of this endpoint, if any
    /// ([`McpHttpBuilder::bearer_auth`]).
    pub fn bearer_auth(&self) -> Option<&BearerAuth> {
        self.shared.config.auth.as_ref()
    }

    /// The bearer-token protection of this endpoint, if any.
    #[deprecated(since = "0.2.0", note = "renamed to `bearer_auth`")]
    pub fn auth(&self) -> Option<&BearerAuth> {
        self.bearer_auth()
    }

    /// The paths the protected resource metadata is served at (none without bearer auth).
    fn metadata_paths(&self) -> Vec<String> {
        let Some(auth) = &self.shared.config.auth else {
            return Vec::new();
        };
        let endpoint = self.path.trim_end_matches('/');
        let mut paths = vec![format!("{WELL_KNOWN}{endpoint}"), WELL_KNOWN.to_owned()];
        let advertised = auth.metadata_path().to_owned();
        if !paths.contains(&advertised) {
            paths.push(advertised);
        }
        paths.dedup();
        paths
    }

    /// The path the endpoint is mounted at.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What `App::configure` takes: mounts the endpoint at its path (and, with
    /// [`bearer_auth`](McpHttpBuilder::bearer_auth), its protected resource metadata).
    pub fn configure(&self) -> impl FnOnce(&mut web::ServiceConfig) + Clone + 'static {
        let this = self.clone();
        let metadata_paths = self.metadata_paths();
        move |cfg: &mut web::ServiceConfig| {
            if this.shared.config.cluster.is_some() {
                // A node listens to its cluster from the start, not from its first request.
                this.shared.registry();
            }
            for path in metadata_paths {
                cfg.service(
                    web::resource(path)
                        .app_data(web::Data::from(this.shared.clone()))
                        .route(web::get().to(auth::metadata))
                        .route(
                            web::method(actix_web::http::Method::OPTIONS)
                                .to(auth::metadata_preflight),
                        ),
                );
            }
            cfg.service(
                web::resource(this.path.clone())
                    .app_data(web::Data::from(this.shared.clone()))
                    .route(web::route().to(endpoint)),
            );
        }
    }

    /// What `App::configure` takes to mount the health endpoints: `GET /healthz` (liveness)
    /// and `GET /readyz` (readiness: 503 while draining, or while a
    /// [`readiness_check`](McpHttpBuilder::readiness_check) fails or does not answer within
    /// [`READINESS_TIMEOUT`], or, in a [cluster](McpHttpBuilder::cluster), while its session store does
    /// not answer a ping: [`CLUSTER_STORE_CHECK`]). Both answer JSON (`{"status": "ok" |
    /// "ready" | "draining" | "unready"}`, with `failed` naming the failed checks) and check
    /// neither `Host` nor `Origin`: probes come from orchestrators, by address.
    pub fn health(&self) -> impl FnOnce(&mut web::ServiceConfig) + Clone + 'static {
        let shared = self.shared.clone();
        move |cfg: &mut web::ServiceConfig| {
            cfg.service(web::resource("/healthz").route(web::get().to(health::liveness)));
            cfg.service(
                web::resource("/readyz")
                    .app_data(web::Data::from(shared))
                    .route(web::get().to(health::readiness)),
            );
        }
    }

    /// Live counts of sessions, requests, streams and tool calls.
    #[deprecated(since = "0.2.0", note = "read `stats().runtime`")]
    pub fn metrics(&self) -> MetricsSnapshot {
        self.shared.metrics.snapshot()
    }

    /// A snapshot of the endpoint's state for operators who do not export traces: the
    /// runtime's gauges, requests being answered, the admission queue and decisions, and
    /// whether it drains.
    pub fn stats(&self) -> HttpStats {
        let counters = &self.shared.admission.counters;
        let load = |counter: &std::sync::atomic::AtomicU64| {
            counter.load(std::sync::atomic::Ordering::Relaxed)
        };
        HttpStats {
            runtime: self.shared.metrics.snapshot(),
            handlers: self
                .shared
                .drain
                .handlers
                .load(std::sync::atomic::Ordering::Acquire),
            waiting: self.shared.admission.waiting(),
            admitted: load(&counters.admitted),
            queued: load(&counters.queued),
            rate_limited: load(&counters.rate_limited),
            queue_full: load(&counters.queue_full),
            queue_timeouts: load(&counters.queue_timeouts),
            draining: self.is_draining(),
        }
    }

    /// Whether a drain has begun (see [`drain`](Self::drain)).
    pub fn is_draining(&self) -> bool {
        self.shared.drain.is_draining()
    }

    /// Drains the endpoint: stops accepting requests (503 with `Retry-After`), lets those in
    /// flight and the server's running tasks finish until `deadline`, cancels the rest, closes
    /// every SSE stream with a `retry` hint and flushes the event store ([`EventStore::flush`]).
    /// Past the deadline, a session's request gets `notifications/cancelled` (reason
    /// [`SHUTDOWN_REASON`]) before its stream ends; a request without a session (2026-07-28,
    /// stateless mode) is cancelled by closing its answer, and one awaiting a JSON body gets a
    /// `-32800` error; a task is stored `failed` with [`TASK_SHUTDOWN_REASON`]. Stop the
    /// actix-web server afterwards ([`serve`](Self::serve) does all of it on SIGTERM).
    /// Clones share the drain: a second call waits for the first and returns its report.
    ///
    /// # Cancel safety
    /// Once begun, a drain cannot be undone: dropping the future leaves the endpoint refusing
    /// requests, and a later call finishes the drain.
    pub async fn drain(&self, deadline: Duration) -> DrainReport {
        drain::run(&self.shared, deadline).await
    }

    /// Drains the endpoint (see [`drain`](Self::drain)).
    #[deprecated(since = "0.2.0", note = "renamed to `drain`")]
    pub async fn shutdown(&self, deadline: Duration) -> DrainReport {
        self.drain(deadline).await
    }

    /// Serves this endpoint and its [`health`](Self::health) endpoints on `addr` (actix-web's
    /// default number of workers, TCP_NODELAY on, half-closed connections off) until SIGTERM
    /// or SIGINT, then [drains](Self::shutdown) within the
    /// [`drain_deadline`](McpHttpBuilder::drain_deadline), stops the server and returns. Must run inside
    /// an actix system (`#[actix_web::main]`).
    ///
    /// # Errors
    /// When binding fails.
    pub async fn serve(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<()> {
        let app = self.clone();
        let deadline = self.shared.config.drain_deadline;
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .configure(app.configure())
                .configure(app.health())
        })
        .tcp_nodelay(true)
        .h1_allow_half_closed(false)
        // The drain below is the graceful part; actix-web's own then has little left to do.
        .disable_signals()
        .shutdown_timeout(deadline.as_secs() + 5)
        .bind(addr)?;
        for addr in server.addrs() {
            if self
                .shared
                .config
                .host_policy
                .leaves_host_unchecked(addr.ip().is_loopback())
            {
                security::warn_unchecked_host(&self.shared.host_warned, addr);
            }
        }
        let server = server.run();
        let handle = server.handle();
        actix_rt::spawn(async move {
            crate::transport::shutdown_signal().await;
            tracing::info!("shutdown signal received");
            self.drain(deadline).await;
            handle.stop(true).await;
        });
        server.await
    }

    /// Number of live sessions.
    pub fn session_count(&self) -> usize {
        if self.shared.config.stateless {
            0
        } else {
            self.shared.registry().len()
        }
    }

    /// Closes every session (their in-flight requests are cancelled).
    pub fn close_all_sessions(&self) {
        self.shared.registry().shutdown();
    }
}

impl Server {
    /// Serves this server over Streamable HTTP at `/mcp` on `addr`, with `/healthz` and
    /// `/readyz` beside it, actix-web's default number of workers, TCP_NODELAY on and
    /// half-closed connections off (a client that closes its connection cancels what it was
    /// waiting for without a session), until SIGTERM or SIGINT, which drains the endpoint
    /// within 30 s and returns (see [`McpHttp::serve`]). Must run inside an actix system
    /// (`#[actix_web::main]`).
    ///
    /// # Errors
    /// When binding fails.
    pub async fn serve(&self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<()> {
        let mcp = self.http("/mcp").build().map_err(std::io::Error::other)?;
        mcp.serve(addr).await
    }
}

/// A snapshot of an HTTP endpoint's state ([`McpHttp::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct HttpStats {
    /// The runtime's gauges: sessions, requests in flight, streams, tool calls.
    pub runtime: MetricsSnapshot,
    /// POST handlers running now (reading a body, waiting for admission, answering).
    pub handlers: usize,
    /// Requests waiting for a concurrency slot now.
    pub waiting: usize,
    /// Requests admitted since the endpoint started.
    pub admitted: u64,
    /// Requests that had to wait for a slot (then admitted or refused).
    pub queued: u64,
    /// Requests refused by a rate limit.
    pub rate_limited: u64,
    /// Requests refused because the wait queue was full.
    pub queue_full: u64,
    /// Requests refused because no slot freed up within the queue's deadline.
    pub queue_timeouts: u64,
    /// Whether the endpoint is draining.
    pub draining: bool,
}

/// The endpoint: one route for every method, told apart here. A route per method would be
/// chosen by actix-web's method guards, which record each method they check in the request's
/// extensions (three allocations for every request). A POST's future is the one actix-web
/// boxes, no larger than [`door::post`]'s (kept under the 1,032 bytes glibc serves from its
/// per-thread cache); the others are boxed apart.
fn endpoint(
    req: HttpRequest,
    payload: web::Payload,
    shared: web::Data<HttpShared>,
) -> Either<impl Future<Output = HttpResponse>, LocalBoxFuture<'static, HttpResponse>> {
    match *req.method() {
        Method::POST => Either::Left(door::post(req, payload, shared)),
        Method::GET => Either::Right(Box::pin(session::get(req, shared))),
        Method::DELETE => Either::Right(Box::pin(session::delete(req, shared))),
        _ => Either::Right(Box::pin(std::future::ready(respond::not_allowed(&req)))),
    }
}
