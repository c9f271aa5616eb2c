//! actix-mcp: a [Model Context Protocol](https://modelcontextprotocol.io) SDK built as an actor
//! system on actix and actix-web.
//!
//! Every session, request still in flight, running invocation of user code and live SSE
//! stream is an actor, so cancellation, time limits, nested server-to-client requests and
//! broadcast notifications are messages; a registry actor per endpoint supervises all of that
//! work, with a session or without. A request's origin (a 2025-11-25 session, 2025-11-25
//! without a session, or 2026-07-28 with its envelope) is decided once, at its transport's
//! door. Work that finishes in its first poll is done in place and starts no actor, and
//! progress and a request's other events are written straight into its event log, not sent
//! through a mailbox. The README's Design section and the crate docs of `actix-mcp-actors`
//! list every actor.
//!
//! # Pages to look at first
//!
//! - [`Server::builder`]: register tools, prompts, resources, hooks and state.
//! - [`ToolDef`], [`ToolHandler`], [`Params`], [`RequestContext`]: writing tools (likewise
//!   [`PromptDef`], [`ResourceDef`], [`ResourceTemplateDef`]).
//! - [`Server::serve_stdio`]: a stdio server. [`Server::http`]: mount Streamable HTTP in an
//!   actix-web `App`; [`Server::serve`]: a turnkey HTTP server.
//! - [`protocol`]: the typed MCP model.
//! - [`EventStore`], [`SessionEvents`], [`InMemoryEventStore`]: where Streamable HTTP keeps SSE
//!   events for `Last-Event-ID` resumption
//!   ([`McpHttpBuilder::event_store`](transport::http::McpHttpBuilder::event_store)).
//! - [`TaskConfig`], [`ToolDef::task_support`], [`TaskStore`]: the Tasks extension
//!   (`io.modelcontextprotocol/tasks`): long-running tool calls answered with a task handle.
//! - [`schemars`]: the version input and output schemas are generated with.
//! - `telemetry` (feature `otel`): OpenTelemetry spans and metrics by the semantic conventions
//!   for MCP, exported over OTLP.
//!
//! # Cargo features
//!
//! Each feature brings only the crates it needs; a stdio server compiles no HTTP stack and a
//! client no server.
//!
//! | feature | what it adds | default |
//! | --- | --- | --- |
//! | `server` | the server: tools, prompts, resources, sessions, every protocol method, served over stdio ([`Server::serve_stdio`]) and in process | yes |
//! | `http` | Streamable HTTP for the server on actix-web ([`transport::http`]), clusters (`cluster`), bearer-protected endpoints with your own token validator; implies `server` | yes |
//! | `validate` | tool arguments and structured results checked against their JSON Schema (`jsonschema`); without it, arguments are checked only by their deserialization into the handler's types | yes |
//! | `client` | the client (`client`): typed API, handlers for server requests, a child process's stdio | |
//! | `client-http` | Streamable HTTP for the client (on reqwest); implies `client` | |
//! | `auth` | OAuth 2.1: the client's authorization flows (with `client-http`) and the JWT and introspection token validators of bearer-protected servers (with `http`) | |
//! | `rustls` | `https://` for the client's HTTP transport and the OAuth client | |
//! | `redis` | `cluster::redis`: sessions, events and messages of a cluster of nodes shared on Redis; implies `http` | |
//! | `otel` | `telemetry`: OpenTelemetry spans and metrics by the semantic conventions for MCP, exported over OTLP | |
//! | `full` | all of the above | |
//!
//! The client's HTTP transport is a feature of its own (not `client` with `http`) so that an
//! HTTP server does not compile an HTTP client: cargo cannot enable a dependency for a pair of
//! features.
//!
//! # One handler code for both eras
//!
//! A handler asks the client with [`RequestContext::elicit_form`], `create_message` or
//! `list_roots`. A 2025-11-25 session client gets a real server-to-client request; a 2026-07-28
//! client gets an `input_required` result, and its retry resumes the handler where it waited
//! (it runs once; when the parked call is gone, it runs again and its earlier asks are answered
//! from the sealed `requestState`). A handler may also answer `input_required` itself
//! ([`McpError::input_required`], reading the retry with [`RequestContext::input_response`]);
//! a session client then gets those requests as real ones. Every `requestState` is encrypted,
//! authenticated, expiring and bound to its request
//! ([`ServerBuilder::request_state_key`] for keys shared by every node).
//!
//! ```no_run
//! # #[cfg(feature = "server")] {
//! use actix_mcp::prelude::*;
//! use actix_mcp::protocol::ElicitationSchema;
//!
//! let schema: ElicitationSchema = serde_json::from_value(serde_json::json!({
//!     "type": "object",
//!     "properties": { "name": { "type": "string" } },
//!     "required": ["name"]
//! }))
//! .expect("a valid form");
//! let greet = ToolDef::new("greet", move |cx: RequestContext| {
//!     let schema = schema.clone();
//!     async move {
//!         let answer = cx.elicit_form("What is your name?", schema).await?;
//!         let name = answer.content.and_then(|c| c.get("name").cloned());
//!         Ok::<_, McpError>(format!("Hello, {}!", name.unwrap_or_default()))
//!     }
//! })
//! .description("Greets the user by name");
//! let server = Server::builder("greeter", "1.0.0")
//!     .request_state_key("2026-11", [0x42; 32])
//!     .tool(greet)
//!     .build();
//! # }
//! ```
//!
//! # Cancel safety
//!
//! Dropping a handler future is how cancellation works: when a client cancels a request (or
//! its session ends), the request's actor stops and its handler future is dropped at its next
//! await, and no response is sent. A dropped server-to-client request
//! ([`RequestContext::create_message`] and friends) sends `notifications/cancelled` for it.
//!
//! # Stability
//!
//! Error message wording and default option values are not covered by semver.

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "http")]
pub mod cluster;
pub mod error;
pub mod protocol;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "otel")]
pub mod telemetry;
#[cfg(all(feature = "server", feature = "client"))]
pub mod testing;
#[cfg(any(feature = "server", feature = "client"))]
pub mod transport;

/// Entry points for `tests/fuzz` (feature `fuzzing`). Not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
#[path = "fuzz_hooks.rs"]
pub mod __fuzz;

/// The id of an SSE event, which [`SessionEvents`] records and replays.
#[cfg(feature = "http")]
pub use actix_mcp_actors::EventId;
/// Where Streamable HTTP keeps SSE events: pass one to
/// [`McpHttpBuilder::event_store`](transport::http::McpHttpBuilder::event_store).
#[cfg(feature = "http")]
pub use actix_mcp_actors::EventStore;
/// The default event store of Streamable HTTP.
#[cfg(feature = "http")]
pub use actix_mcp_actors::InMemoryEventStore;
/// What [`SessionEvents::replay`] found.
#[cfg(feature = "http")]
pub use actix_mcp_actors::Replay;
/// What an [`EventStore`] opens per session.
#[cfg(feature = "http")]
pub use actix_mcp_actors::SessionEvents;
pub use actix_mcp_actors::{
    ErrorCode, ErrorObject, MetricsSnapshot, PeerError, RequestId, SessionId,
};
pub use error::{BuildError, ErrorKind, McpError};
/// The [`schemars`] this crate generates JSON schemas with (for [`Params`], [`Json`] and
/// [`schema_of`]). Derive `JsonSchema` through it to get the very trait they need, without a
/// `schemars` dependency of your own:
///
/// ```
/// use actix_mcp::schemars::JsonSchema;
///
/// /// Arguments of `echo`.
/// #[derive(serde::Deserialize, JsonSchema)]
/// #[schemars(crate = "actix_mcp::schemars")]
/// struct EchoArgs {
///     /// The text to send back.
///     message: String,
/// }
///
/// let schema = actix_mcp::schema_of::<EchoArgs>();
/// assert_eq!(schema["properties"]["message"]["type"], "string");
/// ```
#[cfg(feature = "server")]
pub use schemars;
#[cfg(feature = "server")]
pub use server::handler::{
    Arguments, FromParts, Handler, HandlerParts, IntoCompletion, Params, Rejection, RequestMeta,
    ResourceUri, State, StateNeed, UriVars, schema_of,
};
#[cfg(feature = "server")]
#[allow(deprecated)]
pub use server::prompt::prompt;
#[cfg(feature = "server")]
pub use server::prompt::{IntoGetPromptResult, PromptDef, PromptHandler};
#[cfg(feature = "server")]
pub use server::report::{LogMessage, Progress};
#[cfg(feature = "server")]
pub use server::resource::{
    IntoResourceOutput, ResourceDef, ResourceHandler, ResourceOutput, ResourceTemplateDef,
    ResourceTemplateHandler,
};
#[cfg(feature = "server")]
#[allow(deprecated)]
pub use server::resource::{resource, resource_template};
#[cfg(feature = "server")]
pub use server::tasks::{InMemoryTaskStore, StoredTask, TaskConfig, TaskStore, TaskStoreError};
#[cfg(feature = "server")]
pub use server::tool::{IntoCallToolResult, Json, ToolDef, ToolHandler};
#[cfg(feature = "server")]
#[allow(deprecated)]
pub use server::tool::{blocking_tool, tool};
#[cfg(feature = "server")]
pub use server::toolbox::ToolBox;
#[cfg(feature = "server")]
pub use server::uri_template::{MAX_MATCHED_URI, UriTemplate};
#[cfg(feature = "server")]
pub use server::{
    Elicited, ErrorSite, ExceptionReport, Extension, Flow, Inbound, InboundNotification,
    IntoJsonResult, Middleware, Outcome, RequestContext, RequestEvent, ResourceSource, Server,
    ServerBuilder, SharedCatalogError, SharedTool,
};

// The README's Rust code blocks, compiled by `cargo test --doc`.
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "http", feature = "client-http", feature = "auth"))]
pub struct ReadmeDoctests;

/// The items most servers need.
#[cfg(feature = "server")]
pub mod prelude {
    pub use crate::protocol::{
        CallToolResult, ContentBlock, GetPromptResult, LoggingLevel, PromptMessage,
        ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, TaskSupport,
    };
    pub use crate::{
        Arguments, Elicited, Json, LogMessage, McpError, Params, Progress, PromptDef,
        PromptHandler, RequestContext, ResourceDef, ResourceHandler, ResourceTemplateDef,
        ResourceTemplateHandler, ResourceUri, Server, State, TaskConfig, ToolBox, ToolDef,
        ToolHandler, UriVars,
    };
    #[allow(deprecated)]
    pub use crate::{prompt, resource, resource_template, tool};
}
