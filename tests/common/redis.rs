//! A Redis server of the test's own: Debian's `redis-server` on a free loopback port, with no
//! persistence, in a temporary directory; stopped (killed) when dropped.
//!
//! `scripts/test-all.sh` installs `redis-server` when it is missing; a test that needs one and
//! does not find it fails, saying so.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server`.
pub struct RedisServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: PathBuf,
}

impl RedisServer {
    /// Starts a server on a free port and waits until it answers `PING`.
    pub fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_on(port)
    }

    /// Starts a server on `port` (a restart on the port of one that was stopped).
    pub fn start_on(port: u16) -> Self {
        let dir =
            std::env::temp_dir().join(format!("actix-mcp-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut command = Command::new("redis-server");
        command
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
            ])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = run(&mut command, "redis-server");
        let server = Self { child, port, dir };
        server.wait_ready();
        server
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Sends one command (inline syntax) and returns the raw reply.
    pub fn command(&self, command: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        stream
            .write_all(format!("{command}\r\n").as_bytes())
            .unwrap();
        let mut reply = vec![0; 64 * 1024];
        let n = stream.read(&mut reply).unwrap();
        String::from_utf8_lossy(&reply[..n]).into_owned()
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
                let mut reply = [0; 7];
                if stream.write_all(b"PING\r\n").is_ok()
                    && stream.read(&mut reply).is_ok()
                    && reply.starts_with(b"+PONG")
                {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing is answered.
    pub fn pause(&self) {
        signal(self.child.id(), "STOP");
    }

    /// Thaws a paused server (SIGCONT).
    pub fn resume(&self) {
        signal(self.child.id(), "CONT");
    }
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid} failed");
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-CONT")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `command` (the program `program`), or panics saying which Debian package has it (the
/// one `scripts/test-all.sh` installs).
pub fn run(command: &mut Command, program: &str) -> Child {
    let package = if program == "redis-cli" {
        "redis-tools"
    } else {
        "redis-server"
    };
    command.spawn().unwrap_or_else(|err| {
        panic!(
            "could not run {program} ({err}); install it (Debian: apt-get install {package}), as \
             scripts/test-all.sh does"
        )
    })
}
