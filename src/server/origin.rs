//! Where a request comes from, decided once, where its bytes arrive (the HTTP POST handler, the
//! stdio line loop, an in-process call), and carried with it to the one place that routes it
//! (the runtime's [`Carry`](actix_mcp_actors::dev::Carry); read back from the request's scope).
//! Nothing downstream decides the era again or reads `_meta` for it again.
//!
//! | origin | comes from | version, client info and capabilities |
//! | --- | --- | --- |
//! | [`Origin::Session`] | a 2025-11-25 (or older) session: HTTP with `Mcp-Session-Id` and the `initialize` that opens one, stdio after `initialize` | the session's, negotiated at `initialize` |
//! | [`Origin::Sessionless`] | 2025-11-25 (or older) without a session: the HTTP transport's stateless mode, an in-process call | the version the transport names; no capabilities |
//! | [`Origin::V2026`] | a 2026-07-28 request, on any transport | its own `_meta` envelope, checked at the door |
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>

use std::cell::RefCell;
use std::sync::Arc;

use actix_mcp_actors::{ErrorObject, dev::Request};
use serde_json::value::RawValue;

use crate::protocol::RequestMeta;
use crate::protocol::v2026::envelope::EnvelopeText;
use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel, ProtocolVersion, method};
use crate::server::context::TransportInfo;

/// Where a request comes from. See the [module docs](self).
#[derive(Debug, Clone)]
pub(crate) enum Origin {
    /// A request of a 2025-11-25 (or older) session, or the `initialize` that opens one.
    Session,
    /// A 2025-11-25 (or older) request without a session, served under `version`.
    Sessionless {
        /// The version the transport serves it under.
        version: ProtocolVersion,
    },
    /// A 2026-07-28 request, with its envelope.
    V2026(Envelope),
}

/// A 2026-07-28 request's `_meta` envelope, checked at the door and shared (a request's
/// context, its rounds and its task take it without copying the capabilities).
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    pub(crate) version: ProtocolVersion,
    pub(crate) client_capabilities: Arc<ClientCapabilities>,
    pub(crate) client_info: Option<Arc<Implementation>>,
    /// The log level the request opted in to; `None`: no log messages at all.
    pub(crate) log_level: Option<LoggingLevel>,
}

impl From<RequestMeta> for Envelope {
    fn from(meta: RequestMeta) -> Self {
        Self {
            version: meta.version,
            client_capabilities: Arc::new(meta.client_capabilities),
            client_info: meta.client_info.map(Arc::new),
            log_level: meta.log_level,
        }
    }
}

impl Envelope {
    /// Reads and checks a 2026-07-28 request's envelope, wherever its parse left `_meta`.
    ///
    /// A client sends the same envelope with every request, so each worker thread keeps the
    /// last few envelopes it read, by `_meta`'s exact text (nothing of one client's envelope is
    /// another's unless the texts are equal to the byte), and a request that repeats one is
    /// served it without reading its text again. An envelope that differs from request to
    /// request (a `progressToken`, a trace context) is read, and its capabilities and client
    /// info, which do not differ, are still parsed once and shared.
    ///
    /// # Errors
    /// As [`RequestMeta::parse`]. A malformed envelope is never kept: it is refused each time.
    pub(crate) fn of_request(request: &Request) -> Result<Self, ErrorObject> {
        let Some(text) = &request.meta else {
            return RequestMeta::parse(request.params.as_ref()).map(Self::from);
        };
        ENVELOPES.with_borrow_mut(|memo| memo.get_or_parse(text.get(), || Self::read(text)))
    }

    /// Reads an envelope from `_meta`'s text, its parts through their own memos.
    fn read(text: &RawValue) -> Result<Self, ErrorObject> {
        let envelope = EnvelopeText::read(Some(text))?;
        let client_capabilities = CAPABILITIES.with_borrow_mut(|memo| {
            memo.get_or_parse(envelope.client_capabilities_text(), || {
                envelope.client_capabilities().map(Arc::new)
            })
        })?;
        let client_info = match envelope.client_info_text() {
            Some(info) => Some(INFO.with_borrow_mut(|memo| {
                memo.get_or_parse(info, || EnvelopeText::client_info(info).map(Arc::new))
            })?),
            None => None,
        };
        Ok(Self {
            version: envelope.version,
            client_capabilities,
            client_info,
            log_level: envelope.log_level()?,
        })
    }

    /// The envelope a 2026-07-28 notification carries in its `_meta`, as far as it is whole;
    /// otherwise a bare one of that revision (a notification is not refused for its
    /// envelope: there is no one to answer).
    #[cfg(feature = "http")]
    pub(crate) fn of_notification(notification: &actix_mcp_actors::dev::Notification) -> Self {
        match RequestMeta::parse(notification.params.as_ref()) {
            Ok(meta) => Self::from(meta),
            Err(_) => Self {
                version: ProtocolVersion::V2026_07_28,
                client_capabilities: Arc::default(),
                client_info: None,
                log_level: None,
            },
        }
    }
}

thread_local! {
    static ENVELOPES: RefCell<Memo<Envelope>> = const { RefCell::new(Memo::new()) };
    static CAPABILITIES: RefCell<Memo<Arc<ClientCapabilities>>> =
        const { RefCell::new(Memo::new()) };
    static INFO: RefCell<Memo<Arc<Implementation>>> = const { RefCell::new(Memo::new()) };
}

/// The last few values parsed from short texts, by their text; a value is cheap to clone (its
/// parts shared).
struct Memo<T> {
    entries: Vec<(Box<str>, T)>,
    /// The entry the next new text replaces, once the memo is full.
    next: usize,
}

impl<T: Clone> Memo<T> {
    /// How many texts a memo holds.
    const ENTRIES: usize = 4;
    /// The longest text kept, in bytes: a longer one is parsed every time.
    const LONGEST: usize = 1024;

    const fn new() -> Self {
        Self {
            entries: Vec::new(),
            next: 0,
        }
    }

    fn get_or_parse<E>(
        &mut self,
        text: &str,
        parse: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        if let Some((_, value)) = self.entries.iter().find(|(kept, _)| **kept == *text) {
            return Ok(value.clone());
        }
        let value = parse()?;
        if text.len() <= Self::LONGEST {
            let entry = (Box::from(text), value.clone());
            if self.entries.len() < Self::ENTRIES {
                self.entries.push(entry);
            } else {
                self.entries[self.next] = entry;
                self.next = (self.next + 1) % Self::ENTRIES;
            }
        }
        Ok(value)
    }
}

impl Origin {
    /// The origin of a request that arrived without a session (an in-process call), or over a
    /// stdio connection's session (`in_session`): a 2026-07-28 request when its `_meta` names a
    /// version or its method exists only in that revision (its envelope then checked), else
    /// [`Origin::Session`] over stdio and [`Origin::Sessionless`] under `version` otherwise.
    ///
    /// # Errors
    /// The answer to a 2026-07-28 request whose envelope is missing or malformed, or whose
    /// method that revision removed.
    pub(crate) fn of(
        request: &Request,
        in_session: bool,
        version: ProtocolVersion,
    ) -> Result<Self, ErrorObject> {
        let v2026 = RequestMeta::version_of_request(request).is_some()
            || method::ADDED_IN_2026.contains(&request.method.as_str());
        if v2026 {
            return Self::v2026(request);
        }
        Ok(if in_session {
            Self::Session
        } else {
            Self::Sessionless { version }
        })
    }

    /// The origin of a request its transport knows to be of revision 2026-07-28: its envelope,
    /// checked.
    ///
    /// # Errors
    /// As [`of`](Self::of).
    pub(crate) fn v2026(request: &Request) -> Result<Self, ErrorObject> {
        Self::v2026_of(request, Envelope::of_request(request))
    }

    /// [`v2026`](Self::v2026) of a request whose envelope has been read.
    ///
    /// # Errors
    /// As [`of`](Self::of).
    pub(crate) fn v2026_of(
        request: &Request,
        envelope: Result<Envelope, ErrorObject>,
    ) -> Result<Self, ErrorObject> {
        let meta = envelope?;
        if method::REMOVED_IN_2026.contains(&request.method.as_str()) {
            return Err(ErrorObject::method_not_found(&format!(
                "{} (removed in protocol {})",
                request.method, meta.version
            )));
        }
        Ok(Self::V2026(meta))
    }

    /// Whether this is a 2026-07-28 request.
    #[cfg(feature = "http")]
    pub(crate) fn is_v2026(&self) -> bool {
        matches!(self, Self::V2026(_))
    }
}

/// What a transport hands the protocol layer with each request: its origin and what the
/// transport knows of it (the caller on a protected endpoint, the headers, the trace context).
#[derive(Debug, Clone)]
pub(crate) struct Arrival {
    pub(crate) origin: Origin,
    pub(crate) transport: Option<Arc<TransportInfo>>,
}

impl Arrival {
    /// A request of `origin`, with nothing more from its transport.
    pub(crate) fn of(origin: Origin) -> Self {
        Self {
            origin,
            transport: None,
        }
    }

    /// The same, with what the transport knows of it.
    #[cfg(feature = "http")]
    pub(crate) fn with_transport(mut self, transport: Option<Arc<TransportInfo>>) -> Self {
        self.transport = transport;
        self
    }

    /// As the runtime carries it with the request.
    pub(crate) fn carry(self) -> actix_mcp_actors::dev::Carry {
        actix_mcp_actors::dev::Carry::origin(self)
    }
}

#[cfg(test)]
mod tests {
    use actix_mcp_actors::ErrorCode;
    use actix_mcp_actors::dev::{Incoming, parse_message_keeping_meta};

    use super::*;

    fn request(meta: &str) -> Request {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{meta}}}}}"#
        );
        match parse_message_keeping_meta(text.as_bytes()) {
            Ok(Incoming::Request(request)) => request,
            other => panic!("{other:?}"),
        }
    }

    fn envelope(meta: &str) -> Result<Envelope, ErrorObject> {
        Envelope::of_request(&request(meta))
    }

    #[test]
    fn an_envelope_seen_again_shares_its_parts_and_another_has_its_own() {
        let a = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}"#;
        let b = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"2"},"io.modelcontextprotocol/logLevel":"info"}"#;
        let (Ok(first), Ok(other), Ok(again)) = (envelope(a), envelope(b), envelope(a)) else {
            panic!("refused");
        };
        assert!(Arc::ptr_eq(
            &first.client_capabilities,
            &again.client_capabilities
        ));
        assert!(first.client_capabilities.supports_sampling());
        assert!(!other.client_capabilities.supports_sampling());
        let name = |e: &Envelope| e.client_info.as_ref().map(|i| i.name.clone());
        assert_eq!(name(&first), Some("a".to_owned()));
        assert_eq!(name(&other), Some("b".to_owned()));
        assert_eq!(other.log_level, Some(LoggingLevel::Info));
        assert_eq!(
            again.log_level, None,
            "a repeated envelope is its own, not the last one"
        );
        // The same envelope but for one member: read from its own text, its parts shared.
        let traced = b.replacen('{', r#"{"progressToken":"t-1","#, 1);
        let traced = envelope(&traced).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(traced.log_level, Some(LoggingLevel::Info));
        assert!(Arc::ptr_eq(
            &traced.client_capabilities,
            &other.client_capabilities
        ));
        // The same envelope read from a value agrees with the one read from text.
        let mut inlined = request(b);
        inlined.inline_meta();
        let from_value = Envelope::of_request(&inlined).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(from_value.client_capabilities, other.client_capabilities);
        assert_eq!(from_value.client_info, other.client_info);
        // More texts than the memo holds: every one still reads as itself.
        for i in 0..10 {
            let meta = format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"c{i}","version":"1"}}}}"#
            );
            let read = envelope(&meta).unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(name(&read), Some(format!("c{i}")));
        }
    }

    #[test]
    fn a_malformed_envelope_is_refused_each_time_and_in_the_order_of_a_whole_parse() {
        let info = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":1},"io.modelcontextprotocol/logLevel":"loud"}"#;
        for _ in 0..2 {
            let error = envelope(info).err().map(|e| (e.code, e.message));
            assert!(
                matches!(&error, Some((ErrorCode::INVALID_PARAMS, m)) if m.contains("clientInfo")),
                "{error:?}"
            );
        }
        let caps = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":7}}"#;
        let error = envelope(caps).err().map(|e| e.message);
        assert!(error.is_some_and(|m| m.contains("clientCapabilities")));
        let version = r#"{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":[]}"#;
        let error = envelope(version).err().map(|e| e.message);
        assert!(
            error.is_some_and(|m| m.contains("must be a string")),
            "{version}"
        );
    }
}
