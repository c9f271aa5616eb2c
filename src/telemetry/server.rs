//! The server's side: a `SERVER` span per request it receives, a `CLIENT` span per request it
//! sends its client, and the session's duration.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{Link, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use serde_json::Value;

use actix_mcp_actors::{
    ErrorObject, PeerError, RequestId, SessionId,
    dev::{Reply, Request},
};

use super::propagation::{self, TraceHeaders};
use super::{Operation, State, attr, request_id_value, state};
use crate::protocol::{ProtocolVersion, method};

/// The transport a request came over, for `network.transport`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Network {
    /// In-process calls: no network.
    #[default]
    InProcess,
    /// Streamable HTTP.
    Tcp,
    /// stdio.
    Pipe,
}

impl Network {
    pub(super) fn push_attrs(self, attrs: &mut Vec<KeyValue>) {
        match self {
            Self::InProcess => {}
            Self::Tcp => {
                attrs.push(KeyValue::new(attr::NETWORK_TRANSPORT, "tcp"));
                attrs.push(KeyValue::new(attr::NETWORK_PROTOCOL, "http"));
            }
            Self::Pipe => attrs.push(KeyValue::new(attr::NETWORK_TRANSPORT, "pipe")),
        }
    }
}

/// Called when an `initialize` the server answers ends: tells the session's timer the
/// transport ([`Network`]) and gives the version its handshake settled on, if it did.
pub(crate) type Settled = Box<dyn FnOnce(Network) -> Option<ProtocolVersion> + Send>;

/// The `SERVER` span of one request we answer (the server a client's, the client a server's),
/// and its duration metric. Ended when the reply is ready; a request dropped before
/// (cancelled, its session gone) ends with `error.type` `cancelled`.
pub(crate) struct ServerSpan {
    state: Arc<State>,
    cx: Context,
    started: Instant,
    shared: Vec<KeyValue>,
    method: String,
    network: Network,
    /// For an `initialize` the server answers: tells its session which transport it came
    /// over, and gives the version the handshake settled on.
    settled: Option<Settled>,
    /// The version an `initialize` asked for, set on its span if the handshake settles on none.
    asked: Option<ProtocolVersion>,
    done: bool,
}

/// How a request we answered ended.
enum Ended<'a> {
    /// Dropped unanswered.
    Cancelled,
    /// Answered with a JSON-RPC error.
    Failed(&'a ErrorObject),
    /// Answered with a result; `true` when it is a tool result with `isError`.
    Answered(bool),
}
impl ServerSpan {
    /// Starts the span of `request`, or `None` when no instrumentation is installed.
    /// `version` is the protocol version the request is served under, when known before it
    /// runs.
    pub(crate) fn start(
        request: &Request,
        session: Option<&SessionId>,
        network: Network,
        headers: Option<&TraceHeaders>,
        version: Option<ProtocolVersion>,
        settled: Option<Settled>,
    ) -> Option<Self> {
        // An `initialize`'s version is the one its handshake settles on, set when it ends
        // (the one asked for when it settles on none).
        let (version, asked) = match settled {
            Some(_) => (None, version),
            None => (version, None),
        };
        let mut span = Self::begin(
            request,
            session.map(ToString::to_string),
            network,
            headers,
            version,
        )?;
        span.settled = settled;
        span.asked = asked;
        Some(span)
    }

    /// Starts the span of a request the server sent the client, which the client's handlers
    /// answer; `None` when no instrumentation is installed.
    pub(crate) fn start_handler(request: &Request, network: Network) -> Option<Self> {
        Self::begin(request, None, network, None, None)
    }

    fn begin(
        request: &Request,
        session: Option<String>,
        network: Network,
        headers: Option<&TraceHeaders>,
        version: Option<ProtocolVersion>,
    ) -> Option<Self> {
        let state = state()?;
        let operation = Operation::of(&request.method, request.params.as_ref());
        let mut shared = operation.shared;
        if let Some(version) = version {
            shared.push(KeyValue::new(attr::PROTOCOL_VERSION, version.as_str()));
        }
        network.push_attrs(&mut shared);
        let mut span_attrs = shared.clone();
        span_attrs.extend(operation.span_only);
        span_attrs.push(KeyValue::new(
            attr::REQUEST_ID,
            request_id_value(&request.id),
        ));
        if let Some(session) = session {
            span_attrs.push(KeyValue::new(attr::SESSION_ID, session));
        }
        // `_meta` first (the MCP request's own context), then the HTTP request's, linked when
        // both are there; else the ambient context.
        let from_meta = propagation::from_request(request);
        let from_headers = headers.and_then(TraceHeaders::context);
        let (parent, link) = match (from_meta, from_headers) {
            (Some(meta), headers) => (meta, headers),
            (None, Some(headers)) => (headers, None),
            (None, None) => (Context::current(), None),
        };
        let mut builder = state
            .tracer
            .span_builder(operation.name)
            .with_kind(SpanKind::Server)
            .with_attributes(span_attrs);
        if let Some(link) = link {
            builder =
                builder.with_links(vec![Link::with_context(link.span().span_context().clone())]);
        }
        let span = builder.start_with_context(&state.tracer, &parent);
        let cx = parent.with_span(span).with_value(network);
        Some(Self {
            state,
            cx,
            started: Instant::now(),
            shared,
            method: request.method.clone(),
            network,
            settled: None,
            asked: None,
            done: false,
        })
    }

    /// Runs the request's handling inside the span's context, and ends the span with its
    /// reply.
    pub(crate) async fn run(mut self, handling: impl Future<Output = Reply>) -> Reply {
        let reply = handling.with_context(self.cx.clone()).await;
        self.finish(match &reply {
            Err(error) => Ended::Failed(error),
            Ok(result) => Ended::Answered(
                self.method == method::TOOLS_CALL && super::is_tool_error(result.get()),
            ),
        });
        reply
    }

    /// [`run`](Self::run) for the client's handlers, which answer with JSON values.
    pub(crate) async fn run_handler(
        mut self,
        handling: impl Future<Output = Result<Value, ErrorObject>>,
    ) -> Result<Value, ErrorObject> {
        let answer = handling.with_context(self.cx.clone()).await;
        self.finish(match &answer {
            Err(error) => Ended::Failed(error),
            Ok(_) => Ended::Answered(false),
        });
        answer
    }

    /// Ends the span and records its duration.
    fn finish(&mut self, ended: Ended<'_>) {
        self.done = true;
        let mut attrs = std::mem::take(&mut self.shared);
        // The span has these since it started; only what comes now is added to it.
        let on_span = attrs.len();
        let settled = self
            .settled
            .take()
            .and_then(|settled| settled(self.network));
        if let Some(version) = settled.or(self.asked.take()) {
            // The version the handshake settled on; the session's duration is reported with it.
            attrs.push(KeyValue::new(attr::PROTOCOL_VERSION, version.as_str()));
        }
        let span = self.cx.span();
        match ended {
            Ended::Cancelled => {
                attrs.push(KeyValue::new(attr::ERROR_TYPE, "cancelled"));
                span.set_status(Status::error("the request was cancelled"));
            }
            Ended::Failed(error) => {
                let code = error.code.to_string();
                attrs.push(KeyValue::new(attr::ERROR_TYPE, code.clone()));
                attrs.push(KeyValue::new(attr::STATUS_CODE, code));
                span.set_status(Status::error(error.message.clone()));
            }
            Ended::Answered(true) => {
                attrs.push(KeyValue::new(attr::ERROR_TYPE, "tool_error"));
                span.set_status(Status::error("the tool reported an error"));
            }
            Ended::Answered(false) => {}
        }
        span.set_attributes(attrs[on_span..].iter().cloned());
        span.end();
        self.state
            .server_operation
            .record(self.started.elapsed().as_secs_f64(), &attrs);
    }
}

impl Drop for ServerSpan {
    fn drop(&mut self) {
        if !self.done {
            self.finish(Ended::Cancelled);
        }
    }
}

/// Sends a request to the client (`send` does it, with the params it is given) under a
/// `CLIENT` span, child of the calling request's span, whose context goes into the params'
/// `_meta`.
pub(crate) async fn peer_request<F, Fut>(
    method_name: &str,
    mut params: Option<Value>,
    session: Option<&SessionId>,
    version: ProtocolVersion,
    send: F,
) -> Result<Value, PeerError>
where
    F: FnOnce(Option<Value>, SentAs) -> Fut,
    Fut: Future<Output = Result<Value, PeerError>>,
{
    let Some(state) = state() else {
        return send(params, SentAs(None)).await;
    };
    let parent = Context::current();
    let network = parent.get::<Network>().copied().unwrap_or_default();
    let operation = Operation::of(method_name, params.as_ref());
    let mut shared = operation.shared;
    shared.push(KeyValue::new(attr::PROTOCOL_VERSION, version.as_str()));
    network.push_attrs(&mut shared);
    let mut span_attrs = shared.clone();
    span_attrs.extend(operation.span_only);
    if let Some(session) = session {
        span_attrs.push(KeyValue::new(attr::SESSION_ID, session.to_string()));
    }
    let span = state
        .tracer
        .span_builder(operation.name)
        .with_kind(SpanKind::Client)
        .with_attributes(span_attrs)
        .start_with_context(&state.tracer, &parent);
    let cx = parent.with_span(span);
    propagation::into_meta(&cx, &mut params);
    let started = Instant::now();
    let outcome = send(params, SentAs(Some(cx.clone())))
        .with_context(cx.clone())
        .await;
    // The span has `shared` since it started; only what comes now is added to it.
    let on_span = shared.len();
    let span = cx.span();
    if let Err(error) = &outcome {
        let (kind, code) = match error {
            PeerError::Rejected(object) => {
                let code = object.code.to_string();
                (code.clone(), Some(code))
            }
            PeerError::Timeout => ("timeout".to_owned(), None),
            PeerError::Cancelled => ("cancelled".to_owned(), None),
            PeerError::Closed => ("closed".to_owned(), None),
            PeerError::Malformed(_) => ("malformed_result".to_owned(), None),
            _ => ("_OTHER".to_owned(), None),
        };
        shared.push(KeyValue::new(attr::ERROR_TYPE, kind));
        if let Some(code) = code {
            shared.push(KeyValue::new(attr::STATUS_CODE, code));
        }
        span.set_status(Status::error(error.to_string()));
    }
    span.set_attributes(shared[on_span..].iter().cloned());
    span.end();
    state
        .client_operation
        .record(started.elapsed().as_secs_f64(), &shared);
    outcome
}

/// Records the id a server-to-client request is sent with on its span.
#[derive(Debug)]
pub(crate) struct SentAs(Option<Context>);

impl SentAs {
    /// Sets `jsonrpc.request.id`.
    pub(crate) fn record(self, id: &RequestId) {
        if let Some(cx) = self.0 {
            cx.span()
                .set_attribute(KeyValue::new(attr::REQUEST_ID, request_id_value(id)));
        }
    }
}

/// Measures a server session from its `initialize` to the end of its state, reported as
/// `mcp.server.session.duration`.
#[derive(Debug)]
pub(crate) struct ServerSessionTimer {
    started: Instant,
    version: ProtocolVersion,
    network: OnceLock<Network>,
}

impl ServerSessionTimer {
    pub(crate) fn new(version: ProtocolVersion) -> Self {
        Self {
            started: Instant::now(),
            version,
            network: OnceLock::new(),
        }
    }

    pub(crate) fn set_network(&self, network: Network) {
        let _ = self.network.set(network);
    }
}

impl Drop for ServerSessionTimer {
    fn drop(&mut self) {
        let Some(state) = state() else {
            return;
        };
        let mut attrs = vec![KeyValue::new(attr::PROTOCOL_VERSION, self.version.as_str())];
        self.network
            .get()
            .copied()
            .unwrap_or_default()
            .push_attrs(&mut attrs);
        state
            .server_session
            .record(self.started.elapsed().as_secs_f64(), &attrs);
    }
}
