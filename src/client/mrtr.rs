//! Multi-round-trip requests (MRTR, 2026-07-28): a `tools/call`, `prompts/get` or
//! `resources/read` the server answers with `resultType: "input_required"` is retried with
//! the answers to its input requests.
//!
//! By default the client drives the rounds itself ([`ClientBuilder::max_input_rounds`]): it
//! answers every input request with the builder's handlers (elicitation, sampling, roots, as
//! it would answer the server's requests in 2025-11-25), then sends the same method again as
//! a new request (a new JSON-RPC id) with the original params plus `inputResponses` and the
//! `requestState` of that round echoed byte for byte (none when the server sent none). State
//! and answers of one call never go into another. In manual mode
//! ([`ClientBuilder::auto_input`]`(false)`) the `*_step` calls return a [`CallOutcome`] and
//! the caller retries with an [`InputRetry`].
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>
//!
//! [`ClientBuilder::max_input_rounds`]: crate::client::ClientBuilder::max_input_rounds
//! [`ClientBuilder::auto_input`]: crate::client::ClientBuilder::auto_input

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use actix_mcp_actors::RequestId;

use super::error::ClientError;
use super::handlers::{Handlers, ServerRequest};
use super::lifecycle::Era;
use super::session::answer;
use crate::protocol::{InputRequiredResult, InputResponses, method};

/// Default rounds of input a call may go through before it fails.
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 10;

/// The methods a server may answer with `input_required`.
pub(crate) const MRTR_METHODS: &[&str] = &[
    method::TOOLS_CALL,
    method::PROMPTS_GET,
    method::RESOURCES_READ,
];

/// One round's answer: the final result, or the input the server needs first.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallOutcome<T> {
    /// The final result (`resultType` `complete`, or absent).
    Complete(T),
    /// The server needs input: answer it (for instance with
    /// [`Client::fulfil_input`](crate::client::Client::fulfil_input)) and retry with an
    /// [`InputRetry`].
    InputRequired(InputRequiredResult),
    /// The server runs the call as a task (a `tools/call` of a client declaring the Tasks
    /// extension): follow it with [`Client::task`](crate::client::Client::task) (see
    /// [`tasks`](crate::client::tasks)).
    Task(Box<crate::protocol::DetailedTask>),
}

impl<T> CallOutcome<T> {
    /// The final result, if this is one.
    pub fn complete(self) -> Option<T> {
        match self {
            Self::Complete(value) => Some(value),
            Self::InputRequired(_) | Self::Task(_) => None,
        }
    }
}

/// What a retry adds to the original params: the answers, by input-request key, and the
/// server's `requestState`, as it came.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRetry {
    /// The answers (`inputResponses`), by the keys of the input requests.
    pub input_responses: InputResponses,
    /// The `requestState` of the round being answered, unchanged; `None` when it had none.
    pub request_state: Option<String>,
}

impl InputRetry {
    /// The retry answering `round` with `responses`: its `requestState` is carried over
    /// unchanged.
    pub fn new(round: &InputRequiredResult, responses: InputResponses) -> Self {
        Self {
            input_responses: responses,
            request_state: round.request_state.clone(),
        }
    }

    /// The original params with `inputResponses` and `requestState` added.
    pub(crate) fn apply(&self, params: Option<Value>) -> Value {
        let mut params = match params {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        params.insert(
            "inputResponses".into(),
            Value::Object(self.input_responses.clone()),
        );
        match &self.request_state {
            Some(state) => params.insert("requestState".into(), Value::from(state.clone())),
            None => params.remove("requestState"),
        };
        Value::Object(params)
    }
}

/// Answers every input request of `round` with the handlers, in order.
///
/// # Errors
/// [`ClientError::InputFailed`] for the first input request a handler refused or has no
/// handler for.
pub(crate) async fn fulfil(
    handlers: &Handlers,
    round: &InputRequiredResult,
) -> Result<InputResponses, ClientError> {
    let mut responses = Map::new();
    let Some(requests) = &round.input_requests else {
        return Ok(responses);
    };
    for (key, request) in requests {
        let params = request
            .params
            .clone()
            .unwrap_or_else(|| Value::Object(Map::new()));
        let meta = params.get("_meta").and_then(Value::as_object).cloned();
        let info = ServerRequest {
            id: RequestId::String(key.as_str().into()),
            meta,
            cancellation: CancellationToken::new(),
        };
        let result = answer(handlers, Era::V2026, &request.method, params, info)
            .await
            .map_err(|error| ClientError::InputFailed {
                key: key.clone(),
                error: Box::new(error),
            })?;
        responses.insert(key.clone(), result);
    }
    Ok(responses)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_retry_adds_answers_and_the_state_as_it_came() {
        let round = InputRequiredResult::default().with_state("{\"a\": 1}");
        let mut answers = Map::new();
        answers.insert("k".into(), json!({"action": "accept"}));
        let retry = InputRetry::new(&round, answers);
        assert_eq!(
            retry.apply(Some(json!({"name": "t", "requestState": "old"}))),
            json!({
                "name": "t",
                "inputResponses": {"k": {"action": "accept"}},
                "requestState": "{\"a\": 1}",
            })
        );
        let stateless = InputRetry::new(&InputRequiredResult::default(), Map::new());
        assert_eq!(
            stateless.apply(Some(json!({"name": "t", "requestState": "old"}))),
            json!({"name": "t", "inputResponses": {}})
        );
    }
}
