//! Extensions to the protocol (SEP-2133), added to a server through one public seam: an
//! [`Extension`] carries its identifier, the settings it advertises under
//! `capabilities.extensions`, its methods and notifications, its [`Middleware`], the
//! resources it serves beside the server's own, and what it needs of the server.
//!
//! [`ServerBuilder::extension`](crate::ServerBuilder::extension) adds one;
//! [`build`](crate::ServerBuilder::build) refuses, with a [`BuildError`] naming the extension:
//! an identifier that is not `vendor-prefix/name`, two extensions with one identifier, a method
//! that is a protocol method or already defined (by the server or another extension), and a
//! capability or extension it requires that the server does not have.
//!
//! ```
//! use actix_mcp::{Extension, Params, Server};
//! use serde_json::{Value, json};
//!
//! let search = Extension::new("com.example/search")
//!     .setting("maxResults", 50)
//!     .method("search/query", |Params(params): Params<Value>| async move {
//!         Ok::<_, actix_mcp::McpError>(json!({ "hits": [], "query": params["q"] }))
//!     })
//!     .requires_capability("tools");
//! // No tools registered: the extension's requirement is not met.
//! let refused = Server::builder("demo", "1.0").extension(search).build();
//! assert!(refused.is_err());
//! ```
//!
//! Spec: <https://modelcontextprotocol.io/seps/2133-extensions> (SEP-2133); the seam follows
//! SEP-3371 (consistent SDK extension points).

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::error::{BuildError, McpError};
use crate::protocol::{ReadResourceResult, Resource, ServerCapabilities};
use crate::server::custom::{CustomHandler, IntoJsonResult};
use crate::server::handler::{Handler, erase};
use crate::server::middleware::Middleware;

/// Resources an extension serves beside the server's own: listed after them by
/// `resources/list`, and asked before them by `resources/read`.
pub trait ResourceSource: Send + Sync + 'static {
    /// The resources to list.
    fn list(&self) -> Vec<Resource>;

    /// Reads `uri`: `None` when it is not one of this source's (the server then looks among
    /// its own), else its contents or the error to answer with.
    fn read(&self, uri: &str) -> Option<Result<ReadResourceResult, McpError>>;
}

/// An extension: its identifier, settings, methods, middleware, resources and requirements,
/// added with [`ServerBuilder::extension`](crate::ServerBuilder::extension).
#[must_use]
pub struct Extension {
    pub(crate) id: String,
    pub(crate) settings: Map<String, Value>,
    pub(crate) methods: IndexMap<String, CustomHandler>,
    pub(crate) middleware: Vec<Middleware>,
    pub(crate) resources: Option<Arc<dyn ResourceSource>>,
    pub(crate) requires: Vec<Requirement>,
    pub(crate) newest_only: bool,
    pub(crate) cacheable: Vec<(String, crate::protocol::CacheHints)>,
    /// Run once with the built server (for an extension of the SDK's that keeps a handle).
    pub(crate) bind: Vec<Bind>,
    errors: Vec<BuildError>,
}

/// What [`Extension::on_bind`] and [`Extension::check`] run.
pub(crate) type Bind =
    Box<dyn FnOnce(&Arc<crate::server::ServerInner>) -> Result<(), BuildError> + Send>;

impl fmt::Debug for Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extension")
            .field("id", &self.id)
            .field("settings", &self.settings)
            .field("methods", &self.methods.keys().collect::<Vec<_>>())
            .field("middleware", &self.middleware)
            .field("resources", &self.resources.is_some())
            .field("requires", &self.requires)
            .finish_non_exhaustive()
    }
}

/// What an extension needs of the server it is added to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Requirement {
    /// A capability (`tools`, `prompts`, `resources`, `logging`, `completions`).
    Capability(String),
    /// Another extension, by identifier.
    Extension(String),
}

impl Extension {
    /// An extension with its identifier (`vendor-prefix/name`, as
    /// `io.modelcontextprotocol/skills`), advertised with empty settings.
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        let mut errors = Vec::new();
        if let Err(reason) = crate::protocol::check_extension_id(&id) {
            errors.push(BuildError::InvalidName {
                name: id.clone(),
                reason,
            });
        }
        Self {
            id,
            settings: Map::new(),
            methods: IndexMap::new(),
            middleware: Vec::new(),
            resources: None,
            requires: Vec::new(),
            newest_only: false,
            cacheable: Vec::new(),
            bind: Vec::new(),
            errors,
        }
    }

    /// Its identifier.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// One setting advertised in `capabilities.extensions[id]`.
    pub fn setting(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.settings.insert(key.into(), value.into());
        self
    }

    /// Its settings, as advertised.
    pub fn settings(&self) -> &Map<String, Value> {
        &self.settings
    }

    /// A method (or notification) the extension serves; its handler takes the same arguments
    /// as a custom method's ([`ServerBuilder::custom_method`](crate::ServerBuilder::custom_method)).
    pub fn method<H, M>(mut self, name: impl Into<String>, handler: H) -> Self
    where
        H: Handler<M>,
        H::Output: IntoJsonResult,
        M: 'static,
    {
        let name = name.into();
        if crate::protocol::method::is_protocol_method(&name) || self.methods.contains_key(&name) {
            self.errors.push(BuildError::MethodAlreadyDefined(name));
        } else {
            self.methods
                .insert(name, erase(handler, IntoJsonResult::into_json_result));
        }
        self
    }

    /// Makes one of its methods' results cacheable for 2026-07-28 clients: a complete result
    /// gets `ttlMs` and `cacheScope` (these defaults, unless
    /// [`ServerBuilder::cache_hints`](crate::ServerBuilder::cache_hints) says otherwise).
    pub fn cacheable(
        mut self,
        method: impl Into<String>,
        hints: crate::protocol::CacheHints,
    ) -> Self {
        self.cacheable.push((method.into(), hints));
        self
    }

    /// The names of its methods.
    pub fn methods(&self) -> impl Iterator<Item = &str> {
        self.methods.keys().map(String::as_str)
    }

    /// A middleware the extension brings (run at the extension's place in the server's order).
    pub fn middleware(mut self, middleware: Middleware) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Resources the extension serves beside the server's own; a server with them declares
    /// the `resources` capability.
    pub fn resources(mut self, source: Arc<dyn ResourceSource>) -> Self {
        self.resources = Some(source);
        self
    }

    /// A capability the server must declare for this extension to work (`tools`, `prompts`,
    /// `resources`, `logging` or `completions`).
    pub fn requires_capability(mut self, capability: impl Into<String>) -> Self {
        self.requires
            .push(Requirement::Capability(capability.into()));
        self
    }

    /// Another extension this one needs on the same server.
    pub fn requires_extension(mut self, id: impl Into<String>) -> Self {
        self.requires.push(Requirement::Extension(id.into()));
        self
    }

    /// Advertised to clients of revision 2026-07-28 only (`server/discover`), not in the
    /// capabilities `initialize` answers to sessions of earlier revisions.
    pub fn newest_revision_only(mut self) -> Self {
        self.newest_only = true;
        self
    }

    /// Runs `bind` with the server once it is built.
    #[cfg_attr(not(feature = "skills"), allow(dead_code))]
    pub(crate) fn on_bind(
        mut self,
        bind: impl FnOnce(&Arc<crate::server::ServerInner>) + Send + 'static,
    ) -> Self {
        self.bind.push(Box::new(move |server| {
            bind(server);
            Ok(())
        }));
        self
    }

    /// Checks the built server (what the extension needs of its catalog): an error fails the
    /// build.
    pub(crate) fn check(
        mut self,
        check: impl FnOnce(&crate::server::ServerInner) -> Result<(), BuildError> + Send + 'static,
    ) -> Self {
        self.bind.push(Box::new(move |server| check(server)));
        self
    }

    /// Fails the build with `error` (a problem found by what made the extension).
    pub(crate) fn refuse(mut self, error: BuildError) -> Self {
        self.errors.push(error);
        self
    }

    /// The first problem found while it was built.
    pub(crate) fn take_error(&mut self) -> Option<BuildError> {
        (!self.errors.is_empty()).then(|| self.errors.remove(0))
    }
}

/// What a built server keeps of an extension: how to advertise it.
#[derive(Debug, Clone)]
pub(crate) struct Advertised {
    pub(crate) id: String,
    pub(crate) settings: Map<String, Value>,
    pub(crate) newest_only: bool,
    pub(crate) requires: Vec<Requirement>,
}

/// Adds the extensions to `capabilities.extensions` (those of the newest revision only when
/// `newest` is set).
pub(crate) fn advertise(
    capabilities: &mut ServerCapabilities,
    extensions: &[Advertised],
    newest: bool,
) {
    let mut entries = extensions
        .iter()
        .filter(|ext| newest || !ext.newest_only)
        .peekable();
    if entries.peek().is_none() {
        return;
    }
    let slot = capabilities
        .extra
        .entry("extensions")
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Value::Object(map) = slot {
        for ext in entries {
            map.entry(ext.id.clone())
                .or_insert_with(|| Value::Object(ext.settings.clone()));
        }
    }
}

/// Checks what every extension requires against the capabilities the server declares.
pub(crate) fn check_requirements(
    extensions: &[Advertised],
    capabilities: &ServerCapabilities,
) -> Result<(), BuildError> {
    let declared = serde_json::to_value(capabilities).unwrap_or(Value::Null);
    for ext in extensions {
        for requirement in &ext.requires {
            let met = match requirement {
                Requirement::Capability(name) => declared.get(name).is_some_and(|v| !v.is_null()),
                Requirement::Extension(id) => extensions.iter().any(|other| &other.id == id),
            };
            if !met {
                return Err(BuildError::ExtensionRequires {
                    extension: ext.id.clone(),
                    missing: match requirement {
                        Requirement::Capability(name) => format!("the `{name}` capability"),
                        Requirement::Extension(id) => format!("the extension `{id}`"),
                    },
                });
            }
        }
    }
    Ok(())
}
