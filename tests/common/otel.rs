//! The OpenTelemetry pipeline of the telemetry tests (feature `otel`): the SDK's in-memory span
//! and metric exporters behind our [`telemetry::install`], one per test binary, which its tests
//! take turns at ([`turn`]); and what the span and metric tests both read (attributes, our
//! client connected to a test server).

use std::sync::OnceLock;

use actix_mcp::client::transport::HttpTransport;
use actix_mcp::client::{Client, ClientBuilder, Lifecycle};
use actix_mcp::telemetry::{self, TelemetryGuard};
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use tracing_subscriber::layer::SubscriberExt as _;

use super::http::TestServer;
use super::within;

/// The in-memory pipeline every test records into.
pub struct Otel {
    /// The finished spans.
    pub spans: InMemorySpanExporter,
    /// The exported metrics.
    pub metrics: InMemoryMetricExporter,
    /// The meter provider, to export the metrics now.
    pub meter_provider: SdkMeterProvider,
    _guard: TelemetryGuard,
}

/// The pipeline, installed on first use.
pub fn otel() -> &'static Otel {
    static OTEL: OnceLock<Otel> = OnceLock::new();
    OTEL.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        let metrics = InMemoryMetricExporter::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics.clone())
            .build();
        let guard = telemetry::install(tracer_provider, meter_provider.clone());
        // The application's `tracing` spans join the traces (see the handler test of
        // tests/telemetry.rs).
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(guard.tracing_layer()),
        )
        .unwrap();
        Otel {
            spans,
            metrics,
            meter_provider,
            _guard: guard,
        }
    })
}

/// The tests take turns: they share the pipeline and the process-wide counts.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Waits for this test's turn at the pipeline, which is installed on first use.
pub async fn turn() -> tokio::sync::MutexGuard<'static, ()> {
    let turn = SERIAL.lock().await;
    otel();
    turn
}

/// The value of attribute `key`, as text.
pub fn attr(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.as_str().into_owned())
}

/// Our 2025-11-25 client (`builder`) connected to `srv`.
pub async fn connect(builder: ClientBuilder, srv: &TestServer) -> Client {
    within(
        builder
            .lifecycle(Lifecycle::V2025)
            .connect(HttpTransport::new(&srv.url)),
    )
    .await
    .unwrap()
}
