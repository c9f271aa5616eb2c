//! Outgoing JSON-RPC messages, serialised once into [`Frame`]s: the text every transport
//! writes (an SSE event's data, a stdio line, an HTTP body), shared rather than copied.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::jsonrpc::{ErrorObject, JSONRPC_VERSION, RequestId};

/// What kind of message a [`Frame`] carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A response (result or error) to a peer's request.
    Response,
    /// A notification.
    Notification,
    /// A request to the peer.
    Request,
}

/// One serialised outgoing JSON-RPC message (compact JSON, no trailing newline).
#[derive(Clone)]
pub struct Frame {
    /// What the frame carries.
    pub kind: FrameKind,
    /// The JSON text.
    pub json: Arc<str>,
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("kind", &self.kind)
            .field("len", &self.json.len())
            .finish()
    }
}

#[derive(Serialize)]
struct OutResult<'a, T: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct OutError<'a> {
    jsonrpc: &'static str,
    // JSON-RPC 2.0: `id` is `null` when the request id could not be read.
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
}

#[derive(Serialize)]
struct OutMessage<'a, T: Serialize + ?Sized> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> Arc<str> {
    // Written into a buffer the thread keeps, then copied once into the frame's own
    // allocation: a fresh buffer would be allocated, grown as the text outgrows it, and freed,
    // for every message. (A `Serialize` impl that makes a frame itself gets a fresh buffer.)
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    /// The most a kept buffer holds on to once a large message is written.
    const KEPT: usize = 64 * 1024;
    let written = BUFFER.with(|buffer| {
        let mut fresh = Vec::new();
        let mut kept = buffer.try_borrow_mut();
        let buffer = match &mut kept {
            Ok(buffer) => &mut **buffer,
            Err(_) => &mut fresh,
        };
        buffer.clear();
        let written = serde_json::to_writer(&mut *buffer, value).map(|()| {
            // serde_json writes UTF-8 only: checked (word by word for ASCII), never replaced.
            match std::str::from_utf8(buffer) {
                Ok(text) => Arc::from(text),
                Err(_) => Arc::from(String::from_utf8_lossy(buffer).as_ref()),
            }
        });
        if buffer.capacity() > KEPT {
            *buffer = Vec::new();
        }
        written
    });
    match written {
        Ok(json) => json,
        // Only a non-string map key or a failing Serialize impl gets here; both are bugs in the
        // caller's types, and the peer still deserves an answer rather than silence.
        Err(err) => {
            tracing::error!(error = %err, "failed to serialise an outgoing message");
            Arc::from(
                r#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"internal error: unserialisable message"}}"#,
            )
        }
    }
}

impl Frame {
    /// A success response.
    pub fn result<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> Self {
        Self {
            kind: FrameKind::Response,
            json: to_json(&OutResult {
                jsonrpc: JSONRPC_VERSION,
                id,
                result,
            }),
        }
    }

    /// An error response; `id` is `None` only when the request id could not be read.
    pub fn error(id: Option<&RequestId>, error: &ErrorObject) -> Self {
        Self {
            kind: FrameKind::Response,
            json: to_json(&OutError {
                jsonrpc: JSONRPC_VERSION,
                id,
                error,
            }),
        }
    }

    /// A response with either outcome.
    pub fn response(id: &RequestId, outcome: &Result<Value, ErrorObject>) -> Self {
        match outcome {
            Ok(result) => Self::result(id, result),
            Err(error) => Self::error(Some(id), error),
        }
    }

    /// A notification.
    pub fn notification<T: Serialize + ?Sized>(method: &str, params: Option<&T>) -> Self {
        Self {
            kind: FrameKind::Notification,
            json: to_json(&OutMessage {
                jsonrpc: JSONRPC_VERSION,
                id: None,
                method,
                params,
            }),
        }
    }

    /// A request to the peer.
    pub fn request<T: Serialize + ?Sized>(
        id: &RequestId,
        method: &str,
        params: Option<&T>,
    ) -> Self {
        Self {
            kind: FrameKind::Request,
            json: to_json(&OutMessage {
                jsonrpc: JSONRPC_VERSION,
                id: Some(id),
                method,
                params,
            }),
        }
    }
}
