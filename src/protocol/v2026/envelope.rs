//! The per-request `_meta` envelope of a 2026-07-28 request.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta>

#[cfg(feature = "server")]
use std::borrow::Cow;

use serde_json::Value;
use serde_json::value::RawValue;

use actix_mcp_actors::ErrorObject;
#[cfg(feature = "server")]
use actix_mcp_actors::dev::Request;
use actix_mcp_actors::dev::{raw_members, raw_str};

use super::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    unsupported_version,
};
use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel, ProtocolVersion, member};

/// The per-request envelope of a 2026-07-28 request, read from `params._meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// The request's protocol version.
    pub version: ProtocolVersion,
    /// The client's capabilities for this request only.
    pub client_capabilities: ClientCapabilities,
    /// What the client says about itself.
    pub client_info: Option<Implementation>,
    /// The log level the request opted in to; `None`: no log messages at all.
    pub log_level: Option<LoggingLevel>,
}

impl RequestMeta {
    /// The protocol version a request's `_meta` names, if any (a string; it may be unknown).
    pub fn version_of(params: Option<&Value>) -> Option<&str> {
        member(member(params?, "_meta")?, META_PROTOCOL_VERSION)?.as_str()
    }

    /// The protocol version a request's `_meta` names, wherever its parse left `_meta`.
    #[cfg(feature = "server")]
    pub(crate) fn version_of_request(request: &Request) -> Option<Cow<'_, str>> {
        match &request.meta {
            Some(meta) => {
                let [version] = raw_members(meta, [META_PROTOCOL_VERSION]);
                raw_str(version?)
            }
            None => Self::version_of(request.params.as_ref()).map(Cow::Borrowed),
        }
    }

    /// Reads and checks the envelope of a request's params.
    ///
    /// # Errors
    /// `-32602` when `_meta`, its protocol version or its client capabilities are missing or
    /// malformed, or the log level is unknown; `-32022` (with `data.supported` and
    /// `data.requested`) for a version that is not one without the handshake (2026-07-28 and later) this SDK serves.
    pub fn parse(params: Option<&Value>) -> Result<Self, ErrorObject> {
        let meta = params
            .and_then(|p| member(p, "_meta"))
            .filter(|meta| meta.is_object())
            .and_then(|meta| serde_json::value::to_raw_value(meta).ok());
        Self::parse_object(meta.as_deref())
    }

    /// The checks of [`parse`](Self::parse), on `_meta`'s text when it is an object.
    fn parse_object(meta: Option<&RawValue>) -> Result<Self, ErrorObject> {
        let members = EnvelopeText::read(meta)?;
        Ok(Self {
            version: members.version,
            client_capabilities: members.client_capabilities()?,
            client_info: members
                .client_info_text()
                .map(EnvelopeText::client_info)
                .transpose()?,
            log_level: members.log_level()?,
        })
    }
}

/// A request's envelope read from `_meta`'s text in one pass: its version checked, its client
/// capabilities known to be an object, the rest still text. Each part is parsed by its own
/// method, in this order, so that the first error is the one a whole parse reports.
pub(crate) struct EnvelopeText<'a> {
    /// The request's protocol version.
    pub(crate) version: ProtocolVersion,
    capabilities: &'a RawValue,
    info: Option<&'a RawValue>,
    level: Option<&'a RawValue>,
}

impl<'a> EnvelopeText<'a> {
    /// Reads `_meta`'s members (`meta`: its text, an object; `None` when there is none) and
    /// checks the version and the capabilities' presence and kind.
    ///
    /// # Errors
    /// As [`RequestMeta::parse`], for those two.
    pub(crate) fn read(meta: Option<&'a RawValue>) -> Result<Self, ErrorObject> {
        let Some(meta) = meta else {
            return Err(ErrorObject::invalid_params(
                "params._meta is required in protocol 2026-07-28 (with the protocol version \
                 and client capabilities)",
            ));
        };
        let [requested, capabilities, info, level] = raw_members(
            meta,
            [
                META_PROTOCOL_VERSION,
                META_CLIENT_CAPABILITIES,
                META_CLIENT_INFO,
                META_LOG_LEVEL,
            ],
        );
        let requested = match requested.map(raw_str) {
            Some(Some(v)) => v,
            Some(None) => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
                )));
            }
            None => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta[\"{META_PROTOCOL_VERSION}\"] is required"
                )));
            }
        };
        let version = match requested.parse::<ProtocolVersion>() {
            Ok(version) if !version.has_handshake() => version,
            _ => return Err(unsupported_version(&requested)),
        };
        let capabilities = match capabilities {
            Some(raw) if raw.get().starts_with('{') => raw,
            Some(_) => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object"
                )));
            }
            None => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta[\"{META_CLIENT_CAPABILITIES}\"] is required"
                )));
            }
        };
        Ok(Self {
            version,
            capabilities,
            info: info.filter(|raw| raw.get() != "null"),
            level: level.filter(|raw| raw.get() != "null"),
        })
    }

    /// The client capabilities' text (an object).
    #[cfg(feature = "server")]
    pub(crate) fn client_capabilities_text(&self) -> &'a str {
        self.capabilities.get()
    }

    /// The client capabilities.
    ///
    /// # Errors
    /// `-32602` when they are malformed.
    pub(crate) fn client_capabilities(&self) -> Result<ClientCapabilities, ErrorObject> {
        serde_json::from_str(self.capabilities.get()).map_err(|err| {
            ErrorObject::invalid_params(format!(
                "_meta[\"{META_CLIENT_CAPABILITIES}\"] is malformed: {err}"
            ))
        })
    }

    /// The client info's text, unless it is absent or `null`.
    pub(crate) fn client_info_text(&self) -> Option<&'a str> {
        self.info.map(RawValue::get)
    }

    /// The client info read from its text.
    ///
    /// # Errors
    /// `-32602` when it is malformed.
    pub(crate) fn client_info(text: &str) -> Result<Implementation, ErrorObject> {
        serde_json::from_str(text).map_err(|err| {
            ErrorObject::invalid_params(format!(
                "_meta[\"{META_CLIENT_INFO}\"] is malformed: {err}"
            ))
        })
    }

    /// The log level the request opted in to.
    ///
    /// # Errors
    /// `-32602` when it is not a log level.
    pub(crate) fn log_level(&self) -> Result<Option<LoggingLevel>, ErrorObject> {
        self.level
            .map(|raw| {
                serde_json::from_str::<LoggingLevel>(raw.get()).map_err(|err| {
                    ErrorObject::invalid_params(format!(
                        "_meta[\"{META_LOG_LEVEL}\"] is not a log level: {err}"
                    ))
                })
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::code;

    fn meta(value: Value) -> Option<Value> {
        Some(json!({ "_meta": value }))
    }

    #[test]
    fn parses_a_complete_envelope() {
        let params = meta(json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: { "sampling": {} },
            META_CLIENT_INFO: { "name": "c", "version": "1" },
            META_LOG_LEVEL: "debug",
        }));
        let parsed = RequestMeta::parse(params.as_ref()).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(parsed.version, ProtocolVersion::V2026_07_28);
        assert!(parsed.client_capabilities.supports_sampling());
        assert_eq!(parsed.client_info.map(|i| i.name), Some("c".to_owned()));
        assert_eq!(parsed.log_level, Some(LoggingLevel::Debug));
    }

    #[test]
    fn refuses_missing_fields_with_invalid_params() {
        for params in [
            None,
            Some(json!({})),
            meta(json!({ META_CLIENT_CAPABILITIES: {} })),
            meta(json!({ META_PROTOCOL_VERSION: "2026-07-28" })),
            meta(json!({ META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: [] })),
            meta(json!({ META_PROTOCOL_VERSION: 7, META_CLIENT_CAPABILITIES: {} })),
            meta(
                json!({ META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}, META_LOG_LEVEL: "loud" }),
            ),
        ] {
            let err = RequestMeta::parse(params.as_ref()).err();
            assert_eq!(
                err.map(|e| e.code),
                Some(actix_mcp_actors::ErrorCode::INVALID_PARAMS)
            );
        }
    }

    #[test]
    fn refuses_unknown_and_stateful_versions_with_the_supported_list() {
        for version in ["v999.0.0", "2025-11-25"] {
            let params =
                meta(json!({ META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: {} }));
            let err = RequestMeta::parse(params.as_ref())
                .err()
                .unwrap_or_else(|| panic!("{version} accepted"));
            assert_eq!(err.code, code::UNSUPPORTED_PROTOCOL_VERSION);
            assert_eq!(
                err.data,
                Some(json!({
                    "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                    "requested": version,
                }))
            );
        }
    }
}
