//! Client benchmark: `tools/call echo` round trips from our client to our server, beside the
//! official Rust SDK's client (rmcp) against the same server, in the same run; our client
//! pinned to 2025-11-25 (sessions, as rmcp speaks) and again speaking 2026-07-28 (stateless);
//! and a multi-round-trip (MRTR) round trip in 2026-07-28 (`confirm`: the call, its
//! `input_required` result, the elicitation answered by the client's handler, the retry and
//! its result), reported per round trip. Not criterion: a plain `main` that stops by itself.
//!
//! Run: `cargo bench --bench client` (about two minutes with the defaults, once built).
//!
//! The binary plays the server too: with `--serve-http` it serves `echo` over Streamable HTTP
//! (SSE answers, as `examples/http_server.rs`) on 127.0.0.1 and announces its port; with
//! `--serve-stdio` it serves `echo` over stdio. Without arguments it is the driver: where the
//! machine has two cores, it pins the server (every thread) to core 0 and itself to core 1,
//! then runs each cell in interleaved rounds (ours, then rmcp, then again), each client in this
//! process on one actix (tokio current-thread) runtime. A cell is one transport (HTTP with one
//! session, or a stdio child process) at a concurrency (1 or 64 calls in flight on the one
//! connection). Client CPU per call is this process's CPU time (the sum over its threads of
//! `/proc/self/task/*/schedstat`) over the measured window divided by the calls completed.
//!
//! Environment (defaults in brackets): `CLIENT_ROUNDS` [5], `CLIENT_DURATION_MS` [1500],
//! `CLIENT_WARMUP_MS` [300], `CLIENT_CONCURRENCY` [1,64], `CLIENT_TRANSPORTS` [http,stdio],
//! `CLIENT_PIN` [1].
//!
//! Everything is bounded: each call times out after 10 s, each cell stops after its window,
//! the HTTP server child is killed when the driver ends (and exits when its stdin closes), and
//! stdio children are killed when their clients go.

use std::error::Error;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use actix_mcp::client::transport::{ChildProcess, HttpTransport, StderrMode};
use actix_mcp::client::{CallOptions, Client, Lifecycle};
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    ElicitAction, ElicitRequestParams, ElicitResult, InputRequest, InputRequiredResult,
};
use serde::Deserialize;
use serde_json::json;

type BoxError = Box<dyn Error + Send + Sync>;
type Result<T, E = BoxError> = std::result::Result<T, E>;

const STEP_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    message: String,
}

fn echo_server() -> Result<Server> {
    Ok(
        Server::builder("actix-mcp-client-bench", env!("CARGO_PKG_VERSION"))
            .tool(
                ToolDef::new("echo", |Params(args): Params<EchoArgs>| async move {
                    args.message
                })
                .description("Returns its message unchanged"),
            )
            .tool(
                ToolDef::new("confirm", |cx: RequestContext| async move {
                    match cx.input_response_as::<ElicitResult>("confirm") {
                        Some(answer) if answer.action == ElicitAction::Accept => {
                            Ok("confirmed".to_owned())
                        }
                        Some(_) => Ok("declined".to_owned()),
                        None => {
                            let schema = serde_json::from_value(json!({
                                "type": "object",
                                "properties": {"ok": {"type": "boolean"}},
                            }))
                            .map_err(|err| McpError::internal(err.to_string()))?;
                            let ask = ElicitRequestParams::form("Proceed?", schema);
                            Err(McpError::input_required(InputRequiredResult::ask(
                                "confirm",
                                InputRequest::elicitation(&ask),
                            )))
                        }
                    }
                })
                .description("Asks the user to confirm (one multi-round-trip round), then answers"),
            )
            .build()?,
    )
}

fn pin_to(cpu: usize) -> Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set)?;
    Ok(())
}

fn pin_from_args(args: &[String]) -> Result<()> {
    if let Some(at) = args.iter().position(|a| a == "--cpu") {
        pin_to(args.get(at + 1).ok_or("--cpu needs a number")?.parse()?)?;
    }
    Ok(())
}

/// `--serve-http [--cpu N]`: our server over Streamable HTTP; exits when stdin closes.
fn serve_http(args: &[String]) -> Result<()> {
    pin_from_args(args)?;
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
        std::process::exit(0);
    });
    let server = echo_server()?;
    let mcp = server.http("/mcp").max_sessions(1000).build()?;
    actix_web::rt::System::new().block_on(async move {
        let http =
            actix_web::HttpServer::new(move || actix_web::App::new().configure(mcp.configure()))
                .workers(1)
                .tcp_nodelay(true)
                .disable_signals()
                .bind(("127.0.0.1", 0))?;
        let port = http.addrs().first().ok_or("not bound")?.port();
        let mut out = std::io::stdout().lock();
        writeln!(out, "LISTENING {port}")?;
        out.flush()?;
        drop(out);
        http.run().await?;
        Ok(())
    })
}

/// `--serve-stdio [--cpu N]`: our server over stdio.
fn serve_stdio(args: &[String]) -> Result<()> {
    pin_from_args(args)?;
    let server = echo_server()?;
    actix_rt::System::new().block_on(async move { Ok(server.serve_stdio().await?) })
}

/// The HTTP server child; killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(cpu: Option<usize>) -> Result<Self> {
        let mut args = vec!["--serve-http".to_owned()];
        if let Some(cpu) = cpu {
            args.extend(["--cpu".to_owned(), cpu.to_string()]);
        }
        let mut child = Command::new(std::env::current_exe()?)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut server = Self {
            child,
            url: String::new(),
        };
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let port: u16 = line
            .strip_prefix("LISTENING ")
            .ok_or("unexpected server output")?
            .trim()
            .parse()?;
        server.url = format!("http://127.0.0.1:{port}/mcp");
        Ok(server)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn self_cpu_ns() -> Result<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task")? {
        if let Ok(stat) = std::fs::read_to_string(task?.path().join("schedstat")) {
            total += stat
                .split_whitespace()
                .next()
                .and_then(|ns| ns.parse::<u64>().ok())
                .ok_or("malformed schedstat")?;
        }
    }
    Ok(total)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    /// Our client, pinned to 2025-11-25 (sessions), as rmcp speaks.
    Ours,
    /// The official Rust SDK's client.
    Rmcp,
    /// Our client speaking 2026-07-28 (stateless, `_meta` on every request).
    OursV2026,
    /// Our client speaking 2026-07-28, calling `confirm`: one multi-round-trip round (an
    /// `input_required` result, the elicitation answered by the client's handler, the retry).
    OursMrtr,
}

impl Which {
    fn lifecycle(self) -> Lifecycle {
        match self {
            Which::Ours | Which::Rmcp => Lifecycle::V2025,
            Which::OursV2026 | Which::OursMrtr => Lifecycle::V2026,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Http,
    Stdio,
}

/// One call, whichever client makes it.
#[derive(Clone)]
enum AnyClient {
    Ours(Client, Which),
    Rmcp(Rc<rmcp::service::RunningService<rmcp::RoleClient, ()>>),
}

fn ours(which: Which) -> actix_mcp::client::ClientBuilder {
    Client::builder("bench", "0")
        .lifecycle(which.lifecycle())
        .elicitation(|_params: ElicitRequestParams, _| async move {
            Ok(ElicitResult::new(ElicitAction::Accept))
        })
}

impl AnyClient {
    async fn connect(
        which: Which,
        transport: Transport,
        url: &str,
        cpu: Option<usize>,
    ) -> Result<Self> {
        let exe = std::env::current_exe()?;
        let mut stdio_args = vec!["--serve-stdio".to_owned()];
        if let Some(cpu) = cpu {
            stdio_args.extend(["--cpu".to_owned(), cpu.to_string()]);
        }
        Ok(match (which, transport) {
            (Which::Ours | Which::OursV2026 | Which::OursMrtr, Transport::Http) => {
                AnyClient::Ours(ours(which).connect(HttpTransport::new(url)).await?, which)
            }
            (Which::Ours | Which::OursV2026 | Which::OursMrtr, Transport::Stdio) => {
                AnyClient::Ours(
                    ours(which)
                        .connect(
                            ChildProcess::new(exe)
                                .args(stdio_args)
                                .stderr(StderrMode::Discard),
                        )
                        .await?,
                    which,
                )
            }
            (Which::Rmcp, Transport::Http) => {
                use rmcp::ServiceExt;
                let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
                AnyClient::Rmcp(Rc::new(().serve(transport).await?))
            }
            (Which::Rmcp, Transport::Stdio) => {
                use rmcp::ServiceExt;
                let mut command = tokio::process::Command::new(exe);
                command.args(stdio_args);
                let (child, _stderr) = rmcp::transport::TokioChildProcess::builder(command)
                    .stderr(Stdio::null())
                    .spawn()?;
                AnyClient::Rmcp(Rc::new(().serve(child).await?))
            }
        })
    }

    async fn echo(&self) -> Result<()> {
        let call = async {
            match self {
                AnyClient::Ours(client, Which::OursMrtr) => {
                    let result = client
                        .call_tool_with("confirm", json!({}), CallOptions::new())
                        .await?;
                    if result.text_content() != "confirmed" {
                        return Err(BoxError::from("the round trip did not confirm"));
                    }
                }
                AnyClient::Ours(client, _) => {
                    let result = client
                        .call_tool_with("echo", json!({"message": "hello"}), CallOptions::new())
                        .await?;
                    if result.text_content() != "hello" {
                        return Err(BoxError::from("wrong echo"));
                    }
                }
                AnyClient::Rmcp(client) => {
                    let mut params = rmcp::model::CallToolRequestParams::new("echo");
                    params.arguments = json!({"message": "hello"}).as_object().cloned();
                    client.call_tool(params).await?;
                }
            }
            Ok::<_, BoxError>(())
        };
        tokio::time::timeout(STEP_TIMEOUT, call).await?
    }

    async fn close(self) {
        match self {
            AnyClient::Ours(client, _) => client.close().await,
            AnyClient::Rmcp(client) => {
                if let Ok(client) = Rc::try_unwrap(client) {
                    let _ = client.cancel().await;
                }
            }
        }
    }
}

/// Calls completed per round, and the CPU per call, of one cell.
async fn run_cell(
    client: &AnyClient,
    concurrency: usize,
    warmup: Duration,
    window: Duration,
) -> Result<(u64, Duration)> {
    let measuring = Rc::new(AtomicBool::new(false));
    let stop = Rc::new(AtomicBool::new(false));
    let calls = Rc::new(AtomicU64::new(0));
    let mut loops = Vec::new();
    for _ in 0..concurrency {
        let (client, measuring, stop, calls) = (
            client.clone(),
            measuring.clone(),
            stop.clone(),
            calls.clone(),
        );
        loops.push(async move {
            while !stop.load(Ordering::Relaxed) {
                client.echo().await?;
                if measuring.load(Ordering::Relaxed) {
                    calls.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok::<_, BoxError>(())
        });
    }
    let driver = async {
        tokio::time::sleep(warmup).await;
        let before = self_cpu_ns()?;
        measuring.store(true, Ordering::Relaxed);
        let started = Instant::now();
        tokio::time::sleep(window).await;
        measuring.store(false, Ordering::Relaxed);
        let cpu = self_cpu_ns()?.saturating_sub(before);
        let elapsed = started.elapsed();
        stop.store(true, Ordering::Relaxed);
        Ok::<_, BoxError>((cpu, elapsed))
    };
    let (outcomes, measured) = futures::join!(futures::future::join_all(loops), driver);
    for outcome in outcomes {
        outcome?;
    }
    let (cpu, _) = measured?;
    let n = calls.load(Ordering::Relaxed);
    Ok((n, Duration::from_nanos(cpu / n.max(1))))
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn driver() -> Result<()> {
    let rounds = env_or("CLIENT_ROUNDS", 5usize).max(1);
    let window = Duration::from_millis(env_or("CLIENT_DURATION_MS", 1500));
    let warmup = Duration::from_millis(env_or("CLIENT_WARMUP_MS", 300));
    let concurrency: Vec<usize> = std::env::var("CLIENT_CONCURRENCY")
        .unwrap_or_else(|_| "1,64".into())
        .split(',')
        .map(|c| c.trim().parse())
        .collect::<Result<_, _>>()?;
    let transports: Vec<Transport> = std::env::var("CLIENT_TRANSPORTS")
        .unwrap_or_else(|_| "http,stdio".into())
        .split(',')
        .map(|t| match t.trim() {
            "http" => Ok(Transport::Http),
            "stdio" => Ok(Transport::Stdio),
            other => Err(format!("unknown transport {other:?}")),
        })
        .collect::<Result<_, _>>()?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let (server_cpu, driver_cpu) = if env_or("CLIENT_PIN", 1u8) != 0 && cores >= 2 {
        (Some(0), Some(1))
    } else {
        (None, None)
    };
    if let Some(cpu) = driver_cpu {
        pin_to(cpu)?;
    }
    let server = HttpServer::start(server_cpu)?;
    let url = server.url.clone();
    actix_rt::System::new().block_on(async move {
        // (transport, concurrency, which) -> per-round µs per call
        let mut cells: Vec<((Transport, usize, Which), Vec<f64>)> = Vec::new();
        for &transport in &transports {
            for &c in &concurrency {
                for which in [Which::Ours, Which::Rmcp, Which::OursV2026, Which::OursMrtr] {
                    cells.push(((transport, c, which), Vec::new()));
                }
            }
        }
        for round in 1..=rounds {
            for ((transport, c, which), samples) in &mut cells {
                let client = AnyClient::connect(*which, *transport, &url, server_cpu).await?;
                let (calls, per_call) = run_cell(&client, *c, warmup, window).await?;
                client.close().await;
                let us = per_call.as_secs_f64() * 1e6;
                eprintln!("round {round}/{rounds}: {which:?} {transport:?} c={c}: {calls} calls, {us:.1} µs client CPU per call");
                samples.push(us);
            }
        }
        let mut out = String::new();
        let _ = writeln!(out, "\n## actix-mcp client benchmark\n\n{rounds} interleaved rounds, {} s measured per cell after {} s warm-up; server (actix-mcp, 1 worker) {}; client CPU = this process's schedstat per call.\n", window.as_secs_f64(), warmup.as_secs_f64(), match driver_cpu { Some(_) => "pinned to core 0, clients to core 1", None => "unpinned" });
        let _ = writeln!(out, "| transport | calls in flight | actix-mcp client (2025-11-25) µs CPU/call: median (range) | rmcp client µs CPU/call: median (range) | ours / rmcp | actix-mcp client (2026-07-28) µs CPU/call | MRTR round trip (2026-07-28: call, input_required, elicitation answered, retry) µs CPU/round trip |");
        let _ = writeln!(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        let range = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            format!("{lo:.1}–{hi:.1}")
        };
        for &transport in &transports {
            for &c in &concurrency {
                let find = |which| {
                    cells.iter().find(|((t, cc, w), _)| *t == transport && *cc == c && *w == which).map(|(_, s)| s.clone()).unwrap_or_default()
                };
                let (mut ours, mut theirs) = (find(Which::Ours), find(Which::Rmcp));
                let (mut v2026, mut mrtr) = (find(Which::OursV2026), find(Which::OursMrtr));
                let (ours_range, theirs_range) = (range(&ours), range(&theirs));
                let (v2026_range, mrtr_range) = (range(&v2026), range(&mrtr));
                let (m_ours, m_theirs) = (median(&mut ours), median(&mut theirs));
                let (m_v2026, m_mrtr) = (median(&mut v2026), median(&mut mrtr));
                let _ = writeln!(out, "| {transport:?} | {c} | {m_ours:.1} ({ours_range}) | {m_theirs:.1} ({theirs_range}) | **{:.2}×** | {m_v2026:.1} ({v2026_range}) | {m_mrtr:.1} ({mrtr_range}) |", m_ours / m_theirs.max(1e-9));
            }
        }
        println!("{out}");
        Ok::<_, BoxError>(())
    })?;
    drop(server);
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--serve-http") => serve_http(&args[1..]),
        Some("--serve-stdio") => serve_stdio(&args[1..]),
        _ => driver(),
    }
}
