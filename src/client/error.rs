//! What can go wrong talking to a server: one error type for every client call.

use std::time::Duration;

use actix_mcp_actors::ErrorObject;

#[cfg(feature = "client-http")]
use super::auth::AuthError;
use crate::protocol::InputRequiredResult;

/// Why a client call produced no result.
///
/// A tool that fails answers with `isError: true`: that is a [`CallToolResult`] value, not an
/// error. Do not depend on the wording of the messages; match on the variants.
///
/// [`CallToolResult`]: crate::protocol::CallToolResult
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with an error: {} ({})", .0.message, .0.code)]
    Rpc(ErrorObject),
    /// No answer came within the time limit; `notifications/cancelled` was sent for it.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The call was cancelled (by [`PendingRequest::cancel`](crate::client::PendingRequest::cancel)
    /// or by dropping it); `notifications/cancelled` was sent for it.
    #[error("the request was cancelled")]
    Cancelled,
    /// The connection to the server is gone (the process exited, the stream closed, the
    /// client was closed); the message says how.
    #[error("the connection to the server is closed: {0}")]
    TransportClosed(String),
    /// The server no longer knows this session (HTTP 404 on a session request): a new one
    /// must be initialized.
    #[error("the server ended the session")]
    SessionExpired,
    /// The server sent something that breaks the protocol: malformed JSON, a message over the
    /// size limit, an answer of the wrong shape, an HTTP status the spec does not allow.
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// The server does not offer what was asked (it did not declare the extension or
    /// capability); nothing was sent.
    #[error("not offered by the server: {0}")]
    Unsupported(String),
    /// The client was built wrong (an extension's identifier, a method handled twice); the
    /// message says what.
    #[error("invalid client configuration: {0}")]
    InvalidConfig(String),
    /// The transport could not carry the message (connection refused, I/O error, HTTP error
    /// status).
    #[error("transport error: {0}")]
    Transport(String),
    /// The server needs input before it answers (2026-07-28 `input_required`) and the client
    /// does not drive the rounds itself ([`ClientBuilder::auto_input`] is off): answer it and
    /// retry with the `*_step` calls.
    ///
    /// [`ClientBuilder::auto_input`]: crate::client::ClientBuilder::auto_input
    #[error("the server needs input before it answers")]
    InputRequired(Box<InputRequiredResult>),
    /// A handler could not answer one of the server's input requests (2026-07-28 MRTR): it
    /// refused, failed, or the client has no handler for that kind of request. The call is
    /// not retried.
    #[error("could not answer the server's input request {key:?}: {}", .error.message)]
    InputFailed {
        /// The input request's key.
        key: String,
        /// The handler's error.
        error: Box<ErrorObject>,
    },
    /// The server wants an access token and the client could not get (or use) one: the
    /// server's metadata failed a check, the user declined, the token endpoint refused, or the
    /// server kept refusing the token. See [`AuthError`].
    #[cfg(feature = "client-http")]
    #[error("authorization failed: {0}")]
    Auth(AuthError),
}

impl ClientError {
    /// This failure in the terms of the request's telemetry span.
    #[cfg(feature = "otel")]
    pub(crate) fn failure(&self) -> crate::telemetry::Failure {
        let (kind, code, message) = match self {
            Self::Rpc(object) => ("rpc_error", Some(object.code), object.message.clone()),
            Self::Timeout(_) => ("timeout", None, self.to_string()),
            Self::Cancelled => ("cancelled", None, self.to_string()),
            Self::TransportClosed(_) | Self::Transport(_) => {
                ("transport_error", None, self.to_string())
            }
            Self::SessionExpired => ("session_expired", None, self.to_string()),
            Self::Protocol(_) => ("protocol_error", None, self.to_string()),
            _ => ("_OTHER", None, self.to_string()),
        };
        crate::telemetry::Failure {
            kind,
            code,
            message,
        }
    }

    /// Whether the call timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout(_))
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Self::Cancelled)
    }

    /// The JSON-RPC error the server answered with, if that is what this is.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            Self::Rpc(error) => Some(error),
            _ => None,
        }
    }

    /// Why authorization failed, if that is what this is.
    #[cfg(feature = "client-http")]
    pub fn auth(&self) -> Option<&AuthError> {
        match self {
            Self::Auth(error) => Some(error),
            _ => None,
        }
    }

    /// Whether the connection is gone for good (closed, or the session expired).
    pub fn is_closed(&self) -> bool {
        matches!(self, Self::TransportClosed(_) | Self::SessionExpired)
    }
}

#[cfg(feature = "client-http")]
impl From<AuthError> for ClientError {
    fn from(error: AuthError) -> Self {
        Self::Auth(error)
    }
}

impl From<ErrorObject> for ClientError {
    fn from(error: ErrorObject) -> Self {
        Self::Rpc(error)
    }
}

/// An error and its causes, on one line (an HTTP client's own message alone says little).
#[cfg(any(feature = "client-http", feature = "auth"))]
pub(crate) fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
