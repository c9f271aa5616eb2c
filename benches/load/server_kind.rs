//! The servers the load benchmark measures: what each is, how it is started, and what it is
//! compared with.

/// Which server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ServerKind {
    /// The bare actix-web handler answering JSON: the reference of JSON answers.
    Bare,
    /// The bare actix-web handler answering SSE, fed the session's headers: the reference of
    /// SSE answers and session setup.
    BareSse,
    /// The bare actix-web handler fed the same 2026-07-28 requests as [`ServerKind::V2026`]
    /// (the larger body with `_meta`, and the standard headers): its reference.
    BareV2026,
    /// actix-mcp, stateful, SSE answers.
    Sse,
    /// actix-mcp, stateful, JSON answers.
    Json,
    /// actix-mcp, stateless, JSON answers.
    Stateless,
    /// actix-mcp serving protocol 2026-07-28 (every request with its `_meta` and headers),
    /// JSON answers.
    V2026,
    /// rmcp, stateful, SSE answers.
    RmcpSse,
    /// rmcp, stateless, JSON answers.
    RmcpStateless,
    /// actix-mcp, stateful, SSE answers, on two nodes sharing their sessions on Redis behind
    /// HAProxy (round robin per request).
    Redis,
    /// The same, each node with a session lease of [`REDIS_LEASE_MS`] (`Cluster::session_lease`).
    RedisLease,
    /// The same as [`RedisLease`](Self::RedisLease), the nodes keeping requests' streams in
    /// their memory (`RedisEventStore::request_streams_on_node`).
    RedisOnNode,
}

/// The session lease of [`ServerKind::RedisLease`]'s nodes, in milliseconds.
const REDIS_LEASE_MS: u64 = 1000;

/// What the driver says when the Redis mode is asked for in a build without it.
pub(super) const NEEDS_REDIS_FEATURE: &str = "the Redis mode (LOAD_SERVERS=...,redis) needs the `redis` \
    feature: run `cargo bench --features redis --bench load`";

impl ServerKind {
    pub(super) fn parse(name: &str) -> Option<Self> {
        Some(match name.trim() {
            "bare" => Self::Bare,
            "bare-sse" => Self::BareSse,
            "bare-v2026" => Self::BareV2026,
            "sse" => Self::Sse,
            "json" => Self::Json,
            "stateless" => Self::Stateless,
            "v2026" => Self::V2026,
            "rmcp-sse" => Self::RmcpSse,
            "rmcp-stateless" => Self::RmcpStateless,
            "redis" => Self::Redis,
            "redis-lease" => Self::RedisLease,
            "redis-on-node" => Self::RedisOnNode,
            _ => return None,
        })
    }

    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Bare => "bare actix-web handler, JSON answers",
            Self::BareSse => "bare actix-web handler, SSE answers",
            Self::BareV2026 => "bare actix-web handler, 2026-07-28 requests",
            Self::Sse => "actix-mcp, stateful, SSE answers",
            Self::Json => "actix-mcp, stateful, JSON answers",
            Self::Stateless => "actix-mcp, stateless, JSON answers",
            Self::V2026 => "actix-mcp, protocol 2026-07-28, JSON answers",
            Self::RmcpSse => "rmcp, stateful, SSE answers",
            Self::RmcpStateless => "rmcp, stateless, JSON answers",
            Self::Redis => "actix-mcp, stateful, SSE answers, 2 nodes on Redis behind HAProxy",
            Self::RedisLease => {
                "actix-mcp, stateful, SSE answers, 2 nodes on Redis behind HAProxy, 1 s session lease"
            }
            Self::RedisOnNode => {
                "actix-mcp, stateful, SSE answers, 2 nodes on Redis behind HAProxy, 1 s session lease, requests' streams on node"
            }
        }
    }

    pub(super) fn stateful(self) -> bool {
        matches!(self, Self::Sse | Self::Json | Self::RmcpSse | Self::BareSse) || self.on_redis()
    }

    pub(super) fn is_ours(self) -> bool {
        matches!(self, Self::Sse | Self::Json | Self::Stateless | Self::V2026) || self.on_redis()
    }

    /// Whether this is the Redis mode (two nodes on Redis behind HAProxy).
    pub(super) fn on_redis(self) -> bool {
        matches!(self, Self::Redis | Self::RedisLease | Self::RedisOnNode)
    }

    /// The Redis mode's session lease, in milliseconds (none: every request reads the record).
    pub(super) fn session_lease_ms(self) -> Option<u64> {
        matches!(self, Self::RedisLease | Self::RedisOnNode).then_some(REDIS_LEASE_MS)
    }

    /// Whether the Redis mode's nodes keep requests' streams in their memory.
    pub(super) fn requests_on_node(self) -> bool {
        matches!(self, Self::RedisOnNode)
    }

    /// Whether this is one of the bare handlers (a reference).
    pub(super) fn is_bare(self) -> bool {
        matches!(self, Self::Bare | Self::BareSse | Self::BareV2026)
    }

    /// Whether requests carry the 2026-07-28 envelope (`_meta` and the standard headers).
    pub(super) fn v2026(self) -> bool {
        matches!(self, Self::V2026 | Self::BareV2026)
    }

    pub(super) fn args(self, max_sessions: usize) -> Vec<String> {
        let mcp = |mode: &str| {
            vec![
                "--serve-mcp".to_owned(),
                mode.to_owned(),
                max_sessions.to_string(),
            ]
        };
        match self {
            Self::Bare | Self::BareV2026 => vec!["--serve-bare".to_owned(), "json".to_owned()],
            Self::BareSse => vec!["--serve-bare".to_owned(), "sse".to_owned()],
            // The Redis mode's nodes get `--redis URL` on top (see `load/cluster.rs`).
            Self::Sse | Self::Redis | Self::RedisLease | Self::RedisOnNode => mcp("sse"),
            Self::Json => mcp("json"),
            Self::Stateless => mcp("stateless"),
            Self::V2026 => mcp("v2026"),
            Self::RmcpSse => vec!["--serve-rmcp".to_owned(), "sse".to_owned()],
            Self::RmcpStateless => vec!["--serve-rmcp".to_owned(), "stateless".to_owned()],
        }
    }
}
