//! Helpers shared by the integration tests: validation of every server message against the
//! MCP JSON schema, the one bound every wait uses ([`WAIT`]) with the waits built on it
//! ([`within`], [`within_for`], [`eventually`]), an SSE frame reader ([`sse`]), a real
//! Streamable HTTP server with a raw client ([`http`]) and the tools it serves in the HTTP tests
//! ([`http_tools`]), a client over stdio framing ([`pipe`]) and the protocol model's golden
//! fixtures with their per-revision schemas ([`golden`]), recording servers that stand for
//! hostile MCP and authorization servers ([`hostile`]), the server and requests of the
//! multi round-trip tests ([`mrtr_tools`]), the authorization server and protected MCP server
//! of the OAuth client tests ([`oauth_mock`]), and the in-memory OpenTelemetry pipeline of the
//! telemetry tests (`otel`, feature `otel`), the 2026-07-28 envelope, raw client and server
//! ([`v2026`]), and Redis servers, clusters and Sentinels of the tests' own ([`redis`],
//! [`redis_ha`]).
//!
//! Each revision's schema is the spec's own `schema.json`, vendored under
//! `tests/fixtures/protocol/_schema/`; [`assert_valid`] checks against 2025-11-25,
//! [`assert_valid_in`] against any.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::HashMap;
use std::fmt::Display;
use std::future::Future;
use std::panic::Location;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

#[cfg(feature = "auth")]
pub mod authz;
#[cfg(all(feature = "auth", feature = "http"))]
pub mod bearer;
#[cfg(feature = "server")]
pub mod client_server;
#[cfg(feature = "client")]
pub mod fake;
pub mod golden;
pub mod hostile;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "http")]
pub mod http_tools;
#[cfg(feature = "server")]
pub mod in_process;
#[cfg(feature = "http")]
pub mod mrtr_tools;
#[cfg(all(feature = "auth", feature = "client-http"))]
pub mod oauth_mock;
#[cfg(all(feature = "otel", feature = "http", feature = "client-http"))]
pub mod otel;
#[cfg(feature = "http")]
pub mod pipe;
pub mod redis;
pub mod redis_ha;
pub mod sse;
#[cfg(feature = "http")]
pub mod task_tools;
#[cfg(feature = "http")]
pub mod v2026;
#[cfg(feature = "client-http")]
pub mod wire;

/// The longest any test waits for one step (a message, an answer, a state it polls for): a
/// broken server fails, it never hangs. Every wait of the tests is bounded by it, through
/// [`within`] and [`eventually`]; [`within_for`] is for the few waits that cover more.
pub const WAIT: Duration = Duration::from_secs(5);

/// `fut`'s output; fails, naming the wait's place in the test, if it takes longer than
/// [`WAIT`].
#[track_caller]
pub fn within<F: Future>(fut: F) -> impl Future<Output = F::Output> {
    within_for(WAIT, fut)
}

/// `fut`'s output; fails, naming the wait's place in the test, if it takes longer than `limit`.
/// For the few waits that legitimately cover more than one step (a child process starting, a
/// whole authorization flow): each call says why.
#[track_caller]
pub fn within_for<F: Future>(limit: Duration, fut: F) -> impl Future<Output = F::Output> {
    let caller = Location::caller();
    async move {
        match tokio::time::timeout(limit, fut).await {
            Ok(output) => output,
            Err(_) => panic!("not done within {limit:?} (the wait at {caller})"),
        }
    }
}

/// What [`eventually`] polls for: `true`, `Some(value)` or `Ok(value)`. An `Err` says what was
/// seen instead; the last one ends the failure message.
pub trait Outcome {
    /// What the wait gives back once the outcome is reached.
    type Value;
    /// The value once reached; else what was seen, if the check said.
    fn reached(self) -> Result<Self::Value, Option<String>>;
}

impl Outcome for bool {
    type Value = ();
    fn reached(self) -> Result<(), Option<String>> {
        if self { Ok(()) } else { Err(None) }
    }
}

impl<T> Outcome for Option<T> {
    type Value = T;
    fn reached(self) -> Result<T, Option<String>> {
        self.ok_or(None)
    }
}

impl<T> Outcome for Result<T, String> {
    type Value = T;
    fn reached(self) -> Result<T, Option<String>> {
        self.map_err(Some)
    }
}

/// Polls `check` every 10 ms until its [`Outcome`] is reached, and gives back its value; fails
/// with `what` (and the last thing `check` saw) after [`WAIT`]. For a state the test cannot be
/// told about (a gauge, a table, exported spans); an event it can wait for directly, with
/// [`within`].
#[track_caller]
pub fn eventually<O: Outcome>(
    what: impl Display,
    mut check: impl FnMut() -> O,
) -> impl Future<Output = O::Value> {
    eventually_async(what, move || std::future::ready(check()))
}

/// [`eventually`] for a check that has to wait itself (a request that asks the server).
#[track_caller]
pub fn eventually_async<O: Outcome, F: Future<Output = O>>(
    what: impl Display,
    mut check: impl FnMut() -> F,
) -> impl Future<Output = O::Value> {
    let caller = Location::caller();
    async move {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let seen = match check().await.reached() {
                Ok(value) => return value,
                Err(seen) => seen,
            };
            if tokio::time::Instant::now() >= deadline {
                let seen = seen.map(|seen| format!("; last seen: {seen}"));
                panic!(
                    "not within {WAIT:?}: {what}{} (the wait at {caller})",
                    seen.unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// The protocol revision whose schema [`assert_valid`] checks against.
pub const SCHEMA_VERSION: &str = "2025-11-25";

/// The spec's `schema.json` of `version`, vendored under `tests/fixtures/protocol/_schema/`.
fn schema(version: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/protocol/_schema")
        .join(version)
        .join("schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read the MCP schema at {}: {err}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The compiled validator of `definition` in `version`'s schema, built once per test binary.
fn validator(version: &str, definition: &str) -> Arc<jsonschema::Validator> {
    type Cache = HashMap<(String, String), Arc<jsonschema::Validator>>;
    static SCHEMAS: OnceLock<Mutex<HashMap<String, Arc<Value>>>> = OnceLock::new();
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let key = (version.to_owned(), definition.to_owned());
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(found) = cache.lock().unwrap().get(&key) {
        return found.clone();
    }
    let schema = SCHEMAS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap()
        .entry(version.to_owned())
        .or_insert_with(|| Arc::new(schema(version)))
        .clone();
    let mut root = Value::clone(&schema);
    assert!(
        root["$defs"].get(definition).is_some(),
        "the {version} schema has no definition `{definition}`"
    );
    root["$ref"] = Value::String(format!("#/$defs/{definition}"));
    let compiled = Arc::new(jsonschema::validator_for(&root).unwrap());
    cache.lock().unwrap().insert(key, compiled.clone());
    compiled
}

/// Panics, listing the problems, unless `value` is a valid `definition` of the MCP schema
/// ([`SCHEMA_VERSION`]).
pub fn assert_valid(definition: &str, value: &Value) {
    assert_valid_in(SCHEMA_VERSION, definition, value);
}

/// Panics, listing the problems, unless `value` is a valid `definition` of `version`'s schema.
pub fn assert_valid_in(version: &str, definition: &str, value: &Value) {
    let problems: Vec<String> = validator(version, definition)
        .iter_errors(value)
        .map(|err| format!("{}: {err}", err.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "not a valid {version} `{definition}`: {problems:?}\n{value:#}"
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
