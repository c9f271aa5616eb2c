//! MCP Apps on the server (`io.modelcontextprotocol/ui`, SEP-1865), built on the extension seam
//! ([`Extension`]): [`AppView`]s are `ui://` resources of `text/html;profile=mcp-app` with
//! their content security and permissions in `_meta.ui`; a tool names the view that renders
//! its results with [`ToolDef::ui`]; [`RequestContext::client_supports_apps`] tells a handler
//! whether the client renders views (a client that does not gets the tool's text content).
//!
//! [`build`](crate::ServerBuilder::build) refuses a view whose URI is not `ui://`, two views
//! with one URI, and a tool that links to a view the server does not serve.
//!
//! ```
//! use actix_mcp::protocol::apps::{UiCsp, UiToolMeta};
//! use actix_mcp::server::apps::{AppView, Apps};
//! use actix_mcp::{Server, ToolDef};
//!
//! let apps = Apps::new().view(
//!     AppView::new("ui://weather/dashboard", "Weather", "<!DOCTYPE html><html>…</html>")
//!         .csp(UiCsp { connect_domains: vec!["https://api.example.com".into()], ..UiCsp::default() }),
//! );
//! let server = Server::builder("weather", "1.0")
//!     .extension(apps.extension())
//!     .tool(
//!         ToolDef::new("forecast", || async { "Sunny" })
//!             .description("Today's forecast")
//!             .ui(UiToolMeta { resource_uri: Some("ui://weather/dashboard".into()), visibility: None }),
//!     )
//!     .build()?;
//! # Ok::<(), actix_mcp::BuildError>(())
//! ```
//!
//! Spec: <https://github.com/modelcontextprotocol/ext-apps> (`specification/2026-01-26/apps.mdx`).

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::error::{BuildError, McpError};
use crate::protocol::apps::{
    APP_MIME_TYPE, UI_EXTENSION, UI_SCHEME, UiCsp, UiPermissions, UiResourceMeta, UiToolMeta,
};
use crate::protocol::{ReadResourceResult, Resource, ResourceContents, TextResourceContents};
use crate::server::RequestContext;
use crate::server::extension::{Extension, ResourceSource};
use crate::server::tool::ToolDef;

/// One view: a `ui://` resource holding an HTML document.
#[derive(Debug, Clone)]
#[must_use]
pub struct AppView {
    uri: String,
    name: String,
    description: Option<String>,
    html: Arc<str>,
    meta: UiResourceMeta,
}

impl AppView {
    /// A view at `uri` (`ui://…`) named `name`, serving `html`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<Arc<str>>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            description: None,
            html: html.into(),
            meta: UiResourceMeta::default(),
        }
    }

    /// What the view shows.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The origins it may reach (absent: none).
    pub fn csp(mut self, csp: UiCsp) -> Self {
        self.meta.csp = Some(csp);
        self
    }

    /// The browser capabilities it asks for.
    pub fn permissions(mut self, permissions: UiPermissions) -> Self {
        self.meta.permissions = Some(permissions);
        self
    }

    /// A dedicated sandbox origin (its format is the host's).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.meta.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background around it.
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.meta.prefers_border = Some(border);
        self
    }

    /// Its URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its `_meta`: `{"ui": …}` (none when it declares nothing).
    fn meta(&self) -> Option<Map<String, Value>> {
        (self.meta != UiResourceMeta::default())
            .then(|| serde_json::to_value(&self.meta).ok())
            .flatten()
            .map(|ui| Map::from_iter([("ui".to_owned(), ui)]))
    }
}

/// The views of a server: see the [module](self).
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct Apps {
    views: IndexMap<String, AppView>,
    errors: Vec<BuildError>,
}

impl Apps {
    /// No views yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a view.
    pub fn view(mut self, view: AppView) -> Self {
        if !view.uri.starts_with(UI_SCHEME) || view.uri.len() == UI_SCHEME.len() {
            self.errors.push(BuildError::InvalidName {
                name: view.uri.clone(),
                reason: "a UI resource's uri is `ui://` and a path",
            });
        } else if self.views.contains_key(&view.uri) {
            self.errors.push(BuildError::Duplicate {
                kind: "UI resource",
                name: view.uri.clone(),
            });
        } else {
            self.views.insert(view.uri.clone(), view);
        }
        self
    }

    /// The extension: `io.modelcontextprotocol/ui` declared, the views listed by
    /// `resources/list` and served by `resources/read` (`text/html;profile=mcp-app`, with their
    /// `_meta.ui`), and every tool's `ui.resourceUri` checked against them when the server is
    /// built.
    pub fn extension(self) -> Extension {
        let Self { views, errors } = self;
        let views = Arc::new(views);
        let linked = views.clone();
        let mut extension = Extension::new(UI_EXTENSION)
            .resources(Arc::new(Views(views)))
            .check(move |server| {
                let catalog = server.catalog();
                for def in catalog.tools.values() {
                    let Some(uri) = def.definition().ui().and_then(|ui| ui.resource_uri) else {
                        continue;
                    };
                    if !linked.contains_key(&uri) && !catalog.resources.contains_key(&uri) {
                        return Err(BuildError::ExtensionRequires {
                            extension: UI_EXTENSION.to_owned(),
                            missing: format!(
                                "the UI resource `{uri}` that tool `{}` links to",
                                def.name()
                            ),
                        });
                    }
                }
                Ok(())
            });
        for error in errors {
            extension = extension.refuse(error);
        }
        extension
    }
}

/// The views, as resources.
struct Views(Arc<IndexMap<String, AppView>>);

impl ResourceSource for Views {
    fn list(&self) -> Vec<Resource> {
        self.0
            .values()
            .map(|view| {
                let mut resource = Resource::new(&view.uri, &view.name);
                resource.description.clone_from(&view.description);
                resource.mime_type = Some(APP_MIME_TYPE.to_owned());
                resource.meta = view.meta();
                resource
            })
            .collect()
    }

    fn read(&self, uri: &str) -> Option<Result<ReadResourceResult, McpError>> {
        let view = self.0.get(uri)?;
        Some(Ok(ReadResourceResult {
            contents: vec![ResourceContents::Text(TextResourceContents {
                uri: view.uri.clone(),
                mime_type: Some(APP_MIME_TYPE.to_owned()),
                text: view.html.to_string(),
                meta: view.meta(),
            })],
            meta: None,
        }))
    }
}

impl ToolDef {
    /// The tool's `_meta.ui`: the view that renders its results, and who may call it (see
    /// [`Apps`]).
    pub fn ui(self, ui: UiToolMeta) -> Self {
        let mut meta = self.definition().meta.clone().unwrap_or_default();
        if let Ok(ui) = serde_json::to_value(ui) {
            meta.insert("ui".to_owned(), ui);
        }
        self.meta(meta)
    }
}

impl RequestContext {
    /// Whether the client declared it renders MCP Apps views (`io.modelcontextprotocol/ui`
    /// with `text/html;profile=mcp-app` among its `mimeTypes`).
    pub fn client_supports_apps(&self) -> bool {
        self.client_capabilities()
            .extra
            .get("extensions")
            .and_then(|extensions| extensions.get(UI_EXTENSION))
            .and_then(|ui| ui.get("mimeTypes"))
            .and_then(Value::as_array)
            .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(APP_MIME_TYPE)))
    }
}
