//! JSON-RPC 2.0 envelope: ids, requests, notifications, responses and error objects.
//!
//! This module knows nothing about MCP methods. It parses one incoming message into
//! [`Incoming`], refusing anything that is not a single JSON-RPC 2.0 object with the error the
//! JSON-RPC specification names, and it serialises outgoing messages into [`Frame`]s.
//!
//! Spec: <https://www.jsonrpc.org/specification>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic>

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

pub use crate::frame::{Frame, FrameKind};
use crate::raw_text::{Key, Valid, valid_meta};
#[cfg(test)]
use crate::raw_text::{MAX_META_NESTING, may_be_refused};
pub use crate::raw_text::{raw_members, raw_str};

/// The JSON-RPC version string every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

/// A JSON-RPC error code. The constants are the codes JSON-RPC 2.0 itself defines; the codes
/// MCP adds are defined by the protocol layer (`actix_mcp::error::code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// Invalid method parameters.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: Self = Self(-32603);
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A request id: a string or an integer, never `null`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => n.fmt(f),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        Self::String(s.into())
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description, one sentence.
    pub message: String,
    /// Additional information about the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// Builds an error object without data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data` to this error.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700`: the bytes were not valid JSON.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, format!("parse error: {detail}"))
    }

    /// `-32600`: the JSON was not a valid JSON-RPC message.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            format!("invalid request: {detail}"),
        )
    }

    /// `-32601`: no such method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    }

    /// `-32602`: the params were not acceptable.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_PARAMS,
            format!("invalid params: {detail}"),
        )
    }

    /// `-32603`: the server failed.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INTERNAL_ERROR,
            format!("internal error: {detail}"),
        )
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// A request received from the peer.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params, if any (an object).
    pub params: Option<Value>,
    /// `params._meta`, when the parse kept it as text ([`parse_keeping_meta`]): then it is an
    /// object and `params` holds no `_meta` member. `None` otherwise, whatever `params` holds.
    pub meta: Option<Box<RawValue>>,
}

impl Request {
    /// A request with these params (`_meta` in them, if any).
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
        Self {
            id,
            method: method.into(),
            params,
            meta: None,
        }
    }

    /// Moves a `_meta` kept as text ([`meta`](Self::meta)) into `params` as a value, for code
    /// that reads it there. Nothing to do when there is none.
    pub fn inline_meta(&mut self) {
        if let Some(raw) = self.meta.take() {
            insert_meta(&mut self.params, &raw);
        }
    }
}

/// Puts `_meta` text back into params as a value.
fn insert_meta(params: &mut Option<Value>, raw: &RawValue) {
    // The text was parsed as a JSON object once already, and split from object params.
    if let Ok(meta) = serde_json::from_str::<Value>(raw.get())
        && let Some(Value::Object(params)) = params
    {
        params.insert("_meta".to_owned(), meta);
    }
}

/// A notification received from the peer.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params, if any.
    pub params: Option<Value>,
}

/// A response received from the peer, to a request we sent.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result or the error.
    pub outcome: Result<Value, ErrorObject>,
}

/// One parsed incoming message.
#[derive(Debug, Clone)]
pub enum Incoming {
    /// A request, to be answered.
    Request(Request),
    /// A notification, never answered.
    Notification(Notification),
    /// A response to a request this side sent.
    Response(Response),
}

/// Why an incoming message was refused, with the error to answer and the id it belongs to.
#[derive(Debug, Clone)]
pub struct Rejection {
    /// The id of the offending request, when it could be read.
    pub id: Option<RequestId>,
    /// The error to send back.
    pub error: ErrorObject,
}

impl Rejection {
    /// The serialised error response for this rejection.
    pub fn to_frame(&self) -> Frame {
        Frame::error(self.id.as_ref(), &self.error)
    }
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
struct RawMessage<'a, P = Value> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    // A present `null` must stay visible (it is invalid), so it is not folded into `None`.
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<MethodName>,
    #[serde(default)]
    params: Option<P>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A `method` member: its name when it is a string, `Err` for any other JSON value (consumed
/// whole), so that a message whose method has the wrong type is still refused with its id.
struct MethodName(Result<String, ()>);

impl<'de> Deserialize<'de> for MethodName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MethodVisitor)
    }
}

struct MethodVisitor;

impl<'de> serde::de::Visitor<'de> for MethodVisitor {
    type Value = MethodName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MethodName, E> {
        Ok(MethodName(Ok(v.to_owned())))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<MethodName, E> {
        Ok(MethodName(Ok(v)))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<MethodName, E> {
        Ok(MethodName(Err(())))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<MethodName, E> {
        Ok(MethodName(Err(())))
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<MethodName, E> {
        Ok(MethodName(Err(())))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<MethodName, E> {
        Ok(MethodName(Err(())))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<MethodName, E> {
        Ok(MethodName(Err(())))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<MethodName, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(MethodName(Err(())))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<MethodName, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(MethodName(Err(())))
    }
}

/// Parses one JSON-RPC message from bytes.
///
/// # Errors
/// `-32700` when the bytes are not JSON, `-32600` when the JSON is not a single JSON-RPC 2.0
/// message (batches included: they were removed from MCP in 2025-06-18).
#[allow(clippy::result_large_err)] // a rejection is answered at once, never propagated far
pub fn parse(bytes: &[u8]) -> Result<Incoming, Rejection> {
    parse_as::<Value>(bytes)
}

/// Parses one JSON-RPC message from bytes like [`parse`], but a request's `params._meta`
/// object stays text, in [`Request::meta`] (a notification's is parsed as usual): for a
/// transport that reads a few members of it and hands the rest on unread.
///
/// # Errors
/// As [`parse`].
#[allow(clippy::result_large_err)] // see `parse`
pub fn parse_keeping_meta(bytes: &[u8]) -> Result<Incoming, Rejection> {
    parse_as::<SplitParams>(bytes)
}

#[allow(clippy::result_large_err)] // see `parse`
fn parse_as<'a, P: Params + Deserialize<'a>>(bytes: &'a [u8]) -> Result<Incoming, Rejection> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'{') {
        // The common case, in one pass: syntax errors are -32700, shape errors -32600. Bytes
        // checked as UTF-8 once, all at a time, are read as text, which does not check each
        // string (key, value, kept text) again; others are read as bytes, which reports where.
        let read = match std::str::from_utf8(bytes) {
            Ok(text) => serde_json::from_str::<RawMessage<'_, P>>(text),
            Err(_) => serde_json::from_slice::<RawMessage<'_, P>>(bytes),
        };
        return match read {
            Ok(raw) => classify(raw),
            // Whatever refuses params read with `_meta` as text (checked as a value would be,
            // but not in the same order), the message is refused as a parse into a value
            // refuses it.
            Err(_) if P::KEEPS_META => parse(bytes),
            Err(err) if err.is_syntax() || err.is_eof() => Err(Rejection {
                id: None,
                error: ErrorObject::parse_error(err),
            }),
            Err(err) => Err(Rejection {
                id: None,
                error: ErrorObject::invalid_request(err),
            }),
        };
    }
    // Anything else is refused; valid JSON tells which error applies.
    serde_json::from_slice::<&RawValue>(bytes).map_err(|err| Rejection {
        id: None,
        error: ErrorObject::parse_error(err),
    })?;
    let error = if first == Some(&b'[') {
        ErrorObject::invalid_request("batches are not supported; send one message")
    } else {
        ErrorObject::invalid_request("expected a JSON object")
    };
    Err(Rejection { id: None, error })
}

/// The longest request id accepted, in bytes of its JSON text. Ids are echoed in answers and
/// kept while a request runs, so one is never allowed to be large.
pub const MAX_ID_LEN: usize = 256;

/// The longest method name accepted, in bytes. Method names are quoted in errors and logs.
pub const MAX_METHOD_LEN: usize = 256;

fn parse_id(raw: &RawValue) -> Result<RequestId, ErrorObject> {
    if raw.get().len() > MAX_ID_LEN {
        return Err(ErrorObject::invalid_request(format!(
            "id longer than {MAX_ID_LEN} bytes"
        )));
    }
    // Read by its first byte, without a `Value` (the text is valid JSON already).
    let text = raw.get();
    let id = match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<&str>(text)
            .map(Arc::from)
            .or_else(|_| serde_json::from_str::<String>(text).map(Arc::from))
            .ok()
            .map(RequestId::String),
        Some(b'-' | b'0'..=b'9') => serde_json::from_str::<i64>(text)
            .ok()
            .map(RequestId::Number),
        Some(b'n') => return Err(ErrorObject::invalid_request("id must not be null")),
        _ => None,
    };
    id.ok_or_else(|| ErrorObject::invalid_request("id must be a string or an integer"))
}

/// What a message's `params` parse into.
trait Params {
    /// Whether they are an array (refused with `-32602`; other non-objects with `-32600`).
    fn kind(&self) -> ParamsKind;
    /// The params, and their `_meta` when it was kept as text.
    fn into_parts(self) -> (Value, Option<Box<RawValue>>);
    /// Whether `_meta` is kept as text.
    const KEEPS_META: bool = false;
}

#[derive(Clone, Copy, PartialEq)]
enum ParamsKind {
    Object,
    Array,
    Other,
}

impl Params for Value {
    fn kind(&self) -> ParamsKind {
        match self {
            Value::Object(_) => ParamsKind::Object,
            Value::Array(_) => ParamsKind::Array,
            _ => ParamsKind::Other,
        }
    }

    fn into_parts(self) -> (Value, Option<Box<RawValue>>) {
        (self, None)
    }
}

/// Params parsed with an object `_meta` kept as text. Anything but an object is only told
/// apart by its kind: it is refused.
struct SplitParams {
    kind: ParamsKind,
    params: serde_json::Map<String, Value>,
    meta: Option<Box<RawValue>>,
}

impl Params for SplitParams {
    fn kind(&self) -> ParamsKind {
        self.kind
    }

    const KEEPS_META: bool = true;

    fn into_parts(self) -> (Value, Option<Box<RawValue>>) {
        (Value::Object(self.params), self.meta)
    }
}

impl<'de> Deserialize<'de> for SplitParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SplitVisitor)
    }
}

struct SplitVisitor;

impl SplitVisitor {
    fn other(kind: ParamsKind) -> SplitParams {
        SplitParams {
            kind,
            params: serde_json::Map::new(),
            meta: None,
        }
    }
}

impl<'de> serde::de::Visitor<'de> for SplitVisitor {
    type Value = SplitParams;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<SplitParams, A::Error> {
        let mut params = serde_json::Map::new();
        let mut meta = None;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if key == "_meta" {
                // The last `_meta` counts, as in a parse into a value.
                params.shift_remove("_meta");
                meta = None;
                let raw = map.next_value::<&'de RawValue>()?;
                // Reading text checks less than building a value does (nesting, lone
                // surrogate escapes, numbers out of range): checked here.
                valid_meta(raw).map_err(serde::de::Error::custom)?;
                if raw.get().starts_with('{') {
                    meta = Some(raw.to_owned());
                } else if let Ok(value) = serde_json::from_str::<Value>(raw.get()) {
                    // Not an object: left for the params' own checks to refuse.
                    params.insert(key.into_owned(), value);
                }
            } else {
                let value = map.next_value::<Value>()?;
                params.insert(key.into_owned(), value);
            }
        }
        Ok(SplitParams {
            kind: ParamsKind::Object,
            params,
            meta,
        })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<SplitParams, A::Error> {
        // Checked as a parse into a value checks it (the parser limits the nesting), to be
        // refused for the same reason.
        while seq.next_element_seed(Valid(usize::MAX))?.is_some() {}
        Ok(Self::other(ParamsKind::Array))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<SplitParams, E> {
        Ok(Self::other(ParamsKind::Other))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<SplitParams, E> {
        Ok(Self::other(ParamsKind::Other))
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<SplitParams, E> {
        Ok(Self::other(ParamsKind::Other))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<SplitParams, E> {
        Ok(Self::other(ParamsKind::Other))
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<SplitParams, E> {
        Ok(Self::other(ParamsKind::Other))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<SplitParams, E> {
        Ok(Self::other(ParamsKind::Other))
    }
}

#[allow(clippy::result_large_err)] // see `parse`
fn classify<P: Params>(raw: RawMessage<'_, P>) -> Result<Incoming, Rejection> {
    let id = match raw.id {
        Some(id) => Some(parse_id(id).map_err(|error| Rejection { id: None, error })?),
        None => None,
    };
    let reject = |error: ErrorObject| Rejection {
        id: id.clone(),
        error,
    };
    match raw.jsonrpc.map(|v| v.get()) {
        Some("\"2.0\"") => {}
        Some(_) => {
            return Err(reject(ErrorObject::invalid_request(
                "jsonrpc must be \"2.0\"",
            )));
        }
        None => {
            return Err(reject(ErrorObject::invalid_request(
                "missing jsonrpc version",
            )));
        }
    }
    if let Some(MethodName(method)) = raw.method {
        let Ok(method) = method else {
            return Err(reject(ErrorObject::invalid_request(
                "method must be a string",
            )));
        };
        if method.len() > MAX_METHOD_LEN {
            return Err(reject(ErrorObject::invalid_request(format!(
                "method name longer than {MAX_METHOD_LEN} bytes"
            ))));
        }
        if raw.result.is_some() || raw.error.is_some() {
            return Err(reject(ErrorObject::invalid_request(
                "a request cannot carry result or error",
            )));
        }
        match raw.params.as_ref().map(Params::kind) {
            None | Some(ParamsKind::Object) => {}
            // JSON-RPC allows parameters by position, but every MCP method names its
            // parameters: an array is valid JSON-RPC with the wrong params.
            Some(ParamsKind::Array) => {
                return Err(reject(ErrorObject::invalid_params(
                    "MCP params are an object, not an array of positional parameters",
                )));
            }
            Some(ParamsKind::Other) => {
                return Err(reject(ErrorObject::invalid_request(
                    "params must be an object",
                )));
            }
        }
        let (params, meta) = match raw.params.map(Params::into_parts) {
            Some((params, meta)) => (Some(params), meta),
            None => (None, None),
        };
        return Ok(match id {
            Some(id) => Incoming::Request(Request {
                id,
                method,
                params,
                meta,
            }),
            None => {
                let mut params = params;
                if let Some(meta) = meta {
                    insert_meta(&mut params, &meta);
                }
                Incoming::Notification(Notification { method, params })
            }
        });
    }
    let outcome = match (raw.result, raw.error) {
        (Some(result), None) => Ok(result),
        (None, Some(error)) => {
            Err(serde_json::from_value::<ErrorObject>(error).map_err(|err| {
                reject(ErrorObject::invalid_request(format!(
                    "malformed error object: {err}"
                )))
            })?)
        }
        (None, None) if id.is_none() => {
            return Err(reject(ErrorObject::invalid_request("missing method")));
        }
        _ => {
            return Err(reject(ErrorObject::invalid_request(
                "a response needs exactly one of result or error",
            )));
        }
    };
    let Some(id) = id else {
        return Err(reject(ErrorObject::invalid_request(
            "a response needs an id",
        )));
    };
    Ok(Incoming::Response(Response { id, outcome }))
}

#[cfg(test)]
#[path = "jsonrpc_tests.rs"]
mod tests;
