//! Admission control of an HTTP endpoint: concurrency limits (global, per principal, per tool)
//! with a bounded wait queue, and token-bucket rate limits (per session, per principal).
//!
//! Every limit is off by default; [`AdmissionConfig`] turns them on, and
//! [`McpHttpBuilder::admission`](super::McpHttpBuilder::admission) applies it. The per-session concurrency
//! limit is the server's own ([`ServerBuilder::max_concurrent_requests`]).
//!
//! | limit | checked | refusal |
//! | --- | --- | --- |
//! | rate per session | before the body is read (the `Mcp-Session-Id` of a live session) | 429, `Retry-After`, JSON-RPC error with `id: null` |
//! | rate per principal | once the bearer token is validated | 429, `Retry-After`, JSON-RPC error with the request's id |
//! | concurrency per tool, per principal, global | once the body is read and authorized | waits in the queue; 429, `Retry-After`, JSON-RPC error with the request's id when the queue is full or the wait reaches its deadline |
//!
//! Every refusal's JSON-RPC error has code [`OVERLOADED`](crate::error::code::OVERLOADED)
//! (`-32003`) and `data: {"retryAfterMs": .., "limit": ..}`. Only requests are counted:
//! notifications, responses and `ping` (a liveness probe that costs nothing) never wait.
//!
//! A request's slots are held by its work, not its connection: they are released when the
//! request ends (answered or cancelled), whether or not its client is still connected; a
//! blocking tool still running on its thread keeps them, and so does a task of the Tasks
//! extension, for its whole life.
//!
//! In a [cluster](crate::cluster) with an admission store
//! ([`Cluster::admission_store`](crate::cluster::Cluster::admission_store); a cluster on Redis
//! has one), the global and per-principal concurrency limits and the principal rate count the
//! whole cluster: this node's counts are checked first, as a local guard, then the store's, in
//! one round trip; a cluster-wide limit that is full refuses at once rather than queueing, and
//! a failing store refuses 503 (see `admission_cluster`, and the README's "Running several
//! nodes"). The session rate and the per-tool limits count per node.
//!
//! Memory stays bounded under overload: the wait queue has a cap, a refused POST's body is
//! never read, and the rate limiters keep at most [`MAX_BUCKETS`] buckets (full ones are
//! forgotten first, as a full bucket is the same as none).
//!
//! [`ServerBuilder::max_concurrent_requests`]: crate::server::ServerBuilder::max_concurrent_requests

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use actix_mcp_actors::{ErrorObject, RequestId};

use super::admission_cluster::{ClusterLease, ClusterLimits};
use crate::cluster::Cluster;
use crate::error::code;

/// The most rate-limit buckets kept per limiter.
pub const MAX_BUCKETS: usize = 65_536;

/// A token-bucket rate: `burst` requests at once, refilled at `per_second`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    per_second: f64,
    burst: u32,
}

impl Rate {
    /// `requests` per `period`, with a burst of `requests` (at least one request, and a period
    /// of at least a millisecond).
    pub fn new(requests: u32, period: Duration) -> Self {
        let requests = requests.max(1);
        let period = period.max(Duration::from_millis(1));
        Self {
            per_second: f64::from(requests) / period.as_secs_f64(),
            burst: requests,
        }
    }

    /// `requests` per second, with a burst of `requests`.
    pub fn per_second(requests: u32) -> Self {
        Self::new(requests, Duration::from_secs(1))
    }

    /// The most requests accepted at once after a quiet period (at least one).
    #[must_use]
    pub fn burst(mut self, burst: u32) -> Self {
        self.burst = burst.max(1);
        self
    }
}

/// The admission limits of an HTTP endpoint. Every limit is off by default; the queue
/// settings apply to whichever concurrency limits are on. Defaults are not part of semver.
///
/// | limit | checked | refusal |
/// | --- | --- | --- |
/// | rate per session | before the body is read (the `Mcp-Session-Id` of a live session) | 429, `Retry-After`, JSON-RPC error with `id: null` |
/// | rate per principal (bearer auth) | once the token is validated | 429, `Retry-After`, JSON-RPC error with the request's id |
/// | concurrency per tool, per principal, global | once the body is read and authorized | waits in the queue; 429, `Retry-After`, JSON-RPC error with the request's id when the queue is full or the wait reaches its deadline |
///
/// Every refusal's error has code [`OVERLOADED`](crate::error::code::OVERLOADED) (`-32003`)
/// and `data: {"retryAfterMs": .., "limit": ..}`. Only requests are counted: notifications,
/// responses and `ping` never wait. A rate limiter keeps at most [`MAX_BUCKETS`] buckets.
///
/// On an endpoint in a [cluster](crate::cluster::Cluster) with an
/// [`AdmissionStore`](crate::cluster::AdmissionStore) (a cluster on Redis has one), the global
/// and per-principal concurrency limits and the principal rate hold for the whole cluster
/// (counted in the store, each node's own count kept as a local guard); the others count per
/// node.
///
/// ```
/// use std::time::Duration;
/// use actix_mcp::transport::http::{AdmissionConfig, Rate};
///
/// let admission = AdmissionConfig::new()
///     .max_concurrent(512)
///     .max_concurrent_per_principal(32)
///     .max_concurrent_per_tool("search", 8)
///     .session_rate(Rate::per_second(20).burst(40))
///     .principal_rate(Rate::per_second(100))
///     .queue(256, Duration::from_secs(2));
/// # let _ = admission;
/// ```
#[derive(Debug, Clone)]
pub struct AdmissionConfig {
    max_concurrent: Option<usize>,
    per_principal: Option<usize>,
    per_tool: HashMap<String, usize>,
    session_rate: Option<Rate>,
    principal_rate: Option<Rate>,
    max_waiting: usize,
    max_wait: Duration,
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        Self {
            max_concurrent: None,
            per_principal: None,
            per_tool: HashMap::new(),
            session_rate: None,
            principal_rate: None,
            max_waiting: 1024,
            max_wait: Duration::from_secs(2),
        }
    }
}

impl AdmissionConfig {
    /// No limits (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Most requests the endpoint answers at once, over all clients (at least one).
    #[must_use]
    pub fn max_concurrent(mut self, limit: usize) -> Self {
        self.max_concurrent = Some(limit.max(1));
        self
    }

    /// With bearer auth, most requests one principal (the authenticated caller) has answered at once (at least one).
    /// Without bearer auth there is no principal to count by, and this limit does nothing.
    #[must_use]
    pub fn max_concurrent_per_principal(mut self, limit: usize) -> Self {
        self.per_principal = Some(limit.max(1));
        self
    }

    /// Most calls of tool `name` running at once, over all clients (at least one).
    #[must_use]
    pub fn max_concurrent_per_tool(mut self, name: impl Into<String>, limit: usize) -> Self {
        self.per_tool.insert(name.into(), limit.max(1));
        self
    }

    /// The rate of requests each session may send (checked before the body is read).
    #[must_use]
    pub fn session_rate(mut self, rate: Rate) -> Self {
        self.session_rate = Some(rate);
        self
    }

    /// With bearer auth, the rate of requests each principal may send, over all its sessions.
    #[must_use]
    pub fn principal_rate(mut self, rate: Rate) -> Self {
        self.principal_rate = Some(rate);
        self
    }

    /// The wait queue of the concurrency limits: at most `max_waiting` requests wait for a
    /// slot at once (default 1024; `0` refuses at once), each for at most `max_wait` (default
    /// 2 s). A request past either is refused.
    #[must_use]
    pub fn queue(mut self, max_waiting: usize, max_wait: Duration) -> Self {
        self.max_waiting = max_waiting;
        self.max_wait = max_wait;
        self
    }
}

impl AdmissionConfig {
    /// Whether a session rate limit is set.
    pub(super) fn has_session_rate(&self) -> bool {
        self.session_rate.is_some()
    }

    /// The limits a cluster counts in its admission store: global and per-principal
    /// concurrency, and the principal rate (tokens per second, burst).
    pub(super) fn cluster_limits(&self) -> (Option<usize>, Option<usize>, Option<(f64, u32)>) {
        (
            self.max_concurrent,
            self.per_principal,
            self.principal_rate
                .map(|rate| (rate.per_second, rate.burst)),
        )
    }
}

/// Which limit refused a request (`data.limit` of the refusal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Limit {
    Global,
    Principal,
    Tool,
    SessionRate,
    PrincipalRate,
}

impl Limit {
    fn as_str(self) -> &'static str {
        match self {
            Self::Global => "global",
            Self::Principal => "principal",
            Self::Tool => "tool",
            Self::SessionRate => "sessionRate",
            Self::PrincipalRate => "principalRate",
        }
    }
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// A rate limit is out of tokens for this long.
    Rate(Limit, Duration),
    /// The wait queue is full.
    QueueFull(Limit),
    /// No slot freed up within the queue's deadline.
    WaitTimedOut(Limit),
    /// The server began draining while the request waited.
    Draining,
    /// A cluster-wide concurrency limit is full (counted in the cluster's admission store).
    ClusterFull(Limit),
    /// A cluster-wide rate limit is out of tokens for this long.
    ClusterRate(Limit, Duration),
    /// The cluster's admission store failed: the cluster-wide limits cannot be counted.
    StoreUnavailable,
}

/// The counts of admission decisions since the endpoint started.
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) admitted: AtomicU64,
    pub(super) rate_limited: AtomicU64,
    pub(super) queue_full: AtomicU64,
    pub(super) queue_timeouts: AtomicU64,
    pub(super) queued: AtomicU64,
}

impl Counters {
    fn count(&self, refusal: Refusal) {
        let counter = match refusal {
            Refusal::Rate(..) | Refusal::ClusterRate(..) => &self.rate_limited,
            Refusal::QueueFull(_) | Refusal::ClusterFull(_) => &self.queue_full,
            Refusal::WaitTimedOut(_) => &self.queue_timeouts,
            Refusal::Draining | Refusal::StoreUnavailable => return,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// One token bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn refill(&mut self, rate: Rate, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate.per_second).min(f64::from(rate.burst));
        self.at = now;
    }
}

/// Token buckets by key (a session id, a principal), at most [`MAX_BUCKETS`] of them.
#[derive(Debug)]
struct RateLimiter {
    rate: Rate,
    buckets: Mutex<HashMap<Arc<str>, Bucket>>,
}

impl RateLimiter {
    fn new(rate: Rate) -> Self {
        Self {
            rate,
            buckets: Mutex::default(),
        }
    }

    /// Takes a token of `key`'s bucket, or says how long until one is there.
    fn take(&self, key: &str) -> Result<(), Duration> {
        let now = Instant::now();
        let rate = self.rate;
        let mut buckets = lock(&self.buckets);
        if !buckets.contains_key(key) && buckets.len() >= MAX_BUCKETS {
            // A full bucket is the same as none: forget those first.
            buckets.retain(|_, bucket| {
                bucket.refill(rate, now);
                bucket.tokens < f64::from(rate.burst)
            });
            if buckets.len() >= MAX_BUCKETS {
                // Every bucket is in use: this key gets no bucket of its own, and no pass.
                return Err(Duration::from_secs_f64(1.0 / rate.per_second));
            }
        }
        let bucket = buckets.entry(Arc::from(key)).or_insert(Bucket {
            tokens: f64::from(rate.burst),
            at: now,
        });
        bucket.refill(rate, now);
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - bucket.tokens) / rate.per_second;
            Err(Duration::from_secs_f64(wait))
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

type Semaphores = HashMap<Arc<str>, Arc<Semaphore>>;

/// The admission state of one endpoint, shared by its workers.
#[derive(Debug)]
pub(super) struct Admission {
    config: AdmissionConfig,
    global: Option<Arc<Semaphore>>,
    tools: HashMap<String, Arc<Semaphore>>,
    /// The semaphores of the principals with requests running or waiting (a principal's entry
    /// goes when its last slot is released).
    principals: Mutex<Semaphores>,
    session_rate: Option<RateLimiter>,
    principal_rate: Option<RateLimiter>,
    waiting: AtomicUsize,
    /// The limits counted cluster-wide, if the endpoint is in a cluster with an admission store.
    cluster: Option<ClusterLimits>,
    pub(super) counters: Counters,
}

/// The slots one admitted request holds; released when dropped.
#[derive(Debug, Default)]
pub(super) struct Permit {
    permits: Vec<OwnedSemaphorePermit>,
    principal: Option<PrincipalSlot>,
    /// The request's leases in the cluster's admission store.
    _cluster: Option<ClusterLease>,
}

/// A principal's slot: its entry is forgotten when the last slot is released.
#[derive(Debug)]
struct PrincipalSlot {
    admission: Arc<Admission>,
    key: Arc<str>,
    semaphore: Arc<Semaphore>,
    permit: Option<OwnedSemaphorePermit>,
}

impl Drop for PrincipalSlot {
    fn drop(&mut self) {
        drop(self.permit.take());
        let mut principals = lock(&self.admission.principals);
        // Held by the table and by this slot only: nobody else runs or waits under it.
        if Arc::strong_count(&self.semaphore) == 2 {
            principals.remove(&self.key);
        }
    }
}

/// Counts one waiting request for as long as it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    pub(super) fn new(config: AdmissionConfig, cluster: Option<&Cluster>) -> Arc<Self> {
        Arc::new(Self {
            cluster: ClusterLimits::new(&config, cluster),
            global: config.max_concurrent.map(|n| Arc::new(Semaphore::new(n))),
            tools: config
                .per_tool
                .iter()
                .map(|(name, &n)| (name.clone(), Arc::new(Semaphore::new(n))))
                .collect(),
            principals: Mutex::default(),
            session_rate: config.session_rate.map(RateLimiter::new),
            principal_rate: config.principal_rate.map(RateLimiter::new),
            waiting: AtomicUsize::new(0),
            counters: Counters::default(),
            config,
        })
    }

    /// Requests waiting for a slot now.
    pub(super) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// The session rate limit of a request naming a live session.
    pub(super) fn session_rate(&self, session: &str) -> Result<(), Refusal> {
        self.rate(self.session_rate.as_ref(), session, Limit::SessionRate)
    }

    /// The principal rate limit of an authenticated request.
    pub(super) fn principal_rate(&self, principal: &str) -> Result<(), Refusal> {
        self.rate(
            self.principal_rate.as_ref(),
            principal,
            Limit::PrincipalRate,
        )
    }

    fn rate(&self, limiter: Option<&RateLimiter>, key: &str, limit: Limit) -> Result<(), Refusal> {
        let Some(limiter) = limiter else {
            return Ok(());
        };
        limiter.take(key).map_err(|wait| {
            let refusal = Refusal::Rate(limit, wait);
            self.counters.count(refusal);
            refusal
        })
    }

    /// Admits a request of `principal` (calling `tool`, if any): its slots, once every
    /// concurrency limit has room. Waits in the bounded queue when one is full, and gives up
    /// when `draining` resolves. In a cluster with an admission store, the cluster-wide limits
    /// are then counted there (see [`admission_cluster`](super::admission_cluster)).
    ///
    /// # Cancel safety
    /// Dropping the future gives up the wait and every slot taken so far.
    pub(super) async fn admit(
        self: &Arc<Self>,
        principal: Option<&str>,
        tool: Option<&str>,
        draining: impl std::future::Future<Output = ()>,
    ) -> Result<Permit, Refusal> {
        let mut permit = self.admit_here(principal, tool, draining).await?;
        if let Some(cluster) = &self.cluster {
            permit._cluster = cluster.admit(principal).await.inspect_err(|&refusal| {
                self.counters.count(refusal);
            })?;
        }
        self.counters.admitted.fetch_add(1, Ordering::Relaxed);
        Ok(permit)
    }

    /// Admits at once a request of `principal` (calling `tool`, if any) that no concurrency
    /// limit applies to, here or in the cluster: what most requests are, with no state to
    /// keep while waiting. `None` when a limit applies: [`admit`](Self::admit) counts it.
    pub(super) fn admit_unlimited(
        &self,
        principal: Option<&str>,
        tool: Option<&str>,
    ) -> Option<Permit> {
        if self.cluster.is_some()
            || self.tool_limit(tool).is_some()
            || self.limits_caller(principal)
        {
            return None;
        }
        self.counters.admitted.fetch_add(1, Ordering::Relaxed);
        Some(Permit::default())
    }

    /// The concurrency limit of `tool`, if it has one.
    fn tool_limit(&self, tool: Option<&str>) -> Option<&Arc<Semaphore>> {
        tool.filter(|_| !self.tools.is_empty())
            .and_then(|name| self.tools.get(name))
    }

    /// Whether this node's global or per-principal limit applies to a request of `principal`.
    fn limits_caller(&self, principal: Option<&str>) -> bool {
        self.global.is_some() || (self.config.per_principal.is_some() && principal.is_some())
    }

    /// The local side of [`admit`](Self::admit): this node's slots.
    async fn admit_here(
        self: &Arc<Self>,
        principal: Option<&str>,
        tool: Option<&str>,
        draining: impl std::future::Future<Output = ()>,
    ) -> Result<Permit, Refusal> {
        let mut permit = Permit::default();
        let tool_limit = self.tool_limit(tool);
        if tool_limit.is_none() && !self.limits_caller(principal) {
            // No limit applies: nothing to hold.
            return Ok(permit);
        }
        // Most specific first: a request waiting for its tool holds no global slot.
        let mut wanted: Vec<(Limit, Arc<Semaphore>)> = Vec::with_capacity(3);
        if let Some(semaphore) = tool_limit {
            wanted.push((Limit::Tool, semaphore.clone()));
        }
        if let (Some(limit), Some(key)) = (self.config.per_principal, principal) {
            let semaphore = lock(&self.principals)
                .entry(Arc::from(key))
                .or_insert_with(|| Arc::new(Semaphore::new(limit)))
                .clone();
            permit.principal = Some(PrincipalSlot {
                admission: self.clone(),
                key: Arc::from(key),
                semaphore: semaphore.clone(),
                permit: None,
            });
            wanted.push((Limit::Principal, semaphore));
        }
        if let Some(semaphore) = &self.global {
            wanted.push((Limit::Global, semaphore.clone()));
        }
        let mut pending = wanted.into_iter().peekable();
        // The slots free now, without waiting.
        while let Some((limit, semaphore)) = pending.peek() {
            match semaphore.clone().try_acquire_owned() {
                Ok(slot) => {
                    permit.hold(*limit, slot);
                    pending.next();
                }
                Err(_) => break,
            }
        }
        let Some((first_full, _)) = pending.peek() else {
            return Ok(permit);
        };
        let first_full = *first_full;
        let max_waiting = self.config.max_waiting;
        if self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max_waiting).then_some(n + 1)
            })
            .is_err()
        {
            let refusal = Refusal::QueueFull(first_full);
            self.counters.count(refusal);
            return Err(refusal);
        }
        let _waiting = Waiting(&self.waiting);
        self.counters.queued.fetch_add(1, Ordering::Relaxed);
        let deadline = Instant::now() + self.config.max_wait;
        tokio::pin!(draining);
        for (limit, semaphore) in pending {
            let acquired = tokio::select! {
                () = &mut draining => return Err(Refusal::Draining),
                acquired = tokio::time::timeout_at(deadline, semaphore.acquire_owned()) => acquired,
            };
            match acquired {
                Ok(Ok(slot)) => permit.hold(limit, slot),
                // Never closed: the semaphores live as long as this.
                Ok(Err(_)) | Err(_) => {
                    let refusal = Refusal::WaitTimedOut(limit);
                    self.counters.count(refusal);
                    return Err(refusal);
                }
            }
        }
        Ok(permit)
    }

    /// How long a client refused by a full concurrency limit should wait before retrying.
    fn retry_after(&self, refusal: Refusal) -> Duration {
        match refusal {
            Refusal::Rate(_, wait) | Refusal::ClusterRate(_, wait) => wait,
            Refusal::QueueFull(_) | Refusal::WaitTimedOut(_) | Refusal::ClusterFull(_) => self
                .config
                .max_wait
                .clamp(Duration::from_millis(100), Duration::from_secs(5)),
            Refusal::Draining | Refusal::StoreUnavailable => Duration::from_secs(1),
        }
    }

    /// The answer to a refused request: 429 with `Retry-After` (503 when draining), and a
    /// JSON-RPC error with `data.retryAfterMs` (see the [module docs](self)).
    pub(super) fn refusal(&self, refusal: Refusal, id: Option<&RequestId>) -> HttpResponse {
        if refusal == Refusal::Draining {
            return super::drain::draining_response(id);
        }
        if refusal == Refusal::StoreUnavailable {
            return admission_store_unavailable(id);
        }
        let wait = self.retry_after(refusal);
        tracing::debug!(
            ?refusal,
            retry_after_ms = wait.as_millis() as u64,
            "refused a request (admission control)"
        );
        let (limit, message) = match refusal {
            Refusal::Rate(limit, _) => (limit, "rate limit exceeded".to_owned()),
            Refusal::QueueFull(limit) if self.config.max_waiting == 0 => (
                limit,
                format!(
                    "server overloaded: the {} concurrency limit is full (no wait queue)",
                    limit.as_str()
                ),
            ),
            Refusal::QueueFull(limit) => (
                limit,
                format!(
                    "server overloaded: the {} concurrency limit is full and so is its wait \
                     queue ({} requests)",
                    limit.as_str(),
                    self.config.max_waiting
                ),
            ),
            Refusal::WaitTimedOut(limit) => (
                limit,
                format!(
                    "server overloaded: no slot of the {} concurrency limit freed up within {} ms",
                    limit.as_str(),
                    self.config.max_wait.as_millis()
                ),
            ),
            Refusal::ClusterRate(limit, _) => {
                (limit, "cluster-wide rate limit exceeded".to_owned())
            }
            Refusal::ClusterFull(limit) => (
                limit,
                format!(
                    "server overloaded: the cluster-wide {} concurrency limit is full (counted \
                     over every node of the cluster)",
                    limit.as_str()
                ),
            ),
            Refusal::Draining | Refusal::StoreUnavailable => (Limit::Global, String::new()),
        };
        overloaded(id, limit, &message, wait)
    }
}

/// The 503 of a request a cluster-wide limit applies to while the admission store fails
/// (fail closed: an uncounted request could break the limit).
fn admission_store_unavailable(id: Option<&RequestId>) -> HttpResponse {
    let error = ErrorObject::new(
        code::SERVER_BUSY,
        "the cluster's admission store is unavailable, so the cluster-wide limits cannot be \
         counted; retry later",
    );
    let mut response = super::respond::error_response(StatusCode::SERVICE_UNAVAILABLE, id, &error);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// The 429 answer for `limit`, retry after `wait`.
fn overloaded(id: Option<&RequestId>, limit: Limit, message: &str, wait: Duration) -> HttpResponse {
    let millis = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
    let error = ErrorObject::new(code::OVERLOADED, format!("{message}; retry later"))
        .with_data(json!({ "retryAfterMs": millis, "limit": limit.as_str() }));
    let seconds = millis.div_ceil(1000).max(1);
    let mut response = super::respond::error_response(StatusCode::TOO_MANY_REQUESTS, id, &error);
    if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

impl Permit {
    fn hold(&mut self, limit: Limit, slot: OwnedSemaphorePermit) {
        match (&mut self.principal, limit) {
            (Some(principal), Limit::Principal) => principal.permit = Some(slot),
            _ => self.permits.push(slot),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_bucket_allows_its_burst_then_refills_at_its_rate() {
        let limiter = RateLimiter::new(Rate::per_second(2).burst(3));
        for _ in 0..3 {
            assert!(limiter.take("a").is_ok());
        }
        let wait = limiter.take("a").unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_millis(500));
        // Another key has a bucket of its own.
        assert!(limiter.take("b").is_ok());
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(limiter.take("a").is_ok());
        assert!(limiter.take("a").is_err());
    }

    #[test]
    fn only_a_request_no_limit_applies_to_is_admitted_at_once() {
        let none = Admission::new(AdmissionConfig::new(), None);
        assert!(none.admit_unlimited(Some("alice"), Some("echo")).is_some());
        assert!(none.admit_unlimited(None, None).is_some());
        assert_eq!(none.counters.admitted.load(Ordering::Relaxed), 2);

        let per_tool = Admission::new(
            AdmissionConfig::new().max_concurrent_per_tool("slow", 1),
            None,
        );
        assert!(per_tool.admit_unlimited(None, Some("slow")).is_none());
        assert!(per_tool.admit_unlimited(None, Some("echo")).is_some());
        assert!(per_tool.admit_unlimited(None, None).is_some());

        let per_principal =
            Admission::new(AdmissionConfig::new().max_concurrent_per_principal(1), None);
        assert!(per_principal.admit_unlimited(Some("alice"), None).is_none());
        assert!(per_principal.admit_unlimited(None, None).is_some());

        let global = Admission::new(AdmissionConfig::new().max_concurrent(1), None);
        assert!(global.admit_unlimited(None, None).is_none());
        // What was not admitted at once is not counted.
        assert_eq!(global.counters.admitted.load(Ordering::Relaxed), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_limit_queues_up_to_its_cap_then_refuses() {
        let admission = Admission::new(
            AdmissionConfig::new()
                .max_concurrent(1)
                .queue(1, Duration::from_secs(1)),
            None,
        );
        let never = std::future::pending::<()>;
        let first = admission.admit(None, None, never()).await.unwrap();
        let waiter = {
            let admission = admission.clone();
            tokio::spawn(async move { admission.admit(None, None, never()).await.map(drop) })
        };
        while admission.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        let full = admission.admit(None, None, never()).await.unwrap_err();
        assert_eq!(full, Refusal::QueueFull(Limit::Global));
        drop(first);
        assert!(waiter.await.unwrap().is_ok());
        let _held = admission.admit(None, None, never()).await.unwrap();
        let timed_out = admission.admit(None, None, never()).await.unwrap_err();
        assert_eq!(timed_out, Refusal::WaitTimedOut(Limit::Global));
    }

    #[tokio::test]
    async fn a_principal_entry_goes_with_its_last_slot() {
        let admission =
            Admission::new(AdmissionConfig::new().max_concurrent_per_principal(2), None);
        let never = std::future::pending::<()>;
        let a = admission.admit(Some("alice"), None, never()).await.unwrap();
        let b = admission.admit(Some("alice"), None, never()).await.unwrap();
        assert_eq!(lock(&admission.principals).len(), 1);
        drop(a);
        assert_eq!(lock(&admission.principals).len(), 1);
        drop(b);
        assert!(lock(&admission.principals).is_empty());
    }
}
