//! The load generator's side: one keep-alive HTTP/1.1 connection per virtual client (hyper's
//! client connection, no pool), the two workloads (`tools/call echo`, and session setup:
//! `initialize` + `notifications/initialized` + `DELETE`), and the memory runs.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{BoxError, Deployment, Result, STEP_TIMEOUT, Target, VERSION, Workload};

pub(super) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// One keep-alive HTTP/1.1 connection to the server, optionally bound to a session.
pub(super) struct Client {
    sender: http1::SendRequest<Full<Bytes>>,
    host: HeaderValue,
    session: Option<HeaderValue>,
    stateful: bool,
    /// Requests carry protocol 2026-07-28's `_meta` and standard headers.
    v2026: bool,
}

/// The `_meta` envelope of every 2026-07-28 request.
const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"load","version":"0"}}"#;

/// A finished response: status, session header, and the whole body.
struct Answer {
    status: StatusCode,
    session: Option<HeaderValue>,
    body: Bytes,
}

impl Client {
    pub(super) async fn connect(addr: SocketAddr, stateful: bool, v2026: bool) -> Result<Self> {
        let stream = tokio::time::timeout(STEP_TIMEOUT, TcpStream::connect(addr)).await??;
        stream.set_nodelay(true)?;
        let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            if let Err(err) = conn.await {
                eprintln!("client connection failed: {err}");
            }
        });
        Ok(Self {
            sender,
            host: HeaderValue::from_str(&addr.to_string())?,
            session: None,
            stateful,
            v2026,
        })
    }

    async fn send(&mut self, method: Method, body: String) -> Result<Answer> {
        let mut request = Request::builder()
            .method(method)
            .uri("/mcp")
            .header(HOST, self.host.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(Full::new(Bytes::from(body)))?;
        let headers = request.headers_mut();
        if self.stateful {
            headers.insert("mcp-protocol-version", HeaderValue::from_static(VERSION));
        }
        if let Some(session) = &self.session {
            headers.insert("mcp-session-id", session.clone());
        }
        if self.v2026 {
            headers.insert(
                "mcp-protocol-version",
                HeaderValue::from_static("2026-07-28"),
            );
            headers.insert("mcp-method", HeaderValue::from_static("tools/call"));
            headers.insert("mcp-name", HeaderValue::from_static("echo"));
        }
        let exchange = async {
            self.sender.ready().await?;
            let response = self.sender.send_request(request).await?;
            let status = response.status();
            let session = response.headers().get("mcp-session-id").cloned();
            let body = response.into_body().collect().await?.to_bytes();
            Ok::<_, BoxError>(Answer {
                status,
                session,
                body,
            })
        };
        tokio::time::timeout(STEP_TIMEOUT, exchange).await?
    }

    /// `initialize` + `notifications/initialized`: this connection now has its own session.
    pub(super) async fn open_session(&mut self) -> Result<HeaderValue> {
        self.session = None;
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{VERSION}","capabilities":{{}},"clientInfo":{{"name":"load","version":"0"}}}}}}"#
        );
        let answer = self.send(Method::POST, init).await?;
        if answer.status != StatusCode::OK || !contains(&answer.body, b"\"serverInfo\"") {
            return Err(format!("initialize answered {}", answer.status).into());
        }
        let session = answer.session.ok_or("initialize answered no session id")?;
        self.session = Some(session.clone());
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
        let answer = self.send(Method::POST, initialized).await?;
        if answer.status != StatusCode::ACCEPTED {
            return Err(format!("notifications/initialized answered {}", answer.status).into());
        }
        Ok(session)
    }

    /// Ends this connection's session with `DELETE`.
    async fn close_session(&mut self) -> Result<()> {
        let answer = self.send(Method::DELETE, String::new()).await?;
        if !answer.status.is_success() {
            return Err(format!("DELETE answered {}", answer.status).into());
        }
        self.session = None;
        Ok(())
    }

    /// One `tools/call echo`, checked.
    async fn echo(&mut self, id: u64) -> Result<()> {
        let call = if self.v2026 {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello"}},{MODERN_META}}}}}"#
            )
        } else {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello"}}}}}}"#
            )
        };
        let answer = self.send(Method::POST, call).await?;
        if answer.status != StatusCode::OK || !contains(&answer.body, br#""text":"hello""#) {
            return Err(format!(
                "echo answered {}: {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            )
            .into());
        }
        Ok(())
    }

    /// One unit of `workload`.
    async fn step(&mut self, workload: Workload, id: u64) -> Result<()> {
        match workload {
            Workload::Echo => self.echo(id).await,
            Workload::Setup => {
                self.open_session().await?;
                self.close_session().await
            }
            Workload::Create => self.open_session().await.map(drop),
        }
    }
}

/// The phases of one cell, shared by its clients.
const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const DONE: u8 = 2;

/// The figures of one cell in one round.
#[derive(Debug, Clone)]
pub(super) struct Sample {
    pub(super) units: u64,
    pub(super) per_second: f64,
    pub(super) p99: Duration,
    /// Server CPU per unit (the nodes' summed, in the Redis mode).
    pub(super) server_cpu: Duration,
    pub(super) client_cpu: Duration,
    /// Clients: at most this many requests are in flight at each edge of the window.
    pub(super) concurrency: usize,
    /// The Redis mode's other processes and Redis's commands.
    pub(super) cluster: Option<ClusterSample>,
}

/// What the Redis mode adds to a [`Sample`].
#[derive(Debug, Clone)]
pub(super) struct ClusterSample {
    /// redis-server's CPU per unit.
    pub(super) redis_cpu: Duration,
    /// HAProxy's CPU per unit.
    pub(super) haproxy_cpu: Duration,
    /// The commands Redis ran over the measured window.
    pub(super) commands: super::cluster::Commands,
}

async fn run_client(
    mut client: Client,
    workload: Workload,
    phase: Arc<AtomicU8>,
    budget: Arc<AtomicU64>,
) -> Result<Vec<u32>> {
    let mut latencies = Vec::with_capacity(1 << 16);
    let mut id = 1;
    loop {
        let now = phase.load(Ordering::Acquire);
        if now == DONE {
            return Ok(latencies);
        }
        if now == MEASURE
            && budget
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1))
                .is_err()
        {
            return Ok(latencies);
        }
        let started = Instant::now();
        client.step(workload, id).await?;
        id += 1;
        if phase.load(Ordering::Acquire) == MEASURE && now == MEASURE {
            let nanos = started.elapsed().as_nanos();
            latencies.push(u32::try_from(nanos).unwrap_or(u32::MAX));
        }
    }
}

pub(super) fn percentile(sorted: &[u32], pct: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = (sorted.len() * pct / 100).min(sorted.len() - 1);
    Duration::from_nanos(u64::from(sorted[index]))
}

/// Nanoseconds all threads of process `pid` (or `self`) have spent on a CPU.
pub(super) fn cpu_ns(pid: &str) -> Result<u64> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let path = task?.path().join("schedstat");
        // A thread may exit between listing and reading.
        if let Ok(stat) = std::fs::read_to_string(path) {
            total += stat
                .split_whitespace()
                .next()
                .and_then(|ns| ns.parse::<u64>().ok())
                .ok_or("malformed schedstat")?;
        }
    }
    Ok(total)
}

/// Measures one cell: `concurrency` clients run `target`'s workload through a warm-up, then a
/// measured window, bounded by `duration` and `max_units`.
pub(super) async fn run_cell(
    server: &Deployment,
    target: Target,
    concurrency: usize,
    warmup: Duration,
    duration: Duration,
    max_units: u64,
) -> Result<Sample> {
    let stateful = target.stateful();
    let phase = Arc::new(AtomicU8::new(WARMUP));
    let budget = Arc::new(AtomicU64::new(max_units));
    let mut clients = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let mut client = Client::connect(server.addr(), stateful, target.server.v2026()).await?;
        if stateful && target.workload == Workload::Echo {
            client.open_session().await?;
        }
        clients.push(client);
    }
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|client| {
            tokio::spawn(run_client(
                client,
                target.workload,
                phase.clone(),
                budget.clone(),
            ))
        })
        .collect();
    tokio::time::sleep(warmup).await;
    let before = server.reading_before()?;
    let client_before = cpu_ns("self")?;
    let started = Instant::now();
    phase.store(MEASURE, Ordering::Release);
    let deadline = started + duration;
    while Instant::now() < deadline && budget.load(Ordering::Relaxed) > 0 {
        tokio::time::sleep(Duration::from_millis(10).min(duration)).await;
    }
    let after = server.reading_after()?;
    let client_after = cpu_ns("self")?;
    let elapsed = started.elapsed();
    phase.store(DONE, Ordering::Release);
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    latencies.sort_unstable();
    let units = latencies.len() as u64;
    let per_unit =
        |before: u64, after: u64| Duration::from_nanos(after.saturating_sub(before) / units.max(1));
    let cluster = match (before.cluster, after.cluster) {
        (
            Some((redis_before, haproxy_before, counters_before)),
            Some((redis_after, haproxy_after, counters_after)),
        ) => Some(ClusterSample {
            redis_cpu: per_unit(redis_before, redis_after),
            haproxy_cpu: per_unit(haproxy_before, haproxy_after),
            commands: counters_before.since(&counters_after),
        }),
        _ => None,
    };
    Ok(Sample {
        units,
        per_second: units as f64 / elapsed.as_secs_f64(),
        p99: percentile(&latencies, 99),
        server_cpu: per_unit(before.servers_ns, after.servers_ns),
        client_cpu: per_unit(client_before, client_after),
        concurrency,
        cluster,
    })
}

/// Opens `count` sessions over a few keep-alive connections; returns their ids.
pub(super) async fn open_sessions(addr: SocketAddr, count: usize) -> Result<Vec<HeaderValue>> {
    const CONNECTIONS: usize = 32;
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CONNECTIONS.min(count.max(1)) {
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(addr, true, false).await?;
            let mut ids = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < count as u64 {
                ids.push(client.open_session().await?);
            }
            Ok::<_, BoxError>(ids)
        }));
    }
    let mut ids = Vec::with_capacity(count);
    for task in tasks {
        ids.extend(task.await??);
    }
    Ok(ids)
}

/// Opens the session's GET stream on a fresh connection and reads the response head (200).
pub(super) async fn open_get_stream(addr: SocketAddr, session: HeaderValue) -> Result<TcpStream> {
    let open = async {
        let mut stream = TcpStream::connect(addr).await?;
        let request = format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {}\r\nMcp-Protocol-Version: {VERSION}\r\n\r\n",
            session.to_str()?
        );
        stream.write_all(request.as_bytes()).await?;
        let mut head = Vec::with_capacity(512);
        let mut buf = [0u8; 512];
        while !contains(&head, b"\r\n\r\n") {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                return Err("the server closed a GET stream before its headers".into());
            }
            head.extend_from_slice(&buf[..n]);
        }
        if !head.starts_with(b"HTTP/1.1 200") {
            let line = head.split(|b| *b == b'\r').next().unwrap_or_default();
            return Err(format!("GET answered {}", String::from_utf8_lossy(line)).into());
        }
        Ok::<_, BoxError>(stream)
    };
    tokio::time::timeout(STEP_TIMEOUT, open).await?
}

/// `tools/call echo` from `clients` connections, each in a session of its own (opened first,
/// then closed), for `window`; returns every call's latency in nanoseconds, sorted.
pub(super) async fn echo_latencies(
    addr: SocketAddr,
    clients: usize,
    window: Duration,
) -> Result<Vec<u32>> {
    let mut opened = Vec::with_capacity(clients);
    for _ in 0..clients {
        let mut client = Client::connect(addr, true, false).await?;
        client.open_session().await?;
        opened.push(client);
    }
    let deadline = Instant::now() + window;
    let tasks: Vec<_> = opened
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut id = 1;
                while Instant::now() < deadline {
                    let started = Instant::now();
                    client.echo(id).await?;
                    latencies.push(u32::try_from(started.elapsed().as_nanos()).unwrap_or(u32::MAX));
                    id += 1;
                }
                client.close_session().await?;
                Ok::<_, BoxError>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    latencies.sort_unstable();
    Ok(latencies)
}

/// Ends the sessions `ids` with `DELETE`, over a few keep-alive connections.
pub(super) async fn close_sessions(addr: SocketAddr, ids: Vec<HeaderValue>) -> Result<()> {
    const CONNECTIONS: usize = 32;
    let ids = Arc::new(std::sync::Mutex::new(ids));
    let mut tasks = Vec::new();
    for _ in 0..CONNECTIONS {
        let ids = ids.clone();
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(addr, true, false).await?;
            loop {
                let next = ids.lock().map_err(|_| "poisoned")?.pop();
                let Some(id) = next else { break };
                client.session = Some(id);
                client.close_session().await?;
            }
            Ok::<_, BoxError>(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    Ok(())
}
