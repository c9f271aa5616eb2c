//! Multi-round-trip requests on the wire: `resultType`, the input requests of an
//! `input_required` result and the answers a retry carries.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::protocol::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, ForVersion, JsonObject,
    Meta, ProtocolVersion, method,
};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
