//! Several nodes serving the same sessions: what they share, behind traits.
//!
//! One process with no cluster configured keeps everything in its own memory, as before, and
//! pays nothing for this module. A cluster adds three shared things:
//!
//! - a [`SessionStore`]: each session's record (who owns it, the protocol layer's state), which
//!   any node loads to serve a session it has not seen, and whose time to live is the session's
//!   idle timeout, refreshed by each request;
//! - a [`Bus`]: the messages one node sends the others ([`BusMessage`]): session-wide frames
//!   for the node holding a session's standalone stream, a client's answer or cancellation
//!   for the node where the request waits, broadcasts, a session's end and its changed state;
//! - an [`EventStore`](crate::EventStore) shared by every node, so that `Last-Event-ID`
//!   resumes a stream on any node.
//!
//! A node keeps a local [`Session`](crate::dev::Session) actor only while the session has work on
//! it (requests, streams), and drops it when idle; the record stays in the store. A session's
//! local actor reaches the other nodes through the [`Relay`] its registry was given
//! ([`RegistryConfig::relay`](crate::dev::RegistryConfig)) when a message has no local recipient.
//!
//! In one process, [`InMemorySessionStore`] and [`LocalBus`] let several endpoints share
//! sessions (and make the behaviour testable without a server); `actix-mcp` brings the Redis
//! implementations.

mod memory;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{EventId, SessionId};

pub use memory::{InMemorySessionStore, LocalBus};

/// A boxed future of a store or bus operation.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why a shared store or bus could not do what was asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The store is unreachable or failed (a connection lost, a timeout): the operation may
    /// succeed later.
    #[error("session store unavailable: {0}")]
    Unavailable(String),
    /// What the store holds could not be read (written by an incompatible version, or
    /// corrupted).
    #[error("session store holds an unreadable record: {0}")]
    Corrupt(String),
    /// The store does not implement this operation.
    #[error("the session store does not support {0}")]
    Unsupported(String),
}

/// The identity of one node of a cluster: unique among the nodes sharing a bus (a random one
/// per process by default).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NodeId(Arc<str>);

impl NodeId {
    /// A node id of your choosing (the host name, a pod name).
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self(id.into())
    }

    /// A random node id.
    pub fn random() -> Self {
        Self(format!("{:016x}", random_u64()).into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Now, in milliseconds since the Unix epoch (0 before it).
pub(crate) fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A random 64-bit number, from the standard library's randomly seeded hasher.
pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    hasher.finish()
}

/// What a cluster keeps of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The session's id.
    pub id: SessionId,
    /// Who the session belongs to (see [`SessionParts::owner`](crate::dev::SessionParts)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Arc<str>>,
    /// Whether the client finished the protocol's handshake.
    #[serde(default)]
    pub established: bool,
    /// How many changes the record has had since it was stored
    /// ([`SessionStore::update`], [`SessionStore::establish`]): of two copies of one session's
    /// record, the one of the higher revision is the newer.
    #[serde(default)]
    pub revision: u64,
    /// The protocol layer's state of the session (its negotiated version, the client's
    /// capabilities, its log level, its subscriptions), opaque to the runtime.
    pub state: Value,
}

/// One change of a session record's [`state`](SessionRecord::state) (a JSON object), applied
/// by [`SessionStore::update`] to the stored record as it is then, not to a copy of it: changes
/// of different fields, or of different members of one set, made at the same time on several
/// nodes are all kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum StateUpdate {
    /// Sets `field` to `value`; `null` removes the field.
    Set {
        /// The field of the state.
        field: String,
        /// Its new value.
        value: Value,
    },
    /// Adds `item` to the array of strings `field` (created when missing), unless it holds it.
    Insert {
        /// The field of the state.
        field: String,
        /// The string to add.
        item: String,
    },
    /// Removes `item` from the array of strings `field`.
    Remove {
        /// The field of the state.
        field: String,
        /// The string to remove.
        item: String,
    },
}

impl StateUpdate {
    /// Applies this change to `state` (made an object when it is not one).
    pub fn apply_to(&self, state: &mut Value) {
        if !state.is_object() {
            *state = Value::Object(serde_json::Map::new());
        }
        let Some(fields) = state.as_object_mut() else {
            return;
        };
        match self {
            Self::Set { field, value } if value.is_null() => {
                fields.remove(field);
            }
            Self::Set { field, value } => {
                fields.insert(field.clone(), value.clone());
            }
            Self::Insert { field, item } => {
                let set = fields
                    .entry(field.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if !set.is_array() {
                    *set = Value::Array(Vec::new());
                }
                if let Some(items) = set.as_array_mut()
                    && !items.iter().any(|kept| kept.as_str() == Some(item))
                {
                    items.push(Value::String(item.clone()));
                }
            }
            Self::Remove { field, item } => {
                if let Some(items) = fields.get_mut(field).and_then(Value::as_array_mut) {
                    items.retain(|kept| kept.as_str() != Some(item));
                }
            }
        }
    }
}

/// Where a cluster keeps its sessions' records. Implementations must make every record expire
/// after `ttl` without a [`load`](Self::load) or [`save`](Self::save) (the session's idle
/// timeout), so that nothing outlives its session.
pub trait SessionStore: Send + Sync + fmt::Debug + 'static {
    /// Stores a new session's record; `false` when a session of that id exists already.
    fn create<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool>;

    /// The record of a session, its time to live renewed (one round trip: this is on every
    /// request's path); `None` when the session is unknown or expired. A store should hand out
    /// the same `Arc` again while the record is unchanged (both stores here do), so that a
    /// caller who has seen it skips reading it again.
    fn load<'a>(
        &'a self,
        id: &'a SessionId,
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>>;

    /// Renews the records of `ids` (the sessions busy on this node: a stream open, requests
    /// served), as a [`load`](Self::load) does, without reading them; called every third of the
    /// time to live. A store that keeps more than the record (the Redis store's cluster-wide
    /// count) renews that here too. By default, a load of each.
    fn touch<'a>(&'a self, ids: &'a [SessionId], ttl: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            for id in ids {
                self.load(id, ttl).await?;
            }
            Ok(())
        })
    }

    /// Marks the handshake of a live session complete (its record's
    /// [`established`](SessionRecord::established)), its time to live renewed: a node that
    /// holds no actor for the session takes the client's `notifications/initialized` this way.
    /// `false` when the session is unknown or expired. A store shared by several nodes must
    /// do it in one atomic step (the Redis store runs one script; the in-memory one holds its
    /// lock), so that it loses no concurrent [`update`](Self::update); by default, a load and a
    /// save, which may.
    fn establish<'a>(&'a self, id: &'a SessionId, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let Some(record) = self.load(id, ttl).await? else {
                return Ok(false);
            };
            if record.established {
                return Ok(true);
            }
            let mut record = SessionRecord::clone(&record);
            record.established = true;
            record.revision += 1;
            self.save(&record, ttl).await
        })
    }

    /// Applies `updates`, in order, to the state of a live session's record as it is stored
    /// now, raises its [`revision`](SessionRecord::revision) and renews its time to live; the
    /// record as it is then, or `None` when the session is unknown or expired. What a node
    /// changes in a session's state goes through here, never as a whole record, so that changes
    /// made at the same time elsewhere are kept. A store shared by several nodes must do it in
    /// one atomic step (the Redis store runs one script; the in-memory one holds its lock); by
    /// default, a load and a save, which loses a change made between them.
    fn update<'a>(
        &'a self,
        id: &'a SessionId,
        updates: &'a [StateUpdate],
        ttl: Duration,
    ) -> StoreFuture<'a, Option<Arc<SessionRecord>>> {
        Box::pin(async move {
            let Some(record) = self.load(id, ttl).await? else {
                return Ok(None);
            };
            let mut record = SessionRecord::clone(&record);
            for update in updates {
                update.apply_to(&mut record.state);
            }
            record.revision += 1;
            Ok(self.save(&record, ttl).await?.then(|| Arc::new(record)))
        })
    }

    /// Replaces the record of a live session, whole, as given; `false` when it has ended
    /// meanwhile (the record is then not written back). A change of what a node knows of a
    /// session belongs in [`update`](Self::update), which keeps what other nodes changed.
    fn save<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool>;

    /// Ends a session everywhere: its record and what else the store keeps of it go; `false`
    /// when it was unknown.
    fn delete<'a>(&'a self, id: &'a SessionId) -> StoreFuture<'a, bool>;

    /// How many sessions the cluster holds, when the store can count them (the session cap is
    /// then per cluster); `None` otherwise (the cap is per node).
    fn count(&self) -> StoreFuture<'_, Option<usize>> {
        Box::pin(std::future::ready(Ok(None)))
    }

    /// Stores a new session's record unless the cluster holds `cap` sessions already. A store
    /// that counts sessions should check and write in one atomic step (the Redis store runs one
    /// script: one round trip per `initialize`); the default counts, then creates.
    fn create_within<'a>(
        &'a self,
        record: &'a SessionRecord,
        ttl: Duration,
        cap: usize,
    ) -> StoreFuture<'a, Created> {
        Box::pin(async move {
            if let Some(count) = self.count().await?
                && count >= cap
            {
                return Ok(Created::Full);
            }
            Ok(if self.create(record, ttl).await? {
                Created::Stored
            } else {
                Created::Taken
            })
        })
    }

    /// Records `key` as used for `ttl`, in one atomic step: `true` the first time, `false`
    /// while the key is recorded (any node's claim counts). What single-use values (a sealed
    /// `requestState`) are checked against cluster-wide. A store that cannot do it answers
    /// [`StoreError::Unsupported`] (the default): such values are then single-use per node.
    fn claim_once<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        let _ = (key, ttl);
        Box::pin(std::future::ready(Err(StoreError::Unsupported(
            "claim_once".into(),
        ))))
    }

    /// Checks that the store answers (for readiness probes).
    fn ping(&self) -> StoreFuture<'_, ()>;
}

/// What [`SessionStore::create_within`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// The record is stored.
    Stored,
    /// A session of that id exists already: nothing was written.
    Taken,
    /// The cluster holds its cap of sessions: nothing was written.
    Full,
}

/// Who a [`BusMessage`] is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Recipients {
    /// Every node but the sender.
    All,
    /// One node.
    Node(NodeId),
}

/// A message between the nodes of a cluster, as it travels on the [`Bus`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Envelope {
    /// The node that sent it.
    pub from: NodeId,
    /// Who it is for.
    pub to: Recipients,
    /// What it says.
    pub message: BusMessage,
}

/// What one node tells the others. Frames travel as their JSON text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum BusMessage {
    /// A frame for a session's standalone stream (a log message, a resource update), wherever
    /// that stream is open.
    Notify {
        /// The session.
        session: SessionId,
        /// The frame's JSON text.
        frame: String,
    },
    /// A frame for every session's standalone stream (a list-changed notification).
    Broadcast {
        /// The frame's JSON text.
        frame: String,
    },
    /// A client's answer to a server-to-client request that waits on another node.
    Response {
        /// The session.
        session: SessionId,
        /// The JSON-RPC response's text.
        message: String,
    },
    /// A client's `notifications/cancelled` for a request in flight on another node.
    Cancel {
        /// The session.
        session: SessionId,
        /// The notification's params.
        params: Option<Value>,
    },
    /// A session has ended (DELETE, or expired): nodes drop their local actor for it.
    Closed {
        /// The session.
        session: SessionId,
    },
    /// A session's standalone stream (HTTP GET) opened on the sending node: the other nodes
    /// close theirs, so that a session has one in the cluster, as on one node (a client that
    /// left a node for another is sent nothing more on the stream it left).
    StandaloneOpened {
        /// The session.
        session: SessionId,
        /// When it opened (ms since the Unix epoch, the sender's clock): a node closes only a
        /// stream it opened before (one it opened since is the newer).
        #[serde(default)]
        at_ms: u64,
    },
    /// A session's record changed (its log level, its subscriptions): nodes holding it
    /// locally take the new state.
    Changed {
        /// The new record.
        record: SessionRecord,
    },
    /// A message of the protocol layer (tasks, listen streams), opaque to the runtime.
    Protocol {
        /// What it is about.
        topic: String,
        /// Its content.
        payload: Value,
    },
}

/// The message channel between the nodes of a cluster. Delivery is at most once: a node that
/// is disconnected when a message is sent misses it (what a cluster cannot lose goes through
/// the [`SessionStore`] and the [`EventStore`](crate::EventStore) instead).
pub trait Bus: Send + Sync + fmt::Debug + 'static {
    /// Sends a message.
    fn publish(&self, envelope: Envelope) -> StoreFuture<'_, ()>;

    /// The messages for `node` (sent to it, or to all, by another node), for as long as the
    /// stream is held; the future resolves once the subscription is in place (or, when the
    /// bus is unreachable, after a bounded wait, the subscription then being retried in the
    /// background). Implementations reconnect by themselves after a failure; the stream ends
    /// only when the bus is shut down.
    fn subscribe(&self, node: &NodeId) -> BoxFuture<'static, BoxStream<'static, Envelope>>;

    /// A value that stays the same for as long as no message for this process's subscribers
    /// can have been lost: it changes whenever a subscription is (re)established or falls
    /// behind, and is `None` while one is down, or when the bus cannot tell (the default).
    ///
    /// A node serves an established session from its own copy, without reading the store,
    /// only while this value is the one it read when it last read the record (see the
    /// protocol layer's `Cluster::session_lease`): a deletion or a change made on another node
    /// reaches it on the bus, and a bus that may have lost one ends every such copy.
    fn continuity(&self) -> Option<u64> {
        None
    }
}

/// How a session's local actor reaches the other nodes when a message has no recipient on this
/// one (a session-wide frame and no standalone stream here, a client's answer or cancellation
/// that matches nothing here, a broadcast). Implemented by the protocol layer's cluster
/// service over its [`Bus`]; given to a registry with
/// [`RegistryConfig::relay`](crate::dev::RegistryConfig).
pub trait Relay: Send + Sync + fmt::Debug + 'static {
    /// Sends `message` to every other node, without waiting.
    fn publish(&self, message: BusMessage);

    /// Asks the other nodes what the node that served `after.stream` of `session` holds of it
    /// after `after` (a stream whose events are kept on its node only:
    /// [`SessionEvents::kept_on_its_node`](crate::SessionEvents::kept_on_its_node));
    /// [`Replay::Unknown`](crate::Replay::Unknown) when no node answers in time. By default
    /// `Unknown`.
    fn replay_elsewhere(&self, session: &SessionId, after: EventId) -> crate::ReplayFuture {
        let _ = (session, after);
        Box::pin(std::future::ready(crate::Replay::Unknown))
    }

    /// Claims `key` once for the whole cluster, for `ttl` (see
    /// [`SessionStore::claim_once`]). By default [`StoreError::Unsupported`].
    fn claim_once<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        let _ = (key, ttl);
        Box::pin(std::future::ready(Err(StoreError::Unsupported(
            "claim_once".into(),
        ))))
    }
}
