//! Actor runtime for [actix-mcp](https://docs.rs/actix-mcp): JSON-RPC sessions, in-flight
//! requests, supervised tool invocations and SSE streams as actix actors.
//!
//! This crate speaks JSON-RPC only. The MCP protocol lives in `actix-mcp`, which reaches this
//! runtime through one trait, [`Dispatch`]. Users depend on `actix-mcp`, not on this crate.
//!
//! # Topology
//!
//! ```text
//! POST /mcp (req 7) -> RegistryHandle::get (shared table, no mailbox) -> Session
//!                      Session -start-> InFlight(7) -Dispatch::request-> handler future
//!                      handler -RequestScope::supervise-> ToolCall (panic, timeout, cancel)
//!                      InFlight(7) response -> Outlet -> SseStream(POST 7) -> SSE body
//! GET  /mcp ---------> Session -OpenStandalone-> SseStream(GET)   (session-wide messages)
//! progress(7) -------> RequestScope -> Outlet of 7 (ordered before the response)
//! notifications/cancelled(7) -> Session -Cancel-> InFlight(7): token.cancel(), stop
//! handler needs sampling -> RequestScope::peer_request -> Session: SendPeerRequest(id 9)
//!                      -> Outlet of 7 -> client; the client's answer -> Session -> waiter
//! server-wide change -> Registry: Broadcast -> each Session -> standalone Outlet
//! ```
//!
//! # Lifecycles
//!
//! | actor | started by | stops when | on stop |
//! | --- | --- | --- | --- |
//! | [`Registry`] | the HTTP transport, supervised | its system stops | sessions live on in the shared table |
//! | [`Session`] | a transport (`initialize` over HTTP, process start on stdio) | `Close`, idle expiry, shutdown | token cancelled: every request and stream of it stops |
//! | [`InFlight`] | its session (or a stateless transport) | it answered, `Cancel`, token cancelled | the handler future is dropped; no response after a cancel |
//! | [`ToolCall`] | [`RequestScope::supervise`] | the work ends, panics, times out, or is cancelled | the user future is dropped |
//! | [`SseStream`] | the HTTP transport (POST) or its session (GET) | it delivered its response, `CloseStream`, session stop | its buffer stays resumable until evicted |
//!
//! Session actors run on the arbiter of the worker that opened them, so sessions spread over
//! every worker thread; requests and their streams run on that arbiter too.

pub mod dispatch;
pub mod error;
pub mod ids;
pub mod in_flight;
pub mod jsonrpc;
pub mod metrics;
pub mod outlet;
pub mod registry;
pub mod scope;
pub mod session;
pub mod sse_stream;
pub mod tool_call;

pub use dispatch::{Dispatch, Reply};
pub use error::{OpenError, PeerError};
pub use ids::{EventId, SessionId};
pub use in_flight::InFlight;
pub use jsonrpc::{
    ErrorCode, ErrorObject, Frame, FrameKind, Incoming, Notification, Rejection, Request,
    RequestId, Response,
};
pub use metrics::{Metrics, MetricsSnapshot};
pub use outlet::{ChannelOutlet, FrameSink, Outlet, ResponseOutlet};
pub use registry::{Registry, RegistryConfig, RegistryHandle};
pub use scope::{ProgressError, RequestScope};
pub use session::{OnStopped, Session, SessionConfig, SessionHandle, SessionParts, SessionStats};
pub use sse_stream::{
    EventStore, InMemoryEventStore, PostAnswer, Settled, SseEvent, SseOutlet, SseStream,
};
pub use tool_call::{SupervisedError, ToolCall};
