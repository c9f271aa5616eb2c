//! Argument autocompletion for prompts and resource templates.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion>

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::meta::Meta;

/// Reference to a prompt by name (`type: "ref/prompt"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptReference {
    /// Name of the prompt.
    pub name: String,
    /// Human-readable display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Reference to a resource template by URI (`type: "ref/resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateReference {
    /// The URI or URI template.
    pub uri: String,
}

/// What is being completed: a prompt or a resource template, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Reference {
    /// `ref/prompt`.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `ref/resource`.
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

impl Reference {
    /// A reference to the prompt called `name`.
    pub fn prompt(name: impl Into<String>) -> Self {
        Self::Prompt(PromptReference {
            name: name.into(),
            title: None,
        })
    }

    /// A reference to the resource template (or resource) at `uri`.
    pub fn resource(uri: impl Into<String>) -> Self {
        Self::Resource(ResourceTemplateReference { uri: uri.into() })
    }
}

/// The argument being completed and its partial value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionArgument {
    /// Name of the argument.
    pub name: String,
    /// Value typed so far.
    pub value: String,
}

impl CompletionArgument {
    /// The argument `name`, with `value` typed so far.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// Values already chosen for other arguments (2025-06-18+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionContext {
    /// Resolved argument values by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteRequestParams {
    /// The prompt or template being completed.
    #[serde(rename = "ref")]
    pub r#ref: Reference,
    /// The argument being completed.
    pub argument: CompletionArgument,
    /// Other arguments' values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Completion suggestions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values, at most 100, best first.
    pub values: Vec<String>,
    /// Total number of matches, which may exceed `values.len()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// More matches exist than were returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// Result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
