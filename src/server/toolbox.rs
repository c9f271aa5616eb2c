//! [`ToolBox`]: a module's share of a server (tools, prompts, resources and resource
//! templates, with the state they need), merged into a server as one value.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use crate::server::prompt::PromptDef;
use crate::server::resource::{ResourceDef, ResourceTemplateDef};
use crate::server::tool::ToolDef;

/// State a box brings: the value, its type, and the type's name for errors.
#[derive(Clone)]
pub(crate) struct BoxedState {
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
    pub(crate) value: Arc<dyn Any + Send + Sync>,
}

/// A set of tools, prompts, resources and resource templates defined together, with the
/// application state their handlers read: what one module of an application serves, merged
/// into a server with [`ServerBuilder::toolbox`](crate::ServerBuilder::toolbox).
///
/// A server merges as many boxes as it likes; a box may contain others ([`merge`](Self::merge)).
/// A name (a tool's, a prompt's, a resource's URI, a template's pattern) or a state type that
/// two parts register is an error of [`ServerBuilder::build`](crate::ServerBuilder::build),
/// never a silent replacement.
///
/// ```
/// use actix_mcp::prelude::*;
/// use actix_mcp::ToolBox;
///
/// /// The notes module: its tools and its store.
/// mod notes {
///     use actix_mcp::prelude::*;
///     use actix_mcp::ToolBox;
///     use std::sync::Mutex;
///
///     #[derive(Default)]
///     pub struct Store(pub Mutex<Vec<String>>);
///
///     pub fn toolbox() -> ToolBox {
///         ToolBox::new()
///             .state(Store::default())
///             .tool(ToolDef::new("count_notes", |State(store): State<Store>| async move {
///                 store.0.lock().map(|notes| notes.len().to_string()).unwrap_or_default()
///             }))
///     }
/// }
///
/// let server = Server::builder("notes", "1.0.0")
///     .toolbox(notes::toolbox())
///     .tool(ToolDef::new("ping", || async { "pong" }))
///     .build()
///     .expect("no name is used twice");
/// # let _ = server;
/// ```
#[derive(Clone, Default)]
pub struct ToolBox {
    pub(crate) tools: Vec<ToolDef>,
    pub(crate) prompts: Vec<PromptDef>,
    pub(crate) resources: Vec<ResourceDef>,
    pub(crate) templates: Vec<ResourceTemplateDef>,
    pub(crate) state: Vec<BoxedState>,
}

impl fmt::Debug for ToolBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolBox")
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| t.definition.name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field(
                "prompts",
                &self
                    .prompts
                    .iter()
                    .map(|p| p.definition.name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field(
                "resources",
                &self
                    .resources
                    .iter()
                    .map(|r| r.definition.uri.as_str())
                    .collect::<Vec<_>>(),
            )
            .field(
                "templates",
                &self
                    .templates
                    .iter()
                    .map(|t| t.definition.uri_template.as_str())
                    .collect::<Vec<_>>(),
            )
            .field(
                "state",
                &self.state.iter().map(|s| s.type_name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ToolBox {
    /// An empty box.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool (as [`ServerBuilder::tool`](crate::ServerBuilder::tool)).
    pub fn tool(mut self, tool: impl Into<ToolDef>) -> Self {
        self.tools.push(tool.into());
        self
    }

    /// Adds a prompt (as [`ServerBuilder::prompt`](crate::ServerBuilder::prompt)).
    pub fn prompt(mut self, prompt: impl Into<PromptDef>) -> Self {
        self.prompts.push(prompt.into());
        self
    }

    /// Adds a resource (as [`ServerBuilder::resource`](crate::ServerBuilder::resource)).
    pub fn resource(mut self, resource: impl Into<ResourceDef>) -> Self {
        self.resources.push(resource.into());
        self
    }

    /// Adds a resource template (as
    /// [`ServerBuilder::resource_template`](crate::ServerBuilder::resource_template)).
    pub fn resource_template(mut self, template: impl Into<ResourceTemplateDef>) -> Self {
        self.templates.push(template.into());
        self
    }

    /// Adds the state of type `T` this box's handlers read with [`State<T>`](crate::State).
    pub fn state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.state_arc(Arc::new(value))
    }

    /// Adds state the caller keeps a handle on too (shared through the `Arc`).
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.push(BoxedState {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            value,
        });
        self
    }

    /// Adds everything `other` holds to this box.
    pub fn merge(mut self, other: ToolBox) -> Self {
        self.tools.extend(other.tools);
        self.prompts.extend(other.prompts);
        self.resources.extend(other.resources);
        self.templates.extend(other.templates);
        self.state.extend(other.state);
        self
    }
}
