//! A server started as a child process, spoken to over its stdin and stdout (the stdio
//! transport).
//!
//! The child never outlives its client: closing the client closes the child's stdin (the
//! spec's way to ask a stdio server to exit), waits a grace period, then kills it; a child
//! left behind by a dropped client is killed when its handle goes. The child's stderr is
//! passed through, captured into the log, or discarded.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio>

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::io::{DEFAULT_MAX_LINE, LineSender};
use super::{Connect, Inbox, Outgoing, Transport};
use crate::client::error::ClientError;

/// What happens to the child's stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StderrMode {
    /// Passed through to this process's stderr (the default).
    #[default]
    Inherit,
    /// Read line by line into the `tracing` log (target `actix_mcp::client::stderr`, level
    /// info).
    Log,
    /// Discarded.
    Discard,
}

/// A server to start as a child process. See the module docs.
#[derive(Clone)]
pub struct ChildProcess {
    program: OsString,
    args: Vec<OsString>,
    env: HashMap<OsString, OsString>,
    clear_env: bool,
    cwd: Option<PathBuf>,
    stderr: StderrMode,
    max_line: usize,
    grace: Duration,
}

impl fmt::Debug for ChildProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildProcess")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("cwd", &self.cwd)
            .field("stderr", &self.stderr)
            .finish_non_exhaustive()
    }
}

impl ChildProcess {
    /// Runs `program` (looked up on `PATH` as a shell would).
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: HashMap::new(),
            clear_env: false,
            cwd: None,
            stderr: StderrMode::Inherit,
            max_line: DEFAULT_MAX_LINE,
            grace: Duration::from_secs(2),
        }
    }

    /// Runs a command line, split on whitespace (no shell quoting): the program, then its
    /// arguments. `None` for an empty line.
    pub fn from_command_line(line: &str) -> Option<Self> {
        let mut words = line.split_whitespace();
        let program = words.next()?;
        Some(Self::new(program).args(words))
    }

    /// Adds an argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Starts the child with only the variables given with [`env`](Self::env) (default: it
    /// inherits this process's environment).
    #[must_use]
    pub fn clear_env(mut self) -> Self {
        self.clear_env = true;
        self
    }

    /// The child's working directory (default: this process's).
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// What happens to the child's stderr (default: passed through).
    #[must_use]
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// Longest line accepted from the child, in bytes (default 4 MiB).
    #[must_use]
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes.max(1);
        self
    }

    /// How long the child may take to exit after its stdin is closed before it is killed
    /// (default 2 s).
    #[must_use]
    pub fn grace_period(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    fn spawn(&self) -> Result<Child, ClientError> {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match self.stderr {
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Log => Stdio::piped(),
                StderrMode::Discard => Stdio::null(),
            })
            .kill_on_drop(true);
        if self.clear_env {
            command.env_clear();
        }
        command.envs(&self.env);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        command.spawn().map_err(|err| {
            ClientError::Transport(format!(
                "could not start {}: {err}",
                self.program.to_string_lossy()
            ))
        })
    }
}

impl Connect for ChildProcess {
    fn connect(self, inbox: Inbox) -> BoxFuture<'static, Result<Arc<dyn Transport>, ClientError>> {
        Box::pin(async move {
            let mut child = self.spawn()?;
            let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(ClientError::Transport(
                    "the child's stdin and stdout are not piped".into(),
                ));
            };
            if let Some(stderr) = child.stderr.take() {
                tokio::spawn(async move {
                    let mut lines = BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        tracing::info!(target: "actix_mcp::client::stderr", "{line}");
                    }
                });
            }
            let lines = LineSender::start(stdout, stdin, self.max_line, inbox);
            Ok(Arc::new(ChildConnection {
                lines,
                child: Arc::new(Mutex::new(Some(child))),
                grace: self.grace,
            }) as Arc<dyn Transport>)
        })
    }
}

struct ChildConnection {
    lines: LineSender,
    child: Arc<Mutex<Option<Child>>>,
    grace: Duration,
}

impl Transport for ChildConnection {
    fn send(&self, message: Outgoing) -> BoxFuture<'static, Result<(), ClientError>> {
        self.lines.send(message)
    }

    fn close(&self) -> BoxFuture<'static, Result<(), ClientError>> {
        let close_stdin = self.lines.close();
        let child = self
            .child
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        let grace = self.grace;
        Box::pin(async move {
            let closed = close_stdin.await;
            if let Some(child) = child {
                reap(child, grace).await;
            }
            closed
        })
    }
}

impl Drop for ChildConnection {
    fn drop(&mut self) {
        // Dropped without `close` (the session ended on its own): the child is still waited
        // for, so it never lingers as a zombie. Its stdin closes with the line sender.
        let child = self
            .child
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let (Some(child), Ok(runtime)) = (child, tokio::runtime::Handle::try_current()) {
            runtime.spawn(reap(child, self.grace));
        }
        // Outside a runtime, `kill_on_drop` ends it.
    }
}

/// Waits up to `grace` for the child to exit, then kills it; either way it is reaped.
async fn reap(mut child: Child, grace: Duration) {
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(Ok(status)) => {
            tracing::debug!(%status, "the server process exited");
        }
        Ok(Err(err)) => {
            tracing::debug!(%err, "waiting for the server process failed; killing it");
            let _ = child.kill().await;
        }
        Err(_) => {
            tracing::debug!(
                ?grace,
                "the server process did not exit in time; killing it"
            );
            // `kill` waits for the process too.
            let _ = child.kill().await;
        }
    }
}
