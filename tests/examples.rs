//! Every example runs: the self-checking ones to completion (each drives its own server and
//! exits 0 only when the behaviour it shows held), the servers under a client of ours.
//! One module per example under `tests/examples/`.
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::process::Stdio;

use tokio::process::{Child, Command};

use common::{WAIT, within_for};

/// Runs an example with `args` and returns its stdout. The wait ends when the process exits;
/// it is capped at four [`WAIT`](common::WAIT)s (a whole process, from start to exit, is more
/// than a step), past which the child is killed (on drop).
#[cfg_attr(not(feature = "client"), allow(dead_code))]
async fn run(name: &str, args: &[&str]) -> String {
    let child = Command::new(common::pipe::example_binary(name))
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = within_for(WAIT * 4, child.wait_with_output())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{name} failed ({}):\n{stdout}",
        output.status
    );
    stdout
}

/// An example server listening on a free loopback port, killed on drop.
struct Served {
    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    url: String,
    _child: Child,
}

/// Starts the example `name` with `args`, in which `{port}` stands for a free loopback port,
/// and waits until it accepts connections on that port.
async fn serve(name: &str, args: &[&str]) -> Served {
    let port = common::pipe::free_port();
    let args: Vec<String> = args
        .iter()
        .map(|arg| arg.replace("{port}", &port.to_string()))
        .collect();
    let child = Command::new(common::pipe::example_binary(name))
        .args(&args)
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    common::pipe::listening(port).await;
    Served {
        url: format!("http://127.0.0.1:{port}/mcp"),
        _child: child,
    }
}

#[cfg(feature = "client")]
#[path = "examples/features.rs"]
mod features;

#[cfg(feature = "client")]
#[path = "examples/progress_and_cancel.rs"]
mod progress_and_cancel;

#[path = "examples/tasks.rs"]
mod tasks;

#[cfg(feature = "client-http")]
#[path = "examples/auth.rs"]
mod auth;

#[cfg(all(feature = "redis", feature = "client-http"))]
#[path = "examples/cluster.rs"]
mod cluster;

#[cfg(all(feature = "otel", feature = "client"))]
#[path = "examples/tracing.rs"]
mod tracing_example;

#[cfg(feature = "client-http")]
#[path = "examples/hello.rs"]
mod hello;

#[cfg(feature = "client-http")]
#[path = "examples/apps.rs"]
mod apps;

#[cfg(all(feature = "client-http", feature = "skills"))]
#[path = "examples/skills.rs"]
mod skills;

#[cfg(feature = "client-http")]
#[path = "examples/sessions.rs"]
mod sessions;
