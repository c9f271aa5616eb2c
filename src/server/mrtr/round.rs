//! One request's side of a multi-round-trip exchange: what its echoed `requestState` said,
//! the client's answers ([`RoundInput`], what the handler reads) and what its `input_required`
//! answer must seal. The request context holds it; nothing here knows the context.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::error::McpError;
use crate::protocol::{InputRequest, InputRequiredResult, InputResponses, members};
use crate::server::ServerInner;

use super::seal::{self, Binding, Payload};

/// The client's answers to an earlier `input_required` round: `inputResponses` by key, and
/// the state the handler asked to get back.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RoundInput {
    pub(crate) responses: InputResponses,
    pub(crate) state: Option<String>,
}

/// The MRTR side of one 2026-07-28 `tools/call`, `prompts/get` or `resources/read`: what it is
/// bound to, what its echoed state said, its answers, and what its `input_required` answer
/// (if any) must seal.
#[derive(Debug)]
pub(crate) struct Mrtr {
    /// What a state is bound to: computed when a state is opened or sealed, since most
    /// requests never see one (the digest of the arguments is not free).
    binding: std::sync::OnceLock<Binding>,
    /// What the binding reads of the request (its method, target, arguments and caller),
    /// until it is built.
    unbound: Option<Unbound>,
    /// A tool call's arguments object, moved out of its params (see [`Mrtr::open`]): the call
    /// shares it rather than a copy.
    arguments: Option<Arc<Value>>,
    pub(super) opened: Payload,
    pub(super) responses: InputResponses,
    outcome: Mutex<Outcome>,
}

/// A request's [`Binding`] before it is built: the parts it is built from.
#[derive(Debug)]
struct Unbound {
    method: std::borrow::Cow<'static, str>,
    target: String,
    /// A copy of the arguments when they were not moved ([`Mrtr::arguments`] has those).
    arguments: Option<Value>,
    caller: Option<String>,
}

#[derive(Debug, Default)]
struct Outcome {
    parked: Option<String>,
    answers: InputResponses,
}

impl Mrtr {
    /// Reads a request's round input: checks `inputResponses` (an object of objects) and opens
    /// `requestState`. Returns the request's MRTR side and what its handler reads.
    ///
    /// # Errors
    /// `-32602` for malformed `inputResponses` and for a state that is malformed, tampered,
    /// expired, sealed with an unknown key or issued for another request.
    ///
    /// `moved` is a tool call's arguments object when it was moved out of `params`: the
    /// binding reads it, and [`Mrtr::arguments`] hands it to the call.
    pub(crate) fn open(
        server: &ServerInner,
        method_name: &str,
        params: Option<&Value>,
        moved: Option<Arc<Value>>,
        caller: Option<String>,
    ) -> Result<(Self, Option<RoundInput>), McpError> {
        let binding = std::sync::OnceLock::new();
        // Every member read here, in one pass.
        let [responses, state] = match params.and_then(Value::as_object) {
            Some(params) => members(params, ["inputResponses", "requestState"]),
            None => [None, None],
        };
        let has_input = responses.is_some() || state.is_some();
        let responses = match responses {
            None => InputResponses::new(),
            Some(Value::Object(map)) => {
                if let Some((key, _)) = map.iter().find(|(_, v)| !v.is_object()) {
                    return Err(McpError::invalid_params(format!(
                        "inputResponses[\"{key}\"] must be the result object of its input request"
                    )));
                }
                map.clone()
            }
            Some(_) => {
                return Err(McpError::invalid_params(
                    "inputResponses must be an object of results by input request key",
                ));
            }
        };
        let (target, in_params) = Binding::parts(method_name, params);
        let arguments = moved.as_deref().or(in_params);
        let opened = match state {
            None => Payload::default(),
            Some(Value::String(text)) => server
                .mrtr
                .keys
                .open(
                    binding.get_or_init(|| {
                        Binding::new(method_name, target, arguments, caller.clone())
                    }),
                    text,
                )
                .map_err(|err| McpError::invalid_params(err.to_string()))?,
            Some(_) => return Err(McpError::invalid_params("requestState must be a string")),
        };
        // A malformed answer is an error, not another round (extra answers are ignored).
        for (key, method_name) in &opened.asked {
            if let Some(answer) = responses.get(key) {
                InputRequest::check_response(method_name, answer).map_err(|err| {
                    McpError::invalid_params(format!("inputResponses[\"{key}\"] is {err}"))
                })?;
            }
        }
        if let Some(id) = &opened.id
            && server.mrtr.single_use
            && !server.mrtr.seen.claim(id, opened.expires)
        {
            return Err(used_state());
        }
        let input = has_input.then(|| RoundInput {
            responses: responses.clone(),
            state: opened.state.clone(),
        });
        Ok((
            Self {
                unbound: binding.get().is_none().then(|| Unbound {
                    method: crate::protocol::method::kept(method_name),
                    target: target.to_owned(),
                    arguments: moved.is_none().then(|| in_params.cloned()).flatten(),
                    caller,
                }),
                binding,
                arguments: moved,
                opened,
                responses,
                outcome: Mutex::default(),
            },
            input,
        ))
    }

    /// Claims this request's single-use state for the whole cluster the server's transports
    /// belong to (this node claimed it when it was opened). Nothing to do without a cluster,
    /// for a request with no state, or when single use is off; a store that cannot claim
    /// leaves states single-use per node.
    ///
    /// # Errors
    /// `-32602` when another node took the state first; `-32603` when the store failed (the
    /// state is not run unchecked).
    pub(crate) async fn claim_in_cluster(&self, server: &ServerInner) -> Result<(), McpError> {
        let (Some(id), true) = (&self.opened.id, server.mrtr.single_use) else {
            return Ok(());
        };
        let Some(relay) = server.relay() else {
            return Ok(());
        };
        let left = self.opened.expires.saturating_sub(seal::now_ms()).max(1);
        match relay
            .claim_once(&format!("mrtr:{id}"), Duration::from_millis(left))
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(used_state()),
            Err(actix_mcp_actors::StoreError::Unsupported(_)) => Ok(()),
            Err(err) => Err(McpError::internal(format!(
                "could not check that requestState is used once: {err}"
            ))),
        }
    }

    /// The tool call's arguments object [`Mrtr::open`] was given, moved out of its params.
    pub(crate) fn arguments(&self) -> Option<&Arc<Value>> {
        self.arguments.as_ref()
    }

    /// Whether this request carries a single-use state to claim in a cluster.
    pub(crate) fn has_state(&self) -> bool {
        self.opened.id.is_some()
    }

    /// Every answer this request knows: those its sealed state replays from earlier rounds,
    /// then this retry's `inputResponses` (an earlier answer to the same key stands).
    pub(crate) fn known_answers(&self) -> InputResponses {
        let mut answers = self.opened.answers.clone();
        for (key, value) in &self.responses {
            answers.entry(key.clone()).or_insert_with(|| value.clone());
        }
        answers
    }

    pub(super) fn record(&self, parked: Option<String>, answers: InputResponses) {
        let mut outcome = self
            .outcome
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        outcome.parked = parked;
        outcome.answers = answers;
    }

    /// Seals an `input_required` answer's state: the handler's own, the parked call, the round
    /// and the answers so far.
    pub(crate) fn seal(&self, server: &ServerInner, result: &mut InputRequiredResult) {
        let outcome = self
            .outcome
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let payload = Payload {
            state: result.request_state.take(),
            parked: outcome.parked.clone(),
            round: self.opened.round.saturating_add(1),
            answers: outcome.answers.clone(),
            asked: result
                .input_requests
                .iter()
                .flatten()
                .map(|(key, request)| (key.clone(), request.method.clone()))
                .collect(),
            id: server
                .mrtr
                .single_use
                .then(|| uuid::Uuid::new_v4().simple().to_string()),
            expires: 0,
        };
        let binding = self.binding.get_or_init(|| match &self.unbound {
            Some(unbound) => Binding::new(
                &unbound.method,
                &unbound.target,
                self.arguments.as_deref().or(unbound.arguments.as_ref()),
                unbound.caller.clone(),
            ),
            None => Binding::of("", None, None),
        });
        result.request_state = Some(server.mrtr.keys.seal(binding, payload));
    }
}

/// `-32602` for a single-use state a retry has used already.
fn used_state() -> McpError {
    McpError::invalid_params(
        "requestState was used already: each state is good for one retry; start the request \
         again without it",
    )
}
