//! What revision 2026-07-28 adds on the wire: the per-request `_meta` envelope, `resultType`,
//! cache hints, `server/discover`, multi-round-trip `input_required` results and
//! `subscriptions/listen`.
//!
//! This module holds the revision's `_meta` keys and the error objects it defines; its types
//! ([`RequestMeta`], [`ResultType`], [`InputRequiredResult`], [`DiscoverResult`], ...) are in
//! [`protocol`](super) with all the others.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching>
//!
//! [`RequestMeta`]: super::RequestMeta
//! [`ResultType`]: super::ResultType
//! [`InputRequiredResult`]: super::InputRequiredResult
//! [`DiscoverResult`]: super::DiscoverResult

// The revision's types, re-exported by `protocol`.
pub(super) mod discover;
pub(crate) mod envelope;
pub(super) mod input;
pub(super) mod listen;

use serde_json::{Value, json};

use actix_mcp_actors::ErrorObject;

use crate::protocol::code;
use crate::protocol::{ProtocolVersion, ResultType};

/// `_meta` key of a request's protocol version (required on every 2026 request).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of a request's client capabilities (required on every 2026 request).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of a request's client info (optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the log level a request opts in to (optional; without it no log messages).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's info on results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key naming the `subscriptions/listen` stream a notification belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The Tasks extension's identifier in `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `-32022` for a version the server does not serve without the handshake, listing every version it
/// serves (`data.supported`, newest first: both eras, as a dual-era server lists them) and
/// the one requested (`data.requested`).
pub fn unsupported_version(requested: &str) -> ErrorObject {
    // Every version served, newest first: those without the handshake and, this being a dual-era
    // server, those of the `initialize` handshake (as the versioning page's example lists).
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    let message = match requested.parse::<ProtocolVersion>() {
        Ok(version) if version.has_handshake() => format!(
            "protocol version {requested:?} is served through the initialize handshake, not \
             per-request _meta; supported: {}",
            supported.join(", ")
        ),
        _ => format!(
            "unsupported protocol version {requested:?}; supported: {}",
            supported.join(", ")
        ),
    };
    ErrorObject::new(code::UNSUPPORTED_PROTOCOL_VERSION, message)
        .with_data(json!({ "supported": supported, "requested": requested }))
}

/// `-32021`: the request needs `required` (a `ClientCapabilities` object) and did not declare
/// it.
pub fn missing_capability(required: Value, what: &str) -> ErrorObject {
    ErrorObject::new(
        code::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("this request needs the client capability {what}, which it did not declare"),
    )
    .with_data(json!({ "requiredCapabilities": required }))
}

/// `-32020`: a header is missing, malformed or disagrees with the body.
pub fn header_mismatch(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(code::HEADER_MISMATCH, message)
}

/// Reads a result's `resultType`: absent means `complete` (an older server); an unknown value
/// is an error.
///
/// # Errors
/// The unknown value.
pub fn result_type_of(result: &Value) -> Result<ResultType, String> {
    match result.get("resultType") {
        None | Some(Value::Null) => Ok(ResultType::Complete),
        Some(Value::String(s)) => match s.as_str() {
            "complete" => Ok(ResultType::Complete),
            "input_required" => Ok(ResultType::InputRequired),
            "task" => Ok(ResultType::Task),
            other => Err(other.to_owned()),
        },
        Some(other) => Err(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_result_type_reads_as_complete() {
        assert_eq!(result_type_of(&json!({})), Ok(ResultType::Complete));
        assert_eq!(
            result_type_of(&json!({ "resultType": "input_required" })),
            Ok(ResultType::InputRequired)
        );
        assert!(result_type_of(&json!({ "resultType": "later" })).is_err());
    }
}
