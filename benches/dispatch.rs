//! Dispatch cost of one request through the actor runtime.
//!
//! - `parse`: JSON-RPC classification of one `tools/call` line, alone; `tools_call_2026` is a
//!   2026-07-28 one with its envelope in `_meta`, parsed whole, then (`_keeping_meta`) with
//!   `_meta` kept as text, as the HTTP door parses it.
//! - `handle_json/*`: [`Server::handle_json`], parse → `InFlight` actor → route → `ToolCall`
//!   actor (for tools) → serialised response; `tools_call_echo_2026` is the same call in
//!   protocol 2026-07-28 (the envelope in `_meta` checked, the result's envelope written).
//! - `session/tools_call_echo`: the whole stdio path over an in-memory duplex: line reader →
//!   `Session` actor → `InFlight` → `ToolCall` → writer actor → line read back by the client.
//!
//! Everything runs inside one actix `System` (its runner is the executor), as in production.
//!
//! ```text
//! cargo bench --bench dispatch -- --warm-up-time 1 --measurement-time 3
//! ```

#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use actix_mcp::transport::stdio::StdioConfig;
use actix_mcp::{Params, Server, ToolDef};
use criterion::async_executor::AsyncExecutor;
use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const ECHO: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}"#;
const ECHO_RESPONSE: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}"#;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
/// The same call in protocol 2026-07-28: the envelope in `_meta`.
const ECHO_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}"#;

/// An actix system as criterion's async executor.
struct ActixExecutor(actix_rt::SystemRunner);

impl AsyncExecutor for &ActixExecutor {
    fn block_on<T>(&self, future: impl Future<Output = T>) -> T {
        self.0.block_on(future)
    }
}

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    message: String,
}

fn server(extra_tools: usize) -> Server {
    let echo = |name: String| {
        ToolDef::new(name, |Params(args): Params<EchoArgs>| async move {
            args.message
        })
        .description("Echoes its message")
    };
    let mut builder = Server::builder("bench", "1.0.0").tool(echo("echo".into()));
    for i in 0..extra_tools {
        builder = builder.tool(echo(format!("tool_{i:02}")));
    }
    builder.build().unwrap()
}

fn parse(c: &mut Criterion) {
    c.bench_function("parse/tools_call", |b| {
        b.iter(|| actix_mcp_actors::dev::parse_message(black_box(ECHO.as_bytes())).unwrap())
    });
    // A 2026-07-28 request, its `_meta` parsed into a value, then kept as text (the HTTP door).
    c.bench_function("parse/tools_call_2026", |b| {
        b.iter(|| actix_mcp_actors::dev::parse_message(black_box(ECHO_2026.as_bytes())).unwrap())
    });
    c.bench_function("parse/tools_call_2026_keeping_meta", |b| {
        b.iter(|| {
            actix_mcp_actors::dev::parse_message_keeping_meta(black_box(ECHO_2026.as_bytes()))
                .unwrap()
        })
    });
}

fn handle_json(c: &mut Criterion) {
    let executor = ActixExecutor(actix_rt::System::new());
    let one = server(0);
    let fifty = server(49);
    assert_eq!(
        executor.0.block_on(one.handle_json(ECHO)).as_deref(),
        Some(ECHO_RESPONSE)
    );

    let mut group = c.benchmark_group("handle_json");
    group.bench_function("tools_call_echo", |b| {
        b.to_async(&executor)
            .iter(|| async { one.handle_json(black_box(ECHO)).await.unwrap() })
    });
    group.bench_function("tools_call_echo_2026", |b| {
        b.to_async(&executor)
            .iter(|| async { one.handle_json(black_box(ECHO_2026)).await.unwrap() })
    });
    group.bench_function("initialize", |b| {
        b.to_async(&executor)
            .iter(|| async { one.handle_json(black_box(INITIALIZE)).await.unwrap() })
    });
    group.bench_function("tools_list_50", |b| {
        b.to_async(&executor)
            .iter(|| async { fifty.handle_json(black_box(TOOLS_LIST)).await.unwrap() })
    });
    group.finish();
}

fn session(c: &mut Criterion) {
    let runner = actix_rt::System::new();
    let server = server(0);
    let (client, server_io) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_io);
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut client_read = BufReader::new(client_read);
    let mut line = String::new();

    runner.block_on(async {
        actix_rt::spawn(async move {
            server
                .serve_io(server_read, server_write, StdioConfig::default())
                .await
        });
        client_write
            .write_all(format!("{INITIALIZE}\n").as_bytes())
            .await
            .unwrap();
        client_read.read_line(&mut line).await.unwrap();
        assert!(
            line.contains("\"protocolVersion\":\"2025-11-25\""),
            "{line}"
        );
    });

    // Each request gets a fresh id: the previous one may still be finishing in its session.
    let mut next_id: u64 = 100;
    c.bench_function("session/tools_call_echo", |b| {
        b.iter_custom(|iters| {
            runner.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    next_id += 1;
                    let request = ECHO.replacen("\"id\":1", &format!("\"id\":{next_id}"), 1);
                    client_write.write_all(request.as_bytes()).await.unwrap();
                    client_write.write_all(b"\n").await.unwrap();
                    line.clear();
                    client_read.read_line(&mut line).await.unwrap();
                    assert!(line.ends_with("\"text\":\"hello\"}]}}\n"), "{line}");
                }
                started.elapsed()
            })
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = parse, handle_json, session
}
criterion_main!(benches);
