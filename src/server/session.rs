//! What the protocol layer keeps per session: the negotiated version, the client's info and
//! capabilities (defaults for its requests), its log level and its resource subscriptions.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

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

/// Per-session protocol state, stored in the session actor's handle.
#[derive(Debug)]
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
    /// Reports the session's duration when it ends.
    #[cfg(feature = "otel")]
    pub(crate) telemetry: crate::telemetry::ServerSessionTimer,
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
            #[cfg(feature = "otel")]
            telemetry: crate::telemetry::ServerSessionTimer::new(version),
        }
    }

    /// The level the client set with `logging/setLevel`, if any.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        LEVELS
            .get(usize::from(self.log_level.load(Ordering::Relaxed)))
            .copied()
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        let index = LEVELS.iter().position(|l| *l == level).unwrap_or_default();
        self.log_level
            .store(u8::try_from(index).unwrap_or(0), Ordering::Relaxed);
    }

    /// Whether the client sent `notifications/initialized`.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Relaxed)
    }

    pub(crate) fn mark_initialized(&self) {
        self.initialized.store(true, Ordering::Relaxed);
    }

    fn subscriptions(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn subscribe(&self, uri: &str) {
        self.subscriptions().insert(uri.to_owned());
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.subscriptions().remove(uri);
    }

    /// Whether the client subscribed to `uri` (or to a resource `uri` lies under).
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions()
            .iter()
            .any(|s| uri == s || (uri.starts_with(s.as_str()) && uri[s.len()..].starts_with('/')))
    }
}
