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

use std::sync::Arc;

use actix_mcp_actors::{ErrorObject, dev::Request};

use crate::protocol::RequestMeta;
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
        Self::v2026_of(request, RequestMeta::of_request(request))
    }

    /// [`v2026`](Self::v2026) of a request whose envelope has been read.
    ///
    /// # Errors
    /// As [`of`](Self::of).
    pub(crate) fn v2026_of(
        request: &Request,
        envelope: Result<RequestMeta, ErrorObject>,
    ) -> Result<Self, ErrorObject> {
        let meta = envelope?;
        if method::REMOVED_IN_2026.contains(&request.method.as_str()) {
            return Err(ErrorObject::method_not_found(&format!(
                "{} (removed in protocol {})",
                request.method, meta.version
            )));
        }
        Ok(Self::V2026(Envelope::from(meta)))
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
