//! What every method's implementation shares: the [`RequestContext`] a request is handled
//! with, reading typed params, serialising results into a [`Reply`], and [`guarded`], which
//! turns a panicking non-tool handler into a reported internal error.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use actix_mcp_actors::{
    ErrorObject,
    dev::{Reply, Request, RequestScope, SupervisedError},
};

use crate::error::McpError;
use crate::protocol::{ClientCapabilities, ProtocolVersion};
use crate::server::context::{ContextInner, MetaCell, RequestContext, TransportInfo};
use crate::server::handler::HandlerError;
use crate::server::mrtr::{self, Answer, Mrtr, RoundInput};
use crate::server::session::SessionState;
use crate::server::{ErrorSite, ExceptionReport, ServerInner};

use crate::server::origin::Envelope;

/// The context of a 2026-07-28 request: everything from its own envelope (the spec forbids
/// using context from earlier requests on the same connection); `meta` is its whole `_meta`.
pub(super) fn context_2026(
    server: &Arc<ServerInner>,
    scope: &RequestScope,
    method: &str,
    meta: Option<MetaCell>,
    envelope: &Envelope,
    transport: Option<&Arc<TransportInfo>>,
    round: Option<(Mrtr, Option<RoundInput>)>,
) -> RequestContext {
    let (mrtr, input) = round.map_or((None, None), |(mrtr, input)| (Some(mrtr), input));
    RequestContext::new(ContextInner {
        scope: scope.clone(),
        server: server.clone(),
        method: crate::protocol::method::kept(method),
        meta,
        version: envelope.version,
        client_capabilities: envelope.client_capabilities.clone(),
        client_info: envelope.client_info.clone(),
        session: None,
        log_level: envelope.log_level,
        input: input.map(Arc::new),
        mrtr: mrtr.map(Arc::new),
        link: OnceLock::new(),
        task_id: None,
        transport: transport.cloned(),
    })
}

/// The context of a 2025-11-25 (or older) request: its session's negotiated state when it has
/// one, else served under `version` with no client capabilities.
pub(super) fn context_2025(
    server: &Arc<ServerInner>,
    scope: &RequestScope,
    request: &Request,
    state: Option<Arc<SessionState>>,
    version: ProtocolVersion,
    transport: Option<&Arc<TransportInfo>>,
) -> RequestContext {
    let meta = request
        .params
        .as_ref()
        .and_then(|params| crate::protocol::member(params, "_meta"))
        .and_then(Value::as_object)
        .cloned();
    let version = state.as_ref().map_or(version, |s| s.version);
    let (client_capabilities, client_info) = match &state {
        Some(state) => (state.client_capabilities.clone(), state.client_info.clone()),
        None => (NO_CAPABILITIES.with(Arc::clone), None),
    };
    RequestContext::new(ContextInner {
        scope: scope.clone(),
        server: server.clone(),
        method: crate::protocol::method::kept(&request.method),
        meta: meta.map(MetaCell::Parsed),
        version,
        client_capabilities,
        client_info,
        session: state,
        log_level: None,
        input: None,
        mrtr: None,
        link: OnceLock::new(),
        task_id: None,
        transport: transport.cloned(),
    })
}

thread_local! {
    /// The capabilities of a client that declared none (a request without a session), shared
    /// rather than allocated per request.
    static NO_CAPABILITIES: Arc<ClientCapabilities> = Arc::default();
}

/// Serialises a result into the reply.
pub(super) fn to_raw<T: Serialize>(value: &T) -> Reply {
    serde_json::value::to_raw_value(value)
        .map_err(|err| ErrorObject::internal(format!("unserialisable result: {err}")))
}

/// The request's params as `T` (absent params read as an empty object).
pub(super) fn params<T: DeserializeOwned>(request: &Request) -> Result<T, McpError> {
    let result = match &request.params {
        Some(value) => T::deserialize(value),
        None => T::deserialize(&Value::Object(Map::new())),
    };
    result.map_err(|err| {
        McpError::invalid_params(format!("invalid params for {}: {err}", request.method))
    })
}

/// Like [`params`], but moves the params out of the request (its strings are not copied).
pub(super) fn take_params<T: DeserializeOwned>(request: &mut Request) -> Result<T, McpError> {
    let value = request
        .params
        .take()
        .unwrap_or_else(|| Value::Object(Map::new()));
    serde_json::from_value(value).map_err(|err| {
        McpError::invalid_params(format!("invalid params for {}: {err}", request.method))
    })
}

/// Runs a non-tool handler future, turning a panic into a reported internal error.
pub(super) async fn guarded<T, E>(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    site: ErrorSite,
    fut: BoxFuture<'static, Result<T, E>>,
) -> Result<T, E>
where
    E: From<McpError>,
{
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_owned());
            server.report(ExceptionReport {
                message: message.clone(),
                panicked: true,
                site,
                session_id: cx.session_id().cloned(),
            });
            Err(E::from(McpError::internal(message)))
        }
    }
}

/// Runs a prompt or resource handler: guarded against panics (see [`guarded`]), and in a
/// 2026 request as an implicit-style call whose asks for input become `input_required`
/// rounds (see [`mrtr::run`]). A handler's own `input_required` answer is an
/// [`Answer::InputRequired`] from here on.
pub(super) async fn run_handler<T: Send + 'static>(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    site: ErrorSite,
    make: impl FnOnce(RequestContext) -> BoxFuture<'static, Result<T, HandlerError>>,
) -> Result<Answer<T>, HandlerError> {
    let Some(state) = cx.mrtr() else {
        return answer_of(guarded(server, cx, site, make(cx.clone())).await);
    };
    match mrtr::run(server, cx, state, None, make).await {
        Ok(Answer::Done(outcome)) => answer_of(outcome),
        Ok(Answer::InputRequired(input)) => Ok(Answer::InputRequired(input)),
        Err(SupervisedError::Panicked(message)) => {
            server.report(ExceptionReport {
                message: message.clone(),
                panicked: true,
                site,
                session_id: cx.session_id().cloned(),
            });
            Err(HandlerError::Failed(McpError::internal(message)))
        }
        Err(other) => Err(HandlerError::Failed(McpError::internal(other.to_string()))),
    }
}

/// A handler's outcome as an answer: its `input_required` error is one.
fn answer_of<T>(outcome: Result<T, HandlerError>) -> Result<Answer<T>, HandlerError> {
    match outcome {
        Ok(output) => Ok(Answer::Done(output)),
        Err(HandlerError::Failed(error)) => Answer::from_error(error).map_err(HandlerError::Failed),
        Err(rejected) => Err(rejected),
    }
}

impl From<McpError> for HandlerError {
    fn from(error: McpError) -> Self {
        HandlerError::Failed(error)
    }
}
