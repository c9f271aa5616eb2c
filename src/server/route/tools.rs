//! `tools/list` (serialised once per catalog and protocol version in the common one-page
//! case) and `tools/call` (validated, supervised, with failures turned into `isError`
//! results so the model can correct itself).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/tools>

use std::sync::Arc;

use serde_json::Value;

use actix_mcp_actors::{
    ErrorObject,
    dev::{Reply, Request, SupervisedError},
};

use crate::error::{ErrorKind, McpError, code};
use crate::protocol::{
    CallToolRequestParams, CallToolResult, ForVersion, ListToolsResult, PaginatedRequestParams,
    TaskSupport, method,
};
use crate::server::context::RequestContext;
use crate::server::handler::{HandlerError, HandlerParts};
use crate::server::mrtr::{self, Answer};
use crate::server::{ErrorSite, ExceptionReport, ServerInner};

use super::lists::list_page;
use super::support::{params, take_params, to_raw};
use super::tasks::{Placement, call_as_task, placement};

/// `tools/list`: one page of the tools; the whole list, when it is one page, comes from the
/// catalog's cache.
pub(super) fn tools_list(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Reply, McpError> {
    let version = cx.protocol_version();
    let p: PaginatedRequestParams = params(request)?;
    let catalog = server.catalog();
    let list = || {
        list_page(
            server,
            request,
            version,
            catalog.tools.values().map(|def| &def.definition),
            |tools, next_cursor| ListToolsResult {
                tools,
                next_cursor,
                meta: None,
            },
        )
    };
    if p.cursor.is_some() || server.config.page_size.is_some() {
        return list();
    }
    // The common case, one page: serialise once per catalog version and protocol version.
    let mut failure = None;
    let cached = catalog.tools_list.get_or_init(version, || match list() {
        Ok(Ok(raw)) => Arc::from(raw.get()),
        other => {
            failure = Some(other);
            Arc::from("")
        }
    });
    if let Some(failure) = failure {
        return failure;
    }
    if cached.is_empty() {
        return list();
    }
    Ok(serde_json::value::RawValue::from_string(cached.to_string())
        .map_err(|err| ErrorObject::internal(format!("cached list: {err}"))))
}

/// What `tools/call` reads of its request: the tool's name and its arguments, taken out of
/// the request once and shared by every round of the call.
pub(super) struct ToolCall {
    name: String,
    arguments: Arc<Value>,
}

impl ToolCall {
    /// Takes the name and the arguments out of `request`'s params. The arguments move out as
    /// they are (an object is not rebuilt entry by entry); the rest is read as the typed
    /// params, checked as before.
    /// A 2026 call's arguments object was moved out already: its round holds it.
    pub(super) fn take(request: &mut Request, cx: &RequestContext) -> Result<Self, McpError> {
        if let Some(arguments) = cx.mrtr().and_then(|mrtr| mrtr.arguments()) {
            let CallToolRequestParams { name, .. } = take_params(request)?;
            return Ok(Self {
                name,
                arguments: arguments.clone(),
            });
        }
        let arguments = match request
            .params
            .as_mut()
            .and_then(Value::as_object_mut)
            .and_then(|params| crate::protocol::take_member(params, "arguments"))
        {
            None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
            Some(arguments @ Value::Object(_)) => arguments,
            Some(other) => {
                return Err(McpError::invalid_params(format!(
                    "invalid params for {}: arguments must be an object, not {}",
                    request.method,
                    json_kind(&other)
                )));
            }
        };
        let CallToolRequestParams { name, .. } = take_params(request)?;
        Ok(Self {
            name,
            arguments: Arc::new(arguments),
        })
    }
}

/// Moves a tool call's `arguments` out of its params when they are an object (anything else
/// stays for [`ToolCall::take`] to refuse, in its order).
pub(super) fn take_object_arguments(request: &mut Request) -> Option<Arc<Value>> {
    let params = request.params.as_mut()?.as_object_mut()?;
    let [arguments] = crate::protocol::members(params, ["arguments"]);
    if !arguments?.is_object() {
        return None;
    }
    crate::protocol::take_member(params, "arguments").map(Arc::new)
}

/// The JSON type of `value`, as an error names it.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `tools/call`: validates the arguments, runs the tool supervised (timeout, panics,
/// cancellation) and answers failures as `isError` results.
pub(super) async fn call_tool(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    call: &ToolCall,
) -> Result<Answer, McpError> {
    let name = &call.name;
    let arguments = &call.arguments;
    // Borrowed from a catalog snapshot: cloning a `ToolDef` copies its whole JSON schema.
    let mut catalog = server.catalog();
    // A shared tool another node defined a moment ago: the cluster's catalog store has it.
    if !catalog.tools.contains_key(name) && server.fetch_shared(name).await {
        catalog = server.catalog();
    }
    let Some(def) = catalog.tools.get(name) else {
        return Err(McpError::invalid_params(format!("unknown tool: {}", name)));
    };
    if let Some(required) = &def.required_capabilities {
        super::v2026::require(cx.client_capabilities(), required).map_err(McpError::from)?;
    }
    let version = cx.protocol_version();
    let v2026 = cx.is_v2026();
    let finish = |mut result: CallToolResult| {
        result.adapt_to(version);
        Ok(Answer::Done(if v2026 {
            super::v2026::complete(server, method::TOOLS_CALL, &result, result.meta.is_some())
        } else {
            to_raw(&result)
        }))
    };
    if let Err(problems) = def.validate(arguments) {
        return finish(CallToolResult::error_text(format!(
            "invalid arguments for tool `{}`: {problems}",
            name
        )));
    }
    if def.task_support != TaskSupport::Forbidden
        && let Placement::Task(service) = placement(server, cx, def)?
        && let Some(answer) =
            Box::pin(call_as_task(server, service, cx, def, arguments.clone())).await?
    {
        return Ok(answer);
    }
    let site = || ErrorSite::Tool {
        name: name.clone(),
        arguments: Value::clone(arguments),
    };
    let timeout = def.timeout.or(server.config.tool_timeout);
    let outcome = match cx.mrtr() {
        // A 2026 call: the handler's asks for input become rounds (see `mrtr`).
        Some(mrtr) => {
            let make = |hcx| def.invoke(HandlerParts::shared(arguments.clone(), hcx));
            match mrtr::run(server, cx, mrtr, timeout, make).await {
                Ok(Answer::Done(done)) => Ok(done),
                Ok(Answer::InputRequired(input)) => return Ok(Answer::InputRequired(input)),
                Err(err) => Err(err),
            }
        }
        None => {
            let fut = def.invoke(HandlerParts::shared(arguments.clone(), cx.clone()));
            // The tool may move into an actor of its own: it takes its request's span along.
            #[cfg(feature = "otel")]
            let fut = opentelemetry::context::FutureExt::with_context(
                fut,
                opentelemetry::Context::current(),
            );
            cx.scope().supervise(fut, timeout).await
        }
    };
    let result = match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(HandlerError::Rejected(rejection))) => CallToolResult::error_text(format!(
            "invalid arguments for tool `{}`: {rejection}",
            name
        )),
        Ok(Err(HandlerError::Failed(error))) => match error.kind() {
            ErrorKind::ToolFailed => CallToolResult::error_text(error.message()),
            // A 2025-11-25 client knows no -32021: the model sees what was missing.
            ErrorKind::Other(code::MISSING_REQUIRED_CLIENT_CAPABILITY) if !cx.is_v2026() => {
                CallToolResult::error_text(error.message())
            }
            ErrorKind::Internal => {
                server.report(ExceptionReport {
                    message: error.message().to_owned(),
                    panicked: false,
                    site: site(),
                    session_id: cx.session_id().cloned(),
                });
                CallToolResult::error_text(format!("tool `{}` failed with an internal error", name))
            }
            // The handler's own `input_required` answer is one from here on.
            _ => return Answer::from_error(error),
        },
        Err(SupervisedError::Panicked(message)) => {
            server.report(ExceptionReport {
                message,
                panicked: true,
                site: site(),
                session_id: cx.session_id().cloned(),
            });
            CallToolResult::error_text(format!("tool `{}` failed with an internal error", name))
        }
        Err(SupervisedError::TimedOut(limit)) => CallToolResult::error_text(format!(
            "tool `{}` timed out after {} ms",
            name,
            limit.as_millis()
        )),
        Err(_) => return Err(McpError::internal("the tool call was cancelled")),
    };
    if let Err(problem) = def.validate_output(&result) {
        // A server bug, not the model's: reported, and the model is told the tool failed.
        server.report(ExceptionReport {
            message: format!("tool `{name}` returned output its output schema refuses: {problem}"),
            panicked: false,
            site: site(),
            session_id: cx.session_id().cloned(),
        });
        return finish(CallToolResult::error_text(format!(
            "tool `{name}` failed: its output does not match its output schema"
        )));
    }
    finish(result)
}
