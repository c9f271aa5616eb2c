//! The MCP server: [`Server::builder`] registers tools, prompts, resources, templates,
//! handlers, hooks and application state; the built [`Server`] is served over stdio
//! ([`Server::serve_stdio`]) or Streamable HTTP ([`Server::http`]), or driven in process
//! ([`Server::handle_json`]).
//!
//! This module holds [`Server`] itself and the state its clones share (`ServerInner`).
//! Beside it: `builder` ([`ServerBuilder`]), `catalog` (what is served, and run-time changes),
//! `notify` (server-wide notifications), `hooks` (reporter, around-request hook and what they
//! receive), `custom` (custom methods), `config` and `state` (settings and application state),
//! `route` (the method router), `context` ([`RequestContext`]), `handler` (extractors),
//! `tool`, `prompt`, `resource`, `uri_template`, `pagination`, `session`, `tasks` (the
//! Tasks extension), and `auth` (bearer-protected HTTP endpoints).

pub mod apps;
pub mod auth;
pub(crate) mod builder;
pub(crate) mod catalog;
pub(crate) mod config;
pub(crate) mod context;
pub(crate) mod custom;
pub(crate) mod elicit;
pub(crate) mod extension;
pub(crate) mod handler;
pub(crate) mod hooks;
pub(crate) mod listen;
pub(crate) mod middleware;
pub(crate) mod mrtr;
pub(crate) mod notify;
pub(crate) mod origin;
pub(crate) mod pagination;
pub(crate) mod prompt;
pub(crate) mod relay;
pub(crate) mod report;
pub(crate) mod resource;
pub(crate) mod route;
pub(crate) mod session;
pub(crate) mod shared;
#[cfg(feature = "skills")]
pub mod skills;
pub(crate) mod state;
pub mod tasks;
pub(crate) mod tool;
pub(crate) mod toolbox;
pub(crate) mod uri_template;

use std::fmt;
use std::sync::{Arc, Mutex, RwLock};

use actix_mcp_actors::RegistryHandle;

use crate::protocol::{Implementation, ProtocolVersion, ServerCapabilities};
use crate::server::catalog::Catalog;
use crate::server::config::ServerConfig;
use crate::server::hooks::{CompletionHandler, Reporter, RootsChangedHandler, UriHandler};
use crate::server::resource::ReadHandler;
use crate::server::state::StateMap;

pub use builder::ServerBuilder;
pub use context::RequestContext;
pub use custom::IntoJsonResult;
pub use elicit::Elicited;
pub use extension::{Extension, ResourceSource};
pub use hooks::{ErrorSite, ExceptionReport, RequestEvent};
pub use middleware::{Flow, Inbound, InboundNotification, Middleware, Outcome};
pub use shared::{CatalogStore, InMemoryCatalogStore, SharedCatalogError, SharedTool};

/// What every clone of a [`Server`] shares: its identity, settings, state, catalog, hooks and
/// the transports serving it. Built by [`ServerBuilder::build`].
pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: Option<ServerCapabilities>,
    pub(crate) config: ServerConfig,
    pub(crate) state: StateMap,
    /// What is served, replaced as a whole on every change (see `catalog`).
    catalog: RwLock<Arc<Catalog>>,
    pub(crate) read_fallback: Option<ReadHandler>,
    pub(crate) completion: Option<CompletionHandler>,
    pub(crate) on_subscribe: Option<UriHandler>,
    pub(crate) on_unsubscribe: Option<UriHandler>,
    pub(crate) on_roots_changed: Option<RootsChangedHandler>,
    pub(crate) reporter: Option<Reporter>,
    /// The middleware, in order (the around-request hook is one).
    pub(crate) middleware: middleware::Chain,
    /// The extensions, as advertised.
    pub(crate) extensions: Vec<extension::Advertised>,
    /// The resources extensions serve beside the server's own.
    pub(crate) resource_sources: Vec<Arc<dyn extension::ResourceSource>>,
    /// The registries of every transport serving this server: the audience of server-wide
    /// notifications.
    registries: Mutex<Vec<RegistryHandle>>,
    /// The open `subscriptions/listen` streams: the other audience of change notifications.
    pub(crate) listeners: listen::Listeners,
    /// `info` as JSON text (see [`ServerInner::info_json`]).
    info_json: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
    /// Sealed `requestState` keys and the park of implicit-style calls (MRTR).
    pub(crate) mrtr: mrtr::MrtrState,
    /// The Tasks extension, when enabled.
    pub(crate) tasks: Option<Arc<tasks::TaskService>>,
    /// The registry in-process calls ([`Server::handle_json`]) run under, started on first use.
    pub(crate) in_process: std::sync::OnceLock<RegistryHandle>,
    /// Tool factories and the tools made with them on every node (see `shared`).
    pub(crate) shared: shared::SharedCatalog,
}

impl ServerInner {
    /// `serverInfo` as JSON text, serialised once.
    pub(crate) fn info_json(&self) -> &serde_json::value::RawValue {
        self.info_json.get_or_init(|| {
            serde_json::value::to_raw_value(&self.info).unwrap_or_else(|_| {
                serde_json::value::RawValue::from_string("{}".to_owned())
                    .unwrap_or_else(|_| unreachable!("`{{}}` is JSON"))
            })
        })
    }

    /// Whether anything here serves resources (the `resources` capability, when derived):
    /// resources, templates, a read fallback, an extension's resources.
    pub(crate) fn serves_resources(&self, catalog: &Catalog) -> bool {
        !catalog.resources.is_empty()
            || !catalog.templates.is_empty()
            || self.read_fallback.is_some()
            || !self.resource_sources.is_empty()
    }

    /// The version a session asking for `requested` is served under: the pinned one, else the
    /// requested one when it is a supported stateful revision, else the latest stateful one.
    pub(crate) fn effective_version(&self, requested: &str) -> ProtocolVersion {
        if let Some(pinned) = self.config.protocol_version {
            return pinned;
        }
        ProtocolVersion::negotiate(requested)
    }

    /// The registry of in-process calls and a dispatch for them.
    pub(crate) fn in_process(self: &Arc<Self>) -> (RegistryHandle, Arc<route::McpDispatch>) {
        let registry = self
            .in_process
            .get_or_init(|| {
                actix_mcp_actors::dev::Registry::start(
                    actix_mcp_actors::dev::RegistryConfig::default(),
                    Arc::default(),
                    None,
                )
            })
            .clone();
        // Made per call: kept here, it would keep the server alive forever.
        let dispatch = route::McpDispatch::new(self.clone(), route::Network::InProcess);
        (registry, dispatch)
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

impl Server {
    /// The server's `serverInfo`.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The capabilities `initialize` announces.
    pub fn capabilities(&self) -> ServerCapabilities {
        route::capabilities(&self.inner)
    }

    /// The names of the server's middleware, in the order their `before` hooks run (see
    /// [`Middleware`]).
    pub fn middleware(&self) -> Vec<&str> {
        self.inner.middleware.names()
    }

    /// The identifiers of the server's extensions, in the order they were added.
    pub fn extensions(&self) -> Vec<&str> {
        self.inner
            .extensions
            .iter()
            .map(|ext| ext.id.as_str())
            .collect()
    }

    /// Handles one JSON-RPC message in process, without a transport or session (like a
    /// stateless HTTP request); returns the response, or `None` for a notification. Must run
    /// inside an actix system (tools run in supervised actors).
    pub async fn handle_json(&self, json: &str) -> Option<String> {
        route::handle_in_process(&self.inner, json.as_bytes()).await
    }
}
