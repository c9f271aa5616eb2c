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
//! - [`Sweep`] closes sessions idle past the timeout (on a timer, or on demand);
//! - [`Broadcast`] delivers a frame to every session's standalone stream. Broadcasts are sent
//!   with `try_send`: when the registry's mailbox is full, the caller delivers the frame itself
//!   rather than queue it without bound. Each delivery goes straight into a stream's event
//!   log, which drops a connection that does not keep up (see [`EventLog`](crate::EventLog)).
//!
//! Lifecycle: Started (schedules the idle sweep) → Running → Stopped with its system. A restart
//! after a panic keeps the table, which lives outside the actor.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use actix::prelude::SendError;
use actix::{Actor, Addr, AsyncContext, Context, Handler, Message, Supervised, Supervisor};

use crate::error::OpenError;
use crate::ids::SessionId;
use crate::jsonrpc::Frame;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::session::{OnStopped, Session, SessionHandle, SessionParts, SessionShared};
use crate::stream::EventStore;

/// Limits of a registry. Defaults are not part of semver.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// Most live sessions (default 10,000); opening one more fails with [`OpenError::Full`].
    pub max_sessions: usize,
    /// Sessions idle this long are closed (default 30 minutes; `None` keeps them forever).
    pub idle_timeout: Option<Duration>,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            max_sessions: 10_000,
            idle_timeout: Some(Duration::from_secs(30 * 60)),
        }
    }
}

/// Broadcasts the registry's mailbox holds before callers deliver them themselves.
const BROADCAST_MAILBOX: usize = 256;

/// A live session and the hook its transport runs when it is gone.
struct Entry {
    handle: SessionHandle,
    on_stopped: Option<OnStopped>,
}

type Table = Arc<RwLock<HashMap<SessionId, Entry, foldhash::fast::RandomState>>>;

fn read(
    table: &Table,
) -> RwLockReadGuard<'_, HashMap<SessionId, Entry, foldhash::fast::RandomState>> {
    table
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write(
    table: &Table,
) -> RwLockWriteGuard<'_, HashMap<SessionId, Entry, foldhash::fast::RandomState>> {
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

/// A cheap, cloneable handle on a registry: what each transport worker holds.
#[derive(Clone)]
pub struct RegistryHandle {
    addr: Addr<Registry>,
    table: Table,
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
            addr,
            table,
            config,
            metrics,
            store,
        }
    }

    fn sweep(&self) {
        let Some(limit) = self.config.idle_timeout else {
            return;
        };
        let expired: Vec<SessionHandle> = read(&self.table)
            .values()
            .map(|entry| &entry.handle)
            .filter(|handle| !handle.is_alive() || handle.idle_for() >= limit)
            .cloned()
            .collect();
        for handle in expired {
            tracing::info!(session = %handle.id(), "closing an idle session");
            handle.close();
        }
    }
}

impl Actor for Registry {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(limit) = self.config.idle_timeout {
            let every = (limit / 4).clamp(Duration::from_millis(10), Duration::from_secs(30));
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
    /// Starts a session actor on the current arbiter, under this registry.
    ///
    /// # Errors
    /// [`OpenError::Full`] when the registry holds `max_sessions` live sessions.
    pub fn open(&self, mut parts: SessionParts) -> Result<SessionHandle, OpenError> {
        if read(&self.table).len() >= self.config.max_sessions {
            return Err(OpenError::Full(self.config.max_sessions));
        }
        let on_stopped = parts.on_stopped.take();
        let id = parts.id.clone();
        let events = self.store.as_ref().map(|store| store.open(&id));
        let handle = Session::start(
            parts,
            self.addr.clone().recipient(),
            events,
            self.metrics.clone(),
        );
        let mut table = write(&self.table);
        if table.len() >= self.config.max_sessions || table.contains_key(&id) {
            drop(table);
            handle.close();
            return Err(OpenError::Full(self.config.max_sessions));
        }
        table.insert(
            id,
            Entry {
                handle: handle.clone(),
                on_stopped,
            },
        );
        Ok(handle)
    }

    /// Looks a live session up (without a mailbox round trip) and marks it used.
    pub fn get(&self, id: &str) -> Option<SessionHandle> {
        let handle = read(&self.table).get(id)?.handle.clone();
        if !handle.is_alive() {
            return None;
        }
        handle.touch();
        Some(handle)
    }

    /// Closes a session; `false` when it was not live. From this call on, the session is no
    /// longer found; the registry cleans up after it once its actor has stopped.
    pub fn close(&self, id: &str) -> bool {
        match self.get_any(id) {
            Some(handle) if handle.is_alive() => {
                handle.close();
                true
            }
            _ => false,
        }
    }

    fn get_any(&self, id: &str) -> Option<SessionHandle> {
        read(&self.table).get(id).map(|entry| entry.handle.clone())
    }

    /// Sends a frame to every live session's standalone stream. Never queues without bound:
    /// when the registry's mailbox is full, the frame is delivered here, by the caller.
    pub fn broadcast(&self, frame: Frame) {
        match self.addr.try_send(Broadcast(frame)) {
            Ok(()) => {}
            Err(SendError::Full(Broadcast(frame)) | SendError::Closed(Broadcast(frame))) => {
                deliver_to_all(&self.table, &frame);
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

    /// Runs the idle sweep now.
    pub fn sweep(&self) {
        self.addr.do_send(Sweep);
    }

    /// Closes every session.
    pub fn shutdown(&self) {
        for handle in self.sessions() {
            handle.close();
        }
    }

    /// The registry actor's address.
    pub fn addr(&self) -> &Addr<Registry> {
        &self.addr
    }
}

fn deliver_to_all(table: &Table, frame: &Frame) {
    let sessions: Vec<SessionHandle> = read(table)
        .values()
        .map(|entry| entry.handle.clone())
        .collect();
    for session in sessions {
        session.notify(frame.clone());
    }
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

    fn handle(&mut self, msg: SessionStopped, _: &mut Self::Context) {
        msg.shared.tear_down();
        let id = msg.shared.id().clone();
        let entry = {
            let mut table = write(&self.table);
            match table.get(&id) {
                Some(entry) if Arc::ptr_eq(entry.handle.shared_arc(), &msg.shared) => {
                    table.remove(&id)
                }
                _ => None,
            }
        };
        tracing::debug!(session = %id, "session gone");
        if let Some(on_stopped) = entry.and_then(|entry| entry.on_stopped) {
            on_stopped(&id);
        }
    }
}

/// Send a frame to every session's standalone stream. Sent by [`RegistryHandle::broadcast`].
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Broadcast(pub Frame);

impl Handler<Broadcast> for Registry {
    type Result = ();

    fn handle(&mut self, msg: Broadcast, _: &mut Self::Context) {
        deliver_to_all(&self.table, &msg.0);
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
