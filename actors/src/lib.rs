//! Actor runtime for [actix-mcp](https://docs.rs/actix-mcp): JSON-RPC sessions, in-flight
//! requests, supervised invocations of user code and SSE streams as actix actors.
//!
//! This crate speaks JSON-RPC only: it knows no MCP method except the two notifications every
//! request needs (`notifications/cancelled`, `notifications/progress`) and no MCP error code.
//! The protocol lives in `actix-mcp`, which reaches this runtime through one trait,
//! [`Dispatch`]. Users depend on `actix-mcp`, not on this crate.
//!
//! # What is where
//!
//! The root holds what the public surface of `actix-mcp` shows of the runtime: the handles
//! ([`RegistryHandle`], [`SessionHandle`]), the ids ([`SessionId`], [`EventId`],
//! [`RequestId`], [`NodeId`]), the errors, and the traits a deployment implements with the
//! types in their signatures: the [`EventStore`] (with [`SessionEvents`]), and a cluster's
//! [`SessionStore`] and [`Bus`]. `actix-mcp` re-exports all of these (the cluster's in
//! `actix_mcp::cluster`). The actors, their messages and the plumbing between a transport and
//! them are in [`dev`], for transport and cluster implementers, with no stability promise.
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
//!                      requests without a session (indexed by owner and id when it has an
//!                      owner), then as above (no in-flight table)
//! notifications/cancelled(7) -> in-flight table -Cancel-> InFlight(7) -CancelCall-> Invocation
//!                      (no session: RegistryHandle::cancel_detached(owner, 7) -Cancel-> the same)
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
//!
//! [`Abort`]: dev::Abort
//! [`Attach`]: dev::Attach
//! [`Broadcast`]: dev::Broadcast
//! [`Cancel`]: dev::Cancel
//! [`CancelCall`]: dev::CancelCall
//! [`CloseStream`]: dev::CloseStream
//! [`Counted`]: dev::Counted
//! [`Dispatch`]: dev::Dispatch
//! [`DropConnection`]: dev::DropConnection
//! [`EventLog`]: dev::EventLog
//! [`EventLog::settle`]: dev::EventLog::settle
//! [`Finish`]: dev::Finish
//! [`ForgetPeerRequest`]: dev::ForgetPeerRequest
//! [`GetCallStatus`]: dev::GetCallStatus
//! [`GetSessionStats`]: dev::GetSessionStats
//! [`HandleNotification`]: dev::HandleNotification
//! [`HandleRequest`]: dev::HandleRequest
//! [`HandleResponse`]: dev::HandleResponse
//! [`InFlight`]: dev::InFlight
//! [`Invocation`]: dev::Invocation
//! [`Invocation::begin`]: dev::Invocation::begin
//! [`Invocation::begin_blocking`]: dev::Invocation::begin_blocking
//! [`OpenStandalone`]: dev::OpenStandalone
//! [`Registry`]: dev::Registry
//! [`RequestFinished`]: dev::RequestFinished
//! [`RequestScope::start`]: dev::RequestScope::start
//! [`RequestScope::supervise`]: dev::RequestScope::supervise
//! [`Resume`]: dev::Resume
//! [`SendPeerRequest`]: dev::SendPeerRequest
//! [`Session`]: dev::Session
//! [`SseStream`]: dev::SseStream
//! [`StreamClosed`]: dev::StreamClosed
//! [`Sweep`]: dev::Sweep

mod carry;
mod cluster;
mod detached;
mod dispatch;
mod error;
mod event_log;
mod event_store;
mod frame;
mod ids;
mod in_flight;
mod in_flight_table;
mod invocation;
mod json_cost;
mod jsonrpc;
mod metrics;
mod moved;
mod outlet;
mod raw_text;
mod registry;
mod scope;
mod session;
mod session_actor;
mod sse_stream;

pub use cluster::{
    Bus, BusMessage, Created, Envelope, InMemorySessionStore, LocalBus, NodeId, Recipients,
    SessionRecord, SessionStore, StateUpdate, StoreError, StoreFuture,
};
pub use error::{OpenError, PeerError};
pub use event_store::{EventStore, InMemoryEventStore, Replay, ReplayFuture, SessionEvents};
pub use ids::{EventId, MalformedEventId, SessionId};
pub use jsonrpc::{ErrorCode, ErrorObject, RequestId};
pub use metrics::MetricsSnapshot;
#[allow(deprecated)]
pub use moved::*;
pub use registry::RegistryHandle;
pub use session::{SERVER_BUSY, SessionHandle, SessionStats};

/// For transport and cluster implementers: the actors, the messages they take, and the
/// plumbing between a transport and them (JSON-RPC frames, outlets, event logs, request
/// scopes, supervised invocations, gauges). **No stability promise**: anything here may
/// change in any release. `actix-mcp` is built on it; a server or client built with
/// `actix-mcp` never needs it.
pub mod dev {
    pub use crate::carry::{Carry, Holds};
    pub use crate::cluster::Relay;
    pub use crate::dispatch::{Dispatch, Reply};
    pub use crate::event_log::{
        CONNECTION_BUFFER, EventLog, Settled, SseEvent, StreamReceiver, priming_event,
    };
    pub use crate::in_flight::{Abort, Cancel, CancelOnDrop, InFlight};
    #[allow(deprecated)]
    pub use crate::invocation::ToolCall;
    pub use crate::invocation::{
        Begun, CallStatus, CancelCall, Deliver, GetCallStatus, Invocation, Outcome,
        SupervisedError, poll_once,
    };
    pub use crate::json_cost::{BYTES_PER_TOKEN, parsed_size_estimate};
    pub use crate::jsonrpc::{
        Frame, FrameKind, Incoming, JSONRPC_VERSION, MAX_ID_LEN, MAX_METHOD_LEN, Notification,
        Rejection, Request, Response, parse as parse_message,
        parse_keeping_meta as parse_message_keeping_meta, raw_members, raw_str,
    };
    pub use crate::metrics::{Counted, Counting, Metrics};
    pub use crate::outlet::{ChannelOutlet, FrameSink, Outlet, ResponseOutlet};
    pub use crate::registry::{Broadcast, Registry, RegistryConfig, Sweep};
    pub use crate::scope::{ProgressError, RequestScope, Running, Started, peer_error_object};
    pub use crate::session::{
        ForgetPeerRequest, GetSessionStats, HandleNotification, HandleRequest, HandleResponse,
        MAX_PROGRESS_TOKEN_LEN, OnStopped, OpenStandalone, RequestFinished, Resume, Resumed,
        SendPeerRequest, Session, SessionConfig, SessionParts, StreamClosed,
    };
    pub use crate::sse_stream::{Attach, CloseStream, DropConnection, Finish, SseStream};
}
