//! Load benchmark: real Streamable HTTP servers on 127.0.0.1, driven by a load generator in
//! this same binary. Not criterion: a plain `main` that stops by itself.
//!
//! Run: `cargo bench --bench load` (about four minutes with the defaults, once built).
//!
//! The binary plays several roles (see `load/serve.rs`): with `--serve-mcp MODE` it is the MCP
//! server of `examples/http_server.rs` (the same `echo` tool) in mode `sse` (stateful, SSE
//! answers), `json` (stateful, `json_response(true)`) or `stateless`
//! (`stateless(true).json_response(true)`), or `v2026` (the default endpoint with
//! `json_response(true)`, driven with protocol 2026-07-28 requests: `_meta` and the standard
//! headers on every POST, no session); with `--serve-bare json|sse` it is the floor: a bare
//! actix-web handler that deserializes the POST into typed structs borrowing `id` and `params`
//! as `&RawValue`, reads only the fields it answers with (`protocolVersion`, or `name` and
//! `arguments.message`), and serializes one typed response once, as JSON or as one SSE `data:`
//! event (the framing of the server it is compared with), its `initialize` giving a fresh
//! session id (the reference); with `--serve-rmcp MODE` it is the official Rust SDK's server (rmcp's
//! `StreamableHttpService` on hyper, the same `echo` tool) with sessions and SSE answers
//! (`sse`) or stateless with JSON answers (`stateless`); with `--exec-pinned CPU PROGRAM ...`
//! it pins itself and becomes `PROGRAM` (how redis-server and HAProxy are started). Without
//! those arguments it is the driver: it re-executes itself for each server, learns the port
//! from the child's first stdout line, and measures.
//!
//! **Redis mode** (`redis`, cargo feature `redis`: `cargo bench --features redis --bench
//! load`; see `load/cluster.rs`). Per run the driver starts a redis-server of its own (a
//! temporary directory, no persistence, a free loopback port), two `--serve-mcp sse --redis
//! URL` nodes sharing their sessions on it (`Cluster::redis`), and HAProxy in front (one
//! thread, round robin per request, no stickiness, as in `tests/cluster/env.sh`), all four
//! pinned to the servers' core; the clients talk to HAProxy. Its rows count the two nodes'
//! CPU summed; a section of its own compares them with one `sse` node in memory in the same
//! run (ratio of medians with the per-round range, goal ≤ 1.5×), and gives Redis's and
//! HAProxy's CPU per unit (schedstat, the same window), and Redis's commands per unit from
//! `INFO commandstats` / `INFO stats` read before and after the window (its own `INFO`s left
//! out): all of them, `EVALSHA` (a session request's one store round trip, its record's load:
//! one script renewing it and answering `1` when the node holds it already; goal ≤ 1 per `echo`),
//! and each command. Session creation through it should reach 5,000 sessions/s. The
//! `redis-lease` mode is the same deployment with a session lease of 1 s on each node
//! (`--session-lease 1000`: `Cluster::session_lease`), where a node serves a session it holds
//! without the load. The `redis-on-node` mode adds requests' streams kept in the memory of the
//! node that served them (`--request-streams-on-node`: `RedisEventStore::request_streams_on_node`),
//! so an answer costs Redis no write. The section gives a row for each. All three run by
//! default when the bench is built with the feature and redis-server and haproxy are found
//! (on `PATH` or in `/usr/sbin`); otherwise the driver says why it skips it, and asking for it
//! in `LOAD_SERVERS` fails with what to do.
//!
//! **Placement.** Where the machine has two or more cores, every server pins itself (all of
//! its threads: it sets its affinity before starting any) to core 0 and the driver to core 1;
//! actix-web servers run one worker, rmcp one tokio thread. The load generator is a
//! single-threaded tokio runtime with one keep-alive HTTP/1.1 connection (hyper's client
//! connection, no pool) per virtual client. `LOAD_PIN=0` turns pinning off.
//!
//! **Rounds.** Noise on shared machines is about 20 % from one run to the next, so each cell is
//! measured `LOAD_ROUNDS` times, interleaved: round 1 runs every target once (the bare handlers
//! first, then each server), round 2 runs them all again, and so on; each run starts a fresh
//! server. The report gives each target's median over the rounds with its range, and the
//! ratio of its median to its floor's median (the bare handler with the same framing, fed the
//! same requests) with the range of the per-round ratios.
//!
//! **Workloads.** `tools/call echo {"message":"hello"}` at `LOAD_CONCURRENCY` clients (each with
//! its own session in stateful modes, opened before the clock starts), every response read to
//! its end and checked; session setup (`initialize`, `notifications/initialized`,
//! `DELETE`) in a loop; and session creation (`initialize`, `notifications/initialized`, the
//! sessions left open) in a loop. Per unit: server CPU time, the sum over the server's threads of
//! `/proc/<pid>/task/<tid>/schedstat`, read before and after the measured window.
//!
//! **Memory.** A fresh `sse` server; RSS (`VmRSS`) is read, `LOAD_SESSIONS` sessions are opened
//! (initialize + initialized, nothing else) and RSS is read again. A second fresh server does
//! the same and then opens one GET SSE stream per session, holding them while RSS is read.
//!
//! **Output.** The Markdown table on stdout, and the chart as SVG at `LOAD_SVG` (default
//! `target/load-bench.svg`; the README's chart is `benches/load.svg`).
//!
//! **Scale.** `LOAD_SCALE=SESSIONS,STREAMS` (off by default) adds the scale run of
//! `load/scale.rs`: 100,000 idle sessions and 10,000 GET streams on one node with
//! `LOAD_SCALE=100000,10000` (with `LOAD_WORKLOADS=none LOAD_SESSIONS=0`, it runs alone): the
//! setup rate, RSS per session and per stream, `echo` p50/p99 while they are open, and the
//! memory given back once they close.
//!
//! Environment (defaults in brackets): `LOAD_ROUNDS` [5], `LOAD_DURATION_MS` [2500] measured
//! window per cell, `LOAD_WARMUP_MS` [500], `LOAD_CONCURRENCY` [64], `LOAD_SETUP_CONCURRENCY`
//! [16], `LOAD_SERVERS` [bare,bare-sse,sse,json,stateless,v2026,rmcp-sse,rmcp-stateless, and
//! redis,redis-lease,redis-on-node where they can run], `LOAD_WORKLOADS`
//! [echo,setup,create; `none` runs only the memory runs], `LOAD_MAX_REQUESTS` [5000000] cap per cell, `LOAD_SESSIONS` [10000] for the
//! memory runs (0 skips them), `LOAD_PIN` [1], `LOAD_SVG`.
//!
//! Everything is bounded: each request times out after 10 s, each cell stops after its window
//! or its request cap, every server child is killed when its guard drops (also on panic), a
//! child whose stdin closes (the driver died) exits, and none lives past 10 minutes;
//! redis-server and HAProxy are killed when their guards drop and, through the parent-death
//! signal, when the driver dies.

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

type BoxError = Box<dyn Error + Send + Sync>;
type Result<T, E = BoxError> = std::result::Result<T, E>;

/// Built with `RUSTFLAGS='--cfg load_mimalloc'`, every role of this binary (each server
/// compared, the driver, the clients) allocates with mimalloc rather than the system's
/// allocator. glibc's takes its slow path far more often when many requests wait on I/O at
/// once (the Redis mode's nodes) than when each completes at once, and mimalloc does not; it
/// costs more memory per connection instead. The figures in the README are of the default
/// build unless they say otherwise.
#[cfg(load_mimalloc)]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        Some("--serve-rmcp") => serve::rmcp(&args[1..]),
        Some("--exec-pinned") => serve::exec_pinned(&args[1..]),
        // `cargo bench` passes `--bench`; nothing else is expected.
        _ => driver(),
    }
}

#[path = "load/client.rs"]
mod client;
#[path = "load/cluster.rs"]
mod cluster;
#[path = "load/report.rs"]
mod report;
#[path = "load/scale.rs"]
mod scale;
#[path = "load/serve.rs"]
mod serve;

#[path = "load/server_kind.rs"]
mod server_kind;
use server_kind::{NEEDS_REDIS_FEATURE, ServerKind};

/// What the clients do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    /// `tools/call echo`, on an open session where there are sessions.
    Echo,
    /// `initialize` + `notifications/initialized` + `DELETE`.
    Setup,
    /// `initialize` + `notifications/initialized`: the sessions stay (until the server stops).
    Create,
}

/// One cell of the table: a server under a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Target {
    server: ServerKind,
    workload: Workload,
}

impl Target {
    fn stateful(self) -> bool {
        self.server.stateful() || matches!(self.workload, Workload::Setup | Workload::Create)
    }

    /// The bare handler under the same workload, fed the same requests and answering with the
    /// same framing: what this target is compared with.
    fn reference(self) -> Self {
        let server = match self.server {
            _ if self.server.v2026() => ServerKind::BareV2026,
            ServerKind::Sse
            | ServerKind::RmcpSse
            | ServerKind::Redis
            | ServerKind::RedisLease
            | ServerKind::RedisOnNode
            | ServerKind::BareSse => ServerKind::BareSse,
            _ => ServerKind::Bare,
        };
        Self {
            server,
            workload: self.workload,
        }
    }

    /// The most this target may cost relative to its reference, where we set a goal.
    fn limit(self) -> Option<f64> {
        match (self.server, self.workload) {
            (ServerKind::Sse, Workload::Echo) => Some(1.4),
            (ServerKind::Stateless, Workload::Echo) => Some(1.25),
            (ServerKind::V2026, Workload::Echo) => Some(1.3),
            (ServerKind::Sse, Workload::Setup) => Some(1.4),
            _ => None,
        }
    }
}

/// Settings read from the environment.
#[derive(Debug, Clone)]
struct Config {
    rounds: usize,
    duration: Duration,
    warmup: Duration,
    concurrency: usize,
    setup_concurrency: usize,
    targets: Vec<Target>,
    max_requests: u64,
    sessions: usize,
    pin: bool,
    svg: PathBuf,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

impl Config {
    fn from_env() -> Result<Self> {
        let servers = match std::env::var("LOAD_SERVERS") {
            Ok(servers) => servers,
            Err(_) => {
                let mut servers =
                    "bare,bare-sse,sse,json,stateless,v2026,rmcp-sse,rmcp-stateless".to_owned();
                // The Redis mode runs by default where it can.
                match cluster::missing_programs() {
                    _ if !cfg!(feature = "redis") => {
                        eprintln!("note: skipping the Redis mode: {NEEDS_REDIS_FEATURE}")
                    }
                    Some(missing) => {
                        eprintln!("note: skipping the Redis mode: {missing}");
                    }
                    None => servers.push_str(",redis,redis-lease,redis-on-node"),
                }
                servers
            }
        };
        let mut servers = servers
            .split(',')
            .map(|m| ServerKind::parse(m).ok_or_else(|| format!("unknown server {m:?}")))
            .collect::<Result<Vec<_>, _>>()?;
        if servers.iter().any(|server| server.on_redis()) {
            if !cfg!(feature = "redis") {
                return Err(NEEDS_REDIS_FEATURE.into());
            }
            if let Some(missing) = cluster::missing_programs() {
                return Err(
                    format!("the Redis mode needs redis-server and haproxy: {missing}").into(),
                );
            }
            // The Redis mode is compared with one node in memory.
            if !servers.contains(&ServerKind::Sse) {
                servers.push(ServerKind::Sse);
            }
        }
        // The bare handlers come first in every round: every other row is compared with the one
        // fed the same requests and answering with the same framing.
        for server in servers.clone() {
            let reference = Target {
                server,
                workload: Workload::Echo,
            }
            .reference()
            .server;
            if !servers.contains(&reference) {
                servers.push(reference);
            }
        }
        servers.sort_by_key(|s| !s.is_bare());
        let workloads =
            std::env::var("LOAD_WORKLOADS").unwrap_or_else(|_| "echo,setup,create".into());
        let mut targets = Vec::new();
        for workload in workloads.split(',') {
            let workload = match workload.trim() {
                "echo" => Workload::Echo,
                "setup" => Workload::Setup,
                "create" => Workload::Create,
                "none" | "" => continue,
                other => return Err(format!("unknown workload {other:?}").into()),
            };
            for &server in &servers {
                // Session setup exists only where there are sessions; JSON answers would
                // measure the same path as SSE answers twice.
                let serves = match workload {
                    Workload::Echo => true,
                    Workload::Setup | Workload::Create => matches!(
                        server,
                        ServerKind::BareSse
                            | ServerKind::Sse
                            | ServerKind::RmcpSse
                            | ServerKind::Redis
                            | ServerKind::RedisLease
                            | ServerKind::RedisOnNode
                    ),
                };
                if serves {
                    targets.push(Target { server, workload });
                }
            }
        }
        Ok(Self {
            rounds: env_or("LOAD_ROUNDS", 5usize).max(1),
            duration: Duration::from_millis(env_or("LOAD_DURATION_MS", 2500)),
            warmup: Duration::from_millis(env_or("LOAD_WARMUP_MS", 500)),
            concurrency: env_or("LOAD_CONCURRENCY", 64usize).max(1),
            setup_concurrency: env_or("LOAD_SETUP_CONCURRENCY", 16usize).max(1),
            targets,
            max_requests: env_or("LOAD_MAX_REQUESTS", 5_000_000),
            sessions: env_or("LOAD_SESSIONS", 10_000),
            pin: env_or("LOAD_PIN", 1u8) != 0,
            svg: std::env::var_os("LOAD_SVG")
                .map_or_else(|| PathBuf::from("target/load-bench.svg"), PathBuf::from),
        })
    }
}

/// A server child process; killed when dropped, also while unwinding from a panic.
struct ServerProcess {
    child: Child,
    addr: SocketAddr,
}

impl ServerProcess {
    fn spawn(mut args: Vec<String>, cpu: Option<usize>) -> Result<Self> {
        if let Some(cpu) = cpu {
            args.extend(["--cpu".to_owned(), cpu.to_string()]);
        }
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .args(&args)
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

    /// Nanoseconds all the server's threads have spent on a CPU.
    fn cpu_ns(&self) -> Result<u64> {
        client::cpu_ns(&self.child.id().to_string())
    }

    /// Resident set size, in KiB.
    fn rss_kib(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
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

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a cell's clients talk to: one server, or the Redis mode's cluster.
enum Deployment {
    Single(ServerProcess),
    Cluster(cluster::RedisCluster),
}

/// The counters of a [`Deployment`] at one moment.
struct Reading {
    /// The servers' CPU (the nodes' summed, in the Redis mode), in nanoseconds.
    servers_ns: u64,
    /// Redis's and HAProxy's CPU, and Redis's command counters, in the Redis mode.
    cluster: Option<(u64, u64, cluster::Counters)>,
}

impl Deployment {
    fn start(kind: ServerKind, max_sessions: usize, cpu: Option<usize>) -> Result<Self> {
        Ok(match kind {
            ServerKind::Redis | ServerKind::RedisLease | ServerKind::RedisOnNode => {
                Self::Cluster(cluster::RedisCluster::start(
                    max_sessions,
                    cpu,
                    kind.session_lease_ms(),
                    kind.requests_on_node(),
                )?)
            }
            _ => Self::Single(ServerProcess::spawn(kind.args(max_sessions), cpu)?),
        })
    }

    /// Where the clients connect.
    fn addr(&self) -> SocketAddr {
        match self {
            Self::Single(server) => server.addr,
            Self::Cluster(cluster) => cluster.addr,
        }
    }

    /// The counters at the start of a measured window: Redis's command counters first, so the
    /// `INFO` that reads them falls outside the CPU window.
    fn reading_before(&self) -> Result<Reading> {
        match self {
            Self::Single(server) => Ok(Reading {
                servers_ns: server.cpu_ns()?,
                cluster: None,
            }),
            Self::Cluster(cluster) => {
                let counters = cluster.counters()?;
                Ok(Reading {
                    servers_ns: cluster.nodes_cpu_ns()?,
                    cluster: Some((cluster.redis_cpu_ns()?, cluster.haproxy_cpu_ns()?, counters)),
                })
            }
        }
    }

    /// The counters at the end of a measured window: CPU first, then Redis's counters.
    fn reading_after(&self) -> Result<Reading> {
        match self {
            Self::Single(server) => Ok(Reading {
                servers_ns: server.cpu_ns()?,
                cluster: None,
            }),
            Self::Cluster(cluster) => {
                let servers_ns = cluster.nodes_cpu_ns()?;
                let redis_ns = cluster.redis_cpu_ns()?;
                let haproxy_ns = cluster.haproxy_cpu_ns()?;
                Ok(Reading {
                    servers_ns,
                    cluster: Some((redis_ns, haproxy_ns, cluster.counters()?)),
                })
            }
        }
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

/// Lets the server settle (freed buffers, finished streams) before RSS is read.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(700)).await;
}

/// What a memory run holds open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// Idle sessions.
    Sessions,
    /// Sessions, each with its GET stream open.
    SessionsWithStreams,
    /// Plain SSE connections to the bare actix-web handler (the floor one connection costs).
    BareStreams,
}

async fn memory_run(sessions: usize, held: Held, cpu: Option<usize>) -> Result<report::MemoryRun> {
    let bare = held == Held::BareStreams;
    let kind = if bare {
        ServerKind::Bare
    } else {
        ServerKind::Sse
    };
    let server = ServerProcess::spawn(kind.args(sessions + 1), cpu)?;
    // One extra session (or connection) warms the server up before the baseline.
    if bare {
        drop(
            client::open_get_stream(
                server.addr,
                hyper::header::HeaderValue::from_static("warm-up"),
            )
            .await?,
        );
    } else {
        client::open_sessions(server.addr, 1).await?;
    }
    settle().await;
    let rss_before_kib = server.rss_kib()?;
    let ids = if bare {
        (0..sessions)
            .map(|n| hyper::header::HeaderValue::from_str(&format!("bare-{n}")))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        client::open_sessions(server.addr, sessions).await?
    };
    let with_streams = held != Held::Sessions;
    let mut streams = Vec::new();
    if with_streams {
        const PARALLEL: usize = 128;
        let mut ids = ids.iter().cloned();
        let mut pending = tokio::task::JoinSet::new();
        loop {
            while pending.len() < PARALLEL {
                let Some(id) = ids.next() else { break };
                pending.spawn(client::open_get_stream(server.addr, id));
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
    Ok(report::MemoryRun {
        sessions: if bare { 0 } else { ids.len() },
        streams: if with_streams { ids.len() } else { 0 },
        rss_before_kib,
        rss_after_kib,
    })
}

fn driver() -> Result<()> {
    let config = Config::from_env()?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let (server_cpu, driver_cpu) = if config.pin && cores >= 2 {
        (Some(0), Some(1))
    } else {
        (None, None)
    };
    if let Some(cpu) = driver_cpu {
        serve::pin_to(cpu)?;
    }
    let scale = scale::from_env()?;
    // Each GET stream is one fd in the driver and one in the server, plus some slack.
    let streams = config.sessions.max(scale.map_or(0, |(_, streams)| streams));
    let fd_limit = raise_fd_limit(streams as u64 + 1024);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut series: Vec<report::Series> = config
            .targets
            .iter()
            .map(|&target| report::Series {
                target,
                samples: Vec::new(),
            })
            .collect();
        for round in 1..=config.rounds {
            for entry in &mut series {
                let target = entry.target;
                let concurrency = match target.workload {
                    Workload::Echo => config.concurrency,
                    Workload::Setup | Workload::Create => config.setup_concurrency,
                };
                let server = Deployment::start(target.server, 1_000_000, server_cpu)?;
                let sample = client::run_cell(
                    &server,
                    target,
                    concurrency,
                    config.warmup,
                    config.duration,
                    config.max_requests,
                )
                .await?;
                eprintln!(
                    "round {round}/{}: {}, {}: {} units, {:.0}/s, {:.2} µs server CPU per unit",
                    config.rounds,
                    target.workload.label(),
                    target.server.label(),
                    sample.units,
                    sample.per_second,
                    sample.server_cpu.as_secs_f64() * 1e6
                );
                if let Some(cluster) = &sample.cluster {
                    eprintln!(
                        "    Redis {:.2} µs and HAProxy {:.2} µs CPU per unit; Redis commands per unit {:.2} ({:.2} EVALSHA)",
                        cluster.redis_cpu.as_secs_f64() * 1e6,
                        cluster.haproxy_cpu.as_secs_f64() * 1e6,
                        cluster.commands.total as f64 / sample.units.max(1) as f64,
                        cluster.commands.of("evalsha") as f64 / sample.units.max(1) as f64,
                    );
                }
                entry.samples.push(sample);
            }
        }
        let mut memory = Vec::new();
        if config.sessions > 0 {
            for held in [Held::Sessions, Held::SessionsWithStreams, Held::BareStreams] {
                let run = memory_run(config.sessions, held, server_cpu).await?;
                eprintln!("memory: {run:?}");
                memory.push(run);
            }
        }
        let scale = match scale {
            Some((sessions, streams)) => {
                let run = scale::run(sessions, streams, server_cpu).await?;
                eprintln!("scale: {run:?}");
                Some(run)
            }
            None => None,
        };
        let placement = match (server_cpu, driver_cpu) {
            (Some(s), Some(d)) => format!("server pinned to core {s}, load generator to core {d}"),
            _ => "unpinned".to_owned(),
        };
        let header = format!(
            "{} interleaved rounds, {} s measured per cell after {} s warm-up; {placement}; \
             actix-web servers on 1 worker, rmcp on 1 tokio thread; echo at concurrency {}, \
             session setup at concurrency {}; server CPU = sum of its threads' schedstat; \
             fd limit {fd_limit}.",
            config.rounds,
            config.duration.as_secs_f64(),
            config.warmup.as_secs_f64(),
            config.concurrency,
            config.setup_concurrency,
        );
        let rows = report::rows(&series);
        if !rows.is_empty() || !memory.is_empty() {
            println!("{}", report::markdown(&rows, &memory, &header));
        }
        if let Some(section) = report::redis_section(&series) {
            println!("{section}");
        }
        if let Some(run) = &scale {
            println!("{}\n{placement}; the server on 1 worker; fd limit {fd_limit}.", run.markdown());
        }
        if rows.is_empty() {
            return Ok(());
        }
        let caption = format!(
            "actix-mcp vs rmcp: server CPU per unit relative to a bare actix-web handler ({} rounds, pinned)",
            config.rounds
        );
        if let Some(parent) = config.svg.parent() {
            std::fs::create_dir_all(parent)?;
        }
        report::svg(&rows, &config.svg, &caption)?;
        eprintln!("chart written to {}", config.svg.display());
        Ok(())
    })
}
