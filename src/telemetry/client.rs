//! The client's side: a `CLIENT` span per request a [`Client`](crate::client::Client) sends,
//! and the session's duration.

use std::sync::Arc;
use std::time::Instant;

use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use serde_json::Value;

use actix_mcp_actors::RequestId;

use super::server::Network;
use super::{Operation, State, attr, propagation, request_id_value, state};
use crate::protocol::{ProtocolVersion, method};

/// How a request the client sent failed, in the span's terms: `error.type` (`kind`), the
/// JSON-RPC code when the server answered with an error, and the span status's message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) kind: &'static str,
    pub(crate) code: Option<actix_mcp_actors::ErrorCode>,
    pub(crate) message: String,
}

/// The `CLIENT` span of one request the client sends, and its duration metric. Ended with the
/// answer; a request dropped before it ends with `error.type` `cancelled`.
pub(crate) struct ClientSpan {
    state: Arc<State>,
    cx: Context,
    started: Instant,
    shared: Vec<KeyValue>,
    tool_call: bool,
    done: bool,
}

impl ClientSpan {
    /// Starts the span of a request about to be sent and puts its context into the params'
    /// `_meta`; `None` when no instrumentation is installed.
    pub(crate) fn start(
        method_name: &str,
        params: &mut Option<Value>,
        version: ProtocolVersion,
        network: Network,
    ) -> Option<Self> {
        let state = state()?;
        let operation = Operation::of(method_name, params.as_ref());
        let mut shared = operation.shared;
        shared.push(KeyValue::new(attr::PROTOCOL_VERSION, version.as_str()));
        network.push_attrs(&mut shared);
        let mut span_attrs = shared.clone();
        span_attrs.extend(operation.span_only);
        let parent = Context::current();
        let span = state
            .tracer
            .span_builder(operation.name)
            .with_kind(SpanKind::Client)
            .with_attributes(span_attrs)
            .start_with_context(&state.tracer, &parent);
        let cx = parent.with_span(span);
        propagation::into_meta(&cx, params);
        Some(Self {
            state,
            cx,
            started: Instant::now(),
            shared,
            tool_call: method_name == method::TOOLS_CALL,
            done: false,
        })
    }

    /// The id the request was sent with.
    pub(crate) fn set_id(&self, id: &RequestId) {
        self.cx
            .span()
            .set_attribute(KeyValue::new(attr::REQUEST_ID, request_id_value(id)));
    }

    /// Ends the span with the answer.
    pub(crate) fn finish(mut self, outcome: Result<&Value, Failure>) {
        self.end(Some(outcome));
    }

    fn end(&mut self, outcome: Option<Result<&Value, Failure>>) {
        self.done = true;
        let mut attrs = std::mem::take(&mut self.shared);
        // The span has these since it started; only what comes now is added to it.
        let on_span = attrs.len();
        let span = self.cx.span();
        let failure = match outcome {
            None => Some(Failure {
                kind: "cancelled",
                code: None,
                message: "the request was cancelled".to_owned(),
            }),
            Some(Ok(value)) => (self.tool_call
                && value.get("isError").and_then(Value::as_bool) == Some(true))
            .then(|| Failure {
                kind: "tool_error",
                code: None,
                message: "the tool reported an error".to_owned(),
            }),
            Some(Err(failure)) => Some(failure),
        };
        if let Some(Failure {
            kind,
            code,
            message,
        }) = failure
        {
            match code {
                Some(code) => {
                    attrs.push(KeyValue::new(attr::ERROR_TYPE, code.to_string()));
                    attrs.push(KeyValue::new(attr::STATUS_CODE, code.to_string()));
                }
                None => attrs.push(KeyValue::new(attr::ERROR_TYPE, kind)),
            }
            span.set_status(Status::error(message));
        }
        span.set_attributes(attrs[on_span..].iter().cloned());
        span.end();
        self.state
            .client_operation
            .record(self.started.elapsed().as_secs_f64(), &attrs);
    }
}

impl Drop for ClientSpan {
    fn drop(&mut self) {
        if !self.done {
            self.end(None);
        }
    }
}

/// Measures a client's connection from its start until its last handle is gone, reported as
/// `mcp.client.session.duration`.
#[derive(Debug)]
pub(crate) struct ClientSessionTimer {
    started: Instant,
    /// The transport, for `network.transport`.
    pub(crate) network: Network,
}

impl ClientSessionTimer {
    pub(crate) fn new(network: Network) -> Self {
        Self {
            started: Instant::now(),
            network,
        }
    }

    /// Reports the session's duration, under the version it spoke.
    pub(crate) fn record(&self, version: ProtocolVersion) {
        let Some(state) = state() else {
            return;
        };
        let mut attrs = vec![KeyValue::new(attr::PROTOCOL_VERSION, version.as_str())];
        self.network.push_attrs(&mut attrs);
        state
            .client_session
            .record(self.started.elapsed().as_secs_f64(), &attrs);
    }
}
