//! Server settings: the [`ServerConfig`] the builder's setters fill (page size, pinned
//! protocol version, timeouts, concurrency limit), read by the router and the transports.

use std::time::Duration;

use crate::protocol::{CacheHints, CacheScope, ProtocolVersion, method};

/// The time limit of a tool invocation unless the tool or the builder sets another.
pub(crate) const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Settings of a server. Defaults are not part of semver.
#[derive(Debug, Clone)]
pub(crate) struct ServerConfig {
    pub(crate) page_size: Option<usize>,
    pub(crate) protocol_version: Option<ProtocolVersion>,
    pub(crate) tool_timeout: Option<Duration>,
    pub(crate) peer_request_timeout: Option<Duration>,
    pub(crate) max_concurrent_requests: usize,
    /// Cache hints of cacheable 2026 results, by method.
    pub(crate) cache: CacheConfig,
    /// At most this many `subscriptions/listen` streams are open at once.
    pub(crate) max_listeners: usize,
    /// Multi round-trip requests: state keys, park limits, the session shim's round limit.
    pub(crate) mrtr: crate::server::mrtr::MrtrConfig,
    /// Scopes every request on a bearer-protected endpoint needs.
    pub(crate) required_scopes: Vec<String>,
}

/// The cache hints (`ttlMs`, `cacheScope`) of each cacheable method's results (2026-07-28).
#[derive(Debug, Clone)]
pub(crate) struct CacheConfig {
    /// A handful of methods, looked up on every 2026 answer: a scan compares a length or two
    /// where a hash map would hash the name first.
    by_method: Vec<(String, CacheHints)>,
}

/// The methods whose complete results carry cache hints.
pub(crate) const CACHEABLE: &[&str] = &[
    method::SERVER_DISCOVER,
    method::TOOLS_LIST,
    method::PROMPTS_LIST,
    method::RESOURCES_LIST,
    method::RESOURCES_TEMPLATES_LIST,
    method::RESOURCES_READ,
];

impl Default for CacheConfig {
    fn default() -> Self {
        // Discovery (capabilities, instructions, server info) is fixed once the server is
        // built: a minute, private. Lists change whenever the application defines or removes
        // something at run time, and a client that does not listen would not hear of it: stale
        // at once, like resource contents, unless the server promises more (`cache_hints`).
        let by_method = CACHEABLE
            .iter()
            .map(|&m| {
                let hints = if m == method::SERVER_DISCOVER {
                    CacheHints::new(60_000, CacheScope::Private)
                } else {
                    CacheHints::new(0, CacheScope::Private)
                };
                (m.to_owned(), hints)
            })
            .collect();
        Self { by_method }
    }
}

impl CacheConfig {
    /// The hints of `method`'s results; `None` when its results are not cacheable.
    pub(crate) fn hints(&self, method: &str) -> Option<CacheHints> {
        self.slot(method).copied()
    }

    fn slot(&self, method: &str) -> Option<&CacheHints> {
        self.by_method
            .iter()
            .find_map(|(name, hints)| (name == method).then_some(hints))
    }

    fn slot_mut(&mut self, method: &str) -> Option<&mut CacheHints> {
        self.by_method
            .iter_mut()
            .find_map(|(name, hints)| (name == method).then_some(hints))
    }

    /// Sets the hints of one cacheable method; `false` when `method` is not cacheable.
    pub(crate) fn set(&mut self, method: &str, hints: CacheHints) -> bool {
        match self.slot_mut(method) {
            Some(slot) => {
                *slot = hints;
                true
            }
            None => false,
        }
    }

    /// Makes an extension's method cacheable, with its default hints (kept when already set).
    pub(crate) fn declare(&mut self, method: &str, hints: CacheHints) {
        if self.slot(method).is_none() {
            self.by_method.push((method.to_owned(), hints));
        }
    }

    /// Every cacheable method.
    pub(crate) fn methods(&self) -> Vec<String> {
        self.by_method
            .iter()
            .map(|(name, _)| name.clone())
            .collect()
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            page_size: None,
            protocol_version: None,
            // An abandoned call must not run (and keep its session busy) forever.
            tool_timeout: Some(DEFAULT_TOOL_TIMEOUT),
            peer_request_timeout: Some(Duration::from_secs(300)),
            max_concurrent_requests: 256,
            cache: CacheConfig::default(),
            max_listeners: 10_000,
            mrtr: crate::server::mrtr::MrtrConfig::default(),
            required_scopes: Vec::new(),
        }
    }
}
