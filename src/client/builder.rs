//! [`ClientBuilder`]: who the client is, what it can do for the server, and how it connects.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use actix::Actor;
use serde_json::Value;

use super::error::ClientError;
use super::handlers::{self, HandlerResult, Handlers, ServerRequest};
use super::session::{ClientSession, EnableRenewal};
use super::transport::{Connect, Inbox};
use super::{CallOptions, Client, ClientInner};
use crate::protocol::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationCompleteNotificationParams, Icon, Implementation, InitializeRequestParams,
    InitializeResult, ListRootsResult, LoggingMessageNotificationParams, ProtocolVersion,
    ResourceUpdatedNotificationParams, Root, method,
};

/// Builds a [`Client`]. Required values come first ([`Client::builder`]); everything else has
/// a default, documented on its setter (defaults are not part of semver).
#[must_use]
pub struct ClientBuilder {
    info: Implementation,
    version: ProtocolVersion,
    timeout: Option<Duration>,
    renew: bool,
    handlers: Handlers,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("name", &self.info.name)
            .field("protocol_version", &self.version)
            .field("renew_expired_sessions", &self.renew)
            .field("handlers", &self.handlers)
            .finish()
    }
}

impl ClientBuilder {
    pub(crate) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            info: Implementation::new(name, version),
            version: ProtocolVersion::LATEST_STATEFUL,
            timeout: Some(Duration::from_secs(60)),
            renew: false,
            handlers: Handlers::default(),
        }
    }

    /// Whether to initialize a new session when the server forgets this one (HTTP `404` on a
    /// session request; default off). With it, a request the server refused for that reason
    /// waits while a new session is initialized with the same `initialize` params, then is
    /// sent again, once; a request whose answer was lost with the old session still fails with
    /// [`ClientError::SessionExpired`], since it may have run. The old session's state at the
    /// server (resource subscriptions, the logging level) is not restored, and the new session
    /// must settle on the same protocol version. Without it, every call after the expiry fails
    /// with [`ClientError::SessionExpired`] and a new [`Client`] must be connected.
    pub fn renew_expired_sessions(mut self, on: bool) -> Self {
        self.renew = on;
        self
    }

    /// A human-readable name for the client.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Icons for the client.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.info.icons = Some(icons);
        self
    }

    /// The client's website.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.info.website_url = Some(url.into());
        self
    }

    /// The protocol version to ask for (default: the latest this SDK speaks, 2025-11-25).
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = version;
        self
    }

    /// How long a call waits for its answer unless it says otherwise (default 60 s; `None`
    /// waits forever). A call that times out is cancelled at the server.
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Answers `sampling/createMessage` (declares the `sampling` capability).
    pub fn sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageRequestParams, ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CreateMessageResult>> + Send + 'static,
    {
        self.handlers.sampling = Some(handlers::handler(handler));
        self
    }

    /// Declares `sampling.tools`: the sampling handler accepts `tools` and `toolChoice`.
    pub fn sampling_tools(mut self, on: bool) -> Self {
        self.handlers.sampling_tools = on;
        self
    }

    /// Declares `sampling.context`: the sampling handler honours `includeContext`.
    pub fn sampling_context(mut self, on: bool) -> Self {
        self.handlers.sampling_context = on;
        self
    }

    /// Answers `elicitation/create` in form mode (declares `elicitation.form`); add URL mode
    /// with [`elicitation_url`](Self::elicitation_url). [`fill_elicitation_defaults`]
    /// (super::fill_elicitation_defaults) fills the fields a user left out.
    pub fn elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequestParams, ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ElicitResult>> + Send + 'static,
    {
        self.handlers.elicitation = Some(handlers::handler(handler));
        self.handlers.elicitation_form = true;
        self
    }

    /// Whether the elicitation handler also takes URL mode (declares `elicitation.url`;
    /// default off).
    pub fn elicitation_url(mut self, on: bool) -> Self {
        self.handlers.elicitation_url = on;
        self
    }

    /// Whether the elicitation handler takes form mode (default on once a handler is set).
    pub fn elicitation_form(mut self, on: bool) -> Self {
        self.handlers.elicitation_form = on;
        self
    }

    /// Answers `roots/list` with `handler` (declares `roots`, with `listChanged` when
    /// `list_changed`: the client will call [`Client::notify_roots_list_changed`]).
    pub fn roots<F, Fut>(mut self, list_changed: bool, handler: F) -> Self
    where
        F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ListRootsResult>> + Send + 'static,
    {
        let wrapped = handlers::handler(move |(), request| handler(request));
        self.handlers.roots = Some(Arc::new(move |request| wrapped((), request)));
        self.handlers.roots_list_changed = list_changed;
        self
    }

    /// Answers `roots/list` with a fixed list (declares `roots`).
    pub fn roots_list(mut self, roots: Vec<Root>) -> Self {
        self.handlers.roots = Some(handlers::fixed_roots(roots));
        self
    }

    /// Called with each `notifications/message` (server logs).
    pub fn on_log_message(
        mut self,
        callback: impl Fn(LoggingMessageNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.on_log = Some(Arc::new(callback));
        self
    }

    /// Called on `notifications/tools/list_changed`.
    pub fn on_tools_list_changed(mut self, callback: impl Fn() + Send + Sync + 'static) -> Self {
        self.handlers.on_tools_changed = Some(Arc::new(move |()| callback()));
        self
    }

    /// Called on `notifications/prompts/list_changed`.
    pub fn on_prompts_list_changed(mut self, callback: impl Fn() + Send + Sync + 'static) -> Self {
        self.handlers.on_prompts_changed = Some(Arc::new(move |()| callback()));
        self
    }

    /// Called on `notifications/resources/list_changed`.
    pub fn on_resources_list_changed(
        mut self,
        callback: impl Fn() + Send + Sync + 'static,
    ) -> Self {
        self.handlers.on_resources_changed = Some(Arc::new(move |()| callback()));
        self
    }

    /// Called on `notifications/resources/updated` (for subscribed resources).
    pub fn on_resource_updated(
        mut self,
        callback: impl Fn(ResourceUpdatedNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.on_resource_updated = Some(Arc::new(callback));
        self
    }

    /// Called on `notifications/elicitation/complete` (a URL-mode elicitation finished).
    pub fn on_elicitation_complete(
        mut self,
        callback: impl Fn(ElicitationCompleteNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.on_elicitation_complete = Some(Arc::new(callback));
        self
    }

    /// Called with any other notification (method, params).
    pub fn on_notification(
        mut self,
        callback: impl Fn(String, Option<Value>) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.on_notification = Some(Arc::new(move |(method, params)| {
            callback(method, params);
        }));
        self
    }

    /// Connects: opens the transport, sends `initialize` (with the capabilities the handlers
    /// call for) and `notifications/initialized`. Must run inside an actix system.
    ///
    /// # Errors
    /// When the transport cannot connect, the server refuses `initialize`, or it answers with a
    /// protocol version this SDK does not speak ([`ClientError::Protocol`]; the connection is
    /// closed).
    pub async fn connect(self, connector: impl Connect) -> Result<Client, ClientError> {
        let (inbox, rx) = Inbox::channel();
        let transport = connector.connect(inbox).await?;
        let handlers = Arc::new(self.handlers);
        let capabilities = handlers.capabilities();
        let session = ClientSession::new(transport.clone(), handlers, rx).start();
        let mut client = Client {
            inner: Arc::new(ClientInner {
                session,
                init: InitializeResult {
                    protocol_version: self.version.as_str().to_owned(),
                    capabilities: Default::default(),
                    server_info: Implementation::new("", ""),
                    instructions: None,
                    meta: None,
                },
                version: self.version,
                timeout: self.timeout,
            }),
        };
        let params = InitializeRequestParams {
            protocol_version: self.version.as_str().to_owned(),
            capabilities,
            client_info: self.info,
            meta: None,
        };
        let params = serde_json::to_value(&params)
            .map_err(|err| ClientError::Protocol(format!("unserialisable initialize: {err}")))?;
        let renewal_params = self.renew.then(|| params.clone());
        let init: InitializeResult = match client
            .request(method::INITIALIZE, Some(params), CallOptions::default())
            .await
        {
            Ok(init) => init,
            Err(error) => {
                client.close().await;
                return Err(error);
            }
        };
        let Ok(version) = init.protocol_version.parse::<ProtocolVersion>() else {
            client.close().await;
            return Err(ClientError::Protocol(format!(
                "the server chose protocol version {:?}, which this client does not speak",
                init.protocol_version
            )));
        };
        transport.set_protocol_version(version.as_str());
        // No clone of the client exists yet: it is completed in place.
        let Some(inner) = Arc::get_mut(&mut client.inner) else {
            return Err(ClientError::Protocol(
                "the client was shared during its handshake".into(),
            ));
        };
        inner.init = init;
        inner.version = version;
        if let Some(params) = renewal_params {
            inner.session.do_send(EnableRenewal {
                params,
                version: version.as_str().to_owned(),
                timeout: self.timeout,
            });
        }
        client
            .notify(method::NOTIFICATION_INITIALIZED, None)
            .await?;
        transport.initialized();
        Ok(client)
    }
}
