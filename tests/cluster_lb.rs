//! Three `examples/http_server` processes sharing their sessions on Redis, behind HAProxy
//! balancing every request round robin with no stickiness (Debian's `redis-server` and
//! `haproxy`, which `scripts/test-all.sh` installs when missing): consecutive requests of one
//! session land on different nodes; and a bounded chaos run kills and restarts nodes while
//! clients run sessions through the balancer, checking that every request got an answer or a
//! clear error, that no session was lost, and that nothing is left in Redis at the end.
//!
//! Loopback only; every loop is bounded.
#![cfg(all(feature = "client", feature = "redis"))]
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::pipe::example_binary;
use common::redis::RedisServer;

const KEY: &str = "6b1d7a0e3c5f9a2b4d6e8f0a1c3e5a7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} did not start on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A node: `http_server --redis` on its own port.
struct Node {
    port: u16,
    child: Option<Child>,
}

impl Node {
    fn start(port: u16, redis: &RedisServer) -> Self {
        let child = Command::new(example_binary("http_server"))
            .args(["--port", &port.to_string(), "--workers", "1"])
            .args(["--redis", &redis.url(), "--state-key", KEY])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_port(port, "a node");
        Self {
            port,
            child: Some(child),
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// HAProxy in front of `ports`: every request to the next node, `X-Mcp-Node` naming it.
struct Balancer {
    port: u16,
    child: Child,
    dir: PathBuf,
}

impl Balancer {
    fn start(ports: &[u16]) -> Self {
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("actix-mcp-haproxy-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let servers: String = ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                format!("  server node{i} 127.0.0.1:{p} check inter 200ms fall 1 rise 1\n")
            })
            .collect();
        let config = format!(
            "global\n  maxconn 4000\ndefaults\n  mode http\n  timeout connect 2s\n  \
             timeout client 60s\n  timeout server 60s\n  option redispatch\n  retries 3\n\
             frontend mcp\n  bind 127.0.0.1:{port}\n  default_backend nodes\n\
             backend nodes\n  balance roundrobin\n  http-response set-header X-Mcp-Node %s\n{servers}"
        );
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config).unwrap();
        let binary = if std::path::Path::new("/usr/sbin/haproxy").exists() {
            PathBuf::from("/usr/sbin/haproxy")
        } else {
            PathBuf::from("haproxy")
        };
        let child = Command::new(binary)
            .arg("-f")
            .arg(&path)
            .arg("-db")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| {
                panic!("could not start haproxy ({err}); install it (Debian: apt-get install haproxy), as scripts/test-all.sh does")
            });
        wait_port(port, "haproxy");
        Self { port, child, dir }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What one POST got.
#[derive(Debug)]
enum Outcome {
    /// A JSON-RPC answer (the response to the request, or nothing for a notification), the
    /// node that served it, the session id header.
    Answered {
        status: u16,
        node: Option<String>,
        session: Option<String>,
        response: Option<Value>,
    },
    /// No answer: the connection failed or ended (a node killed under the request).
    Failed(#[allow(dead_code, reason = "shown in a failing assertion's debug output")] String),
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn post(client: &reqwest::Client, url: &str, session: Option<&str>, body: Value) -> Outcome {
    let mut request = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(body.to_string());
    if let Some(session) = session {
        request = request.header("Mcp-Session-Id", session);
    }
    let response = match request.send().await {
        Ok(response) => response,
        Err(err) => return Outcome::Failed(err.to_string()),
    };
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let node = header("x-mcp-node");
    let session = header("mcp-session-id");
    let text = match response.text().await {
        Ok(text) => text,
        Err(err) => return Outcome::Failed(format!("body: {err}")),
    };
    let id = body.get("id").cloned();
    let response = match &id {
        None => None,
        Some(id) => text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .chain(std::iter::once(text.trim()))
            .filter_map(|json| serde_json::from_str::<Value>(json).ok())
            .find(|message| message.get("id") == Some(id)),
    };
    Outcome::Answered {
        status,
        node,
        session,
        response,
    }
}

fn initialize(id: u64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "cluster-test", "version": "1"},
        },
    })
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

#[actix_web::test]
async fn consecutive_requests_of_a_session_land_on_different_nodes() {
    let redis = RedisServer::start();
    let nodes: Vec<Node> = (0..3).map(|_| Node::start(free_port(), &redis)).collect();
    let balancer = Balancer::start(&nodes.iter().map(|n| n.port).collect::<Vec<_>>());
    let client = http();
    let url = balancer.url();
    let Outcome::Answered {
        status, session, ..
    } = post(&client, &url, None, initialize(0)).await
    else {
        panic!("initialize failed");
    };
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    post(
        &client,
        &url,
        Some(&session),
        serde_json::from_str(INITIALIZED).unwrap(),
    )
    .await;
    let mut served_by = Vec::new();
    for id in 1..=9 {
        let outcome = post(
            &client,
            &url,
            Some(&session),
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"message": format!("m{id}")}}}),
        )
        .await;
        let Outcome::Answered {
            status,
            node,
            response,
            ..
        } = outcome
        else {
            panic!("request {id} failed: {outcome:?}");
        };
        assert_eq!(status, 200);
        let response = response.expect("a response");
        assert_eq!(response["result"]["content"][0]["text"], format!("m{id}"));
        served_by.push(node.expect("haproxy names the node"));
    }
    assert!(
        served_by.windows(2).all(|pair| pair[0] != pair[1]),
        "consecutive requests on the same node: {served_by:?}"
    );
    let distinct: HashSet<_> = served_by.iter().collect();
    assert_eq!(distinct.len(), 3, "{served_by:?}");
    drop(balancer);
    drop(nodes);
}

/// Counts of the chaos run.
#[derive(Default)]
struct Tally {
    answered: AtomicUsize,
    clear_errors: AtomicUsize,
    failed_connections: AtomicUsize,
    lost_sessions: AtomicUsize,
    wrong_answers: AtomicUsize,
    sessions: AtomicUsize,
    cut_initializes: AtomicUsize,
}

#[actix_web::test]
async fn chaos_a_node_killed_and_restarted_loses_nothing_else() {
    let redis = RedisServer::start();
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let mut nodes: Vec<Node> = ports.iter().map(|&p| Node::start(p, &redis)).collect();
    let balancer = Balancer::start(&ports);
    let url = balancer.url();
    let tally = Arc::new(Tally::default());
    let run_for = Duration::from_secs(16);
    let started = Instant::now();
    let mut clients = Vec::new();
    for worker in 0..8u64 {
        let (url, tally) = (url.clone(), tally.clone());
        clients.push(tokio::spawn(async move {
            let client = http();
            let mut statuses: HashMap<u16, usize> = HashMap::new();
            let mut round = 0u64;
            while started.elapsed() < run_for {
                round += 1;
                let Some(session) = open(&client, &url, &tally).await else {
                    continue;
                };
                tally.sessions.fetch_add(1, Ordering::Relaxed);
                for step in 0..6u64 {
                    let id = round * 100 + step + 1;
                    let text = format!("w{worker}-{id}");
                    let outcome = post(
                        &client,
                        &url,
                        Some(&session),
                        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"message": text}}}),
                    )
                    .await;
                    judge(&tally, &outcome, |response| {
                        response["result"]["content"][0]["text"] == text.as_str()
                    });
                    if let Outcome::Answered { status, .. } = outcome {
                        *statuses.entry(status).or_default() += 1;
                    }
                }
                // The session ends everywhere; retried while the node that got it was killed
                // under it (a DELETE is idempotent: 404 after a lost answer means it went).
                let mut deleted = false;
                for _ in 0..10 {
                    match client
                        .delete(&url)
                        .header("Mcp-Session-Id", &session)
                        .header("MCP-Protocol-Version", "2025-11-25")
                        .send()
                        .await
                    {
                        Ok(response) if response.status() == 200 => {
                            deleted = true;
                            break;
                        }
                        Ok(response) if response.status() == 404 => {
                            deleted = true;
                            break;
                        }
                        _ => tokio::time::sleep(Duration::from_millis(100)).await,
                    }
                }
                assert!(deleted, "a session could not be deleted");
            }
            statuses
        }));
    }
    // The chaos: node 1 killed at 3 s and back at 7 s; node 2 killed at 9 s and back at 12 s.
    let at = |secs| started + Duration::from_secs(secs);
    tokio::time::sleep_until(at(3).into()).await;
    nodes[1].kill();
    tokio::time::sleep_until(at(7).into()).await;
    nodes[1] = Node::start(ports[1], &redis);
    tokio::time::sleep_until(at(9).into()).await;
    nodes[2].kill();
    tokio::time::sleep_until(at(12).into()).await;
    nodes[2] = Node::start(ports[2], &redis);
    for client in clients {
        client.await.unwrap();
    }
    let answered = tally.answered.load(Ordering::Relaxed);
    let clear = tally.clear_errors.load(Ordering::Relaxed);
    let failed = tally.failed_connections.load(Ordering::Relaxed);
    let lost = tally.lost_sessions.load(Ordering::Relaxed);
    let wrong = tally.wrong_answers.load(Ordering::Relaxed);
    println!(
        "chaos: {} sessions, {answered} answered, {clear} clear errors (5xx), {failed} connections \
         cut, {lost} sessions lost, {wrong} wrong answers",
        tally.sessions.load(Ordering::Relaxed)
    );
    assert_eq!(lost, 0, "sessions were lost");
    assert_eq!(wrong, 0, "wrong answers");
    assert!(answered > 100, "too little was served: {answered}");
    // Every session the clients got was deleted. What is left in Redis can only be the record
    // of a session whose `initialize` answer was cut (the client never learnt its id), and
    // events written behind as their session went: every such key expires by itself.
    let keys: Vec<String> = redis
        .command("KEYS mcp:*")
        .lines()
        .filter(|line| !line.starts_with('*') && !line.starts_with('$'))
        .map(str::to_owned)
        .collect();
    let records = keys.iter().filter(|key| key.ends_with(":session")).count();
    let cut = tally.cut_initializes.load(Ordering::Relaxed);
    println!(
        "chaos: {} keys left in redis, {records} session records, {cut} cut initializes",
        keys.len()
    );
    assert!(
        records <= cut,
        "{records} session records outlived their DELETE: {keys:?}"
    );
    for key in keys.iter().filter(|key| *key != "mcp:sessions") {
        let ttl = redis.command(&format!("PTTL {key}"));
        let ttl: i64 = ttl.trim().trim_start_matches(':').parse().unwrap();
        assert!(ttl > 0 || ttl == -2, "{key} has no time to live ({ttl})");
    }
    drop(balancer);
    drop(nodes);
}

/// Opens a session through the balancer; `None` when the attempt failed (counted).
async fn open(client: &reqwest::Client, url: &str, tally: &Tally) -> Option<String> {
    let outcome = post(client, url, None, initialize(0)).await;
    judge(tally, &outcome, |response| response.get("result").is_some());
    if matches!(
        outcome,
        Outcome::Failed(_) | Outcome::Answered { response: None, .. }
    ) {
        tally.cut_initializes.fetch_add(1, Ordering::Relaxed);
    }
    let Outcome::Answered {
        status: 200,
        session: Some(session),
        ..
    } = outcome
    else {
        tokio::time::sleep(Duration::from_millis(50)).await;
        return None;
    };
    let initialized = post(
        client,
        url,
        Some(&session),
        serde_json::from_str(INITIALIZED).unwrap(),
    )
    .await;
    if let Outcome::Answered { status: 404, .. } = initialized {
        tally.lost_sessions.fetch_add(1, Ordering::Relaxed);
    }
    Some(session)
}

/// Counts one outcome: an answer (checked by `right`), a clear error (a 5xx status), a cut
/// connection, or a lost session (404 for a session that was never deleted).
fn judge(tally: &Tally, outcome: &Outcome, right: impl Fn(&Value) -> bool) {
    match outcome {
        Outcome::Answered {
            status: 200,
            response: Some(response),
            ..
        } => {
            if right(response) {
                tally.answered.fetch_add(1, Ordering::Relaxed);
            } else if response.get("error").is_some() {
                tally.clear_errors.fetch_add(1, Ordering::Relaxed);
            } else {
                tally.wrong_answers.fetch_add(1, Ordering::Relaxed);
            }
        }
        Outcome::Answered { status: 404, .. } => {
            tally.lost_sessions.fetch_add(1, Ordering::Relaxed);
        }
        Outcome::Answered { status, .. } if *status >= 500 => {
            tally.clear_errors.fetch_add(1, Ordering::Relaxed);
        }
        // A 200 whose stream ended before the response: the node died under the request.
        Outcome::Answered {
            status: 200,
            response: None,
            ..
        }
        | Outcome::Failed(_) => {
            tally.failed_connections.fetch_add(1, Ordering::Relaxed);
        }
        Outcome::Answered { .. } => {
            tally.wrong_answers.fetch_add(1, Ordering::Relaxed);
        }
    }
}
