//! Helpers shared by the integration tests: validation of every server message against the
//! MCP JSON schema, the bound every wait uses, an SSE frame reader ([`sse`]), a real
//! Streamable HTTP server with a raw client ([`http`]) and the tools it serves in the HTTP tests
//! ([`http_tools`]), a client over stdio framing ([`pipe`]) and the protocol model's golden
//! fixtures with their per-revision schemas ([`golden`]), and recording servers that stand for
//! hostile MCP and authorization servers ([`hostile`]).
//!
//! The schema is the spec's own `schema.json` (2025-11-25), vendored under
//! `tests/fixtures/protocol/_schema/`.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

pub mod authz;
pub mod bearer;
pub mod client_server;
pub mod fake;
pub mod golden;
pub mod hostile;
pub mod http;
pub mod http_tools;
pub mod pipe;
pub mod redis;
pub mod sse;
pub mod task_tools;
pub mod wire;

/// The longest any test waits for one message: a broken server fails, it never hangs.
pub const WAIT: Duration = Duration::from_secs(5);

const SCHEMA_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/protocol/_schema/2025-11-25/schema.json"
);

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = Path::new(SCHEMA_PATH);
        let text = std::fs::read_to_string(path).unwrap_or_else(|err| {
            panic!("cannot read the MCP schema at {}: {err}", path.display())
        });
        serde_json::from_str(&text).unwrap()
    })
}

fn validator(definition: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(found) = cache.lock().unwrap().get(definition) {
        return found.clone();
    }
    let mut root = schema().clone();
    assert!(
        root["$defs"].get(definition).is_some(),
        "the schema has no definition `{definition}`"
    );
    root["$ref"] = Value::String(format!("#/$defs/{definition}"));
    let compiled = Arc::new(jsonschema::validator_for(&root).unwrap());
    cache
        .lock()
        .unwrap()
        .insert(definition.to_owned(), compiled.clone());
    compiled
}

/// Panics, listing the problems, unless `value` is a valid `definition` of the MCP schema.
pub fn assert_valid(definition: &str, value: &Value) {
    let validator = validator(definition);
    let problems: Vec<String> = validator
        .iter_errors(value)
        .map(|err| format!("{}: {err}", err.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "not a valid `{definition}`: {problems:?}\n{value:#}"
    );
}

/// Validates one message the server sent by its envelope: `JSONRPCRequest`,
/// `JSONRPCNotification`, `JSONRPCResultResponse` or `JSONRPCErrorResponse`.
///
/// An error answering a line whose id could not be read carries `"id": null` (JSON-RPC 2.0
/// §5), which the MCP schema's `RequestId` does not allow; those are checked without their id.
pub fn assert_valid_message(message: &Value) {
    let definition = if message.get("method").is_some() {
        if message.get("id").is_some() {
            "JSONRPCRequest"
        } else {
            "JSONRPCNotification"
        }
    } else if message.get("error").is_some() {
        "JSONRPCErrorResponse"
    } else {
        "JSONRPCResultResponse"
    };
    if message.get("id") == Some(&Value::Null) && definition == "JSONRPCErrorResponse" {
        let mut without_id = message.clone();
        without_id.as_object_mut().unwrap().remove("id");
        assert_valid(definition, &without_id);
    } else {
        assert_valid(definition, message);
    }
}
