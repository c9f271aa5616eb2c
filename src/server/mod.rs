//! The MCP server: [`Server::builder`] registers tools, prompts, resources, templates,
//! handlers, hooks and application state; the built [`Server`] is served over stdio
//! ([`Server::serve_stdio`]) or Streamable HTTP ([`Server::http`]), or driven in process
//! ([`Server::handle_json`]).

pub(crate) mod context;
pub(crate) mod handler;
pub(crate) mod pagination;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod route;
pub(crate) mod session;
pub(crate) mod tool;
pub(crate) mod uri_template;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures::future::BoxFuture;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use actix_mcp_actors::{Frame, RegistryHandle, SessionHandle, SessionId};

use crate::error::{BuildError, McpError};
use crate::protocol::{
    CompleteRequestParams, CompleteResult, Icon, Implementation, LoggingLevel,
    LoggingMessageNotificationParams, ProtocolVersion, ServerCapabilities, method,
};
use crate::server::handler::{ErasedHandler, Handler, erase};
use crate::server::prompt::PromptDef;
use crate::server::resource::{
    IntoResourceOutput, ReadHandler, ResourceDef, ResourceTemplateDef, read_handler,
};
use crate::server::tool::ToolDef;

pub use context::RequestContext;

/// Typed application state, keyed by type (the Ruby SDK's `server_context`).
#[derive(Default, Clone)]
pub(crate) struct StateMap(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl StateMap {
    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.0.get(&TypeId::of::<T>())?.clone().downcast::<T>().ok()
    }
}

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

type Reporter = Arc<dyn Fn(&ExceptionReport) + Send + Sync>;
type AroundHook = Arc<dyn Fn(&RequestEvent) + Send + Sync>;
pub(crate) type CompletionHandler = Arc<
    dyn Fn(
            CompleteRequestParams,
            RequestContext,
        ) -> BoxFuture<'static, Result<CompleteResult, McpError>>
        + Send
        + Sync,
>;
pub(crate) type UriHandler =
    Arc<dyn Fn(String, RequestContext) -> BoxFuture<'static, Result<(), McpError>> + Send + Sync>;
pub(crate) type RootsChangedHandler = Arc<dyn Fn(Option<SessionId>) + Send + Sync>;
pub(crate) type CustomHandler = ErasedHandler<Value>;

/// Settings of a server. Defaults are not part of semver.
#[derive(Debug, Clone)]
pub(crate) struct ServerConfig {
    pub(crate) page_size: Option<usize>,
    pub(crate) protocol_version: Option<ProtocolVersion>,
    pub(crate) tool_timeout: Option<Duration>,
    pub(crate) peer_request_timeout: Option<Duration>,
    pub(crate) max_concurrent_requests: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            page_size: None,
            protocol_version: None,
            tool_timeout: None,
            peer_request_timeout: Some(Duration::from_secs(300)),
            max_concurrent_requests: 256,
        }
    }
}

/// What the server serves, replaced as a whole on every run-time change (copy on write).
#[derive(Clone, Default)]
pub(crate) struct Catalog {
    pub(crate) tools: IndexMap<String, ToolDef>,
    pub(crate) prompts: IndexMap<String, PromptDef>,
    pub(crate) resources: IndexMap<String, ResourceDef>,
    pub(crate) templates: Vec<ResourceTemplateDef>,
    pub(crate) custom: HashMap<String, CustomHandler>,
    /// The serialised one-page `tools/list` result per protocol version, built on first use.
    pub(crate) tools_list: ListCache,
}

/// Serialised list results, one slot per protocol version. A clone starts empty, so every
/// copy-on-write change of the catalog invalidates it.
#[derive(Default)]
pub(crate) struct ListCache([std::sync::OnceLock<Arc<str>>; 4]);

impl Clone for ListCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl ListCache {
    pub(crate) fn get_or_init(
        &self,
        version: ProtocolVersion,
        init: impl FnOnce() -> Arc<str>,
    ) -> Arc<str> {
        let index = ProtocolVersion::ALL
            .iter()
            .position(|v| *v == version)
            .unwrap_or(0)
            .min(3);
        self.0[index].get_or_init(init).clone()
    }
}

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: Option<ServerCapabilities>,
    pub(crate) config: ServerConfig,
    pub(crate) state: StateMap,
    catalog: RwLock<Arc<Catalog>>,
    pub(crate) read_fallback: Option<ReadHandler>,
    pub(crate) completion: Option<CompletionHandler>,
    pub(crate) on_subscribe: Option<UriHandler>,
    pub(crate) on_unsubscribe: Option<UriHandler>,
    pub(crate) on_roots_changed: Option<RootsChangedHandler>,
    pub(crate) reporter: Option<Reporter>,
    pub(crate) around: Option<AroundHook>,
    /// The registries of every transport serving this server: the audience of server-wide
    /// notifications.
    registries: Mutex<Vec<RegistryHandle>>,
}

impl ServerInner {
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn update_catalog<R>(&self, change: impl FnOnce(&mut Catalog) -> R) -> R {
        let mut slot = self
            .catalog
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut next = (**slot).clone();
        let result = change(&mut next);
        *slot = Arc::new(next);
        result
    }

    pub(crate) fn report(&self, report: ExceptionReport) {
        tracing::error!(message = %report.message, panicked = report.panicked, site = ?report.site, "handler failed");
        if let Some(reporter) = &self.reporter {
            reporter(&report);
        }
    }

    fn registries(&self) -> std::sync::MutexGuard<'_, Vec<RegistryHandle>> {
        self.registries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A transport started serving through `registry`.
    pub(crate) fn add_registry(&self, registry: RegistryHandle) {
        self.registries().push(registry);
    }

    /// A transport stopped serving through `registry` (a stdio connection ended).
    pub(crate) fn remove_registry(&self, registry: &RegistryHandle) {
        self.registries()
            .retain(|known| known.addr() != registry.addr());
    }

    pub(crate) fn sessions(&self) -> Vec<SessionHandle> {
        let registries = self.registries().clone();
        registries
            .iter()
            .flat_map(RegistryHandle::sessions)
            .collect()
    }

    fn broadcast(&self, frame: &Frame) {
        let registries = self.registries().clone();
        for registry in registries {
            registry.broadcast(frame.clone());
        }
    }

    pub(crate) fn effective_version(&self, requested: &str) -> ProtocolVersion {
        if let Some(pinned) = self.config.protocol_version {
            return pinned;
        }
        requested.parse().unwrap_or(ProtocolVersion::LATEST)
    }
}

fn log_frame(level: LoggingLevel, data: Value, logger: Option<&str>) -> Option<Frame> {
    let params = LoggingMessageNotificationParams {
        level,
        logger: logger.map(str::to_owned),
        data,
        meta: None,
    };
    let params = serde_json::to_value(&params).ok()?;
    Some(Frame::notification(
        method::NOTIFICATION_MESSAGE,
        Some(&params),
    ))
}

/// Sends a log frame to a session when its level (`info` until it sets one) lets it through.
fn send_log(session: &SessionHandle, level: LoggingLevel, frame: &Frame) {
    let threshold = session
        .data::<session::SessionState>()
        .and_then(|s| s.log_level())
        .unwrap_or(LoggingLevel::Info);
    if level >= threshold {
        session.notify(frame.clone());
    }
}

/// An MCP server. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let catalog = self.inner.catalog();
        f.debug_struct("Server")
            .field("name", &self.inner.info.name)
            .field("version", &self.inner.info.version)
            .field("tools", &catalog.tools.len())
            .field("prompts", &catalog.prompts.len())
            .field("resources", &catalog.resources.len())
            .finish()
    }
}

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
    around: Option<AroundHook>,
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

/// Converts a custom method handler's output into its JSON result.
pub trait IntoJsonResult: Send + 'static {
    /// The conversion.
    ///
    /// # Errors
    /// When the output is an error, or does not serialise.
    fn into_json_result(self) -> Result<Value, McpError>;
}

impl IntoJsonResult for Value {
    fn into_json_result(self) -> Result<Value, McpError> {
        Ok(self)
    }
}

impl IntoJsonResult for () {
    fn into_json_result(self) -> Result<Value, McpError> {
        Ok(Value::Object(serde_json::Map::new()))
    }
}

impl<T: Serialize + Send + 'static, E: Into<McpError> + Send + 'static> IntoJsonResult
    for Result<T, E>
{
    fn into_json_result(self) -> Result<Value, McpError> {
        let value = self.map_err(Into::into)?;
        serde_json::to_value(value).map_err(McpError::from)
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

    /// Registers a tool (a [`tool`](crate::tool) closure or a [`Tool`](crate::Tool) impl).
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

    /// Registers a prompt (a [`prompt`](crate::prompt) closure or a [`Prompt`](crate::Prompt) impl).
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

    /// Registers a resource (with its own read handler, or read by the fallback handler).
    pub fn resource(mut self, resource: impl Into<ResourceDef>) -> Self {
        let def = resource.into();
        if let Err(err) = insert_unique(
            &mut self.catalog.resources,
            "resource",
            def.definition.uri.clone(),
            def,
        ) {
            self.errors.push(err);
        }
        self
    }

    /// Registers a resource template.
    pub fn resource_template(mut self, template: ResourceTemplateDef) -> Self {
        match template.prepare() {
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
        self.state.0.insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// Registers application state the caller keeps a handle on too (shared through the
    /// `Arc`); handlers see it as [`State<T>`](crate::State).
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.0.insert(TypeId::of::<T>(), value);
        self
    }

    /// Pins the protocol version the server answers with, whatever the client asks for.
    /// A version this SDK does not speak is refused by [`build`](Self::build).
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
    pub fn around_request(mut self, hook: impl Fn(&RequestEvent) + Send + Sync + 'static) -> Self {
        self.around = Some(Arc::new(hook));
        self
    }

    /// Time limit of every tool invocation (default none); a tool's own timeout wins.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.config.tool_timeout = Some(timeout);
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

    /// Checks everything and builds the server.
    ///
    /// # Errors
    /// The first problem found: duplicate names, invalid names or schemas, an unsupported
    /// protocol version override, a redefined protocol method.
    pub fn build(mut self) -> Result<Server, BuildError> {
        if let Some(err) = self.errors.into_iter().next() {
            return Err(err);
        }
        if let Some(version) = self.protocol_version {
            let parsed = version
                .parse::<ProtocolVersion>()
                .map_err(|_| BuildError::UnsupportedProtocolVersion(version))?;
            self.config.protocol_version = Some(parsed);
        }
        Ok(Server {
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
                around: self.around,
                registries: Mutex::default(),
            }),
        })
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
            around: None,
            errors: Vec::new(),
        }
    }

    /// The server's `serverInfo`.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The capabilities `initialize` announces.
    pub fn capabilities(&self) -> ServerCapabilities {
        route::capabilities(&self.inner)
    }

    /// Registers (or replaces) a tool at run time and sends `notifications/tools/list_changed`
    /// to every session.
    ///
    /// # Errors
    /// An invalid name or schema.
    pub fn define_tool(&self, tool: impl Into<ToolDef>) -> Result<(), BuildError> {
        let def = tool.into().prepare()?;
        self.inner
            .update_catalog(|catalog| catalog.tools.insert(def.definition.name.clone(), def));
        self.notify_tools_list_changed();
        Ok(())
    }

    /// Removes a tool at run time (notifying sessions); `false` when there was none.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self
            .inner
            .update_catalog(|catalog| catalog.tools.shift_remove(name).is_some());
        if removed {
            self.notify_tools_list_changed();
        }
        removed
    }

    /// Registers (or replaces) a prompt at run time and notifies sessions.
    ///
    /// # Errors
    /// An invalid name.
    pub fn define_prompt(&self, prompt: impl Into<PromptDef>) -> Result<(), BuildError> {
        let def = prompt.into().prepare()?;
        self.inner
            .update_catalog(|catalog| catalog.prompts.insert(def.definition.name.clone(), def));
        self.notify_prompts_list_changed();
        Ok(())
    }

    /// Removes a prompt at run time (notifying sessions); `false` when there was none.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self
            .inner
            .update_catalog(|catalog| catalog.prompts.shift_remove(name).is_some());
        if removed {
            self.notify_prompts_list_changed();
        }
        removed
    }

    /// Registers (or replaces) a resource at run time and notifies sessions.
    pub fn define_resource(&self, resource: impl Into<ResourceDef>) {
        let def = resource.into();
        self.inner
            .update_catalog(|catalog| catalog.resources.insert(def.definition.uri.clone(), def));
        self.notify_resources_list_changed();
    }

    /// Removes a resource at run time (notifying sessions); `false` when there was none.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self
            .inner
            .update_catalog(|catalog| catalog.resources.shift_remove(uri).is_some());
        if removed {
            self.notify_resources_list_changed();
        }
        removed
    }

    /// Defines a custom method at run time.
    ///
    /// # Errors
    /// [`BuildError::MethodAlreadyDefined`] for protocol methods.
    pub fn define_custom_method<H, M>(
        &self,
        name: impl Into<String>,
        handler: H,
    ) -> Result<(), BuildError>
    where
        H: Handler<M>,
        H::Output: IntoJsonResult,
        M: 'static,
    {
        let name = name.into();
        if method::is_protocol_method(&name) {
            return Err(BuildError::MethodAlreadyDefined(name));
        }
        let handler = erase(handler, IntoJsonResult::into_json_result);
        self.inner
            .update_catalog(|catalog| catalog.custom.insert(name, handler));
        Ok(())
    }

    /// Sends `notifications/tools/list_changed` to every session.
    pub fn notify_tools_list_changed(&self) {
        self.inner.broadcast(&Frame::notification::<Value>(
            method::NOTIFICATION_TOOLS_LIST_CHANGED,
            None,
        ));
    }

    /// Sends `notifications/prompts/list_changed` to every session.
    pub fn notify_prompts_list_changed(&self) {
        self.inner.broadcast(&Frame::notification::<Value>(
            method::NOTIFICATION_PROMPTS_LIST_CHANGED,
            None,
        ));
    }

    /// Sends `notifications/resources/list_changed` to every session.
    pub fn notify_resources_list_changed(&self) {
        self.inner.broadcast(&Frame::notification::<Value>(
            method::NOTIFICATION_RESOURCES_LIST_CHANGED,
            None,
        ));
    }

    /// Sends `notifications/resources/updated` to the sessions subscribed to `uri` (or to a
    /// resource it lies under).
    pub fn notify_resource_updated(&self, uri: &str) {
        let frame = Frame::notification(
            method::NOTIFICATION_RESOURCES_UPDATED,
            Some(&serde_json::json!({ "uri": uri })),
        );
        for session in self.inner.sessions() {
            if session
                .data::<session::SessionState>()
                .is_some_and(|state| state.is_subscribed(uri))
            {
                session.notify(frame.clone());
            }
        }
    }

    /// Sends a log message to every session whose level lets it through (on its standalone
    /// stream). To log to one request's client, use [`RequestContext::log`]; to one session,
    /// [`notify_log_message_to`](Self::notify_log_message_to).
    pub fn notify_log_message(
        &self,
        level: LoggingLevel,
        data: impl Into<Value>,
        logger: Option<&str>,
    ) {
        let Some(frame) = log_frame(level, data.into(), logger) else {
            return;
        };
        for session in self.inner.sessions() {
            send_log(&session, level, &frame);
        }
    }

    /// Sends a log message to one session (on its standalone stream), when its level lets it
    /// through; `false` when no such session is live.
    pub fn notify_log_message_to(
        &self,
        session_id: &SessionId,
        level: LoggingLevel,
        data: impl Into<Value>,
        logger: Option<&str>,
    ) -> bool {
        let Some(session) = self
            .inner
            .sessions()
            .into_iter()
            .find(|s| s.id() == session_id)
        else {
            return false;
        };
        if let Some(frame) = log_frame(level, data.into(), logger) {
            send_log(&session, level, &frame);
        }
        true
    }

    /// Handles one JSON-RPC message in process, without a transport or session (like a
    /// stateless HTTP request); returns the response, or `None` for a notification. Must run
    /// inside an actix system (tools run in supervised actors).
    pub async fn handle_json(&self, json: &str) -> Option<String> {
        route::handle_detached(self.inner.clone(), json.as_bytes()).await
    }

    /// A tool's registered definition.
    pub fn tool_definition(&self, name: &str) -> Option<crate::protocol::Tool> {
        self.inner
            .catalog()
            .tools
            .get(name)
            .map(|def| def.definition.clone())
    }
}
