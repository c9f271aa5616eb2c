//! What revision 2026-07-28 adds on the wire: the per-request `_meta` envelope, `resultType`,
//! cache hints, `server/discover`, multi-round-trip `input_required` results and
//! `subscriptions/listen`.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching>

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use actix_mcp_actors::ErrorObject;

use crate::protocol::code;
use crate::protocol::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, ForVersion,
    Implementation, JsonObject, LoggingLevel, Meta, ProtocolVersion, ServerCapabilities, method,
};

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

/// The per-request envelope of a 2026-07-28 request, read from `params._meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// The request's protocol version.
    pub version: ProtocolVersion,
    /// The client's capabilities for this request only.
    pub client_capabilities: ClientCapabilities,
    /// What the client says about itself.
    pub client_info: Option<Implementation>,
    /// The log level the request opted in to; `None`: no log messages at all.
    pub log_level: Option<LoggingLevel>,
}

impl RequestMeta {
    /// The protocol version a request's `_meta` names, if any (a string; it may be unknown).
    pub fn version_of(params: Option<&Value>) -> Option<&str> {
        params?.get("_meta")?.get(META_PROTOCOL_VERSION)?.as_str()
    }

    /// Reads and checks the envelope of a request's params.
    ///
    /// # Errors
    /// `-32602` when `_meta`, its protocol version or its client capabilities are missing or
    /// malformed, or the log level is unknown; `-32022` (with `data.supported` and
    /// `data.requested`) for a version that is not a stateless revision this SDK serves.
    pub fn parse(params: Option<&Value>) -> Result<Self, ErrorObject> {
        let Some(meta) = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
        else {
            return Err(ErrorObject::invalid_params(
                "params._meta is required in protocol 2026-07-28 (with the protocol version \
                 and client capabilities)",
            ));
        };
        let requested = match meta.get(META_PROTOCOL_VERSION) {
            Some(Value::String(v)) => v.as_str(),
            Some(_) => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
                )));
            }
            None => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta[\"{META_PROTOCOL_VERSION}\"] is required"
                )));
            }
        };
        let version = match requested.parse::<ProtocolVersion>() {
            Ok(version) if version.is_stateless() => version,
            _ => return Err(unsupported_version(requested)),
        };
        let client_capabilities = match meta.get(META_CLIENT_CAPABILITIES) {
            Some(value @ Value::Object(_)) => {
                ClientCapabilities::deserialize(value).map_err(|err| {
                    ErrorObject::invalid_params(format!(
                        "_meta[\"{META_CLIENT_CAPABILITIES}\"] is malformed: {err}"
                    ))
                })?
            }
            Some(_) => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object"
                )));
            }
            None => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta[\"{META_CLIENT_CAPABILITIES}\"] is required"
                )));
            }
        };
        let client_info = match meta.get(META_CLIENT_INFO) {
            None | Some(Value::Null) => None,
            Some(value) => Some(Implementation::deserialize(value).map_err(|err| {
                ErrorObject::invalid_params(format!(
                    "_meta[\"{META_CLIENT_INFO}\"] is malformed: {err}"
                ))
            })?),
        };
        let log_level = match meta.get(META_LOG_LEVEL) {
            None | Some(Value::Null) => None,
            Some(value) => Some(LoggingLevel::deserialize(value).map_err(|err| {
                ErrorObject::invalid_params(format!(
                    "_meta[\"{META_LOG_LEVEL}\"] is not a log level: {err}"
                ))
            })?),
        };
        Ok(Self {
            version,
            client_capabilities,
            client_info,
            log_level,
        })
    }
}

/// `-32022` for a version the server does not serve statelessly, listing every version it
/// serves (`data.supported`, newest first: both eras, as a dual-era server lists them) and
/// the one requested (`data.requested`).
pub fn unsupported_version(requested: &str) -> ErrorObject {
    // Every version served, newest first: the stateless ones and, this being a dual-era
    // server, those of the `initialize` handshake (as the versioning page's example lists).
    let supported: Vec<&str> = ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect();
    let message = match requested.parse::<ProtocolVersion>() {
        Ok(version) if !version.is_stateless() => format!(
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

/// What kind of result a 2026 result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    /// A final result.
    Complete,
    /// More input is needed: an [`InputRequiredResult`].
    InputRequired,
    /// A task was created (Tasks extension).
    Task,
}

impl ResultType {
    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
            Self::Task => "task",
        }
    }
}

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

/// A request the client must fulfil before retrying (an MRTR input request): one of
/// `elicitation/create`, `sampling/createMessage` or `roots/list`, without `jsonrpc` or `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// The method.
    pub method: String,
    /// Its params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl InputRequest {
    /// An `elicitation/create` input request, in its 2026-07-28 shape (a URL-mode
    /// elicitation's `elicitationId` and any `task` removed).
    pub fn elicitation(params: &ElicitRequestParams) -> Self {
        let params = params.clone().adapted_to(ProtocolVersion::V2026_07_28);
        Self {
            method: method::ELICITATION_CREATE.to_owned(),
            params: serde_json::to_value(params).ok(),
        }
    }

    /// A `sampling/createMessage` input request.
    pub fn sampling(params: &CreateMessageRequestParams) -> Self {
        Self {
            method: method::SAMPLING_CREATE_MESSAGE.to_owned(),
            params: serde_json::to_value(params).ok(),
        }
    }

    /// A `roots/list` input request.
    pub fn list_roots() -> Self {
        Self {
            method: method::ROOTS_LIST.to_owned(),
            params: None,
        }
    }

    /// Checks the client's answer to an input request of `method`: an `elicitation/create`
    /// answer must be an elicitation result, a `sampling/createMessage` one a sampling result,
    /// a `roots/list` one a roots list. `Err` says what is wrong; other methods pass.
    ///
    /// # Errors
    /// When the answer does not have its method's result shape.
    pub fn check_response(method_name: &str, answer: &Value) -> Result<(), String> {
        let checked = match method_name {
            method::ELICITATION_CREATE => {
                crate::protocol::ElicitResult::deserialize(answer).map(drop)
            }
            method::SAMPLING_CREATE_MESSAGE => {
                crate::protocol::CreateMessageResult::deserialize(answer).map(drop)
            }
            method::ROOTS_LIST => crate::protocol::ListRootsResult::deserialize(answer).map(drop),
            _ => Ok(()),
        };
        checked.map_err(|err| format!("not a valid {method_name} result: {err}"))
    }

    /// The client capability this request needs (`elicitation`, `sampling` or `roots`), as a
    /// `ClientCapabilities` fragment, and whether `caps` declares it.
    pub fn capability(&self, caps: &ClientCapabilities) -> (Value, bool) {
        match self.method.as_str() {
            method::ELICITATION_CREATE => {
                let url = self
                    .params
                    .as_ref()
                    .and_then(|p| p.get("mode"))
                    .and_then(Value::as_str)
                    == Some("url");
                if url {
                    (
                        json!({ "elicitation": { "url": {} } }),
                        caps.supports_elicitation_url(),
                    )
                } else {
                    (
                        json!({ "elicitation": {} }),
                        caps.supports_elicitation_form(),
                    )
                }
            }
            method::SAMPLING_CREATE_MESSAGE => {
                (json!({ "sampling": {} }), caps.supports_sampling())
            }
            method::ROOTS_LIST => (json!({ "roots": {} }), caps.supports_roots()),
            other => (json!({ other: {} }), false),
        }
    }
}

/// Input requests by server-chosen key.
pub type InputRequests = IndexMap<String, InputRequest>;

/// The client's answers by the keys of the input requests they answer.
pub type InputResponses = JsonObject;

/// `resultType: "input_required"`: the client fulfils `inputRequests` and retries the same
/// request with `inputResponses` and the `requestState` echoed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// What the client must answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client echoes byte for byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl InputRequiredResult {
    /// A result asking for one input.
    pub fn ask(key: impl Into<String>, request: InputRequest) -> Self {
        let mut requests = InputRequests::new();
        requests.insert(key.into(), request);
        Self {
            input_requests: Some(requests),
            ..Self::default()
        }
    }

    /// Adds an input request.
    #[must_use]
    pub fn and(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.input_requests
            .get_or_insert_with(InputRequests::new)
            .insert(key.into(), request);
        self
    }

    /// Sets the state the client echoes on its retry.
    #[must_use]
    pub fn with_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }

    /// The wire object, with `resultType`.
    pub fn to_value(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or_else(|_| json!({}));
        if let Value::Object(map) = &mut value {
            map.insert(
                "resultType".into(),
                Value::from(ResultType::InputRequired.as_str()),
            );
        }
        value
    }
}

/// The result of `server/discover`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// The stateless revisions the server serves.
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

/// Which notifications a `subscriptions/listen` stream carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these tasks (Tasks extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

impl SubscriptionFilter {
    /// Whether nothing is asked for.
    pub fn is_empty(&self) -> bool {
        !self.tools_list_changed.unwrap_or(false)
            && !self.prompts_list_changed.unwrap_or(false)
            && !self.resources_list_changed.unwrap_or(false)
            && self
                .resource_subscriptions
                .as_ref()
                .is_none_or(Vec::is_empty)
            && self.task_ids.as_ref().is_none_or(Vec::is_empty)
    }
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ListenRequestParams {
    /// What to receive.
    #[serde(default)]
    pub notifications: SubscriptionFilter,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
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

    fn meta(value: Value) -> Option<Value> {
        Some(json!({ "_meta": value }))
    }

    #[test]
    fn parses_a_complete_envelope() {
        let params = meta(json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: { "sampling": {} },
            META_CLIENT_INFO: { "name": "c", "version": "1" },
            META_LOG_LEVEL: "debug",
        }));
        let parsed = RequestMeta::parse(params.as_ref()).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(parsed.version, ProtocolVersion::V2026_07_28);
        assert!(parsed.client_capabilities.supports_sampling());
        assert_eq!(parsed.client_info.map(|i| i.name), Some("c".to_owned()));
        assert_eq!(parsed.log_level, Some(LoggingLevel::Debug));
    }

    #[test]
    fn refuses_missing_fields_with_invalid_params() {
        for params in [
            None,
            Some(json!({})),
            meta(json!({ META_CLIENT_CAPABILITIES: {} })),
            meta(json!({ META_PROTOCOL_VERSION: "2026-07-28" })),
            meta(json!({ META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: [] })),
            meta(json!({ META_PROTOCOL_VERSION: 7, META_CLIENT_CAPABILITIES: {} })),
            meta(
                json!({ META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}, META_LOG_LEVEL: "loud" }),
            ),
        ] {
            let err = RequestMeta::parse(params.as_ref()).err();
            assert_eq!(
                err.map(|e| e.code),
                Some(actix_mcp_actors::ErrorCode::INVALID_PARAMS)
            );
        }
    }

    #[test]
    fn refuses_unknown_and_stateful_versions_with_the_supported_list() {
        for version in ["v999.0.0", "2025-11-25"] {
            let params =
                meta(json!({ META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: {} }));
            let err = RequestMeta::parse(params.as_ref())
                .err()
                .unwrap_or_else(|| panic!("{version} accepted"));
            assert_eq!(err.code, code::UNSUPPORTED_PROTOCOL_VERSION);
            assert_eq!(
                err.data,
                Some(json!({
                    "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                    "requested": version,
                }))
            );
        }
    }

    #[test]
    fn input_required_results_carry_their_result_type() {
        let result = InputRequiredResult::ask("name", InputRequest::list_roots()).with_state("s");
        assert_eq!(
            result.to_value(),
            json!({
                "inputRequests": { "name": { "method": "roots/list" } },
                "requestState": "s",
                "resultType": "input_required",
            })
        );
    }

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
