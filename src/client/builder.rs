//! [`ClientBuilder`]: who the client is, what it can do for the server, and how it connects.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use actix::Actor;
use serde_json::Value;

use std::sync::Mutex;

use super::cache::ResultCache;
use super::error::ClientError;
use super::extension::{ClientExtension, ClientMiddleware};
use super::handlers::{self, HandlerResult, Handlers, ServerRequest};
use super::lifecycle::{self, Era, Lifecycle, Probe};
use super::mrtr::DEFAULT_MAX_INPUT_ROUNDS;
use super::runtime::ClientRuntime;
use super::session::{ClientSession, EnableRenewal, Envelope, SetEnvelope};
use super::transport::{Connect, Inbox, Transport};
use super::{CallOptions, Client, ClientInner};
use crate::protocol::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationCompleteNotificationParams, Icon, Implementation, InitializeRequestParams,
    InitializeResult, ListRootsResult, LoggingLevel, LoggingMessageNotificationParams,
    ProtocolVersion, ResourceUpdatedNotificationParams, Root, method,
};

/// How long the auto probe waits for `server/discover` before taking the server for a 2025
/// one.
const DEFAULT_DISCOVER_TIMEOUT: Duration = Duration::from_secs(10);

/// Builds a [`Client`]. Required values come first ([`Client::builder`]); everything else has
/// a default, documented on its setter (defaults are not part of semver).
#[must_use]
pub struct ClientBuilder {
    info: Implementation,
    /// The version `initialize` asks for (2025 era).
    version: ProtocolVersion,
    /// The version every request carries (2026 era).
    v2026_version: ProtocolVersion,
    lifecycle: Lifecycle,
    discover_timeout: Duration,
    log_level: Option<LoggingLevel>,
    auto_input: bool,
    max_input_rounds: usize,
    cache: bool,
    timeout: Option<Duration>,
    renew: bool,
    handlers: Handlers,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("name", &self.info.name)
            .field("protocol_version", &self.version)
            .field("v2026_version", &self.v2026_version)
            .field("lifecycle", &self.lifecycle)
            .field("log_level", &self.log_level)
            .field("auto_input", &self.auto_input)
            .field("max_input_rounds", &self.max_input_rounds)
            .field("cache", &self.cache)
            .field("renew_expired_sessions", &self.renew)
            .field("handlers", &self.handlers)
            .finish()
    }
}

impl ClientBuilder {
    pub(crate) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            info: Implementation::new(name, version),
            version: ProtocolVersion::LATEST_WITH_HANDSHAKE,
            v2026_version: ProtocolVersion::LATEST,
            lifecycle: Lifecycle::Auto,
            discover_timeout: DEFAULT_DISCOVER_TIMEOUT,
            log_level: None,
            auto_input: true,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            cache: true,
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

    /// The protocol version to speak. A version without the handshake (2026-07-28) is the one every
    /// request carries and pins [`Lifecycle::V2026`]; a stateful one (2025-11-25 and older)
    /// is the one `initialize` asks for and pins [`Lifecycle::V2025`]. Call
    /// [`lifecycle`](Self::lifecycle) afterwards to choose otherwise. Default: 2026-07-28 for
    /// the 2026 era and 2025-11-25 for `initialize`, with [`Lifecycle::Auto`].
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        if !version.has_handshake() {
            self.v2026_version = version;
            self.lifecycle = Lifecycle::V2026;
        } else {
            self.version = version;
            self.lifecycle = Lifecycle::V2025;
        }
        self
    }

    /// How the client starts (default [`Lifecycle::Auto`]: probe with `server/discover`,
    /// fall back to `initialize` for a 2025 server).
    pub fn lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = lifecycle;
        self
    }

    /// How long the [`Lifecycle::Auto`] probe waits for `server/discover` before it takes the
    /// server for a 2025 one (default 10 s). Time spent waiting for the user (an OAuth
    /// authorization in a browser) does not count.
    pub fn discover_timeout(mut self, timeout: Duration) -> Self {
        self.discover_timeout = timeout;
        self
    }

    /// The log level every 2026 request opts in to (`_meta` `logLevel`; default none: the
    /// server sends no log messages). In the 2025 era, see [`Client::set_logging_level`].
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Whether the client answers a 2026 `input_required` result itself, with the handlers,
    /// and retries (default on). Off, such a call fails with [`ClientError::InputRequired`]
    /// and the `*_step` calls drive the rounds by hand ([`mrtr`](super::mrtr)).
    pub fn auto_input(mut self, on: bool) -> Self {
        self.auto_input = on;
        self
    }

    /// How many rounds of input one call may take before it fails with
    /// [`ClientError::Protocol`] (default [`DEFAULT_MAX_INPUT_ROUNDS`], 10).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Whether 2026 list and read results are cached for their `ttlMs` (default on; see the
    /// cache rules in [`Client::request`] and the crate's client docs).
    pub fn cache(mut self, on: bool) -> Self {
        self.cache = on;
        self
    }

    /// How long a call waits for its answer unless it says otherwise (default 60 s; `None`
    /// waits forever). A call that times out is cancelled at the server. Time the transport
    /// spends waiting for the user (an OAuth authorization in a browser, bounded by
    /// [`OAuthBuilder::authorization_timeout`](crate::client::auth::OAuthBuilder::authorization_timeout))
    /// does not count.
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
    /// with [`elicitation_url`](Self::elicitation_url). [`fill_elicitation_defaults`](super::fill_elicitation_defaults)
    /// fills the fields a user left out.
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

    /// Adds an extension: its entry in the capabilities the client declares, its
    /// server-to-client requests and notifications, and its middleware (here, in the order of
    /// middleware). A mistake in it (see [`ClientExtension`]) fails
    /// [`connect`](Self::connect) with [`ClientError::InvalidConfig`].
    pub fn extension(mut self, extension: ClientExtension) -> Self {
        self.handlers.add_extension(extension);
        self
    }

    /// Adds a middleware after those already added (see [`ClientMiddleware`]).
    pub fn middleware(mut self, middleware: ClientMiddleware) -> Self {
        self.handlers.middleware.push(middleware);
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

    /// Connects: opens the transport, then starts as the [`lifecycle`](Self::lifecycle)
    /// says: in the 2026 era with `server/discover` (every request then carries the
    /// capabilities the handlers call for in `_meta`); in the 2025 era with `initialize` (with
    /// those capabilities) and `notifications/initialized`.
    ///
    /// Inside an actix system (`#[actix_web::main]`, `#[actix::main]`) the client's actors run
    /// on the current arbiter. Anywhere else (a plain `#[tokio::main]` application, any
    /// thread) they run on an actix system of the SDK's own: one thread, started with the
    /// first such client and stopped once the last one is dropped.
    ///
    /// # Errors
    /// When the transport cannot connect, the server refuses `initialize` (or, with
    /// [`Lifecycle::V2026`], `server/discover`), or it answers with a protocol version this
    /// SDK does not speak ([`ClientError::Protocol`]; the connection is closed).
    pub async fn connect(self, connector: impl Connect) -> Result<Client, ClientError> {
        if let Some(error) = &self.handlers.config_error {
            return Err(ClientError::InvalidConfig(error.clone()));
        }
        if actix_rt::System::try_current().is_some() {
            return self.connect_on(connector, None).await;
        }
        let runtime = ClientRuntime::acquire()?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let owner = runtime.clone();
        runtime.arbiter().spawn_fn(move || {
            actix_rt::spawn(async move {
                // The caller may have given up waiting; the client then closes on drop.
                let _ = tx.send(self.connect_on(connector, Some(owner)).await);
            });
        });
        rx.await.unwrap_or_else(|_| {
            Err(ClientError::TransportClosed(
                "the client's actix system stopped while connecting".into(),
            ))
        })
    }

    /// [`connect`](Self::connect) on the current arbiter; `runtime` is the SDK's own system
    /// when that is where it runs.
    async fn connect_on(
        self,
        connector: impl Connect,
        runtime: Option<Arc<ClientRuntime>>,
    ) -> Result<Client, ClientError> {
        let (inbox, rx) = Inbox::channel();
        let transport = connector.connect(inbox).await?;
        let handlers = Arc::new(self.handlers);
        let capabilities = handlers.capabilities();
        let cache = self.cache.then(|| Arc::new(ResultCache::default()));
        let session = ClientSession::new(transport.clone(), handlers.clone(), rx)
            .with_cache(cache.clone())
            .start();
        let envelope = Envelope {
            version: self.v2026_version,
            capabilities: lifecycle::v2026_capabilities(&capabilities),
            client_info: serde_json::to_value(&self.info).unwrap_or(Value::Null),
            log_level: self.log_level,
        };
        let mut client = Client {
            inner: Arc::new(ClientInner {
                session,
                transport: transport.clone(),
                handlers,
                init: lifecycle::describe(self.v2026_version, None),
                discover: None,
                era: Era::V2026,
                version: Mutex::new(self.v2026_version),
                envelope: Mutex::new(Some(envelope.clone())),
                timeout: self.timeout,
                auto_input: self.auto_input,
                max_input_rounds: self.max_input_rounds,
                cache,
                runtime,
                task_watch: super::task_watch::TaskWatch::default(),
                #[cfg(feature = "otel")]
                telemetry: crate::telemetry::ClientSessionTimer::new(
                    if transport.mirrors_headers() {
                        crate::telemetry::Network::Tcp
                    } else {
                        crate::telemetry::Network::Pipe
                    },
                ),
            }),
        };
        if self.lifecycle != Lifecycle::V2025 {
            let _ = client.inner.session.send(SetEnvelope(Some(envelope))).await;
            let probe = client.probe(&transport, self.discover_timeout).await;
            match probe {
                Probe::V2026(discover) => {
                    let version = client.protocol_version();
                    let Some(inner) = Arc::get_mut(&mut client.inner) else {
                        return Err(ClientError::Protocol(
                            "the client was shared during its start".into(),
                        ));
                    };
                    inner.init = lifecycle::describe(version, discover.as_deref());
                    inner.discover = discover.map(|discover| *discover);
                    return Ok(client);
                }
                Probe::Failed(error) => {
                    client.close().await;
                    return Err(error);
                }
                Probe::V2025(error) if self.lifecycle == Lifecycle::V2026 => {
                    client.close().await;
                    return Err(error);
                }
                Probe::V2025(error) => {
                    tracing::debug!(%error, "not a 2026 server; initializing a 2025 session");
                    let _ = client.inner.session.send(SetEnvelope(None)).await;
                }
            }
        }
        let Some(inner) = Arc::get_mut(&mut client.inner) else {
            return Err(ClientError::Protocol(
                "the client was shared during its start".into(),
            ));
        };
        inner.era = Era::V2025;
        *super::lock(&inner.envelope) = None;
        *super::lock(&inner.version) = self.version;
        Self::initialize(
            client,
            &transport,
            InitializeRequestParams {
                protocol_version: self.version.as_str().to_owned(),
                capabilities,
                client_info: self.info,
                meta: None,
            },
            self.renew,
            self.timeout,
        )
        .await
    }

    /// The 2025 handshake: `initialize`, then `notifications/initialized`.
    async fn initialize(
        mut client: Client,
        transport: &Arc<dyn Transport>,
        params: InitializeRequestParams,
        renew: bool,
        timeout: Option<Duration>,
    ) -> Result<Client, ClientError> {
        let params = serde_json::to_value(&params)
            .map_err(|err| ClientError::Protocol(format!("unserialisable initialize: {err}")))?;
        let renewal_params = renew.then(|| params.clone());
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
        if !version.has_handshake() {
            client.close().await;
            return Err(ClientError::Protocol(format!(
                "the server chose the stateless protocol version {version:?} in initialize"
            )));
        }
        transport.set_protocol_version(version.as_str());
        // No clone of the client exists yet: it is completed in place.
        let Some(inner) = Arc::get_mut(&mut client.inner) else {
            return Err(ClientError::Protocol(
                "the client was shared during its handshake".into(),
            ));
        };
        inner.init = init;
        *super::lock(&inner.version) = version;
        if let Some(params) = renewal_params {
            inner.session.do_send(EnableRenewal {
                params,
                version: version.as_str().to_owned(),
                timeout,
            });
        }
        client
            .notify(method::NOTIFICATION_INITIALIZED, None)
            .await?;
        transport.initialized();
        Ok(client)
    }
}

impl Client {
    /// Sends `server/discover` in the 2026 era and reads the answer (see
    /// [`lifecycle`](super::lifecycle)).
    async fn probe(&self, transport: &Arc<dyn Transport>, timeout: Duration) -> Probe {
        let mut version_retried = false;
        loop {
            let pending = match self
                .start_request::<Value>(
                    method::SERVER_DISCOVER,
                    None,
                    CallOptions::new().timeout(timeout),
                )
                .await
            {
                Ok(pending) => pending,
                // An authorization failure is the same in either era: no fallback.
                #[cfg(feature = "client-http")]
                Err(error @ ClientError::Auth(_)) => return Probe::Failed(error),
                Err(error) => return Probe::V2025(error),
            };
            let id = pending.id().cloned();
            match pending.await {
                Ok(value) if !value.get("supportedVersions").is_some_and(Value::is_array) => {
                    // Whatever answered, it was not a discover result.
                    return Probe::V2025(ClientError::Protocol(
                        "the answer to server/discover has no supportedVersions".into(),
                    ));
                }
                Ok(value) => {
                    return match lifecycle::read_discover(value) {
                        Ok(discover) => Probe::V2026(Some(Box::new(discover))),
                        Err(error) => Probe::V2025(error),
                    };
                }
                Err(ClientError::Rpc(error)) => {
                    let status = id.and_then(|id| transport.take_refusal_status(&id));
                    if !lifecycle::is_v2026_error(&error, status) {
                        return Probe::V2025(ClientError::Rpc(error));
                    }
                    if error.code != crate::error::code::UNSUPPORTED_PROTOCOL_VERSION {
                        return Probe::V2026(None);
                    }
                    if version_retried || !self.adopt_supported_version(&error).await {
                        // A 2026-07-28 server without a version in common: no fallback.
                        return Probe::Failed(ClientError::Rpc(error));
                    }
                    version_retried = true;
                }
                #[cfg(feature = "client-http")]
                Err(error @ ClientError::Auth(_)) => return Probe::Failed(error),
                Err(error) => return Probe::V2025(error),
            }
        }
    }
}
