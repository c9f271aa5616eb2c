//! Load benchmark: a real Streamable HTTP server on 127.0.0.1, driven by a load generator in
//! this same binary. Not criterion: a plain `main` that stops by itself.
//!
//! Run: `cargo bench --bench load` (about 50 s with the defaults, once built).
//!
//! The binary plays three roles. With `--serve-mcp MODE WORKERS MAX_SESSIONS` it is the MCP
//! server of `examples/http_server.rs` (the same `echo` tool, TCP_NODELAY on) in one of the
//! modes `sse` (stateful, SSE answers), `json` (stateful, `json_response(true)`) or `stateless`
//! (`stateless(true).json_response(true)`); with `--serve-bare WORKERS` it is a bare actix-web
//! handler that parses the same POST and answers the same JSON-RPC body (the upper bound).
//! Without those arguments it is the driver: it re-executes itself as the server (so nothing
//! else must be built), learns the port from the child's first stdout line, and measures.
//!
//! CPU placement: the machine this was written on has 2 cores, so the server runs with
//! `--workers 1` and the load generator is a single-threaded tokio runtime; each gets about one
//! core. Nothing is pinned. With `LOAD_DEFAULT_WORKERS=1` (the default) the concurrency-64 cells
//! are also run against actix-web's default worker count, sharing the cores with the client.
//!
//! Per cell (mode × concurrency): every virtual client owns one keep-alive HTTP/1.1 connection
//! (hyper's client connection, no pool) and, in stateful modes, its own session (`initialize` +
//! `notifications/initialized` before the clock starts). It then loops `tools/call echo
//! {"message":"hello"}`, reading every response to its end (SSE: until the stream closes after
//! the response event) and checking it carries the echoed text. After a warm-up, the measured
//! window records req/s, p50/p99 latency, and the server's CPU time per request: the sum over
//! the server's threads of `/proc/<pid>/task/<tid>/schedstat` (nanoseconds on CPU), read before
//! and after the window.
//!
//! Memory: a fresh `sse` server; RSS (`VmRSS`) is read, N sessions are opened (initialize +
//! initialized, nothing else) and RSS is read again. A second fresh server does the same and
//! then opens one GET SSE stream per session (raw TCP, a handwritten request, headers read),
//! holding N connections open while RSS is read. The fd limit is raised with `setrlimit`
//! before the server is spawned, so the child inherits it.
//!
//! Environment (defaults in brackets): `LOAD_DURATION_MS` [3000] measured window per cell,
//! `LOAD_WARMUP_MS` [500], `LOAD_CONCURRENCY` [1,64], `LOAD_MODES` [sse,json,stateless,bare],
//! `LOAD_MAX_REQUESTS` [5000000] cap per cell, `LOAD_DEFAULT_WORKERS` [1],
//! `LOAD_SESSIONS` [10000] for the memory runs (0 skips them).
//!
//! Everything is bounded: each request times out after 10 s, each cell stops after its window
//! or its request cap, and every server child is killed when its guard drops (also on panic);
//! a child whose stdin closes (the driver died) exits, and none lives past 10 minutes.

use std::error::Error;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

type BoxError = Box<dyn Error + Send + Sync>;
type Result<T, E = BoxError> = std::result::Result<T, E>;

/// The protocol version the clients negotiate and send back in `MCP-Protocol-Version`.
const VERSION: &str = "2025-11-25";
/// A server child lives at most this long, whatever happens to the driver.
const SERVER_LIFETIME: Duration = Duration::from_secs(600);
/// Any single request or connection step fails after this long.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--serve-mcp") => serve::mcp(&args[1..]),
        Some("--serve-bare") => serve::bare(&args[1..]),
        // `cargo bench` passes `--bench`; nothing else is expected.
        _ => driver(),
    }
}

/// The server roles, run in a child process.
#[path = "load/serve.rs"]
mod serve;

/// What the server under test is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Stateful, SSE answers.
    Sse,
    /// Stateful, JSON answers.
    Json,
    /// Stateless, JSON answers.
    Stateless,
    /// The bare actix-web handler.
    Bare,
}

impl Mode {
    fn parse(name: &str) -> Option<Self> {
        match name.trim() {
            "sse" => Some(Self::Sse),
            "json" => Some(Self::Json),
            "stateless" => Some(Self::Stateless),
            "bare" => Some(Self::Bare),
            _ => None,
        }
    }

    fn arg(self) -> &'static str {
        match self {
            Self::Sse => "sse",
            Self::Json => "json",
            Self::Stateless => "stateless",
            Self::Bare => "bare",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Sse => "stateful, SSE answers",
            Self::Json => "stateful, JSON answers",
            Self::Stateless => "stateless, JSON answers",
            Self::Bare => "bare actix-web handler",
        }
    }

    fn stateful(self) -> bool {
        matches!(self, Self::Sse | Self::Json)
    }
}

/// Settings read from the environment.
#[derive(Debug, Clone)]
struct Config {
    duration: Duration,
    warmup: Duration,
    concurrency: Vec<usize>,
    modes: Vec<Mode>,
    max_requests: u64,
    default_workers: bool,
    sessions: usize,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

impl Config {
    fn from_env() -> Result<Self> {
        let concurrency = std::env::var("LOAD_CONCURRENCY").unwrap_or_else(|_| "1,64".into());
        let concurrency = concurrency
            .split(',')
            .map(|c| c.trim().parse::<usize>())
            .collect::<Result<Vec<_>, _>>()?;
        let modes =
            std::env::var("LOAD_MODES").unwrap_or_else(|_| "sse,json,stateless,bare".into());
        let mut modes = modes
            .split(',')
            .map(|m| Mode::parse(m).ok_or_else(|| format!("unknown mode {m:?}")))
            .collect::<Result<Vec<_>, _>>()?;
        // The bare handler runs first: every other row is compared with it.
        modes.sort_by_key(|m| *m != Mode::Bare);
        Ok(Self {
            duration: Duration::from_millis(env_or("LOAD_DURATION_MS", 3000)),
            warmup: Duration::from_millis(env_or("LOAD_WARMUP_MS", 500)),
            concurrency,
            modes,
            max_requests: env_or("LOAD_MAX_REQUESTS", 5_000_000),
            default_workers: env_or("LOAD_DEFAULT_WORKERS", 1u8) != 0,
            sessions: env_or("LOAD_SESSIONS", 10_000),
        })
    }
}

/// A server child process; killed when dropped, also while unwinding from a panic.
struct ServerProcess {
    child: Child,
    addr: SocketAddr,
}

impl ServerProcess {
    fn spawn(args: &[String]) -> Result<Self> {
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        // Guard first, so the child dies if it never announces its port.
        let mut server = Self {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(STEP_TIMEOUT)?;
        let port: u16 = line
            .strip_prefix("LISTENING ")
            .ok_or_else(|| format!("unexpected server output {line:?}"))?
            .trim()
            .parse()?;
        server.addr.set_port(port);
        Ok(server)
    }

    fn start(mode: Mode, workers: usize, max_sessions: usize) -> Result<Self> {
        let workers = workers.to_string();
        let args = match mode {
            Mode::Bare => vec!["--serve-bare".to_owned(), workers],
            _ => vec![
                "--serve-mcp".to_owned(),
                mode.arg().to_owned(),
                workers,
                max_sessions.to_string(),
            ],
        };
        Self::spawn(&args)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Nanoseconds all the server's threads have spent on a CPU.
    fn cpu_ns(&self) -> Result<u64> {
        cpu_ns(&self.pid().to_string())
    }

    /// Resident set size, in KiB.
    fn rss_kib(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))?;
        let line = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .ok_or("no VmRSS")?;
        Ok(line
            .split_whitespace()
            .nth(1)
            .ok_or("malformed VmRSS")?
            .parse()?)
    }
}

/// Nanoseconds all threads of process `pid` (or `self`) have spent on a CPU.
fn cpu_ns(pid: &str) -> Result<u64> {
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

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Raises the soft fd limit (and the hard one, when allowed) so that the driver and the server
/// it spawns next can each hold `needed` descriptors.
fn raise_fd_limit(needed: u64) -> u64 {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let current = getrlimit(Resource::Nofile);
    let soft = current.current.unwrap_or(u64::MAX);
    if soft >= needed {
        return soft;
    }
    let hard = current.maximum.unwrap_or(u64::MAX);
    let wanted = Rlimit {
        current: Some(needed),
        maximum: Some(hard.max(needed)),
    };
    if setrlimit(Resource::Nofile, wanted).is_ok() {
        return needed;
    }
    // Not allowed past the hard limit: take all of it.
    let capped = Rlimit {
        current: Some(hard),
        maximum: Some(hard),
    };
    match setrlimit(Resource::Nofile, capped) {
        Ok(()) => hard,
        Err(_) => soft,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// One keep-alive HTTP/1.1 connection to the server, optionally bound to a session.
struct Client {
    sender: http1::SendRequest<Full<Bytes>>,
    host: HeaderValue,
    session: Option<HeaderValue>,
    stateful: bool,
}

/// A finished response: status, session header, and the whole body.
struct Answer {
    status: StatusCode,
    session: Option<HeaderValue>,
    body: Bytes,
}

impl Client {
    async fn connect(addr: SocketAddr, stateful: bool) -> Result<Self> {
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
        })
    }

    async fn post(&mut self, body: String) -> Result<Answer> {
        let mut request = Request::post("/mcp")
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
    async fn open_session(&mut self) -> Result<HeaderValue> {
        self.session = None;
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{VERSION}","capabilities":{{}},"clientInfo":{{"name":"load","version":"0"}}}}}}"#
        );
        let answer = self.post(init).await?;
        if answer.status != StatusCode::OK || !contains(&answer.body, b"\"serverInfo\"") {
            return Err(format!("initialize answered {}", answer.status).into());
        }
        let session = answer.session.ok_or("initialize answered no session id")?;
        self.session = Some(session.clone());
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
        let answer = self.post(initialized).await?;
        if answer.status != StatusCode::ACCEPTED {
            return Err(format!("notifications/initialized answered {}", answer.status).into());
        }
        Ok(session)
    }

    /// One `tools/call echo`, checked.
    async fn echo(&mut self, id: u64) -> Result<()> {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello"}}}}}}"#
        );
        let answer = self.post(call).await?;
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
}

/// The phases of one cell, shared by its clients.
const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const DONE: u8 = 2;

/// The figures of one cell.
#[derive(Debug, Clone)]
struct Cell {
    mode: Mode,
    workers: &'static str,
    concurrency: usize,
    requests: u64,
    rps: f64,
    p50: Duration,
    p99: Duration,
    cpu_per_request: Duration,
    client_cpu_per_request: Duration,
}

async fn run_client(
    mut client: Client,
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
        client.echo(id).await?;
        id += 1;
        if phase.load(Ordering::Acquire) == MEASURE && now == MEASURE {
            let nanos = started.elapsed().as_nanos();
            latencies.push(u32::try_from(nanos).unwrap_or(u32::MAX));
        }
    }
}

fn percentile(sorted: &[u32], pct: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = (sorted.len() * pct / 100).min(sorted.len() - 1);
    Duration::from_nanos(u64::from(sorted[index]))
}

async fn run_cell(
    config: &Config,
    server: &ServerProcess,
    mode: Mode,
    workers: &'static str,
    concurrency: usize,
) -> Result<Cell> {
    let phase = Arc::new(AtomicU8::new(WARMUP));
    let budget = Arc::new(AtomicU64::new(config.max_requests));
    let mut clients = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let mut client = Client::connect(server.addr, mode.stateful()).await?;
        if mode.stateful() {
            client.open_session().await?;
        }
        clients.push(client);
    }
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|client| tokio::spawn(run_client(client, phase.clone(), budget.clone())))
        .collect();
    tokio::time::sleep(config.warmup).await;
    let cpu_before = server.cpu_ns()?;
    let client_before = cpu_ns("self")?;
    let started = Instant::now();
    phase.store(MEASURE, Ordering::Release);
    let deadline = started + config.duration;
    while Instant::now() < deadline && budget.load(Ordering::Relaxed) > 0 {
        tokio::time::sleep(Duration::from_millis(10).min(config.duration)).await;
    }
    let cpu_after = server.cpu_ns()?;
    let client_after = cpu_ns("self")?;
    let elapsed = started.elapsed();
    phase.store(DONE, Ordering::Release);
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    latencies.sort_unstable();
    let requests = latencies.len() as u64;
    let cpu = cpu_after.saturating_sub(cpu_before);
    Ok(Cell {
        mode,
        workers,
        concurrency,
        requests,
        rps: requests as f64 / elapsed.as_secs_f64(),
        p50: percentile(&latencies, 50),
        p99: percentile(&latencies, 99),
        cpu_per_request: Duration::from_nanos(cpu / requests.max(1)),
        client_cpu_per_request: Duration::from_nanos(
            client_after.saturating_sub(client_before) / requests.max(1),
        ),
    })
}

/// The memory of one run: sessions opened, RSS before and after.
#[derive(Debug)]
struct MemoryRun {
    sessions: usize,
    streams: usize,
    rss_before_kib: u64,
    rss_after_kib: u64,
}

impl MemoryRun {
    fn kib_per_session(&self) -> f64 {
        (self.rss_after_kib.saturating_sub(self.rss_before_kib)) as f64
            / self.sessions.max(1) as f64
    }
}

/// Opens `count` sessions over a few keep-alive connections; returns their ids.
async fn open_sessions(addr: SocketAddr, count: usize) -> Result<Vec<HeaderValue>> {
    const CONNECTIONS: usize = 32;
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CONNECTIONS.min(count.max(1)) {
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(addr, true).await?;
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
async fn open_get_stream(addr: SocketAddr, session: HeaderValue) -> Result<TcpStream> {
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

/// Lets the server settle (freed buffers, finished streams) before RSS is read.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(700)).await;
}

async fn memory_run(sessions: usize, with_streams: bool) -> Result<MemoryRun> {
    // One extra session warms the server up (registry, lazy statics) before the baseline.
    let server = ServerProcess::start(Mode::Sse, 1, sessions + 1)?;
    open_sessions(server.addr, 1).await?;
    settle().await;
    let rss_before_kib = server.rss_kib()?;
    let ids = open_sessions(server.addr, sessions).await?;
    let mut streams = Vec::new();
    if with_streams {
        const PARALLEL: usize = 128;
        let mut ids = ids.iter().cloned();
        let mut pending = tokio::task::JoinSet::new();
        loop {
            while pending.len() < PARALLEL {
                let Some(id) = ids.next() else { break };
                pending.spawn(open_get_stream(server.addr, id));
            }
            let Some(done) = pending.join_next().await else {
                break;
            };
            streams.push(done??);
        }
    }
    settle().await;
    let rss_after_kib = server.rss_kib()?;
    drop(streams);
    Ok(MemoryRun {
        sessions: ids.len(),
        streams: if with_streams { ids.len() } else { 0 },
        rss_before_kib,
        rss_after_kib,
    })
}

fn us(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

fn report(cells: &[Cell], memory: &[MemoryRun], config: &Config, fd_limit: u64) -> String {
    let bare = |workers: &str, concurrency: usize| {
        cells
            .iter()
            .find(|c| c.mode == Mode::Bare && c.workers == workers && c.concurrency == concurrency)
            .map(|c| c.cpu_per_request)
    };
    let ratio = |cell: &Cell| {
        bare(cell.workers, cell.concurrency)
            .map(|b| cell.cpu_per_request.as_secs_f64() / b.as_secs_f64().max(1e-12))
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## actix-mcp load benchmark\n\n{} s measured per cell after {} s warm-up; server CPU = \
         sum of its threads' schedstat; client: 1 tokio thread, 1 keep-alive HTTP/1.1 \
         connection (and session) per virtual client.\n",
        config.duration.as_secs_f64(),
        config.warmup.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| mode | server workers | concurrency | req/s | p50 µs | p99 µs | server µs CPU/request | ratio to bare | client µs CPU/request |"
    );
    let _ = writeln!(
        out,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for cell in cells {
        let ratio = ratio(cell).map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}×"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.0} | {:.0} | {:.0} | {:.1} | {} | {:.1} |",
            cell.mode.label(),
            cell.workers,
            cell.concurrency,
            cell.rps,
            us(cell.p50),
            us(cell.p99),
            us(cell.cpu_per_request),
            ratio,
            us(cell.client_cpu_per_request)
        );
    }
    let _ = writeln!(
        out,
        "\nAt concurrency 1 the server sleeps between requests, so its CPU per request includes \
         waking from idle (epoll, scheduler) and the ratios are compressed; concurrency 64 shows \
         the cost of the request path itself."
    );
    let _ = writeln!(
        out,
        "\nTargets (server CPU per request vs the bare handler, same concurrency, 1 worker):"
    );
    for (mode, limit) in [(Mode::Sse, 1.5), (Mode::Stateless, 1.3)] {
        for cell in cells.iter().filter(|c| c.mode == mode && c.workers == "1") {
            if let Some(r) = ratio(cell) {
                let _ = writeln!(
                    out,
                    "- {}, concurrency {}: {r:.2}× (target ≤ {limit}×: {})",
                    mode.label(),
                    cell.concurrency,
                    verdict(r <= limit)
                );
            }
        }
    }
    if !memory.is_empty() {
        let _ = writeln!(
            out,
            "\nMemory (stateful SSE server, 1 worker; fd limit {fd_limit}):"
        );
    }
    for run in memory {
        let per = run.kib_per_session();
        let (what, limit) = if run.streams > 0 {
            ("with a GET SSE stream open", 20.0)
        } else {
            ("idle session", 8.0)
        };
        let _ = writeln!(
            out,
            "- {what}: {} sessions (all 200), {} streams held; RSS {:.1} MiB → {:.1} MiB: \
             {per:.2} KiB = {:.2} kB per session (target ≤ {limit} kB: {})",
            run.sessions,
            run.streams,
            run.rss_before_kib as f64 / 1024.0,
            run.rss_after_kib as f64 / 1024.0,
            per * 1.024,
            verdict(per * 1.024 <= limit)
        );
    }
    out
}

fn driver() -> Result<()> {
    let config = Config::from_env()?;
    // Each GET stream is one fd in the driver and one in the server, plus some slack.
    let fd_limit = raise_fd_limit(config.sessions as u64 + 1024);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut cells = Vec::new();
        let mut plan: Vec<(&'static str, usize, Vec<usize>)> = vec![("1", 1, config.concurrency.clone())];
        if config.default_workers {
            let widest = config.concurrency.iter().copied().max().unwrap_or(64);
            plan.push(("default", 0, vec![widest]));
        }
        for (label, workers, concurrencies) in plan {
            for &mode in &config.modes {
                let server = ServerProcess::start(mode, workers, 10_000)?;
                for &concurrency in &concurrencies {
                    let cell = run_cell(&config, &server, mode, label, concurrency).await?;
                    eprintln!(
                        "{} ({label} workers), concurrency {concurrency}: {} requests, {:.0} req/s, {:.1} µs server CPU/request",
                        mode.label(),
                        cell.requests,
                        cell.rps,
                        us(cell.cpu_per_request)
                    );
                    cells.push(cell);
                }
            }
        }
        let mut memory = Vec::new();
        if config.sessions > 0 {
            for with_streams in [false, true] {
                let run = memory_run(config.sessions, with_streams).await?;
                eprintln!("memory: {run:?}");
                memory.push(run);
            }
        }
        println!("{}", report(&cells, &memory, &config, fd_limit));
        Ok(())
    })
}
