//! Redis deployments of the test's own, on free loopback ports in a temporary directory, with
//! no persistence, every process killed when dropped: a Redis Cluster of three masters and
//! three replicas, and a master with a replica watched by three Sentinels (`redis-server
//! --sentinel`: Debian's `redis-server` package is enough).
//!
//! `scripts/test-all.sh` installs `redis-server` (and `redis-cli`, which creates the cluster)
//! when they are missing; a test that needs them and does not find them fails, saying so.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a deployment may take to form, or to fail over.
const FORM: Duration = Duration::from_secs(30);

fn free_port() -> u16 {
    free_ports(1)[0]
}

/// `n` distinct free ports, each with its cluster bus port (10000 more) free too: all held
/// until every one is found, so no two are the same.
fn free_ports(n: usize) -> Vec<u16> {
    let mut held = Vec::new();
    let mut ports = Vec::new();
    for _ in 0..1000 {
        if ports.len() == n {
            break;
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let Some(bus) = port.checked_add(10_000) else {
            continue;
        };
        if let Ok(bus) = std::net::TcpListener::bind(("127.0.0.1", bus)) {
            ports.push(port);
            held.push(listener);
            held.push(bus);
        }
    }
    assert_eq!(ports.len(), n, "not enough free ports");
    ports
}

fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "actix-mcp-{what}-{}-{}",
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The directory of the server on `port`, in `dir`: each server has one of its own. A replica
/// receives its master's data into `dump.rdb` there and loads it from that file, so replicas
/// syncing at once in one directory could each load another's.
fn server_dir(dir: &Path, port: u16) -> PathBuf {
    let own = dir.join(port.to_string());
    std::fs::create_dir_all(&own).unwrap();
    own
}

/// Starts `redis-server ARGS`, its output in `log`.
fn spawn(args: &[&str], log: &Path) -> Child {
    let log = std::fs::File::create(log).unwrap();
    let mut command = Command::new("redis-server");
    command.args(args).stdout(log).stderr(Stdio::null());
    super::redis::run(&mut command, "redis-server")
}

/// Sends `commands` (inline syntax) on one connection to `port` and returns the raw replies;
/// an empty string when the server does not answer (it is down).
pub fn command_on(port: u16, commands: &[&str]) -> String {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut text = String::new();
    for command in commands {
        text.push_str(command);
        text.push_str("\r\n");
    }
    if stream.write_all(text.as_bytes()).is_err() {
        return String::new();
    }
    let mut reply = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    // Until the server has said all (a pause of the read timeout), bounded.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                reply.extend_from_slice(&chunk[..n]);
                if complete(&reply, commands.len()) {
                    break;
                }
            }
        }
    }
    String::from_utf8_lossy(&reply).into_owned()
}

/// Whether `reply` holds (at least) `count` whole RESP replies, as far as a test needs: a
/// simple line each, or a bulk string whose length is known.
fn complete(reply: &[u8], count: usize) -> bool {
    let mut at = 0;
    for _ in 0..count {
        let Some(end) = find_crlf(reply, at) else {
            return false;
        };
        let line = &reply[at..end];
        at = end + 2;
        if line.first() == Some(&b'$') {
            let Ok(len) = std::str::from_utf8(&line[1..])
                .unwrap_or("x")
                .parse::<i64>()
            else {
                return false;
            };
            if len >= 0 {
                at += usize::try_from(len).unwrap_or(0) + 2;
                if at > reply.len() {
                    return false;
                }
            }
        } else if line.first() == Some(&b'*') {
            // Arrays: wait for the read timeout instead.
            return false;
        }
    }
    true
}

fn find_crlf(bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(2)
        .position(|pair| pair == b"\r\n")
        .map(|at| from + at)
}

/// Whether every replica of the master on `port` has all it wrote (their replication offsets
/// are the master's), and it has at least one.
pub fn replicas_in_sync(port: u16) -> bool {
    let info = command_on(port, &["INFO replication"]);
    let Some(offset) = info
        .lines()
        .find_map(|line| line.strip_prefix("master_repl_offset:"))
    else {
        return false;
    };
    let replicas: Vec<&str> = info
        .lines()
        .filter(|line| line.starts_with("slave") && line.contains("offset="))
        .collect();
    !replicas.is_empty()
        && replicas.iter().all(|line| {
            line.split(',')
                .any(|field| field.strip_prefix("offset=") == Some(offset.trim()))
        })
}

/// Waits (at most `within`) until `ready` holds, else fails saying `what`.
fn wait_until(what: &str, within: Duration, ready: impl FnMut() -> bool) {
    assert!(wait_for(within, ready), "{what}: not within {within:?}");
}

/// Waits (at most `within`) until `ready` holds; whether it did.
fn wait_for(within: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while !ready() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    true
}

fn wait_answers(port: u16) {
    wait_until(
        &format!("redis-server on {port} answers"),
        Duration::from_secs(10),
        || command_on(port, &["PING"]).starts_with("+PONG"),
    );
}

/// A `redis-server` process of a deployment.
struct Process {
    child: Child,
    port: u16,
}

fn kill_all(processes: &mut [Process], dir: &Path) {
    for process in processes {
        let _ = process.child.kill();
        let _ = process.child.wait();
    }
    if std::thread::panicking() {
        // The servers' logs, for whoever reads the failure.
        eprintln!("redis logs kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A Redis Cluster of three masters, each with a replica, failing over within a second or two
/// (`cluster-node-timeout` 1000).
pub struct RedisCluster {
    nodes: Vec<Process>,
    dir: PathBuf,
}

impl RedisCluster {
    /// Starts six nodes, makes them a cluster, and waits until every node says it is `ok`.
    pub fn start() -> Self {
        let dir = temp_dir("redis-cluster");
        let mut nodes = Vec::new();
        for port in free_ports(6) {
            let own = server_dir(&dir, port);
            let config = own.join("nodes.conf");
            let child = spawn(
                &[
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    config.to_str().unwrap(),
                    "--cluster-node-timeout",
                    "1000",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    own.to_str().unwrap(),
                ],
                &dir.join(format!("{port}.log")),
            );
            nodes.push(Process { child, port });
        }
        let cluster = Self { nodes, dir };
        for node in &cluster.nodes {
            wait_answers(node.port);
        }
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for node in &cluster.nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        create
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut created = super::redis::run(&mut create, "redis-cli");
        let deadline = Instant::now() + FORM;
        let status = loop {
            if let Some(status) = created.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = created.kill();
                panic!("redis-cli --cluster create did not end within {FORM:?}");
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(status.success(), "redis-cli --cluster create failed");
        cluster.wait_ok(&[]);
        cluster
    }

    /// `redis://127.0.0.1:<port>` of each node.
    pub fn urls(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|node| format!("redis://127.0.0.1:{}", node.port))
            .collect()
    }

    /// Sends commands to the node on `port` (see [`command_on`]).
    pub fn command(&self, port: u16, commands: &[&str]) -> String {
        command_on(port, commands)
    }

    /// The port of a node still running.
    fn live(&self, except: &[u16]) -> u16 {
        self.nodes
            .iter()
            .map(|node| node.port)
            .find(|port| !except.contains(port))
            .unwrap()
    }

    /// Waits until every node but `dead` says the cluster is `ok`, and agrees on who serves
    /// every slot.
    fn wait_ok(&self, dead: &[u16]) {
        for node in self.nodes.iter().filter(|node| !dead.contains(&node.port)) {
            wait_until(&format!("the cluster is ok on {}", node.port), FORM, || {
                command_on(node.port, &["CLUSTER INFO"]).contains("cluster_state:ok")
            });
        }
    }

    /// The port of the master serving `key`'s slot, as a live node (not in `dead`) sees it.
    pub fn master_of(&self, key: &str, dead: &[u16]) -> u16 {
        self.try_master_of(key, dead)
            .unwrap_or_else(|| panic!("no master serves the slot of {key}"))
    }

    /// The port of the master serving `key`'s slot and not failing, as a live node (not in
    /// `dead`) sees it; `None` when there is none (during a failover).
    fn try_master_of(&self, key: &str, dead: &[u16]) -> Option<u16> {
        let live = self.live(dead);
        let slot: u16 = command_on(live, &[&format!("CLUSTER KEYSLOT {key}")])
            .trim()
            .trim_start_matches(':')
            .parse()
            .unwrap();
        let nodes = command_on(live, &["CLUSTER NODES"]);
        for line in nodes.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            if fields.len() < 9 || !fields[2].contains("master") || fields[2].contains("fail") {
                continue;
            }
            let serves = fields[8..].iter().any(|range| {
                let (from, to) = range.split_once('-').unwrap_or((range, range));
                matches!((from.parse::<u16>(), to.parse::<u16>()), (Ok(from), Ok(to)) if from <= slot && slot <= to)
            });
            if serves {
                let address = fields[1].split('@').next().unwrap();
                return address.rsplit(':').next().unwrap().parse().ok();
            }
        }
        None
    }

    /// Kills (SIGKILL) the node on `port`.
    pub fn kill(&mut self, port: u16) {
        let node = self
            .nodes
            .iter_mut()
            .find(|node| node.port == port)
            .unwrap();
        node.child.kill().unwrap();
        node.child.wait().unwrap();
    }

    /// Waits until a replica has taken over `key`'s slot from the killed master on `dead`,
    /// and every live node says the cluster is `ok`; returns the new master's port.
    pub fn wait_failover(&self, key: &str, dead: u16) -> u16 {
        let mut master = dead;
        wait_until("a replica takes over", FORM, || {
            master = self.try_master_of(key, &[dead]).unwrap_or(dead);
            master != dead
        });
        self.wait_ok(&[dead]);
        master
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        kill_all(&mut self.nodes, &self.dir);
    }
}

/// A master and its replica, watched by three Sentinels under the name [`MASTER`], which fail
/// it over a second after it goes (`down-after-milliseconds` 1000, quorum 2).
pub struct RedisSentinels {
    /// The master, then the replica, then the Sentinels.
    processes: Vec<Process>,
    dir: PathBuf,
}

/// The name the Sentinels know the master by.
pub const MASTER: &str = "mcp-master";

impl RedisSentinels {
    /// Starts the master, the replica and the Sentinels, and waits until the replica is in
    /// sync and every Sentinel knows the replica and the other Sentinels.
    pub fn start() -> Self {
        let dir = temp_dir("redis-sentinel");
        let ports = free_ports(5);
        let (master, replica) = (ports[0], ports[1]);
        let mut processes = Vec::new();
        for (port, replica_of) in [(master, None), (replica, Some(master))] {
            let port_text = port.to_string();
            let own = server_dir(&dir, port);
            let mut args = vec![
                "--port",
                &port_text,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                own.to_str().unwrap(),
            ];
            let of = replica_of.map(|master| format!("127.0.0.1 {master}"));
            if let Some(of) = &of {
                args.extend(["--replicaof", of]);
            }
            let child = spawn(&args, &dir.join(format!("{port}.log")));
            processes.push(Process { child, port });
            wait_answers(port);
        }
        for &port in &ports[2..] {
            let config = dir.join(format!("sentinel-{port}.conf"));
            std::fs::write(
                &config,
                format!(
                    "port {port}\nbind 127.0.0.1\ndir {}\n\
                     sentinel monitor {MASTER} 127.0.0.1 {master} 2\n\
                     sentinel down-after-milliseconds {MASTER} 1000\n\
                     sentinel failover-timeout {MASTER} 3000\n\
                     sentinel parallel-syncs {MASTER} 1\n",
                    dir.display()
                ),
            )
            .unwrap();
            let child = spawn(
                &[config.to_str().unwrap(), "--sentinel"],
                &dir.join(format!("{port}.log")),
            );
            processes.push(Process { child, port });
            wait_answers(port);
        }
        let sentinels = Self { processes, dir };
        let synced = wait_for(FORM, || {
            command_on(replica, &["INFO replication"]).contains("master_link_status:up")
        });
        assert!(
            synced,
            "the replica is not in sync within {FORM:?}; its log:\n{}",
            std::fs::read_to_string(sentinels.dir.join(format!("{replica}.log")))
                .unwrap_or_default()
        );
        for sentinel in sentinels.sentinel_ports() {
            wait_until(
                &format!("sentinel {sentinel} knows the replica and the other sentinels"),
                FORM,
                || {
                    command_on(sentinel, &[&format!("SENTINEL REPLICAS {MASTER}")])
                        .starts_with("*1")
                        && command_on(sentinel, &[&format!("SENTINEL SENTINELS {MASTER}")])
                            .starts_with("*2")
                },
            );
        }
        sentinels
    }

    fn sentinel_ports(&self) -> Vec<u16> {
        self.processes[2..].iter().map(|p| p.port).collect()
    }

    /// `redis://127.0.0.1:<port>` of each Sentinel.
    pub fn urls(&self) -> Vec<String> {
        self.sentinel_ports()
            .iter()
            .map(|port| format!("redis://127.0.0.1:{port}"))
            .collect()
    }

    /// The master's port (at start).
    pub fn master(&self) -> u16 {
        self.processes[0].port
    }

    /// The replica's port (at start).
    pub fn replica(&self) -> u16 {
        self.processes[1].port
    }

    /// Kills (SIGKILL) the master.
    pub fn kill_master(&mut self) {
        let master = &mut self.processes[0];
        master.child.kill().unwrap();
        master.child.wait().unwrap();
    }

    /// Waits until every Sentinel names the replica as the master, and the replica says it is
    /// one.
    pub fn wait_promoted(&self) {
        let replica = self.replica().to_string();
        for sentinel in self.sentinel_ports() {
            wait_until("the sentinels promote the replica", FORM, || {
                command_on(
                    sentinel,
                    &[&format!("SENTINEL GET-MASTER-ADDR-BY-NAME {MASTER}")],
                )
                .contains(&replica)
            });
        }
        wait_until("the replica is the master", FORM, || {
            command_on(self.replica(), &["ROLE"]).contains("master")
        });
    }
}

impl Drop for RedisSentinels {
    fn drop(&mut self) {
        kill_all(&mut self.processes, &self.dir);
    }
}
