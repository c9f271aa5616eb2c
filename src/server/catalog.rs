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
use crate::server::handler::{Handler, StateNeed, erase};
use crate::server::prompt::PromptDef;
use crate::server::resource::{ResourceDef, ResourceTemplateDef};
use crate::server::state::StateMap;
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

impl Catalog {
    /// Refuses a handler that reads application state of a type `state` does not hold.
    pub(crate) fn check_state(&self, state: &StateMap) -> Result<(), BuildError> {
        let tools = self
            .tools
            .values()
            .map(|def| ("tool", def.definition.name.as_str(), &def.state_needs));
        let prompts = self
            .prompts
            .values()
            .map(|def| ("prompt", def.definition.name.as_str(), &def.state_needs));
        let resources = self
            .resources
            .values()
            .map(|def| ("resource", def.definition.uri.as_str(), &def.state_needs));
        let templates = self.templates.iter().map(|def| {
            (
                "resource template",
                def.definition.uri_template.as_str(),
                &def.state_needs,
            )
        });
        for (kind, name, needs) in tools.chain(prompts).chain(resources).chain(templates) {
            check_needs(state, kind, name, needs)?;
        }
        Ok(())
    }
}

/// Refuses `needs` that `state` does not hold.
pub(crate) fn check_needs(
    state: &StateMap,
    kind: &'static str,
    name: &str,
    needs: &[StateNeed],
) -> Result<(), BuildError> {
    match needs.iter().find(|(id, _)| !state.contains(*id)) {
        Some((_, type_name)) => Err(BuildError::MissingState {
            kind,
            name: name.to_owned(),
            state: (*type_name).to_owned(),
        }),
        None => Ok(()),
    }
}

/// Serialised list results, one slot per protocol version. A clone starts empty, so every
/// copy-on-write change of the catalog invalidates it.
#[derive(Default)]
pub(crate) struct ListCache {
    v2024_11_05: OnceLock<Arc<str>>,
    v2025_03_26: OnceLock<Arc<str>>,
    v2025_06_18: OnceLock<Arc<str>>,
    v2025_11_25: OnceLock<Arc<str>>,
    v2026_07_28: OnceLock<Arc<str>>,
}

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
        self.slot(version).get_or_init(init).clone()
    }

    /// The slot of `version`. The match is exhaustive: a new protocol version does not compile
    /// until it has a slot of its own.
    fn slot(&self, version: ProtocolVersion) -> &OnceLock<Arc<str>> {
        match version {
            ProtocolVersion::V2024_11_05 => &self.v2024_11_05,
            ProtocolVersion::V2025_03_26 => &self.v2025_03_26,
            ProtocolVersion::V2025_06_18 => &self.v2025_06_18,
            ProtocolVersion::V2025_11_25 => &self.v2025_11_25,
            ProtocolVersion::V2026_07_28 => &self.v2026_07_28,
        }
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
        check_needs(
            &self.inner.state,
            "tool",
            &def.definition.name,
            &def.state_needs,
        )?;
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
        check_needs(
            &self.inner.state,
            "prompt",
            &def.definition.name,
            &def.state_needs,
        )?;
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
    ///
    /// # Errors
    /// An invalid scope ([`BuildError::InvalidScope`]), as the builder refuses it.
    pub fn define_resource(&self, resource: impl Into<ResourceDef>) -> Result<(), BuildError> {
        let def = resource.into().prepare()?;
        check_needs(
            &self.inner.state,
            "resource",
            &def.definition.uri,
            &def.state_needs,
        )?;
        self.inner
            .update_catalog(|catalog| catalog.resources.insert(def.definition.uri.clone(), def));
        self.notify_resources_list_changed();
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(cache: &ListCache, version: ProtocolVersion, fresh: &str) -> Arc<str> {
        cache.get_or_init(version, || Arc::from(fresh))
    }

    #[test]
    fn each_protocol_version_has_its_own_cached_list() {
        let cache = ListCache::default();
        for (i, version) in ProtocolVersion::ALL.iter().enumerate() {
            assert_eq!(
                &*cached(&cache, *version, &format!("v{i}")),
                format!("v{i}")
            );
        }
        for (i, version) in ProtocolVersion::ALL.iter().enumerate() {
            assert_eq!(
                &*cached(&cache, *version, "rebuilt"),
                format!("v{i}"),
                "{version} was rebuilt or shares a slot"
            );
        }
    }

    #[test]
    fn a_catalog_change_invalidates_the_cached_lists() {
        let server = Server::builder("cache-test", "1.0.0")
            .build()
            .unwrap_or_else(|err| panic!("{err}"));
        let old = ProtocolVersion::V2024_11_05;
        let new = ProtocolVersion::LATEST;
        let before = server.inner.catalog();
        assert_eq!(&*cached(&before.tools_list, old, "old list"), "old list");
        assert_eq!(&*cached(&before.tools_list, new, "new list"), "new list");
        let again = server.inner.catalog();
        assert_eq!(&*cached(&again.tools_list, new, "rebuilt"), "new list");

        server
            .define_tool(
                crate::ToolDef::new("echo", || async { String::new() }).description("Echoes"),
            )
            .unwrap_or_else(|err| panic!("{err}"));

        let after = server.inner.catalog();
        assert_eq!(
            &*cached(&after.tools_list, old, "old rebuilt"),
            "old rebuilt"
        );
        assert_eq!(
            &*cached(&after.tools_list, new, "new rebuilt"),
            "new rebuilt"
        );
        assert_eq!(
            &*cached(&before.tools_list, new, "rebuilt"),
            "new list",
            "an old snapshot keeps its own cache"
        );
    }
}
