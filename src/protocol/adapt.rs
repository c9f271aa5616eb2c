//! Down-levelling values for older protocol revisions.
//!
//! Types in this module tree follow revision 2025-11-25. Before sending one to a peer that
//! negotiated an older revision, call [`ForVersion::adapt_to`]: it removes fields that revision
//! lacks and rewrites content kinds it cannot represent (audio before 2025-03-26, resource links
//! before 2025-06-18, tool use and block arrays in sampling before 2025-11-25) as text.
//! Result-level `_meta` exists in every revision and is kept; `_meta` on items (tools,
//! resources, content blocks, ...) arrived in 2025-06-18 and is removed before it. What
//! 2026-07-28 removed goes the same way for it (tool `execution`, `task` and a URL
//! elicitation's `elicitationId`).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/changelog>

use serde_json::Value;

use super::content::{Annotations, ContentBlock, TextContent};
use super::elicitation::ElicitRequestParams;
use super::lifecycle::{ClientCapabilities, Implementation, InitializeResult, ServerCapabilities};
use super::meta::Meta;
use super::prompts::{GetPromptResult, ListPromptsResult, Prompt, PromptMessage};
use super::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use super::sampling::{
    CreateMessageRequestParams, CreateMessageResult, OneOrMany, SamplingContent, SamplingMessage,
    SamplingMessageContentBlock,
};
use super::tools::{CallToolResult, ListToolsResult, Tool};
use super::version::ProtocolVersion;

/// A value that can be adapted to what another protocol revision can represent.
pub trait ForVersion {
    /// Removes or rewrites whatever revision `v` does not have; a no-op for 2025-11-25, the
    /// revision the types follow.
    fn adapt_to(&mut self, v: ProtocolVersion);

    /// By-value form of [`ForVersion::adapt_to`].
    #[must_use]
    fn adapted_to(mut self, v: ProtocolVersion) -> Self
    where
        Self: Sized,
    {
        self.adapt_to(v);
        self
    }
}

impl<T: ForVersion> ForVersion for Vec<T> {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.iter_mut().for_each(|item| item.adapt_to(v));
    }
}

impl<T: ForVersion> ForVersion for Option<T> {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        if let Some(item) = self {
            item.adapt_to(v);
        }
    }
}

fn item_meta(meta: &mut Option<Meta>, v: ProtocolVersion) {
    if !v.has_item_meta() {
        *meta = None;
    }
}

fn clear_unless<T>(field: &mut Option<T>, keep: bool) {
    if !keep {
        *field = None;
    }
}

impl ForVersion for Annotations {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        clear_unless(&mut self.last_modified, v >= ProtocolVersion::V2025_06_18);
    }
}

impl ForVersion for Implementation {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        clear_unless(&mut self.title, v.has_titles());
        clear_unless(&mut self.description, v.has_icons());
        clear_unless(&mut self.icons, v.has_icons());
        clear_unless(&mut self.website_url, v.has_icons());
    }
}

impl ForVersion for ServerCapabilities {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        clear_unless(&mut self.completions, v.has_completions_capability());
        clear_unless(&mut self.tasks, v.has_tasks());
    }
}

impl ForVersion for ClientCapabilities {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        clear_unless(&mut self.elicitation, v.has_elicitation());
        clear_unless(&mut self.tasks, v.has_tasks());
        if let Some(sampling) = &mut self.sampling {
            clear_unless(&mut sampling.tools, v.has_sampling_tools());
        }
        if let Some(elicitation) = &mut self.elicitation {
            clear_unless(&mut elicitation.url, v.has_url_elicitation());
        }
    }
}

impl ForVersion for InitializeResult {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.capabilities.adapt_to(v);
        self.server_info.adapt_to(v);
    }
}

impl ForVersion for Tool {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        clear_unless(&mut self.title, v.has_titles());
        clear_unless(&mut self.output_schema, v.has_structured_content());
        // Before 2026-07-28 an output schema's root is an object: another is not shown.
        if v.has_handshake()
            && self
                .output_schema
                .as_ref()
                .is_some_and(|schema| schema.get("type").and_then(Value::as_str) != Some("object"))
        {
            self.output_schema = None;
        }
        clear_unless(&mut self.annotations, v.has_tool_annotations());
        clear_unless(&mut self.icons, v.has_icons());
        clear_unless(&mut self.execution, v.has_tasks());
        item_meta(&mut self.meta, v);
    }
}

impl ForVersion for ListToolsResult {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.tools.adapt_to(v);
    }
}

impl ForVersion for ResourceContents {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        item_meta(self.meta_mut(), v);
    }
}

impl ForVersion for Resource {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        clear_unless(&mut self.title, v.has_titles());
        clear_unless(&mut self.icons, v.has_icons());
        self.annotations.adapt_to(v);
        item_meta(&mut self.meta, v);
    }
}

impl ForVersion for ResourceTemplate {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        clear_unless(&mut self.title, v.has_titles());
        clear_unless(&mut self.icons, v.has_icons());
        self.annotations.adapt_to(v);
        item_meta(&mut self.meta, v);
    }
}

impl ForVersion for ListResourcesResult {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.resources.adapt_to(v);
    }
}

impl ForVersion for ListResourceTemplatesResult {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.resource_templates.adapt_to(v);
    }
}

impl ForVersion for ReadResourceResult {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.contents.adapt_to(v);
    }
}

/// A one-line text stand-in for a block an older revision cannot carry.
fn describe(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[image: {}]", i.mime_type),
        ContentBlock::Audio(a) => format!("[audio: {}]", a.mime_type),
        ContentBlock::ResourceLink(r) => r.uri.clone(),
        ContentBlock::Resource(r) => format!("[resource: {}]", r.resource.uri()),
    }
}

fn text_block(text: String, annotations: Option<Annotations>) -> TextContent {
    TextContent {
        text,
        annotations,
        meta: None,
    }
}

impl ForVersion for ContentBlock {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        let replacement = match self {
            Self::Audio(a) if !v.has_audio_content() => Some(text_block(
                format!("[audio: {}]", a.mime_type),
                a.annotations.take(),
            )),
            Self::ResourceLink(r) if !v.has_resource_links() => {
                Some(text_block(r.uri.clone(), r.annotations.take()))
            }
            _ => None,
        };
        if let Some(text) = replacement {
            *self = Self::Text(text);
        }
        match self {
            Self::Text(c) => {
                c.annotations.adapt_to(v);
                item_meta(&mut c.meta, v);
            }
            Self::Image(c) => {
                c.annotations.adapt_to(v);
                item_meta(&mut c.meta, v);
            }
            Self::Audio(c) => {
                c.annotations.adapt_to(v);
                item_meta(&mut c.meta, v);
            }
            Self::ResourceLink(r) => r.adapt_to(v),
            Self::Resource(c) => {
                c.resource.adapt_to(v);
                c.annotations.adapt_to(v);
                item_meta(&mut c.meta, v);
            }
        }
    }
}

impl ForVersion for CallToolResult {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        // Before 2026-07-28 `structuredContent` is an object (older revisions have none): any
        // other goes, kept visible in `content` for clients that read only that.
        let keeps = v.has_structured_content()
            && (!v.has_handshake()
                || self
                    .structured_content
                    .as_ref()
                    .is_none_or(Value::is_object));
        if !keeps
            && let Some(structured) = self.structured_content.take()
            && self.content.is_empty()
        {
            self.content
                .push(ContentBlock::text(structured.to_string()));
        }
        self.content.adapt_to(v);
    }
}

impl ForVersion for Prompt {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        clear_unless(&mut self.title, v.has_titles());
        clear_unless(&mut self.icons, v.has_icons());
        if let Some(arguments) = &mut self.arguments {
            for argument in arguments {
                clear_unless(&mut argument.title, v.has_titles());
            }
        }
        item_meta(&mut self.meta, v);
    }
}

impl ForVersion for ListPromptsResult {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.prompts.adapt_to(v);
    }
}

impl ForVersion for PromptMessage {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.content.adapt_to(v);
    }
}

impl ForVersion for GetPromptResult {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.messages.adapt_to(v);
    }
}

impl ForVersion for SamplingMessageContentBlock {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        let replacement = match self {
            Self::Audio(a) if !v.has_audio_content() => Some(text_block(
                format!("[audio: {}]", a.mime_type),
                a.annotations.take(),
            )),
            Self::ToolUse(t) if !v.has_sampling_tools() => Some(text_block(
                format!(
                    "[tool_use {} ({}): {}]",
                    t.name,
                    t.id,
                    serde_json::Value::Object(t.input.clone())
                ),
                None,
            )),
            Self::ToolResult(r) if !v.has_sampling_tools() => {
                let body: Vec<String> = r.content.iter().map(describe).collect();
                let status = if r.is_error == Some(true) {
                    " error"
                } else {
                    ""
                };
                Some(text_block(
                    format!(
                        "[tool_result{status} ({})]: {}",
                        r.tool_use_id,
                        body.join("\n")
                    ),
                    None,
                ))
            }
            _ => None,
        };
        if let Some(text) = replacement {
            *self = Self::Text(text);
        }
        match self {
            Self::Text(c) => {
                c.annotations.adapt_to(v);
                item_meta(&mut c.meta, v);
            }
            Self::Image(c) => {
                c.annotations.adapt_to(v);
                item_meta(&mut c.meta, v);
            }
            Self::Audio(c) => {
                c.annotations.adapt_to(v);
                item_meta(&mut c.meta, v);
            }
            Self::ToolUse(_) | Self::ToolResult(_) => {}
        }
    }
}

impl ForVersion for SamplingContent {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        match self {
            Self::One(block) => block.adapt_to(v),
            Self::Many(blocks) => {
                blocks.adapt_to(v);
                if !v.has_sampling_tools() {
                    // Before 2025-11-25 content is a single block: merge into one text block.
                    *self = Self::One(match blocks.len() {
                        1 => blocks.remove(0),
                        _ => SamplingMessageContentBlock::text(join_texts(blocks)),
                    });
                }
            }
        }
    }
}

fn join_texts(blocks: &[SamplingMessageContentBlock]) -> String {
    let texts: Vec<String> = blocks
        .iter()
        .map(|b| match b {
            SamplingMessageContentBlock::Text(t) => t.text.clone(),
            SamplingMessageContentBlock::Image(i) => format!("[image: {}]", i.mime_type),
            SamplingMessageContentBlock::Audio(a) => format!("[audio: {}]", a.mime_type),
            SamplingMessageContentBlock::ToolUse(t) => format!("[tool_use {}]", t.name),
            SamplingMessageContentBlock::ToolResult(r) => {
                format!("[tool_result {}]", r.tool_use_id)
            }
        })
        .collect();
    texts.join("\n")
}

impl ForVersion for SamplingMessage {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        if !v.has_sampling_tools() {
            self.meta = None;
        }
        self.content.adapt_to(v);
    }
}

impl ForVersion for CreateMessageRequestParams {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        if !v.has_sampling_tools() {
            self.tools = None;
            self.tool_choice = None;
            // Split multi-block messages into consecutive single-block messages of the same role.
            let messages = std::mem::take(&mut self.messages);
            for message in messages {
                match message.content {
                    OneOrMany::Many(blocks) if !blocks.is_empty() => {
                        for block in blocks {
                            self.messages.push(SamplingMessage {
                                role: message.role,
                                content: OneOrMany::One(block),
                                meta: None,
                            });
                        }
                    }
                    content => self.messages.push(SamplingMessage { content, ..message }),
                }
            }
        }
        clear_unless(&mut self.task, v.has_tasks());
        if let Some(tools) = &mut self.tools {
            tools.adapt_to(v);
        }
        self.messages.adapt_to(v);
    }
}

impl ForVersion for ElicitRequestParams {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        match self {
            Self::Form(form) => clear_unless(&mut form.task, v.has_tasks()),
            Self::Url(url) => {
                clear_unless(&mut url.elicitation_id, v.has_elicitation_ids());
                clear_unless(&mut url.task, v.has_tasks());
            }
        }
    }
}

impl ForVersion for CreateMessageResult {
    fn adapt_to(&mut self, v: ProtocolVersion) {
        self.content.adapt_to(v);
    }
}
