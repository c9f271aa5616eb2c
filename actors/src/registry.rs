//! Registry actor: owns and supervises the sessions of one transport endpoint (an HTTP
//! endpoint's many sessions, or a stdio connection's one), expires idle ones, and fans
//! server-wide notifications out to all of them.
//!
//! Started (under a supervisor) by the transport, which holds a cheap [`RegistryHandle`]. The
//! session table is the registry's, held in shared, read-mostly state: a request finds its
//! session through the handle without a mailbox round trip (the hot path), and a session opened
//! through the handle is in the table before its id is sent to the client, so the client's
//! next request finds it. Everything else is the actor's, by message:
//!
//! - every session tells its registry when it is gone ([`SessionStopped`], sent when the
//!   session actor is dropped, so also when a panic killed it); the registry tears down what
//!   the session left (its in-flight requests are cancelled, its streams closed, its stored
//!   events dropped), removes it from the table and runs the transport's hook;
//! - [`Sweep`] closes sessions idle past the timeout, and sessions whose client has not finished
//!   the handshake and has left them idle for [`RegistryConfig::handshake_timeout`] (on a timer,
//!   or on demand);
//! - [`Broadcast`] delivers a frame to every session's standalone stream. Broadcasts are sent
//!   with `try_send`: when the registry's mailbox is full, the caller delivers the frame itself
//!   rather than queue it without bound. Each delivery goes straight into a stream's event
//!   log, which drops a connection that does not keep up (see [`EventLog`](crate::dev::EventLog)).
//!
//! A closed session leaves the table (and frees its place) at once, though its actor stops a
//! little later; the registry still cleans up after it then. At the session cap, opening a
//! session evicts the least recently active one idle for at least
//! [`RegistryConfig::evict_idle_after`], if any, rather than refusing every newcomer; and a cap
//! per owner ([`RegistryConfig::max_sessions_per_principal`]) keeps one principal from taking every
//! place.
//!
//! Lifecycle: Started (schedules the idle sweep) → Running → Stopped with its system. A panic in
//! code the registry runs but does not own (an event store's, on a broadcast or as a session is
//! torn down; the transport's hook of a session gone) is caught and logged, and the registry
//! restarts: its supervisor starts it again on the same mailbox, and the table, which lives
//! outside the actor, is kept.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use actix::prelude::SendError;
use actix::{
    Actor, ActorContext as _, Addr, AsyncContext, Context, Handler, Message, Supervised, Supervisor,
};

use crate::carry::Carry;
use crate::cluster::Relay;
use crate::detached::{Cancelled, Detached};
use crate::dispatch::Dispatch;
use crate::error::OpenError;
use crate::event_store::EventStore;
use crate::ids::SessionId;
use crate::in_flight::{Abort, Cancel, CancelOnDrop, InFlight};
use crate::jsonrpc::Frame;
use crate::jsonrpc::{Request, RequestId};
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::outlet::Outlet;
use crate::scope::{Home, RequestScope};
use crate::session::progress_token;
use crate::session::{OnStopped, Session, SessionHandle, SessionParts, SessionShared};

/// Limits of a registry. Defaults are not part of semver.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// Most live sessions (default 10,000). Opening one more evicts a session idle for at least
    /// [`evict_idle_after`](Self::evict_idle_after), or fails with [`OpenError::Full`] when none
    /// is.
    pub max_sessions: usize,
    /// Sessions idle this long are closed (default 30 minutes; `None` keeps them forever).
    pub idle_timeout: Option<Duration>,
    /// Sessions not [established](crate::SessionHandle::establish) and idle this long (no
    /// request in flight, no stream open, none since) are closed (default `None`: never). A
    /// transport whose protocol has a handshake sets it, so that clients that open sessions and
    /// walk away before the end of the handshake cannot pile them up. A busy session is not
    /// closed by it: a client that keeps one busy holds it as long as a client that finished
    /// the handshake could; and in a cluster, a node's actor for a session whose handshake
    /// ended on another node learns it with the session's next request there, or is closed
    /// here while idle (the session lives on in the store).
    pub handshake_timeout: Option<Duration>,
    /// At the session cap, the least recently active session idle for at least this long is
    /// closed to make room for a new one (default `None`: never; a new session is refused).
    pub evict_idle_after: Option<Duration>,
    /// Most live sessions one owner (see [`SessionParts::owner`]) may hold (default `None`: no
    /// limit); one more fails with [`OpenError::OwnerFull`]. Sessions without an owner are not
    /// counted.
    pub max_sessions_per_principal: Option<usize>,
    /// The way to the other nodes of a cluster (default `None`: a single node). Sessions then
    /// number their streams and server-to-client requests from a random base, so that no two
    /// nodes serving one session use the same numbers, and a message with no recipient here
    /// (a session-wide frame with no standalone stream here, a client's answer or
    /// cancellation for a request that is not here, a broadcast) is handed to the relay.
    pub relay: Option<Arc<dyn Relay>>,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            max_sessions: 10_000,
            idle_timeout: Some(Duration::from_secs(30 * 60)),
            handshake_timeout: None,
            evict_idle_after: None,
            max_sessions_per_principal: None,
            relay: None,
        }
    }
}

impl RegistryConfig {
    /// How often the sweep runs: a quarter of the shortest timeout, within 10 ms and 30 s;
    /// `None` when there is nothing to sweep for.
    fn sweep_every(&self) -> Option<Duration> {
        let shortest = match (self.idle_timeout, self.handshake_timeout) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return None,
        };
        Some((shortest / 4).clamp(Duration::from_millis(10), Duration::from_secs(30)))
    }
}

/// Broadcasts the registry's mailbox holds before callers deliver them themselves.
const BROADCAST_MAILBOX: usize = 256;

/// A session, its owner and the hook its transport runs when it is gone.
struct Entry {
    handle: SessionHandle,
    owner: Option<Arc<str>>,
    on_stopped: Option<OnStopped>,
}

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The registry's sessions: the live ones (found by id, counted against the caps), the closed
/// ones whose actors have not stopped yet (not found, not counted, but cleaned up after), and
/// the live sessions of each owner.
#[derive(Default)]
struct Sessions {
    live: Map<SessionId, Entry>,
    closing: Map<SessionId, Entry>,
    per_owner: Map<Arc<str>, usize>,
}

impl Sessions {
    fn len(&self) -> usize {
        self.live.len()
    }

    fn owned_by(&self, owner: Option<&str>) -> usize {
        owner.map_or(0, |owner| self.per_owner.get(owner).copied().unwrap_or(0))
    }

    fn insert(&mut self, id: SessionId, entry: Entry) {
        if let Some(owner) = &entry.owner {
            *self.per_owner.entry(owner.clone()).or_default() += 1;
        }
        self.live.insert(id, entry);
    }

    fn uncount(&mut self, entry: &Entry) {
        if let Some(owner) = &entry.owner
            && let Some(count) = self.per_owner.get_mut(owner)
        {
            *count -= 1;
            if *count == 0 {
                self.per_owner.remove(owner);
            }
        }
    }

    /// Moves a live session to the closing ones (its place is free at once); its handle, to
    /// close it.
    fn retire(&mut self, id: &str) -> Option<SessionHandle> {
        let (id, entry) = self.live.remove_entry(id)?;
        self.uncount(&entry);
        let handle = entry.handle.clone();
        self.closing.insert(id, entry);
        Some(handle)
    }

    /// Forgets a session whose actor is gone, live or closing; its entry.
    fn forget(&mut self, shared: &Arc<SessionShared>) -> Option<Entry> {
        let id = shared.id();
        let same = |entry: &Entry| Arc::ptr_eq(entry.handle.shared_arc(), shared);
        if self.live.get(id).is_some_and(same) {
            let entry = self.live.remove(id)?;
            self.uncount(&entry);
            return Some(entry);
        }
        if self.closing.get(id).is_some_and(same) {
            return self.closing.remove(id);
        }
        None
    }

    /// Makes room for a new session of `owner`, or says why there is none. At the cap, the
    /// least recently active session idle for at least `config.evict_idle_after` is retired and
    /// returned, to be closed.
    fn make_room(
        &mut self,
        config: &RegistryConfig,
        owner: Option<&str>,
    ) -> Result<Option<SessionHandle>, OpenError> {
        if let Some(limit) = config.max_sessions_per_principal
            && self.owned_by(owner) >= limit
        {
            return Err(OpenError::OwnerFull(limit));
        }
        if self.len() < config.max_sessions {
            return Ok(None);
        }
        let full = OpenError::Full(config.max_sessions);
        let Some(minimum) = config.evict_idle_after else {
            return Err(full);
        };
        let victim = self
            .live
            .iter()
            .map(|(id, entry)| (entry.handle.idle_for(), id))
            .filter(|(idle, _)| *idle >= minimum)
            .max_by_key(|(idle, _)| *idle)
            .map(|(_, id)| id.clone());
        match victim {
            Some(id) => Ok(self.retire(id.as_str())),
            None => Err(full),
        }
    }
}

type Table = Arc<RwLock<Sessions>>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn read(table: &Table) -> RwLockReadGuard<'_, Sessions> {
    table
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write(table: &Table) -> RwLockWriteGuard<'_, Sessions> {
    table
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The registry actor. See the module docs.
pub struct Registry {
    table: Table,
    config: RegistryConfig,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("sessions", &read(&self.table).len())
            .field("config", &self.config)
            .finish()
    }
}

/// A cheap, cloneable handle on a registry: what each transport worker holds. Cloning one
/// allocates nothing (an actix address's own clone does).
#[derive(Clone)]
pub struct RegistryHandle {
    addr: Arc<Addr<Registry>>,
    table: Table,
    detached: Arc<Mutex<Detached>>,
    config: RegistryConfig,
    metrics: Arc<Metrics>,
    store: Option<Arc<dyn EventStore>>,
}

impl fmt::Debug for RegistryHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryHandle")
            .field("sessions", &read(&self.table).len())
            .field("config", &self.config)
            .finish()
    }
}

impl Registry {
    /// Starts a supervised registry on the current arbiter. Its sessions keep their stream
    /// events in `store` (for `Last-Event-ID` resumption) when one is given.
    pub fn start(
        config: RegistryConfig,
        metrics: Arc<Metrics>,
        store: Option<Arc<dyn EventStore>>,
    ) -> RegistryHandle {
        let table: Table = Arc::default();
        let actor_table = table.clone();
        let actor_config = config.clone();
        let addr = Supervisor::start(move |ctx: &mut Context<Registry>| {
            ctx.set_mailbox_capacity(BROADCAST_MAILBOX);
            Registry {
                table: actor_table,
                config: actor_config,
            }
        });
        RegistryHandle {
            addr: Arc::new(addr),
            table,
            detached: Arc::default(),
            config,
            metrics,
            store,
        }
    }

    fn sweep(&self) {
        let idle = self.config.idle_timeout;
        let handshake = self.config.handshake_timeout;
        if idle.is_none() && handshake.is_none() {
            return;
        }
        let expired: Vec<(SessionId, &'static str)> = read(&self.table)
            .live
            .iter()
            .filter_map(|(id, entry)| {
                let handle = &entry.handle;
                let why = if !handle.is_alive() {
                    "closing a session that has ended"
                } else if handshake
                    .is_some_and(|limit| !handle.is_established() && handle.idle_for() >= limit)
                {
                    "closing an idle session whose client has not finished the handshake"
                } else if idle.is_some_and(|limit| handle.idle_for() >= limit) {
                    "closing an idle session"
                } else {
                    return None;
                };
                Some((id.clone(), why))
            })
            .collect();
        for (id, why) in expired {
            let retired = write(&self.table).retire(id.as_str());
            if let Some(handle) = retired {
                tracing::info!(session = %id, why);
                handle.close();
            }
        }
    }
}

impl Actor for Registry {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(every) = self.config.sweep_every() {
            ctx.run_interval(every, |registry, _| registry.sweep());
        }
    }
}

impl Supervised for Registry {
    fn restarting(&mut self, _: &mut Self::Context) {
        tracing::warn!("registry restarting; its session table is kept");
    }
}

impl RegistryHandle {
    /// Starts a session actor on the current arbiter, under this registry, bound to
    /// [`SessionParts::owner`] when it has one. At the session cap, the least recently active
    /// session idle for at least [`RegistryConfig::evict_idle_after`] is closed to make room.
    ///
    /// # Errors
    /// [`OpenError::Full`] when the registry holds `max_sessions` live sessions and none may be
    /// evicted; [`OpenError::OwnerFull`] when the owner holds
    /// [`RegistryConfig::max_sessions_per_principal`] live sessions.
    pub fn open(&self, mut parts: SessionParts) -> Result<SessionHandle, OpenError> {
        let owner = parts.owner.take();
        {
            // The cheap refusals, before any actor starts.
            let table = read(&self.table);
            if let Some(limit) = self.config.max_sessions_per_principal
                && table.owned_by(owner.as_deref()) >= limit
            {
                return Err(OpenError::OwnerFull(limit));
            }
            if table.len() >= self.config.max_sessions && self.config.evict_idle_after.is_none() {
                return Err(OpenError::Full(self.config.max_sessions));
            }
        }
        let on_stopped = parts.on_stopped.take();
        let id = parts.id.clone();
        let events = self.store.as_ref().map(|store| store.open(&id));
        let handle = Session::start(
            parts,
            Addr::clone(&self.addr).recipient(),
            events,
            self.metrics.clone(),
            self.config.relay.clone(),
        );
        if let Some(owner) = &owner {
            handle.bind_owner(owner.clone());
        }
        let mut table = write(&self.table);
        let room = if table.live.contains_key(&id) || table.closing.contains_key(&id) {
            Err(OpenError::Full(self.config.max_sessions))
        } else {
            table.make_room(&self.config, owner.as_deref())
        };
        let evicted = match room {
            Ok(evicted) => evicted,
            Err(err) => {
                drop(table);
                handle.close();
                return Err(err);
            }
        };
        table.insert(
            id,
            Entry {
                handle: handle.clone(),
                owner,
                on_stopped,
            },
        );
        drop(table);
        if let Some(evicted) = evicted {
            tracing::info!(session = %evicted.id(), "evicting the least recently active idle session to make room");
            evicted.close();
        }
        Ok(handle)
    }

    /// Looks a live session up without marking it used (a message about it, not a request).
    pub fn find(&self, id: &str) -> Option<SessionHandle> {
        let handle = read(&self.table).live.get(id)?.handle.clone();
        handle.is_alive().then_some(handle)
    }

    /// The relay to the other nodes of a cluster, when this registry has one.
    pub fn relay(&self) -> Option<&Arc<dyn Relay>> {
        self.config.relay.as_ref()
    }

    /// Looks a live session up (without a mailbox round trip) and marks it used.
    pub fn get(&self, id: &str) -> Option<SessionHandle> {
        let handle = read(&self.table).live.get(id)?.handle.clone();
        if !handle.is_alive() {
            return None;
        }
        handle.touch();
        Some(handle)
    }

    /// Closes a session; `false` when it was not live. From this call on, the session is no
    /// longer found and its place is free; the registry cleans up after it once its actor has
    /// stopped.
    pub fn close(&self, id: &str) -> bool {
        let retired = write(&self.table).retire(id);
        match retired {
            Some(handle) => {
                let alive = handle.is_alive();
                handle.close();
                alive
            }
            None => false,
        }
    }

    /// Sends a frame to every live session's standalone stream. Never queues without bound:
    /// when the registry's mailbox is full, the frame is delivered here, by the caller.
    pub fn broadcast(&self, frame: Frame) {
        if let Some(relay) = &self.config.relay {
            relay.publish(crate::cluster::BusMessage::Broadcast {
                frame: frame.json.to_string(),
            });
        }
        self.broadcast_here(frame);
    }

    /// Sends a frame to the standalone stream of every session open on this node only (a
    /// broadcast another node of the cluster relayed).
    pub fn broadcast_here(&self, frame: Frame) {
        match self.addr.try_send(Broadcast(frame)) {
            Ok(()) => {}
            Err(SendError::Full(Broadcast(frame)) | SendError::Closed(Broadcast(frame))) => {
                // A panic in an event store was caught and logged there.
                let _ = deliver_to_all(&self.table, &frame);
            }
        }
    }

    /// Number of live sessions.
    pub fn len(&self) -> usize {
        read(&self.table).len()
    }

    /// Whether no session is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every live session (a snapshot).
    pub fn sessions(&self) -> Vec<SessionHandle> {
        read(&self.table)
            .live
            .values()
            .map(|entry| entry.handle.clone())
            .filter(SessionHandle::is_alive)
            .collect()
    }

    /// The gauges of every actor under this registry.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// The shared gauges.
    pub fn metrics_handle(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Answers one request without a session (2025 stateless mode, a 2026-07-28 request, an
    /// in-process call) under this registry: it is recorded in the registry's table of such
    /// requests while it runs (as a session's request is in the session's), so the gauges, a
    /// drain ([`abort_detached`](Self::abort_detached)) and a shutdown see it. It runs on the
    /// current arbiter (polled once in place, then an actor only if still pending), `dispatch`
    /// answers it, and its frames go to `outlet`. Dropping the returned guard cancels it (an
    /// HTTP transport holds it for as long as the client waits).
    pub fn start_detached(
        &self,
        request: Request,
        dispatch: &Arc<dyn Dispatch>,
        outlet: Outlet,
        carry: Carry,
    ) -> CancelOnDrop {
        self.start_detached_for(None, request, dispatch, outlet, carry)
    }

    /// Like [`start_detached`](Self::start_detached), for a request whose transport knows who
    /// sent it: `owner` (an authenticated principal, the key
    /// [`SessionParts::owner`] holds for a session). Until it ends, the request is found by
    /// [`cancel_detached`](Self::cancel_detached) under its owner and its id, unless its
    /// method may not be cancelled ([`Dispatch::is_cancellable`]); no other owner finds it.
    pub fn start_detached_for(
        &self,
        owner: Option<Arc<str>>,
        request: Request,
        dispatch: &Arc<dyn Dispatch>,
        outlet: Outlet,
        carry: Carry,
    ) -> CancelOnDrop {
        // Refused as in a session: the token would be copied into every progress notification.
        let progress = match progress_token(&request) {
            Ok(token) => token,
            Err(error) => {
                outlet.deliver_or_log(Frame::error(Some(&request.id), &error), "refusal");
                outlet.finish();
                return CancelOnDrop::new(None);
            }
        };
        let key = owner
            .filter(|_| dispatch.is_cancellable(&request.method))
            .map(|owner| (owner, request.id.clone()));
        let ticket = lock(&self.detached).reserve(key);
        let scope = RequestScope::new(
            request.id.clone(),
            outlet,
            Home::Registry(self.clone(), ticket),
            progress,
            self.metrics.clone(),
            carry,
        );
        let actor = InFlight::begin(request, scope, dispatch);
        if let Some(actor) = &actor {
            let cancelled = lock(&self.detached).started(ticket, actor.clone());
            if let Some(reason) = cancelled {
                // Its owner cancelled it during its first poll.
                actor.do_send(Cancel { reason });
            }
        }
        CancelOnDrop::new(actor)
    }

    /// Cancels `owner`'s request without a session `id` (its `notifications/cancelled`), if
    /// one runs here (see [`start_detached_for`](Self::start_detached_for)): the request is
    /// stopped as when its client goes away ([`CancelOnDrop`]), and sends nothing more. Two
    /// requests of one owner with the same id (two of its clients) are both cancelled. Whether
    /// one was found: `false` when none of this owner has that id here (it ended, never
    /// existed, or, in a cluster, may run on another node); another owner's request of that id
    /// is never found.
    pub fn cancel_detached(&self, owner: &str, id: &RequestId, reason: Option<String>) -> bool {
        let found = lock(&self.detached).cancel(owner, id, reason.clone());
        match found {
            Cancelled::Found(running) => {
                for actor in running {
                    actor.do_send(Cancel {
                        reason: reason.clone(),
                    });
                }
                true
            }
            Cancelled::Unknown => false,
        }
    }

    /// Forgets a request without a session that has ended.
    pub(crate) fn forget_detached(&self, ticket: u64) {
        lock(&self.detached).forget(ticket);
    }

    /// Requests without a session running under this registry now.
    pub fn detached_in_flight(&self) -> usize {
        lock(&self.detached).len()
    }

    /// Stops every request without a session still running, telling each peer why as its
    /// revision allows (see [`Abort`]); how many were told. Used when a draining transport's
    /// deadline passes.
    pub fn abort_detached(&self, reason: &str) -> usize {
        let running = lock(&self.detached).running();
        for actor in &running {
            actor.do_send(Abort {
                reason: reason.to_owned(),
            });
        }
        running.len()
    }

    /// Runs the idle sweep now.
    pub fn sweep(&self) {
        self.addr.do_send(Sweep);
    }

    /// Closes every session and cancels every request without a session.
    pub fn shutdown(&self) {
        for handle in self.sessions() {
            self.close(handle.id().as_str());
        }
        let running = lock(&self.detached).running();
        for actor in running {
            actor.do_send(Cancel {
                reason: Some("the transport is shutting down".into()),
            });
        }
    }

    /// Live sessions of `owner` (see [`SessionParts::owner`]).
    pub fn owned_by(&self, owner: &str) -> usize {
        read(&self.table).owned_by(Some(owner))
    }

    /// The registry actor's address.
    pub fn addr(&self) -> &Addr<Registry> {
        &self.addr
    }
}

/// Delivers `frame` to every live session's standalone stream; whether code the registry does
/// not own (a session's event store) panicked on the way (the other sessions still get it).
fn deliver_to_all(table: &Table, frame: &Frame) -> bool {
    let sessions: Vec<SessionHandle> = read(table)
        .live
        .values()
        .map(|entry| entry.handle.clone())
        .collect();
    let mut panicked = false;
    for session in sessions {
        panicked |= guarded("delivering a broadcast", || {
            session.notify_here(frame.clone());
        });
    }
    panicked
}

/// Runs `work`, which calls code the registry does not own (an event store's, a transport's
/// hook): a panic in it is caught and logged; whether there was one.
fn guarded(what: &str, work: impl FnOnce()) -> bool {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(()) => false,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|message| (*message).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(what, panic = %message, "a panic in the registry");
            true
        }
    }
}

/// After a panic in one of its handlers: the registry restarts (its supervisor starts it again
/// on the same mailbox; the table, outside the actor, is kept), as after any failure.
fn restart(ctx: &mut Context<Registry>) {
    ctx.stop();
}

/// A session actor is gone (stopped, or killed by a panic). Sent by the session itself as it
/// is dropped. The registry tears down what it left and forgets it.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct SessionStopped {
    pub(crate) shared: Arc<SessionShared>,
}

impl fmt::Debug for SessionStopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionStopped")
    }
}

impl Handler<SessionStopped> for Registry {
    type Result = ();

    fn handle(&mut self, msg: SessionStopped, ctx: &mut Self::Context) {
        // The session's event store runs here (it closes the session's events): whatever it
        // does, the session is forgotten.
        let mut panicked = guarded("tearing a session down", || msg.shared.tear_down());
        let id = msg.shared.id().clone();
        let entry = write(&self.table).forget(&msg.shared);
        tracing::debug!(session = %id, "session gone");
        if let Some(on_stopped) = entry.and_then(|entry| entry.on_stopped) {
            panicked |= guarded("the transport's hook of a session gone", || on_stopped(&id));
        }
        if panicked {
            restart(ctx);
        }
    }
}

/// Send a frame to every session's standalone stream. Sent by [`RegistryHandle::broadcast`].
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Broadcast(pub Frame);

impl Handler<Broadcast> for Registry {
    type Result = ();

    fn handle(&mut self, msg: Broadcast, ctx: &mut Self::Context) {
        if deliver_to_all(&self.table, &msg.0) {
            restart(ctx);
        }
    }
}

/// Close sessions idle past the timeout now. Sent by [`RegistryHandle::sweep`]; also runs on a
/// timer.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Sweep;

impl Handler<Sweep> for Registry {
    type Result = ();

    fn handle(&mut self, _: Sweep, _: &mut Self::Context) {
        self.sweep();
    }
}
