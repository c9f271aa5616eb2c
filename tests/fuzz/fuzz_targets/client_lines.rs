//! The client's newline-delimited JSON reader, twice. First the line framing alone (the
//! stdio transports' `read_line`), fed in chunks whose boundaries the first byte picks: it
//! never panics and splits exactly like `split('\n')`, a line over the limit reported as such.
//! Then a real `Client` over `IoTransport`, talking to a fake server that answers with the
//! input: blocks of lines separated by a blank line, one block released per message the
//! client writes (or after a short wait). The client connects (the second byte picks the
//! lifecycle), lists tools, calls one, reads a resource and closes, all within the bound and
//! without panicking, whatever the server says.

#![no_main]

use std::time::Duration;

use actix_mcp::__fuzz::read_lines;
use actix_mcp::client::transport::IoTransport;
use actix_mcp::client::{Client, Lifecycle};
use actix_mcp::protocol::{CreateMessageResult, ElicitResult};
use actix_mcp_actors::ErrorObject;
use actix_mcp_fuzz::{ChunkReader, block_on, chunked};
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// The longest line the framing check accepts.
const MAX_LINE: usize = 100;

fuzz_target!(|data: &[u8]| {
    check_framing(data);
    if let Some((&lifecycle, script)) = data.split_first() {
        let lifecycle = match lifecycle % 3 {
            0 => Lifecycle::Auto,
            1 => Lifecycle::V2026,
            _ => Lifecycle::V2025,
        };
        block_on(converse(lifecycle, script));
    }
});

fn check_framing(data: &[u8]) {
    let chunks = chunked(data);
    let body = data.get(1..).unwrap_or_default();
    let lines = block_on(read_lines(ChunkReader::new(chunks), MAX_LINE)).expect("no read fails");
    let mut expected: Vec<Option<Vec<u8>>> = body
        .split(|&b| b == b'\n')
        .map(|line| (line.len() <= MAX_LINE).then(|| line.to_vec()))
        .collect();
    // The text after the last newline is a line only when there is some.
    if body.is_empty() || body.ends_with(b"\n") {
        expected.pop();
    }
    assert_eq!(lines, expected);
}

async fn converse(lifecycle: Lifecycle, script: &[u8]) {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let blocks: Vec<Vec<u8>> = script
        .split(|&b| b == b'\n')
        .collect::<Vec<_>>()
        .split(|line| line.is_empty())
        .map(|block| {
            block
                .iter()
                .flat_map(|line| [*line, b"\n"].concat())
                .collect()
        })
        .collect();
    let server = tokio::spawn(fake_server(server_end, blocks));
    let (reader, writer) = tokio::io::split(client_end);
    let connected = Client::builder("fuzz-client", "1.0.0")
        .lifecycle(lifecycle)
        .discover_timeout(Duration::from_millis(200))
        .request_timeout(Some(Duration::from_millis(500)))
        .sampling(|_params, _cx| async {
            serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "sampled"},
                "model": "fuzz"
            }))
            .map_err(ErrorObject::internal)
        })
        .elicitation(|_params, _cx| async {
            serde_json::from_value::<ElicitResult>(json!({
                "action": "accept",
                "content": {"name": "fuzz"}
            }))
            .map_err(ErrorObject::internal)
        })
        .roots_list(Vec::new())
        .connect(IoTransport::new(reader, writer).max_line(1 << 16))
        .await;
    if let Ok(client) = connected {
        let _ = client.tools().await;
        let _ = client.call_tool("echo", json!({"message": "hi"})).await;
        let _ = client.read_resource("test://hello").await;
        client.close().await;
    }
    server.abort();
}

/// Writes one block of the script per line the client writes, or once the client is idle
/// (waiting for an answer: everything else on this thread has run).
async fn fake_server(stream: DuplexStream, blocks: Vec<Vec<u8>>) {
    let (reader, mut writer) = tokio::io::split(stream);
    let mut lines = BufReader::new(reader).lines();
    for block in blocks {
        tokio::select! {
            biased;
            _ = lines.next_line() => {}
            () = idle() => {}
        }
        if writer.write_all(&block).await.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
    // Keep reading so that the client's writes never block.
    while let Ok(Some(_)) = lines.next_line().await {}
}

async fn idle() {
    for _ in 0..32 {
        tokio::task::yield_now().await;
    }
}
