//! `server/discover` and the cache hints of cacheable results.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/server/discover>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching>

use serde::{Deserialize, Serialize};

use super::META_SERVER_INFO;
use crate::protocol::{Implementation, Meta, ResultType, ServerCapabilities};

/// Who may share a cached result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: any cache may share it.
    Public,
    /// Reusable only within the same authorization context.
    #[default]
    Private,
}

impl CacheScope {
    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Private => "private",
        }
    }
}

/// The cache hints of a cacheable result (`ttlMs`, `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CacheHints {
    /// How long the result stays fresh, in milliseconds (0: stale at once).
    pub ttl_ms: u64,
    /// Who may share it.
    pub cache_scope: CacheScope,
}

impl CacheHints {
    /// Hints with this time to live and scope.
    pub const fn new(ttl_ms: u64, cache_scope: CacheScope) -> Self {
        Self {
            ttl_ms,
            cache_scope,
        }
    }
}

/// The result of `server/discover`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// The revisions without the handshake (2026-07-28 and later) the server serves.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Always `complete`.
    pub result_type: ResultType,
    /// Cache hints.
    #[serde(flatten)]
    pub cache: CacheHints,
    /// Result metadata (`io.modelcontextprotocol/serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl DiscoverResult {
    /// The server's info from `_meta`.
    pub fn server_info(&self) -> Option<Implementation> {
        let value = self.meta.as_ref()?.get(META_SERVER_INFO)?;
        Implementation::deserialize(value).ok()
    }
}
