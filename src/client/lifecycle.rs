//! Which revision a client speaks: 2025-11-25 and older (the `initialize` handshake,
//! sessions) or 2026-07-28 (every request carries its `_meta`), and how [`Lifecycle::Auto`]
//! tells the servers of the two apart.
//!
//! The auto probe sends `server/discover` with the 2026 `_meta`. The server speaks 2026-07-28
//! when it answers with a `DiscoverResult`, or with an error only such a server sends: `-32022`
//! (the client retries once with a version from `error.data.supported`), `-32020`, `-32021`,
//! or, over HTTP, `-32601` with status `404`. Any other error, a timeout, or an HTTP error
//! status without a JSON-RPC error body means a 2025 server: the client runs `initialize` as
//! in 2025-11-25. The probe never falls back after a 2026 answer, nor after an authorization
//! failure ([`ClientError::Auth`]), which would be the same in either revision.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>

use serde_json::{Map, Value, json};

use actix_mcp_actors::ErrorObject;

use super::error::ClientError;
use crate::error::{ErrorCode, code};
use crate::protocol::{
    ClientCapabilities, DiscoverResult, Implementation, InitializeResult, ProtocolVersion,
    v2026::META_SERVER_INFO,
};

/// How a client starts talking to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Lifecycle {
    /// Probe with `server/discover` and speak 2026-07-28 to a server that answers in that
    /// revision; otherwise run `initialize` (the module docs say how it decides).
    #[default]
    Auto,
    /// Speak 2026-07-28 (and later) only: `server/discover`, then requests that each carry
    /// their `_meta`. A server that does not answer in that revision fails the connection.
    V2026,
    /// Speak 2025-11-25 (or the older version asked for): the `initialize` handshake,
    /// sessions.
    V2025,
}

#[allow(non_upper_case_globals)]
impl Lifecycle {
    /// [`Lifecycle::V2026`] by its old name.
    #[deprecated(since = "0.2.0", note = "renamed to `Lifecycle::V2026`")]
    pub const Modern: Self = Self::V2026;
    /// [`Lifecycle::V2025`] by its old name.
    #[deprecated(since = "0.2.0", note = "renamed to `Lifecycle::V2025`")]
    pub const Legacy: Self = Self::V2025;
}

/// The revision a connected client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// 2026-07-28 and later: no handshake, every request carries its `_meta`.
    V2026,
    /// 2025-11-25 and older: the `initialize` handshake and a session.
    V2025,
}

#[allow(non_upper_case_globals)]
impl Era {
    /// [`Era::V2026`] by its old name.
    #[deprecated(since = "0.2.0", note = "renamed to `Era::V2026`")]
    pub const Modern: Self = Self::V2026;
    /// [`Era::V2025`] by its old name.
    #[deprecated(since = "0.2.0", note = "renamed to `Era::V2025`")]
    pub const Legacy: Self = Self::V2025;
}

/// What the probe learnt.
#[derive(Debug)]
pub(crate) enum Probe {
    /// A 2026-07-28 server, with its `DiscoverResult` when it gave one.
    V2026(Option<Box<DiscoverResult>>),
    /// Not a 2026-07-28 server: why.
    V2025(ClientError),
    /// A 2026-07-28 server the client cannot talk to (no protocol version in common): no
    /// fallback.
    Failed(ClientError),
}

/// Whether an error to the probe comes from a 2026-07-28 server. `status` is the HTTP status
/// that carried it, when known.
pub(crate) fn is_v2026_error(error: &ErrorObject, status: Option<u16>) -> bool {
    error.code == code::UNSUPPORTED_PROTOCOL_VERSION
        || error.code == code::HEADER_MISMATCH
        || error.code == code::MISSING_REQUIRED_CLIENT_CAPABILITY
        || (error.code == ErrorCode::METHOD_NOT_FOUND && status == Some(404))
}

/// The newest version without the handshake this SDK speaks among a `-32022` error's `data.supported`.
pub(crate) fn supported_version(error: &ErrorObject) -> Option<ProtocolVersion> {
    error
        .data
        .as_ref()?
        .get("supported")?
        .as_array()?
        .iter()
        .filter_map(|v| v.as_str()?.parse::<ProtocolVersion>().ok())
        .filter(|v| !v.has_handshake())
        .max()
}

/// Reads a `server/discover` result leniently: a missing `resultType` is `complete`, missing
/// or negative cache hints are `0`/`private`, missing fields are empty.
///
/// # Errors
/// [`ClientError::Protocol`] when the result is not an object or its fields have the wrong
/// shape.
pub(crate) fn read_discover(value: Value) -> Result<DiscoverResult, ClientError> {
    let Value::Object(mut map) = value else {
        return Err(ClientError::Protocol(
            "the server/discover result is not an object".into(),
        ));
    };
    map.entry("supportedVersions").or_insert_with(|| json!([]));
    map.entry("capabilities")
        .or_insert_with(|| Value::Object(Map::new()));
    map.insert("resultType".into(), Value::from("complete"));
    let ttl = super::cache::ttl_of(&Value::Object(map.clone()));
    map.insert(
        "ttlMs".into(),
        Value::from(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
    );
    if !matches!(
        map.get("cacheScope").and_then(Value::as_str),
        Some("public" | "private")
    ) {
        map.insert("cacheScope".into(), Value::from("private"));
    }
    // Some servers put their info beside the result rather than in `_meta`.
    if let Some(info) = map.get("serverInfo").cloned() {
        let meta = map
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.entry(META_SERVER_INFO).or_insert(info);
        }
    }
    serde_json::from_value(Value::Object(map)).map_err(|err| {
        ClientError::Protocol(format!(
            "the server/discover result has the wrong shape: {err}"
        ))
    })
}

/// The description of a 2026-07-28 server, in the shape the 2025 handshake gives it.
pub(crate) fn describe(
    version: ProtocolVersion,
    discover: Option<&DiscoverResult>,
) -> InitializeResult {
    InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities: discover.map(|d| d.capabilities.clone()).unwrap_or_default(),
        server_info: discover
            .and_then(DiscoverResult::server_info)
            .unwrap_or_else(|| Implementation::new("", "")),
        instructions: discover.and_then(|d| d.instructions.clone()),
        meta: discover.and_then(|d| d.meta.clone()),
    }
}

/// The 2026 shape of the client's capabilities: `roots` is `{}` (no `listChanged`), no
/// `tasks`.
pub(crate) fn v2026_capabilities(capabilities: &ClientCapabilities) -> Value {
    let mut value = serde_json::to_value(capabilities).unwrap_or_else(|_| json!({}));
    if let Some(map) = value.as_object_mut() {
        if map.contains_key("roots") {
            map.insert("roots".into(), Value::Object(Map::new()));
        }
        map.remove("tasks");
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2026_errors_are_recognised() {
        let error = |code: i32| ErrorObject::new(ErrorCode(code), "x");
        assert!(is_v2026_error(&error(-32022), None));
        assert!(is_v2026_error(&error(-32020), Some(400)));
        assert!(is_v2026_error(&error(-32021), None));
        assert!(is_v2026_error(&error(-32601), Some(404)));
        assert!(!is_v2026_error(&error(-32601), None));
        assert!(!is_v2026_error(&error(-32601), Some(400)));
        assert!(!is_v2026_error(&error(-32600), Some(400)));
    }

    #[test]
    fn the_newest_supported_version_without_handshake_is_picked() {
        let error = ErrorObject::new(code::UNSUPPORTED_PROTOCOL_VERSION, "x")
            .with_data(json!({"supported": ["2025-11-25", "2026-07-28", "2099-01-01"]}));
        assert_eq!(
            supported_version(&error),
            Some(ProtocolVersion::V2026_07_28)
        );
        let none = ErrorObject::new(code::UNSUPPORTED_PROTOCOL_VERSION, "x")
            .with_data(json!({"supported": ["2025-11-25"]}));
        assert_eq!(supported_version(&none), None);
    }

    #[test]
    fn a_sparse_discover_result_is_read() {
        let discover = read_discover(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"},
            "ttlMs": -3
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(discover.cache.ttl_ms, 0);
        assert_eq!(discover.server_info().map(|i| i.name), Some("s".into()));
        assert!(read_discover(json!([])).is_err());
    }
}
