//! Server-sent-event streams: the [`EventLog`] every stream writes through, the [`SseStream`]
//! actor that owns a live stream, and the [`EventStore`] that keeps events for resumption.

mod event_log;
mod sse_stream;
mod store;

pub use event_log::{
    CONNECTION_BUFFER, EventLog, Settled, SseEvent, StreamReceiver, priming_event,
};
pub use sse_stream::{Attach, CloseStream, DropConnection, Finish, SseStream};
pub use store::{EventStore, InMemoryEventStore, Replay, ReplayFuture, SessionEvents};
