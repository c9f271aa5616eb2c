//! Initialization handshake: implementation info, capabilities, `initialize` params and result.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::meta::{JsonObject, Meta};

/// Colour theme an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// Meant for a light background.
    Light,
    /// Meant for a dark background.
    Dark,
}

/// An icon a client may show for an implementation, tool, prompt or resource (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// `https:` or `data:` URI of the image.
    pub src: String,
    /// MIME type override, e.g. `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes the icon is available in, e.g. `["48x48"]` or `["any"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// Theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon with only its `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }
}

/// Name and version of an MCP client or server (`clientInfo` / `serverInfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Human-readable display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version string.
    pub version: String,
    /// Human-readable description (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for display (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Website with more information (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with only `name` and `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            version: version.into(),
            description: None,
            icons: None,
            website_url: None,
        }
    }
}

/// Client capability `roots`: the client can answer `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// The client sends `notifications/roots/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Client capability `sampling`: the client can answer `sampling/createMessage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// The client honours `includeContext` values other than `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// The client accepts `tools` and `toolChoice` (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
}

/// Client capability `elicitation`: the client can answer `elicitation/create`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Form mode is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// URL mode is supported (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
}

/// Capabilities a client declares in `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Roots support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Sampling support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Elicitation support (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Experimental task support (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Value>,
    /// Capability keys this SDK does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientCapabilities {
    /// The client can answer `sampling/createMessage`.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// The client accepts `tools`/`toolChoice` in sampling requests.
    pub fn supports_sampling_tools(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.tools.is_some())
    }

    /// The client honours `includeContext` values other than `none`.
    pub fn supports_sampling_context(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.context.is_some())
    }

    /// The client supports form-mode elicitation (`form`, or `elicitation: {}` with neither key).
    pub fn supports_elicitation_form(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    /// The client supports URL-mode elicitation.
    pub fn supports_elicitation_url(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    }

    /// The client can answer `roots/list`.
    pub fn supports_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// The client sends `notifications/roots/list_changed`.
    pub fn supports_roots_list_changed(&self) -> bool {
        self.roots.as_ref().and_then(|r| r.list_changed) == Some(true)
    }
}

/// Server capability `prompts`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// The server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Server capability `resources`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server supports `resources/subscribe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Server capability `tools`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// The server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Capabilities a server declares in its `initialize` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// The server sends log messages and accepts `logging/setLevel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// The server accepts `completion/complete` (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// The server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// The server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Experimental task support (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Value>,
    /// Capability keys this SDK does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of the `initialize` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The newest revision the client supports (kept as a string: it may be unknown to us).
    pub protocol_version: String,
    /// Capabilities of the client.
    pub capabilities: ClientCapabilities,
    /// The client's name and version.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Result of the `initialize` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server chose.
    pub protocol_version: String,
    /// Capabilities of the server.
    pub capabilities: ServerCapabilities,
    /// The server's name and version.
    pub server_info: Implementation,
    /// Hints on how to use the server; may be put in the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn caps(v: Value) -> ClientCapabilities {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn elicitation_helpers() {
        let none = caps(json!({}));
        assert!(!none.supports_elicitation_form());
        assert!(!none.supports_elicitation_url());

        let empty = caps(json!({"elicitation": {}}));
        assert!(empty.supports_elicitation_form());
        assert!(!empty.supports_elicitation_url());

        let url_only = caps(json!({"elicitation": {"url": {}}}));
        assert!(!url_only.supports_elicitation_form());
        assert!(url_only.supports_elicitation_url());

        let both = caps(json!({"elicitation": {"form": {}, "url": {}}}));
        assert!(both.supports_elicitation_form());
        assert!(both.supports_elicitation_url());
    }

    #[test]
    fn sampling_and_roots_helpers() {
        let c = caps(json!({"sampling": {}, "roots": {"listChanged": true}}));
        assert!(c.supports_sampling());
        assert!(!c.supports_sampling_tools());
        assert!(!c.supports_sampling_context());
        assert!(c.supports_roots());
        assert!(c.supports_roots_list_changed());

        let c = caps(json!({"sampling": {"tools": {}, "context": {}}, "roots": {}}));
        assert!(c.supports_sampling_tools());
        assert!(c.supports_sampling_context());
        assert!(!c.supports_roots_list_changed());

        let c = caps(json!({}));
        assert!(!c.supports_sampling());
        assert!(!c.supports_roots());
    }

    #[test]
    fn unknown_capabilities_are_kept() {
        let v = json!({"roots": {}, "io.example/custom": {"x": 1}});
        let c = caps(v.clone());
        assert_eq!(c.extra.get("io.example/custom"), Some(&json!({"x": 1})));
        assert_eq!(serde_json::to_value(&c).unwrap(), v);
    }
}
