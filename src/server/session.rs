//! What the protocol layer keeps per session: the negotiated version, the client's info and
//! capabilities (defaults for its requests), its log level and its resource subscriptions.

use std::collections::HashSet;
#[cfg(feature = "http")]
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use futures::future::BoxFuture;
#[cfg(feature = "http")]
use serde::{Deserialize, Serialize};
#[cfg(feature = "http")]
use serde_json::Value;

use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel, ProtocolVersion};

const LEVEL_UNSET: u8 = u8::MAX;

/// Client capabilities in an `Arc`; the common empty set is one instance shared by every
/// session that declared it (an idle session stays small).
fn shared_capabilities(capabilities: ClientCapabilities) -> Arc<ClientCapabilities> {
    static EMPTY: std::sync::OnceLock<Arc<ClientCapabilities>> = std::sync::OnceLock::new();
    if capabilities == ClientCapabilities::default() {
        EMPTY.get_or_init(Arc::default).clone()
    } else {
        Arc::new(capabilities)
    }
}

/// A change of a session's state on its way to a cluster's store: resolves once it is stored,
/// or with why it could not be.
pub(crate) type Storing = BoxFuture<'static, Result<(), String>>;

/// Called after each change of a session's state (in a cluster: to store it and tell the
/// other nodes), with what changed; the storing of the change, when the request that made it
/// is to wait for it.
pub(crate) type OnChange =
    Arc<dyn Fn(&SessionState, StateChange<'_>) -> Option<Storing> + Send + Sync>;

/// What changed in a [`SessionState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StateChange<'a> {
    /// The client sent `notifications/initialized`.
    Initialized,
    /// `logging/setLevel`.
    LogLevel(LoggingLevel),
    /// `resources/subscribe` of `uri`; `granted` holds the subscriber's scopes when they
    /// replaced those of the last subscriber.
    Subscribed {
        /// The URI.
        uri: &'a str,
        /// The new scopes, when they changed.
        granted: Option<Option<Arc<[String]>>>,
    },
    /// `resources/unsubscribe` of a URI that was subscribed.
    Unsubscribed(&'a str),
}

/// [`SessionState::revision`] while this state does not know which stored record it reflects:
/// the next record met is taken.
#[cfg(feature = "http")]
const REVISION_UNKNOWN: u64 = u64::MAX;

/// Per-session protocol state, stored in the session actor's handle.
pub struct SessionState {
    /// The version negotiated at `initialize`.
    pub version: ProtocolVersion,
    /// What the client said about itself.
    pub client_info: Option<Arc<Implementation>>,
    /// What the client declared it can do.
    pub client_capabilities: Arc<ClientCapabilities>,
    log_level: AtomicU8,
    initialized: AtomicBool,
    subscriptions: Mutex<HashSet<String>>,
    /// On a protected endpoint: the scopes of the identity that last subscribed. An update is
    /// delivered only for a URI whose scopes they cover (a subscription to a parent URI must
    /// not reveal the protected resources under it).
    granted: Mutex<Option<Arc<[String]>>>,
    on_change: OnceLock<OnChange>,
    /// In a cluster: the revision of the stored record this state reflects (a record of a
    /// lower or equal revision is older, and not taken), or [`REVISION_UNKNOWN`].
    #[cfg(feature = "http")]
    revision: AtomicU64,
    /// In a cluster with a session lease: until when, and under which continuity of the bus,
    /// this node may serve the session from this state without reading the store.
    #[cfg(feature = "http")]
    lease: Mutex<Option<Lease>>,
    /// Reports the session's duration when it ends.
    #[cfg(feature = "otel")]
    pub(crate) telemetry: crate::telemetry::ServerSessionTimer,
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionState")
            .field("version", &self.version)
            .field("client_info", &self.client_info)
            .field("client_capabilities", &self.client_capabilities)
            .field("log_level", &self.log_level())
            .field("initialized", &self.is_initialized())
            .finish_non_exhaustive()
    }
}

/// See [`SessionState::lease`].
#[cfg(feature = "http")]
#[derive(Debug, Clone, Copy)]
struct Lease {
    continuity: u64,
    until: std::time::Instant,
}

/// A session's state as a cluster's session store keeps it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg(feature = "http")]
struct StoredState {
    version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_info: Option<Implementation>,
    #[serde(default)]
    capabilities: ClientCapabilities,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log_level: Option<LoggingLevel>,
    /// Not written: a cluster keeps it as its record's `established`.
    #[serde(default, skip_serializing)]
    initialized: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    subscriptions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    granted_scopes: Option<Vec<String>>,
}

const LEVELS: [LoggingLevel; 8] = [
    LoggingLevel::Debug,
    LoggingLevel::Info,
    LoggingLevel::Notice,
    LoggingLevel::Warning,
    LoggingLevel::Error,
    LoggingLevel::Critical,
    LoggingLevel::Alert,
    LoggingLevel::Emergency,
];

impl SessionState {
    pub(crate) fn new(
        version: ProtocolVersion,
        client_info: Option<Implementation>,
        capabilities: ClientCapabilities,
    ) -> Self {
        Self {
            version,
            client_info: client_info.map(Arc::new),
            client_capabilities: shared_capabilities(capabilities),
            log_level: AtomicU8::new(LEVEL_UNSET),
            initialized: AtomicBool::new(false),
            subscriptions: Mutex::default(),
            granted: Mutex::default(),
            on_change: OnceLock::new(),
            #[cfg(feature = "http")]
            revision: AtomicU64::new(REVISION_UNKNOWN),
            #[cfg(feature = "http")]
            lease: Mutex::new(None),
            #[cfg(feature = "otel")]
            telemetry: crate::telemetry::ServerSessionTimer::new(version),
        }
    }

    /// Takes the changeable part (log level, subscriptions, granted scopes) of a stored
    /// `record` of this session, unless this state reflects a revision as new already (a
    /// record read before a change this node made, or relayed late, would undo it); whether it
    /// took it.
    ///
    /// # Errors
    /// When the record's state is not one this version wrote.
    #[cfg(feature = "http")]
    pub(crate) fn adopt(
        &self,
        record: &actix_mcp_actors::SessionRecord,
    ) -> Result<bool, serde_json::Error> {
        // Under the subscriptions' lock, as the changes made here are: a change and a record
        // are taken one after the other, never interleaved.
        let mut subscriptions = self.subscriptions();
        let known = self.revision.load(Ordering::Acquire);
        if known != REVISION_UNKNOWN && record.revision <= known {
            return Ok(false);
        }
        let stored = StoredState::deserialize(&record.state)?;
        match stored.log_level {
            Some(level) => self.store_log_level(level),
            None => self.log_level.store(LEVEL_UNSET, Ordering::Relaxed),
        }
        *subscriptions = stored.subscriptions.into_iter().collect();
        *lock(&self.granted) = stored.granted_scopes.map(Arc::from);
        self.revision.store(record.revision, Ordering::Release);
        Ok(true)
    }

    /// This state reflects the stored record of `revision` (the one it was stored as).
    #[cfg(feature = "http")]
    pub(crate) fn stored_as(&self, revision: u64) {
        self.revision.store(revision, Ordering::Release);
    }

    /// This state may differ from every stored record (a change made here could not be
    /// stored): the next record met is taken, whatever its revision, and the session is read
    /// from the store again.
    #[cfg(feature = "http")]
    pub(crate) fn forget_revision(&self) {
        self.revision.store(REVISION_UNKNOWN, Ordering::Release);
        self.end_lease();
    }

    /// This node may serve the session from this state, without reading the store, until
    /// `until`, while the bus's continuity stays `continuity`.
    #[cfg(feature = "http")]
    pub(crate) fn lease(&self, continuity: u64, until: std::time::Instant) {
        *lock(&self.lease) = Some(Lease { continuity, until });
    }

    /// Whether a lease holds at `now` under the bus's `continuity`.
    #[cfg(feature = "http")]
    pub(crate) fn leased(&self, continuity: u64, now: std::time::Instant) -> bool {
        lock(&self.lease).is_some_and(|lease| lease.continuity == continuity && now < lease.until)
    }

    /// Ends the lease: the session's next request reads the store.
    #[cfg(feature = "http")]
    pub(crate) fn end_lease(&self) {
        *lock(&self.lease) = None;
    }

    /// The state as a cluster's session store keeps it.
    #[cfg(feature = "http")]
    pub(crate) fn to_stored(&self) -> Value {
        let mut subscriptions: Vec<String> = self.subscriptions().iter().cloned().collect();
        subscriptions.sort();
        serde_json::to_value(StoredState {
            version: self.version.as_str().to_owned(),
            client_info: self.client_info.as_deref().cloned(),
            capabilities: (*self.client_capabilities).clone(),
            log_level: self.log_level(),
            initialized: self.is_initialized(),
            subscriptions,
            granted_scopes: self.granted().map(|scopes| scopes.to_vec()),
        })
        .unwrap_or(Value::Null)
    }

    /// The state a cluster's session store kept.
    ///
    /// # Errors
    /// When `stored` is not a state this version wrote.
    #[cfg(feature = "http")]
    pub(crate) fn from_stored(
        record: &actix_mcp_actors::SessionRecord,
    ) -> Result<Self, serde_json::Error> {
        let stored = StoredState::deserialize(&record.state)?;
        let state = Self::new(
            ProtocolVersion::negotiate(&stored.version),
            stored.client_info,
            stored.capabilities,
        );
        if let Some(level) = stored.log_level {
            state.store_log_level(level);
        }
        state
            .initialized
            .store(stored.initialized, Ordering::Relaxed);
        state.subscriptions().extend(stored.subscriptions);
        *lock(&state.granted) = stored.granted_scopes.map(Arc::from);
        state.stored_as(record.revision);
        Ok(state)
    }

    /// Calls `hook` after each change of this state from now on (once per state).
    #[cfg(feature = "http")]
    pub(crate) fn on_change(&self, hook: OnChange) {
        let _ = self.on_change.set(hook);
    }

    fn changed(&self, what: StateChange<'_>) -> Option<Storing> {
        self.on_change.get().and_then(|hook| hook(self, what))
    }

    /// The level the client set with `logging/setLevel`, if any.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        LEVELS
            .get(usize::from(self.log_level.load(Ordering::Relaxed)))
            .copied()
    }

    /// Sets the level; in a cluster, the storing of the change, for the request to wait for.
    #[must_use = "a cluster stores the change only when the future is polled"]
    pub(crate) fn set_log_level(&self, level: LoggingLevel) -> Option<Storing> {
        let _ordered = self.subscriptions();
        self.store_log_level(level);
        self.changed(StateChange::LogLevel(level))
    }

    fn store_log_level(&self, level: LoggingLevel) {
        let index = LEVELS.iter().position(|l| *l == level).unwrap_or_default();
        self.log_level
            .store(u8::try_from(index).unwrap_or(0), Ordering::Relaxed);
    }

    /// Whether the client sent `notifications/initialized`.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Relaxed)
    }

    /// Takes a handshake completed elsewhere (in a cluster: on another node), without telling
    /// anyone of the change.
    #[cfg(feature = "http")]
    pub(crate) fn initialized_elsewhere(&self) {
        self.initialized.store(true, Ordering::Relaxed);
    }

    pub(crate) fn mark_initialized(&self) {
        if !self.initialized.swap(true, Ordering::Relaxed) {
            // Stored in the background (the hook spawns it): a notification is not answered.
            let _ = self.changed(StateChange::Initialized);
        }
    }

    fn subscriptions(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Subscribes to `uri`; `granted` is the subscriber's scopes on a protected endpoint. In a
    /// cluster, the storing of the change, for the request to wait for.
    #[must_use = "a cluster stores the change only when the future is polled"]
    pub(crate) fn subscribe(&self, uri: &str, granted: Option<&[String]>) -> Option<Storing> {
        let mut subscriptions = self.subscriptions();
        let regranted = {
            let mut kept = lock(&self.granted);
            let changed = kept.as_deref() != granted;
            if changed {
                *kept = granted.map(Arc::from);
            }
            changed.then(|| kept.clone())
        };
        let added = subscriptions.insert(uri.to_owned());
        if added || regranted.is_some() {
            // Under the lock, as a record taken from the store is: none falls in between.
            let storing = self.changed(StateChange::Subscribed {
                uri,
                granted: regranted,
            });
            drop(subscriptions);
            return storing;
        }
        None
    }

    /// The scopes of the identity that last subscribed, on a protected endpoint.
    pub(crate) fn granted(&self) -> Option<Arc<[String]>> {
        lock(&self.granted).clone()
    }

    /// Unsubscribes from `uri`. In a cluster, the storing of the change, for the request to
    /// wait for.
    #[must_use = "a cluster stores the change only when the future is polled"]
    pub(crate) fn unsubscribe(&self, uri: &str) -> Option<Storing> {
        let mut subscriptions = self.subscriptions();
        if subscriptions.remove(uri) {
            return self.changed(StateChange::Unsubscribed(uri));
        }
        None
    }

    /// Whether the client subscribed to `uri` (or to a resource `uri` lies under).
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions()
            .iter()
            .any(|s| uri == s || (uri.starts_with(s.as_str()) && uri[s.len()..].starts_with('/')))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
