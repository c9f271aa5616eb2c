//! Run-time catalog changes every node of a cluster applies: tools made by a **factory**
//! registered by name on every node ([`ServerBuilder::tool_factory`]), from JSON arguments.
//! Closures cannot travel between processes; a factory's name and its arguments can.
//!
//! [`Server::define_shared_tool`] makes the tool here, records it (factory and arguments) in
//! the cluster's [`CatalogStore`] and tells the other nodes on the bus, which make the same
//! tool with their own factory; [`Server::remove_shared_tool`] removes it everywhere. A node
//! that joins later makes every recorded tool when it starts, and every node compares its
//! shared tools with the store on its keeper's tick (a third of the session idle timeout, at
//! most a minute), so a node that missed a message (the bus delivers at most once) catches up
//! within that time. A `tools/call` naming a tool this node does not know asks the store
//! before it answers "unknown tool", so a tool defined on one node is callable on any other
//! as soon as `define_shared_tool` has returned. Each node notifies its own sessions
//! (`notifications/tools/list_changed`) once it has applied the change, so a client told of
//! a change by a node lists a catalog that has it on that node.
//!
//! Without a cluster (or with one that has no catalog store) a shared tool is defined on this
//! node alone, as [`Server::define_tool`] defines it: the same code serves one node and many.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use actix_mcp_actors::dev::Frame;
use actix_mcp_actors::{StoreError, StoreFuture};

use crate::error::BuildError;
use crate::protocol::method;
use crate::server::listen::Change;
use crate::server::tool::ToolDef;
use crate::server::{Server, ServerInner};

/// The bus topic of a shared catalog change (payload: `{"define": SharedTool}` or
/// `{"remove": name}`).
pub(crate) const CATALOG_CHANGE: &str = "catalogChange";

/// Makes a tool from JSON arguments (see [`ServerBuilder::tool_factory`](crate::ServerBuilder::tool_factory)).
pub(crate) type ToolFactory = Arc<dyn Fn(&Value) -> Result<ToolDef, String> + Send + Sync>;

/// A tool of the shared catalog as the store keeps it: its name, the factory that makes it and
/// the arguments it was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedTool {
    /// The tool's name (as its factory named it).
    pub name: String,
    /// The name of the factory that makes it, registered on every node.
    pub factory: String,
    /// The arguments the factory makes it from.
    pub args: Value,
}

/// Where a cluster keeps its shared catalog, so that nodes joining later (and nodes that
/// missed a message) make the same tools. The Redis backend has one
/// ([`RedisCatalogStore`](crate::cluster::redis::RedisCatalogStore)); [`InMemoryCatalogStore`]
/// serves the nodes of one process.
pub trait CatalogStore: fmt::Debug + Send + Sync + 'static {
    /// Every shared tool.
    fn tools(&self) -> StoreFuture<'_, Vec<SharedTool>>;
    /// The shared tool named `name`, if there is one.
    fn tool<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<SharedTool>>;
    /// Records `tool`, replacing one of the same name.
    fn put_tool<'a>(&'a self, tool: &'a SharedTool) -> StoreFuture<'a, ()>;
    /// Forgets the shared tool named `name`; `false` when there was none.
    fn remove_tool<'a>(&'a self, name: &'a str) -> StoreFuture<'a, bool>;
}

/// A [`CatalogStore`] in memory: shared by the nodes of one process (tests, or several
/// endpoints of one server) through clones of its `Arc`.
#[derive(Debug, Default)]
pub struct InMemoryCatalogStore {
    tools: Mutex<indexmap::IndexMap<String, SharedTool>>,
}

impl InMemoryCatalogStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn tools_map(&self) -> std::sync::MutexGuard<'_, indexmap::IndexMap<String, SharedTool>> {
        self.tools
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl CatalogStore for InMemoryCatalogStore {
    fn tools(&self) -> StoreFuture<'_, Vec<SharedTool>> {
        let tools = self.tools_map().values().cloned().collect();
        Box::pin(async move { Ok(tools) })
    }

    fn tool<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<SharedTool>> {
        let tool = self.tools_map().get(name).cloned();
        Box::pin(async move { Ok(tool) })
    }

    fn put_tool<'a>(&'a self, tool: &'a SharedTool) -> StoreFuture<'a, ()> {
        self.tools_map().insert(tool.name.clone(), tool.clone());
        Box::pin(async { Ok(()) })
    }

    fn remove_tool<'a>(&'a self, name: &'a str) -> StoreFuture<'a, bool> {
        let removed = self.tools_map().shift_remove(name).is_some();
        Box::pin(async move { Ok(removed) })
    }
}

/// Why a shared catalog change failed.
#[derive(Debug, thiserror::Error)]
pub enum SharedCatalogError {
    /// No factory of that name is registered on this node.
    #[error("no tool factory named `{0}`")]
    UnknownFactory(String),
    /// The factory refused the arguments.
    #[error("tool factory `{factory}` refused its arguments: {reason}")]
    Refused {
        /// The factory.
        factory: String,
        /// What it said.
        reason: String,
    },
    /// The tool the factory made is invalid (its name or schema).
    #[error(transparent)]
    Invalid(#[from] BuildError),
    /// The cluster's catalog store failed; nothing was changed on any node.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A server's side of the shared catalog: its factories, the shared tools it made, and the
/// store once a cluster links one.
#[derive(Default)]
pub(crate) struct SharedCatalog {
    pub(crate) factories: HashMap<String, ToolFactory>,
    made: Mutex<HashMap<String, SharedTool>>,
    store: OnceLock<Arc<dyn CatalogStore>>,
}

impl fmt::Debug for SharedCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedCatalog")
            .field("factories", &self.factories.keys().collect::<Vec<_>>())
            .field("linked", &self.store.get().is_some())
            .finish()
    }
}

impl SharedCatalog {
    /// The shared catalog of a server with these factories.
    pub(crate) fn new(factories: HashMap<String, ToolFactory>) -> Self {
        Self {
            factories,
            ..Self::default()
        }
    }

    fn made(&self) -> std::sync::MutexGuard<'_, HashMap<String, SharedTool>> {
        self.made
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The store of the cluster this server's endpoint belongs to, once linked.
    pub(crate) fn store(&self) -> Option<&Arc<dyn CatalogStore>> {
        self.store.get()
    }

    /// Links the cluster's store (the first cluster to link wins).
    #[cfg(feature = "http")]
    pub(crate) fn link(&self, store: Arc<dyn CatalogStore>) {
        let _ = self.store.set(store);
    }
}

impl ServerInner {
    /// Makes a tool with the factory `factory` from `args`: the definition, ready to serve.
    fn make(&self, factory: &str, args: &Value) -> Result<ToolDef, SharedCatalogError> {
        let make = self
            .shared
            .factories
            .get(factory)
            .ok_or_else(|| SharedCatalogError::UnknownFactory(factory.to_owned()))?;
        let def = make(args)
            .map_err(|reason| SharedCatalogError::Refused {
                factory: factory.to_owned(),
                reason,
            })?
            .prepare()?;
        let name = &def.definition.name;
        crate::server::catalog::check_needs(&self.state, "tool", name, &def.state_needs)?;
        Ok(def)
    }

    /// Makes `tool` as recorded: its factory must make a tool of the recorded name.
    fn remake(&self, tool: &SharedTool) -> Result<ToolDef, SharedCatalogError> {
        let def = self.make(&tool.factory, &tool.args)?;
        if def.definition.name != tool.name {
            return Err(SharedCatalogError::Refused {
                factory: tool.factory.clone(),
                reason: format!(
                    "it made `{}` from the arguments recorded for `{}`",
                    def.definition.name, tool.name
                ),
            });
        }
        Ok(def)
    }

    /// Serves `def` (made from `tool`) here, and tells this node's sessions.
    fn install(&self, tool: SharedTool, def: ToolDef) {
        self.update_catalog(|catalog| catalog.tools.insert(tool.name.clone(), def));
        self.shared.made().insert(tool.name.clone(), tool);
        self.tools_changed_here();
    }

    /// Stops serving the shared tool `name` here (telling this node's sessions); `false` when
    /// this node made no such tool.
    fn uninstall(&self, name: &str) -> bool {
        if self.shared.made().remove(name).is_none() {
            return false;
        }
        self.update_catalog(|catalog| catalog.tools.shift_remove(name));
        self.tools_changed_here();
        true
    }

    /// `notifications/tools/list_changed` to the sessions and listen streams of this node.
    fn tools_changed_here(&self) {
        let frame = Frame::notification::<Value>(method::NOTIFICATION_TOOLS_LIST_CHANGED, None);
        for registry in self.registry_list() {
            registry.broadcast_here(frame.clone());
        }
        self.listeners.publish(&Change::Tools);
    }

    /// Applies a shared tool another node defined (or the store holds), unless this node made
    /// the same already.
    pub(crate) fn apply_shared(&self, tool: SharedTool) {
        if self.shared.made().get(&tool.name) == Some(&tool) {
            return;
        }
        match self.remake(&tool) {
            Ok(def) => self.install(tool, def),
            Err(err) => {
                tracing::warn!(tool = %tool.name, factory = %tool.factory, %err, "could not make a shared tool on this node");
            }
        }
    }

    /// Another node removed the shared tool `name`.
    #[cfg(feature = "http")]
    pub(crate) fn remove_shared_here(&self, name: &str) {
        self.uninstall(name);
    }

    /// Makes this node's shared tools those of `stored`: made when missing or different,
    /// removed when no longer stored.
    #[cfg(feature = "http")]
    pub(crate) fn reconcile_shared(&self, stored: Vec<SharedTool>) {
        let names: std::collections::HashSet<String> =
            stored.iter().map(|tool| tool.name.clone()).collect();
        let gone: Vec<String> = self
            .shared
            .made()
            .keys()
            .filter(|name| !names.contains(*name))
            .cloned()
            .collect();
        for name in gone {
            self.uninstall(&name);
        }
        for tool in stored {
            self.apply_shared(tool);
        }
    }

    /// A `tools/call` named `name`, which this node does not serve: the store may hold it (a
    /// node defined it a moment ago). `true` when it is served now.
    pub(crate) async fn fetch_shared(&self, name: &str) -> bool {
        let Some(store) = self.shared.store().cloned() else {
            return false;
        };
        match store.tool(name).await {
            Ok(Some(tool)) => {
                self.apply_shared(tool);
                self.catalog().tools.contains_key(name)
            }
            Ok(None) => false,
            Err(err) => {
                tracing::warn!(tool = %name, %err, "could not ask the catalog store for a tool");
                false
            }
        }
    }
}

impl Server {
    /// Defines a tool made by the factory `factory` (registered with
    /// [`ServerBuilder::tool_factory`](crate::ServerBuilder::tool_factory) on every node) from
    /// `args`, on every node of the cluster this server's endpoint belongs to, and on nodes
    /// that join later; returns the tool's name. Replaces a tool of the same name. Without a
    /// cluster catalog store it is defined here only. Each node makes the tool with its own
    /// factory when told on the bus, a node joining later makes it from the store, every node
    /// compares its shared tools with the store on its keeper's tick, and a `tools/call` of a
    /// tool a node has not heard of yet asks the store first, so the tool is callable on every
    /// node once this returns. See [`Cluster::catalog_store`](crate::cluster::Cluster::catalog_store)
    /// (feature `http`).
    ///
    /// # Errors
    /// An unknown factory, arguments the factory refuses, an invalid tool, or the store's
    /// failure (then no node changed).
    pub async fn define_shared_tool(
        &self,
        factory: &str,
        args: Value,
    ) -> Result<String, SharedCatalogError> {
        let def = self.inner.make(factory, &args)?;
        let tool = SharedTool {
            name: def.definition.name.clone(),
            factory: factory.to_owned(),
            args,
        };
        if let Some(store) = self.inner.shared.store() {
            store.put_tool(&tool).await?;
            self.inner
                .relay_protocol(CATALOG_CHANGE, serde_json::json!({ "define": &tool }));
        }
        let name = tool.name.clone();
        self.inner.install(tool, def);
        Ok(name)
    }

    /// Removes the shared tool `name` from every node; `false` when no node had it.
    ///
    /// # Errors
    /// The catalog store's failure (then no node changed).
    pub async fn remove_shared_tool(&self, name: &str) -> Result<bool, SharedCatalogError> {
        let mut removed = false;
        if let Some(store) = self.inner.shared.store() {
            removed = store.remove_tool(name).await?;
            self.inner
                .relay_protocol(CATALOG_CHANGE, serde_json::json!({ "remove": name }));
        }
        Ok(self.inner.uninstall(name) || removed)
    }

    /// The shared tools this node serves (see [`define_shared_tool`](Self::define_shared_tool)).
    pub fn shared_tools(&self) -> Vec<SharedTool> {
        let mut tools: Vec<SharedTool> = self.inner.shared.made().values().cloned().collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }
}
