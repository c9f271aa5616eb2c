//! Errors: what handlers return ([`McpError`]), what building a server can refuse
//! ([`BuildError`]), and the JSON-RPC codes they travel with.
//!
//! One `match` ([`McpError::to_error_object`]) maps every kind to its wire code.

use std::fmt;

use serde_json::{Value, json};

pub use actix_mcp_actors::{ErrorCode, ErrorObject, PeerError};

pub use crate::protocol::code;

use crate::protocol::ElicitRequestURLParams;

/// A `Result` whose error defaults to [`McpError`].
pub type Result<T, E = McpError> = std::result::Result<T, E>;

/// What kind of failure an [`McpError`] is; decides how it reaches the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad arguments or params: `-32602`.
    InvalidParams,
    /// No such method, or a capability the server does not offer: `-32601`.
    MethodNotFound,
    /// The resource does not exist, with `data.uri`: `-32002` up to 2025-11-25, `-32602` in
    /// 2026-07-28 (which retired `-32002`). One error for handlers to return; the code is
    /// chosen per request by its era.
    ResourceNotFound,
    /// A tool failed in a way the model should see: a `tools/call` result with `isError: true`
    /// and this message as its text (other requests: `-32603`).
    ToolFailed,
    /// The request needs URL-mode elicitations to complete first: `-32042`.
    UrlElicitationRequired,
    /// Something broke inside the server: `-32603`. The message is not shown to the client;
    /// the exception reporter gets it.
    Internal,
    /// Not a failure: the handler needs input from the client first (an MRTR
    /// `input_required` result, carried in the error's data). Only `tools/call`, `prompts/get`
    /// and `resources/read` may answer so; see [`McpError::input_required`].
    InputRequired,
    /// Any other JSON-RPC code, sent as given.
    Other(ErrorCode),
}

/// The error handlers return. Its kind decides the wire form; see [`ErrorKind`].
#[derive(Debug, Clone)]
pub struct McpError {
    kind: ErrorKind,
    message: String,
    data: Option<Value>,
}

impl McpError {
    /// An error of any kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602` with this message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams, message)
    }

    /// `-32601` for this method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorKind::MethodNotFound,
            format!("method not found: {method}"),
        )
    }

    /// The resource `uri` does not exist, with `data: {"uri": uri}`: answered `-32002` up to
    /// 2025-11-25 and `-32602` in 2026-07-28 (see [`ErrorKind::ResourceNotFound`]). Return it
    /// from a read handler in either era.
    pub fn resource_not_found(uri: &str) -> Self {
        Self::new(
            ErrorKind::ResourceNotFound,
            format!("resource not found: {uri}"),
        )
        .with_data(json!({ "uri": uri }))
    }

    /// A tool failure the model sees (`isError: true` with this text).
    pub fn tool(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ToolFailed, message)
    }

    /// `-32603`; the message goes to the exception reporter, not to the client.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// `-32042`: the user must complete these URL-mode elicitations first (2025-11-25).
    pub fn url_elicitation_required(elicitations: Vec<ElicitRequestURLParams>) -> Self {
        let data = json!({ "elicitations": elicitations });
        Self::new(
            ErrorKind::UrlElicitationRequired,
            "this request requires more information",
        )
        .with_data(data)
    }

    /// Asks the client for input before the request can complete (multi-round-trip requests):
    /// a 2026-07-28 client gets this `input_required` result and retries with its answers,
    /// which the handler then reads with [`RequestContext::input_response`]; an older client is
    /// asked with real server-to-client requests and the handler is called again with the
    /// answers. Only `tools/call`, `prompts/get` and `resources/read` handlers may return it.
    ///
    /// [`RequestContext::input_response`]: crate::RequestContext::input_response
    pub fn input_required(result: crate::protocol::InputRequiredResult) -> Self {
        let data = result.to_value();
        Self::new(ErrorKind::InputRequired, "input required").with_data(data)
    }

    /// The `input_required` result this error carries, when it is one.
    pub fn as_input_required(&self) -> Option<crate::protocol::InputRequiredResult> {
        if self.kind != ErrorKind::InputRequired {
            return None;
        }
        serde_json::from_value(self.data.clone()?).ok()
    }

    /// A `-32042` (URL-mode elicitations required, 2025-11-25) as the `input_required` result
    /// that means the same in 2026-07-28, which has no such code: each elicitation is an input
    /// request (`url-0`, `url-1`, ...), and the handler is called again once the client has
    /// answered them. `None` for any other error.
    #[cfg(feature = "server")]
    pub(crate) fn url_elicitations_as_input(&self) -> Option<crate::protocol::InputRequiredResult> {
        if self.kind != ErrorKind::UrlElicitationRequired {
            return None;
        }
        let elicitations: Vec<ElicitRequestURLParams> =
            serde_json::from_value(self.data.as_ref()?.get("elicitations")?.clone()).ok()?;
        let requests = elicitations
            .into_iter()
            .enumerate()
            .map(|(n, params)| {
                let params = crate::protocol::ElicitRequestParams::Url(params);
                (
                    format!("url-{n}"),
                    crate::protocol::InputRequest::elicitation(&params),
                )
            })
            .collect();
        Some(crate::protocol::InputRequiredResult {
            input_requests: Some(requests),
            request_state: None,
            meta: None,
        })
    }

    /// An error with any JSON-RPC code.
    pub fn code(code: i32, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Other(ErrorCode(code)), message)
    }

    /// Attaches JSON `data` to the error.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The error's kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The error's message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error's data.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }

    /// The JSON-RPC code this error is sent with.
    pub fn error_code(&self) -> ErrorCode {
        match self.kind {
            ErrorKind::InvalidParams => ErrorCode::INVALID_PARAMS,
            ErrorKind::MethodNotFound => ErrorCode::METHOD_NOT_FOUND,
            ErrorKind::ResourceNotFound => code::RESOURCE_NOT_FOUND,
            ErrorKind::UrlElicitationRequired => code::URL_ELICITATION_REQUIRED,
            ErrorKind::ToolFailed | ErrorKind::Internal | ErrorKind::InputRequired => {
                ErrorCode::INTERNAL_ERROR
            }
            ErrorKind::Other(code) => code,
        }
    }

    /// The JSON-RPC error object sent to the client. Internal messages are replaced by a
    /// generic one.
    pub fn to_error_object(&self) -> ErrorObject {
        let message = match self.kind {
            ErrorKind::Internal => "internal error".to_owned(),
            _ => self.message.clone(),
        };
        ErrorObject {
            code: self.error_code(),
            message,
            data: self.data.clone(),
        }
    }
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for McpError {}

impl From<ErrorObject> for McpError {
    fn from(error: ErrorObject) -> Self {
        Self {
            kind: ErrorKind::Other(error.code),
            message: error.message,
            data: error.data,
        }
    }
}

impl From<PeerError> for McpError {
    fn from(error: PeerError) -> Self {
        match error {
            // The client's error code answered our request, not the one being served: passing
            // it on (-32601 "Method not found", say) would misreport that request.
            PeerError::Rejected(_) | PeerError::Stateless | PeerError::Unsupported => {
                Self::tool(error.to_string())
            }
            // `-32021` with what the request needed: a 2026-07-28 request is refused so (HTTP
            // 400); a 2025-11-25 `tools/call` shows it to the model as an `isError` result.
            PeerError::MissingCapability(what) => {
                let required = what.rsplit('.').fold(
                    Value::Object(serde_json::Map::new()),
                    |inner, key| json!({ key: inner }),
                );
                Self {
                    kind: ErrorKind::Other(code::MISSING_REQUIRED_CLIENT_CAPABILITY),
                    message: format!(
                        "this request needs the client capability {what}, which it did not \
                         declare"
                    ),
                    data: Some(json!({ "requiredCapabilities": required })),
                }
            }
            other => Self::internal(other.to_string()),
        }
    }
}

impl From<serde_json::Error> for McpError {
    fn from(error: serde_json::Error) -> Self {
        Self::internal(format!("JSON error: {error}"))
    }
}

impl From<std::io::Error> for McpError {
    fn from(error: std::io::Error) -> Self {
        Self::internal(format!("I/O error: {error}"))
    }
}

impl From<String> for McpError {
    fn from(message: String) -> Self {
        Self::tool(message)
    }
}

impl From<&str> for McpError {
    fn from(message: &str) -> Self {
        Self::tool(message)
    }
}

/// Why [`ServerBuilder::build`](crate::ServerBuilder::build) (or a run-time registration)
/// refused the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A `requestState` key id is empty or longer than 255 bytes.
    #[error("invalid requestState key id `{0}`: it must be 1 to 255 bytes")]
    InvalidStateKeyId(String),
    /// A `requestState` key given as text is not 64 hexadecimal digits.
    #[error("a request state key must be 64 hexadecimal digits (32 bytes)")]
    InvalidStateKey,
    /// The protocol version override is not one this SDK speaks.
    #[error("unsupported protocol version `{0}`")]
    UnsupportedProtocolVersion(String),
    /// Cache hints for a method whose results are not cacheable.
    #[error(
        "`{0}` results carry no cache hints (cacheable: server/discover, the */list methods, resources/read)"
    )]
    NotCacheable(String),
    /// Two tools, prompts, resources or templates share a name (or uri), or two
    /// [`ToolBox`](crate::ToolBox)es (or a box and the server) register state of one type.
    #[error("duplicate {kind} `{name}`")]
    Duplicate {
        /// What was duplicated (`tool`, `prompt`, `resource`, `resource template`, `state`).
        kind: &'static str,
        /// The duplicated name.
        name: String,
    },
    /// A handler reads [`State<T>`](crate::State) of a type that was never registered (with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state) or a
    /// [`ToolBox`](crate::ToolBox)).
    #[error(
        "{kind} `{name}` reads state `{state}`, which was never registered (ServerBuilder::state)"
    )]
    MissingState {
        /// What reads it (`tool`, `prompt`, `resource`, `resource template`).
        kind: &'static str,
        /// Its name (or uri, or uri template).
        name: String,
        /// The state's type.
        state: String,
    },
    /// A tool's input or output schema is not a valid JSON schema with an object root.
    #[error("invalid schema for tool `{tool}`: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        reason: String,
    },
    /// A name breaks the spec's naming rules.
    #[error("invalid name `{name}`: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A resource template is not a valid RFC 6570 template.
    #[error("invalid uri template `{template}`: {reason}")]
    InvalidTemplate {
        /// The template.
        template: String,
        /// What is wrong.
        reason: String,
    },
    /// A custom or extension method would override a protocol method or one already defined.
    #[error("`{0}` is a protocol method or already defined, and cannot be redefined")]
    MethodAlreadyDefined(String),
    /// An [`Extension`](crate::Extension) needs a capability or another extension the server
    /// does not have.
    #[error("extension `{extension}` requires {missing}, which the server does not declare")]
    ExtensionRequires {
        /// The extension's identifier.
        extension: String,
        /// What it needs (``the `resources` capability``, ``the extension `x/y` ``).
        missing: String,
    },
    /// A skill the Skills extension was asked to serve breaks its rules (see
    /// `server::skills::SkillError`).
    #[error("skills: {0}")]
    Skills(String),
    /// The page size must be at least 1.
    #[error("page size must be at least 1")]
    InvalidPageSize,
    /// A required scope is not an RFC 6749 scope token (empty, or with spaces, `"` or `\`).
    #[error(
        "invalid scope {scope:?} of {owner}: a scope is one or more printable ASCII characters, without spaces, `\"` or `\\`"
    )]
    InvalidScope {
        /// What requires it (``tool `echo` ``, `the server`, ...).
        owner: String,
        /// The scope as given.
        scope: String,
    },
}

impl From<crate::protocol::InputRequiredResult> for McpError {
    fn from(result: crate::protocol::InputRequiredResult) -> Self {
        Self::input_required(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_maps_to_its_code() {
        assert_eq!(
            McpError::invalid_params("x").error_code(),
            ErrorCode::INVALID_PARAMS
        );
        assert_eq!(
            McpError::method_not_found("x").error_code(),
            ErrorCode::METHOD_NOT_FOUND
        );
        let missing = McpError::resource_not_found("test://x").to_error_object();
        assert_eq!(missing.code, code::RESOURCE_NOT_FOUND);
        assert_eq!(missing.data, Some(json!({"uri": "test://x"})));
        assert_eq!(
            McpError::internal("secret path /etc")
                .to_error_object()
                .message,
            "internal error"
        );
        assert_eq!(McpError::code(-1, "no").error_code(), ErrorCode(-1));
    }
}
