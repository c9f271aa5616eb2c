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
use redis::cluster_async::ClusterConnection;

/// How long a Redis command may take before it fails (and the request that needed it gets a
/// 503); the connection is re-established in the background.
pub(super) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// The connection to Redis that the stores and the bus share: to one server, to a Redis
/// Cluster ([`connect_cluster`](Self::connect_cluster)), or to the master a set of Sentinels
/// names ([`connect_sentinel`](Self::connect_sentinel)); the stores do not tell them apart,
/// except where a Redis Cluster cannot run in one command what touches keys of several slots
/// (see the [module docs](super)).
///
/// On one server (or the Sentinels' master), requests' commands go on a connection of the
/// calling thread's own runtime (each actix-web worker opens one on its first request), so a
/// round trip never leaves the worker's thread; background work (and a thread with no
/// runtime) uses one connection shared by all, which reconnects by itself. On a Redis Cluster,
/// every command goes on one multiplexed cluster connection, which routes it to the master of
/// its keys' slot and follows the cluster's changes of topology (a failover included); its
/// driver runs on the runtime that connected (keep that runtime running: the `actix_web::main`
/// one, say), and every worker's commands go through it.
#[derive(Clone)]
pub struct Redis {
    backend: Backend,
    pub(super) prefix: Arc<str>,
    /// Tells this handle (and its clones) apart from other handles in a thread's connections.
    handle: u64,
}

/// What a [`Redis`] is connected to.
#[derive(Clone)]
enum Backend {
    /// One server (or a proxy in front of several).
    Single(Arc<Server>),
    /// A Redis Cluster.
    Cluster(Arc<ClusterBackend>),
    /// The master a set of Sentinels names, followed through failovers.
    Sentinel(Arc<super::sentinel::SentinelBackend>),
}

/// One server: its client, and the connection shared by background work.
pub(super) struct Server {
    pub(super) client: redis::Client,
    pub(super) conn: ConnectionManager,
    /// Raised each time a Sentinel names another master: a thread's own connection to an
    /// older one is dropped.
    pub(super) generation: u64,
}

/// A Redis Cluster: its multiplexed connection, and a client per node given at start (the
/// bus subscribes on any of them: a message published on a cluster reaches every node).
pub(super) struct ClusterBackend {
    conn: ClusterConnection,
    nodes: Vec<redis::Client>,
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
    /// The [`Server::generation`] it was opened to.
    generation: u64,
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
    Cluster(ClusterConnection),
}

impl redis::aio::ConnectionLike for Conn {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        match self {
            Self::Local(conn) => conn.req_packed_command(cmd),
            Self::Shared(conn) => conn.req_packed_command(cmd),
            Self::Cluster(conn) => conn.req_packed_command(cmd),
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
            Self::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Local(conn) => conn.get_db(),
            Self::Shared(conn) => conn.get_db(),
            Self::Cluster(conn) => conn.get_db(),
        }
    }
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("Redis");
        match &self.backend {
            Backend::Single(server) => {
                f.field("server", server.client.get_connection_info().addr())
            }
            Backend::Cluster(cluster) => f.field(
                "cluster",
                &cluster
                    .nodes
                    .iter()
                    .map(|node| node.get_connection_info().addr().to_string())
                    .collect::<Vec<_>>(),
            ),
            Backend::Sentinel(sentinel) => f.field("sentinel", sentinel),
        };
        f.field("prefix", &self.prefix).finish()
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

/// How every script runs: its `EVALSHA` as one command, its keys and arguments written straight
/// into the command's buffer (a [`redis::ScriptInvocation`] first copies each into a vector of
/// its own, then all of them into the command). A server that does not have the script yet
/// (restarted, `SCRIPT FLUSH`ed, a replica promoted) is sent it (`SCRIPT LOAD`), and asked
/// again.
pub(super) struct ScriptCall<'s> {
    script: &'s redis::Script,
    cmd: redis::Cmd,
}

impl<'s> ScriptCall<'s> {
    /// The call of `script` with `keys` keys: the first `keys` arguments added are those.
    pub(super) fn new(script: &'s redis::Script, keys: usize) -> Self {
        let mut cmd = redis::Cmd::with_capacity(8, 128);
        cmd.arg("EVALSHA").arg(script.get_hash()).arg(keys);
        Self { script, cmd }
    }

    /// Adds a key or an argument.
    pub(super) fn arg(&mut self, arg: impl redis::ToRedisArgs) -> &mut Self {
        self.cmd.arg(arg);
        self
    }
}

impl Query for ScriptCall<'_> {
    fn run<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        conn: &'a mut Conn,
    ) -> BoxFuture<'a, redis::RedisResult<T>> {
        Box::pin(async move {
            match self.cmd.query_async(conn).await {
                Err(err)
                    if err.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                {
                    self.script.load_async(conn).await?;
                    self.cmd.query_async(conn).await
                }
                answer => answer,
            }
        })
    }
}

/// A key of a session, `<prefix>:{<session id>}:<what>` (its hash tag the session's id), written
/// straight into a command.
pub(super) struct SessionKey<'a> {
    prefix: &'a str,
    id: &'a str,
    what: &'a str,
}

impl SessionKey<'_> {
    /// The key's text, in order.
    fn parts(&self) -> [&str; 5] {
        [self.prefix, ":{", self.id, "}:", self.what]
    }
}

impl redis::ToRedisArgs for SessionKey<'_> {
    fn write_redis_args<W: ?Sized + redis::RedisWrite>(&self, out: &mut W) {
        let mut arg = out.writer_for_next_arg();
        for part in self.parts() {
            // Writing to the command's own buffer, which cannot fail.
            let _ = std::io::Write::write_all(&mut arg, part.as_bytes());
        }
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

/// `urls` as [`redacted`], comma-separated (for errors and logs).
pub(super) fn redacted_all(urls: &[&str]) -> String {
    urls.iter()
        .map(|url| redacted(url))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `url` as errors and logs may show it: without its password (nor its user name, which some
/// deployments use as a secret too), or only its scheme when it does not parse.
pub(super) fn redacted(url: &str) -> String {
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

/// Opens a connection whose driver runs on the current runtime, and a watch on that
/// runtime.
fn open_local(server: &Server) -> BoxFuture<'static, Result<LocalConn, String>> {
    let client = server.client.clone();
    let generation = server.generation;
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
                    generation,
                    alive,
                    _watch: Arc::new(watch),
                })
            }
            Err(err) => Err(format!("redis: {err}")),
        }
    })
}

/// The shared connection's settings: a command fails after [`RESPONSE_TIMEOUT`], and a lost
/// connection is tried again soon.
fn manager_config() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(RESPONSE_TIMEOUT))
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_secs(2))
}

/// The shared connection to the server of `client` (shown in errors as `shown`).
pub(super) async fn open_server(
    client: redis::Client,
    shown: &str,
    generation: u64,
) -> Result<Server, StoreError> {
    let conn = tokio::time::timeout(
        RESPONSE_TIMEOUT * 2,
        ConnectionManager::new_with_config(client.clone(), manager_config()),
    )
    .await
    .map_err(|_| {
        StoreError::Unavailable(format!("could not connect to redis at {shown}: timed out"))
    })?
    .map_err(|err| {
        StoreError::Unavailable(format!("could not connect to redis at {shown}: {err}"))
    })?;
    Ok(Server {
        client,
        conn,
        generation,
    })
}

/// Whether `err` says the connection (or the server behind it) is gone, or that the server is
/// no longer a master (`READONLY`: a failover demoted it).
pub(super) fn lost(err: &redis::RedisError) -> bool {
    err.is_io_error()
        || err.is_connection_dropped()
        || err.is_timeout()
        || err.is_connection_refusal()
        || err.code() == Some("READONLY")
}

/// Commands a store would pipeline, which may touch keys of several slots: see
/// [`Redis::batch`].
#[derive(Default)]
pub(super) struct Batch {
    /// Each command, and whether its answer is left out.
    commands: Vec<(redis::Cmd, bool)>,
}

impl Batch {
    /// A command whose answer is kept.
    pub(super) fn add(&mut self, cmd: redis::Cmd) -> &mut Self {
        self.commands.push((cmd, false));
        self
    }

    /// A command whose answer is left out.
    pub(super) fn add_ignored(&mut self, cmd: redis::Cmd) -> &mut Self {
        self.commands.push((cmd, true));
        self
    }

    pub(super) fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }
}

impl Redis {
    fn with_backend(backend: Backend, prefix: &str) -> Self {
        Self {
            backend,
            prefix: prefix.into(),
            handle: NEXT_HANDLE.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Connects to the server at `url` and checks it answers; keys start with `prefix`.
    ///
    /// # Errors
    /// When the URL is malformed, or the server cannot be reached or does not answer `PING`.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, StoreError> {
        let shown = redacted(url);
        let client = redis::Client::open(url)
            .map_err(|err| StoreError::Unavailable(format!("redis url {shown}: {err}")))?;
        let server = open_server(client, &shown, 0).await?;
        let redis = Self::with_backend(Backend::Single(Arc::new(server)), prefix);
        redis.ping().await?;
        Ok(redis)
    }

    /// Connects to the Redis Cluster that the nodes at `urls` belong to (some of its masters
    /// or replicas: the client learns the others from them), and checks it answers; keys
    /// start with `prefix`. Each session's keys share a slot (its id is their hash tag); the
    /// cluster-wide counts are apart from them: see the [module docs](super) for what that
    /// changes.
    ///
    /// # Errors
    /// When no URL is given or one is malformed, or the cluster cannot be reached or does not
    /// answer `PING`.
    pub async fn connect_cluster(urls: &[&str], prefix: &str) -> Result<Self, StoreError> {
        let shown = redacted_all(urls);
        if urls.is_empty() {
            return Err(StoreError::Unavailable(
                "redis cluster: no node url given".into(),
            ));
        }
        let nodes = urls
            .iter()
            .map(|url| redis::Client::open(*url))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| StoreError::Unavailable(format!("redis url {shown}: {err}")))?;
        let client = redis::cluster::ClusterClientBuilder::new(urls.iter().copied())
            .connection_timeout(RESPONSE_TIMEOUT)
            .response_timeout(RESPONSE_TIMEOUT)
            .overall_response_timeout(Some(RESPONSE_TIMEOUT))
            .retries(3)
            .min_retry_wait(50)
            .max_retry_wait(500)
            .build()
            .map_err(|err| StoreError::Unavailable(format!("redis cluster {shown}: {err}")))?;
        let conn = tokio::time::timeout(RESPONSE_TIMEOUT * 2, client.get_async_connection())
            .await
            .map_err(|_| {
                StoreError::Unavailable(format!(
                    "could not connect to the redis cluster at {shown}: timed out"
                ))
            })?
            .map_err(|err| {
                StoreError::Unavailable(format!(
                    "could not connect to the redis cluster at {shown}: {err}"
                ))
            })?;
        let redis = Self::with_backend(
            Backend::Cluster(Arc::new(ClusterBackend { conn, nodes })),
            prefix,
        );
        redis.ping().await?;
        Ok(redis)
    }

    /// Connects to the master that the Sentinels at `sentinels` (`redis://host:port` each)
    /// monitor under the name `master`, and checks it answers; keys start with `prefix`. The
    /// Sentinels are asked again every second, and at once when a command finds the master
    /// gone or demoted (`READONLY`): after a failover, commands go to the new master.
    ///
    /// # Errors
    /// When no URL is given or one is malformed, no Sentinel knows a master `master`, or that
    /// master cannot be reached or does not answer `PING`.
    pub async fn connect_sentinel(
        sentinels: &[&str],
        master: &str,
        prefix: &str,
    ) -> Result<Self, StoreError> {
        let backend = super::sentinel::SentinelBackend::connect(sentinels, master).await?;
        let redis = Self::with_backend(Backend::Sentinel(backend), prefix);
        redis.ping().await?;
        Ok(redis)
    }

    /// Whether this is a Redis Cluster, where one command cannot touch keys of several slots.
    pub(super) fn is_cluster(&self) -> bool {
        matches!(self.backend, Backend::Cluster(_))
    }

    /// The server commands go to now: the one server, or the Sentinels' master (`None` on a
    /// cluster).
    fn server(&self) -> Option<Arc<Server>> {
        match &self.backend {
            Backend::Single(server) => Some(server.clone()),
            Backend::Sentinel(sentinel) => Some(sentinel.current()),
            Backend::Cluster(_) => None,
        }
    }

    /// The connection shared by background work (and threads with no runtime).
    pub(super) fn shared_conn(&self) -> Conn {
        match &self.backend {
            Backend::Single(server) => Conn::Shared(server.conn.clone()),
            Backend::Sentinel(sentinel) => Conn::Shared(sentinel.current().conn.clone()),
            Backend::Cluster(cluster) => Conn::Cluster(cluster.conn.clone()),
        }
    }

    /// A client to subscribe to the bus's channels with, for the `attempt`-th try: the one
    /// server, the Sentinels' master as they name it now, or each node of a cluster given at
    /// start in turn (a message published on a Redis Cluster reaches every node of it,
    /// replicas included).
    pub(super) async fn pubsub_client(&self, attempt: u32) -> Result<redis::Client, StoreError> {
        match &self.backend {
            Backend::Single(server) => Ok(server.client.clone()),
            Backend::Sentinel(sentinel) => {
                if attempt > 0 {
                    sentinel.follow().await;
                }
                Ok(sentinel.current().client.clone())
            }
            Backend::Cluster(cluster) => {
                let at = usize::try_from(attempt).unwrap_or(0) % cluster.nodes.len().max(1);
                cluster.nodes.get(at).cloned().ok_or_else(|| {
                    StoreError::Unavailable("redis cluster: no node url given".into())
                })
            }
        }
    }

    /// Tells the Sentinels' backend a command found its master gone (nothing on the others).
    fn lost_server(&self) {
        if let Backend::Sentinel(sentinel) = &self.backend {
            sentinel.follow_soon();
        }
    }

    /// The connection for a request's command: this thread's own (opened on first use), or
    /// the shared one where the thread has no runtime (and on a cluster). When it cannot be
    /// opened, the commands of the next second fail at once (the server is down or frozen:
    /// their requests get a 503 now rather than after another connection timeout).
    async fn request_conn(&self) -> Result<Conn, StoreError> {
        let Some(server) = self.server() else {
            return Ok(self.shared_conn());
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return Ok(Conn::Shared(server.conn.clone()));
        }
        let opening = LOCAL.with_borrow_mut(|local| {
            let slot = local.iter().position(|(handle, _)| *handle == self.handle);
            if let Some(at) = slot {
                match &local[at].1 {
                    Local::Open(open)
                        if open.alive.load(Ordering::Acquire)
                            && open.generation == server.generation =>
                    {
                        return Err(Ok(Conn::Local(open.conn.clone())));
                    }
                    Local::Opening(opening) => return Ok(opening.clone()),
                    Local::Failed { until, why } if Instant::now() < *until => {
                        return Err(Err(StoreError::Unavailable(why.clone())));
                    }
                    // Its runtime is gone, its server is no longer the master, or it is time
                    // to try again.
                    Local::Open(_) | Local::Failed { .. } => {
                        local.swap_remove(at);
                    }
                }
            }
            let opening = open_local(&server).shared();
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
        if opened.is_err() {
            self.lost_server();
        }
        opened
            .map(|open| Conn::Local(open.conn))
            .map_err(StoreError::Unavailable)
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
        if let Err(err) = &result
            && lost(err)
        {
            if matches!(conn, Conn::Local(_)) {
                LOCAL.with_borrow_mut(|local| {
                    local.retain(|(handle, entry)| {
                        *handle != self.handle || matches!(entry, Local::Opening(_))
                    });
                });
            }
            self.lost_server();
        }
        result.map_err(|err| unavailable(&err))
    }

    /// Runs `batch`: as one pipeline on one server (one round trip), or each command on its
    /// own (all at once) on a cluster, where a pipeline's keys must share a slot. Its answer
    /// is the array of the answers of the commands not ignored, as a pipeline's.
    pub(super) async fn batch<T>(&self, batch: Batch) -> Result<T, StoreError>
    where
        T: redis::FromRedisValue + Send,
    {
        if !self.is_cluster() {
            let mut pipe = redis::Pipeline::with_capacity(batch.commands.len());
            for (cmd, ignored) in batch.commands {
                pipe.add_command(cmd);
                if ignored {
                    pipe.ignore();
                }
            }
            return self.query(&pipe).await;
        }
        let answers = futures::future::try_join_all(
            batch
                .commands
                .iter()
                .map(|(cmd, _)| self.query::<redis::Value, _>(cmd)),
        )
        .await?;
        let kept = answers
            .into_iter()
            .zip(&batch.commands)
            .filter(|(_, (_, ignored))| !ignored)
            .map(|(answer, _)| answer)
            .collect();
        T::from_redis_value(redis::Value::Array(kept))
            .map_err(|err| unavailable(&redis::RedisError::from(err)))
    }

    pub(super) async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.shared_conn();
        redis::cmd("PING")
            .query_async::<redis::Value>(&mut conn)
            .await
            .map(drop)
            .map_err(|err| {
                if lost(&err) {
                    self.lost_server();
                }
                unavailable(&err)
            })
    }

    /// `<prefix>:{<session>}:<what>`, allocated once.
    pub(super) fn session_part(&self, id: &SessionId, what: &str) -> String {
        self.session_part_arg(id, what).parts().concat()
    }

    /// [`session_part`](Self::session_part), written straight into a command.
    fn session_part_arg<'a>(&'a self, id: &'a SessionId, what: &'a str) -> SessionKey<'a> {
        SessionKey {
            prefix: &self.prefix,
            id: id.as_str(),
            what,
        }
    }

    /// [`session_key`](Self::session_key), written straight into a command.
    pub(super) fn session_key_arg<'a>(&'a self, id: &'a SessionId) -> SessionKey<'a> {
        self.session_part_arg(id, "session")
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
