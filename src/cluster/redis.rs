//! The cluster's session store, event store and bus on Redis (feature `redis`).
//!
//! ```no_run
//! # async fn run(server: actix_mcp::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use actix_mcp::cluster::Cluster;
//!
//! let cluster = Cluster::redis("redis://127.0.0.1:6379").await?;
//! let mcp = server.http("/mcp").cluster(cluster);
//! # Ok(()) }
//! ```
//!
//! Keys (`prefix` defaults to `mcp`), each session's under one hash tag so that they would share
//! a slot of a Redis Cluster, and each with a time to live so nothing outlives its session. The
//! connection is to one server (or a proxy in front of a cluster): a Redis Cluster client is not
//! built in.
//!
//! | key | type | what | expires |
//! | --- | --- | --- | --- |
//! | `mcp:{<session>}:session` | string | the [`SessionRecord`] as JSON | idle timeout, renewed by each request |
//! | `mcp:{<session>}:events` | list | `<stream> <seq> <event data>` per event of the session's streams, at least the newest `max_events` | the event TTL, renewed by each write |
//! | `mcp:sessions` | sorted set | live sessions by expiry (the cluster-wide count), renewed with the records of the sessions busy on each node every third of the idle timeout (at most a minute) | members pruned as they expire |
//! | `mcp:task:{<task>}` | string | a task of the Tasks extension ([`RedisTaskStore`]) | with the task |
//! | `mcp:tasks` | sorted set | live tasks by expiry (the store's limit) | members pruned as they expire |
//!
//! Channels: `mcp:bus` (to every node) and `mcp:bus:<node>` (to one).
//!
//! A request costs one round trip (one `GETEX` of its session's record, which renews it; a
//! record this node read before and that has not changed is not decoded again); events are
//! written behind, in pipelined batches.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use actix_mcp_actors::{
    Bus, Created, Envelope, EventId, EventStore, InMemoryEventStore, NodeId, Recipients, Replay,
    ReplayFuture, SessionEvents, SessionId, SessionRecord, SessionStore, StoreError, StoreFuture,
};
use futures::FutureExt as _;
use futures::StreamExt as _;
use futures::future::{BoxFuture, Shared};
use futures::stream::BoxStream;
use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use tokio::sync::mpsc;

use super::Cluster;
use crate::protocol::DetailedTask;
use crate::server::tasks::{StoredTask, TaskStore, TaskStoreError};

/// How long a Redis command may take before it fails (and the request that needed it gets a
/// 503); the connection is re-established in the background.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

impl Cluster {
    /// A cluster on the Redis server at `url` (`redis://[user:password@]host:port[/db]`, or
    /// `rediss://` for TLS when the `redis` crate has it): the session store, event store and
    /// bus of this module, with the default key prefix `mcp`.
    ///
    /// # Errors
    /// When the server cannot be reached or does not answer `PING`: a node does not start
    /// without its store.
    pub async fn redis(url: &str) -> Result<Self, StoreError> {
        Ok(Self::on_redis(Redis::connect(url, "mcp").await?))
    }

    /// A cluster on a connected [`Redis`]: its session store, event store and bus. (Share the
    /// connection with a [`RedisTaskStore`] for the Tasks extension.)
    pub fn on_redis(redis: Redis) -> Self {
        Self::new(
            Arc::new(RedisSessionStore::new(redis.clone())),
            Arc::new(RedisBus::new(redis.clone())),
        )
        .event_store(Arc::new(RedisEventStore::new(redis)))
    }
}

/// A connection to a Redis server and the key prefix, shared by the stores of this module.
///
/// Requests' commands go on a connection of the calling thread's own runtime (each actix-web
/// worker opens one on its first request), so a round trip never leaves the worker's thread;
/// background work (and a thread with no runtime) uses one connection shared by all, which
/// reconnects by itself.
#[derive(Clone)]
pub struct Redis {
    client: redis::Client,
    conn: ConnectionManager,
    prefix: Arc<str>,
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
enum Conn {
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
trait Query {
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

fn unavailable(err: &redis::RedisError) -> StoreError {
    StoreError::Unavailable(format!("redis: {err}"))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

fn now_millis() -> u64 {
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
    async fn query<T, Q>(&self, query: &Q) -> Result<T, StoreError>
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

    async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .map(drop)
            .map_err(|err| unavailable(&err))
    }

    /// `<prefix>:{<session>}:<what>`, allocated once.
    fn session_part(&self, id: &SessionId, what: &str) -> String {
        let mut key = String::with_capacity(self.prefix.len() + id.as_str().len() + what.len() + 4);
        key.push_str(&self.prefix);
        key.push_str(":{");
        key.push_str(id.as_str());
        key.push_str("}:");
        key.push_str(what);
        key
    }

    fn session_key(&self, id: &SessionId) -> String {
        self.session_part(id, "session")
    }

    fn events_key(&self, id: &SessionId) -> String {
        self.session_part(id, "events")
    }

    fn count_key(&self) -> String {
        format!("{}:sessions", self.prefix)
    }

    /// The key a single-use value is claimed under (its own hash slot).
    fn claim_key(&self, key: &str) -> String {
        format!("{}:claim:{{{key}}}", self.prefix)
    }

    fn channel(&self, to: Option<&NodeId>) -> String {
        match to {
            None => format!("{}:bus", self.prefix),
            Some(node) => format!("{}:bus:{node}", self.prefix),
        }
    }
}

/// `create_within` in one round trip: prunes the expired from the count, refuses when the
/// cluster is full (-1), else stores the record unless its id is taken (0) and counts it (1).
/// KEYS: the record, the count; ARGV: the record's JSON, its time to live (ms), its expiry
/// (ms since the epoch), now (ms), the cap, the session id.
static CREATE_SESSION: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
  return -1
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[6])
return 1
",
    )
});

/// `establish` in one round trip: the record's `"established":false` (its first occurrence is
/// the record's own field: the id and owner before it are JSON strings, whose quotes would be
/// escaped) becomes `true`, its time to live renewed; 0 when there is no record.
/// KEYS: the record; ARGV: its time to live (ms).
static ESTABLISH_SESSION: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r#"
local record = redis.call('GET', KEYS[1])
if not record then
  return 0
end
local established, changed = string.gsub(record, '"established":false', '"established":true', 1)
if changed > 0 then
  redis.call('SET', KEYS[1], established, 'PX', ARGV[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1
"#,
    )
});

/// The [`SessionStore`] on Redis. See the [module docs](self) for its keys.
///
/// It remembers the records it read last (their text and what it read from it), so a record
/// that has not changed since is not read again, and [`load`](SessionStore::load) hands out
/// the same `Arc` for it.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: Redis,
    read: Arc<std::sync::Mutex<HashMap<SessionId, ReadRecord>>>,
}

/// A record as this node read it last: its stored text, and what that text says.
#[derive(Debug)]
struct ReadRecord {
    text: Box<str>,
    record: Arc<SessionRecord>,
}

/// Most records a [`RedisSessionStore`] remembers (it forgets them all when it would hold more:
/// the next load of each reads it again).
const READ_RECORDS: usize = 16_384;

impl RedisSessionStore {
    /// The store on `redis`.
    pub fn new(redis: Redis) -> Self {
        Self {
            redis,
            read: Arc::default(),
        }
    }

    fn read_records(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, ReadRecord>> {
        self.read
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What the stored `text` of session `id` says: from memory when this node read the same
    /// text last.
    fn read(&self, id: &SessionId, text: String) -> Result<Arc<SessionRecord>, StoreError> {
        if let Some(read) = self.read_records().get(id)
            && *read.text == *text
        {
            return Ok(read.record.clone());
        }
        let record: Arc<SessionRecord> = Arc::new(
            serde_json::from_str(&text)
                .map_err(|err| StoreError::Corrupt(format!("session {id}: {err}")))?,
        );
        let mut read = self.read_records();
        if read.len() >= READ_RECORDS {
            read.clear();
        }
        read.insert(
            id.clone(),
            ReadRecord {
                text: text.into_boxed_str(),
                record: record.clone(),
            },
        );
        Ok(record)
    }
}

fn encode(record: &SessionRecord) -> Result<String, StoreError> {
    serde_json::to_string(record).map_err(|err| StoreError::Corrupt(err.to_string()))
}

impl SessionStore for RedisSessionStore {
    fn claim_once<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let claimed: Option<String> = self
                .redis
                .query(
                    redis::cmd("SET")
                        .arg(self.redis.claim_key(key))
                        .arg(1)
                        .arg("NX")
                        .arg("PX")
                        .arg(millis(ttl).max(1)),
                )
                .await?;
            Ok(claimed.is_some())
        })
    }

    fn create<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let json = encode(record)?;
            let (created,): (Option<String>,) = self
                .redis
                .query(
                    &redis::pipe()
                        .cmd("SET")
                        .arg(self.redis.session_key(&record.id))
                        .arg(json)
                        .arg("NX")
                        .arg("PX")
                        .arg(millis(ttl))
                        .cmd("ZADD")
                        .arg(self.redis.count_key())
                        .arg(now_millis().saturating_add(millis(ttl)))
                        .arg(record.id.as_str())
                        .ignore(),
                )
                .await?;
            Ok(created.is_some())
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a SessionId,
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        Box::pin(async move {
            // The record only: its place in the cluster-wide count is renewed by `touch`, for
            // the sessions busy on some node.
            let key = self.redis.session_key(id);
            let mut getex = redis::Cmd::with_capacity(4, key.len() + 32);
            getex.arg("GETEX").arg(key).arg("PX").arg(millis(ttl));
            let json: Option<String> = self.redis.query(&getex).await?;
            match json {
                Some(text) => self.read(id, text).map(Some),
                None => {
                    self.read_records().remove(id);
                    Ok(None)
                }
            }
        })
    }

    fn establish<'a>(&'a self, id: &'a SessionId, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let known: i64 = self
                .redis
                .query(
                    ESTABLISH_SESSION
                        .key(self.redis.session_key(id))
                        .arg(millis(ttl)),
                )
                .await?;
            Ok(known == 1)
        })
    }

    fn touch<'a>(&'a self, ids: &'a [SessionId], ttl: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if ids.is_empty() {
                return Ok(());
            }
            let expiry = now_millis().saturating_add(millis(ttl));
            let mut pipe = redis::Pipeline::with_capacity(ids.len() + 1);
            for id in ids {
                pipe.cmd("PEXPIRE")
                    .arg(self.redis.session_key(id))
                    .arg(millis(ttl))
                    .ignore();
            }
            let zadd = pipe.cmd("ZADD").arg(self.redis.count_key()).arg("XX");
            for id in ids {
                zadd.arg(expiry).arg(id.as_str());
            }
            zadd.ignore();
            self.redis.query::<(), _>(&pipe).await
        })
    }

    fn save<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let json = encode(record)?;
            let saved: Option<String> = self
                .redis
                .query(
                    &redis::cmd("SET")
                        .arg(self.redis.session_key(&record.id))
                        .arg(json)
                        .arg("XX")
                        .arg("PX")
                        .arg(millis(ttl)),
                )
                .await?;
            Ok(saved.is_some())
        })
    }

    fn delete<'a>(&'a self, id: &'a SessionId) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let (deleted,): (u64,) = self
                .redis
                .query(
                    &redis::pipe()
                        .cmd("DEL")
                        .arg(self.redis.session_key(id))
                        .cmd("UNLINK")
                        .arg(self.redis.events_key(id))
                        .ignore()
                        .cmd("ZREM")
                        .arg(self.redis.count_key())
                        .arg(id.as_str())
                        .ignore(),
                )
                .await?;
            self.read_records().remove(id);
            Ok(deleted > 0)
        })
    }

    fn create_within<'a>(
        &'a self,
        record: &'a SessionRecord,
        ttl: Duration,
        cap: usize,
    ) -> StoreFuture<'a, Created> {
        Box::pin(async move {
            let json = encode(record)?;
            let now = now_millis();
            let created: i64 = self
                .redis
                .query(
                    CREATE_SESSION
                        .key(self.redis.session_key(&record.id))
                        .key(self.redis.count_key())
                        .arg(json)
                        .arg(millis(ttl))
                        .arg(now.saturating_add(millis(ttl)))
                        .arg(now)
                        .arg(cap)
                        .arg(record.id.as_str()),
                )
                .await?;
            Ok(match created {
                1 => Created::Stored,
                0 => Created::Taken,
                _ => Created::Full,
            })
        })
    }

    fn count(&self) -> StoreFuture<'_, Option<usize>> {
        Box::pin(async move {
            let (count,): (usize,) = self
                .redis
                .query(
                    &redis::pipe()
                        .cmd("ZREMRANGEBYSCORE")
                        .arg(self.redis.count_key())
                        .arg("-inf")
                        .arg(now_millis())
                        .ignore()
                        .cmd("ZCARD")
                        .arg(self.redis.count_key()),
                )
                .await?;
            Ok(Some(count))
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(self.redis.ping())
    }
}

/// The [`Bus`] on Redis pub/sub: one channel to every node, one per node. Delivery is at most
/// once (pub/sub keeps nothing for a node that is not listening); a subscriber reconnects by
/// itself, within a second of the server's return.
#[derive(Debug, Clone)]
pub struct RedisBus {
    redis: Redis,
}

impl RedisBus {
    /// The bus on `redis`.
    pub fn new(redis: Redis) -> Self {
        Self { redis }
    }
}

impl Bus for RedisBus {
    fn publish(&self, envelope: Envelope) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let channel = match &envelope.to {
                Recipients::All => self.redis.channel(None),
                Recipients::Node(node) => self.redis.channel(Some(node)),
            };
            let json = serde_json::to_string(&envelope)
                .map_err(|err| StoreError::Corrupt(err.to_string()))?;
            self.redis
                .query::<u64, _>(redis::cmd("PUBLISH").arg(channel).arg(json))
                .await
                .map(drop)
        })
    }

    fn subscribe(&self, node: &NodeId) -> BoxFuture<'static, BoxStream<'static, Envelope>> {
        let (sender, receiver) = mpsc::channel::<Envelope>(1024);
        let (in_place_tx, in_place) = tokio::sync::oneshot::channel::<()>();
        let mut in_place_tx = Some(in_place_tx);
        let redis = self.redis.clone();
        let node = node.clone();
        let own = sent_by(&node);
        tokio::spawn(async move {
            let channels = [redis.channel(None), redis.channel(Some(&node))];
            let mut failures = 0u32;
            while !sender.is_closed() {
                let subscribed = async {
                    let mut pubsub = redis.client.get_async_pubsub().await?;
                    pubsub.subscribe(&channels).await?;
                    Ok::<_, redis::RedisError>(pubsub)
                };
                let pubsub = match tokio::time::timeout(RESPONSE_TIMEOUT, subscribed).await {
                    Ok(Ok(pubsub)) => pubsub,
                    Ok(Err(err)) => {
                        failures += 1;
                        if failures == 1 {
                            tracing::warn!(%err, "the cluster bus is unreachable; retrying");
                        }
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                    Err(_) => {
                        failures += 1;
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                };
                if failures > 0 {
                    tracing::info!("the cluster bus is back");
                    failures = 0;
                }
                if let Some(in_place_tx) = in_place_tx.take() {
                    let _ = in_place_tx.send(());
                }
                let mut messages = pubsub.into_on_message();
                while let Some(message) = messages.next().await {
                    let Ok(payload) = message.get_payload::<String>() else {
                        continue;
                    };
                    // This node's own broadcasts come back: skip them unread (an envelope
                    // starts with its sender).
                    if payload.starts_with(&*own) {
                        continue;
                    }
                    let envelope = match serde_json::from_str::<Envelope>(&payload) {
                        Ok(envelope) => envelope,
                        Err(err) => {
                            tracing::warn!(%err, "ignored an unreadable message on the cluster bus");
                            continue;
                        }
                    };
                    if envelope.from == node {
                        continue;
                    }
                    if sender.send(envelope).await.is_err() {
                        return;
                    }
                }
                // The connection ended: reconnect.
                tracing::warn!("lost the cluster bus; reconnecting");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        let stream = futures::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|envelope| (envelope, receiver))
        })
        .boxed();
        Box::pin(async move {
            if tokio::time::timeout(RESPONSE_TIMEOUT, in_place)
                .await
                .is_err()
            {
                tracing::warn!("the cluster bus is not reachable yet; listening as soon as it is");
            }
            stream
        })
    }
}

/// How the text of an [`Envelope`] from `node` starts.
fn sent_by(node: &NodeId) -> String {
    format!(
        "{{\"from\":{}",
        serde_json::to_string(node).unwrap_or_default()
    )
}

/// The [`EventStore`] on Redis: every event of every stream is written (behind, in pipelined
/// batches) to a capped list per session (the newest events of all its streams, as the
/// in-memory store keeps them), so a stream resumes on any node. The events of the streams
/// live on this node are also kept in this node's memory, so resuming those costs no round
/// trip.
#[derive(Debug, Clone)]
pub struct RedisEventStore {
    redis: Redis,
    local: InMemoryEventStore,
    writers: Arc<Writers>,
}

/// A [`RedisEventStore`]'s writers: one per thread that appends events (on that thread's
/// runtime, with its own connection), and one for threads with no runtime.
#[derive(Debug)]
struct Writers {
    /// Tells this store apart in a thread's writers.
    id: u64,
    max_events: usize,
    ttl: Duration,
    /// The writer of threads with no runtime.
    shared: mpsc::Sender<Job>,
    /// Every writer started, for [`EventStore::flush`].
    all: std::sync::Mutex<Vec<mpsc::Sender<Job>>>,
}

thread_local! {
    /// This thread's event writers, per [`Writers::id`].
    static WRITERS: RefCell<Vec<(u64, mpsc::Sender<Job>)>> = const { RefCell::new(Vec::new()) };
}

/// The next [`Writers::id`].
static NEXT_WRITERS: AtomicU64 = AtomicU64::new(1);

/// Events waiting to be written, per writer.
const WRITE_QUEUE: usize = 16_384;

#[derive(Debug)]
enum Job {
    /// An event to write.
    Write {
        session: SessionId,
        id: EventId,
        data: Arc<str>,
    },
    /// Told once every event queued before it is written (or failed).
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// How long [`EventStore::flush`] waits for the writer.
const FLUSH_WAIT: Duration = Duration::from_secs(5);

impl RedisEventStore {
    /// The store on `redis`: the newest 1,024 events of each session, kept at least 30 minutes
    /// after the last one (as long as a session's default idle timeout).
    pub fn new(redis: Redis) -> Self {
        Self::with_limits(redis, 1024, Duration::from_secs(30 * 60))
    }

    /// The store on `redis`, keeping the newest `max_events` events of each session (of all
    /// its streams; a list is trimmed once it holds a quarter more) for at least `ttl` after
    /// the last one (a quarter of `ttl` more at most: a list's TTL is renewed once per quarter,
    /// not by every write).
    pub fn with_limits(redis: Redis, max_events: usize, ttl: Duration) -> Self {
        let max_events = max_events.max(1);
        let (shared, queue) = mpsc::channel(WRITE_QUEUE);
        tokio::spawn(write_behind(redis.clone(), queue, max_events, ttl));
        Self {
            redis,
            local: InMemoryEventStore::default(),
            writers: Arc::new(Writers {
                id: NEXT_WRITERS.fetch_add(1, Ordering::Relaxed),
                max_events,
                ttl,
                all: std::sync::Mutex::new(vec![shared.clone()]),
                shared,
            }),
        }
    }

    /// Queues `job` with this thread's writer (started on first use), or the shared one on a
    /// thread with no runtime; `false` when the writer is too far behind to take it.
    fn queue(&self, job: Job) -> bool {
        if tokio::runtime::Handle::try_current().is_err() {
            return self.writers.shared.try_send(job).is_ok();
        }
        WRITERS.with_borrow_mut(|writers| {
            let mine = self.writers.id;
            if let Some((_, writer)) = writers
                .iter()
                .find(|(id, writer)| *id == mine && !writer.is_closed())
            {
                return writer.try_send(job).is_ok();
            }
            // None yet on this thread, or its runtime has gone: start one here.
            writers.retain(|(id, _)| *id != mine);
            let (writer, queue) = mpsc::channel(WRITE_QUEUE);
            tokio::spawn(write_behind(
                self.redis.clone(),
                queue,
                self.writers.max_events,
                self.writers.ttl,
            ));
            let mut all = self
                .writers
                .all
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            all.retain(|writer| !writer.is_closed());
            all.push(writer.clone());
            drop(all);
            let queued = writer.try_send(job).is_ok();
            writers.push((mine, writer));
            queued
        })
    }
}

/// Writes queued events in batches: one pipeline per wake-up, with one `RPUSH` (of all its
/// events in the batch) per session. A list that has grown a quarter past `max_events` is
/// trimmed back to the newest `max_events` in the next batch (its length is the `RPUSH`'s
/// answer).
///
/// A list's TTL is set to `ttl` and a quarter (see [`Renewals`]) when this writer first writes
/// to it, then at most once per quarter of `ttl`: it always outlives its last event by at least
/// `ttl`, and a busy session's events cost one command per batch, not two. A list the `RPUSH`
/// created (it had expired or been deleted since) gets its TTL in a second pipeline at once.
async fn write_behind(
    redis: Redis,
    mut queue: mpsc::Receiver<Job>,
    max_events: usize,
    ttl: Duration,
) {
    let mut batch = Vec::with_capacity(256);
    let mut flushed = Vec::new();
    // Per session in this batch: its entries, in order.
    let mut sessions: HashMap<SessionId, Vec<String>> = HashMap::new();
    // Lists to trim with the next pipeline.
    let mut overfull: Vec<String> = Vec::new();
    let mut renewals = Renewals::new(ttl);
    let trim_at = max_events
        .saturating_add(max_events / 4)
        .max(max_events + 1);
    let keep = -i64::try_from(max_events).unwrap_or(i64::MAX);
    while queue.recv_many(&mut batch, 256).await > 0 {
        for job in batch.drain(..) {
            match job {
                Job::Write { session, id, data } => {
                    let entry = format!("{} {} {data}", id.stream, id.seq);
                    sessions.entry(session).or_default().push(entry);
                }
                Job::Flush(done) => flushed.push(done),
            }
        }
        if !sessions.is_empty() || !overfull.is_empty() {
            let now = Instant::now();
            let mut pipe = redis::Pipeline::with_capacity(sessions.len() + overfull.len() + 1);
            let mut written = Vec::with_capacity(sessions.len());
            for (session, entries) in &sessions {
                let key = redis.events_key(session);
                pipe.cmd("RPUSH").arg(&key).arg(entries);
                let renewed = renewals.due(session, now);
                if renewed {
                    pipe.cmd("PEXPIRE")
                        .arg(&key)
                        .arg(millis(renewals.ttl))
                        .ignore();
                }
                written.push((key, entries.len(), renewed));
            }
            for key in overfull.drain(..) {
                pipe.cmd("LTRIM").arg(key).arg(keep).arg(-1).ignore();
            }
            match redis.query::<Vec<usize>, _>(&pipe).await {
                Ok(lengths) => {
                    let mut created = redis::Pipeline::new();
                    let mut any_created = false;
                    for ((key, pushed, renewed), length) in written.into_iter().zip(lengths) {
                        if length == pushed && !renewed {
                            created
                                .cmd("PEXPIRE")
                                .arg(&key)
                                .arg(millis(renewals.ttl))
                                .ignore();
                            any_created = true;
                        }
                        if length >= trim_at {
                            overfull.push(key);
                        }
                    }
                    if any_created && let Err(err) = redis.query::<(), _>(&created).await {
                        tracing::warn!(%err, "could not set the TTL of new event lists");
                    }
                }
                Err(err) => {
                    tracing::warn!(%err, "could not store stream events; those cannot be resumed on another node");
                }
            }
            sessions.clear();
            renewals.prune(now);
        }
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
    }
}

/// When a writer last set the TTL of each session's event list.
struct Renewals {
    /// The TTL set: the store's TTL and a quarter, so that a list renewed a quarter of the TTL
    /// ago still outlives a new event by the store's TTL.
    ttl: Duration,
    /// How long after a renewal the next one is due.
    every: Duration,
    last: HashMap<SessionId, Instant>,
    /// The map's size after the last pruning: it is pruned again when it has doubled.
    pruned_at: usize,
}

impl Renewals {
    fn new(ttl: Duration) -> Self {
        Self {
            ttl: ttl.saturating_add(ttl / 4),
            every: ttl / 4,
            last: HashMap::new(),
            pruned_at: 0,
        }
    }

    /// Whether `session`'s list needs its TTL set now (it is then counted as set).
    fn due(&mut self, session: &SessionId, now: Instant) -> bool {
        match self.last.get_mut(session) {
            Some(at) if now.duration_since(*at) < self.every => false,
            Some(at) => {
                *at = now;
                true
            }
            None => {
                self.last.insert(session.clone(), now);
                true
            }
        }
    }

    /// Forgets the renewals that are due anyway (bounded by the sessions written to within
    /// a quarter of the TTL).
    fn prune(&mut self, now: Instant) {
        if self.last.len() > (2 * self.pruned_at).max(1024) {
            let every = self.every;
            self.last.retain(|_, at| now.duration_since(*at) < every);
            self.pruned_at = self.last.len();
        }
    }
}

impl EventStore for RedisEventStore {
    fn open(&self, session: &SessionId) -> Arc<dyn SessionEvents> {
        Arc::new(RedisSessionEvents {
            session: session.clone(),
            local: self.local.open(session),
            store: self.clone(),
        })
    }

    /// Waits (at most 5 s) until every event appended so far is written to Redis.
    fn flush(&self) -> futures::future::BoxFuture<'static, ()> {
        let writers: Vec<mpsc::Sender<Job>> = self
            .writers
            .all
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .filter(|writer| !writer.is_closed())
            .cloned()
            .collect();
        Box::pin(async move {
            let flushed = futures::future::join_all(writers.into_iter().map(|writer| async move {
                let (done, written) = tokio::sync::oneshot::channel();
                if writer.send(Job::Flush(done)).await.is_ok() {
                    let _ = written.await;
                }
            }));
            if tokio::time::timeout(FLUSH_WAIT, flushed).await.is_err() {
                tracing::warn!("the stream events were not all written to redis in time");
            }
        })
    }
}

struct RedisSessionEvents {
    session: SessionId,
    local: Arc<dyn SessionEvents>,
    store: RedisEventStore,
}

impl fmt::Debug for RedisSessionEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSessionEvents")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl SessionEvents for RedisSessionEvents {
    fn append(&self, id: EventId, data: &Arc<str>) {
        self.local.append(id, data);
        let write = Job::Write {
            session: self.session.clone(),
            id,
            data: data.clone(),
        };
        if !self.store.queue(write) {
            tracing::warn!(session = %self.session, %id, "the event writer is behind; an event will not be resumable on another node");
        }
    }

    fn replay_here(&self, after: EventId) -> Replay {
        self.local.replay_here(after)
    }

    fn replay(&self, after: EventId) -> ReplayFuture {
        let here = self.local.replay_here(after);
        if here != Replay::Unknown {
            return Box::pin(std::future::ready(here));
        }
        let redis = self.store.redis.clone();
        let key = redis.events_key(&self.session);
        Box::pin(async move {
            let stored: Vec<String> = match redis
                .query(redis::cmd("LRANGE").arg(&key).arg(0).arg(-1))
                .await
            {
                Ok(stored) => stored,
                Err(err) => {
                    tracing::warn!(%err, "could not read stored events to resume a stream");
                    return Replay::Unknown;
                }
            };
            stored_replay(&stored, after)
        })
    }

    fn finish(&self, stream: u64) {
        self.local.finish(stream);
    }

    fn close(&self) {
        // This node's copy only: the session may live on elsewhere (its actor here may have
        // gone idle, or this node is draining); its stored events expire with it, or go with
        // its DELETE (an event written behind just after a DELETE expires by itself).
        self.local.close();
    }
}

/// What a session's stored list (`<stream> <seq> <data>` entries, oldest first) holds of
/// `after.stream` after `after`.
fn stored_replay(stored: &[String], after: EventId) -> Replay {
    let mut events = Vec::new();
    let mut first = None;
    for entry in stored {
        let mut parts = entry.splitn(3, ' ');
        let (Some(stream), Some(seq), Some(data)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(stream), Ok(seq)) = (stream.parse::<u64>(), seq.parse::<u64>()) else {
            continue;
        };
        if stream != after.stream {
            continue;
        }
        first = Some(first.map_or(seq, |first: u64| first.min(seq)));
        if seq > after.seq {
            events.push((EventId { stream, seq }, Arc::from(data)));
        }
    }
    let Some(first) = first else {
        return Replay::Unknown;
    };
    // Each thread writes its own events in order; events of one stream appended on two
    // threads may interleave.
    events.sort_by_key(|(id, _)| id.seq);
    // A stream's events are numbered from 1 and the list loses its oldest first: when the
    // stream's first kept event comes after the one that follows `after`, events were trimmed
    // before they could be replayed.
    Replay::Events {
        events,
        gap: first > after.seq + 1,
    }
}

/// The [`TaskStore`] on Redis (Tasks extension): a task's state as JSON under
/// `mcp:task:{<id>}`, expiring with the task, and a sorted set `mcp:tasks` of the live tasks by
/// expiry for the store's limit. A terminal status is final: an update is a compare-and-set
/// run on the server, so no node overwrites a task another node finished or cancelled.
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
}

impl RedisTaskStore {
    /// The store on `redis`.
    pub fn new(redis: Redis) -> Self {
        Self { redis }
    }

    fn key(&self, task_id: &str) -> String {
        format!("{}:task:{{{task_id}}}", self.redis.prefix)
    }

    fn live_key(&self) -> String {
        format!("{}:tasks", self.redis.prefix)
    }
}

/// A task as the Redis store keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskEntry {
    task: DetailedTask,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
}

fn epoch_millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn task_backend(err: &redis::RedisError) -> TaskStoreError {
    TaskStoreError::Backend(format!("redis: {err}"))
}

fn task_entry(task: &StoredTask) -> Result<(String, Option<u64>), TaskStoreError> {
    let expires = task.expires_at.map(epoch_millis);
    let json = serde_json::to_string(&TaskEntry {
        task: task.task.clone(),
        expires_at_ms: expires,
        owner: task.owner.clone(),
    })
    .map_err(|err| TaskStoreError::Backend(err.to_string()))?;
    Ok((json, expires))
}

/// Replaces a task unless the stored one is terminal or gone: KEYS[1] the task, ARGV[1] the
/// new JSON, ARGV[2] its expiry (Unix ms, or 0 for none).
const UPDATE_TASK: &str = r"
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local status = cjson.decode(current)['task']['status']
if status == 'completed' or status == 'failed' or status == 'cancelled' then return 0 end
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
end
return 1
";

impl TaskStore for RedisTaskStore {
    fn create(
        &self,
        task: StoredTask,
        limit: usize,
    ) -> futures::future::BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let (json, expires) = task_entry(&task)?;
            let id = task.task.task_id.clone();
            let mut conn = self.redis.conn.clone();
            let (live,): (usize,) = redis::pipe()
                .cmd("ZREMRANGEBYSCORE")
                .arg(self.live_key())
                .arg("-inf")
                .arg(now_millis())
                .ignore()
                .cmd("ZCARD")
                .arg(self.live_key())
                .query_async(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            if live >= limit {
                return Err(TaskStoreError::Full(limit));
            }
            let mut set = redis::cmd("SET");
            set.arg(self.key(&id)).arg(json).arg("NX");
            if let Some(at) = expires {
                set.arg("PXAT").arg(at.max(1));
            }
            let created: Option<String> = set
                .query_async(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            if created.is_none() {
                return Err(TaskStoreError::Exists(id));
            }
            redis::cmd("ZADD")
                .arg(self.live_key())
                .arg(expires.unwrap_or(u64::MAX >> 11))
                .arg(&id)
                .query_async::<()>(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            Ok(())
        })
    }

    fn get(
        &self,
        task_id: &str,
    ) -> futures::future::BoxFuture<'_, Result<Option<StoredTask>, TaskStoreError>> {
        let key = self.key(task_id);
        Box::pin(async move {
            let mut conn = self.redis.conn.clone();
            let json: Option<String> = redis::cmd("GET")
                .arg(key)
                .query_async(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            let Some(json) = json else {
                return Ok(None);
            };
            let entry: TaskEntry = serde_json::from_str(&json)
                .map_err(|err| TaskStoreError::Backend(format!("unreadable task: {err}")))?;
            let stored = StoredTask {
                task: entry.task,
                expires_at: entry
                    .expires_at_ms
                    .map(|ms| UNIX_EPOCH + Duration::from_millis(ms)),
                owner: entry.owner,
            };
            Ok((!stored.is_expired(SystemTime::now())).then_some(stored))
        })
    }

    fn update(
        &self,
        task: StoredTask,
    ) -> futures::future::BoxFuture<'_, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let (json, expires) = task_entry(&task)?;
            let mut conn = self.redis.conn.clone();
            let written: i64 = redis::cmd("EVAL")
                .arg(UPDATE_TASK)
                .arg(1)
                .arg(self.key(&task.task.task_id))
                .arg(json)
                .arg(expires.unwrap_or(0))
                .query_async(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            Ok(written == 1)
        })
    }

    fn delete(
        &self,
        task_id: &str,
    ) -> futures::future::BoxFuture<'_, Result<bool, TaskStoreError>> {
        let key = self.key(task_id);
        let id = task_id.to_owned();
        Box::pin(async move {
            let mut conn = self.redis.conn.clone();
            let (deleted,): (u64,) = redis::pipe()
                .cmd("DEL")
                .arg(key)
                .cmd("ZREM")
                .arg(self.live_key())
                .arg(id)
                .ignore()
                .query_async(&mut conn)
                .await
                .map_err(|err| task_backend(&err))?;
            Ok(deleted > 0)
        })
    }

    fn purge_expired(&self) -> futures::future::BoxFuture<'_, Result<usize, TaskStoreError>> {
        Box::pin(async move {
            // The tasks' own keys expire by themselves; only the count's entries go here.
            let mut conn = self.redis.conn.clone();
            redis::cmd("ZREMRANGEBYSCORE")
                .arg(self.live_key())
                .arg("-inf")
                .arg(now_millis())
                .query_async::<usize>(&mut conn)
                .await
                .map_err(|err| task_backend(&err))
        })
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

    use super::*;

    fn id(seq: u64) -> EventId {
        EventId { stream: 7, seq }
    }

    #[test]
    fn an_envelope_starts_with_its_sender() {
        let node = NodeId::new("node \"a\"");
        let envelope = Envelope {
            from: node.clone(),
            to: Recipients::All,
            message: actix_mcp_actors::BusMessage::Closed {
                session: SessionId::parse("s").expect("a valid id"),
            },
        };
        let text = serde_json::to_string(&envelope).expect("serializable");
        assert!(text.starts_with(&sent_by(&node)), "{text}");
        assert!(!text.starts_with(&sent_by(&NodeId::new("node"))));
    }

    #[test]
    fn replays_what_follows_and_tells_trimmed_events() {
        // Stream 7's events 3 to 5 (1 and 2 trimmed), among another stream's.
        let stored: Vec<String> = (3..=5)
            .flat_map(|seq| [format!("7 {seq} data {seq}"), format!("8 {seq} other")])
            .collect();
        match stored_replay(&stored, id(3)) {
            Replay::Events { events, gap } => {
                assert_eq!(events.len(), 2);
                assert_eq!(events[0].0, id(4));
                assert_eq!(&*events[0].1, "data 4");
                assert_eq!(events[1].0, id(5));
                assert!(!gap);
            }
            Replay::Unknown => panic!("a known stream"),
        }
        match stored_replay(&stored, id(1)) {
            Replay::Events { events, gap } => {
                assert_eq!(events.len(), 3);
                assert!(gap, "event 2 was trimmed");
            }
            Replay::Unknown => panic!("a known stream"),
        }
        assert!(matches!(
            stored_replay(&stored, id(2)),
            Replay::Events { gap: false, .. }
        ));
        assert!(matches!(
            stored_replay(&stored, id(5)),
            Replay::Events { ref events, gap: false } if events.is_empty()
        ));
        assert_eq!(
            stored_replay(&stored, EventId { stream: 9, seq: 1 }),
            Replay::Unknown
        );
        assert_eq!(stored_replay(&[], id(1)), Replay::Unknown);
        // Written by two threads: out of order in the list, in order in the replay.
        let mixed = vec!["7 3 c".to_owned(), "7 2 b".to_owned(), "7 4 d".to_owned()];
        match stored_replay(&mixed, id(1)) {
            Replay::Events { events, gap } => {
                assert!(!gap);
                let seqs: Vec<u64> = events.iter().map(|(id, _)| id.seq).collect();
                assert_eq!(seqs, [2, 3, 4]);
            }
            Replay::Unknown => panic!("a known stream"),
        }
        // Data with spaces survives; malformed entries are skipped.
        let odd = vec![
            "garbage".to_owned(),
            "7 x y".to_owned(),
            "7 1 a b c".to_owned(),
        ];
        match stored_replay(&odd, id(0)) {
            Replay::Events { events, .. } => assert_eq!(&*events[0].1, "a b c"),
            Replay::Unknown => panic!("a known stream"),
        }
    }
}
