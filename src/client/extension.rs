//! Extensions and middleware on the client: the same seam as the server's
//! ([`Extension`](crate::Extension), [`Middleware`](crate::Middleware)), seen from the other
//! side.
//!
//! A [`ClientExtension`] carries its identifier, the settings the client declares under
//! `capabilities.extensions` (in `initialize` and in every 2026-07-28 request's `_meta`),
//! handlers for the server-to-client requests it defines, and callbacks for its
//! notifications. A [`ClientMiddleware`] runs around every request the client sends (its
//! `before` hooks may edit the params and `_meta`, or answer without sending; its `after` hooks
//! see and may replace the outcome) and before every notification it receives (and may drop
//! it), in the order added to the [`ClientBuilder`](crate::client::ClientBuilder): `before`
//! first to last, `after` last to first.
//!
//! [`ClientBuilder::connect`](crate::client::ClientBuilder::connect) refuses an identifier that
//! is not `vendor-prefix/name`, two extensions with one identifier, and a request method that
//! is a protocol method or handled twice. [`Client::server_extension`](crate::client::Client::server_extension)
//! reads what the server declared.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::error::ClientError;
use super::handlers::{HandlerResult, ServerRequest};

pub(crate) type RequestHandler =
    Arc<dyn Fn(Value, ServerRequest) -> BoxFuture<'static, HandlerResult<Value>> + Send + Sync>;
pub(crate) type NotificationCallback = Arc<dyn Fn(Option<Value>) + Send + Sync>;
type Before = Arc<dyn Fn(&mut Outgoing) -> Flow + Send + Sync>;
type After = Arc<dyn Fn(&Outgoing, &mut Result<Value, ClientError>) + Send + Sync>;
type OnNotification = Arc<dyn Fn(&str, &mut Option<Value>) -> bool + Send + Sync>;

/// An extension on the client: see the [module](self).
#[must_use]
pub struct ClientExtension {
    pub(crate) id: String,
    pub(crate) settings: Map<String, Value>,
    pub(crate) requests: HashMap<String, RequestHandler>,
    pub(crate) notifications: HashMap<String, NotificationCallback>,
    pub(crate) middleware: Vec<ClientMiddleware>,
    pub(crate) error: Option<String>,
}

impl fmt::Debug for ClientExtension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientExtension")
            .field("id", &self.id)
            .field("settings", &self.settings)
            .field("requests", &self.requests.keys().collect::<Vec<_>>())
            .field(
                "notifications",
                &self.notifications.keys().collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl ClientExtension {
    /// An extension with its identifier (`vendor-prefix/name`), declared with empty settings.
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        let error = crate::protocol::check_extension_id(&id)
            .err()
            .map(|reason| format!("invalid extension identifier `{id}`: {reason}"));
        Self {
            id,
            settings: Map::new(),
            requests: HashMap::new(),
            notifications: HashMap::new(),
            middleware: Vec::new(),
            error,
        }
    }

    /// The MCP Apps extension (`io.modelcontextprotocol/ui`), declaring that this client
    /// renders `text/html;profile=mcp-app` views (see [`crate::protocol::apps`]).
    pub fn apps() -> Self {
        Self::new(crate::protocol::apps::UI_EXTENSION).setting(
            "mimeTypes",
            serde_json::json!([crate::protocol::apps::APP_MIME_TYPE]),
        )
    }

    /// The Tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28): the server may
    /// answer a `tools/call` with a task, which the client follows (see
    /// [`tasks`](crate::client::tasks)).
    pub fn tasks() -> Self {
        Self::new(crate::protocol::v2026::TASKS_EXTENSION)
    }

    /// Its identifier.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// One setting declared in `capabilities.extensions[id]`.
    pub fn setting(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.settings.insert(key.into(), value.into());
        self
    }

    /// Answers a server-to-client request the extension defines (its params as JSON; a
    /// JSON-RPC error object to refuse).
    pub fn on_request<F, Fut>(mut self, method: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Value, ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<Value>> + Send + 'static,
    {
        let method = method.into();
        if crate::protocol::method::is_protocol_method(&method)
            || self.requests.contains_key(&method)
        {
            self.error.get_or_insert_with(|| {
                format!("`{method}` is a protocol method or already handled")
            });
        } else {
            self.requests
                .insert(method, super::handlers::handler(handler));
        }
        self
    }

    /// Called with the params of a notification the extension defines.
    pub fn on_notification(
        mut self,
        method: impl Into<String>,
        callback: impl Fn(Option<Value>) + Send + Sync + 'static,
    ) -> Self {
        self.notifications.insert(method.into(), Arc::new(callback));
        self
    }

    /// A middleware the extension brings (at the extension's place in the client's order).
    pub fn middleware(mut self, middleware: ClientMiddleware) -> Self {
        self.middleware.push(middleware);
        self
    }
}

/// What a client middleware's `before` hook decides.
#[derive(Debug)]
pub enum Flow {
    /// Go on: the next middleware, then the server.
    Continue,
    /// Answer the request with this, without sending it.
    Respond(Result<Value, ClientError>),
}

/// A request the client is about to send, as middleware see it.
pub type Outgoing = crate::protocol::MessageView;

/// Code run around every request the client sends and before every notification it
/// receives. See the [module](self).
#[derive(Clone)]
#[must_use]
pub struct ClientMiddleware {
    name: String,
    before: Option<Before>,
    after: Option<After>,
    notification: Option<OnNotification>,
}

impl fmt::Debug for ClientMiddleware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientMiddleware")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ClientMiddleware {
    /// A middleware without hooks yet.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            before: None,
            after: None,
            notification: None,
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs before a request is sent.
    pub fn before(mut self, hook: impl Fn(&mut Outgoing) -> Flow + Send + Sync + 'static) -> Self {
        self.before = Some(Arc::new(hook));
        self
    }

    /// Runs once a request has its outcome, before the caller sees it.
    pub fn after(
        mut self,
        hook: impl Fn(&Outgoing, &mut Result<Value, ClientError>) + Send + Sync + 'static,
    ) -> Self {
        self.after = Some(Arc::new(hook));
        self
    }

    /// Runs before a received notification is handled, with its method and params (to edit);
    /// it returns whether to handle it.
    pub fn on_notification(
        mut self,
        hook: impl Fn(&str, &mut Option<Value>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.notification = Some(Arc::new(hook));
        self
    }
}

/// A client's middleware, in order.
#[derive(Clone, Default)]
pub(crate) struct Chain {
    layers: Vec<ClientMiddleware>,
}

impl Chain {
    pub(crate) fn push(&mut self, middleware: ClientMiddleware) {
        self.layers.push(middleware);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.layers.iter().map(ClientMiddleware::name).collect()
    }

    /// Runs `send` inside the middleware: `before` hooks, the request (unless one answered),
    /// `after` hooks of the layers it passed, last to first.
    pub(crate) async fn around<F, Fut>(
        &self,
        method: &str,
        params: Option<Value>,
        send: F,
    ) -> Result<Value, ClientError>
    where
        F: FnOnce(String, Option<Value>) -> Fut,
        Fut: Future<Output = Result<Value, ClientError>>,
    {
        let mut outgoing = Outgoing::new(method, params);
        let mut reached = self.layers.len();
        let mut answer = None;
        for (at, layer) in self.layers.iter().enumerate() {
            if let Some(before) = &layer.before
                && let Flow::Respond(outcome) = before(&mut outgoing)
            {
                reached = at + 1;
                answer = Some(outcome);
                break;
            }
        }
        let mut outcome = match answer {
            Some(outcome) => outcome,
            None => send(outgoing.method().to_owned(), outgoing.params().cloned()).await,
        };
        for layer in self.layers[..reached].iter().rev() {
            if let Some(after) = &layer.after {
                after(&outgoing, &mut outcome);
            }
        }
        outcome
    }

    /// Runs the notification hooks: whether to handle the notification.
    pub(crate) fn notification(&self, method: &str, params: &mut Option<Value>) -> bool {
        self.layers.iter().all(|layer| {
            layer
                .notification
                .as_ref()
                .is_none_or(|hook| hook(method, params))
        })
    }
}
