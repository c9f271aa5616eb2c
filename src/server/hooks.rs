//! Callbacks a server runs beside its handlers, and what they receive: the exception reporter
//! ([`ExceptionReport`], with the [`ErrorSite`] it happened at), the around-request hook
//! ([`RequestEvent`]), and the completion, subscription and roots callbacks the builder
//! registers.
//!
//! Registered on [`ServerBuilder`](crate::ServerBuilder); run by the router
//! (`server::route`) and by [`ServerInner::report`].

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use actix_mcp_actors::SessionId;

use crate::error::McpError;
use crate::protocol::{CompleteRequestParams, CompleteResult, Implementation};
use crate::server::{RequestContext, ServerInner};

/// Where a reported error happened.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ErrorSite {
    /// A tool call, with its arguments.
    Tool {
        /// The tool's name.
        name: String,
        /// The arguments it was called with.
        arguments: Value,
    },
    /// A `prompts/get`.
    Prompt {
        /// The prompt's name.
        name: String,
    },
    /// A `resources/read`.
    Resource {
        /// The uri read.
        uri: String,
    },
    /// Any other request.
    Request {
        /// The method.
        method: String,
    },
}

/// What the exception reporter receives.
#[derive(Debug, Clone)]
pub struct ExceptionReport {
    /// The error's message (for a panic, its payload).
    pub message: String,
    /// Whether the handler panicked (rather than returning an internal error).
    pub panicked: bool,
    /// Where it happened.
    pub site: ErrorSite,
    /// The session, if any.
    pub session_id: Option<SessionId>,
}

/// What the around-request hook receives, once per request, when it completes.
#[derive(Debug, Clone)]
pub struct RequestEvent {
    /// The method.
    pub method: String,
    /// For `tools/call`: the tool's name.
    pub tool_name: Option<String>,
    /// For `tools/call`: the arguments.
    pub tool_arguments: Option<Value>,
    /// For `prompts/get`: the prompt's name.
    pub prompt_name: Option<String>,
    /// For `resources/read` and subscriptions: the uri.
    pub resource_uri: Option<String>,
    /// The JSON-RPC error code, when the request failed (or `isError` for tool results).
    pub error: Option<String>,
    /// What the client said about itself.
    pub client_info: Option<Implementation>,
    /// How long the request took.
    pub duration: Duration,
}

/// The exception reporter ([`ServerBuilder::exception_reporter`](crate::ServerBuilder::exception_reporter)).
pub(crate) type Reporter = Arc<dyn Fn(&ExceptionReport) + Send + Sync>;
/// Answers `completion/complete` ([`ServerBuilder::completion`](crate::ServerBuilder::completion)).
pub(crate) type CompletionHandler = Arc<
    dyn Fn(
            CompleteRequestParams,
            RequestContext,
        ) -> BoxFuture<'static, Result<CompleteResult, McpError>>
        + Send
        + Sync,
>;
/// Runs on `resources/subscribe` or `resources/unsubscribe`, with the uri.
pub(crate) type UriHandler =
    Arc<dyn Fn(String, RequestContext) -> BoxFuture<'static, Result<(), McpError>> + Send + Sync>;
/// Runs on `notifications/roots/list_changed`, with the session it came from.
pub(crate) type RootsChangedHandler = Arc<dyn Fn(Option<SessionId>) + Send + Sync>;

/// The around-request hook ([`ServerBuilder::around_request`](crate::ServerBuilder::around_request))
/// as the middleware it is: its `after` hook tells `hook` of every request.
pub(crate) fn around_request(
    hook: impl Fn(&RequestEvent) + Send + Sync + 'static,
) -> crate::server::middleware::Middleware {
    crate::server::middleware::Middleware::new("around_request").after(move |request, outcome| {
        let param = |key: &str| request.param(key);
        let text = |key: &str| param(key).and_then(Value::as_str).map(str::to_owned);
        let method = request.method();
        let (tool_name, tool_arguments, prompt_name, resource_uri) = match method {
            crate::protocol::method::TOOLS_CALL => (
                text("name"),
                Some(
                    param("arguments")
                        .filter(|arguments| !arguments.is_null())
                        .cloned()
                        .unwrap_or_else(|| Value::Object(serde_json::Map::new())),
                ),
                None,
                None,
            ),
            crate::protocol::method::PROMPTS_GET => (None, None, text("name"), None),
            crate::protocol::method::RESOURCES_READ
            | crate::protocol::method::RESOURCES_SUBSCRIBE
            | crate::protocol::method::RESOURCES_UNSUBSCRIBE => (None, None, None, text("uri")),
            _ => (None, None, None, None),
        };
        let error = match outcome.error() {
            Some(error) => Some(error.code.to_string()),
            None if tool_name.is_some() && outcome.is_tool_error() => Some("isError".to_owned()),
            None => None,
        };
        hook(&RequestEvent {
            method: method.to_owned(),
            tool_name,
            tool_arguments,
            prompt_name,
            resource_uri,
            error,
            client_info: request.client_info().cloned(),
            duration: request.elapsed(),
        });
    })
}

impl ServerInner {
    /// Logs a handler failure and hands it to the exception reporter, if any.
    pub(crate) fn report(&self, report: ExceptionReport) {
        tracing::error!(message = %report.message, panicked = report.panicked, site = ?report.site, "handler failed");
        if let Some(reporter) = &self.reporter {
            reporter(&report);
        }
    }
}
