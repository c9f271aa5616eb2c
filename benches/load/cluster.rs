//! The load benchmark's Redis mode: a redis-server of its own (a temporary directory, no
//! persistence, a free loopback port), two `--serve-mcp sse --redis URL` nodes sharing their
//! sessions on it, and HAProxy in front balancing every request round robin with no
//! stickiness (as `tests/cluster/env.sh` does), all on the servers' core; and the readings of
//! Redis's command counters (`INFO commandstats`, `INFO stats`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{Result, STEP_TIMEOUT, ServerKind, ServerProcess, client};

/// How many nodes the Redis mode runs behind HAProxy.
pub(super) const NODES: usize = 2;

/// Finds `name` on `PATH`, or in the sbin directories (HAProxy lives in `/usr/sbin`, which is
/// not on every user's `PATH`).
pub(super) fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Why the Redis mode cannot run on this machine, if it cannot.
pub(super) fn missing_programs() -> Option<String> {
    let missing: Vec<&str> = ["redis-server", "haproxy"]
        .into_iter()
        .filter(|name| find_program(name).is_none())
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} not found (Debian: apt-get install {})",
            missing.join(" and "),
            missing.join(" ")
        )
    })
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

/// A directory of its own under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self> {
        let dir = std::env::temp_dir().join(format!(
            "actix-mcp-load-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir)?;
        Ok(Self(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// redis-server or HAProxy, started through `--exec-pinned` (so it runs on the servers' core
/// and dies with the driver); killed when dropped, also while unwinding from a panic.
struct Aux {
    child: Child,
    what: &'static str,
    log: PathBuf,
}

impl Aux {
    fn spawn(
        what: &'static str,
        program: &Path,
        args: &[String],
        cpu: Option<usize>,
        log: PathBuf,
    ) -> Result<Self> {
        let out = File::create(&log)?;
        let child = Command::new(std::env::current_exe()?)
            .arg("--exec-pinned")
            .arg(cpu.map_or_else(|| "-".to_owned(), |cpu| cpu.to_string()))
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()?;
        Ok(Self { child, what, log })
    }

    /// Waits until `port` accepts connections; fails if the process exits first.
    fn wait_for(&mut self, port: u16) -> Result<()> {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Err(self.failed(&format!("exited with {status}")));
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(self.failed(&format!("did not listen on port {port}")));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn failed(&self, why: &str) -> super::BoxError {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!("{} {why}; its output:\n{}", self.what, tail.join("\n")).into()
    }

    fn cpu_ns(&self) -> Result<u64> {
        client::cpu_ns(&self.child.id().to_string())
    }
}

impl Drop for Aux {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Redis mode's deployment. Fields drop in order: HAProxy, the nodes, Redis, the
/// directory.
pub(super) struct RedisCluster {
    haproxy: Aux,
    nodes: Vec<ServerProcess>,
    redis: Aux,
    redis_port: u16,
    /// HAProxy's address: where the clients connect.
    pub(super) addr: SocketAddr,
    _dir: TempDir,
}

impl RedisCluster {
    /// Starts Redis, [`NODES`] nodes on it (with a session lease of `lease_ms` when given) and
    /// HAProxy in front, all on `cpu`; with `requests_on_node`, the nodes keep requests'
    /// streams in their memory.
    pub(super) fn start(
        max_sessions: usize,
        cpu: Option<usize>,
        lease_ms: Option<u64>,
        requests_on_node: bool,
    ) -> Result<Self> {
        let dir = TempDir::new()?;
        let redis_server = find_program("redis-server").ok_or("redis-server not found")?;
        let haproxy = find_program("haproxy").ok_or("haproxy not found")?;
        let redis_port = free_port()?;
        let redis_args: Vec<String> = vec![
            "--port".to_owned(),
            redis_port.to_string(),
            "--bind".to_owned(),
            "127.0.0.1".to_owned(),
            "--save".to_owned(),
            String::new(),
            "--appendonly".to_owned(),
            "no".to_owned(),
            "--dir".to_owned(),
            dir.0.to_string_lossy().into_owned(),
        ];
        let mut redis = Aux::spawn(
            "redis-server",
            &redis_server,
            &redis_args,
            cpu,
            dir.0.join("redis.log"),
        )?;
        redis.wait_for(redis_port)?;
        let url = format!("redis://127.0.0.1:{redis_port}");
        let mut nodes = Vec::with_capacity(NODES);
        for _ in 0..NODES {
            let mut args = ServerKind::Sse.args(max_sessions);
            args.extend(["--redis".to_owned(), url.clone()]);
            if let Some(lease) = lease_ms {
                args.extend(["--session-lease".to_owned(), lease.to_string()]);
            }
            if requests_on_node {
                args.push("--request-streams-on-node".to_owned());
            }
            nodes.push(ServerProcess::spawn(args, cpu)?);
        }
        let lb_port = free_port()?;
        let servers: String = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| format!("  server node{i} {}\n", node.addr))
            .collect();
        // One thread, like the nodes' one worker each; keep-alive on both sides; every
        // request to the next node (HTTP mode balances each request, not each connection).
        let config = format!(
            "global\n  maxconn 1000\n  nbthread 1\n\
             defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\n\
             frontend mcp\n  bind 127.0.0.1:{lb_port}\n  default_backend nodes\n\
             backend nodes\n  balance roundrobin\n{servers}"
        );
        let config_path = dir.0.join("haproxy.cfg");
        std::fs::write(&config_path, config)?;
        let mut haproxy = Aux::spawn(
            "haproxy",
            &haproxy,
            &[
                "-f".to_owned(),
                config_path.to_string_lossy().into_owned(),
                "-db".to_owned(),
            ],
            cpu,
            dir.0.join("haproxy.log"),
        )?;
        haproxy.wait_for(lb_port)?;
        Ok(Self {
            haproxy,
            nodes,
            redis,
            redis_port,
            addr: SocketAddr::from(([127, 0, 0, 1], lb_port)),
            _dir: dir,
        })
    }

    /// Nanoseconds the nodes' threads have spent on a CPU, summed.
    pub(super) fn nodes_cpu_ns(&self) -> Result<u64> {
        self.nodes.iter().map(ServerProcess::cpu_ns).sum()
    }

    /// Nanoseconds redis-server's threads have spent on a CPU.
    pub(super) fn redis_cpu_ns(&self) -> Result<u64> {
        self.redis.cpu_ns()
    }

    /// Nanoseconds HAProxy's threads have spent on a CPU.
    pub(super) fn haproxy_cpu_ns(&self) -> Result<u64> {
        self.haproxy.cpu_ns()
    }

    /// Redis's command counters now.
    pub(super) fn counters(&self) -> Result<Counters> {
        Counters::read(self.redis_port)
    }
}

/// Redis's command counters: `total_commands_processed` and each command's `calls`.
#[derive(Debug, Clone, Default)]
pub(super) struct Counters {
    total: u64,
    calls: BTreeMap<String, u64>,
}

/// The commands Redis ran between two readings, without the readings' own `INFO`s.
#[derive(Debug, Clone, Default)]
pub(super) struct Commands {
    /// `total_commands_processed` over the window.
    pub(super) total: u64,
    /// Each command's calls over the window (lower-case names, subcommands as `cmd|sub`).
    pub(super) calls: BTreeMap<String, u64>,
}

impl Commands {
    /// Calls of `command` (lower case).
    pub(super) fn of(&self, command: &str) -> u64 {
        self.calls.get(command).copied().unwrap_or(0)
    }
}

impl Counters {
    /// `INFO commandstats` and `INFO stats` from the Redis server on `port`, in one pipeline.
    fn read(port: u16) -> Result<Self> {
        let mut stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(STEP_TIMEOUT))?;
        stream.write_all(b"INFO commandstats\r\nINFO stats\r\n")?;
        let mut reader = BufReader::new(stream);
        let commandstats = read_bulk(&mut reader)?;
        let stats = read_bulk(&mut reader)?;
        let mut counters = Self::default();
        for line in commandstats.lines() {
            // cmdstat_getex:calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,failed_calls=0
            let Some((name, fields)) = line
                .strip_prefix("cmdstat_")
                .and_then(|l| l.split_once(':'))
            else {
                continue;
            };
            let calls = fields
                .split(',')
                .find_map(|field| field.strip_prefix("calls="))
                .ok_or_else(|| format!("no calls in {line:?}"))?
                .parse()?;
            counters.calls.insert(name.to_owned(), calls);
        }
        counters.total = stats
            .lines()
            .find_map(|line| line.strip_prefix("total_commands_processed:"))
            .ok_or("no total_commands_processed in INFO stats")?
            .trim()
            .parse()?;
        Ok(counters)
    }

    /// What ran between `self` (before) and `after`.
    pub(super) fn since(&self, after: &Self) -> Commands {
        let mut calls: BTreeMap<String, u64> = after
            .calls
            .iter()
            .map(|(name, &n)| {
                let before = self.calls.get(name).copied().unwrap_or(0);
                (name.clone(), n.saturating_sub(before))
            })
            .filter(|&(_, n)| n > 0)
            .collect();
        let info = calls.remove("info").unwrap_or(0);
        Commands {
            total: after.total.saturating_sub(self.total).saturating_sub(info),
            calls,
        }
    }
}

/// One RESP bulk string (`$<len>\r\n<bytes>\r\n`), as text.
fn read_bulk(reader: &mut BufReader<TcpStream>) -> Result<String> {
    let mut head = String::new();
    reader.read_line(&mut head)?;
    let len: usize = head
        .strip_prefix('$')
        .ok_or_else(|| format!("unexpected Redis reply {head:?}"))?
        .trim()
        .parse()?;
    let mut body = vec![0; len + 2];
    reader.read_exact(&mut body)?;
    body.truncate(len);
    Ok(String::from_utf8(body)?)
}
