//! The stdio transport on the wire: `examples/stdio_server.rs` runs as a child process and
//! each test writes raw JSON-RPC lines to its stdin and reads the lines of its stdout.
//!
//! Every read is bounded by [`common::WAIT`], so a broken server fails a test instead of hanging
//! it, and every line the server writes is validated against the MCP schema. `cargo test` builds
//! the examples before the tests; with `cargo test --test stdio` alone, build the example first
//! (`cargo build --example stdio_server`).
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

use common::WAIT;

fn example_binary() -> PathBuf {
    common::pipe::example_binary("stdio_server")
}

/// The example server as a child process, spoken to in lines.
struct StdioServer {
    child: Option<std::process::Child>,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl StdioServer {
    fn spawn() -> Self {
        let mut child = Command::new(example_binary())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child: Some(child),
            stdin,
            lines,
        }
    }

    /// A server that has answered `initialize` (with these client capabilities) and been told
    /// `notifications/initialized`.
    fn initialized(capabilities: Value) -> Self {
        let mut server = Self::spawn();
        let result = server.initialize("2025-11-25", capabilities);
        assert_eq!(result["protocolVersion"], "2025-11-25");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// The next line, if one arrives within `wait`; `None` also at end of output.
    fn try_recv(&self, wait: Duration) -> Option<Value> {
        match self.lines.recv_timeout(wait) {
            Ok(line) => {
                let message: Value = serde_json::from_str(&line).unwrap_or_else(|err| {
                    panic!("the server wrote a non-JSON line ({err}): {line}")
                });
                common::assert_valid_message(&message);
                Some(message)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The next line; fails the test when none arrives within [`WAIT`].
    fn recv(&self) -> Value {
        self.try_recv(WAIT)
            .unwrap_or_else(|| panic!("no line from the server within {WAIT:?}"))
    }

    /// Sends a request and returns the next line, which must be its response.
    fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let response = self.recv();
        assert_eq!(
            response["id"], id,
            "expected the response to {id}: {response}"
        );
        response
    }

    fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let response = self.request(
            json!(0),
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "stdio-test", "version": "1.0.0"},
            }),
        );
        response["result"].clone()
    }

    fn call_tool(&mut self, id: Value, name: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
    }

    fn assert_ping(&mut self, id: i64) {
        let response = self.request(json!(id), "ping", json!({}));
        assert_eq!(response, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }

    /// Every line left until the server closes its output (bounded by [`WAIT`] per line).
    fn rest_of_output(&self) -> Vec<Value> {
        let mut rest = Vec::new();
        loop {
            match self.lines.recv_timeout(WAIT) {
                Ok(line) => rest.push(serde_json::from_str(&line).unwrap()),
                Err(RecvTimeoutError::Disconnected) => return rest,
                Err(RecvTimeoutError::Timeout) => panic!("stdout still open after {WAIT:?}"),
            }
        }
    }

    /// Closes stdin and waits (at most [`WAIT`]) for the process to exit.
    fn close_and_wait(&mut self) -> ExitStatus {
        drop(self.stdin.take());
        let mut child = self.child.take().expect("the child is still owned");
        let pid = child.id();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        match rx.recv_timeout(WAIT) {
            Ok(status) => status.unwrap(),
            Err(_) => {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
                panic!("the server did not exit within {WAIT:?} of the end of its input");
            }
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error response: {response}"))
}

#[test]
fn initialize_answers_the_requested_version_or_the_latest() {
    let mut server = StdioServer::spawn();
    let result = server.initialize("2025-11-25", json!({}));
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(
        result["serverInfo"],
        json!({"name": "stdio-example", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    assert_eq!(
        result["instructions"],
        "Try the echo, sleep and summarize tools."
    );
    common::assert_valid("InitializeResult", &result);

    let mut server = StdioServer::spawn();
    let result = server.initialize("2024-11-05", json!({}));
    assert_eq!(result["protocolVersion"], "2024-11-05");

    let mut server = StdioServer::spawn();
    let result = server.initialize("1999-01-01", json!({}));
    assert_eq!(result["protocolVersion"], "2025-11-25");
}

#[test]
fn requests_before_initialize_are_refused_but_ping_is_answered() {
    let mut server = StdioServer::spawn();
    let response = server.request(json!(1), "tools/list", json!({}));
    assert_eq!(error_code(&response), -32600);
    assert_eq!(response["id"], 1);
    server.assert_ping(2);
    let response = server.request(json!("s"), "prompts/list", json!({}));
    assert_eq!(error_code(&response), -32600);
    assert_eq!(response["id"], "s");
    // Initializing afterwards still works.
    let result = server.initialize("2025-11-25", json!({}));
    assert_eq!(result["protocolVersion"], "2025-11-25");
}

#[test]
fn tools_list_shows_the_three_tools_and_echo_returns_its_message() {
    let mut server = StdioServer::initialized(json!({}));
    let response = server.request(json!(1), "tools/list", json!({}));
    let tools = response["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["echo", "sleep", "summarize", "ask_name"]);
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    assert_eq!(
        tools[0]["inputSchema"]["required"],
        json!(["message"]),
        "echo requires its message"
    );
    common::assert_valid("ListToolsResult", &response["result"]);

    let response = server.call_tool(json!(2), "echo", json!({"message": "hello, wire"}));
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "hello, wire"}],
        }})
    );
}

#[test]
fn unknown_tools_and_bad_arguments_are_reported() {
    let mut server = StdioServer::initialized(json!({}));
    let response = server.call_tool(json!(1), "nope", json!({}));
    assert_eq!(error_code(&response), -32602);
    assert_eq!(response["error"]["message"], "unknown tool: nope");

    let response = server.call_tool(json!(2), "sleep", json!({"ms": "x"}));
    let result = &response["result"];
    assert_eq!(result["isError"], true, "{response}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("invalid arguments for tool `sleep`"),
        "{text}"
    );
    common::assert_valid("CallToolResult", result);
}

#[test]
fn a_slow_tool_does_not_block_ping() {
    let mut server = StdioServer::initialized(json!({}));
    server.send(&json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 2000}}}));
    server.send(&json!({"jsonrpc": "2.0", "id": 11, "method": "ping"}));
    let first = server.recv();
    assert_eq!(first, json!({"jsonrpc": "2.0", "id": 11, "result": {}}));
    let second = server.recv();
    assert_eq!(
        second,
        json!({"jsonrpc": "2.0", "id": 10, "result": {
            "content": [{"type": "text", "text": "slept 2000 ms"}],
        }})
    );
}

#[test]
fn a_cancelled_request_stops_and_is_never_answered() {
    let mut server = StdioServer::initialized(json!({}));
    server.send(&json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 5000},
                   "_meta": {"progressToken": "cancel-me"}}}));
    // The first progress notification proves the tool is running.
    let progress = server.recv();
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "cancel-me");

    server.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 20, "reason": "user aborted"}}),
    );
    server.send(&json!({"jsonrpc": "2.0", "id": 21, "method": "ping"}));
    loop {
        let line = server.recv();
        if line["id"] == 21 {
            assert_eq!(line, json!({"jsonrpc": "2.0", "id": 21, "result": {}}));
            break;
        }
        // Only progress sent before the cancel landed may come first.
        assert_eq!(line["method"], "notifications/progress", "{line}");
        assert_eq!(line["params"]["progressToken"], "cancel-me");
    }
    // The tool stopped: no more progress (it ticks every 100 ms), and no response for id 20.
    let late = server.try_recv(Duration::from_millis(500));
    assert_eq!(late, None, "nothing may follow a cancelled request");
}

/// Runs `sleep` for 450 ms with `token` and returns the progress notifications it sent, after
/// checking the response came last.
fn progress_of_sleep(token: Value) -> Vec<Value> {
    let mut server = StdioServer::initialized(json!({}));
    server.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 450},
                   "_meta": {"progressToken": token}}}));
    let mut notifications = Vec::new();
    loop {
        let line = server.recv();
        if line.get("id").is_some() {
            assert_eq!(
                line,
                json!({"jsonrpc": "2.0", "id": 5, "result": {
                    "content": [{"type": "text", "text": "slept 450 ms"}],
                }})
            );
            return notifications;
        }
        assert_eq!(line["method"], "notifications/progress", "{line}");
        notifications.push(line["params"].clone());
    }
}

fn assert_progress(notifications: &[Value], token: &Value) {
    // Ticks at 100, 200, 300 and 400 ms; a loaded machine may merge some.
    assert!((1..=4).contains(&notifications.len()), "{notifications:?}");
    let mut last = 0.0;
    for params in notifications {
        common::assert_valid("ProgressNotificationParams", params);
        assert_eq!(
            &params["progressToken"], token,
            "the token is echoed as sent"
        );
        assert_eq!(params["total"], 450);
        assert_eq!(params["message"], "sleeping");
        let progress = params["progress"].as_f64().unwrap();
        assert!(progress > last, "progress must increase: {notifications:?}");
        assert!((100.0..=450.0).contains(&progress), "{progress}");
        last = progress;
    }
}

#[test]
fn progress_echoes_a_string_token_and_increases() {
    let token = json!("progress-string");
    assert_progress(&progress_of_sleep(token.clone()), &token);
}

#[test]
fn progress_echoes_an_integer_token_and_increases() {
    let token = json!(7);
    let notifications = progress_of_sleep(token.clone());
    assert_progress(&notifications, &token);
    assert!(
        notifications[0]["progressToken"].is_i64(),
        "not turned into a string"
    );
}

#[test]
fn summarize_samples_through_the_client() {
    let mut server = StdioServer::initialized(json!({"sampling": {}}));
    server.send(&json!({"jsonrpc": "2.0", "id": 30, "method": "tools/call",
        "params": {"name": "summarize", "arguments": {"text": "the quick brown fox"}}}));
    let request = server.recv();
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    assert_eq!(
        request["params"],
        json!({
            "messages": [{"role": "user",
                          "content": {"type": "text", "text": "Summarize: the quick brown fox"}}],
            "maxTokens": 200,
        })
    );
    common::assert_valid("CreateMessageRequest", &request);
    let id = request["id"].clone();
    assert!(id.is_i64() || id.is_string(), "{request}");

    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "A fox jumps."},
                        "model": "test-model", "stopReason": "endTurn"});
    common::assert_valid("CreateMessageResult", &answer);
    server.send(&json!({"jsonrpc": "2.0", "id": id, "result": answer}));
    let response = server.recv();
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 30, "result": {
            "content": [{"type": "text", "text": "A fox jumps."}],
        }})
    );
}

#[test]
fn summarize_without_sampling_is_an_error_result_and_sends_nothing() {
    let mut server = StdioServer::initialized(json!({}));
    let response = server.call_tool(json!(31), "summarize", json!({"text": "anything"}));
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 31, "result": {
            "content": [{"type": "text", "text": "summarize needs a client that supports sampling"}],
            "isError": true,
        }})
    );
    // Had a sampling request gone out, it would come before this answer.
    server.assert_ping(32);
}

#[test]
fn malformed_lines_are_answered_and_the_server_keeps_serving() {
    let mut server = StdioServer::initialized(json!({}));

    server.send_raw("{bad json");
    let response = server.recv();
    assert_eq!(response["id"], Value::Null);
    assert!(response.as_object().unwrap().contains_key("id"));
    assert_eq!(error_code(&response), -32700);
    server.assert_ping(1);

    server.send_raw("[]");
    let response = server.recv();
    assert_eq!(response["id"], Value::Null);
    assert_eq!(error_code(&response), -32600);
    server.assert_ping(2);

    server.send_raw(r#"{"id":9,"method":"ping"}"#);
    let response = server.recv();
    assert_eq!(error_code(&response), -32600);
    assert_eq!(response["id"], 9, "the id is echoed when it could be read");
    server.assert_ping(3);
}

#[test]
fn an_oversized_line_is_refused_and_the_server_keeps_serving() {
    const LIMIT: usize = 4 * 1024 * 1024;
    let mut server = StdioServer::initialized(json!({}));

    let huge = "a".repeat(LIMIT + LIMIT / 8);
    server.send(&json!({"jsonrpc": "2.0", "id": 40, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": huge}}}));
    let response = server.recv();
    assert_eq!(error_code(&response), -32600, "{response}");
    assert_eq!(response["id"], Value::Null, "the line was never parsed");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains(&LIMIT.to_string()), "{message}");
    server.assert_ping(41);

    // Just under the limit is fine.
    let big = "b".repeat(LIMIT - 200);
    let response = server.call_tool(json!(42), "echo", json!({"message": big}));
    let echoed = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(echoed.len(), big.len());
    assert!(echoed == big, "the echo differs from the message");
}

#[test]
fn end_of_input_exits_cleanly_with_work_in_flight() {
    let mut server = StdioServer::initialized(json!({}));
    server.send(&json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 60000}}}));
    // Requests start in order: once ping is answered, the sleep is in flight.
    server.assert_ping(51);
    let status = server.close_and_wait();
    assert!(status.success(), "{status}");
    assert_eq!(
        server.rest_of_output(),
        Vec::<Value>::new(),
        "a request cut off by the end of input is not answered"
    );
}

#[test]
fn prompts_get_checks_required_arguments() {
    let mut server = StdioServer::initialized(json!({}));
    let response = server.request(json!(1), "prompts/get", json!({"name": "greet"}));
    assert_eq!(error_code(&response), -32602);
    assert_eq!(
        response["error"]["message"],
        "missing required argument `name` for prompt `greet`"
    );

    let response = server.request(
        json!(2),
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
    );
    assert_eq!(
        response["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}])
    );
    common::assert_valid("GetPromptResult", &response["result"]);
}

#[test]
fn resources_read_returns_the_text_or_resource_not_found() {
    let mut server = StdioServer::initialized(json!({}));
    let response = server.request(
        json!(1),
        "resources/read",
        json!({"uri": "file:///example/readme.txt"}),
    );
    assert_eq!(
        response["result"],
        json!({"contents": [{
            "uri": "file:///example/readme.txt",
            "mimeType": "text/plain",
            "text": "This is the actix-mcp stdio example server.\n",
        }]})
    );
    common::assert_valid("ReadResourceResult", &response["result"]);

    let response = server.request(
        json!(2),
        "resources/read",
        json!({"uri": "file:///example/missing.txt"}),
    );
    assert_eq!(error_code(&response), -32002);
    assert_eq!(
        response["error"]["data"],
        json!({"uri": "file:///example/missing.txt"})
    );
}

#[test]
fn ask_name_elicits_through_the_client() {
    let mut server = StdioServer::initialized(json!({"elicitation": {}}));
    server.send(&json!({"jsonrpc": "2.0", "id": 40, "method": "tools/call",
        "params": {"name": "ask_name"}}));
    let request = server.recv();
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert_eq!(request["params"]["message"], "What is your name?");
    assert_eq!(
        request["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    common::assert_valid("ElicitRequest", &request);
    server.send(&json!({"jsonrpc": "2.0", "id": request["id"].clone(),
        "result": {"action": "accept", "content": {"name": "Ada"}}}));
    let response = server.recv();
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 40, "result": {"content": [{"type": "text", "text": "Hello, Ada!"}]}})
    );
    // Declined: the tool still answers, with what the user chose.
    server.send(&json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
        "params": {"name": "ask_name"}}));
    let request = server.recv();
    server.send(
        &json!({"jsonrpc": "2.0", "id": request["id"].clone(), "result": {"action": "decline"}}),
    );
    assert_eq!(
        server.recv()["result"]["content"][0]["text"],
        "You declined to say."
    );
}

#[test]
fn ask_name_without_elicitation_is_an_error_result_and_sends_nothing() {
    let mut server = StdioServer::initialized(json!({}));
    let response = server.call_tool(json!(42), "ask_name", json!({}));
    assert_eq!(response["result"]["isError"], true, "{response}");
    server.assert_ping(43);
}

/// SIGTERM while a 2026 listen stream is open and stdin stays open: the stream gets its closing
/// result at once and the process exits 0 well within the drain deadline (the blocked read of
/// stdin does not hold it).
#[cfg(unix)]
#[test]
fn sigterm_ends_listen_streams_and_exits_with_stdin_open() {
    use rustix::process::{Pid, Signal, kill_process};

    let mut server = StdioServer::spawn();
    server.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen", "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": {"toolsListChanged": true},
        }}),
    );
    let ack = server.recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let child = server.child.as_ref().unwrap();
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    let signalled = std::time::Instant::now();
    kill_process(pid, Signal::TERM).unwrap();
    let closed = server.recv();
    assert_eq!(closed["id"], 3, "{closed}");
    // stdin stays open: the process must not wait for it.
    let mut child = server.child.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = rx
        .recv_timeout(WAIT)
        .unwrap_or_else(|_| panic!("still running {WAIT:?} after SIGTERM with stdin open"))
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(signalled.elapsed() < WAIT);
}
