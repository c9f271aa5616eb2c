//! Middleware: code that runs around every incoming request and notification, in an order
//! fixed when the server is built.
//!
//! A [`Middleware`] has up to three parts, each optional:
//! - [`before`](Middleware::before) sees a request before any check or handler, may edit its
//!   params and `_meta`, and may answer it itself ([`Flow::Respond`]);
//! - [`after`](Middleware::after) sees the request as it was routed and its outcome, and may
//!   replace the result or the error;
//! - [`on_notification`](Middleware::on_notification) sees an incoming notification, may edit
//!   it, and may drop it.
//!
//! ```
//! use actix_mcp::{Flow, Middleware, Server};
//!
//! let audit = Middleware::new("audit")
//!     .before(|request| {
//!         request.meta_mut().insert("com.example/seen".into(), true.into());
//!         Flow::Continue
//!     })
//!     .after(|request, outcome| {
//!         if let Some(error) = outcome.error() {
//!             eprintln!("{} failed: {}", request.method(), error.message);
//!         }
//!     });
//! let server = Server::builder("demo", "1.0").middleware(audit).build()?;
//! assert_eq!(server.middleware(), ["audit"]);
//! # Ok::<(), actix_mcp::BuildError>(())
//! ```
//!
//! Middleware run in the order they were added to the
//! [`ServerBuilder`](crate::ServerBuilder) (those of an [`Extension`](crate::Extension) at the
//! place the extension was added): `before` hooks first to last, `after` hooks last to first,
//! like layers around the handler. When a `before` hook answers, the hooks after it do not run
//! and only the `after` hooks of the middleware before it (and its own) see the answer.
//! [`Server::middleware`](crate::Server::middleware) lists the order.
//!
//! A server without middleware pays nothing for this module; with one, a request is copied once
//! for the `after` hooks, only when one of them exists.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use serde_json::value::RawValue;

use actix_mcp_actors::dev::{Notification, Reply, Request};
use actix_mcp_actors::{ErrorObject, SessionId};

use crate::error::McpError;
use crate::protocol::{Implementation, MessageView};

type Before = Arc<dyn Fn(&mut Inbound) -> Flow + Send + Sync>;
type After = Arc<dyn Fn(&Inbound, &mut Outcome) + Send + Sync>;
type OnNotification = Arc<dyn Fn(&mut InboundNotification) -> bool + Send + Sync>;

/// Code run around every incoming request and notification: `before`, `after` and
/// `on_notification` hooks, in the order added with
/// [`ServerBuilder::middleware`](crate::ServerBuilder::middleware).
#[derive(Clone)]
#[must_use]
pub struct Middleware {
    name: String,
    before: Option<Before>,
    after: Option<After>,
    notification: Option<OnNotification>,
}

impl fmt::Debug for Middleware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Middleware")
            .field("name", &self.name)
            .field("before", &self.before.is_some())
            .field("after", &self.after.is_some())
            .field("notification", &self.notification.is_some())
            .finish()
    }
}

impl Middleware {
    /// A middleware without hooks yet, named for [`Server::middleware`](crate::Server::middleware)
    /// and logs.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            before: None,
            after: None,
            notification: None,
        }
    }

    /// Runs before a request is checked or routed.
    pub fn before(mut self, hook: impl Fn(&mut Inbound) -> Flow + Send + Sync + 'static) -> Self {
        self.before = Some(Arc::new(hook));
        self
    }

    /// Runs once a request has its outcome, before it is sent.
    pub fn after(mut self, hook: impl Fn(&Inbound, &mut Outcome) + Send + Sync + 'static) -> Self {
        self.after = Some(Arc::new(hook));
        self
    }

    /// Runs before an incoming notification is handled; it returns whether to handle it
    /// (`false` drops it, and the middleware after it do not see it).
    pub fn on_notification(
        mut self,
        hook: impl Fn(&mut InboundNotification) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.notification = Some(Arc::new(hook));
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What a `before` hook decides.
#[derive(Debug)]
pub enum Flow {
    /// Go on: the next middleware, then the handler.
    Continue,
    /// Answer the request with this instead of routing it.
    Respond(Result<Value, McpError>),
}

/// An incoming request, as middleware see it: its method and params ([`MessageView`], which
/// it dereferences to), and what the server knows of it.
#[derive(Debug, Clone)]
pub struct Inbound {
    message: MessageView,
    session_id: Option<SessionId>,
    client_info: Option<Implementation>,
    started: Instant,
}

impl std::ops::Deref for Inbound {
    type Target = MessageView;
    fn deref(&self) -> &MessageView {
        &self.message
    }
}

impl std::ops::DerefMut for Inbound {
    fn deref_mut(&mut self) -> &mut MessageView {
        &mut self.message
    }
}

impl Inbound {
    /// The session the request came over, if any.
    pub fn session_id(&self) -> Option<&SessionId> {
        self.session_id.as_ref()
    }

    /// What the client said of itself (in `after` hooks: known once the request was checked).
    pub fn client_info(&self) -> Option<&Implementation> {
        self.client_info.as_ref()
    }

    /// The time since the request reached the middleware.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// An incoming notification, as middleware see it: its method and params ([`MessageView`],
/// which it dereferences to), and the session it came over.
#[derive(Debug)]
pub struct InboundNotification {
    message: MessageView,
    session_id: Option<SessionId>,
}

impl std::ops::Deref for InboundNotification {
    type Target = MessageView;
    fn deref(&self) -> &MessageView {
        &self.message
    }
}

impl std::ops::DerefMut for InboundNotification {
    fn deref_mut(&mut self) -> &mut MessageView {
        &mut self.message
    }
}

impl InboundNotification {
    /// The session it came over, if any.
    pub fn session_id(&self) -> Option<&SessionId> {
        self.session_id.as_ref()
    }
}

/// A request's outcome, as `after` hooks see it: a result (kept serialized until read) or a
/// JSON-RPC error.
#[derive(Debug)]
pub struct Outcome {
    reply: Reply,
}

impl Outcome {
    /// The error, when the request failed.
    pub fn error(&self) -> Option<&ErrorObject> {
        self.reply.as_ref().err()
    }

    /// The result as sent, when the request succeeded.
    pub fn raw_result(&self) -> Option<&RawValue> {
        self.reply.as_deref().ok()
    }

    /// The result, parsed (a copy), when the request succeeded.
    pub fn result(&self) -> Option<Value> {
        serde_json::from_str(self.raw_result()?.get()).ok()
    }

    /// Whether the result is a tool result with `isError: true`.
    pub fn is_tool_error(&self) -> bool {
        #[derive(serde::Deserialize)]
        struct Peek {
            #[serde(rename = "isError", default)]
            is_error: bool,
        }
        self.raw_result()
            .and_then(|raw| serde_json::from_str::<Peek>(raw.get()).ok())
            .is_some_and(|peek| peek.is_error)
    }

    /// Replaces the result.
    pub fn set_result(&mut self, result: &Value) {
        self.reply = serde_json::value::to_raw_value(result)
            .map_err(|err| ErrorObject::internal(format!("unserialisable result: {err}")));
    }

    /// Replaces the outcome with an error.
    pub fn set_error(&mut self, error: &McpError) {
        self.reply = Err(error.to_error_object());
    }
}

/// The middleware of a server, in order.
#[derive(Clone, Default)]
pub(crate) struct Chain {
    layers: Vec<Middleware>,
    /// Whether any layer has an `after` hook (the request is copied for them only then).
    after: bool,
    /// Whether any layer has a notification hook.
    notifications: bool,
}

impl Chain {
    pub(crate) fn push(&mut self, middleware: Middleware) {
        self.after |= middleware.after.is_some();
        self.notifications |= middleware.notification.is_some();
        self.layers.push(middleware);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.layers.iter().map(Middleware::name).collect()
    }

    /// Runs the `before` hooks on `request`: what the caller routes next, or the answer one of
    /// them gave, with what the `after` hooks need.
    pub(crate) fn before(
        &self,
        request: &mut Request,
        session_id: Option<&SessionId>,
    ) -> (Option<Reply>, Option<Passage>) {
        // Middleware see `_meta` in the params, wherever the transport's parse left it.
        request.inline_meta();
        let mut inbound = Inbound {
            message: MessageView::new(std::mem::take(&mut request.method), request.params.take()),
            session_id: session_id.cloned(),
            client_info: None,
            started: Instant::now(),
        };
        let mut reached = self.layers.len();
        let mut answer = None;
        for (at, layer) in self.layers.iter().enumerate() {
            if let Some(before) = &layer.before
                && let Flow::Respond(outcome) = before(&mut inbound)
            {
                reached = at + 1;
                answer = Some(match outcome {
                    Ok(value) => serde_json::value::to_raw_value(&value).map_err(|err| {
                        ErrorObject::internal(format!("unserialisable result: {err}"))
                    }),
                    Err(error) => Err(error.to_error_object()),
                });
                break;
            }
        }
        let passage = self.after.then(|| Passage {
            inbound: inbound.clone(),
            reached,
        });
        (request.method, request.params) = inbound.message.into_parts();
        (answer, passage)
    }

    /// Runs the `after` hooks of the layers a request passed, last to first.
    pub(crate) fn after(
        &self,
        passage: Passage,
        client_info: Option<&Implementation>,
        reply: Reply,
    ) -> Reply {
        let Passage {
            mut inbound,
            reached,
        } = passage;
        inbound.client_info = client_info.cloned();
        let mut outcome = Outcome { reply };
        for layer in self.layers[..reached].iter().rev() {
            if let Some(after) = &layer.after {
                after(&inbound, &mut outcome);
            }
        }
        outcome.reply
    }

    /// Runs the notification hooks: the notification to handle, or `None` when one dropped it.
    pub(crate) fn notification(
        &self,
        notification: Notification,
        session_id: Option<&SessionId>,
    ) -> Option<Notification> {
        if !self.notifications {
            return Some(notification);
        }
        let mut inbound = InboundNotification {
            message: MessageView::new(notification.method, notification.params),
            session_id: session_id.cloned(),
        };
        for layer in &self.layers {
            if let Some(hook) = &layer.notification
                && !hook(&mut inbound)
            {
                tracing::debug!(middleware = %layer.name, method = %inbound.method(), "a middleware dropped a notification");
                return None;
            }
        }
        let (method, params) = inbound.message.into_parts();
        Some(Notification { method, params })
    }
}

/// What the `after` hooks of a request need: the request as routed, and how far it went.
pub(crate) struct Passage {
    inbound: Inbound,
    reached: usize,
}
