//! Several nodes serving the same sessions, behind any load balancer, with no sticky routing.
//!
//! Give an HTTP endpoint a [`Cluster`]
//! ([`McpHttpBuilder::cluster`](crate::transport::http::McpHttpBuilder::cluster)) and a request for a
//! session this node has not seen is served all the same: the session's record (its
//! negotiated version, the client's info and capabilities, its log level and
//! subscriptions, its owner) comes from the shared [`SessionStore`], and a local session actor
//! is started from it for as long as the session has work here. What must reach another node
//! travels on the [`Bus`]:
//!
//! - a session-wide frame (a log message, a resource update, a list change) goes to the node
//!   holding the session's GET stream;
//! - a client's answer to a server-to-client request (sampling, elicitation, roots) goes to the
//!   node where the request's handler waits, and a `notifications/cancelled` to the node where
//!   the request runs;
//! - a DELETE ends the session on every node, and a change of the state a node acts on by
//!   itself (`logging/setLevel`, `resources/subscribe`) reaches every node holding the
//!   session; the end of the handshake (`notifications/initialized`) is only stored, and read
//!   from the record with the session's next request on each node (a node's actor of the
//!   session left idle before that is closed by its handshake timer, and started again from
//!   the record when needed).
//!
//! A change of a session's state is stored as a change of its one field, applied to the stored
//! record atomically ([`SessionStore::update`]), and the request that made it is answered once
//! it is stored; a node takes a record only when its revision is newer than what its view
//! reflects. Concurrent changes on several nodes are all kept (the README's "Running several
//! nodes" says what is guaranteed).
//!
//! With a shared [`EventStore`] (the Redis one, say), a client
//! resumes a stream with `Last-Event-ID` on any node. Every request of a session costs one
//! store round trip (a load that also renews the record's time to live, which is the session's
//! idle timeout; what else the store keeps of a session, such as its place in the cluster-wide
//! count, is renewed for the sessions busy on a node by [`SessionStore::touch`] every third of
//! the idle timeout); nothing else on a request's path touches the store or the bus unless a
//! message must reach another node. With a [session lease](Cluster::session_lease), a node
//! serves an established session it holds from its own copy, without that round trip, for as
//! long as the lease lasts and the bus vouches that it lost no message ([`Bus::continuity`]).
//! A `notifications/initialized` that lands on a node holding no actor for the session is
//! taken in the store alone ([`SessionStore::establish`]).
//!
//! Requests of protocol 2026-07-28 have no session: any node serves them as it is, and a
//! multi-round-trip retry that lands on another node than the parked handler runs the
//! handler again with the answers its sealed `requestState` carries, which needs only that
//! every node seals with the same key
//! ([`ServerBuilder::request_state_key`](crate::ServerBuilder::request_state_key)).
//!
//! **Writing a backend.** A store other than the in-memory and Redis ones implements
//! [`SessionStore`] and [`Bus`] (and [`EventStore`] with [`SessionEvents`] for resumable
//! streams on any node); every trait and every type in their signatures ([`SessionRecord`],
//! [`SessionId`], [`StateUpdate`], [`StoreError`], [`StoreFuture`], [`Envelope`],
//! [`BusMessage`], [`NodeId`], ...) is here, so a backend depends on `actix-mcp` alone
//! (`tests/cluster_custom_store.rs` writes one). The Redis backend (`redis` module, feature `redis`) is one to read.
//!
//! **Limits.** The bus delivers at most once: a node cut off from it misses what was sent
//! meanwhile (a session's record is reloaded on each request, so only notifications are lost;
//! with a session lease, every lease ends when the bus's connection does, and a cut that
//! leaves the connection open is bounded by the lease).
//! The requests in flight on a node that dies are lost with it; their clients see the stream
//! end. The session cap is per cluster when the store can count sessions (the Redis store and
//! the in-memory one can), per node otherwise.
//!
//! **Admission.** With an [`AdmissionStore`] ([`Cluster::admission_store`]; a cluster on Redis
//! has one), the global and per-principal concurrency limits and the principal rate of an
//! endpoint's [`AdmissionConfig`](crate::transport::http::AdmissionConfig) count the whole
//! cluster: one store round trip per request they apply to, none otherwise. Slots are leases,
//! so a node that dies frees its slots within [`Cluster::admission_lease`]; while the store
//! fails, those requests are refused 503 (fail closed).

mod admission;
#[cfg(feature = "redis")]
pub mod redis;

mod inbox;

pub use admission::{
    AdmissionAsk, AdmissionStore, AdmissionVerdict, BucketLimit, InMemoryAdmissionStore, SlotLimit,
};

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use actix_mcp_actors::RegistryHandle;
use actix_mcp_actors::SessionHandle;
use actix_mcp_actors::dev::Relay;
use futures::StreamExt as _;
use serde_json::json;

use crate::server::ServerInner;
use crate::server::relay::{EVENTS_REPLAY, EVENTS_REPLAY_WAIT};
use crate::server::session::{SessionState, StateChange};

/// What a cluster backend implements and the types in its signatures: a session store, a bus,
/// and (for resumable streams on any node) an event store. A backend needs `actix-mcp` alone.
pub use crate::server::{CatalogStore, InMemoryCatalogStore, SharedTool};
pub use actix_mcp_actors::{
    Bus, BusMessage, Created, Envelope, EventId, EventStore, InMemorySessionStore, LocalBus,
    NodeId, Recipients, Replay, ReplayFuture, SessionEvents, SessionId, SessionRecord,
    SessionStore, StateUpdate, StoreError, StoreFuture,
};

/// What the nodes of a cluster share: the session store, the bus, and (for resumable streams
/// on any node) the event store. See the [module docs](self).
///
/// ```
/// use std::sync::Arc;
/// use actix_mcp::cluster::{Cluster, InMemorySessionStore, LocalBus};
///
/// // Two endpoints of one process sharing their sessions.
/// let cluster = Cluster::new(Arc::new(InMemorySessionStore::new()), Arc::new(LocalBus::new()));
/// ```
#[derive(Clone)]
#[must_use]
pub struct Cluster {
    pub(crate) node: NodeId,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) bus: Arc<dyn Bus>,
    pub(crate) events: Option<Arc<dyn EventStore>>,
    pub(crate) catalog: Option<Arc<dyn CatalogStore>>,
    pub(crate) admission: Option<Arc<dyn AdmissionStore>>,
    pub(crate) admission_lease: Duration,
    pub(crate) session_lease: Duration,
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("node", &self.node)
            .field("store", &self.store)
            .field("bus", &self.bus)
            .field("shared_events", &self.events.is_some())
            .field("shared_catalog", &self.catalog.is_some())
            .field("admission", &self.admission)
            .field("admission_lease", &self.admission_lease)
            .field("session_lease", &self.session_lease)
            .finish()
    }
}

impl Cluster {
    /// A cluster over `store` and `bus`, this node with a random id.
    pub fn new(store: Arc<dyn SessionStore>, bus: Arc<dyn Bus>) -> Self {
        Self {
            node: NodeId::random(),
            store,
            bus,
            events: None,
            catalog: None,
            admission: None,
            admission_lease: DEFAULT_ADMISSION_LEASE,
            session_lease: Duration::ZERO,
        }
    }

    /// Names this node (unique among the nodes of the cluster; default: random). A node that
    /// restarts with the same name receives the messages sent to its name meanwhile.
    pub fn node(mut self, node: NodeId) -> Self {
        self.node = node;
        self
    }

    /// Keeps the events of resumable streams in `events`, shared by every node, so a client
    /// resumes a stream on any node (default: each node's own memory, so a stream resumes only
    /// on the node that served it).
    pub fn event_store(mut self, events: Arc<dyn EventStore>) -> Self {
        self.events = Some(events);
        self
    }

    /// Keeps the shared catalog ([`Server::define_shared_tool`](crate::Server::define_shared_tool))
    /// in `catalog`, shared by every node, so that a tool defined on one node is made on every
    /// node, those joining later included (default: none, and shared tools stay on the node
    /// that defined them).
    pub fn catalog_store(mut self, catalog: Arc<dyn CatalogStore>) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Counts the endpoint's admission limits (global and per-principal concurrency, the
    /// principal rate; see [`AdmissionConfig`](crate::transport::http::AdmissionConfig)) in
    /// `store`, shared by every node, so that a limit holds for the cluster (default: none, each
    /// node counts its own; [`Cluster::redis`](Self::redis) counts them in Redis). The store is
    /// asked only for a request a cluster-wide limit applies to; the per-node counts stay as a
    /// local guard, checked first. See [`AdmissionStore`].
    pub fn admission_store(mut self, store: Arc<dyn AdmissionStore>) -> Self {
        self.admission = Some(store);
        self
    }

    /// How long a concurrency slot of the [admission store](Self::admission_store) lives
    /// unless renewed (default 30 s, at least a second): the node renews the slots of its
    /// running requests every third of it, so a node that dies frees its slots within this
    /// time.
    pub fn admission_lease(mut self, ttl: Duration) -> Self {
        self.admission_lease = ttl.max(Duration::from_millis(MIN_ADMISSION_LEASE_MS));
        self
    }

    /// How long a node may serve an established session it holds without reading its record
    /// from the store (default zero: every request of a session reads it, one round trip).
    ///
    /// With a lease, a request of a session this node holds is served from its own copy for
    /// up to `lease` after the node last read the record, and the store is read again after
    /// that (which also renews the record's time to live). A deletion or a change of the
    /// session's state made on another node still ends the copy here as soon as its message
    /// arrives on the bus, and a bus that may have lost a message (a reconnection, a
    /// subscriber that fell behind) ends every copy, as does a bus that cannot tell
    /// ([`Bus::continuity`] is `None`: no lease is ever used). What it gives up: a request that
    /// reaches this node after a deletion or change on another node, but before that node's
    /// message does, is served as before it; and a bus cut off without its connection ending
    /// delays that until the lease runs out. Capped at a third of the session idle timeout.
    pub fn session_lease(mut self, lease: Duration) -> Self {
        self.session_lease = lease;
        self
    }

    /// This node's id.
    pub fn node_id(&self) -> &NodeId {
        &self.node
    }

    /// The session store.
    pub fn session_store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }
}

/// The default [`Cluster::admission_lease`].
const DEFAULT_ADMISSION_LEASE: Duration = Duration::from_secs(30);

/// The shortest [`Cluster::admission_lease`].
const MIN_ADMISSION_LEASE_MS: u64 = 1000;

/// One endpoint's side of a cluster: its relay to the other nodes, the session records, and
/// what the bus brings.
#[derive(Debug)]
pub(crate) struct ClusterNode {
    cluster: Cluster,
    /// The records' time to live: the session idle timeout.
    ttl: Duration,
    /// Whether this node listens to the bus yet.
    listening: tokio::sync::watch::Sender<bool>,
    /// The [`Cluster::session_lease`], at most a third of `ttl`.
    lease: Duration,
    /// How many messages about a session's record (its end, a change of its state) this node
    /// has received: a record read while one arrived may be older than it, and is not leased.
    heard: AtomicU64,
    /// The replays this node asked the others for, waiting for their answer.
    replays: Arc<Replays>,
}

/// The replays a node asked the others for ([`Relay::replay_elsewhere`]), by ticket.
#[derive(Debug, Default)]
struct Replays {
    next: AtomicU64,
    waiting: std::sync::Mutex<Waiting>,
}

/// Who waits for the answer to each ticket.
type Waiting = std::collections::HashMap<u64, tokio::sync::oneshot::Sender<Replay>>;

impl Replays {
    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Hands the answer to `ticket` to the resume waiting for it, if it still waits.
    fn answered(&self, ticket: u64, replay: Replay) {
        if let Some(waiting) = self.waiting().remove(&ticket) {
            let _ = waiting.send(replay);
        }
    }
}

/// See [`ClusterNode::lease_terms`].
#[derive(Debug, Clone, Copy)]
struct LeaseTerms {
    continuity: u64,
    heard: u64,
    at: Instant,
}

/// How long a node's first requests wait for it to listen to the bus.
const LISTEN_WAIT: Duration = Duration::from_secs(5);

/// Why a session could not be served from the cluster's store.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// No such session (never was, expired, or deleted).
    Unknown,
    /// The store failed.
    Unavailable(StoreError),
    /// The session could not be started here (the node is full).
    Refused(actix_mcp_actors::OpenError),
}

impl ClusterNode {
    pub(crate) fn new(cluster: Cluster, ttl: Duration) -> Arc<Self> {
        let lease = cluster.session_lease.min(ttl / 3);
        Arc::new(Self {
            cluster,
            ttl,
            listening: tokio::sync::watch::channel(false).0,
            lease,
            heard: AtomicU64::new(0),
            replays: Arc::default(),
        })
    }

    /// The relay a registry of this endpoint hands what has no recipient here.
    pub(crate) fn relay(&self) -> Arc<dyn Relay> {
        Arc::new(BusRelay {
            node: self.cluster.node.clone(),
            bus: self.cluster.bus.clone(),
            store: self.cluster.store.clone(),
            replays: self.replays.clone(),
        })
    }

    /// The event store every node shares, if the cluster has one.
    pub(crate) fn events(&self) -> Option<Arc<dyn EventStore>> {
        self.cluster.events.clone()
    }

    pub(crate) fn store(&self) -> &Arc<dyn SessionStore> {
        &self.cluster.store
    }

    /// Listens to the bus for `registry`'s sessions, and keeps the records of the sessions
    /// busy here alive, for as long as the arbiter runs.
    pub(crate) fn start(
        self: &Arc<Self>,
        registry: RegistryHandle,
        server: std::sync::Weak<ServerInner>,
    ) {
        let subscribing = self.cluster.bus.subscribe(&self.cluster.node);
        let node = self.clone();
        let inbox_registry = registry.clone();
        let inbox_server = server.clone();
        actix_rt::spawn(async move {
            let mut messages = subscribing.await;
            node.listening.send_replace(true);
            // Listening first, so that no change made meanwhile is missed: the tools the
            // cluster shares, made here.
            if let Some(server) = inbox_server.upgrade() {
                node.sync_catalog(&server).await;
            }
            while let Some(envelope) = messages.next().await {
                let Some(server) = inbox_server.upgrade() else {
                    return;
                };
                node.receive(&inbox_registry, &server, envelope.from, envelope.message);
            }
        });
        let keeper = self.clone();
        actix_rt::spawn(async move {
            let every = (keeper.ttl / 3).clamp(Duration::from_secs(1), Duration::from_secs(60));
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(inner) = server.upgrade() else {
                    return;
                };
                // A change this node missed on the bus (it delivers at most once).
                keeper.sync_catalog(&inner).await;
                drop(inner);
                // Busy here (a stream open, requests served): the cluster must not let them
                // expire for want of requests elsewhere.
                let busy: Vec<SessionId> = registry
                    .sessions()
                    .into_iter()
                    .filter(|session| session.idle_for() < every)
                    .map(|session| session.id().clone())
                    .collect();
                for ids in busy.chunks(1024) {
                    if let Err(err) = keeper.store().touch(ids, keeper.ttl).await {
                        tracing::warn!(sessions = ids.len(), %err, "could not renew the records of sessions busy here");
                    }
                }
            }
        });
    }

    /// Makes this node's shared tools those the cluster's catalog store holds.
    async fn sync_catalog(&self, server: &ServerInner) {
        let Some(catalog) = &self.cluster.catalog else {
            return;
        };
        match catalog.tools().await {
            Ok(tools) => server.reconcile_shared(tools),
            Err(err) => tracing::warn!(%err, "could not read the shared catalog"),
        }
    }

    fn publish(&self, to: Recipients, message: BusMessage) {
        publish(&self.cluster.bus, &self.cluster.node, to, message);
    }

    /// The session a request names, from the store: its local actor (started from the record
    /// when this node has none), its state refreshed from the record.
    pub(crate) async fn session(
        self: &Arc<Self>,
        registry: &RegistryHandle,
        server: &Arc<ServerInner>,
        dispatch: &Arc<dyn actix_mcp_actors::dev::Dispatch>,
        id: &SessionId,
    ) -> Result<SessionHandle, Lookup> {
        self.listening().await;
        if let Some(session) = self.leased(registry, id) {
            return Ok(session);
        }
        // What a lease of the record about to be read depends on, as it is before the read.
        let lease = self.lease_terms();
        let record = match self.store().load(id, self.ttl).await {
            Ok(Some(record)) => record,
            Ok(None) => {
                // Ended elsewhere, or expired: so it is here.
                registry.close(id.as_str());
                return Err(Lookup::Unknown);
            }
            Err(err) => return Err(Lookup::Unavailable(err)),
        };
        if let Some(session) = registry.get(id.as_str()) {
            self.adopt(&session, &record);
            self.grant(&session, &record, lease);
            return Ok(session);
        }
        let state = SessionState::from_stored(&record).map_err(|err| {
            Lookup::Unavailable(StoreError::Corrupt(format!("session {id}: {err}")))
        })?;
        if record.established {
            state.initialized_elsewhere();
        }
        let session = registry
            .open(actix_mcp_actors::dev::SessionParts {
                id: id.clone(),
                dispatch: dispatch.clone(),
                config: actix_mcp_actors::dev::SessionConfig {
                    max_in_flight: server.config.max_concurrent_requests,
                },
                standalone: None,
                on_stopped: None,
                owner: record.owner.clone(),
            })
            .or_else(|err| {
                // Two requests of one session raced to start it here: the other won.
                registry.get(id.as_str()).ok_or(Lookup::Refused(err))
            })?;
        if session.data::<SessionState>().is_none() {
            self.install(&session, state);
        }
        // The handshake is the business of the node that opened the session: a client names
        // it only once `initialize` succeeded, and the record says when it completes.
        session.establish();
        self.grant(&session, &record, lease);
        Ok(session)
    }

    /// The session `id` held here, when its lease lets it be served without reading the store.
    fn leased(&self, registry: &RegistryHandle, id: &SessionId) -> Option<SessionHandle> {
        if self.lease.is_zero() {
            return None;
        }
        let continuity = self.cluster.bus.continuity()?;
        let session = registry.get(id.as_str())?;
        let state = session.data::<SessionState>()?;
        (state.is_initialized() && state.leased(continuity, Instant::now())).then_some(session)
    }

    /// What a lease of a record about to be read depends on: the bus's continuity, the count
    /// of messages about records heard, and the time (the lease runs from the read's start).
    /// `None` without leases, or when the bus cannot vouch for its messages now.
    fn lease_terms(&self) -> Option<LeaseTerms> {
        if self.lease.is_zero() {
            return None;
        }
        Some(LeaseTerms {
            continuity: self.cluster.bus.continuity()?,
            heard: self.heard.load(Ordering::Acquire),
            at: Instant::now(),
        })
    }

    /// Leases `record`, just read on `terms`, to `session`: when it is established, and
    /// neither the bus's continuity changed nor a message about a record arrived during the
    /// read (the record might predate it).
    fn grant(&self, session: &SessionHandle, record: &SessionRecord, terms: Option<LeaseTerms>) {
        let Some(terms) = terms else {
            return;
        };
        let Some(state) = session.data::<SessionState>() else {
            return;
        };
        if record.established
            && state.is_initialized()
            && self.heard.load(Ordering::Acquire) == terms.heard
            && self.cluster.bus.continuity() == Some(terms.continuity)
        {
            state.lease(terms.continuity, terms.at + self.lease);
        } else {
            state.end_lease();
        }
    }

    /// A message about a session's record arrived (it ended, or its state changed): records
    /// being read now are not leased.
    pub(crate) fn heard_of_record(&self) {
        self.heard.fetch_add(1, Ordering::AcqRel);
    }

    /// Waits (on a node's first requests only, and boundedly) until this node listens to the
    /// bus, so that nothing sent to a session served here is missed.
    pub(crate) async fn listening(&self) {
        if *self.listening.borrow() {
            return;
        }
        let mut listening = self.listening.subscribe();
        let _ = tokio::time::timeout(LISTEN_WAIT, listening.wait_for(|on| *on)).await;
    }

    /// Stores the record of a session whose `initialize` succeeded here, unless the cluster
    /// holds `cap` sessions already (where the store counts them; see
    /// [`SessionStore::create_within`]).
    pub(crate) async fn created(
        self: &Arc<Self>,
        session: &SessionHandle,
        cap: usize,
    ) -> Result<(), Lookup> {
        self.listening().await;
        let Some(state) = session.data::<SessionState>() else {
            return Ok(());
        };
        let record = record_of(session, &state);
        match self.store().create_within(&record, self.ttl, cap).await {
            Ok(Created::Stored) => {}
            Ok(Created::Full) => {
                return Err(Lookup::Refused(actix_mcp_actors::OpenError::Full(cap)));
            }
            Ok(Created::Taken) => {
                return Err(Lookup::Unavailable(StoreError::Corrupt(format!(
                    "session id {} is taken",
                    session.id()
                ))));
            }
            Err(err) => return Err(Lookup::Unavailable(err)),
        }
        state.stored_as(record.revision);
        self.watch(session, &state);
        Ok(())
    }

    /// Takes the client's `notifications/initialized` in the store (one round trip); `false`
    /// when the session is unknown. No other node is told: each reads it from the record with
    /// the session's next request there, and an actor of the session left idle before that
    /// (on the node that ran `initialize`, say) is closed by its handshake timer, which is
    /// harmless, since the session lives on in the store.
    pub(crate) async fn establish(&self, id: &SessionId) -> Result<bool, StoreError> {
        self.listening().await;
        self.store().establish(id, self.ttl).await
    }

    /// The handshake of a session held here, completed in the store by
    /// [`establish`](Self::establish): the same on its actor, with no store write.
    pub(crate) fn established_here(&self, session: &SessionHandle) {
        if let Some(state) = session.data::<SessionState>() {
            state.initialized_elsewhere();
        }
        session.establish();
    }

    /// Ends a session on every node; `false` when the store did not know it.
    pub(crate) async fn delete(
        &self,
        registry: &RegistryHandle,
        id: &SessionId,
    ) -> Result<bool, StoreError> {
        let known = self.store().delete(id).await?;
        self.heard_of_record();
        registry.close(id.as_str());
        self.publish(
            Recipients::All,
            BusMessage::Closed {
                session: id.clone(),
            },
        );
        Ok(known)
    }

    /// Takes a stored record of the session: its handshake, and its state unless the local one
    /// reflects a revision as new already (see [`SessionState::adopt`]).
    fn adopt(self: &Arc<Self>, session: &SessionHandle, record: &Arc<SessionRecord>) {
        let current = session.data::<SessionState>();
        if record.established {
            session.establish();
            if let Some(state) = &current {
                state.initialized_elsewhere();
            }
        }
        let taken = match &current {
            Some(state) => state.adopt(record).map(drop),
            None => SessionState::from_stored(record).map(|state| {
                if record.established {
                    state.initialized_elsewhere();
                }
                self.install(session, state);
            }),
        };
        if let Err(err) = taken {
            tracing::warn!(session = %record.id, %err, "ignored an unreadable session record");
        }
    }

    fn install(self: &Arc<Self>, session: &SessionHandle, state: SessionState) {
        session.set_data(state);
        if let Some(state) = session.data::<SessionState>() {
            self.watch(session, &state);
        }
    }

    /// Stores each change of `state` as it is made, as a change of the stored record's fields
    /// ([`SessionStore::update`]) that keeps whatever other nodes changed meanwhile; the
    /// request that made it waits until it is stored. The record as it is then is taken here
    /// and sent to the other nodes.
    fn watch(self: &Arc<Self>, session: &SessionHandle, state: &Arc<SessionState>) {
        let node = Arc::downgrade(self);
        let id = session.id().clone();
        let watched = Arc::downgrade(state);
        state.on_change(Arc::new(move |_: &SessionState, what: StateChange<'_>| {
            let node = node.upgrade()?;
            let updates = match what {
                StateChange::Initialized => {
                    // The record's `established` (the other nodes read it from there).
                    let id = id.clone();
                    actix_rt::spawn(async move {
                        if let Err(err) = node.establish(&id).await {
                            tracing::warn!(session = %id, %err, "could not store the end of a session's handshake");
                        }
                    });
                    return None;
                }
                StateChange::LogLevel(level) => vec![StateUpdate::Set {
                    field: "logLevel".into(),
                    value: json!(level),
                }],
                StateChange::Subscribed { uri, granted } => {
                    let mut updates = vec![StateUpdate::Insert {
                        field: "subscriptions".into(),
                        item: uri.to_owned(),
                    }];
                    if let Some(granted) = granted {
                        updates.push(StateUpdate::Set {
                            field: "grantedScopes".into(),
                            value: json!(granted),
                        });
                    }
                    updates
                }
                StateChange::Unsubscribed(uri) => vec![StateUpdate::Remove {
                    field: "subscriptions".into(),
                    item: uri.to_owned(),
                }],
            };
            let id = id.clone();
            let watched = watched.clone();
            // Stored whatever becomes of the request that waits for it (its client may go).
            let (done, stored) = tokio::sync::oneshot::channel();
            actix_rt::spawn(async move {
                let stored = node.store().update(&id, &updates, node.ttl).await;
                let state = watched.upgrade();
                let outcome = match stored {
                    Ok(Some(record)) => {
                        if let Some(state) = state
                            && let Err(err) = state.adopt(&record)
                        {
                            tracing::warn!(session = %id, %err, "ignored an unreadable session record");
                        }
                        // What a node acts on without a request (the log level and
                        // subscriptions, for what it pushes) reaches the others at once.
                        node.publish(
                            Recipients::All,
                            BusMessage::Changed {
                                record: SessionRecord::clone(&record),
                            },
                        );
                        Ok(())
                    }
                    Ok(None) => Err("the session has ended".to_owned()),
                    Err(err) => {
                        // What is stored differs from this node's view now: the next record
                        // met is taken.
                        if let Some(state) = state {
                            state.forget_revision();
                        }
                        tracing::warn!(session = %id, %err, "could not store a session's changed state");
                        Err(err.to_string())
                    }
                };
                let _ = done.send(outcome);
            });
            Some(Box::pin(async move {
                stored
                    .await
                    .unwrap_or_else(|_| Err("the node stopped before storing it".to_owned()))
            }) as crate::server::session::Storing)
        }));
    }
}

fn record_of(session: &SessionHandle, state: &SessionState) -> SessionRecord {
    SessionRecord {
        id: session.id().clone(),
        owner: session.owner().map(Arc::from),
        established: state.is_initialized(),
        revision: 0,
        state: state.to_stored(),
    }
}

fn publish(bus: &Arc<dyn Bus>, from: &NodeId, to: Recipients, message: BusMessage) {
    let bus = bus.clone();
    let envelope = Envelope {
        from: from.clone(),
        to,
        message,
    };
    actix_rt::spawn(async move {
        if let Err(err) = bus.publish(envelope).await {
            tracing::warn!(%err, "a message to the other nodes was lost");
        }
    });
}

/// The [`Relay`] of a cluster's registries: what has no recipient here goes on the bus.
#[derive(Debug)]
struct BusRelay {
    node: NodeId,
    bus: Arc<dyn Bus>,
    /// Where single-use values are claimed for the whole cluster.
    store: Arc<dyn SessionStore>,
    /// The replays asked for, waiting for their answer.
    replays: Arc<Replays>,
}

impl Relay for BusRelay {
    fn publish(&self, message: BusMessage) {
        publish(&self.bus, &self.node, Recipients::All, message);
    }

    /// Asks every other node; the one whose session holds the stream answers (the others
    /// know nothing of it, and say nothing), within [`EVENTS_REPLAY_WAIT`].
    fn replay_elsewhere(&self, session: &SessionId, after: EventId) -> ReplayFuture {
        let ticket = self.replays.next.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = tokio::sync::oneshot::channel();
        self.replays.waiting().insert(ticket, answer);
        publish(
            &self.bus,
            &self.node,
            Recipients::All,
            BusMessage::Protocol {
                topic: EVENTS_REPLAY.to_owned(),
                payload: json!({
                    "session": session.as_str(),
                    "stream": after.stream,
                    "after": after.seq,
                    "ticket": ticket,
                }),
            },
        );
        let replays = self.replays.clone();
        Box::pin(async move {
            let answer = tokio::time::timeout(EVENTS_REPLAY_WAIT, answered).await;
            replays.waiting().remove(&ticket);
            match answer {
                Ok(Ok(replay)) => replay,
                _ => Replay::Unknown,
            }
        })
    }

    fn claim_once<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        self.store.claim_once(key, ttl)
    }
}
