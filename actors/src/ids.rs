//! Identifiers the runtime mints: session ids, stream keys and SSE event ids.
//!
//! Event ids name their stream (`<stream>-<seq>`), so a `Last-Event-ID` header tells the
//! session which stream to replay and from where, and ids are unique across every stream of a
//! session. Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery>

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// A session id: visible ASCII only (0x21..=0x7E), minted from 122 random bits.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(Arc<str>);

impl SessionId {
    /// Wraps an existing id, refusing anything outside visible ASCII or longer than 256 bytes.
    pub fn parse(s: &str) -> Option<Self> {
        let ok = !s.is_empty() && s.len() <= 256 && s.bytes().all(|b| (0x21..=0x7e).contains(&b));
        ok.then(|| Self(s.into()))
    }

    /// The id of the one session a stdio server runs.
    pub fn stdio() -> Self {
        Self(Arc::from("stdio"))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl serde::Serialize for SessionId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for SessionId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| serde::de::Error::custom("not a valid session id"))
    }
}

impl std::borrow::Borrow<str> for SessionId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({})", self.0)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of one SSE event: the stream it belongs to and its sequence number there.
///
/// Written as `<stream>-<seq>`; sequence 0 is the stream's priming event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventId {
    /// The stream number, unique within the session; a session's standalone stream (HTTP GET)
    /// has [`EventId::STANDALONE`] set in it.
    pub stream: u64,
    /// The event's position in its stream.
    pub seq: u64,
}

impl EventId {
    /// The bit set in the number of a session's standalone stream (HTTP GET), and in no other:
    /// whichever node a client resumes such a stream on knows it is the one to go on with.
    pub const STANDALONE: u64 = 1 << 62;

    /// Whether this event belongs to a session's standalone stream.
    pub fn is_standalone(&self) -> bool {
        self.stream & Self::STANDALONE != 0
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.stream, self.seq)
    }
}

/// A `Last-Event-ID` value that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed event id")]
pub struct MalformedEventId;

impl FromStr for EventId {
    type Err = MalformedEventId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (stream, seq) = s.trim().split_once('-').ok_or(MalformedEventId)?;
        Ok(Self {
            stream: stream.parse().map_err(|_| MalformedEventId)?,
            seq: seq.parse().map_err(|_| MalformedEventId)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_round_trip_and_refuse_garbage() {
        let id = EventId { stream: 3, seq: 17 };
        assert_eq!(id.to_string(), "3-17");
        assert_eq!("3-17".parse::<EventId>(), Ok(id));
        assert!("3".parse::<EventId>().is_err());
        assert!("a-1".parse::<EventId>().is_err());
        assert!("-1-2".parse::<EventId>().is_err());
    }

    #[test]
    fn session_ids_are_visible_ascii() {
        assert!(SessionId::parse("abc-DEF_123").is_some());
        assert!(SessionId::parse("").is_none());
        assert!(SessionId::parse("has space").is_none());
        assert!(SessionId::parse("caf\u{e9}").is_none());
    }
}
