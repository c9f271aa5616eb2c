//! What the server serves: the [`Catalog`] of tools, prompts, resources, templates and custom
//! methods, replaced as a whole on every run-time change (copy on write), and the
//! [`ListCache`] of serialised `tools/list` results that every change invalidates.
//!
//! Filled by [`ServerBuilder`](crate::ServerBuilder); changed at run time by
//! [`Server::define_tool`] and friends (which notify sessions, see `server::notify`); read by
//! the router on every request.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;

use crate::error::BuildError;
use crate::protocol::{ProtocolVersion, method};
use crate::server::custom::{CustomHandler, IntoJsonResult};
use crate::server::handler::{Handler, erase};
use crate::server::prompt::PromptDef;
use crate::server::resource::{ResourceDef, ResourceTemplateDef};
use crate::server::tool::ToolDef;
use crate::server::{Server, ServerInner};

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
pub(crate) struct ListCache([OnceLock<Arc<str>>; 4]);

impl Clone for ListCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl ListCache {
    /// The result cached for `version`, built by `init` on first use.
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

impl ServerInner {
    /// The current catalog (a snapshot: later changes replace it, they do not alter it).
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Replaces the catalog by a changed copy (whose list cache starts empty).
    pub(crate) fn update_catalog<R>(&self, change: impl FnOnce(&mut Catalog) -> R) -> R {
        let mut slot = self
            .catalog
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut next = (**slot).clone();
        let result = change(&mut next);
        *slot = Arc::new(next);
        result
    }
}

impl Server {
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

    /// A tool's registered definition.
    pub fn tool_definition(&self, name: &str) -> Option<crate::protocol::Tool> {
        self.inner
            .catalog()
            .tools
            .get(name)
            .map(|def| def.definition.clone())
    }
}
