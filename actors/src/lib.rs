//! Actor runtime for actix-mcp.

pub mod jsonrpc;

pub use jsonrpc::{ErrorCode, ErrorObject, Frame, FrameKind, Incoming, Notification, Request, RequestId, Response};
