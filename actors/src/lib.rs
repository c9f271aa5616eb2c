//! Actor runtime for [actix-mcp](https://docs.rs/actix-mcp): JSON-RPC sessions, in-flight
//! requests, supervised tool invocations and SSE streams as actix actors.
//!
//! This crate speaks JSON-RPC only. The MCP protocol lives in `actix-mcp`, which reaches this
//! runtime through one trait, [`Dispatch`]. Users depend on `actix-mcp`, not on this crate.
//!
//! # Topology
//!
//! ```text
//! POST /mcp (req 7) -> RegistryHandle::get (shared table, no mailbox) -> SessionHandle::request
//!                      -> the handler future, polled once in place
//!                         answered at once: response -> Outlet (no actor at all)
//!                         still pending:    InFlight(7) actor owns it, enters the in-flight table
//!                      handler -RequestScope::supervise-> polled once; if pending, ToolCall actor
//!                      response -> Outlet -> PostAnswer(POST 7) -> one SSE body, or, when the
//!                         request runs on: SseStream(POST 7) actor -> SSE body
//! GET  /mcp ---------> Session -OpenStandalone-> SseStream(GET)   (session-wide messages)
//! progress(7) -------> RequestScope -> Outlet of 7 (ordered before the response)
//! notifications/cancelled(7) -> in-flight table -Cancel-> InFlight(7): token.cancel(), stop
//! handler needs sampling -> RequestScope::peer_request -> Session: SendPeerRequest(id 9)
//!                      -> Outlet of 7 -> client; the client's answer -> Session -> waiter
//! server-wide change -> Registry: Broadcast -> each Session -> standalone Outlet
//! ```
//!
//! # Work that waits is an actor
//!
//! Everything that is in flight across an await is an actor with a mailbox: a request still
//! running is an [`InFlight`] actor (so `Cancel` reaches it), a supervised tool future still
//! running is a [`ToolCall`] actor (timeout, cancellation, panic isolation), and an answer
//! still streaming is an [`SseStream`] actor (resumption, slow-client cut-off). Work that
//! finishes in its first poll never waits, so it is done in place, at the cost of a function
//! call: a request answered at once is never in flight, and a tool that never awaits is never
//! running. Each of these starts its actor only when it first has to wait, handing over the
//! future (or the events) as they are, so nothing is lost or reordered. On a machine where an
//! actor start costs about a microsecond, this is most of the difference between 1× and 2×
//! the CPU of a bare actix-web handler.
//!
//! # Lifecycles
//!
//! | actor | started by | stops when | on stop |
//! | --- | --- | --- | --- |
//! | [`Registry`] | the HTTP transport, supervised | its system stops | sessions live on in the shared table |
//! | [`Session`] | a transport (`initialize` over HTTP, process start on stdio) | `Close`, idle expiry, shutdown | token cancelled: every request and stream of it stops |
//! | [`InFlight`] | [`SessionHandle::request`] (or a stateless transport), when the handler's first poll is pending | it answered, `Cancel`, token cancelled | the handler future is dropped; no response after a cancel |
//! | [`ToolCall`] | [`RequestScope::supervise`], when the future's first poll is pending | the work ends, panics, times out, or is cancelled | the user future is dropped |
//! | [`SseStream`] | a [`PostAnswer`] still running after its window, or the session (GET) | it delivered its response, `CloseStream`, session stop | its buffer stays resumable until evicted |
//!
//! Sessions run on the arbiter of the worker that opened them, so sessions spread over every
//! worker thread. A request runs on the arbiter of the worker that received it, as do its
//! tool calls and its answer stream; the in-flight table it enters is shared by the session's
//! workers.

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
