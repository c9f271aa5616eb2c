//! Typed MCP protocol model: one module per spec page, plain data types with public fields.
//!
//! Every type serializes to exactly the JSON of the 2025-11-25 schema. Optional fields are
//! `Option`s that are omitted when `None`; `_meta` maps keep unknown keys. Older revisions are
//! served by [`ForVersion::adapt_to`], which strips or rewrites what a revision lacks.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25>

pub mod adapt;
pub mod cancellation;
pub mod code;
pub mod completion;
pub mod content;
pub mod elicitation;
pub mod lifecycle;
pub mod logging;
pub mod meta;
pub mod method;
pub mod modern;
pub mod pagination;
pub mod progress;
pub mod prompts;
pub mod resources;
pub mod roots;
pub mod sampling;
pub mod task_extension;
pub mod tasks;
pub mod tools;
pub mod version;

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
pub use meta::{JsonObject, Meta, ProgressToken, progress_token};
pub use modern::{
    CacheHints, CacheScope, DiscoverResult, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ListenRequestParams, RequestMeta, ResultType, SubscriptionFilter,
};
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
    CreateTaskResult, ListTasksResult, RelatedTaskMetadata, Task, TaskIdParams, TaskMetadata,
    TaskStatus,
};
pub use tools::{
    CallToolRequestParams, CallToolResult, ListToolsResult, TaskSupport, Tool, ToolAnnotations,
    ToolExecution,
};
pub use version::{ProtocolVersion, UnknownVersion};
