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

/// The members `keys` name of the JSON object `object`, as text (the last one where a key
/// repeats, as a parse into a value keeps); all `None` when `object` is not an object.
pub fn raw_members<'a, const N: usize>(
    object: &'a RawValue,
    keys: [&str; N],
) -> [Option<&'a RawValue>; N] {
    let mut found = [None; N];
    let mut de = serde_json::Deserializer::from_str(object.get());
    // Text the parse accepted once: an error only means `object` is not an object.
    let _ = serde::Deserializer::deserialize_map(
        &mut de,
        MembersVisitor {
            keys: &keys,
            found: &mut found,
        },
    );
    found
}

struct MembersVisitor<'k, 'f, 'a, const N: usize> {
    keys: &'k [&'k str; N],
    found: &'f mut [Option<&'a RawValue>; N],
}

impl<'de, const N: usize> serde::de::Visitor<'de> for MembersVisitor<'_, '_, 'de, N> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let value = map.next_value::<&'de RawValue>()?;
            if let Some(slot) = self.keys.iter().position(|k| *k == key) {
                self.found[slot] = Some(value);
            }
        }
        Ok(())
    }
}

/// An object key, borrowed unless it has escapes.
struct Key<'a>(std::borrow::Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> serde::de::Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(std::borrow::Cow::Borrowed(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(std::borrow::Cow::Owned(v)))
    }
}

/// A JSON string's text as a string (`None`: not a string).
pub fn raw_str(raw: &RawValue) -> Option<std::borrow::Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    match serde_json::from_str::<&str>(text) {
        Ok(borrowed) => Some(std::borrow::Cow::Borrowed(borrowed)),
        Err(_) => serde_json::from_str::<String>(text)
            .ok()
            .map(std::borrow::Cow::Owned),
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
        // The common case, in one pass: syntax errors are -32700, shape errors -32600.
        return match serde_json::from_slice::<RawMessage<'_, P>>(bytes) {
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

/// How deep `_meta` may nest, counting itself, for a message to parse into a value: `serde_json`
/// parses 127 levels, and the message and its params take two.
const MAX_META_NESTING: usize = 125;

/// Checks a JSON value as a parse into a value would, building nothing: its strings' escapes,
/// its numbers' range and (beyond the limit of the parser it runs in) its nesting, here at
/// most this many levels.
#[derive(Clone, Copy)]
struct Valid(usize);

impl<'de> serde::de::DeserializeSeed<'de> for Valid {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Valid {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = Valid(self.0.checked_sub(1).ok_or_else(too_deep)?);
        while map.next_key::<Key<'de>>()?.is_some() {
            map.next_value_seed(inner)?;
        }
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = Valid(self.0.checked_sub(1).ok_or_else(too_deep)?);
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

fn too_deep<E: serde::de::Error>() -> E {
    E::custom("nested too deep")
}

/// `Err` when a parse into a value refuses `_meta`'s text.
fn valid_meta(text: &RawValue) -> Result<(), serde_json::Error> {
    if !may_be_refused(text.get().as_bytes()) {
        return Ok(());
    }
    let mut de = serde_json::Deserializer::from_str(text.get());
    serde::de::DeserializeSeed::deserialize(Valid(MAX_META_NESTING), &mut de)
}

/// Whether text read without a value can hold what a parse into a value refuses: nesting past
/// [`MAX_META_NESTING`] (two bytes a level), a `\u` escape (a lone surrogate), a number out of
/// range (an exponent, which follows a digit, or over 300 digits).
fn may_be_refused(text: &[u8]) -> bool {
    if text.len() > 2 * MAX_META_NESTING {
        return true;
    }
    // Without branches, so that it compiles to vector code: it runs on every request. (A
    // text's last byte is never a backslash: one always has a byte after it.)
    let next = text.get(1..).unwrap_or_default();
    text.iter().zip(next).fold(false, |found, (&byte, &after)| {
        found | (byte == b'\\') | (byte.is_ascii_digit() & ((after | 0x20) == b'e'))
    })
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
    match serde_json::to_string(value) {
        Ok(json) => json.into(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reject(input: &str) -> Rejection {
        match parse(input.as_bytes()) {
            Err(rejection) => rejection,
            Ok(msg) => panic!("{input} parsed as {msg:?}"),
        }
    }

    #[test]
    fn parses_each_message_kind() {
        assert!(
            matches!(parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Ok(Incoming::Request(r)) if r.id == RequestId::Number(1))
        );
        assert!(
            matches!(parse(br#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#), Ok(Incoming::Request(r)) if r.id == RequestId::from("a"))
        );
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"n"}"#),
            Ok(Incoming::Notification(_))
        ));
        assert!(
            matches!(parse(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#), Ok(Incoming::Response(r)) if r.outcome.is_ok())
        );
        assert!(
            matches!(parse(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#), Ok(Incoming::Response(r)) if r.outcome.is_err())
        );
    }

    fn split(input: &str) -> Request {
        match parse_keeping_meta(input.as_bytes()) {
            Ok(Incoming::Request(request)) => request,
            other => panic!("{input} parsed as {other:?}"),
        }
    }

    #[test]
    fn keeps_an_object_meta_as_text_and_the_rest_in_order() {
        let request = split(
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"b":1,"_meta":{"k": [1, {"n":2}]},"a":{"c":3}}}"#,
        );
        assert_eq!(
            request.meta.as_deref().map(RawValue::get),
            Some(r#"{"k": [1, {"n":2}]}"#)
        );
        let params = request.params.clone().unwrap_or_default();
        assert_eq!(params.to_string(), r#"{"b":1,"a":{"c":3}}"#);
        let [k, missing] = raw_members(
            request.meta.as_deref().unwrap_or_else(|| unreachable!()),
            ["k", "z"],
        );
        assert_eq!(k.map(RawValue::get), Some(r#"[1, {"n":2}]"#));
        assert!(missing.is_none());
        // Put back, it reads as a parse into a value would have left it.
        let mut inlined = request;
        inlined.inline_meta();
        assert!(inlined.meta.is_none());
        assert_eq!(
            inlined.params.map(|p| p.to_string()),
            Some(r#"{"b":1,"a":{"c":3},"_meta":{"k":[1,{"n":2}]}}"#.to_owned())
        );
    }

    #[test]
    fn a_meta_that_is_not_an_object_stays_for_the_params_checks() {
        let request = split(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":"s"}}"#);
        assert!(request.meta.is_none());
        assert_eq!(
            request.params.map(|p| p.to_string()),
            Some(r#"{"_meta":"s"}"#.to_owned())
        );
        // The last `_meta` counts, whichever its kind, as in a parse into a value.
        let request =
            split(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":1},"_meta":7}}"#);
        assert!(request.meta.is_none());
        assert_eq!(
            request.params.map(|p| p.to_string()),
            Some(r#"{"_meta":7}"#.to_owned())
        );
        let request = split(
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":7,"\u005fmeta":{"a":1}}}"#,
        );
        assert_eq!(
            request.meta.as_deref().map(RawValue::get),
            Some(r#"{"a":1}"#)
        );
        assert_eq!(request.params.map(|p| p.to_string()), Some("{}".to_owned()));
    }

    #[test]
    fn keeping_meta_changes_no_verdict_and_no_notification() {
        for input in [
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"p"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{}},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":}}}"#,
            // What reading text does not check, a parse into a value refuses.
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":"\ud800"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"\udc00":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":[1e400]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":"\ud800x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1e400]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":["\udfff"]}"#,
            // The first fault counts, as a parse into a value meets them.
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":"\ud800"}},"params":{}}"#,
        ] {
            let kept = parse_keeping_meta(input.as_bytes())
                .err()
                .map(|r| r.error.code);
            let plain = parse(input.as_bytes()).err().map(|r| r.error.code);
            assert!(kept.is_some(), "{input}");
            assert_eq!(kept, plain, "{input}");
        }
        let Ok(Incoming::Notification(notification)) =
            parse_keeping_meta(br#"{"jsonrpc":"2.0","method":"n","params":{"_meta":{"a":1}}}"#)
        else {
            panic!("not a notification");
        };
        assert_eq!(
            notification.params.map(|p| p.to_string()),
            Some(r#"{"_meta":{"a":1}}"#.to_owned())
        );
        let request = split(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#);
        assert!(request.params.is_none() && request.meta.is_none());
    }

    #[test]
    fn a_meta_nests_as_deep_as_a_value_may() {
        for depth in MAX_META_NESTING - 2..MAX_META_NESTING + 3 {
            for meta in [
                format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
                format!(
                    "{{\"a\":{}{}}}",
                    "[".repeat(depth - 1),
                    "]".repeat(depth - 1)
                ),
            ] {
                let input = format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{meta}}}}}"#
                );
                let kept = parse_keeping_meta(input.as_bytes())
                    .err()
                    .map(|r| r.error.code);
                let plain = parse(input.as_bytes()).err().map(|r| r.error.code);
                assert_eq!(kept, plain, "{depth}: {meta}");
                assert_eq!(plain.is_some(), depth > MAX_META_NESTING, "{depth}");
            }
        }
    }

    #[test]
    fn only_text_that_may_be_refused_is_checked_as_a_value() {
        for (text, doubtful) in [
            (r#"{"v":"2026-07-28","n":[1,-2.5,true,false,null]}"#, false),
            (r#"{"e":"name","E":10}"#, false),
            (r#"{"a":"\n"}"#, true),
            (r#"{"a":1e5}"#, true),
            (r#"{"a":2.5E-3}"#, true),
            (r#"{"a":"v1e"}"#, true),
        ] {
            assert_eq!(may_be_refused(text.as_bytes()), doubtful, "{text}");
        }
        let long = format!(r#"{{"a":"{}"}}"#, "x".repeat(2 * MAX_META_NESTING));
        assert!(may_be_refused(long.as_bytes()));
        assert!(!may_be_refused(b""));
    }

    #[test]
    fn reads_members_the_last_one_winning_escapes_and_all() {
        let object: Box<RawValue> = serde_json::from_str(r#"{"a":1,"\u0062":"x\ny","a":2}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        let [a, b] = raw_members(&object, ["a", "b"]);
        assert_eq!(a.map(RawValue::get), Some("2"));
        assert_eq!(b.and_then(raw_str).as_deref(), Some("x\ny"));
        let array: Box<RawValue> = serde_json::from_str("[1]").unwrap_or_else(|e| panic!("{e}"));
        let [a] = raw_members(&array, ["a"]);
        assert!(a.is_none());
    }

    #[test]
    fn refuses_bad_input_with_the_named_code() {
        assert_eq!(reject("{nope").error.code, ErrorCode::PARSE_ERROR);
        assert_eq!(reject("").error.code, ErrorCode::PARSE_ERROR);
        assert_eq!(reject("[]").error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(reject("42").error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(
            reject(r#"{"id":1,"method":"x"}"#).error.code,
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            reject(r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#).id,
            Some(RequestId::Number(1))
        );
        assert_eq!(
            reject(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#)
                .error
                .code,
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            reject(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#)
                .error
                .code,
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            reject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#)
                .error
                .code,
            ErrorCode::INVALID_REQUEST
        );
        let long_method = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"{}"}}"#,
            "m".repeat(1 << 20)
        );
        let rejection = reject(&long_method);
        assert_eq!(rejection.error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(rejection.id, Some(RequestId::from(3)));
        assert!(
            rejection.error.message.len() < 100,
            "the name is not echoed"
        );
        let long_id = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
            "i".repeat(300)
        );
        let rejection = reject(&long_id);
        assert_eq!(rejection.error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(rejection.id, None);
        for method in ["5", "null", "true", "[1,[2]]", r#"{"a":{"b":1}}"#] {
            let wrong = reject(&format!(r#"{{"jsonrpc":"2.0","id":4,"method":{method}}}"#));
            assert_eq!(wrong.id, Some(RequestId::Number(4)), "{method}");
            assert_eq!(wrong.error.code, ErrorCode::INVALID_REQUEST, "{method}");
        }
        let positional = reject(r#"{"jsonrpc":"2.0","id":7,"method":"ping","params":[1,2]}"#);
        assert_eq!(positional.error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(positional.id, Some(RequestId::from(7)));
        assert_eq!(
            reject(r#"{"jsonrpc":"2.0","id":1}"#).error.code,
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            reject(r#"{"jsonrpc":"2.0","method":5}"#).error.code,
            ErrorCode::INVALID_REQUEST
        );
    }

    #[test]
    fn frames_are_exact() {
        let id = RequestId::Number(7);
        assert_eq!(
            &*Frame::result(&id, &serde_json::json!({})).json,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#
        );
        assert_eq!(
            &*Frame::error(None, &ErrorObject::new(ErrorCode::PARSE_ERROR, "bad")).json,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#
        );
        assert_eq!(
            &*Frame::notification::<Value>("notifications/initialized", None).json,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
    }
}
