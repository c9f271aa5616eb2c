//! Tools: definitions, listing and calling.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/tools>

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::ContentBlock;
use super::lifecycle::Icon;
use super::meta::{JsonObject, Meta};
use super::pagination::Cursor;
use super::tasks::TaskMetadata;

/// Whether a tool may be called as a task (2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Tasks must not be used (the default).
    Forbidden,
    /// The caller may use a task.
    Optional,
    /// The caller must use a task.
    Required,
}

/// Execution properties of a tool (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Task support; `forbidden` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// Untrusted hints about a tool's behaviour (2025-03-26+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (default true; meaningful only when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no extra effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// A tool the client can call, as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name, unique per server.
    pub name: String,
    /// Human-readable display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does; a hint for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; root `type` must be `"object"`.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent` (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons for display (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Execution properties (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Item metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
        }
    }

    /// The schema recommended for a tool without parameters:
    /// `{"type": "object", "additionalProperties": false}`.
    pub fn empty_input_schema() -> JsonObject {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), Value::from("object"));
        schema.insert("additionalProperties".into(), Value::Bool(false));
        schema
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the display title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the output schema.
    #[must_use]
    pub fn with_output_schema(mut self, schema: JsonObject) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Task support declared by the tool (`forbidden` when absent).
    pub fn task_support(&self) -> TaskSupport {
        self.execution
            .as_ref()
            .and_then(|e| e.task_support)
            .unwrap_or(TaskSupport::Forbidden)
    }
}

/// Result of `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools on this page.
    pub tools: Vec<Tool>,
    /// Cursor for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// Name of the tool.
    pub name: String,
    /// Arguments matching the tool's input schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Asks for the call to run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata (e.g. `progressToken`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Result of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result matching the tool's output schema (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed; the content describes the error (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CallToolResult {
    /// A successful result with the given content.
    pub fn success(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            structured_content: None,
            is_error: None,
            meta: None,
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::success(vec![ContentBlock::text(text)])
    }

    /// A tool execution error (`isError: true`) with one text block.
    pub fn error_text(text: impl Into<String>) -> Self {
        Self {
            is_error: Some(true),
            ..Self::text(text)
        }
    }

    /// A successful structured result; its JSON serialization is also put in a text block.
    pub fn from_structured(value: Value) -> Self {
        Self {
            structured_content: Some(value.clone()),
            ..Self::text(value.to_string())
        }
    }

    /// Whether this result reports a tool execution error.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// `structuredContent` deserialised as `T`; `None` when the result has none.
    ///
    /// # Errors
    /// When the structured content does not have `T`'s shape.
    pub fn structured<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Option<Result<T, serde_json::Error>> {
        self.structured_content.as_ref().map(T::deserialize)
    }

    /// The text of every text block, joined by newlines (what a model reads of the result).
    pub fn text_content(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                crate::protocol::ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn call_tool_result_helpers() {
        let ok = serde_json::to_value(CallToolResult::text("hi")).unwrap();
        assert_eq!(ok, json!({"content": [{"type": "text", "text": "hi"}]}));
        let err = CallToolResult::error_text("boom");
        assert!(err.is_error());
        assert_eq!(serde_json::to_value(&err).unwrap()["isError"], json!(true));
        let s = CallToolResult::from_structured(json!({"a": 1}));
        assert_eq!(s.content[0].as_text(), Some(r#"{"a":1}"#));
    }

    #[test]
    fn task_support_defaults_to_forbidden() {
        let tool = Tool::new("t", Tool::empty_input_schema());
        assert_eq!(tool.task_support(), TaskSupport::Forbidden);
    }
}
