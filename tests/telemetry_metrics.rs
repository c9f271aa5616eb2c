//! OpenTelemetry metrics (feature `otel`) of a real Streamable HTTP server on `127.0.0.1:0` and
//! of our client, recorded by the SDK's in-memory exporter: the duration histograms (names,
//! unit, buckets, the low-cardinality attributes) and the runtime's counts. The spans are in
//! `telemetry.rs`.
//!
//! One in-memory pipeline serves the whole binary ([`common::otel`]), so the tests take turns.
//! Every wait is bounded.
#![cfg(all(feature = "http", feature = "client", feature = "otel"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use actix_mcp::client::Client;
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use serde_json::{Value, json};

use common::eventually;
use common::http::{SAMPLING, caps};
use common::http_tools::start;
use common::otel::{attr, connect, otel, turn};

/// The conventions' bucket boundaries of every MCP duration histogram.
const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Exports the metrics now and returns the batch.
fn collect_metrics() -> ResourceMetrics {
    otel().metrics.reset();
    otel().meter_provider.force_flush().unwrap();
    otel()
        .metrics
        .get_finished_metrics()
        .unwrap()
        .pop()
        .expect("a metrics export")
}

/// The histogram data points (attributes, count, bounds) of metric `name`, checking its unit.
fn histogram(batch: &ResourceMetrics, name: &str) -> Vec<(Vec<KeyValue>, u64, Vec<f64>)> {
    for scope in batch.scope_metrics() {
        for metric in scope.metrics() {
            if metric.name() != name {
                continue;
            }
            assert_eq!(metric.unit(), "s", "unit of {name}");
            let AggregatedMetrics::F64(MetricData::Histogram(data)) = metric.data() else {
                panic!("{name} is not an f64 histogram");
            };
            return data
                .data_points()
                .map(|point| {
                    (
                        point.attributes().cloned().collect(),
                        point.count(),
                        point.bounds().collect(),
                    )
                })
                .collect();
        }
    }
    Vec::new()
}

/// The value of the attribute-less up-down counter `name`.
fn count(batch: &ResourceMetrics, name: &str) -> Option<i64> {
    batch
        .scope_metrics()
        .flat_map(|scope| scope.metrics())
        .find(|metric| metric.name() == name)
        .map(|metric| {
            let AggregatedMetrics::I64(MetricData::Sum(sum)) = metric.data() else {
                panic!("{name} is not an i64 sum");
            };
            assert!(!sum.is_monotonic(), "{name} must be an up-down counter");
            sum.data_points().map(|point| point.value()).sum()
        })
}

/// The data point of histogram `name` whose attributes include all of `expected`.
fn point_with(
    batch: &ResourceMetrics,
    name: &str,
    expected: &[(&str, &str)],
) -> Option<(Vec<KeyValue>, u64, Vec<f64>)> {
    histogram(batch, name)
        .into_iter()
        .find(|(attributes, _, _)| {
            expected
                .iter()
                .all(|(key, value)| attr(attributes, key).as_deref() == Some(*value))
        })
}

/// The duration histograms (names, unit, buckets, the low-cardinality attributes) and the
/// runtime's counts, which follow the endpoint's own gauges.
#[actix_web::test]
async fn metrics_have_the_conventions_names_and_attributes() {
    let _turn = turn().await;
    let (fixture, srv) = start(|mcp| mcp);
    let mut raw = srv.client();
    raw.initialize(caps(SAMPLING)).await;
    raw.call_ok(json!(1), "echo", json!({"message": "m"})).await;

    // A tool that waits: the counts show a session, a request, a tool call and its stream.
    let slow = raw
        .start(
            json!(2),
            "tools/call",
            json!({"name": "slow", "arguments": {}}),
        )
        .await;
    fixture.probes.started.wait_for(1).await;
    eventually("the runtime's counts follow the endpoint's gauges", || {
        let batch = collect_metrics();
        let own = srv.mcp.stats().runtime;
        let observed = [
            count(&batch, "actix_mcp.server.sessions"),
            count(&batch, "actix_mcp.server.active_requests"),
            count(&batch, "actix_mcp.server.active_tool_calls"),
            count(&batch, "actix_mcp.server.open_streams"),
            count(&batch, "actix_mcp.server.pending_client_requests"),
            count(&batch, "actix_mcp.server.parked_rounds"),
        ];
        let expected = [
            own.sessions,
            own.in_flight,
            own.tool_calls,
            own.streams,
            own.peer_requests,
            own.parked_calls,
        ]
        .map(|n| Some(i64::try_from(n).unwrap()));
        if observed == expected && own.tool_calls == 1 && own.sessions == 1 && own.in_flight == 1 {
            Ok(())
        } else {
            Err(format!("counts {observed:?}, endpoint {own:?}"))
        }
    })
    .await;
    raw.cancel(json!(2)).await;
    drop(slow);

    // Our client, to its end: an operation and a session on the client's side.
    let client = connect(Client::builder("otel-metrics", "1.0.0"), &srv).await;
    client
        .call_tool("echo", json!({"message": "c"}))
        .await
        .unwrap();
    client.close().await;
    drop(client);
    // The raw client's session ends too.
    assert_eq!(raw.delete().await, reqwest::StatusCode::OK);

    let server_call = [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "echo"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2025-11-25"),
        ("network.transport", "tcp"),
        ("network.protocol.name", "http"),
    ];
    let session = [
        ("mcp.protocol.version", "2025-11-25"),
        ("network.transport", "tcp"),
    ];
    let batch = eventually("the session durations of both sides", || {
        let batch = collect_metrics();
        (point_with(&batch, "mcp.server.session.duration", &session).is_some()
            && point_with(&batch, "mcp.client.session.duration", &session).is_some())
        .then_some(batch)
    })
    .await;
    let (attributes, calls, bounds) =
        point_with(&batch, "mcp.server.operation.duration", &server_call)
            .expect("the server's tools/call durations");
    assert!(calls >= 2, "{calls}");
    assert_eq!(bounds, BUCKETS);
    for high_cardinality in ["jsonrpc.request.id", "mcp.session.id", "error.type"] {
        assert_eq!(attr(&attributes, high_cardinality), None, "{attributes:?}");
    }
    let (_, client_calls, bounds) = point_with(
        &batch,
        "mcp.client.operation.duration",
        &[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "echo"),
            ("network.transport", "tcp"),
        ],
    )
    .expect("the client's tools/call durations");
    assert!(client_calls >= 1);
    assert_eq!(bounds, BUCKETS);
    let (_, _, bounds) = point_with(&batch, "mcp.server.session.duration", &session).unwrap();
    assert_eq!(bounds, BUCKETS);
    // The cancelled `slow` call is recorded as such.
    assert!(
        point_with(
            &batch,
            "mcp.server.operation.duration",
            &[("gen_ai.tool.name", "slow"), ("error.type", "cancelled")],
        )
        .is_some(),
        "{:?}",
        histogram(&batch, "mcp.server.operation.duration")
    );
    srv.stop().await;
}

/// A server-to-client request's duration is a client operation of the server.
#[actix_web::test]
async fn a_server_to_client_request_is_a_client_operation() {
    let _turn = turn().await;
    let (_fixture, srv) = start(|mcp| mcp);
    let mut client = srv.client();
    client.initialize(caps(SAMPLING)).await;
    let mut reader = client
        .start(
            json!(9),
            "tools/call",
            json!({"name": "sample", "arguments": {}}),
        )
        .await;
    let request = reader.next_message().await;
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    client
        .notify(&json!({
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": {"code": -1, "message": "the user declined"},
        }))
        .await;
    let response: Value = reader.next_message().await;
    assert_eq!(response["id"], 9, "{response}");
    eventually("the failed sampling/createMessage's duration", || {
        let batch = collect_metrics();
        let expected = [
            ("mcp.method.name", "sampling/createMessage"),
            ("error.type", "-1"),
            ("rpc.response.status_code", "-1"),
            ("mcp.protocol.version", "2025-11-25"),
        ];
        match point_with(&batch, "mcp.client.operation.duration", &expected) {
            Some(_) => Ok(()),
            None => Err(format!(
                "{:?}",
                histogram(&batch, "mcp.client.operation.duration")
            )),
        }
    })
    .await;
    srv.stop().await;
}
