//! What a client does when the server asks or tells it something: handlers for the
//! server-to-client requests (sampling, elicitation, roots) and callbacks for notifications.
//!
//! The capabilities a client declares at `initialize` follow from the handlers it has: a
//! client without a sampling handler does not declare `sampling`, and the server is not
//! supposed to ask (if it does, it gets `-32601`).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use actix_mcp_actors::{ErrorObject, RequestId};

use super::extension::{Chain, ClientExtension, NotificationCallback, RequestHandler};

use crate::protocol::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, ElicitationCompleteNotificationParams, ListRootsResult,
    LoggingMessageNotificationParams, Meta, ResourceUpdatedNotificationParams, Root,
    RootsCapability, SamplingCapability,
};

/// What a server-to-client request handler learns about the request.
#[derive(Debug, Clone)]
pub struct ServerRequest {
    /// The request's id (the server's).
    pub id: RequestId,
    /// The request's `_meta`, if any.
    pub meta: Option<Meta>,
    /// Cancelled when the server sends `notifications/cancelled` for the request (the handler's
    /// future is then dropped and nothing is answered) or the client closes.
    pub cancellation: CancellationToken,
}

/// A handler's answer: the result, or the JSON-RPC error to answer with.
pub type HandlerResult<T> = Result<T, ErrorObject>;

pub(crate) type SamplingHandler = Arc<
    dyn Fn(
            CreateMessageRequestParams,
            ServerRequest,
        ) -> BoxFuture<'static, HandlerResult<CreateMessageResult>>
        + Send
        + Sync,
>;
pub(crate) type ElicitationHandler = Arc<
    dyn Fn(ElicitRequestParams, ServerRequest) -> BoxFuture<'static, HandlerResult<ElicitResult>>
        + Send
        + Sync,
>;
pub(crate) type RootsHandler =
    Arc<dyn Fn(ServerRequest) -> BoxFuture<'static, HandlerResult<ListRootsResult>> + Send + Sync>;
pub(crate) type Callback<T> = Arc<dyn Fn(T) + Send + Sync>;

/// The handlers and callbacks of one client (see [`ClientBuilder`](crate::client::ClientBuilder)).
#[derive(Default, Clone)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<SamplingHandler>,
    pub(crate) sampling_tools: bool,
    pub(crate) sampling_context: bool,
    pub(crate) elicitation: Option<ElicitationHandler>,
    pub(crate) elicitation_form: bool,
    pub(crate) elicitation_url: bool,
    pub(crate) roots: Option<RootsHandler>,
    pub(crate) roots_list_changed: bool,
    pub(crate) on_log: Option<Callback<LoggingMessageNotificationParams>>,
    pub(crate) on_tools_changed: Option<Callback<()>>,
    pub(crate) on_prompts_changed: Option<Callback<()>>,
    pub(crate) on_resources_changed: Option<Callback<()>>,
    pub(crate) on_resource_updated: Option<Callback<ResourceUpdatedNotificationParams>>,
    pub(crate) on_elicitation_complete: Option<Callback<ElicitationCompleteNotificationParams>>,
    pub(crate) on_notification: Option<Callback<(String, Option<Value>)>>,
    /// The extensions' entries in `capabilities.extensions`, in order.
    pub(crate) extensions: Vec<(String, Map<String, Value>)>,
    /// The extensions' server-to-client requests.
    pub(crate) requests: HashMap<String, RequestHandler>,
    /// The extensions' notifications.
    pub(crate) notifications: HashMap<String, NotificationCallback>,
    /// The middleware, in order.
    pub(crate) middleware: Chain,
    /// The first mistake in the extensions, reported by `connect`.
    pub(crate) config_error: Option<String>,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots.is_some())
            .finish_non_exhaustive()
    }
}

impl Handlers {
    /// The capabilities these handlers let the client declare.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let empty = || Some(Map::new());
        ClientCapabilities {
            sampling: self.sampling.as_ref().map(|_| SamplingCapability {
                tools: self.sampling_tools.then(Map::new),
                context: self.sampling_context.then(Map::new),
            }),
            elicitation: self.elicitation.as_ref().map(|_| ElicitationCapability {
                form: if self.elicitation_form { empty() } else { None },
                url: if self.elicitation_url { empty() } else { None },
            }),
            roots: self.roots.as_ref().map(|_| RootsCapability {
                list_changed: self.roots_list_changed.then_some(true),
            }),
            extra: if self.extensions.is_empty() {
                Map::new()
            } else {
                let entries = self
                    .extensions
                    .iter()
                    .map(|(id, settings)| (id.clone(), Value::Object(settings.clone())))
                    .collect();
                Map::from_iter([("extensions".to_owned(), Value::Object(entries))])
            },
            ..ClientCapabilities::default()
        }
    }

    /// Adds an extension's pieces.
    pub(crate) fn add_extension(&mut self, extension: ClientExtension) {
        if let Some(error) = extension.error {
            self.config_error.get_or_insert(error);
            return;
        }
        if self.extensions.iter().any(|(id, _)| *id == extension.id) {
            self.config_error
                .get_or_insert_with(|| format!("extension `{}` added twice", extension.id));
            return;
        }
        for (method, handler) in extension.requests {
            if self.requests.contains_key(&method) {
                self.config_error
                    .get_or_insert_with(|| format!("`{method}` is handled by two extensions"));
            }
            self.requests.insert(method, handler);
        }
        self.notifications.extend(extension.notifications);
        for middleware in extension.middleware {
            self.middleware.push(middleware);
        }
        self.extensions.push((extension.id, extension.settings));
    }
}

/// Wraps an async closure as a handler, turning a panic into a `-32603` answer.
pub(crate) fn handler<P, T, F, Fut>(
    f: F,
) -> Arc<dyn Fn(P, ServerRequest) -> BoxFuture<'static, HandlerResult<T>> + Send + Sync>
where
    P: Send + 'static,
    T: Send + 'static,
    F: Fn(P, ServerRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<T>> + Send + 'static,
{
    Arc::new(move |params, request| {
        let fut = f(params, request);
        Box::pin(async move {
            match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
                Ok(result) => result,
                Err(_) => Err(ErrorObject::internal("the client's handler failed")),
            }
        })
    })
}

/// A roots handler answering with a fixed list.
pub(crate) fn fixed_roots(roots: Vec<Root>) -> RootsHandler {
    let roots = Arc::new(roots);
    Arc::new(move |_| {
        let roots = roots.clone();
        Box::pin(async move {
            Ok(ListRootsResult {
                roots: (*roots).clone(),
                meta: None,
            })
        })
    })
}

/// Fills the fields of an accepted form elicitation that the user left out with the defaults
/// the server's schema declares (SEP-1034): what a client answering on the user's behalf, or
/// a form with pre-filled values, should send.
pub fn fill_elicitation_defaults(params: &ElicitRequestParams, result: &mut ElicitResult) {
    let ElicitRequestParams::Form(form) = params else {
        return;
    };
    if result.action != crate::protocol::ElicitAction::Accept {
        return;
    }
    let content = result.content.get_or_insert_with(Map::new);
    for (name, value) in form.requested_schema.defaults() {
        content.entry(name).or_insert(value);
    }
}
