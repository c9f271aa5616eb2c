//! The builder of a [`Server`]: [`ServerBuilder`] collects the server's identity, tools,
//! prompts, resources, templates, handlers, hooks, state and settings, and
//! [`build`](ServerBuilder::build) checks them all at once.
//!
//! Started by [`Server::builder`]; what it collects becomes the server's first [`Catalog`]
//! and its [`ServerInner`].

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use indexmap::IndexMap;

use actix_mcp_actors::SessionId;

use crate::error::{BuildError, McpError};
use crate::protocol::{
    CompleteRequestParams, CompleteResult, Icon, Implementation, ProtocolVersion,
    ServerCapabilities, method,
};
use crate::server::catalog::Catalog;
use crate::server::config::ServerConfig;
use crate::server::custom::IntoJsonResult;
use crate::server::extension::{Advertised, Extension, ResourceSource};
use crate::server::handler::{Handler, erase};
use crate::server::hooks::{
    CompletionHandler, ExceptionReport, Reporter, RequestEvent, RootsChangedHandler, UriHandler,
};
use crate::server::middleware::{Chain, Middleware};
use crate::server::prompt::PromptDef;
use crate::server::resource::{
    IntoResourceOutput, ReadHandler, ResourceDef, ResourceTemplateDef, read_handler,
};
use crate::server::state::StateMap;
use crate::server::tasks::TaskConfig;
use crate::server::tool::ToolDef;
use crate::server::toolbox::ToolBox;
use crate::server::{RequestContext, Server, ServerInner};

/// Builds a [`Server`]. See [`Server::builder`].
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    capabilities: Option<ServerCapabilities>,
    config: ServerConfig,
    protocol_version: Option<String>,
    state: StateMap,
    catalog: Catalog,
    read_fallback: Option<ReadHandler>,
    completion: Option<CompletionHandler>,
    on_subscribe: Option<UriHandler>,
    on_unsubscribe: Option<UriHandler>,
    on_roots_changed: Option<RootsChangedHandler>,
    reporter: Option<Reporter>,
    middleware: Chain,
    extensions: Vec<Advertised>,
    resource_sources: Vec<Arc<dyn ResourceSource>>,
    tasks: Option<TaskConfig>,
    /// `cache_hints` (a method) and `default_cache_hints` (none) calls, applied in order once
    /// every extension has declared its cacheable methods.
    cache_hints: Vec<(Option<String>, crate::protocol::CacheHints)>,
    /// The extensions' hooks on the built server.
    binds: Vec<crate::server::extension::Bind>,
    /// Tool factories by name (see [`tool_factory`](Self::tool_factory)).
    tool_factories: std::collections::HashMap<String, crate::server::shared::ToolFactory>,
    errors: Vec<BuildError>,
}

impl fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("name", &self.info.name)
            .field("config", &self.config)
            .finish()
    }
}

fn insert_unique<T>(
    map: &mut IndexMap<String, T>,
    kind: &'static str,
    name: String,
    value: T,
) -> Result<(), BuildError> {
    if map.contains_key(&name) {
        return Err(BuildError::Duplicate { kind, name });
    }
    map.insert(name, value);
    Ok(())
}

impl ServerBuilder {
    /// Sets the display title (`serverInfo.title`).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the description (`serverInfo.description`).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Sets the instructions clients may give the model.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the server's icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.info.icons = Some(icons);
        self
    }

    /// Sets the server's website.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.info.website_url = Some(url.into());
        self
    }

    /// Registers a tool factory under `name`: it makes a tool from JSON arguments, for
    /// [`Server::define_shared_tool`] to define the same tool on every node of a cluster
    /// (register it on every node). It returns `Err` with a reason for arguments it refuses.
    /// Registering a name again replaces the factory.
    ///
    /// ```
    /// use actix_mcp::{Server, ToolDef};
    ///
    /// let server = Server::builder("demo", "1.0.0")
    ///     .tool_factory("greeter", |args: &serde_json::Value| {
    ///         let name = args["name"].as_str().ok_or("`name` must be a string")?;
    ///         let greeting = format!("hello from {name}");
    ///         Ok::<_, &str>(ToolDef::new(name, move || {
    ///             let greeting = greeting.clone();
    ///             async move { greeting }
    ///         }))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn tool_factory<F, E>(mut self, name: impl Into<String>, factory: F) -> Self
    where
        F: Fn(&serde_json::Value) -> Result<ToolDef, E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        let factory: crate::server::shared::ToolFactory =
            Arc::new(move |args| factory(args).map_err(|err| err.to_string()));
        self.tool_factories.insert(name.into(), factory);
        self
    }

    /// Registers a tool: a [`ToolDef`] (from [`ToolDef::new`] and a closure) or a
    /// [`ToolHandler`](crate::ToolHandler) impl.
    pub fn tool(mut self, tool: impl Into<ToolDef>) -> Self {
        match tool.into().prepare() {
            Ok(def) => {
                if let Err(err) = insert_unique(
                    &mut self.catalog.tools,
                    "tool",
                    def.definition.name.clone(),
                    def,
                ) {
                    self.errors.push(err);
                }
            }
            Err(err) => self.errors.push(err),
        }
        self
    }

    /// Registers a prompt: a [`PromptDef`] (from [`PromptDef::new`] and a closure) or a
    /// [`PromptHandler`](crate::PromptHandler) impl.
    pub fn prompt(mut self, prompt: impl Into<PromptDef>) -> Self {
        match prompt.into().prepare() {
            Ok(def) => {
                if let Err(err) = insert_unique(
                    &mut self.catalog.prompts,
                    "prompt",
                    def.definition.name.clone(),
                    def,
                ) {
                    self.errors.push(err);
                }
            }
            Err(err) => self.errors.push(err),
        }
        self
    }

    /// Registers a resource: a [`ResourceDef`] (from [`ResourceDef::new`] and a closure, or
    /// from a bare [`protocol::Resource`](crate::protocol::Resource) read by the fallback
    /// [`read_resource`](Self::read_resource) handler) or a
    /// [`ResourceHandler`](crate::ResourceHandler) impl.
    pub fn resource(mut self, resource: impl Into<ResourceDef>) -> Self {
        match resource.into().prepare() {
            Ok(def) => {
                if let Err(err) = insert_unique(
                    &mut self.catalog.resources,
                    "resource",
                    def.definition.uri.clone(),
                    def,
                ) {
                    self.errors.push(err);
                }
            }
            Err(err) => self.errors.push(err),
        }
        self
    }

    /// Registers a resource template: a [`ResourceTemplateDef`] (from
    /// [`ResourceTemplateDef::new`] and a closure) or a
    /// [`ResourceTemplateHandler`](crate::ResourceTemplateHandler) impl.
    pub fn resource_template(mut self, template: impl Into<ResourceTemplateDef>) -> Self {
        match template.into().prepare() {
            Ok(def) => {
                if self
                    .catalog
                    .templates
                    .iter()
                    .any(|t| t.definition.uri_template == def.definition.uri_template)
                {
                    self.errors.push(BuildError::Duplicate {
                        kind: "resource template",
                        name: def.definition.uri_template.clone(),
                    });
                } else {
                    self.catalog.templates.push(def);
                }
            }
            Err(err) => self.errors.push(err),
        }
        self
    }

    /// Merges a [`ToolBox`]: its tools, prompts, resources, templates and state. A name or a
    /// state type registered already (by the server or another box) is an error of
    /// [`build`](Self::build).
    pub fn toolbox(mut self, toolbox: ToolBox) -> Self {
        for state in toolbox.state {
            if self.state.contains(state.type_id) {
                self.errors.push(BuildError::Duplicate {
                    kind: "state",
                    name: state.type_name.to_owned(),
                });
            } else {
                self.state.insert_any(state.type_id, state.value);
            }
        }
        for tool in toolbox.tools {
            self = self.tool(tool);
        }
        for prompt in toolbox.prompts {
            self = self.prompt(prompt);
        }
        for resource in toolbox.resources {
            self = self.resource(resource);
        }
        for template in toolbox.templates {
            self = self.resource_template(template);
        }
        self
    }

    /// Reads the resources that have no read handler of their own.
    pub fn read_resource<H, M>(mut self, handler: H) -> Self
    where
        H: Handler<M>,
        H::Output: IntoResourceOutput,
        M: 'static,
    {
        self.read_fallback = Some(read_handler(handler));
        self
    }

    /// Answers `completion/complete`. The server has already checked that the reference names
    /// a registered prompt or template, and caps the values at 100.
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CompleteRequestParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CompleteResult, McpError>> + Send + 'static,
    {
        self.completion = Some(Arc::new(move |params, cx| Box::pin(handler(params, cx))));
        self
    }

    /// Runs on `resources/subscribe` (after the server has recorded the subscription).
    pub fn on_subscribe<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(String, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), McpError>> + Send + 'static,
    {
        self.on_subscribe = Some(Arc::new(move |uri, cx| Box::pin(handler(uri, cx))));
        self
    }

    /// Runs on `resources/unsubscribe`.
    pub fn on_unsubscribe<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(String, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), McpError>> + Send + 'static,
    {
        self.on_unsubscribe = Some(Arc::new(move |uri, cx| Box::pin(handler(uri, cx))));
        self
    }

    /// Runs when a client sends `notifications/roots/list_changed`.
    pub fn on_roots_list_changed(
        mut self,
        handler: impl Fn(Option<SessionId>) + Send + Sync + 'static,
    ) -> Self {
        self.on_roots_changed = Some(Arc::new(handler));
        self
    }

    /// Replaces the capabilities the server derives from what is registered.
    pub fn capabilities(mut self, capabilities: ServerCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Sets the cache hints (`ttlMs`, `cacheScope`) of one cacheable method's results for
    /// 2026-07-28 clients: `server/discover`, `tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list` or `resources/read`. Defaults: 60 s private for discovery
    /// (fixed once built), 0 (stale at once) private for lists and reads, which change at run
    /// time without a client that does not listen hearing of it; a server whose catalog never
    /// changes may promise more here. Every page of a list gets the same hints. An extension's
    /// cacheable method ([`Extension::cacheable`]) may be set too, whatever the order of the
    /// calls. Another method is refused by [`build`](Self::build).
    pub fn cache_hints(mut self, method: &str, hints: crate::protocol::CacheHints) -> Self {
        self.cache_hints.push((Some(method.to_owned()), hints));
        self
    }

    /// Sets the same cache hints on every cacheable method, extensions' included (see
    /// [`cache_hints`](Self::cache_hints)).
    pub fn default_cache_hints(mut self, hints: crate::protocol::CacheHints) -> Self {
        self.cache_hints.push((None, hints));
        self
    }

    /// At most `limit` `subscriptions/listen` streams are open at once (default 10,000); one
    /// more is refused with a server-busy error.
    pub fn max_listeners(mut self, limit: usize) -> Self {
        self.config.max_listeners = limit;
        self
    }

    /// Splits `*/list` results into pages of `size` (default: one page).
    pub fn page_size(mut self, size: usize) -> Self {
        if size == 0 {
            self.errors.push(BuildError::InvalidPageSize);
        }
        self.config.page_size = Some(size);
        self
    }

    /// Registers application state, available to handlers as [`State<T>`](crate::State) and
    /// through [`RequestContext::state`].
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(Arc::new(value));
        self
    }

    /// Registers application state the caller keeps a handle on too (shared through the
    /// `Arc`); handlers see it as [`State<T>`](crate::State).
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.insert(value);
        self
    }

    /// Pins the protocol version `initialize` answers with, whatever the client asks for.
    /// A version this SDK does not speak, or one without the handshake (2026-07-28 has no `initialize`),
    /// is refused by [`build`](Self::build). 2026-07-28 requests name their own version.
    pub fn protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = Some(version.into());
        self
    }

    /// Receives every handler failure and panic, with where it happened.
    pub fn exception_reporter(
        mut self,
        reporter: impl Fn(&ExceptionReport) + Send + Sync + 'static,
    ) -> Self {
        self.reporter = Some(Arc::new(reporter));
        self
    }

    /// Runs around every request: it receives the method, tool name and arguments, prompt name,
    /// resource uri, error, client info and the measured duration when the request completes.
    ///
    /// It is a [`Middleware`] (named `around_request`), at this call's place in their order.
    pub fn around_request(self, hook: impl Fn(&RequestEvent) + Send + Sync + 'static) -> Self {
        self.middleware(crate::server::hooks::around_request(hook))
    }

    /// Adds a middleware after those already added (see [`Middleware`] for the order).
    pub fn middleware(mut self, middleware: Middleware) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Adds an extension: its methods, its middleware (here, in the order of middleware), the
    /// resources it serves, and its entry in `capabilities.extensions`. [`build`](Self::build)
    /// refuses an invalid identifier, a second extension with the same one, a method that is a
    /// protocol method or already defined, and an extension whose requirements the server does
    /// not meet.
    pub fn extension(mut self, mut extension: Extension) -> Self {
        if let Some(error) = extension.take_error() {
            self.errors.push(error);
            return self;
        }
        if self.extensions.iter().any(|ext| ext.id == extension.id) {
            self.errors.push(BuildError::Duplicate {
                kind: "extension",
                name: extension.id,
            });
            return self;
        }
        for (name, handler) in extension.methods {
            match self.catalog.custom.entry(name) {
                std::collections::hash_map::Entry::Occupied(taken) => self
                    .errors
                    .push(BuildError::MethodAlreadyDefined(taken.key().clone())),
                std::collections::hash_map::Entry::Vacant(free) => {
                    free.insert(handler);
                }
            }
        }
        for middleware in extension.middleware {
            self.middleware.push(middleware);
        }
        self.binds.extend(extension.bind);
        for (method, hints) in extension.cacheable {
            self.config.cache.declare(&method, hints);
        }
        if let Some(source) = extension.resources {
            self.resource_sources.push(source);
        }
        self.extensions.push(Advertised {
            id: extension.id,
            settings: extension.settings,
            newest_only: extension.newest_only,
            requires: extension.requires,
        });
        self
    }

    /// Scopes every request needs on an endpoint protected by
    /// [`bearer_auth`](crate::transport::http::McpHttp::bearer_auth) (default none): a token
    /// without them is answered HTTP 403 with `WWW-Authenticate: Bearer
    /// error="insufficient_scope", scope="…"`, and an unauthenticated request's 401 challenge
    /// names them. Tools, prompts and resources add their own (see
    /// [`ToolDef::required_scopes`]). Each must be an RFC 6749 scope token;
    /// [`build`](Self::build) fails with [`BuildError::InvalidScope`] otherwise. Ignored over
    /// stdio and in process.
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        match crate::server::auth::scope_token::collect(|| "the server".to_owned(), scopes) {
            Ok(scopes) => self.config.required_scopes = scopes,
            Err(err) => self.errors.push(err),
        }
        self
    }

    /// Time limit of every tool invocation (default 5 minutes; not part of semver); a tool's
    /// own [`timeout`](crate::ToolDef::timeout) wins. A call past it is stopped (its future
    /// dropped) and answered with an `isError` result saying so. The default exists so that a
    /// call nobody waits for any more cannot run, and keep its session from expiring, forever;
    /// turn it off with [`without_tool_timeout`](Self::without_tool_timeout).
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.config.tool_timeout = Some(timeout);
        self
    }

    /// No time limit for tool invocations, except a tool's own
    /// [`timeout`](crate::ToolDef::timeout): a call runs until it ends or is cancelled (see
    /// [`tool_timeout`](Self::tool_timeout) for the default).
    pub fn without_tool_timeout(mut self) -> Self {
        self.config.tool_timeout = None;
        self
    }

    /// How long server-to-client requests wait for an answer (default 300 s).
    pub fn peer_request_timeout(mut self, timeout: Duration) -> Self {
        self.config.peer_request_timeout = Some(timeout);
        self
    }

    /// Most requests one session may have in flight at once (default 256).
    pub fn max_concurrent_requests(mut self, limit: usize) -> Self {
        self.config.max_concurrent_requests = limit.max(1);
        self
    }

    /// Seals the `requestState` of `input_required` results with this key (ChaCha20-Poly1305,
    /// 32 bytes), named `id` (1 to 255 bytes; it travels in the state so the server finds the
    /// key again). A key set before stays accepted, so calling this again rotates keys. Default:
    /// a random key per process, so states do not survive a restart or reach another node;
    /// give every node of a deployment the same keys.
    pub fn request_state_key(mut self, id: impl Into<String>, key: [u8; 32]) -> Self {
        let id = id.into();
        if id.is_empty() || id.len() > 255 {
            self.errors.push(BuildError::InvalidStateKeyId(id));
            return self;
        }
        let keep = self.config.mrtr.configured_key;
        self.config.mrtr.keys.set_current(id, &key, keep);
        self.config.mrtr.configured_key = true;
        self
    }

    /// [`request_state_key`](Self::request_state_key) with the key as 64 hexadecimal digits
    /// (as a deployment's configuration gives it, e.g. `openssl rand -hex 32`); the build fails
    /// with [`BuildError::InvalidStateKey`] when it is not.
    pub fn request_state_key_hex(mut self, id: impl Into<String>, hex: &str) -> Self {
        let hex = hex.trim();
        let key: Option<[u8; 32]> = (hex.len() == 64 && hex.is_ascii())
            .then(|| {
                (0..32)
                    .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
                    .collect::<Option<Vec<u8>>>()
            })
            .flatten()
            .and_then(|bytes| bytes.try_into().ok());
        match key {
            Some(key) => self.request_state_key(id, key),
            None => {
                self.errors.push(BuildError::InvalidStateKey);
                self
            }
        }
    }

    /// Still accepts states sealed with this older key (rotation), without sealing new ones
    /// with it.
    pub fn accept_request_state_key(mut self, id: impl Into<String>, key: [u8; 32]) -> Self {
        let id = id.into();
        if id.is_empty() || id.len() > 255 {
            self.errors.push(BuildError::InvalidStateKeyId(id));
            return self;
        }
        self.config.mrtr.keys.accept(id, &key);
        self
    }

    /// How long a sealed `requestState` stays valid (default 10 minutes): a retry with an
    /// older one is refused with `-32602`.
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.config.mrtr.keys.ttl = ttl;
        self
    }

    /// Whether each sealed `requestState` is good for one retry only (default `true`): a
    /// second retry with the same state is refused with `-32602`, so a caller cannot replay a
    /// round (and its side effects) within the state's time to live. Each node remembers the
    /// states used there; in a cluster, a state is also claimed in the cluster's session store
    /// (a store without [`claim_once`](actix_mcp_actors::SessionStore::claim_once) leaves
    /// states single-use per node). Turn it off only when every handler is idempotent: a
    /// client may then resend a retry whose answer it lost. Handlers whose effects must happen
    /// once (a redemption, a payment) must enforce that themselves either way, as the
    /// specification asks.
    pub fn single_use_request_state(mut self, on: bool) -> Self {
        self.config.mrtr.single_use = on;
        self
    }

    /// Most implicit-style calls parked at once, waiting for the retry of their
    /// `input_required` round (default 1024). A call that finds the park full is dropped; its
    /// retry runs the handler again and replays the earlier answers.
    pub fn max_parked_calls(mut self, limit: usize) -> Self {
        self.config.mrtr.max_parked = limit;
        self
    }

    /// How long a parked call waits for its retry before it is dropped (default 10 minutes;
    /// a later retry replays it).
    pub fn parked_call_ttl(mut self, ttl: Duration) -> Self {
        self.config.mrtr.park_ttl = ttl;
        self
    }

    /// Most `input_required` rounds the server drives for a 2025-11-25 session client, as
    /// real server-to-client requests, before the request fails (default 10).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.config.mrtr.max_rounds = rounds;
        self
    }

    /// Defines a custom JSON-RPC method (or notification). Protocol methods cannot be
    /// redefined: [`build`](Self::build) refuses with [`BuildError::MethodAlreadyDefined`].
    pub fn custom_method<H, M>(mut self, name: impl Into<String>, handler: H) -> Self
    where
        H: Handler<M>,
        H::Output: IntoJsonResult,
        M: 'static,
    {
        let name = name.into();
        if method::is_protocol_method(&name) || self.catalog.custom.contains_key(&name) {
            self.errors.push(BuildError::MethodAlreadyDefined(name));
        } else {
            self.catalog
                .custom
                .insert(name, erase(handler, IntoJsonResult::into_json_result));
        }
        self
    }

    /// Enables the Tasks extension (`io.modelcontextprotocol/tasks`, protocol 2026-07-28):
    /// `server/discover` lists it, `tasks/get`, `tasks/update` and `tasks/cancel` are served,
    /// and a call of a tool declaring [`ToolDef::task_support`] from a request that declares
    /// the extension may be answered with a task while the tool runs on (see
    /// [`tasks`](crate::server::tasks)). Off by default; sessions of 2025-11-25 never see it.
    pub fn tasks(mut self, config: TaskConfig) -> Self {
        self.tasks = Some(config);
        self
    }

    /// Refuses the build with `error` (for builder methods defined elsewhere).
    #[cfg_attr(not(feature = "skills"), allow(dead_code))]
    pub(crate) fn refuse(mut self, error: BuildError) -> Self {
        self.errors.push(error);
        self
    }

    /// Checks everything and builds the server.
    ///
    /// # Errors
    /// The first problem found: duplicate names, invalid names or schemas, an unsupported
    /// protocol version override, a redefined protocol method, a handler reading
    /// [`State<T>`](crate::State) of a type never registered.
    pub fn build(mut self) -> Result<Server, BuildError> {
        for (method, hints) in std::mem::take(&mut self.cache_hints) {
            match method {
                Some(method) => {
                    if !self.config.cache.set(&method, hints) {
                        self.errors.push(BuildError::NotCacheable(method));
                    }
                }
                None => {
                    for method in self.config.cache.methods() {
                        self.config.cache.set(&method, hints);
                    }
                }
            }
        }
        if let Some(err) = self.errors.into_iter().next() {
            return Err(err);
        }
        self.catalog.check_state(&self.state)?;
        if let Some(version) = self.protocol_version {
            let parsed = match version.parse::<ProtocolVersion>() {
                Ok(parsed) if parsed.has_handshake() => parsed,
                _ => return Err(BuildError::UnsupportedProtocolVersion(version)),
            };
            self.config.protocol_version = Some(parsed);
        }
        let mrtr = self.config.mrtr.clone().build();
        let binds = std::mem::take(&mut self.binds);
        let server = Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                instructions: self.instructions,
                capabilities: self.capabilities,
                config: self.config,
                state: self.state,
                catalog: RwLock::new(Arc::new(self.catalog)),
                read_fallback: self.read_fallback,
                completion: self.completion,
                on_subscribe: self.on_subscribe,
                on_unsubscribe: self.on_unsubscribe,
                on_roots_changed: self.on_roots_changed,
                reporter: self.reporter,
                middleware: self.middleware,
                extensions: self.extensions,
                resource_sources: self.resource_sources,
                registries: Mutex::default(),
                listeners: crate::server::listen::Listeners::default(),
                info_json: std::sync::OnceLock::new(),
                mrtr,
                tasks: self
                    .tasks
                    .map(|config| Arc::new(crate::server::tasks::TaskService::new(config))),
                in_process: std::sync::OnceLock::new(),
                shared: crate::server::shared::SharedCatalog::new(self.tool_factories),
            }),
        };
        crate::server::extension::check_requirements(
            &server.inner.extensions,
            &crate::server::route::capabilities(&server.inner),
        )?;
        for bind in binds {
            bind(&server.inner)?;
        }
        Ok(server)
    }
}

impl Server {
    /// Starts building a server with its name and version (`serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            capabilities: None,
            config: ServerConfig::default(),
            protocol_version: None,
            state: StateMap::default(),
            catalog: Catalog::default(),
            read_fallback: None,
            completion: None,
            on_subscribe: None,
            on_unsubscribe: None,
            on_roots_changed: None,
            reporter: None,
            middleware: Chain::default(),
            extensions: Vec::new(),
            resource_sources: Vec::new(),
            tasks: None,
            cache_hints: Vec::new(),
            binds: Vec::new(),
            tool_factories: std::collections::HashMap::new(),
            errors: Vec::new(),
        }
    }
}
