//! OpenTelemetry for MCP (feature `otel`): each request a server answers, and each request our
//! client sends, is a span named and attributed by the semantic conventions for MCP (`tools/call
//! hello`, `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`, ...) and a duration in
//! `mcp.server.operation.duration` / `mcp.client.operation.duration`. The client's span is the
//! parent of the server's (the trace context travels in `params._meta`), and the handler's own
//! `tracing` spans join the trace through the layer of `TelemetryGuard::tracing_layer`.
//!
//! Run: `cargo run --features otel,client --example tracing`, which prints every finished span
//! (and records no metrics); with `OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318` set, the
//! spans and metrics go to that collector over OTLP/HTTP instead. The server is connected to our client in memory
//! (`actix_mcp::testing::connect`); served over HTTP (`Server::serve`), it is traced the same.

use actix_mcp::client::Client;
use actix_mcp::prelude::*;
use actix_mcp::telemetry::{self, TelemetryGuard};
use actix_mcp::testing;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Prints each finished span: kind, name, trace id and attributes.
#[derive(Debug)]
struct PrintSpans;

impl SpanExporter for PrintSpans {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        for span in batch {
            let (kind, name) = (span.span_kind, span.name);
            let trace = span.span_context.trace_id();
            print!("{kind:?} span `{name}` trace={trace}");
            for attribute in span.attributes {
                print!(" {}={}", attribute.key, attribute.value);
            }
            println!();
        }
        Ok(())
    }
}

/// OTLP to `OTEL_EXPORTER_OTLP_ENDPOINT` when it is set, else spans printed as they finish;
/// and the `tracing` subscriber whose spans join the traces.
fn telemetry() -> Result<TelemetryGuard, telemetry::TelemetryError> {
    let guard = match std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT") {
        Ok(endpoint) => telemetry::init_otlp(&endpoint)?,
        Err(_) => telemetry::install(
            SdkTracerProvider::builder()
                .with_simple_exporter(PrintSpans)
                .build(),
            SdkMeterProvider::default(),
        ),
    };
    tracing_subscriber::registry()
        .with(guard.tracing_layer())
        .init();
    Ok(guard)
}

/// Greets, inside a `tracing` span of its own: a child of the request's span.
async fn hello() -> &'static str {
    tracing::info_span!("hello.handler").in_scope(|| "hello")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Dropped last: flushes what the exporters still hold.
    let _telemetry = telemetry()?;
    let server = Server::builder("tracing-example", "1.0.0")
        .tool(ToolDef::new("hello", hello))
        .build()?;
    actix_rt::System::new().block_on(async {
        let client = testing::connect(&server, Client::builder("tracing-client", "1.0.0")).await?;
        let answer = client.call_tool("hello", ()).await?;
        println!("hello answered {:?}", answer.text_content());
        client.close().await;
        Ok(())
    })
}
