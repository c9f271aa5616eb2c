//! Server settings: the [`ServerConfig`] the builder's setters fill (page size, pinned
//! protocol version, timeouts, concurrency limit), read by the router and the transports.

use std::time::Duration;

use crate::protocol::ProtocolVersion;

/// Settings of a server. Defaults are not part of semver.
#[derive(Debug, Clone)]
pub(crate) struct ServerConfig {
    pub(crate) page_size: Option<usize>,
    pub(crate) protocol_version: Option<ProtocolVersion>,
    pub(crate) tool_timeout: Option<Duration>,
    pub(crate) peer_request_timeout: Option<Duration>,
    pub(crate) max_concurrent_requests: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            page_size: None,
            protocol_version: None,
            tool_timeout: None,
            peer_request_timeout: Some(Duration::from_secs(300)),
            max_concurrent_requests: 256,
        }
    }
}
