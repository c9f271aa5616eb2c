//! Registry actor: owns the live sessions of one server, expires idle ones, and fans
//! server-wide notifications out to all of them.
//!
//! Started (under a supervisor) by the transport that needs many sessions (Streamable HTTP).
//! The session table itself is shared, read-mostly state the registry owns: HTTP workers look a
//! session up through a [`RegistryHandle`] without touching the registry's mailbox, and open
//! sessions on their own arbiter so that sessions spread over every worker thread.
//!
//! Lifecycle: Started (schedules the idle sweep) → Running ([`Broadcast`], [`Sweep`]) → Stopped
//! with its system. A restart after a panic keeps the table, which lives
//! outside the actor.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix::{Actor, Addr, AsyncContext, Context, Handler, Message, Supervised, Supervisor};

use crate::error::OpenError;
use crate::ids::SessionId;
use crate::jsonrpc::Frame;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::session::{Session, SessionHandle, SessionParts};

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

type Table = Arc<RwLock<HashMap<SessionId, SessionHandle>>>;

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

fn read(table: &Table) -> std::sync::RwLockReadGuard<'_, HashMap<SessionId, SessionHandle>> {
    table
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write(table: &Table) -> std::sync::RwLockWriteGuard<'_, HashMap<SessionId, SessionHandle>> {
    table
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A cheap, cloneable handle on a registry: what each HTTP worker holds.
#[derive(Clone)]
pub struct RegistryHandle {
    addr: Addr<Registry>,
    table: Table,
    config: RegistryConfig,
    metrics: Arc<Metrics>,
}

impl fmt::Debug for RegistryHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryHandle")
            .field("sessions", &read(&self.table).len())
            .finish()
    }
}

impl Registry {
    /// Starts a supervised registry on the current arbiter.
    pub fn start(config: RegistryConfig, metrics: Arc<Metrics>) -> RegistryHandle {
        let table: Table = Arc::default();
        let actor_table = table.clone();
        let actor_config = config.clone();
        let addr = Supervisor::start(move |_| Registry {
            table: actor_table,
            config: actor_config,
        });
        RegistryHandle {
            addr,
            table,
            config,
            metrics,
        }
    }

    fn sweep(&self) {
        let Some(limit) = self.config.idle_timeout else {
            return;
        };
        let expired: Vec<SessionHandle> = read(&self.table)
            .values()
            .filter(|handle| handle.idle_for() >= limit || !handle.is_alive())
            .cloned()
            .collect();
        for handle in expired {
            tracing::info!(session = %handle.id(), "closing an idle session");
            write(&self.table).remove(handle.id());
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
    /// Starts a session actor on the current arbiter and registers it.
    ///
    /// # Errors
    /// [`OpenError::Full`] when the registry holds `max_sessions` live sessions.
    pub fn open(&self, mut parts: SessionParts) -> Result<SessionHandle, OpenError> {
        if read(&self.table).len() >= self.config.max_sessions {
            return Err(OpenError::Full(self.config.max_sessions));
        }
        let table = Arc::downgrade(&self.table);
        let chained = parts.on_stopped.take();
        parts.on_stopped = Some(Box::new(move |id: &SessionId| {
            if let Some(table) = table.upgrade() {
                write(&table).remove(id);
            }
            if let Some(chained) = chained {
                chained(id);
            }
        }));
        parts.metrics = self.metrics.clone();
        let id = parts.id.clone();
        let handle = Session::start(parts);
        let mut table = write(&self.table);
        if table.len() >= self.config.max_sessions {
            drop(table);
            handle.close();
            return Err(OpenError::Full(self.config.max_sessions));
        }
        table.insert(id, handle.clone());
        Ok(handle)
    }

    /// Looks a live session up (without a mailbox round trip) and marks it used.
    pub fn get(&self, id: &str) -> Option<SessionHandle> {
        let handle = read(&self.table).get(id).cloned()?;
        if !handle.is_alive() {
            return None;
        }
        handle.touch();
        Some(handle)
    }

    /// Closes a session; `false` when it was not live.
    pub fn close(&self, id: &str) -> bool {
        let handle = write(&self.table).remove(id);
        match handle {
            Some(handle) => {
                handle.close();
                true
            }
            None => false,
        }
    }

    /// Sends a frame to every live session's standalone stream.
    pub fn broadcast(&self, frame: Frame) {
        self.addr.do_send(Broadcast(frame));
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
        read(&self.table).values().cloned().collect()
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
        let handles: Vec<SessionHandle> = write(&self.table)
            .drain()
            .map(|(_, handle)| handle)
            .collect();
        for handle in handles {
            handle.close();
        }
    }

    /// The registry actor's address.
    pub fn addr(&self) -> &Addr<Registry> {
        &self.addr
    }
}

impl Handler<Broadcast> for Registry {
    type Result = ();

    fn handle(&mut self, msg: Broadcast, _: &mut Self::Context) {
        for handle in read(&self.table).values() {
            handle.notify(msg.0.clone());
        }
    }
}

/// Send a frame to every session's standalone stream. Sent by [`RegistryHandle::broadcast`].
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Broadcast(pub Frame);

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
