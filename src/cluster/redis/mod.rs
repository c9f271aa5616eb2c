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
//! Keys (`prefix` defaults to `mcp`), each session's under one hash tag so that they would share
//! a slot of a Redis Cluster, and each with a time to live so nothing outlives its session. The
//! connection is to one server (or a proxy in front of a cluster): a Redis Cluster client is not
//! built in.
//!
//! | key | type | what | expires |
//! | --- | --- | --- | --- |
//! | `mcp:{<session>}:session` | hash | the [`SessionRecord`](actix_mcp_actors::SessionRecord) as created (JSON), its revision, its handshake, and each field of its state changed since ([`RedisSessionStore`]) | idle timeout, renewed by each request |
//! | `mcp:{<session>}:events` | list | `<stream> <seq> <event data>` per event of the session's streams, at least the newest `max_events` | the event TTL, renewed by each write |
//! | `mcp:sessions` | sorted set | live sessions by expiry (the cluster-wide count), renewed with the records of the sessions busy on each node every third of the idle timeout (at most a minute) | members pruned as they expire |
//! | `mcp:task:{<task>}` | string | a task of the Tasks extension ([`RedisTaskStore`]) | with the task |
//! | `mcp:tasks` | sorted set | live tasks by expiry (the store's limit) | members pruned as they expire |
//! | `mcp:catalog:tools` | hash | the shared catalog: each shared tool's name to its factory and arguments (JSON) ([`RedisCatalogStore`]) | never (until removed) |
//! | `mcp:{admission}:slots:<key>` | sorted set | the leases of a cluster-wide concurrency limit by expiry ([`RedisAdmissionStore`]) | the lease TTL, renewed while a request runs |
//! | `mcp:{admission}:rate:<key>` | hash | a cluster-wide token bucket | once it would be full again |
//!
//! Channels: `mcp:bus` (to every node) and `mcp:bus:<node>` (to one).
//!
//! A request costs one round trip (an `HGETALL` of its session's record and the `PEXPIRE` that
//! renews it, pipelined; a record this node read before at the same revision is not decoded
//! again); a change of a session's state (`logging/setLevel`, `resources/subscribe`) is one
//! script that applies it to the stored fields; events are written behind, in pipelined
//! batches. A request a cluster-wide admission limit applies to costs one more round trip (one
//! script, [`RedisAdmissionStore`]); its release and the renewal of its leases are off its path.

mod admission_store;
mod bus;
mod catalog_store;
mod connection;
mod event_store;
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
