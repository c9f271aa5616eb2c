//! What revision 2026-07-28 changes in routing: which requests are served from their own
//! `_meta` envelope (checked), `server/discover`, the methods the revision removed or gates on
//! a capability, and the envelope of every result (`resultType`, cache hints, server info).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/discover>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching>

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use actix_mcp_actors::{ErrorObject, dev::Reply};

use crate::error::{ErrorKind, McpError};
use crate::protocol::v2026::{META_SERVER_INFO, TASKS_EXTENSION, missing_capability};
use crate::protocol::{ClientCapabilities, DiscoverResult, ProtocolVersion, ResultType, method};
use crate::server::ServerInner;
use crate::server::context::RequestContext;
use crate::server::mrtr::Answer;

use super::lifecycle::capabilities;
use super::support::to_raw;

/// `-32601` for a method whose capability the server does not offer (so that discovery and
/// the methods served agree).
pub(super) fn check_offered(server: &ServerInner, method_name: &str) -> Result<(), McpError> {
    if !matches!(
        method_name,
        method::TOOLS_LIST
            | method::TOOLS_CALL
            | method::PROMPTS_LIST
            | method::PROMPTS_GET
            | method::RESOURCES_LIST
            | method::RESOURCES_TEMPLATES_LIST
            | method::RESOURCES_READ
            | method::COMPLETION_COMPLETE
    ) {
        return Ok(());
    }
    let offered = match &server.capabilities {
        Some(caps) => match method_name {
            method::TOOLS_LIST | method::TOOLS_CALL => caps.tools.is_some(),
            method::PROMPTS_LIST | method::PROMPTS_GET => caps.prompts.is_some(),
            method::COMPLETION_COMPLETE => caps.completions.is_some(),
            _ => caps.resources.is_some(),
        },
        // What `capabilities` derives from the catalog, read without building it.
        None => {
            let catalog = server.catalog();
            match method_name {
                method::TOOLS_LIST | method::TOOLS_CALL => !catalog.tools.is_empty(),
                method::PROMPTS_LIST | method::PROMPTS_GET => !catalog.prompts.is_empty(),
                method::COMPLETION_COMPLETE => {
                    server.completion.is_some()
                        || !catalog.prompts.is_empty()
                        || !catalog.templates.is_empty()
                }
                _ => server.serves_resources(&catalog),
            }
        }
    };
    if offered {
        Ok(())
    } else {
        Err(McpError::method_not_found(method_name))
    }
}

/// `server/discover`: the versions served (both eras), the capabilities, the instructions, and
/// the server's info in `_meta`.
pub(super) fn discover(server: &Arc<ServerInner>) -> Result<Reply, McpError> {
    let mut capabilities = capabilities(server);
    crate::server::extension::advertise(&mut capabilities, &server.extensions, true);
    if server.tasks.is_some() {
        // Extensions exist only in 2026 capabilities: `initialize` results never list them.
        let extensions = capabilities
            .extra
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(extensions) = extensions {
            extensions.insert(TASKS_EXTENSION.into(), Value::Object(Map::new()));
        }
    }
    let result = DiscoverResult {
        // Every version this dual-era server serves, newest first.
        supported_versions: ProtocolVersion::ALL
            .iter()
            .rev()
            .map(|v| v.as_str().to_owned())
            .collect(),
        capabilities,
        instructions: server.instructions.clone(),
        result_type: ResultType::Complete,
        cache: server
            .config
            .cache
            .hints(method::SERVER_DISCOVER)
            .unwrap_or_default(),
        meta: None,
    };
    Ok(to_raw(&result))
}

/// The methods that may answer `input_required` (multi-round-trip requests).
pub(super) const MRTR_METHODS: &[&str] = &[
    method::TOOLS_CALL,
    method::PROMPTS_GET,
    method::RESOURCES_READ,
];

/// A request's answer as its 2026 reply: an `input_required` round is the request's result;
/// from a method that may not answer so, it is an internal error.
///
/// The result's `requestState` is sealed (the handler's own state, the parked call, the round
/// and the answers so far), so every `input_required` result carries one.
pub(super) fn answer(
    server: &ServerInner,
    cx: &RequestContext,
    method_name: &str,
    answer: Result<Answer, McpError>,
) -> Result<Reply, McpError> {
    let result = match answer {
        Ok(Answer::Done(reply)) => return Ok(reply),
        Ok(Answer::InputRequired(result)) => Some(*result),
        // An `input_required` error whose result could not be read.
        Err(error) if error.kind() == ErrorKind::InputRequired => None,
        // 2026-07-28 has no -32042: URL-mode elicitations a request needs first are its input.
        Err(error) => match error.url_elicitations_as_input() {
            Some(result) => Some(result),
            None => return Err(error),
        },
    };
    if !MRTR_METHODS.contains(&method_name) {
        return Err(McpError::internal(format!(
            "a {method_name} handler answered input_required, which only tools/call, \
             prompts/get and resources/read may do"
        )));
    }
    let (Some(mut result), Some(mrtr)) = (result, cx.mrtr()) else {
        return Err(McpError::internal(
            "an input_required answer without its result",
        ));
    };
    if let Some(requests) = &result.input_requests {
        crate::server::mrtr::require_declared(cx.client_capabilities(), requests)?;
    }
    mrtr.seal(server, &mut result);
    Ok(to_raw(&result.to_value()))
}

/// Completes a 2026 result: `resultType` (`complete` unless the result says otherwise), the
/// method's cache hints on a complete cacheable result, and the server's info in `_meta`.
pub(super) fn finish(server: &ServerInner, method_name: &str, reply: Reply) -> Reply {
    let raw = reply?;
    if is_complete(server, method_name, raw.get()) {
        return Ok(raw);
    }
    if let Some(fast) = splice(server, method_name, raw.get()) {
        return Ok(fast);
    }
    let mut result: Map<String, Value> = serde_json::from_str(raw.get())
        .map_err(|err| ErrorObject::internal(format!("a result is not an object: {err}")))?;
    let complete = match result.get("resultType") {
        None => {
            result.insert(
                "resultType".into(),
                Value::from(ResultType::Complete.as_str()),
            );
            true
        }
        Some(value) => value.as_str() == Some(ResultType::Complete.as_str()),
    };
    if complete
        && !result.contains_key("ttlMs")
        && let Some(hints) = server.config.cache.hints(method_name)
    {
        result.insert("ttlMs".into(), Value::from(hints.ttl_ms));
        result.insert("cacheScope".into(), Value::from(hints.cache_scope.as_str()));
    }
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta
        && !meta.contains_key(META_SERVER_INFO)
        && let Ok(info) = serde_json::to_value(&server.info)
    {
        meta.insert(META_SERVER_INFO.into(), info);
    }
    to_raw(&result)
}

/// A result of revision 2026-07-28 serialised complete, in one pass: what [`finish`] would
/// make of `result` (`resultType`, the server's info in `_meta`), written in front of its own
/// members. For a result without a `_meta` of its own, of a method without cache hints;
/// anything else is serialised as it is, and [`finish`] completes it.
pub(super) fn complete<T: Serialize>(
    server: &ServerInner,
    method_name: &str,
    result: &T,
    has_meta: bool,
) -> Reply {
    if has_meta || server.config.cache.hints(method_name).is_some() {
        return to_raw(result);
    }
    #[derive(Serialize)]
    struct Complete<'a, T> {
        #[serde(rename = "resultType")]
        result_type: &'static str,
        #[serde(rename = "_meta")]
        meta: CompleteMeta<'a>,
        #[serde(flatten)]
        result: &'a T,
    }
    #[derive(Serialize)]
    struct CompleteMeta<'a> {
        #[serde(rename = "io.modelcontextprotocol/serverInfo")]
        server_info: &'a RawValue,
    }
    to_raw(&Complete {
        result_type: ResultType::Complete.as_str(),
        meta: CompleteMeta {
            server_info: server.info_json(),
        },
        result,
    })
}

/// Whether `raw` starts as [`complete`] writes a result: `resultType` complete and the
/// server's info in `_meta`, first, for a method without cache hints. [`finish`] would change
/// nothing in it.
fn is_complete(server: &ServerInner, method_name: &str, raw: &str) -> bool {
    raw.strip_prefix("{\"resultType\":\"complete\",\"_meta\":{\"")
        .and_then(|rest| rest.strip_prefix(META_SERVER_INFO))
        .and_then(|rest| rest.strip_prefix("\":"))
        .and_then(|rest| rest.strip_prefix(server.info_json().get()))
        .is_some_and(|rest| rest.starts_with('}'))
        && server.config.cache.hints(method_name).is_none()
}

/// The common case of [`finish`] without parsing the result: an object that has neither a
/// `resultType` nor a `_meta` anywhere gets both (and the cache hints) written in front of its
/// own members. `None` when the result needs the general path.
fn splice(
    server: &ServerInner,
    method_name: &str,
    raw: &str,
) -> Option<Box<serde_json::value::RawValue>> {
    let members = raw.strip_prefix('{')?;
    if raw.contains("\"resultType\"") || raw.contains("\"_meta\"") {
        return None;
    }
    let info = server.info_json().get();
    let mut out = String::with_capacity(raw.len() + info.len() + 96);
    out.push_str("{\"resultType\":\"complete\",");
    if let Some(hints) = server.config.cache.hints(method_name) {
        out.push_str("\"ttlMs\":");
        out.push_str(&hints.ttl_ms.to_string());
        out.push_str(",\"cacheScope\":\"");
        out.push_str(hints.cache_scope.as_str());
        out.push_str("\",");
    }
    out.push_str("\"_meta\":{\"");
    out.push_str(META_SERVER_INFO);
    out.push_str("\":");
    out.push_str(info);
    out.push('}');
    if members.trim_start() != "}" {
        out.push(',');
    }
    out.push_str(members);
    serde_json::value::RawValue::from_string(out).ok()
}

/// Whether `caps` declares every capability of `required` (a `ClientCapabilities` fragment:
/// each key present, nested keys too; `elicitation: {}` counts as form mode).
pub(crate) fn declares(caps: &ClientCapabilities, required: &Value) -> bool {
    let Ok(Value::Object(declared)) = serde_json::to_value(caps) else {
        return false;
    };
    let Value::Object(required) = required else {
        return true;
    };
    required.iter().all(|(key, inner)| {
        if key == "elicitation" {
            let form_only = inner
                .as_object()
                .is_none_or(|m| m.keys().all(|k| k == "form"));
            if form_only {
                return caps.supports_elicitation_form();
            }
        }
        match declared.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Object(have)) => covers(have, inner),
            Some(_) => true,
        }
    })
}

fn covers(have: &Map<String, Value>, want: &Value) -> bool {
    let Value::Object(want) = want else {
        return true;
    };
    want.iter().all(|(key, inner)| match have.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Object(nested)) => covers(nested, inner),
        Some(_) => true,
    })
}

/// `-32021` unless `caps` declares `required`.
pub(crate) fn require(caps: &ClientCapabilities, required: &Value) -> Result<(), ErrorObject> {
    if declares(caps, required) {
        return Ok(());
    }
    let names: Vec<&str> = required
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    Err(missing_capability(required.clone(), &names.join(", ")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn caps(value: Value) -> ClientCapabilities {
        serde_json::from_value(value).unwrap_or_default()
    }

    #[test]
    fn declared_capabilities_cover_nested_requirements() {
        let c = caps(json!({ "sampling": { "tools": {} }, "elicitation": {} }));
        assert!(declares(&c, &json!({ "sampling": {} })));
        assert!(declares(&c, &json!({ "sampling": { "tools": {} } })));
        assert!(!declares(&c, &json!({ "sampling": { "context": {} } })));
        assert!(declares(&c, &json!({ "elicitation": {} })));
        assert!(declares(&c, &json!({ "elicitation": { "form": {} } })));
        assert!(!declares(&c, &json!({ "elicitation": { "url": {} } })));
        assert!(!declares(&c, &json!({ "roots": {} })));
        assert!(declares(&caps(json!({})), &json!({})));
    }

    #[test]
    fn the_methods_served_match_the_capabilities_discovered() {
        let empty = crate::Server::builder("e", "1").build();
        let full = crate::Server::builder("f", "1")
            .tool(crate::ToolDef::new("t", || async { "" }).description("T"))
            .prompt(
                crate::PromptDef::new("p", |_cx: crate::RequestContext| async {
                    crate::protocol::PromptMessage::user_text("x")
                })
                .description("P"),
            )
            .build();
        for server in [empty, full] {
            let server = server.unwrap_or_else(|err| panic!("{err}"));
            let caps = capabilities(&server.inner);
            for (method_name, declared) in [
                (method::TOOLS_CALL, caps.tools.is_some()),
                (method::PROMPTS_LIST, caps.prompts.is_some()),
                (method::RESOURCES_READ, caps.resources.is_some()),
                (method::COMPLETION_COMPLETE, caps.completions.is_some()),
            ] {
                assert_eq!(
                    check_offered(&server.inner, method_name).is_ok(),
                    declared,
                    "{method_name}"
                );
            }
        }
    }

    #[test]
    fn a_missing_capability_names_what_is_required() {
        let err = require(&caps(json!({})), &json!({ "sampling": {} }))
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(
            err.code,
            crate::error::code::MISSING_REQUIRED_CLIENT_CAPABILITY
        );
        assert_eq!(
            err.data,
            Some(json!({ "requiredCapabilities": { "sampling": {} } }))
        );
    }
}

#[cfg(test)]
mod splice_tests {
    use super::*;

    fn server() -> crate::Server {
        crate::Server::builder("splice", "1.0.0")
            .build()
            .unwrap_or_else(|err| panic!("{err}"))
    }

    fn general(server: &ServerInner, method_name: &str, raw: &str) -> Value {
        let mut result: Map<String, Value> = serde_json::from_str(raw).unwrap_or_default();
        result.insert("resultType".into(), Value::from("complete"));
        if let Some(hints) = server.config.cache.hints(method_name) {
            result.insert("ttlMs".into(), Value::from(hints.ttl_ms));
            result.insert("cacheScope".into(), Value::from(hints.cache_scope.as_str()));
        }
        result.insert(
            "_meta".into(),
            serde_json::json!({ META_SERVER_INFO: { "name": "splice", "version": "1.0.0" } }),
        );
        Value::Object(result)
    }

    #[test]
    fn the_fast_path_writes_what_the_general_path_would() {
        let server = server();
        for (method_name, raw) in [
            (
                method::TOOLS_CALL,
                r#"{"content":[{"type":"text","text":"hi"}]}"#,
            ),
            (method::TOOLS_LIST, r#"{"tools":[]}"#),
            (method::COMPLETION_COMPLETE, "{}"),
        ] {
            let fast = splice(&server.inner, method_name, raw)
                .unwrap_or_else(|| panic!("no fast path for {raw}"));
            let fast: Value = serde_json::from_str(fast.get()).unwrap_or_default();
            assert_eq!(fast, general(&server.inner, method_name, raw), "{raw}");
        }
        assert!(splice(&server.inner, method::TOOLS_CALL, r#"{"_meta":{}}"#).is_none());
        assert!(
            splice(
                &server.inner,
                method::TOOLS_CALL,
                r#"{"resultType":"task"}"#
            )
            .is_none()
        );
    }

    #[test]
    fn a_result_written_complete_is_what_finish_makes_and_finish_keeps_it() {
        let server = server();
        let inner = &server.inner;
        let text = crate::protocol::CallToolResult::text("hi");
        let raw =
            complete(inner, method::TOOLS_CALL, &text, false).unwrap_or_else(|err| panic!("{err}"));
        assert!(
            is_complete(inner, method::TOOLS_CALL, raw.get()),
            "{}",
            raw.get()
        );
        let written: Value = serde_json::from_str(raw.get()).unwrap_or_default();
        let plain = serde_json::to_string(&text).unwrap_or_default();
        assert_eq!(written, general(inner, method::TOOLS_CALL, &plain));
        let kept = finish(inner, method::TOOLS_CALL, Ok(raw.clone()))
            .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(kept.get(), raw.get());
        // A result with its own `_meta`, or a method with cache hints: written as it is, and
        // completed by `finish`.
        let mut with_meta = text.clone();
        with_meta.meta = Some(serde_json::Map::new());
        let raw = complete(inner, method::TOOLS_CALL, &with_meta, true)
            .unwrap_or_else(|err| panic!("{err}"));
        assert!(!is_complete(inner, method::TOOLS_CALL, raw.get()));
        let raw =
            complete(inner, method::TOOLS_LIST, &text, false).unwrap_or_else(|err| panic!("{err}"));
        assert!(!raw.get().contains("resultType"));
        // Not the server's own info: not taken as complete.
        let other = r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}},"content":[]}"#;
        assert!(!is_complete(inner, method::TOOLS_CALL, other));
    }
}
