//! Sampling: the server asks the client's LLM for a message (`sampling/createMessage`).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/client/sampling>

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::{AudioContent, ContentBlock, ImageContent, Role, TextContent};
use super::meta::{JsonObject, Meta};
use super::tasks::TaskMetadata;
use super::tools::Tool;

/// Either a single value or an array of values; both shapes are valid on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// A single value.
    One(T),
    /// An array of values.
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    /// The values as a slice.
    pub fn as_slice(&self) -> &[T] {
        match self {
            Self::One(v) => std::slice::from_ref(v),
            Self::Many(v) => v,
        }
    }

    /// The values as a vector.
    pub fn into_vec(self) -> Vec<T> {
        match self {
            Self::One(v) => vec![v],
            Self::Many(v) => v,
        }
    }
}

impl<T> From<T> for OneOrMany<T> {
    fn from(value: T) -> Self {
        Self::One(value)
    }
}

impl<T> From<Vec<T>> for OneOrMany<T> {
    fn from(values: Vec<T>) -> Self {
        Self::Many(values)
    }
}

/// A model's request to call a tool (`type: "tool_use"`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Id of this tool use, echoed by the matching `tool_result`.
    pub id: String,
    /// Name of the tool.
    pub name: String,
    /// Arguments for the tool.
    pub input: JsonObject,
    /// Item metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool use (`type: "tool_result"`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// Id of the `tool_use` this answers.
    pub tool_use_id: String,
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Item metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One block of a sampling message, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingMessageContentBlock {
    /// `text`.
    Text(TextContent),
    /// `image`.
    Image(ImageContent),
    /// `audio` (2025-03-26+).
    Audio(AudioContent),
    /// `tool_use` (2025-11-25).
    ToolUse(ToolUseContent),
    /// `tool_result` (2025-11-25).
    ToolResult(ToolResultContent),
}

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }
}

/// Content of a sampling message: one block or an array of blocks (arrays 2025-11-25+).
pub type SamplingContent = OneOrMany<SamplingMessageContentBlock>;

/// A message in a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// Item metadata (2025-11-25).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: SamplingMessageContentBlock::text(text).into(),
            meta: None,
        }
    }

    /// An assistant message with one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: SamplingMessageContentBlock::text(text).into(),
            meta: None,
        }
    }

    /// The text of every text block, joined by newlines.
    pub fn text_content(&self) -> String {
        joined_text(&self.content)
    }
}

/// A model name hint, matched as a substring by the client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// Full or partial model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Advisory preferences for model selection; priorities range 0.0 to 1.0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much to favour low cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much to favour low latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much to favour capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// Which MCP context the client should include in the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context (the default).
    None,
    /// Context from the requesting server (soft-deprecated).
    ThisServer,
    /// Context from every connected server (soft-deprecated).
    AllServers,
}

/// How the model may use the offered tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    Auto,
    /// The model must call a tool.
    Required,
    /// The model must not call a tool.
    None,
}

/// Tool choice for sampling with tools (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The mode; `auto` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// Model selection preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which MCP context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Maximum number of tokens to sample.
    pub max_tokens: u32,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Tools the model may call (2025-11-25; needs the client's `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use the tools (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Asks for the request to run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CreateMessageRequestParams {
    /// Params with messages and a token limit.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u32) -> Self {
        Self {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
        }
    }
}

/// Result of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who says it (normally `assistant`).
    pub role: Role,
    /// The sampled content.
    pub content: SamplingContent,
    /// Name of the model that produced it.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or a provider value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CreateMessageResult {
    /// The assistant's answer `text`, from `model`, ended by the model (`endTurn`): what a
    /// client's sampling handler returns for a plain text completion.
    pub fn assistant_text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: SamplingMessageContentBlock::text(text).into(),
            model: model.into(),
            stop_reason: Some("endTurn".into()),
            meta: None,
        }
    }

    /// The text of every text block, joined by newlines (what a tool reads of the answer).
    pub fn text_content(&self) -> String {
        joined_text(&self.content)
    }
}

/// The text of every text block of `content`, joined by newlines.
fn joined_text(content: &SamplingContent) -> String {
    content
        .as_slice()
        .iter()
        .filter_map(|block| match block {
            SamplingMessageContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
