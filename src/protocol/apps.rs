//! The MCP Apps extension's types (`io.modelcontextprotocol/ui`, SEP-1865): the `_meta.ui` of
//! a UI resource (`UiResourceMeta`: content security, permissions, dedicated domain, border)
//! and of a tool (`UiToolMeta`: the view that renders its results, who may call it).
//!
//! Spec: <https://github.com/modelcontextprotocol/ext-apps> (`specification/2026-01-26/apps.mdx`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The extension's identifier in `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an HTML view.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme of UI resources.
pub const UI_SCHEME: &str = "ui://";

/// The origins a view may reach, each list mapped by the host to its CSP directives; an empty
/// or absent list allows none (the host's restrictive default).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCsp {
    /// `connect-src`: fetch, XHR, WebSocket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// `img-src`, `script-src`, `style-src`, `font-src`, `media-src`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// `frame-src`: nested iframes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// `base-uri`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

/// Browser capabilities a view asks for (the host may grant them with the iframe's `allow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiPermissions {
    /// Camera access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<Map<String, Value>>,
    /// Microphone access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<Map<String, Value>>,
    /// Geolocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Map<String, Value>>,
    /// Writing to the clipboard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<Map<String, Value>>,
}

/// The `_meta.ui` of a UI resource (listed, and on its `resources/read` contents).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    /// Content security: the origins the view may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
    /// Browser capabilities the view asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// A dedicated sandbox origin (its format is the host's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host draws a border and background around the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

/// Who may call a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UiVisibility {
    /// The model (the agent's tool list).
    Model,
    /// The server's own views.
    App,
}

/// The `_meta.ui` of a tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiToolMeta {
    /// The UI resource that renders the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call it (absent: both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<UiVisibility>>,
}

impl UiToolMeta {
    /// Whether `who` may call the tool (the default visibility is both).
    pub fn visible_to(&self, who: UiVisibility) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|visibility| visibility.contains(&who))
    }
}

impl crate::protocol::Tool {
    /// The tool's `_meta.ui`, when it has a readable one.
    pub fn ui(&self) -> Option<UiToolMeta> {
        serde_json::from_value(self.meta.as_ref()?.get("ui")?.clone()).ok()
    }
}
