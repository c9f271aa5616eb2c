//! The one place that matches method names: turns each incoming JSON-RPC request into a call
//! on the registered tools, prompts, resources and handlers, and implements the runtime's
//! [`Dispatch`] seam.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use actix_mcp_actors::{
    Dispatch, ErrorObject, Frame, InFlight, Incoming, Metrics, Notification, Reply, Request,
    RequestScope, ResponseOutlet, SessionHandle, SupervisedError,
};

use crate::error::{ErrorKind, McpError};
use crate::protocol::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, CompleteRequestParams,
    CompleteResult, Completion, ForVersion, GetPromptRequestParams, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, PromptsCapability, ProtocolVersion,
    ReadResourceRequestParams, Reference, ResourcesCapability, ServerCapabilities,
    SetLevelRequestParams, SubscribeRequestParams, ToolsCapability, method,
};
use crate::server::context::{ContextInner, RequestContext};
use crate::server::handler::{HandlerError, HandlerParts};
use crate::server::resource::into_read_result;
use crate::server::session::SessionState;
use crate::server::{ErrorSite, ExceptionReport, RequestEvent, ServerInner, pagination};

/// Most completion values one answer carries (spec: at most 100).
const MAX_COMPLETIONS: usize = 100;

/// Per-transport defaults for requests outside a session's negotiated state.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RequestDefaults {
    /// The version stateless requests are served under (from `MCP-Protocol-Version`).
    pub(crate) version: Option<ProtocolVersion>,
}

/// The [`Dispatch`] implementation: MCP semantics for the actor runtime.
pub(crate) struct McpDispatch {
    pub(crate) server: Arc<ServerInner>,
    pub(crate) defaults: RequestDefaults,
}

impl Dispatch for McpDispatch {
    fn request(&self, request: Request, scope: RequestScope) -> BoxFuture<'static, Reply> {
        Box::pin(handle_request(
            self.server.clone(),
            self.defaults,
            request,
            scope,
        ))
    }

    fn notification(&self, notification: Notification, session: Option<&SessionHandle>) {
        match notification.method.as_str() {
            method::NOTIFICATION_INITIALIZED => {
                if let Some(state) = session.and_then(SessionHandle::data::<SessionState>) {
                    state.mark_initialized();
                }
            }
            method::NOTIFICATION_ROOTS_LIST_CHANGED => {
                if let Some(handler) = &self.server.on_roots_changed {
                    handler(session.map(|s| s.id().clone()));
                }
            }
            method::NOTIFICATION_PROGRESS | method::NOTIFICATION_CANCELLED => {}
            other => {
                let Some(handler) = self.server.catalog().custom.get(other).cloned() else {
                    tracing::debug!(method = other, "ignored an unknown notification");
                    return;
                };
                let scope = RequestScope::detached(
                    actix_mcp_actors::RequestId::from("notification"),
                    ResponseOutlet::channel().0,
                    None,
                );
                let cx = context(
                    &self.server,
                    self.defaults,
                    &scope,
                    other,
                    None,
                    session.and_then(SessionHandle::data),
                );
                let fut = handler(HandlerParts::new(
                    notification.params.unwrap_or(Value::Null),
                    cx,
                ));
                actix_rt::spawn(async move {
                    if let Err(err) = fut.await {
                        tracing::warn!(%err, "a custom notification handler failed");
                    }
                });
            }
        }
    }

    fn is_cancellable(&self, method: &str) -> bool {
        method != method::INITIALIZE
    }
}

fn context(
    server: &Arc<ServerInner>,
    defaults: RequestDefaults,
    scope: &RequestScope,
    method: &str,
    meta: Option<Map<String, Value>>,
    state: Option<Arc<SessionState>>,
) -> RequestContext {
    let version = state
        .as_ref()
        .map(|s| s.version)
        .or(defaults.version)
        .unwrap_or(ProtocolVersion::LATEST);
    let (client_capabilities, client_info) = match &state {
        Some(state) => (state.client_capabilities.clone(), state.client_info.clone()),
        None => (Arc::new(ClientCapabilities::default()), None),
    };
    RequestContext::new(ContextInner {
        scope: scope.clone(),
        server: server.clone(),
        method: method.to_owned(),
        meta,
        version,
        client_capabilities,
        client_info,
        session: state,
    })
}

fn to_raw<T: Serialize>(value: &T) -> Reply {
    serde_json::value::to_raw_value(value)
        .map_err(|err| ErrorObject::internal(format!("unserialisable result: {err}")))
}

fn params<T: DeserializeOwned>(request: &Request) -> Result<T, McpError> {
    let result = match &request.params {
        Some(value) => T::deserialize(value),
        None => T::deserialize(&Value::Object(Map::new())),
    };
    result.map_err(|err| {
        McpError::invalid_params(format!("invalid params for {}: {err}", request.method))
    })
}

/// Like [`params`], but moves the params out of the request (its strings are not copied).
fn take_params<T: DeserializeOwned>(request: &mut Request) -> Result<T, McpError> {
    let value = request
        .params
        .take()
        .unwrap_or_else(|| Value::Object(Map::new()));
    serde_json::from_value(value).map_err(|err| {
        McpError::invalid_params(format!("invalid params for {}: {err}", request.method))
    })
}

async fn handle_request(
    server: Arc<ServerInner>,
    defaults: RequestDefaults,
    mut request: Request,
    scope: RequestScope,
) -> Reply {
    let started = Instant::now();
    let state = scope
        .session()
        .and_then(SessionHandle::data::<SessionState>);
    let in_session = scope.session().is_some();
    if in_session
        && state.is_none()
        && request.method != method::INITIALIZE
        && request.method != method::PING
    {
        return Err(ErrorObject::invalid_request(
            "the session is not initialized; send initialize first",
        ));
    }
    if state.is_some() && request.method == method::INITIALIZE {
        return Err(ErrorObject::invalid_request(
            "the session is already initialized",
        ));
    }
    let meta = request
        .params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .cloned();
    let cx = context(&server, defaults, &scope, &request.method, meta, state);
    // Boxed: only servers with an around-request hook pay for it, and the request future stays
    // small.
    let mut event = server.around.as_ref().map(|_| {
        Box::new(RequestEvent {
            method: request.method.clone(),
            tool_name: None,
            tool_arguments: None,
            prompt_name: None,
            resource_uri: None,
            error: None,
            client_info: cx.client_info().cloned(),
            duration: std::time::Duration::ZERO,
        })
    });
    let outcome = route(&server, &cx, &mut request, event.as_deref_mut()).await;
    let reply = match outcome {
        Ok(reply) => reply,
        Err(error) => {
            if error.kind() == ErrorKind::Internal {
                server.report(ExceptionReport {
                    message: error.message().to_owned(),
                    panicked: false,
                    site: ErrorSite::Request {
                        method: request.method.clone(),
                    },
                    session_id: cx.session_id().cloned(),
                });
            }
            Err(error.to_error_object())
        }
    };
    if let (Some(hook), Some(mut event)) = (&server.around, event) {
        if let Err(error) = &reply {
            event.error = Some(error.code.to_string());
        }
        event.duration = started.elapsed();
        hook(&event);
    }
    reply
}

// Only `tools/call` is awaited in place: the other arms are boxed so the request future (one
// allocation per request) stays small.
async fn route(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &mut Request,
    event: Option<&mut RequestEvent>,
) -> Result<Reply, McpError> {
    let version = cx.protocol_version();
    match request.method.as_str() {
        method::INITIALIZE => initialize(server, cx, request),
        method::PING => Ok(to_raw(&Map::new())),
        method::TOOLS_LIST => {
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
        method::TOOLS_CALL => call_tool(server, cx, request, event).await,
        method::PROMPTS_LIST => {
            let catalog = server.catalog();
            list_page(
                server,
                request,
                version,
                catalog.prompts.values().map(|def| &def.definition),
                |prompts, next_cursor| ListPromptsResult {
                    prompts,
                    next_cursor,
                    meta: None,
                },
            )
        }
        method::PROMPTS_GET => Box::pin(get_prompt(server, cx, request, event)).await,
        method::RESOURCES_LIST => {
            let catalog = server.catalog();
            list_page(
                server,
                request,
                version,
                catalog.resources.values().map(|def| &def.definition),
                |resources, next_cursor| ListResourcesResult {
                    resources,
                    next_cursor,
                    meta: None,
                },
            )
        }
        method::RESOURCES_TEMPLATES_LIST => {
            let catalog = server.catalog();
            list_page(
                server,
                request,
                version,
                catalog.templates.iter().map(|def| &def.definition),
                |resource_templates, next_cursor| ListResourceTemplatesResult {
                    resource_templates,
                    next_cursor,
                    meta: None,
                },
            )
        }
        method::RESOURCES_READ => Box::pin(read_resource(server, cx, request, event)).await,
        method::RESOURCES_SUBSCRIBE => {
            Box::pin(subscription(server, cx, request, event, true)).await
        }
        method::RESOURCES_UNSUBSCRIBE => {
            Box::pin(subscription(server, cx, request, event, false)).await
        }
        method::COMPLETION_COMPLETE => Box::pin(complete(server, cx, request)).await,
        method::LOGGING_SET_LEVEL => {
            let p: SetLevelRequestParams = params(request)?;
            match cx.session_state() {
                Some(state) => state.set_log_level(p.level),
                None => return Err(McpError::invalid_params("logging/setLevel needs a session")),
            }
            Ok(to_raw(&Map::new()))
        }
        other => {
            let Some(handler) = server.catalog().custom.get(other).cloned() else {
                return Err(McpError::method_not_found(other));
            };
            let parts = HandlerParts::new(request.params.take().unwrap_or(Value::Null), cx.clone());
            let site = ErrorSite::Request {
                method: other.to_owned(),
            };
            let value = match Box::pin(guarded(server, cx, site, handler(parts))).await {
                Ok(value) => value,
                Err(HandlerError::Rejected(rejection)) => {
                    return Err(McpError::invalid_params(rejection.to_string()));
                }
                Err(HandlerError::Failed(error)) => return Err(error),
            };
            Ok(to_raw(&value))
        }
    }
}

/// `resources/subscribe` (`subscribe`) or `resources/unsubscribe`: records the change in the
/// session, then runs the user's handler, if any.
async fn subscription(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
    event: Option<&mut RequestEvent>,
    subscribe: bool,
) -> Result<Reply, McpError> {
    let p: SubscribeRequestParams = params(request)?;
    if let Some(event) = event {
        event.resource_uri = Some(p.uri.clone());
    }
    let state = cx
        .session_state()
        .ok_or_else(|| McpError::invalid_params("subscriptions need a session"))?;
    let handler = if subscribe {
        state.subscribe(&p.uri);
        &server.on_subscribe
    } else {
        state.unsubscribe(&p.uri);
        &server.on_unsubscribe
    };
    if let Some(handler) = handler {
        guarded(
            server,
            cx,
            ErrorSite::Resource { uri: p.uri.clone() },
            handler(p.uri, cx.clone()),
        )
        .await?;
    }
    Ok(to_raw(&Map::new()))
}

/// One page of a `*/list` result: reads the cursor, pages `items`, builds the result with
/// `build` and adapts it to the request's protocol version.
fn list_page<'a, T, R>(
    server: &ServerInner,
    request: &Request,
    version: ProtocolVersion,
    items: impl Iterator<Item = &'a T>,
    build: impl FnOnce(Vec<T>, Option<String>) -> R,
) -> Result<Reply, McpError>
where
    T: Clone + 'a,
    R: ForVersion + Serialize,
{
    let p: PaginatedRequestParams = params(request)?;
    let items: Vec<&T> = items.collect();
    let (page, next_cursor) =
        pagination::page(&items, p.cursor.as_deref(), server.config.page_size)?;
    let mut result = build(page.into_iter().cloned().collect(), next_cursor);
    result.adapt_to(version);
    Ok(to_raw(&result))
}

/// Runs a non-tool handler future, turning a panic into a reported internal error.
async fn guarded<T, E>(
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

impl From<McpError> for HandlerError {
    fn from(error: McpError) -> Self {
        HandlerError::Failed(error)
    }
}

fn initialize(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Reply, McpError> {
    let p: InitializeRequestParams = params(request)?;
    let version = server.effective_version(&p.protocol_version);
    if let Some(session) = cx.scope().session() {
        session.set_data(SessionState::new(
            version,
            Some(p.client_info.clone()),
            p.capabilities.clone(),
        ));
    }
    let mut result = InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities: capabilities(server),
        server_info: server.info.clone(),
        instructions: server.instructions.clone(),
        meta: None,
    };
    result.adapt_to(version);
    Ok(to_raw(&result))
}

/// The capabilities derived from what is registered (or the builder's override).
pub(crate) fn capabilities(server: &ServerInner) -> ServerCapabilities {
    if let Some(capabilities) = &server.capabilities {
        return capabilities.clone();
    }
    let catalog = server.catalog();
    let has_resources = !catalog.resources.is_empty()
        || !catalog.templates.is_empty()
        || server.read_fallback.is_some();
    ServerCapabilities {
        tools: (!catalog.tools.is_empty()).then_some(ToolsCapability {
            list_changed: Some(true),
        }),
        prompts: (!catalog.prompts.is_empty()).then_some(PromptsCapability {
            list_changed: Some(true),
        }),
        resources: has_resources.then_some(ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(true),
        }),
        logging: Some(Map::new()),
        completions: (server.completion.is_some()
            || !catalog.prompts.is_empty()
            || !catalog.templates.is_empty())
        .then(Map::new),
        ..ServerCapabilities::default()
    }
}

async fn call_tool(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &mut Request,
    mut event: Option<&mut RequestEvent>,
) -> Result<Reply, McpError> {
    let p: CallToolRequestParams = take_params(request)?;
    let arguments = Arc::new(Value::Object(p.arguments.unwrap_or_default()));
    if let Some(event) = event.as_deref_mut() {
        event.tool_name = Some(p.name.clone());
        event.tool_arguments = Some((*arguments).clone());
    }
    // Borrowed from a catalog snapshot: cloning a `ToolDef` copies its whole JSON schema.
    let catalog = server.catalog();
    let Some(def) = catalog.tools.get(&p.name) else {
        return Err(McpError::invalid_params(format!(
            "unknown tool: {}",
            p.name
        )));
    };
    let version = cx.protocol_version();
    let finish = |mut result: CallToolResult| {
        if result.is_error()
            && let Some(event) = event
        {
            event.error = Some("isError".to_owned());
        }
        result.adapt_to(version);
        Ok(to_raw(&result))
    };
    if let Err(problems) = def.validate(&arguments) {
        return finish(CallToolResult::error_text(format!(
            "invalid arguments for tool `{}`: {problems}",
            p.name
        )));
    }
    let site = || ErrorSite::Tool {
        name: p.name.clone(),
        arguments: (*arguments).clone(),
    };
    let timeout = def.timeout.or(server.config.tool_timeout);
    let fut = def.invoke(HandlerParts::shared(arguments.clone(), cx.clone()));
    let result = match cx.scope().supervise(fut, timeout).await {
        Ok(Ok(result)) => result,
        Ok(Err(HandlerError::Rejected(rejection))) => CallToolResult::error_text(format!(
            "invalid arguments for tool `{}`: {rejection}",
            p.name
        )),
        Ok(Err(HandlerError::Failed(error))) => match error.kind() {
            ErrorKind::ToolFailed => CallToolResult::error_text(error.message()),
            ErrorKind::Internal => {
                server.report(ExceptionReport {
                    message: error.message().to_owned(),
                    panicked: false,
                    site: site(),
                    session_id: cx.session_id().cloned(),
                });
                CallToolResult::error_text(format!(
                    "tool `{}` failed with an internal error",
                    p.name
                ))
            }
            _ => return Err(error),
        },
        Err(SupervisedError::Panicked(message)) => {
            server.report(ExceptionReport {
                message,
                panicked: true,
                site: site(),
                session_id: cx.session_id().cloned(),
            });
            CallToolResult::error_text(format!("tool `{}` failed with an internal error", p.name))
        }
        Err(SupervisedError::TimedOut(limit)) => CallToolResult::error_text(format!(
            "tool `{}` timed out after {} ms",
            p.name,
            limit.as_millis()
        )),
        Err(_) => return Err(McpError::internal("the tool call was cancelled")),
    };
    finish(result)
}

async fn get_prompt(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
    event: Option<&mut RequestEvent>,
) -> Result<Reply, McpError> {
    let p: GetPromptRequestParams = params(request)?;
    if let Some(event) = event {
        event.prompt_name = Some(p.name.clone());
    }
    let Some(def) = server.catalog().prompts.get(&p.name).cloned() else {
        return Err(McpError::invalid_params(format!(
            "unknown prompt: {}",
            p.name
        )));
    };
    let arguments = Value::Object(
        p.arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
    );
    if let Some(missing) = def.missing_argument(&arguments) {
        return Err(McpError::invalid_params(format!(
            "missing required argument `{missing}` for prompt `{}`",
            p.name
        )));
    }
    let site = ErrorSite::Prompt {
        name: p.name.clone(),
    };
    let mut result = match guarded(
        server,
        cx,
        site,
        (def.handler)(HandlerParts::new(arguments, cx.clone())),
    )
    .await
    {
        Ok(result) => result,
        Err(HandlerError::Rejected(rejection)) => {
            return Err(McpError::invalid_params(rejection.to_string()));
        }
        Err(HandlerError::Failed(error)) => return Err(error),
    };
    result.adapt_to(cx.protocol_version());
    Ok(to_raw(&result))
}

async fn read_resource(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
    event: Option<&mut RequestEvent>,
) -> Result<Reply, McpError> {
    let p: ReadResourceRequestParams = params(request)?;
    if let Some(event) = event {
        event.resource_uri = Some(p.uri.clone());
    }
    let catalog = server.catalog();
    let raw_params = request.params.clone().unwrap_or(Value::Null);
    let (handler, mime_type, vars) = if let Some(def) = catalog.resources.get(&p.uri) {
        (
            def.handler.clone().or_else(|| server.read_fallback.clone()),
            def.definition.mime_type.clone(),
            None,
        )
    } else if let Some((def, vars)) = catalog
        .templates
        .iter()
        .find_map(|t| t.matches(&p.uri).map(|vars| (t, vars)))
    {
        (
            Some(def.handler.clone()),
            def.definition.mime_type.clone(),
            Some(Arc::new(vars)),
        )
    } else {
        (server.read_fallback.clone(), None, None)
    };
    let Some(handler) = handler else {
        return Err(McpError::resource_not_found(&p.uri));
    };
    let mut parts = HandlerParts::new(raw_params, cx.clone());
    parts.uri_vars = vars;
    let site = ErrorSite::Resource { uri: p.uri.clone() };
    let output = match guarded(server, cx, site, handler(parts)).await {
        Ok(output) => output,
        Err(HandlerError::Rejected(rejection)) => {
            return Err(McpError::invalid_params(rejection.to_string()));
        }
        Err(HandlerError::Failed(error)) => return Err(error),
    };
    let mut result = into_read_result(output, &p.uri, mime_type.as_deref());
    if result.contents.is_empty() {
        return Err(McpError::resource_not_found(&p.uri));
    }
    result.adapt_to(cx.protocol_version());
    Ok(to_raw(&result))
}

async fn complete(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &Request,
) -> Result<Reply, McpError> {
    let p: CompleteRequestParams = params(request)?;
    let catalog = server.catalog();
    match &p.r#ref {
        Reference::Prompt(prompt) => {
            let Some(def) = catalog.prompts.get(&prompt.name) else {
                return Err(McpError::invalid_params(format!(
                    "unknown prompt: {}",
                    prompt.name
                )));
            };
            let known = def
                .definition
                .arguments
                .as_ref()
                .is_none_or(|args| args.iter().any(|a| a.name == p.argument.name));
            if !known {
                return Err(McpError::invalid_params(format!(
                    "prompt `{}` has no argument `{}`",
                    prompt.name, p.argument.name
                )));
            }
        }
        Reference::Resource(resource) => {
            let known = catalog
                .templates
                .iter()
                .any(|t| t.definition.uri_template == resource.uri)
                || catalog.resources.contains_key(&resource.uri);
            if !known {
                return Err(McpError::invalid_params(format!(
                    "unknown resource template: {}",
                    resource.uri
                )));
            }
        }
    }
    let mut result = match &server.completion {
        Some(handler) => {
            let site = ErrorSite::Request {
                method: request.method.clone(),
            };
            guarded(server, cx, site, handler(p, cx.clone())).await?
        }
        None => CompleteResult {
            completion: Completion {
                values: Vec::new(),
                total: None,
                has_more: Some(false),
            },
            meta: None,
        },
    };
    let values = &mut result.completion.values;
    if values.len() > MAX_COMPLETIONS {
        let total = values.len();
        values.truncate(MAX_COMPLETIONS);
        result.completion.has_more = Some(true);
        result
            .completion
            .total
            .get_or_insert(u64::try_from(total).unwrap_or(u64::MAX));
    }
    Ok(to_raw(&result))
}

/// Handles one message outside any session (in-process calls and stateless HTTP).
pub(crate) async fn handle_detached(server: Arc<ServerInner>, bytes: &[u8]) -> Option<String> {
    handle_detached_with(server, RequestDefaults::default(), bytes, Arc::default()).await
}

pub(crate) async fn handle_detached_with(
    server: Arc<ServerInner>,
    defaults: RequestDefaults,
    bytes: &[u8],
    metrics: Arc<Metrics>,
) -> Option<String> {
    let dispatch = Arc::new(McpDispatch { server, defaults });
    match actix_mcp_actors::parse_message(bytes) {
        Err(rejection) => Some(rejection.to_frame().json.to_string()),
        Ok(Incoming::Notification(notification)) => {
            dispatch.notification(notification, None);
            None
        }
        Ok(Incoming::Response(_)) => None,
        Ok(Incoming::Request(request)) => {
            let (outlet, rx) = ResponseOutlet::channel();
            let _guard = InFlight::start_detached(request, dispatch, outlet, metrics);
            rx.await.ok().map(|frame: Frame| frame.json.to_string())
        }
    }
}
