//! The connection to a Redis server that the stores and the bus share.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use actix_mcp_actors::{NodeId, SessionId, StoreError};
use futures::FutureExt as _;
use futures::future::{BoxFuture, Shared};
use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};

/// How long a Redis command may take before it fails (and the request that needed it gets a
/// 503); the connection is re-established in the background.
pub(super) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

///
/// Requests' commands go on a connection of the calling thread's own runtime (each actix-web
/// worker opens one on its first request), so a round trip never leaves the worker's thread;
/// background work (and a thread with no runtime) uses one connection shared by all, which
/// reconnects by itself.
#[derive(Clone)]
pub struct Redis {
    pub(super) client: redis::Client,
    pub(super) conn: ConnectionManager,
    pub(super) prefix: Arc<str>,
    /// Tells this handle (and its clones) apart from other handles in a thread's connections.
    handle: u64,
}

/// The next [`Redis::handle`].
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

/// After a failed attempt to open a thread's own connection, how long its commands fail at
/// once before it tries again.
const LOCAL_RETRY: Duration = Duration::from_secs(1);

thread_local! {
    /// This thread's connections, per [`Redis::handle`].
    static LOCAL: RefCell<Vec<(u64, Local)>> = const { RefCell::new(Vec::new()) };
}

/// A thread's own connection to one Redis server.
enum Local {
    /// Being opened: every request of the thread waits for the same attempt.
    Opening(Shared<BoxFuture<'static, Result<LocalConn, String>>>),
    /// Open.
    Open(LocalConn),
    /// The last attempt failed (`why`): commands fail at once until `until`.
    Failed { until: Instant, why: String },
}

/// A thread's own connection, its driver a task of the thread's runtime.
#[derive(Clone)]
struct LocalConn {
    conn: MultiplexedConnection,
    /// Whether that runtime still runs.
    alive: Arc<AtomicBool>,
    /// Ends the task watching the runtime when the last clone goes.
    _watch: Arc<tokio::sync::oneshot::Sender<()>>,
}

/// Clears its flag when dropped: it lives in a task of a runtime, so the flag says whether
/// that runtime (and the connection driver spawned on it) still runs.
struct RuntimeAlive(Arc<AtomicBool>);

impl Drop for RuntimeAlive {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The connection a command goes on: this thread's own, or the shared one.
pub(super) enum Conn {
    Local(MultiplexedConnection),
    Shared(ConnectionManager),
}

impl redis::aio::ConnectionLike for Conn {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        match self {
            Self::Local(conn) => conn.req_packed_command(cmd),
            Self::Shared(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        match self {
            Self::Local(conn) => conn.req_packed_commands(pipeline, offset, count),
            Self::Shared(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Local(conn) => conn.get_db(),
            Self::Shared(conn) => conn.get_db(),
        }
    }
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redis")
            .field("server", &self.client.get_connection_info().addr())
            .field("prefix", &self.prefix)
            .finish()
    }
}

/// A command or a pipeline, run on a request's connection by [`Redis::query`].
pub(super) trait Query {
    fn run<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        conn: &'a mut Conn,
    ) -> BoxFuture<'a, redis::RedisResult<T>>;
}

impl Query for redis::Cmd {
    fn run<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        conn: &'a mut Conn,
    ) -> BoxFuture<'a, redis::RedisResult<T>> {
        Box::pin(self.query_async(conn))
    }
}

impl<Q: Query + ?Sized> Query for &mut Q {
    fn run<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        conn: &'a mut Conn,
    ) -> BoxFuture<'a, redis::RedisResult<T>> {
        (**self).run(conn)
    }
}

impl Query for redis::ScriptInvocation<'_> {
    fn run<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        conn: &'a mut Conn,
    ) -> BoxFuture<'a, redis::RedisResult<T>> {
        Box::pin(self.invoke_async(conn))
    }
}

impl Query for redis::Pipeline {
    fn run<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        conn: &'a mut Conn,
    ) -> BoxFuture<'a, redis::RedisResult<T>> {
        Box::pin(self.query_async(conn))
    }
}

pub(super) fn unavailable(err: &redis::RedisError) -> StoreError {
    StoreError::Unavailable(format!("redis: {err}"))
}

pub(super) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

pub(super) fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `url` as errors and logs may show it: without its password (nor its user name, which some
/// deployments use as a secret too), or only its scheme when it does not parse.
fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() || !parsed.username().is_empty() {
                let _ = parsed.set_password(None);
                let _ = parsed.set_username("");
                format!("{:?} (credentials hidden)", parsed.as_str())
            } else {
                format!("{:?}", parsed.as_str())
            }
        }
        Err(_) => {
            let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
            format!("of scheme {scheme:?} (unparseable; not shown)")
        }
    }
}

impl Redis {
    /// Connects to the server at `url` and checks it answers; keys start with `prefix`.
    ///
    /// # Errors
    /// When the URL is malformed, or the server cannot be reached or does not answer `PING`.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, StoreError> {
        let shown = redacted(url);
        let client = redis::Client::open(url)
            .map_err(|err| StoreError::Unavailable(format!("redis url {shown}: {err}")))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(RESPONSE_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(2));
        let conn = ConnectionManager::new_with_config(client.clone(), config)
            .await
            .map_err(|err| {
                StoreError::Unavailable(format!("could not connect to redis at {shown}: {err}"))
            })?;
        let redis = Self {
            client,
            conn,
            prefix: prefix.into(),
            handle: NEXT_HANDLE.fetch_add(1, Ordering::Relaxed),
        };
        redis.ping().await?;
        Ok(redis)
    }

    /// The connection for a request's command: this thread's own (opened on first use), or
    /// the shared one where the thread has no runtime. When it cannot be opened, the commands
    /// of the next second fail at once (the server is down or frozen: their requests get a 503
    /// now rather than after another connection timeout).
    async fn request_conn(&self) -> Result<Conn, StoreError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Ok(Conn::Shared(self.conn.clone()));
        }
        let opening = LOCAL.with_borrow_mut(|local| {
            let slot = local.iter().position(|(handle, _)| *handle == self.handle);
            if let Some(at) = slot {
                match &local[at].1 {
                    Local::Open(open) if open.alive.load(Ordering::Acquire) => {
                        return Err(Ok(Conn::Local(open.conn.clone())));
                    }
                    Local::Opening(opening) => return Ok(opening.clone()),
                    Local::Failed { until, why } if Instant::now() < *until => {
                        return Err(Err(StoreError::Unavailable(why.clone())));
                    }
                    // Its runtime is gone, or it is time to try again.
                    Local::Open(_) | Local::Failed { .. } => {
                        local.swap_remove(at);
                    }
                }
            }
            let opening = self.open_local().shared();
            local.push((self.handle, Local::Opening(opening.clone())));
            Ok(opening)
        });
        let opening = match opening {
            Ok(opening) => opening,
            Err(conn) => return conn,
        };
        let opened = opening.clone().await;
        LOCAL.with_borrow_mut(|local| {
            let Some(at) = local.iter().position(|(handle, _)| *handle == self.handle) else {
                return;
            };
            // Only the attempt this request waited for is settled here.
            if matches!(&local[at].1, Local::Opening(current) if current.ptr_eq(&opening)) {
                local[at].1 = match &opened {
                    Ok(open) => Local::Open(open.clone()),
                    Err(why) => Local::Failed {
                        until: Instant::now() + LOCAL_RETRY,
                        why: why.clone(),
                    },
                };
            }
        });
        opened
            .map(|open| Conn::Local(open.conn))
            .map_err(StoreError::Unavailable)
    }

    /// Opens a connection whose driver runs on the current runtime, and a watch on that
    /// runtime.
    fn open_local(&self) -> BoxFuture<'static, Result<LocalConn, String>> {
        let client = self.client.clone();
        Box::pin(async move {
            let config = redis::AsyncConnectionConfig::new()
                .set_connection_timeout(Some(RESPONSE_TIMEOUT))
                .set_response_timeout(Some(RESPONSE_TIMEOUT));
            match client
                .get_multiplexed_async_connection_with_config(&config)
                .await
            {
                Ok(conn) => {
                    // Polled by a request of this thread: the watch runs on its runtime.
                    let alive = Arc::new(AtomicBool::new(true));
                    let guard = RuntimeAlive(alive.clone());
                    let (watch, dropped) = tokio::sync::oneshot::channel::<()>();
                    tokio::spawn(async move {
                        let _guard = guard;
                        let _ = dropped.await;
                    });
                    Ok(LocalConn {
                        conn,
                        alive,
                        _watch: Arc::new(watch),
                    })
                }
                Err(err) => Err(format!("redis: {err}")),
            }
        })
    }

    /// Runs a request's command (a [`redis::Cmd`] or a [`redis::Pipeline`]) on
    /// [`request_conn`](Self::request_conn); a connection that failed is dropped, so the next
    /// command opens another.
    pub(super) async fn query<T, Q>(&self, query: &Q) -> Result<T, StoreError>
    where
        T: redis::FromRedisValue + Send,
        Q: Query + ?Sized,
    {
        let mut conn = self.request_conn().await?;
        let result = query.run::<T>(&mut conn).await;
        if let (Err(err), Conn::Local(_)) = (&result, &conn)
            && (err.is_io_error() || err.is_connection_dropped() || err.is_timeout())
        {
            LOCAL.with_borrow_mut(|local| {
                local.retain(|(handle, entry)| {
                    *handle != self.handle || matches!(entry, Local::Opening(_))
                });
            });
        }
        result.map_err(|err| unavailable(&err))
    }

    pub(super) async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .map(drop)
            .map_err(|err| unavailable(&err))
    }

    /// `<prefix>:{<session>}:<what>`, allocated once.
    pub(super) fn session_part(&self, id: &SessionId, what: &str) -> String {
        let mut key = String::with_capacity(self.prefix.len() + id.as_str().len() + what.len() + 4);
        key.push_str(&self.prefix);
        key.push_str(":{");
        key.push_str(id.as_str());
        key.push_str("}:");
        key.push_str(what);
        key
    }

    pub(super) fn session_key(&self, id: &SessionId) -> String {
        self.session_part(id, "session")
    }

    pub(super) fn events_key(&self, id: &SessionId) -> String {
        self.session_part(id, "events")
    }

    pub(super) fn count_key(&self) -> String {
        format!("{}:sessions", self.prefix)
    }

    /// The key a single-use value is claimed under (its own hash slot).
    pub(super) fn claim_key(&self, key: &str) -> String {
        format!("{}:claim:{{{key}}}", self.prefix)
    }

    pub(super) fn channel(&self, to: Option<&NodeId>) -> String {
        match to {
            None => format!("{}:bus", self.prefix),
            Some(node) => format!("{}:bus:{node}", self.prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_redis_url_is_shown_without_its_credentials() {
        let shown = super::redacted("redis://admin:s3cret@10.0.0.1:6379/2");
        assert!(
            !shown.contains("s3cret") && !shown.contains("admin"),
            "{shown}"
        );
        assert!(shown.contains("10.0.0.1:6379"), "{shown}");
        let shown = super::redacted("redis://:s3cret@host");
        assert!(!shown.contains("s3cret"), "{shown}");
        let shown = super::redacted("redis://us er:s3cret@[bad");
        assert!(!shown.contains("s3cret"), "{shown}");
    }
}
