//! Typed MCP protocol model: plain data types with public fields, every one of them here, at
//! `actix_mcp::protocol::Type`. The namespaces below hold what is not a type: method names
//! ([`method`]), error codes ([`code`]) and revision 2026-07-28's `_meta` keys and error
//! objects ([`v2026`]).
//!
//! Every type serializes to exactly the JSON of the 2025-11-25 schema. Optional fields are
//! `Option`s that are omitted when `None`; `_meta` maps keep unknown keys. Older revisions are
//! served by [`ForVersion::adapt_to`], which strips or rewrites what a revision lacks.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25>

mod adapt;
/// MCP Apps (`io.modelcontextprotocol/ui`): the `_meta.ui` of views and tools.
pub mod apps;
mod cancellation;
pub mod code;
mod completion;
mod content;
mod elicitation;
mod lifecycle;
mod logging;
#[cfg(any(feature = "server", feature = "client"))]
mod message;
mod meta;
pub mod method;
mod pagination;
mod progress;
mod prompts;
mod resources;
mod roots;
mod sampling;
#[cfg(all(feature = "skills", any(feature = "server", feature = "client")))]
pub(crate) mod skill_frontmatter;
/// The Skills extension (`io.modelcontextprotocol/skills`): skill entries.
pub mod skills;
mod task_extension;
mod tasks;
mod tools;
pub mod v2026;
mod version;

/// The module of revision 2026-07-28's `_meta` keys and error objects, by its old name.
#[deprecated(
    since = "0.2.0",
    note = "renamed to `protocol::v2026`; its types are at `protocol::` with all the others"
)]
#[doc(hidden)]
pub mod modern {
    pub use super::v2026::*;
    pub use super::{
        CacheHints, CacheScope, DiscoverResult, InputRequest, InputRequests, InputRequiredResult,
        InputResponses, ListenRequestParams, RequestMeta, ResultType, SubscriptionFilter,
    };
}

pub use actix_mcp_actors::RequestId;

pub use adapt::ForVersion;
pub use cancellation::CancelledNotificationParams;
pub use completion::{
    CompleteRequestParams, CompleteResult, Completion, CompletionArgument, CompletionContext,
    PromptReference, Reference, ResourceTemplateReference,
};
pub use content::{
    Annotations, AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceLink, Role,
    TextContent,
};
pub use elicitation::{
    BooleanSchema, ElicitAction, ElicitRequestFormParams, ElicitRequestParams,
    ElicitRequestURLParams, ElicitResult, ElicitationCompleteNotificationParams, ElicitationSchema,
    EnumOption, LegacyTitledEnumSchema, NumberSchema, NumberType, ObjectType,
    PrimitiveSchemaDefinition, StringFormat, StringSchema, StringType, TitledEnumItems,
    TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledEnumItems,
    UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema, UrlElicitationRequiredErrorData,
};
pub use lifecycle::{
    ClientCapabilities, ElicitationCapability, Icon, IconTheme, Implementation,
    InitializeRequestParams, InitializeResult, PromptsCapability, ResourcesCapability,
    RootsCapability, SamplingCapability, ServerCapabilities, ToolsCapability,
};
pub use logging::{LoggingLevel, LoggingMessageNotificationParams, SetLevelRequestParams};
#[cfg(any(feature = "server", feature = "client"))]
pub use message::MessageView;
#[cfg(any(feature = "server", feature = "client"))]
pub(crate) use meta::check_extension_id;
pub(crate) use meta::member;
#[cfg(feature = "server")]
pub(crate) use meta::members;
#[cfg(feature = "server")]
pub(crate) use meta::take_member;
pub use meta::{JsonObject, Meta, PROGRESS_TOKEN_KEY, ProgressToken, progress_token};
pub use pagination::{Cursor, PaginatedRequestParams};
pub use progress::ProgressNotificationParams;
pub use prompts::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage,
};
pub use resources::{
    BlobResourceContents, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParams, SubscribeRequestParams, TextResourceContents,
    UnsubscribeRequestParams,
};
pub use roots::{ListRootsResult, Root};
pub use sampling::{
    CreateMessageRequestParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences,
    OneOrMany, SamplingContent, SamplingMessage, SamplingMessageContentBlock, ToolChoice,
    ToolChoiceMode, ToolResultContent, ToolUseContent,
};
pub use task_extension::{DetailedTask, TaskRequestParams, UpdateTaskRequestParams};
pub use tasks::{
    CreateTaskResult, ListTasksResult, RELATED_TASK_META_KEY, RelatedTaskMetadata, Task,
    TaskIdParams, TaskMetadata, TaskStatus,
};
pub use tools::{
    CallToolRequestParams, CallToolResult, ListToolsResult, TaskSupport, Tool, ToolAnnotations,
    ToolExecution,
};
pub use v2026::discover::{CacheHints, CacheScope, DiscoverResult};
pub use v2026::envelope::RequestMeta;
pub use v2026::input::{
    InputRequest, InputRequests, InputRequiredResult, InputResponses, ResultType,
};
pub use v2026::listen::{ListenRequestParams, SubscriptionFilter};
pub use version::{ProtocolVersion, UnknownVersion};
