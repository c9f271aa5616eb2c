//! Protocol revisions this SDK speaks, and what each one supports.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation>

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A dated MCP protocol revision, ordered by date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// Revision `2024-11-05`: the first published revision.
    V2024_11_05,
    /// Revision `2025-03-26`: batching, tool annotations, audio, completions capability.
    V2025_03_26,
    /// Revision `2025-06-18`: structured tool output, elicitation, resource links, titles.
    V2025_06_18,
    /// Revision `2025-11-25`: icons, URL elicitation, sampling with tools, tasks.
    V2025_11_25,
    /// Revision `2026-07-28`: no `initialize` and no sessions: every request
    /// carries its version, client capabilities and client info in `_meta`; `server/discover`,
    /// multi-round-trip `input_required` results, `subscriptions/listen`, cache hints.
    V2026_07_28,
}

/// Error returned when a string names no revision this SDK knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion(pub String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown protocol version `{}`", self.0)
    }
}

impl std::error::Error for UnknownVersion {}

impl ProtocolVersion {
    /// The newest revision this SDK speaks.
    pub const LATEST: Self = Self::V2026_07_28;

    /// The newest revision with the `initialize` handshake and sessions: what `initialize`
    /// negotiates at most.
    pub const LATEST_WITH_HANDSHAKE: Self = Self::V2025_11_25;

    /// The newest revision with the `initialize` handshake, by its old name.
    #[deprecated(since = "0.2.0", note = "renamed to `LATEST_WITH_HANDSHAKE`")]
    pub const LATEST_STATEFUL: Self = Self::LATEST_WITH_HANDSHAKE;

    /// Every supported revision, oldest first.
    pub const ALL: &'static [Self] = &[
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    /// The revisions without the `initialize` handshake, every request carrying its version
    /// and capabilities in `_meta` (2026-07-28 and later).
    pub const WITHOUT_HANDSHAKE: &'static [Self] = &[Self::V2026_07_28];

    /// The revisions negotiated with `initialize`, oldest first (2025-11-25 and older).
    pub const WITH_HANDSHAKE: &'static [Self] = &[
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
    ];

    /// The revisions without the handshake, by their old name.
    #[deprecated(since = "0.2.0", note = "renamed to `WITHOUT_HANDSHAKE`")]
    pub const STATELESS: &'static [Self] = Self::WITHOUT_HANDSHAKE;

    /// The revisions with the handshake, by their old name.
    #[deprecated(since = "0.2.0", note = "renamed to `WITH_HANDSHAKE`")]
    pub const STATEFUL: &'static [Self] = Self::WITH_HANDSHAKE;

    /// The wire string, e.g. `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision a server answers `initialize` with: the requested one when it is a
    /// supported revision with the handshake, otherwise
    /// [`ProtocolVersion::LATEST_WITH_HANDSHAKE`] (the spec's "reply with a version you
    /// support"; `initialize` never negotiates 2026-07-28 or later).
    pub fn negotiate(requested: &str) -> Self {
        match requested.parse::<Self>() {
            Ok(version) if version.has_handshake() => version,
            _ => Self::LATEST_WITH_HANDSHAKE,
        }
    }

    /// The `initialize` handshake and sessions (2025-11-25 and older). Without it
    /// (2026-07-28 and later) every request carries its own version and capabilities in
    /// `_meta`.
    pub fn has_handshake(self) -> bool {
        self < Self::V2026_07_28
    }

    /// Whether this revision has no `initialize` handshake (2026-07-28 and later).
    #[deprecated(since = "0.2.0", note = "use `!has_handshake()`")]
    pub fn is_stateless(self) -> bool {
        !self.has_handshake()
    }

    /// JSON-RPC batches (arrays of messages) exist only in 2025-03-26.
    pub fn supports_batching(self) -> bool {
        self == Self::V2025_03_26
    }

    /// `annotations` on tools (2025-03-26+).
    pub fn has_tool_annotations(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// Audio content blocks (2025-03-26+).
    pub fn has_audio_content(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// The `completions` server capability (2025-03-26+).
    pub fn has_completions_capability(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// `outputSchema` on tools and `structuredContent` on results (2025-06-18+).
    pub fn has_structured_content(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// `title` fields on named items (2025-06-18+).
    pub fn has_titles(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// `resource_link` content blocks (2025-06-18+).
    pub fn has_resource_links(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// `_meta` on data types such as tools, resources and content blocks (2025-06-18+).
    pub fn has_item_meta(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// `elicitation/create` (2025-06-18+).
    pub fn has_elicitation(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// The `MCP-Protocol-Version` HTTP header is required (2025-06-18+).
    pub fn requires_version_header(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Icons, `websiteUrl` and `description` on implementations (2025-11-25+).
    pub fn has_icons(self) -> bool {
        self >= Self::V2025_11_25
    }

    /// URL-mode elicitation and `notifications/elicitation/complete` (2025-11-25+).
    pub fn has_url_elicitation(self) -> bool {
        self >= Self::V2025_11_25
    }

    /// `elicitationId` on URL-mode elicitations, `notifications/elicitation/complete` and
    /// `-32042` (2025-11-25 only; 2026-07-28 removed them).
    pub fn has_elicitation_ids(self) -> bool {
        self == Self::V2025_11_25
    }

    /// `tools`/`toolChoice` in sampling and tool-use content (2025-11-25+).
    pub fn has_sampling_tools(self) -> bool {
        self >= Self::V2025_11_25
    }

    /// Experimental tasks, the `tasks` capability and tool `execution` (2025-11-25 only; the
    /// 2026 revision moved tasks to an extension that is not wire-compatible).
    pub fn has_tasks(self) -> bool {
        self == Self::V2025_11_25
    }

    /// `resultType` on every result, and `ttlMs`/`cacheScope` on cacheable ones (2026-07-28+).
    pub fn has_result_type(self) -> bool {
        !self.has_handshake()
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_known_version() {
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>(), Ok(*v));
            assert_eq!(v.to_string(), v.as_str());
        }
    }

    #[test]
    fn rejects_unknown_version() {
        let err = "2099-01-01".parse::<ProtocolVersion>();
        assert_eq!(err, Err(UnknownVersion("2099-01-01".into())));
        assert_eq!(
            UnknownVersion("x".into()).to_string(),
            "unknown protocol version `x`"
        );
        assert!("".parse::<ProtocolVersion>().is_err());
    }

    #[test]
    fn negotiate_echoes_known_and_falls_back_to_latest() {
        assert_eq!(
            ProtocolVersion::negotiate("2025-03-26"),
            ProtocolVersion::V2025_03_26
        );
        assert_eq!(
            ProtocolVersion::negotiate("2099-01-01"),
            ProtocolVersion::LATEST_WITH_HANDSHAKE
        );
        assert_eq!(
            ProtocolVersion::negotiate("2026-07-28"),
            ProtocolVersion::LATEST_WITH_HANDSHAKE,
            "initialize never negotiates a revision without the handshake"
        );
    }

    #[test]
    fn orders_by_date() {
        let mut sorted = ProtocolVersion::ALL.to_vec();
        sorted.sort();
        assert_eq!(sorted, ProtocolVersion::ALL);
        assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::V2025_03_26);
        assert!(ProtocolVersion::V2025_06_18 < ProtocolVersion::LATEST);
        assert_eq!(ProtocolVersion::ALL.last(), Some(&ProtocolVersion::LATEST));
    }

    #[test]
    fn feature_predicates_follow_the_timeline() {
        use ProtocolVersion::*;
        assert!(!V2024_11_05.supports_batching());
        assert!(V2025_03_26.supports_batching());
        assert!(!V2025_06_18.supports_batching());
        assert!(!V2025_11_25.supports_batching());
        assert!(!V2025_03_26.has_structured_content());
        assert!(V2025_06_18.has_structured_content());
        assert!(!V2025_06_18.has_icons());
        assert!(V2025_11_25.has_icons());
        assert!(V2025_11_25.has_tasks());
        assert!(!V2026_07_28.has_tasks());
        assert!(!V2026_07_28.has_handshake());
        assert!(V2025_11_25.has_handshake());
        assert_eq!(
            [
                ProtocolVersion::WITH_HANDSHAKE,
                ProtocolVersion::WITHOUT_HANDSHAKE
            ]
            .concat(),
            ProtocolVersion::ALL
        );
    }

    #[test]
    fn serializes_as_string() {
        let json = serde_json::to_string(&ProtocolVersion::V2025_06_18).ok();
        assert_eq!(json.as_deref(), Some("\"2025-06-18\""));
        let back: Result<ProtocolVersion, _> = serde_json::from_str("\"2025-03-26\"");
        assert_eq!(back.ok(), Some(ProtocolVersion::V2025_03_26));
        assert!(serde_json::from_str::<ProtocolVersion>("\"1999-01-01\"").is_err());
    }
}
