//! The one place that matches method names: turns each incoming JSON-RPC request into a call
//! on the registered tools, prompts, resources and handlers, and implements the runtime's
//! [`Dispatch`] seam.
//!
//! [`route`] is only the dispatch table; each method is implemented in the file of its spec
//! page: `lifecycle` (`initialize`, `ping`), `logging`, `tools`, `prompts`, `resources`,
//! `completion`, `tasks` (the Tasks extension), and `custom` (custom methods and
//! notifications). `lists` pages every
//! `*/list` result; `support` holds what they all share (context, params, results, panics).

mod completion;
mod custom;
mod lifecycle;
mod listen;
mod lists;
mod logging;
mod prompts;
mod resources;
mod support;
mod tasks;
mod tools;
mod v2026;

use std::sync::Arc;

use futures::future::{BoxFuture, Either};
use serde_json::Value;

use actix_mcp_actors::{
    ErrorObject, SessionHandle,
    dev::{Dispatch, Frame, Incoming, Notification, Reply, Request, RequestScope, ResponseOutlet},
};

use crate::error::{ErrorKind, McpError, code};
use crate::protocol::{InputRequiredResult, ProtocolVersion, method};
use crate::server::auth::Identity;
use crate::server::context::{MetaCell, RequestContext};
use crate::server::mrtr::{self, Answer, Mrtr};
use crate::server::origin::{Arrival, Origin};
use crate::server::session::SessionState;
use crate::server::{ErrorSite, ExceptionReport, ServerInner};

use self::completion::complete;
use self::custom::{custom, custom_notification};
use self::lifecycle::{initialize, ping};
use self::logging::set_level;
use self::prompts::{get_prompt, prompts_list};
use self::resources::{read_resource, resources_list, subscription, templates_list};
use self::tools::{ToolCall, call_tool, tools_list};

pub(crate) use self::lifecycle::capabilities;

/// The [`Dispatch`] implementation: MCP semantics for the actor runtime. One per transport
/// endpoint (an HTTP endpoint, a stdio connection, a server's in-process calls), made by
/// [`McpDispatch::new`] and shared by all its requests: what is particular to a request (its
/// origin, what its transport knows of it) travels with the request (see [`Arrival`]).
pub(crate) struct McpDispatch {
    pub(crate) server: Arc<ServerInner>,
    /// The transport requests arrive over, for the telemetry's `network.transport`.
    #[cfg(feature = "otel")]
    network: crate::telemetry::Network,
}

impl McpDispatch {
    /// The dispatch of one endpoint of `server`.
    pub(crate) fn new(server: Arc<ServerInner>, network: Network) -> Arc<Self> {
        #[cfg(not(feature = "otel"))]
        let _ = network;
        Arc::new(Self {
            server,
            #[cfg(feature = "otel")]
            network: match network {
                Network::InProcess => crate::telemetry::Network::InProcess,
                #[cfg(feature = "http")]
                Network::Tcp => crate::telemetry::Network::Tcp,
                Network::Pipe => crate::telemetry::Network::Pipe,
            },
        })
    }

    /// Handles a notification that came without a session (the 2025 HTTP transport's stateless mode, 2026-07-28):
    /// as a session's, with what its transport knows of it.
    pub(crate) fn detached_notification(&self, notification: Notification, arrival: &Arrival) {
        let Some(notification) = self.server.middleware.notification(notification, None) else {
            return;
        };
        match notification.method.as_str() {
            method::NOTIFICATION_ROOTS_LIST_CHANGED => {
                if let Some(handler) = &self.server.on_roots_changed {
                    handler(None);
                }
            }
            method::NOTIFICATION_INITIALIZED
            | method::NOTIFICATION_PROGRESS
            | method::NOTIFICATION_CANCELLED => {}
            _ => custom_notification(&self.server, arrival, notification, None),
        }
    }
}

/// The transport an endpoint serves over (for telemetry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Network {
    /// In-process calls: no network.
    InProcess,
    /// HTTP.
    #[cfg(feature = "http")]
    Tcp,
    /// stdio framing.
    Pipe,
}

impl Dispatch for McpDispatch {
    fn request(&self, request: Request, scope: RequestScope) -> BoxFuture<'static, Reply> {
        let server = self.server.clone();
        let layered = !server.middleware.is_empty();
        #[cfg(feature = "otel")]
        if let Some(span) = self.telemetry_span(&request, &scope) {
            return if layered {
                Box::pin(span.run(handle_layered(server, request, scope)))
            } else {
                Box::pin(span.run(handle_request(server, request, scope)))
            };
        }
        if layered {
            Box::pin(handle_layered(server, request, scope))
        } else {
            Box::pin(handle_request(server, request, scope))
        }
    }

    fn notification(&self, notification: Notification, session: Option<&SessionHandle>) {
        let Some(notification) = self
            .server
            .middleware
            .notification(notification, session.map(SessionHandle::id))
        else {
            return;
        };
        match notification.method.as_str() {
            method::NOTIFICATION_INITIALIZED => {
                if let Some(session) = session
                    && let Some(state) = session.data::<SessionState>()
                {
                    state.mark_initialized();
                    // The handshake is complete: the session no longer expires unestablished.
                    session.establish();
                }
            }
            method::NOTIFICATION_ROOTS_LIST_CHANGED => {
                if let Some(handler) = &self.server.on_roots_changed {
                    handler(session.map(|s| s.id().clone()));
                }
            }
            method::NOTIFICATION_PROGRESS | method::NOTIFICATION_CANCELLED => {}
            _ => custom_notification(
                &self.server,
                &Arrival::of(Origin::Session),
                notification,
                session,
            ),
        }
    }

    fn is_cancellable(&self, method: &str) -> bool {
        method != method::INITIALIZE
    }
}

/// A request's arrival as its transport carried it; one handed to the runtime without (a test,
/// a request a session adopted) is of the session it came over, or without one under the
/// newest revision with a session.
fn arrival_of(scope: &RequestScope) -> std::borrow::Cow<'_, Arrival> {
    match scope.carried::<Arrival>() {
        Some(arrival) => std::borrow::Cow::Borrowed(arrival),
        None => std::borrow::Cow::Owned(Arrival::of(if scope.session().is_some() {
            Origin::Session
        } else {
            Origin::Sessionless {
                version: ProtocolVersion::LATEST_WITH_HANDSHAKE,
            }
        })),
    }
}

#[cfg(feature = "otel")]
impl McpDispatch {
    /// The span of `request`, when telemetry is installed: its protocol version is its
    /// origin's (a 2026 envelope's, a session's, the one an `initialize` asks for, the one a
    /// sessionless request is served under).
    fn telemetry_span(
        &self,
        request: &Request,
        scope: &RequestScope,
    ) -> Option<crate::telemetry::ServerSpan> {
        let arrival = arrival_of(scope);
        let version = match &arrival.origin {
            Origin::V2026(envelope) => Some(envelope.version),
            Origin::Sessionless { version } => Some(*version),
            Origin::Session => scope
                .session()
                .and_then(SessionHandle::data::<SessionState>)
                .map(|state| state.version)
                .or_else(|| {
                    (request.method == method::INITIALIZE)
                        .then(|| request.params.as_ref()?.get("protocolVersion")?.as_str())
                        .flatten()
                        .map(|v| self.server.effective_version(v))
                }),
        };
        let settled = (request.method == method::INITIALIZE).then(|| {
            let scope = scope.clone();
            Box::new(move |network| {
                let state = scope.session()?.data::<SessionState>()?;
                state.telemetry.set_network(network);
                Some(state.version)
            }) as crate::telemetry::Settled
        });
        crate::telemetry::ServerSpan::start(
            request,
            scope.session().map(SessionHandle::id),
            self.network,
            arrival.transport.as_ref().and_then(|t| t.trace.as_ref()),
            version,
            settled,
        )
    }
}

/// Answers one request: checks the session's state, builds the context, routes and reports
/// internal errors.
///
/// The checks and the context are done before the future is made, so that it keeps across its
/// awaits only what routing needs: it is boxed once per request, and a small box stays in the
/// allocator's fast path.
fn handle_request(
    server: Arc<ServerInner>,
    request: Request,
    scope: RequestScope,
) -> impl Future<Output = Reply> + Send + 'static {
    match Handling::prepare(server, request, &scope) {
        Ok(handling) => Either::Left(handling.run()),
        Err(error) => Either::Right(std::future::ready(Err(error))),
    }
}

/// [`handle_request`] inside the server's middleware: their `before` hooks, the request (unless
/// one answered it), their `after` hooks.
async fn handle_layered(
    server: Arc<ServerInner>,
    mut request: Request,
    scope: RequestScope,
) -> Reply {
    let session_id = scope.session().map(SessionHandle::id);
    let (answer, passage) = server.middleware.before(&mut request, session_id);
    let (reply, client_info) = match answer {
        Some(reply) => (reply, None),
        None => match Handling::prepare(server.clone(), request, &scope) {
            Ok(handling) => {
                let client_info = passage
                    .as_ref()
                    .and_then(|_| handling.cx.client_info().cloned());
                (handling.run().await, client_info)
            }
            Err(error) => (Err(error), None),
        },
    };
    match passage {
        Some(passage) => server
            .middleware
            .after(passage, client_info.as_ref(), reply),
        None => reply,
    }
}

/// A request past its checks, with its context: what [`handle_request`]'s future holds.
struct Handling {
    server: Arc<ServerInner>,
    request: Request,
    cx: RequestContext,
    /// A request of revision 2026-07-28, with its envelope.
    v2026: bool,
    /// A session's `tools/call`, `prompts/get` or `resources/read`: routed with the shim
    /// that turns `input_required` rounds into server-to-client requests.
    shim: bool,
}

impl Handling {
    fn prepare(
        server: Arc<ServerInner>,
        mut request: Request,
        scope: &RequestScope,
    ) -> Result<Self, ErrorObject> {
        let arrival = arrival_of(scope);
        let transport = arrival.transport.as_ref();
        let mrtr_method = v2026::MRTR_METHODS.contains(&request.method.as_str());
        let (cx, v2026, shim) = match &arrival.origin {
            Origin::V2026(envelope) => {
                // 2026-07-28 forbids `notifications/cancelled` from the server outside listen
                // streams: a request cut by a drain is answered with an error instead.
                scope.answer_aborts_with(code::REQUEST_CANCELLED);
                // Its `_meta` (its whole envelope) moves into the context rather than being
                // copied: handlers read it with `RequestContext::meta`. Kept as text by the
                // transport, it is parsed only if a handler reads it.
                let meta = match request.meta.take() {
                    Some(text) => Some(MetaCell::text(text)),
                    None => match request
                        .params
                        .as_mut()
                        .and_then(Value::as_object_mut)
                        .and_then(|p| p.shift_remove("_meta"))
                    {
                        Some(Value::Object(meta)) => Some(MetaCell::Parsed(meta)),
                        _ => None,
                    },
                };
                // Round input comes from two places only: a 2026 request's sealed state,
                // opened (and refused) here before any handler runs, and the answers the
                // session shim collects. Whatever else a request says of its rounds
                // (`requestState`, `inputResponses` sent to a session or without an envelope)
                // is never handed to a handler: it could forge the state a handler asked to get
                // back.
                let round = if mrtr_method {
                    let caller = transport
                        .and_then(|transport| transport.identity.as_deref())
                        .map(Identity::owner_key);
                    // A tool call's arguments object moves out once: the round's binding and
                    // the call share it.
                    let moved = (request.method == method::TOOLS_CALL)
                        .then(|| tools::take_object_arguments(&mut request))
                        .flatten();
                    let params = request.params.as_ref();
                    match Mrtr::open(&server, &request.method, params, moved, caller) {
                        Ok(round) => Some(round),
                        Err(error) => return Err(error.to_error_object()),
                    }
                } else {
                    None
                };
                let cx = support::context_2026(
                    &server,
                    scope,
                    &request.method,
                    meta,
                    envelope,
                    transport,
                    round,
                );
                (cx, true, false)
            }
            Origin::Session => {
                let state = scope
                    .session()
                    .and_then(SessionHandle::data::<SessionState>);
                if state.is_none()
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
                let cx = support::context_2025(
                    &server,
                    scope,
                    &request,
                    state,
                    ProtocolVersion::LATEST_WITH_HANDSHAKE,
                    transport,
                );
                (cx, false, mrtr_method && scope.session().is_some())
            }
            Origin::Sessionless { version } => {
                let cx = support::context_2025(&server, scope, &request, None, *version, transport);
                (cx, false, false)
            }
        };
        Ok(Self {
            server,
            request,
            cx,
            v2026,
            shim,
        })
    }

    // Reads its fields in place: moving them out would hold them twice across the awaits.
    async fn run(mut self) -> Reply {
        let server = &self.server;
        let cx = &self.cx;
        let request = &mut self.request;
        let outcome = if self.v2026 {
            // (Not a `match`: its scrutinee would be held across the await.)
            if let Err(error) = v2026::check_offered(server, &request.method) {
                Err(error)
            } else if let Some(mrtr) = cx.mrtr().filter(|mrtr| mrtr.has_state())
                && let Err(error) = Box::pin(mrtr.claim_in_cluster(server)).await
            {
                Err(error)
            } else {
                let answer = route(server, cx, request).await;
                v2026::answer(server, cx, &request.method, answer)
                    .map(|reply| v2026::finish(server, &request.method, reply))
            }
        } else if self.shim {
            // Boxed apart: it holds a copy of the request and the routing, and both boxes stay
            // small.
            Box::pin(route_with_shim(server, cx, request)).await
        } else {
            route(server, cx, request)
                .await
                .and_then(Answer::into_result)
        };
        let Self {
            server,
            request,
            cx,
            v2026,
            ..
        } = self;
        match outcome {
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
                let mut object = error.to_error_object();
                if v2026 && error.kind() == ErrorKind::ResourceNotFound {
                    // 2026-07-28 reports a missing resource as invalid params (with `data.uri`).
                    object.code = actix_mcp_actors::ErrorCode::INVALID_PARAMS;
                }
                Err(object)
            }
        }
    }
}

/// Routes a session's `tools/call`, `prompts/get` or `resources/read`, driving the
/// `input_required` rounds its handler answers as real server-to-client requests (the shim
/// for 2025-11-25 clients), up to the server's round limit.
async fn route_with_shim(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    original: &mut Request,
) -> Result<Reply, McpError> {
    // A tool call's name and arguments are taken once and shared by its rounds; any other
    // method's routing takes what it needs out of a copy of the original, each round.
    let tool = if original.method == method::TOOLS_CALL {
        Some(ToolCall::take(original, cx)?)
    } else {
        None
    };
    let original = &*original;
    match shim_round(server, cx, original, tool.as_ref()).await? {
        Answer::Done(reply) => Ok(reply),
        // Rounds are rare: their future is boxed, and this one stays small.
        Answer::InputRequired(first) => {
            Box::pin(shim_rounds(server, cx, original, tool.as_ref(), first)).await
        }
    }
}

/// One round of [`route_with_shim`]: the tool call, or the original request routed again.
async fn shim_round(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    original: &Request,
    tool: Option<&ToolCall>,
) -> Result<Answer, McpError> {
    match tool {
        Some(call) => call_tool(server, cx, call).await,
        None => route(server, cx, &mut original.clone()).await,
    }
}

/// The rounds of [`route_with_shim`] after the first answered `input_required`.
async fn shim_rounds(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    original: &Request,
    tool: Option<&ToolCall>,
    first: Box<InputRequiredResult>,
) -> Result<Reply, McpError> {
    let mut result = first;
    let mut rounds = 0;
    loop {
        if rounds >= server.mrtr.max_rounds {
            return Err(McpError::internal(format!(
                "the handler still needed input after {rounds} rounds"
            )));
        }
        rounds += 1;
        let input = mrtr::shim::ask(cx, *result).await?;
        let answer = shim_round(server, &cx.with_input(Some(input)), original, tool).await?;
        match answer {
            Answer::Done(reply) => return Ok(reply),
            Answer::InputRequired(next) => result = next,
        }
    }
}

/// The dispatch table: one function per method, in the file of its spec page. What a
/// handler answered comes back as an [`Answer`]: `tools/call`, `prompts/get` and
/// `resources/read` tell an `input_required` round themselves; any other method's handler
/// answering one is told here, and refused by the caller.
// Only `tools/call` is awaited in place: the other arms are boxed so the request future (one
// allocation per request) stays small.
async fn route(
    server: &Arc<ServerInner>,
    cx: &RequestContext,
    request: &mut Request,
) -> Result<Answer, McpError> {
    let reply = match request.method.as_str() {
        method::TOOLS_CALL => {
            let call = ToolCall::take(request, cx)?;
            return call_tool(server, cx, &call).await;
        }
        method::PROMPTS_GET => return Box::pin(get_prompt(server, cx, request)).await,
        method::RESOURCES_READ => {
            return Box::pin(read_resource(server, cx, request)).await;
        }
        method::INITIALIZE => initialize(server, cx, request),
        method::PING => ping(),
        method::TOOLS_LIST => tools_list(server, cx, request),
        method::PROMPTS_LIST => prompts_list(server, cx, request),
        method::RESOURCES_LIST => Box::pin(resources_list(server, cx, request)).await,
        method::RESOURCES_TEMPLATES_LIST => templates_list(server, cx, request),
        method::RESOURCES_SUBSCRIBE => Box::pin(subscription(server, cx, request, true)).await,
        method::RESOURCES_UNSUBSCRIBE => Box::pin(subscription(server, cx, request, false)).await,
        method::COMPLETION_COMPLETE => Box::pin(complete(server, cx, request)).await,
        method::LOGGING_SET_LEVEL => Box::pin(set_level(cx, request)).await,
        method::SERVER_DISCOVER if cx.is_v2026() => v2026::discover(server),
        method::SUBSCRIPTIONS_LISTEN if cx.is_v2026() => {
            Box::pin(listen::listen(server, cx, request)).await
        }
        method::TASKS_GET if cx.is_v2026() => Box::pin(tasks::get_task(server, cx, request)).await,
        method::TASKS_UPDATE if cx.is_v2026() => {
            Box::pin(tasks::update_task(server, cx, request)).await
        }
        method::TASKS_CANCEL if cx.is_v2026() => {
            Box::pin(tasks::cancel_task(server, cx, request)).await
        }
        _ => Box::pin(custom(server, cx, request)).await,
    };
    reply.map(Answer::Done).or_else(Answer::from_error)
}

/// Handles one message in process, outside any session: a 2026-07-28 request is served with
/// its envelope, any other as a sessionless request of the newest revision with sessions. It
/// runs under the server's in-process registry, which sees it as a transport's sees its own.
pub(crate) async fn handle_in_process(server: &Arc<ServerInner>, bytes: &[u8]) -> Option<String> {
    let (registry, dispatch) = server.in_process();
    match actix_mcp_actors::dev::parse_message(bytes) {
        Err(rejection) => Some(rejection.to_frame().json.to_string()),
        Ok(Incoming::Notification(notification)) => {
            let arrival = Arrival::of(Origin::Sessionless {
                version: ProtocolVersion::LATEST_WITH_HANDSHAKE,
            });
            dispatch.detached_notification(notification, &arrival);
            None
        }
        Ok(Incoming::Response(_)) => None,
        Ok(Incoming::Request(request)) => {
            let origin = match Origin::of(&request, false, ProtocolVersion::LATEST_WITH_HANDSHAKE) {
                Ok(origin) => origin,
                Err(error) => {
                    return Some(Frame::error(Some(&request.id), &error).json.to_string());
                }
            };
            let (outlet, rx) = ResponseOutlet::channel();
            let dispatch: Arc<dyn Dispatch> = dispatch;
            let _guard =
                registry.start_detached(request, &dispatch, outlet, Arrival::of(origin).carry());
            rx.await.ok().map(|frame: Frame| frame.json.to_string())
        }
    }
}
