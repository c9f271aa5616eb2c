//! OpenTelemetry traces and metrics (feature `otel`), named and attributed by the semantic
//! conventions for MCP (<https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/>).
//!
//! Once installed ([`init_otlp`], or [`install`] with providers of your own), the SDK reports:
//!
//! | what | span (kind) | metric |
//! | --- | --- | --- |
//! | each request a server receives (a tool call is one: `tools/call {tool}`) | `{mcp.method.name} {target}` (`SERVER`) | `mcp.server.operation.duration` |
//! | each request a server sends its client (sampling, elicitation, roots) | `{mcp.method.name}` (`CLIENT`) | `mcp.client.operation.duration` |
//! | each request a [`Client`](crate::client::Client) sends | `{mcp.method.name} {target}` (`CLIENT`) | `mcp.client.operation.duration` |
//! | each server request a client's handlers answer | `{mcp.method.name}` (`SERVER`) | `mcp.server.operation.duration` |
//! | each session, when it ends | | `mcp.server.session.duration`, `mcp.client.session.duration` |
//!
//! `{target}` is the tool's name (`gen_ai.tool.name`) or the prompt's (`gen_ai.prompt.name`);
//! other spans are named by the method alone. Spans carry `mcp.method.name`,
//! `jsonrpc.request.id`, `mcp.session.id`, `mcp.protocol.version`, `network.transport` (`tcp`
//! over HTTP, `pipe` over stdio), `mcp.resource.uri` where the request names a resource, and on
//! failure `error.type` (the JSON-RPC error code, or `tool_error` for a tool result with
//! `isError`, or a client-side class such as `timeout`) with `rpc.response.status_code` (the
//! JSON-RPC error code) and an error status carrying the error's message. The duration
//! histograms carry the low-cardinality subset (no ids, no URIs), in seconds, with the
//! conventions' bucket boundaries.
//!
//! The runtime's own counts (each endpoint's [`MetricsSnapshot`]) are reported as asynchronous
//! up-down counters, summed over every endpoint of the process:
//! `actix_mcp.server.sessions`, `actix_mcp.server.active_requests`,
//! `actix_mcp.server.active_tool_calls`, `actix_mcp.server.open_streams`,
//! `actix_mcp.server.pending_client_requests` and `actix_mcp.server.parked_rounds`.
//!
//! # Trace context
//!
//! A server span's parent is the W3C trace context (`traceparent`, `tracestate`) in the
//! request's `params._meta`, as SEP-414 and the conventions say; without one, the HTTP
//! request's `traceparent`/`tracestate` headers; without those, the ambient context. When both
//! are present, the HTTP context becomes a link of the span. Requests we send (server to client,
//! and client to server) get the context of their span in `params._meta` (keys `traceparent`,
//! `tracestate`, and `baggage` when there is any), replacing what a caller put there.
//!
//! Handlers run inside their request's context: `opentelemetry::Context::current()` is the
//! request's span, and the application's `tracing` spans join the trace when its subscriber
//! has the layer of [`TelemetryGuard::tracing_layer`].
//!
//! Without the feature nothing of this is compiled and the crate depends on no OpenTelemetry
//! crate.

// Both sides share this module: with one side compiled, the other's parts are unused.
#![cfg_attr(
    not(all(feature = "server", feature = "client", feature = "http")),
    allow(dead_code, unused_imports)
)]

#[cfg(feature = "client")]
mod client;
mod propagation;
mod server;

use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::Duration;

use opentelemetry::metrics::{Histogram, Meter, MeterProvider as _};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

use actix_mcp_actors::{MetricsSnapshot, dev::Metrics};

#[cfg(feature = "client")]
pub(crate) use client::{ClientSessionTimer, ClientSpan, Failure};
pub(crate) use propagation::TraceHeaders;
pub(crate) use server::{Network, ServerSessionTimer, ServerSpan, Settled, peer_request};

/// The instrumentation scope's name of every span and metric of this crate.
pub const SCOPE: &str = "actix-mcp";

/// The conventions' bucket boundaries for every MCP duration histogram, in seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// What the instrumentation records into, once installed.
struct State {
    tracer: SdkTracer,
    server_operation: Histogram<f64>,
    client_operation: Histogram<f64>,
    server_session: Histogram<f64>,
    client_session: Histogram<f64>,
}

/// The installed instrumentation; `None` until [`install`] (and after its guard is dropped).
static STATE: RwLock<Option<Arc<State>>> = RwLock::new(None);

/// The gauges of every endpoint of the process (weak: an endpoint that is gone drops out).
static TRACKED: Mutex<Vec<Weak<Metrics>>> = Mutex::new(Vec::new());

/// Whether instrumentation is installed.
pub(crate) fn enabled() -> bool {
    STATE
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .is_some()
}

/// The installed instrumentation, if any: the one check every hook makes first.
fn state() -> Option<Arc<State>> {
    STATE.read().unwrap_or_else(PoisonError::into_inner).clone()
}

/// Counts an endpoint's gauges in the process-wide up-down counters.
pub(crate) fn track(metrics: &Arc<Metrics>) {
    let mut tracked = TRACKED.lock().unwrap_or_else(PoisonError::into_inner);
    tracked.retain(|weak| weak.strong_count() > 0);
    tracked.push(Arc::downgrade(metrics));
}

/// The sum of every tracked endpoint's gauges.
fn tracked_total() -> MetricsSnapshot {
    let tracked = TRACKED.lock().unwrap_or_else(PoisonError::into_inner);
    let mut total = MetricsSnapshot::default();
    for metrics in tracked.iter().filter_map(Weak::upgrade) {
        let one = metrics.snapshot();
        total.sessions += one.sessions;
        total.in_flight += one.in_flight;
        total.streams += one.streams;
        total.tool_calls += one.tool_calls;
        total.peer_requests += one.peer_requests;
        total.parked_calls += one.parked_calls;
        total.listeners += one.listeners;
        total.tasks += one.tasks;
    }
    total
}

/// Why [`init_otlp`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// An OTLP exporter could not be built (a malformed endpoint, for one).
    #[error("cannot build the OTLP exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// Keeps the instrumentation installed; dropping it uninstalls it (unless a later
/// installation replaced it) and flushes what is buffered (and, for [`init_otlp`]'s providers,
/// shuts them down).
#[must_use = "the instrumentation is uninstalled when the guard is dropped"]
pub struct TelemetryGuard {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    /// What this guard installed (a later installation is not undone by this guard's drop).
    state: Arc<State>,
    owned: bool,
}

impl std::fmt::Debug for TelemetryGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryGuard")
            .field("owned", &self.owned)
            .finish_non_exhaustive()
    }
}

impl TelemetryGuard {
    /// A `tracing` layer that exports the application's `tracing` spans through the same
    /// tracer provider: spans made inside a handler become children of its request's span.
    pub fn tracing_layer<S>(
        &self,
    ) -> tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::SdkTracer>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        tracing_opentelemetry::layer().with_tracer(self.tracer_provider.tracer(SCOPE))
    }

    /// The tracer provider the instrumentation records into.
    pub fn tracer_provider(&self) -> &SdkTracerProvider {
        &self.tracer_provider
    }

    /// The meter provider the instrumentation records into.
    pub fn meter_provider(&self) -> &SdkMeterProvider {
        &self.meter_provider
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        {
            let mut installed = STATE.write().unwrap_or_else(PoisonError::into_inner);
            if installed
                .as_ref()
                .is_some_and(|state| Arc::ptr_eq(state, &self.state))
            {
                *installed = None;
            }
        }
        let flushed = if self.owned {
            self.tracer_provider
                .shutdown()
                .and(self.meter_provider.shutdown())
        } else {
            self.tracer_provider
                .force_flush()
                .and(self.meter_provider.force_flush())
        };
        if let Err(err) = flushed {
            tracing::warn!(%err, "flushing telemetry failed");
        }
    }
}

/// Installs the instrumentation, recording into the caller's providers (in tests, providers
/// with the SDK's in-memory exporters). Replaces any earlier installation; install into a
/// given meter provider once (each installation registers the runtime's counts on it).
pub fn install(
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
) -> TelemetryGuard {
    install_with(tracer_provider, meter_provider, false)
}

fn install_with(
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    owned: bool,
) -> TelemetryGuard {
    let scope = InstrumentationScope::builder(SCOPE)
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    let tracer = tracer_provider.tracer_with_scope(scope.clone());
    let meter = meter_provider.meter_with_scope(scope);
    let histogram = |name: &'static str, description: &'static str| {
        meter
            .f64_histogram(name)
            .with_unit("s")
            .with_description(description)
            .with_boundaries(DURATION_BUCKETS.to_vec())
            .build()
    };
    let state = State {
        tracer,
        server_operation: histogram(
            "mcp.server.operation.duration",
            "MCP request or notification duration as observed on the receiver from the time it \
             was received until the result or ack is sent.",
        ),
        client_operation: histogram(
            "mcp.client.operation.duration",
            "The duration of the MCP request or notification as observed on the sender from \
             the time it was sent until the response or ack is received.",
        ),
        server_session: histogram(
            "mcp.server.session.duration",
            "The duration of the MCP session as observed on the MCP server.",
        ),
        client_session: histogram(
            "mcp.client.session.duration",
            "The duration of the MCP session as observed on the MCP client.",
        ),
    };
    register_gauges(&meter);
    let state = Arc::new(state);
    *STATE.write().unwrap_or_else(PoisonError::into_inner) = Some(state.clone());
    TelemetryGuard {
        tracer_provider,
        meter_provider,
        state,
        owned,
    }
}

/// The runtime's counts as asynchronous up-down counters (they live as long as the meter
/// provider).
fn register_gauges(meter: &Meter) {
    type Read = fn(&MetricsSnapshot) -> usize;
    let gauges: [(&'static str, &'static str, &'static str, Read); 8] = [
        (
            "actix_mcp.server.sessions",
            "{session}",
            "Live MCP sessions.",
            |s| s.sessions,
        ),
        (
            "actix_mcp.server.active_requests",
            "{request}",
            "Requests being answered.",
            |s| s.in_flight,
        ),
        (
            "actix_mcp.server.active_tool_calls",
            "{call}",
            "Tool invocations running under supervision.",
            |s| s.tool_calls,
        ),
        (
            "actix_mcp.server.open_streams",
            "{stream}",
            "Open SSE streams.",
            |s| s.streams,
        ),
        (
            "actix_mcp.server.pending_client_requests",
            "{request}",
            "Requests sent to clients and awaiting their answer.",
            |s| s.peer_requests,
        ),
        (
            "actix_mcp.server.parked_rounds",
            "{round}",
            "Calls parked while their client answers an input_required round.",
            |s| s.parked_calls,
        ),
        (
            "actix_mcp.server.open_listeners",
            "{stream}",
            "Open subscriptions/listen streams.",
            |s| s.listeners,
        ),
        (
            "actix_mcp.server.running_tasks",
            "{task}",
            "Tasks of the Tasks extension running.",
            |s| s.tasks,
        ),
    ];
    for (name, unit, description, read) in gauges {
        meter
            .i64_observable_up_down_counter(name)
            .with_unit(unit)
            .with_description(description)
            .with_callback(move |observer| {
                let value = i64::try_from(read(&tracked_total())).unwrap_or(i64::MAX);
                observer.observe(value, &[]);
            })
            .build();
    }
}

/// Installs the instrumentation with OTLP exporters (HTTP, protobuf) to `endpoint`, the
/// collector's base URL (`http://localhost:4318`): spans go to `{endpoint}/v1/traces` in
/// batches, metrics to `{endpoint}/v1/metrics` every 10 s. The resource is the SDK's default
/// (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`). The providers become the global ones too,
/// as does the W3C propagator, so the application's own instrumentation shares them.
///
/// The exporters send from threads of their own (a blocking HTTP client, built on its own
/// thread), so this may be called from anywhere. Dropping the guard flushes and shuts them
/// down, blocking until what is buffered is sent (at most the exporters' 10 s timeout).
///
/// # Errors
/// [`TelemetryError::Exporter`] when an exporter cannot be built.
pub fn init_otlp(endpoint: &str) -> Result<TelemetryGuard, TelemetryError> {
    use opentelemetry_otlp::WithExportConfig as _;
    let base = endpoint.trim_end_matches('/');
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(format!("{base}/v1/traces"))
        .with_timeout(Duration::from_secs(10))
        .build()?;
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_endpoint(format!("{base}/v1/metrics"))
        .with_timeout(Duration::from_secs(10))
        .build()?;
    let tracer_provider = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_periodic_exporter(metrics)
        .build();
    opentelemetry::global::set_tracer_provider(tracer_provider.clone());
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    opentelemetry::global::set_text_map_propagator(propagation::propagator());
    Ok(install_with(tracer_provider, meter_provider, true))
}

/// The attributes every span and metric of one operation may carry, by the conventions.
pub(crate) mod attr {
    pub(crate) const METHOD: &str = "mcp.method.name";
    pub(crate) const SESSION_ID: &str = "mcp.session.id";
    pub(crate) const PROTOCOL_VERSION: &str = "mcp.protocol.version";
    pub(crate) const RESOURCE_URI: &str = "mcp.resource.uri";
    pub(crate) const TOOL_NAME: &str = "gen_ai.tool.name";
    pub(crate) const PROMPT_NAME: &str = "gen_ai.prompt.name";
    pub(crate) const OPERATION_NAME: &str = "gen_ai.operation.name";
    pub(crate) const REQUEST_ID: &str = "jsonrpc.request.id";
    pub(crate) const ERROR_TYPE: &str = "error.type";
    pub(crate) const STATUS_CODE: &str = "rpc.response.status_code";
    pub(crate) const NETWORK_TRANSPORT: &str = "network.transport";
    pub(crate) const NETWORK_PROTOCOL: &str = "network.protocol.name";
}

/// The attributes of one request, read from its method and params: the span's name, and the
/// attributes shared by its span and its duration metric.
pub(crate) struct Operation {
    pub(crate) name: String,
    /// Low-cardinality: on the span and the metric.
    pub(crate) shared: Vec<KeyValue>,
    /// On the span only (ids, URIs).
    pub(crate) span_only: Vec<KeyValue>,
}

impl Operation {
    pub(crate) fn of(method: &str, params: Option<&serde_json::Value>) -> Self {
        let mut shared = Vec::with_capacity(8);
        let mut span_only = Vec::with_capacity(4);
        shared.push(KeyValue::new(attr::METHOD, method.to_owned()));
        let text = |key: &str| {
            params
                .and_then(|p| p.get(key))
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        };
        let mut name = method.to_owned();
        match method {
            crate::protocol::method::TOOLS_CALL => {
                if let Some(tool) = text("name") {
                    name = format!("{method} {tool}");
                    shared.push(KeyValue::new(attr::TOOL_NAME, tool));
                }
                shared.push(KeyValue::new(attr::OPERATION_NAME, "execute_tool"));
            }
            crate::protocol::method::PROMPTS_GET => {
                if let Some(prompt) = text("name") {
                    name = format!("{method} {prompt}");
                    shared.push(KeyValue::new(attr::PROMPT_NAME, prompt));
                }
            }
            crate::protocol::method::RESOURCES_READ
            | crate::protocol::method::RESOURCES_SUBSCRIBE
            | crate::protocol::method::RESOURCES_UNSUBSCRIBE => {
                if let Some(uri) = text("uri") {
                    span_only.push(KeyValue::new(attr::RESOURCE_URI, uri));
                }
            }
            _ => {}
        }
        Self {
            name,
            shared,
            span_only,
        }
    }
}

/// `jsonrpc.request.id`: the id as it was sent, a string as itself.
pub(crate) fn request_id_value(id: &actix_mcp_actors::RequestId) -> String {
    match id {
        actix_mcp_actors::RequestId::Number(n) => n.to_string(),
        actix_mcp_actors::RequestId::String(s) => s.to_string(),
    }
}

/// Whether a `tools/call` result reports a tool error (`isError: true`).
pub(crate) fn is_tool_error(result: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    serde_json::from_str::<Flag>(result).is_ok_and(|flag| flag.is_error)
}
