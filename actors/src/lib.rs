//! Actor runtime for [actix-mcp](https://docs.rs/actix-mcp): JSON-RPC sessions, in-flight
//! requests, supervised invocations of user code and SSE streams as actix actors.
//!
//! This crate speaks JSON-RPC only: it knows no MCP method except the two notifications every
//! request needs (`notifications/cancelled`, `notifications/progress`) and no MCP error code.
//! The protocol lives in `actix-mcp`, which reaches this runtime through one trait,
//! [`Dispatch`]. Users depend on `actix-mcp`, not on this crate.
//!
//! # Which work is an actor, and when
//!
//! Work that is *in flight across an await* is an actor with a mailbox: that is where a
//! cancellation, a time limit or a peer's answer reaches it. Work that finishes in its first
//! poll never waits, so nothing could reach it: it is done in place, at the cost of a function
//! call, and never becomes an actor. Each actor starts only when its work first has to wait,
//! taking the work over as it is (the future, or the events so far), so nothing is lost or
//! reordered.
//!
//! | concept | fast path: done in place when | actor: when it waits | its messages |
//! | --- | --- | --- | --- |
//! | registry | a lookup reads the shared table; opening a session writes it (the cap is checked atomically); a request without a session takes a ticket in its table of such requests | always: [`Registry`], one per transport endpoint (each HTTP endpoint, each stdio connection, a server's in-process calls), supervised | in: `SessionStopped` (from each session as it goes, also after a panic), [`Broadcast`], [`Sweep`] |
//! | session | admission and `notifications/cancelled` act on its in-flight table at once; session-wide notifications go straight to its standalone stream's log | always: [`Session`], one per client | in: [`HandleRequest`], [`HandleNotification`], [`HandleResponse`], [`SendPeerRequest`], [`ForgetPeerRequest`], [`RequestFinished`], [`OpenStandalone`], [`Resume`], [`StreamClosed`], [`GetSessionStats`], `Close`; out: `SessionStopped` |
//! | in-flight request (in a session, or without one under its registry) | its handler answers in its first poll | [`InFlight`], from the first `Pending` until it answers or is cancelled | in: [`Cancel`], [`Abort`]; out: [`RequestFinished`], [`CancelCall`] |
//! | invocation of user code (a tool, prompt or resource handler; a task's round; a parked `input_required` call; a blocking closure) | the supervised future finishes in its first poll | [`Invocation`], from the first `Pending`, its outcome delivered where its beginner said; a blocking closure always | in: [`CancelCall`], [`GetCallStatus`] |
//! | stream | a POST answer that finishes while its events are buffered is handed over whole by its [`EventLog`] | [`SseStream`], once the answer must stream (it runs on, sends the client a request, asks for SSE polling, or piles up events), and every GET stream | in: [`Attach`], [`DropConnection`], [`Finish`], [`CloseStream`]; out: [`StreamClosed`] |
//!
//! The protocol layer (`actix-mcp`) adds four actors of its own, each counted in its transport's
//! gauges ([`Counted`]) and ended by that transport's drain:
//!
//! | actor | started by | stops when | owner | its messages |
//! | --- | --- | --- | --- | --- |
//! | `Listener` | a `subscriptions/listen` request (2026-07-28) | its request ends (client gone, cancel, drain) | the listen request | in: `Change`, `StopListening` |
//! | `TaskRun` | a `tools/call` that becomes a task (Tasks extension), its first round's [`Invocation`] handed over | a terminal status is stored, its time to live, the drain's deadline | the server's task service | in: `ProvideInput` (`tasks/update`), `CancelTask` |
//! | `StdioWriter` | a stdio connection | its output closes | the connection | in: `WriteFrame`, `CloseOutput` |
//! | `ClientSession` | `ClientBuilder::connect` | `Client::close`, or the connection ends | the `Client` handles | in: `Call`, `CancelCall`, `Notify`, `Shutdown`, `EnableRenewal`, `SetEnvelope` |
//!
//! A parked `input_required` call is its [`Invocation`], kept in the server's park table
//! between a round and its retry (any worker resumes it); no actor supervises it twice.
//!
//! How long a POST answer may stay buffered before it must stream is the transport's policy
//! (the Streamable HTTP transport gives it 2 ms); the runtime only offers
//! [`EventLog::settle`].
//!
//! # Topology
//!
//! ```text
//! POST /mcp (req 7) -> RegistryHandle::get (shared table) -> SessionHandle::request
//!                      reserve id 7 in the in-flight table (atomic with the duplicate check)
//!                      poll the handler once in place
//!                         answered: release id 7, response -> EventLog(POST 7), no actor
//!                         pending:  InFlight(7) actor owns the future; its row records it
//!                      handler -RequestScope::supervise-> polled once; if pending, Invocation
//!                      EventLog(POST 7): buffered, then whole (one SSE body), or, when the
//!                         answer must stream, SseStream(POST 7) owns it
//! GET  /mcp ---------> Session -OpenStandalone-> SseStream(GET), its EventLog the standalone outlet
//! progress(7) -------> RequestScope -> EventLog of 7 (ordered before the response)
//! POST (no session) -> RegistryHandle::start_detached: a ticket in the registry's table of
//!                      requests without a session, then as above (no in-flight table)
//! notifications/cancelled(7) -> in-flight table -Cancel-> InFlight(7) -CancelCall-> Invocation
//! handler needs sampling -> RequestScope::peer_request -> Session: SendPeerRequest(id 9)
//!                      -> EventLog of 7 -> client; the client's answer -> Session -> waiter
//! server-wide change -> Registry: Broadcast (try_send) -> each session's standalone EventLog
//! session gone ------> Registry: SessionStopped -> tear down, forget, transport's hook
//! ```
//!
//! # Back-pressure and fan-out
//!
//! No message that a client's pace controls is queued without bound. Events reach a stream
//! through its [`EventLog`], which numbers and stores each one and `try_send`s it into the
//! connection's bounded channel; a connection that does not keep up is dropped, and its client
//! resumes with `Last-Event-ID` from the store. Broadcasts enter the registry's bounded mailbox
//! with `try_send`; when it is full, the caller delivers the frame itself. Requests over stdio
//! enter the session's bounded mailbox with `send` (the reader waits).
//!
//! # Lifecycles
//!
//! | actor | started by | stops when | when it is gone |
//! | --- | --- | --- | --- |
//! | [`Registry`] | a transport, under a [`Supervisor`](actix::Supervisor) | its system stops | (restarted after a panic; the table is kept) |
//! | [`Session`] | [`RegistryHandle::open`] | `Close` ([`SessionHandle::close`], DELETE, idle expiry, shutdown) | the registry tears its work down and forgets it |
//! | [`InFlight`] | [`SessionHandle::request`] or [`RegistryHandle::start_detached`], at its first `Pending` | it answered, [`Cancel`], [`Abort`] (a drain's deadline; a registry's shutdown cancels) | its row (or ticket) leaves the table, its invocations get [`CancelCall`], its holds are released, its outlet is finished |
//! | [`Invocation`] | [`Invocation::begin`] (through [`RequestScope::start`] and [`RequestScope::supervise`], a task's round, a parked call), at its first `Pending`; [`Invocation::begin_blocking`] | the work ends or panics, its time limit, [`CancelCall`] | the user future is dropped; its outcome is delivered |
//! | [`SseStream`] | a settled [`EventLog`], or the session (GET) | its request finished, [`CloseStream`] | its log is closed; stored events stay resumable until evicted |
//!
//! Sessions run on the arbiter of the worker that opened them, so sessions spread over every
//! worker thread. A request runs on the arbiter of the worker that received it, as do its tool
//! calls and its stream; the in-flight table it enters is shared by the session's workers.

mod carry;
mod cluster;
mod dispatch;
mod error;
mod event_log;
mod event_store;
mod ids;
mod in_flight;
mod in_flight_table;
mod invocation;
mod json_cost;
mod jsonrpc;
mod metrics;
mod outlet;
mod registry;
mod scope;
mod session;
mod session_actor;
mod sse_stream;

pub use carry::{Carry, Holds};
pub use cluster::{
    Bus, BusMessage, Created, Envelope, InMemorySessionStore, LocalBus, NodeId, Recipients, Relay,
    SessionRecord, SessionStore, StateUpdate, StoreError, StoreFuture,
};
pub use dispatch::{Dispatch, Reply};
pub use error::{OpenError, PeerError};
pub use event_log::{
    CONNECTION_BUFFER, EventLog, Settled, SseEvent, StreamReceiver, priming_event,
};
pub use event_store::{EventStore, InMemoryEventStore, Replay, ReplayFuture, SessionEvents};
pub use ids::{EventId, SessionId};
pub use in_flight::{Abort, Cancel, CancelOnDrop, InFlight};
#[allow(deprecated)]
pub use invocation::ToolCall;
pub use invocation::{
    Begun, CallStatus, CancelCall, Deliver, GetCallStatus, Invocation, Outcome, SupervisedError,
};
pub use json_cost::{BYTES_PER_TOKEN, parsed_size_estimate};
pub use jsonrpc::{
    ErrorCode, ErrorObject, Frame, FrameKind, Incoming, JSONRPC_VERSION, MAX_ID_LEN,
    MAX_METHOD_LEN, Notification, Rejection, Request, RequestId, Response, parse as parse_message,
};
pub use metrics::{Counted, Counting, Metrics, MetricsSnapshot};
pub use outlet::{ChannelOutlet, FrameSink, Outlet, ResponseOutlet};
pub use registry::{Broadcast, Registry, RegistryConfig, RegistryHandle, Sweep};
pub use scope::{ProgressError, RequestScope, Running, Started, peer_error_object};
pub use session::{
    ForgetPeerRequest, GetSessionStats, HandleNotification, HandleRequest, HandleResponse,
    MAX_PROGRESS_TOKEN_LEN, OnStopped, OpenStandalone, RequestFinished, Resume, Resumed,
    SERVER_BUSY, SendPeerRequest, Session, SessionConfig, SessionHandle, SessionParts,
    SessionStats, StreamClosed,
};
pub use sse_stream::{Attach, CloseStream, DropConnection, Finish, SseStream};
