//! The cluster's session store, event store and bus on Redis (feature `redis`).
//!
//! ```no_run
//! # async fn run(server: actix_mcp::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use actix_mcp::cluster::Cluster;
//!
//! let cluster = Cluster::redis("redis://127.0.0.1:6379").await?;
//! let mcp = server.http("/mcp").cluster(cluster).build()?;
//! # Ok(()) }
//! ```
//!
//! Three deployments, one set of stores: one server ([`Cluster::redis`]), a Redis Cluster
//! ([`Cluster::redis_cluster`]) or a master watched by Sentinels ([`Cluster::redis_sentinel`]);
//! a [`Redis`] connection is one of them, and the stores and the bus run on any.
//!
//! Keys (`prefix` defaults to `mcp`), each session's under one hash tag so that they share a
//! slot of a Redis Cluster, and each with a time to live so nothing outlives its session.
//!
//! | key | type | what | expires |
//! | --- | --- | --- | --- |
//! | `mcp:{<session>}:session` | hash | the [`SessionRecord`](actix_mcp_actors::SessionRecord) as created (JSON), its revision, its handshake, and each field of its state changed since ([`RedisSessionStore`]) | idle timeout, renewed by each request |
//! | `mcp:{<session>}:events` | list | `<stream> <seq> <event data>` per event of the session's streams (only its standalone stream's with [`RedisEventStore::request_streams_on_node`]), at least the newest `max_events`; deleted by its writer when a write made it again after the session's record went | the event TTL and a quarter, renewed at most once per quarter of it |
//! | `mcp:sessions` | sorted set | live sessions by expiry (the cluster-wide count), renewed with the records of the sessions busy on each node every third of the idle timeout (at most a minute) | members pruned as they expire |
//! | `mcp:task:{<task>}` | string | a task of the Tasks extension ([`RedisTaskStore`]) | with the task |
//! | `mcp:tasks` | sorted set | live tasks by expiry (the store's limit) | members pruned as they expire |
//! | `mcp:catalog:tools` | hash | the shared catalog: each shared tool's name to its factory and arguments (JSON) ([`RedisCatalogStore`]) | never (until removed) |
//! | `mcp:{admission}:slots:<key>` | sorted set | the leases of a cluster-wide concurrency limit by expiry ([`RedisAdmissionStore`]) | the lease TTL, renewed while a request runs |
//! | `mcp:{admission}:rate:<key>` | hash | a cluster-wide token bucket | once it would be full again |
//!
//! Channels: `mcp:bus` (to every node) and `mcp:bus:<node>` (to one).
//!
//! **On a Redis Cluster.** A script or pipeline runs on one slot, so what touched a session's
//! keys and a cluster-wide key at once is split there (one server and Sentinels keep the single
//! script or pipeline, and their round trips):
//!
//! - every key of a session is in its slot, so a session's record, its state changes, its
//!   handshake and its events are as consistent as on one server (each a script or command on
//!   its master);
//! - the cluster-wide count of sessions (`mcp:sessions`) is in another slot: a session is
//!   created by reading the count, then writing the record, then counting it (three commands,
//!   not one script), so sessions created at the same moment on several nodes may pass
//!   `max_sessions` by as many; `DELETE` and the renewals of `touch` update the record and the
//!   count by separate commands (sent at once), so the count may lag the records for the length
//!   of a round trip, or keep an entry until it expires when one of them failed;
//! - the task store's `mcp:tasks` likewise: its limit is approximate under concurrent creations;
//! - the catalog (`mcp:catalog:tools`) is one key, and the admission keys share the hash tag
//!   `{admission}` (one slot): both are exact, as on one server;
//! - the bus is the cluster's classic pub/sub, which forwards every message to every node of
//!   the cluster; each node subscribes on one of the nodes it was given (the next one when that
//!   one goes).
//!
//! Each command goes to the master of its slot over one multiplexed cluster connection, which
//! follows the cluster's topology: when a master fails, its commands fail (a 503 for a
//! request) until a replica is promoted (`cluster-node-timeout` and an election: a second or
//! two at best), then go to it.
//!
//! **Behind Sentinels.** Everything is on one master, so every store is as consistent as on
//! one server. The Sentinels are asked every second which server is the master, and at once
//! when a command finds it gone or demoted (`READONLY`); commands then go to the new master,
//! and the bus subscribes there. Between the loss of the master and the Sentinels' failover,
//! requests get a 503. The master is reached with no credentials of its own (the Sentinels'
//! URLs may carry theirs); [`Redis::connect`] on a URL with them remains for a master that needs
//! them, without the following.
//!
//! **After a failover** (either deployment), replication being asynchronous, the new master
//! may lack the last writes its old one acknowledged: a session created (or changed) a moment
//! before may be gone (its client gets a 404 and starts another) or lack that change. Without
//! a session lease, a node never serves a record it remembers over what the store holds: a
//! record is taken from memory only when the stored hash still carries the stamp it had when
//! it was read (every write stamps it uniquely, on any node, before or after a failover).
//!
//! **With a session lease** ([`Cluster::session_lease`]), a node serves an established session
//! it holds from memory for at most the lease, and reads the store again after it. The
//! [`RedisBus`]'s [continuity](actix_mcp_actors::Bus::continuity) changes each time a
//! subscription of it is made again (and is `None` while one is down), so a lost pub/sub
//! connection, a Sentinel failover (which moves the subscription) or a cluster node gone under
//! it ends every lease of that node; a failover of a Redis Cluster master that leaves the
//! subscription in place does not, and for up to the lease a node may then serve its copy of a
//! session whose last write the promoted replica lacks.
//!
//! A request costs one round trip (none while its session is leased) (one script renews its session's record and answers `1` when
//! the stored stamp is the one this node holds, else the whole hash); a change of a session's state (`logging/setLevel`, `resources/subscribe`) is one
//! script that applies it to the stored fields; events are written behind, in pipelined
//! batches (a writer lingers 1 ms for more: [`RedisEventStore::linger`]). A request a cluster-wide admission limit applies to costs one more round trip (one
//! script, [`RedisAdmissionStore`]); its release and the renewal of its leases are off its path.

mod admission_store;
mod bus;
mod catalog_store;
mod connection;
mod event_store;
mod sentinel;
mod session_store;
mod task_store;

use std::sync::Arc;

use actix_mcp_actors::StoreError;

use super::Cluster;

pub use admission_store::RedisAdmissionStore;
pub use bus::RedisBus;
pub use catalog_store::RedisCatalogStore;
pub use connection::Redis;
pub use event_store::RedisEventStore;
pub use session_store::RedisSessionStore;
pub use task_store::RedisTaskStore;

impl Cluster {
    /// A cluster on the Redis server at `url` (`redis://[user:password@]host:port[/db]`, or
    /// `rediss://` for TLS when the `redis` crate has it): the session store, event store and
    /// bus of this module (and its catalog store), with the default key prefix `mcp`.
    ///
    /// # Errors
    /// When the server cannot be reached or does not answer `PING`: a node does not start
    /// without its store.
    pub async fn redis(url: &str) -> Result<Self, StoreError> {
        Ok(Self::on_redis(Redis::connect(url, "mcp").await?))
    }

    /// A cluster on the Redis Cluster that the nodes at `urls` belong to (some of its masters
    /// or replicas, `redis://host:port` each: the others are learnt from them), with the
    /// default key prefix `mcp`: the stores and the bus of this module, each session's keys in
    /// its own slot. See the [module docs](self) for the consistency each store keeps there.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), actix_mcp::cluster::StoreError> {
    /// let cluster = actix_mcp::cluster::Cluster::redis_cluster(&[
    ///     "redis://10.0.0.1:7000",
    ///     "redis://10.0.0.2:7000",
    /// ])
    /// .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// When no URL is given or one is malformed, or the cluster cannot be reached or does not
    /// answer `PING`.
    pub async fn redis_cluster(urls: &[&str]) -> Result<Self, StoreError> {
        Ok(Self::on_redis(Redis::connect_cluster(urls, "mcp").await?))
    }

    /// A cluster on the Redis master that the Sentinels at `sentinels` (`redis://host:port`
    /// each) monitor under the name `master`, with the default key prefix `mcp`: the stores
    /// and the bus of this module, which follow the master through a failover (the Sentinels
    /// are asked every second, and at once when the master is lost).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), actix_mcp::cluster::StoreError> {
    /// let cluster = actix_mcp::cluster::Cluster::redis_sentinel(
    ///     &["redis://10.0.0.1:26379", "redis://10.0.0.2:26379"],
    ///     "mymaster",
    /// )
    /// .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// When no URL is given or one is malformed, no Sentinel knows a master `master`, or that
    /// master cannot be reached or does not answer `PING`.
    pub async fn redis_sentinel(sentinels: &[&str], master: &str) -> Result<Self, StoreError> {
        Ok(Self::on_redis(
            Redis::connect_sentinel(sentinels, master, "mcp").await?,
        ))
    }

    /// A cluster on a connected [`Redis`]: its session store, event store, catalog store,
    /// admission store and bus. (Share the connection with a [`RedisTaskStore`] for the Tasks
    /// extension.)
    pub fn on_redis(redis: Redis) -> Self {
        Self::new(
            Arc::new(RedisSessionStore::new(redis.clone())),
            Arc::new(RedisBus::new(redis.clone())),
        )
        .event_store(Arc::new(RedisEventStore::new(redis.clone())))
        .catalog_store(Arc::new(RedisCatalogStore::new(redis.clone())))
        .admission_store(Arc::new(RedisAdmissionStore::new(redis)))
    }
}
