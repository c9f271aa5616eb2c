//! The JSON-RPC error codes MCP and this SDK add to JSON-RPC's own (which are constants on
//! [`ErrorCode`]). Each code is defined once, here or in the runtime; `actix_mcp::error::code`
//! is this module.

use actix_mcp_actors::ErrorCode;

/// The requested resource does not exist (`resources/read`, 2025-11-25 and earlier), with
/// `data.uri`.
pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
/// The request needs URL-mode elicitations to complete first (2025-11-25), with
/// `data.elicitations`.
pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
/// The `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` or `Mcp-Param-*` header is
/// missing, malformed, or disagrees with the body (2026-07-28; HTTP 400).
pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
/// The request needs a client capability its `_meta` did not declare (2026-07-28; HTTP
/// 400), with `data.requiredCapabilities`.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
/// The request's protocol version is unknown or not served (2026-07-28; HTTP 400), with
/// `data.supported` and `data.requested`.
pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
/// The server is at a limit: too many requests in flight in one session, or too many
/// sessions (implementation-defined, in JSON-RPC's server-error range).
pub const SERVER_BUSY: ErrorCode = actix_mcp_actors::SERVER_BUSY;
/// Admission control refused the request (HTTP transport): a rate limit ran out, or a
/// concurrency limit (global, per identity, per tool) stayed full and its wait queue was
/// full or the wait reached its deadline (implementation-defined, in JSON-RPC's
/// server-error range; sent with HTTP 429 and `Retry-After`). `data.retryAfterMs` says
/// when to retry, `data.limit` which limit refused (`"global"`, `"principal"`, `"tool"`,
/// `"sessionRate"`, `"principalRate"`). See the README's Operations section.
pub const OVERLOADED: ErrorCode = ErrorCode(-32003);
/// The client cancelled the request: the answer of a cancelled request's POST in JSON
/// response mode, where an HTTP answer is due and the spec allows only a JSON-RPC response
/// (the code LSP gives `RequestCancelled`, outside JSON-RPC's and MCP's reserved ranges).
pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);
