//! W3C trace context (`traceparent`, `tracestate`) and baggage in `params._meta` (SEP-414) and
//! in HTTP headers.

use actix_mcp_actors::dev::{Request, raw_members};
use opentelemetry::Context;
use opentelemetry::propagation::{
    Extractor, Injector, TextMapCompositePropagator, TextMapPropagator as _,
};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde_json::{Map, Value};

/// The keys the propagator reads and writes (SEP-414 exempts them from the `_meta` prefix
/// rule).
const KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// W3C trace context, then W3C baggage.
pub(super) fn propagator() -> TextMapCompositePropagator {
    TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ])
}

/// The trace context a message's `params._meta` carries, if it carries a valid one.
pub(super) fn from_meta(params: Option<&Value>) -> Option<Context> {
    let meta = params?.get("_meta")?.as_object()?;
    meta.get("traceparent")?;
    valid(propagator().extract(&MetaFields(meta)))
}

/// [`from_meta`] of a request, wherever its parse left `_meta`.
pub(super) fn from_request(request: &Request) -> Option<Context> {
    let Some(text) = &request.meta else {
        return from_meta(request.params.as_ref());
    };
    let [traceparent] = raw_members(text, ["traceparent"]);
    traceparent?;
    let meta = serde_json::from_str::<Map<String, Value>>(text.get()).ok()?;
    valid(propagator().extract(&MetaFields(&meta)))
}

/// Writes `cx` into `params._meta` (made if missing), replacing trace keys already there.
/// Params that are not an object (a by-position array) are left alone.
pub(super) fn into_meta(cx: &Context, params: &mut Option<Value>) {
    let params = params.get_or_insert_with(|| Value::Object(Map::new()));
    let Some(params) = params.as_object_mut() else {
        return;
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        // A `_meta` that is not an object is the caller's mistake; the peer will say so.
        return;
    }
    if let Some(meta) = meta.as_object_mut() {
        for key in KEYS {
            meta.remove(key);
        }
        propagator().inject_context(cx, &mut MetaFields(meta));
    }
}

/// `Some(cx)` when `cx` holds a valid remote span context.
fn valid(cx: Context) -> Option<Context> {
    cx.span().span_context().is_valid().then_some(cx)
}

/// A `_meta` object as a carrier.
struct MetaFields<M>(M);

impl Extractor for MetaFields<&Map<String, Value>> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

impl Injector for MetaFields<&mut Map<String, Value>> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// The trace headers of an HTTP request, captured for the requests it carries.
#[derive(Debug, Clone, Default)]
pub(crate) struct TraceHeaders {
    fields: Vec<(&'static str, String)>,
}

impl TraceHeaders {
    /// The request's `traceparent`, `tracestate` and `baggage` headers; `None` without a
    /// `traceparent` (or with one that is not text).
    #[cfg(feature = "http")]
    pub(crate) fn capture(headers: &actix_web::http::header::HeaderMap) -> Option<Self> {
        headers.get("traceparent")?.to_str().ok()?;
        let fields = KEYS
            .iter()
            .filter_map(|key| {
                let value = headers.get(*key)?.to_str().ok()?;
                Some((*key, value.to_owned()))
            })
            .collect();
        Some(Self { fields })
    }

    /// The context the headers carry, if valid.
    pub(super) fn context(&self) -> Option<Context> {
        valid(propagator().extract(self))
    }
}

impl Extractor for TraceHeaders {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(key))
            .map(|(_, value)| value.as_str())
    }

    fn keys(&self) -> Vec<&str> {
        self.fields.iter().map(|(name, _)| *name).collect()
    }
}
