//! A scripted client for a server served with stdio framing over an in-memory pipe
//! ([`Server::serve_io`]), the lookup of example binaries built by `cargo test`, and the wait
//! for one the test started to listen ([`listening`]) or be ready ([`ready`]).

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use actix_mcp::Server;
use actix_mcp::transport::stdio::StdioConfig;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

use super::{WAIT, within_for};

/// One client of a server on an in-memory pipe.
pub struct PipeClient {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
}

impl PipeClient {
    /// Serves `server` on a new pipe with `config`; nothing is sent yet (no handshake).
    pub fn serve(server: &Server, config: StdioConfig) -> Self {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let server = server.clone();
        actix_rt::spawn(async move { server.serve_io(server_in, server_out, config).await });
        Self {
            to_server: client_out,
            from_server: BufReader::new(client_in).lines(),
        }
    }

    /// Serves `server` on a new pipe and completes the handshake with these capabilities.
    pub async fn connect(server: &Server, capabilities: Value) -> Self {
        Self::connect_with(server, capabilities, StdioConfig::default()).await
    }

    /// [`connect`](Self::connect) with a transport configuration.
    pub async fn connect_with(server: &Server, capabilities: Value, config: StdioConfig) -> Self {
        let mut client = Self::serve(server, config);
        client
            .send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "t", "version": "1"}}}),
            )
            .await;
        assert_eq!(
            client.read().await["result"]["protocolVersion"],
            "2025-11-25"
        );
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    /// Sends one message as a line.
    pub async fn send(&mut self, message: Value) {
        self.send_line(message.to_string().as_bytes()).await;
    }

    /// Sends `bytes` followed by a newline, as they are.
    pub async fn send_line(&mut self, bytes: &[u8]) {
        self.to_server.write_all(bytes).await.unwrap();
        self.to_server.write_all(b"\n").await.unwrap();
    }

    /// Reads the next message, within [`WAIT`].
    pub async fn read(&mut self) -> Value {
        self.read_within(WAIT).await.expect("a line in time")
    }

    /// Reads the next message, or `None` when none comes within `wait`.
    pub async fn read_within(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.from_server.next_line())
            .await
            .ok()?;
        Some(serde_json::from_str(&line.unwrap().expect("server open")).unwrap())
    }

    /// Sends `ping` and returns every message that arrived before its answer.
    pub async fn drain(&mut self, id: i64) -> Vec<Value> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        let mut seen = Vec::new();
        loop {
            let message = self.read().await;
            if message["id"] == id {
                return seen;
            }
            seen.push(message);
        }
    }
}

/// An example binary, built by `cargo test` into `target/<profile>/examples/`, beside the
/// `deps/` directory that holds the test binary.
pub fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in target/<profile>/deps");
    let binary = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        binary.exists(),
        "{} is missing: run `cargo build --example {name}` (plain `cargo test` builds it)",
        binary.display()
    );
    binary
}

/// A loopback port nobody listens on (at the moment).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Waits until a child process the test started accepts connections on `127.0.0.1:port`.
/// Bounded by four [`WAIT`]s: a process starting on a loaded machine takes longer than a step.
#[track_caller]
pub fn listening(port: u16) -> impl Future<Output = ()> {
    within_for(WAIT * 4, async move {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

/// Waits until a child process the test started answers `GET <base>/readyz` with 200, with
/// the bound of [`listening`].
#[track_caller]
pub fn ready(base: &str) -> impl Future<Output = ()> {
    let http = super::http::http_client();
    let url = format!("{base}/readyz");
    within_for(WAIT * 4, async move {
        while !http
            .get(&url)
            .send()
            .await
            .is_ok_and(|r| r.status() == reqwest::StatusCode::OK)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}
