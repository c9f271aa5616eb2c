//! The command-line client (`examples/client.rs`) as a user runs it: the built binary against
//! our example servers (`examples/stdio_server` over `--stdio`, `examples/http_server` over
//! `--url` on a free loopback port, and `examples/conformance_server` for its header checks) and
//! against `tests/fixtures/cli_peer.py`, a stdio server doing what ours do not (logging without
//! declaring it, asking for roots).
//!
//! Every subcommand and flag is checked on what it prints: the result as one JSON line on
//! stdout; progress, log and error lines as JSON on stderr; exit status 0 (done), 1 (the server
//! answered with an error, or no connection), 2 (bad usage).
//!
//! The binaries are those `cargo test` builds (`cargo build --examples` before running this
//! file alone). Every run is capped at [`RUN_CAP`]; every server is killed when its test ends.
#![cfg(all(feature = "http", feature = "client-http", feature = "auth"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// The longest one run of the client may take: a process of its own (and under `--stdio` the
/// server's too), from start to exit, so more than one step.
const RUN_CAP: Duration = common::WAIT.saturating_mul(6);

/// What one run printed, and how it ended.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The one JSON value on stdout.
    fn out(&self) -> Value {
        let lines: Vec<&str> = self.stdout.lines().collect();
        assert_eq!(lines.len(), 1, "want one line on stdout: {self:#?}");
        serde_json::from_str(lines[0]).unwrap_or_else(|err| panic!("{err}: {self:#?}"))
    }

    /// Every JSON object on stderr, in order (other lines are skipped).
    fn err_lines(&self) -> Vec<Value> {
        self.stderr
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(Value::is_object)
            .collect()
    }

    /// The text blocks of the result on stdout, joined.
    fn text(&self) -> String {
        let out = self.out();
        let blocks = out["content"].as_array().cloned().unwrap_or_default();
        blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Asserts exit 0 and returns `self`.
    fn ok(self) -> Self {
        assert_eq!(self.code, 0, "{self:#?}");
        self
    }

    /// Asserts exit 1 with nothing on stdout; returns the `error` object printed on stderr.
    fn failed(self) -> Value {
        assert_eq!(self.code, 1, "{self:#?}");
        assert!(self.stdout.is_empty(), "{self:#?}");
        let errors: Vec<Value> = self
            .err_lines()
            .into_iter()
            .filter(|line| line.get("error").is_some())
            .collect();
        assert_eq!(errors.len(), 1, "want one error line: {self:#?}");
        errors[0]["error"].clone()
    }
}

/// Runs the client with `args`; the run is killed past [`RUN_CAP`].
async fn client(args: &[&str]) -> Run {
    run_example("client", args).await
}

/// Runs the example binary `name` with `args`; the run is killed past [`RUN_CAP`].
async fn run_example(name: &str, args: &[&str]) -> Run {
    let child = Command::new(common::pipe::example_binary(name))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(RUN_CAP, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{name} {args:?} did not finish within {RUN_CAP:?}"))
        .unwrap();
    Run {
        code: output.status.code().expect("the client was not killed"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A `--stdio` command line: the program and its arguments, split on whitespace by the client.
fn command_line(parts: &[PathBuf]) -> String {
    let parts: Vec<String> = parts.iter().map(|p| p.display().to_string()).collect();
    for part in &parts {
        assert!(
            !part.contains(char::is_whitespace),
            "--stdio cannot run {part:?} (a path with whitespace)"
        );
    }
    parts.join(" ")
}

fn stdio_server() -> String {
    command_line(&[common::pipe::example_binary("stdio_server")])
}

fn peer() -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cli_peer.py");
    command_line(&["python3".into(), script])
}

/// Runs the client against our stdio example server.
async fn stdio(args: &[&str]) -> Run {
    let server = stdio_server();
    let mut all = vec!["--stdio", &server];
    all.extend_from_slice(args);
    client(&all).await
}

/// `examples/http_server` on a free loopback port; killed on drop.
struct HttpServer {
    url: String,
    _child: Child,
}

impl HttpServer {
    async fn start() -> Self {
        Self::start_example("http_server", &["--workers", "1"]).await
    }

    /// The example server `name` with `args` (after `--port`).
    async fn start_example(name: &str, args: &[&str]) -> Self {
        let port = common::pipe::free_port();
        let child = Command::new(common::pipe::example_binary(name))
            .arg("--port")
            .arg(port.to_string())
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // Ready when it accepts connections.
        common::pipe::listening(port).await;
        Self {
            url: format!("http://127.0.0.1:{port}/mcp"),
            _child: child,
        }
    }

    async fn run(&self, args: &[&str]) -> Run {
        let mut all = vec!["--url", &self.url];
        all.extend_from_slice(args);
        client(&all).await
    }
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|item| item["name"].as_str().unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Over stdio

#[tokio::test]
async fn stdio_lists_everything_the_server_offers() {
    let info = stdio(&["info"]).await.ok().out();
    assert_eq!(info["serverInfo"]["name"], "stdio-example");
    // The client probes server/discover first, and our server serves 2026-07-28.
    assert_eq!(info["protocolVersion"], "2026-07-28");
    assert_eq!(
        info["instructions"],
        "Try the echo, sleep and summarize tools."
    );
    assert!(info["capabilities"]["tools"].is_object(), "{info}");

    let tools = stdio(&["tools"]).await.ok().out();
    assert_eq!(names(&tools), ["echo", "sleep", "summarize", "ask_name"]);
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["message"]));

    let prompts = stdio(&["prompts"]).await.ok().out();
    assert_eq!(names(&prompts), ["greet"]);
    assert_eq!(prompts[0]["arguments"][0]["name"], "name");

    let resources = stdio(&["resources"]).await.ok().out();
    assert_eq!(resources[0]["uri"], "file:///example/readme.txt");
    assert_eq!(resources.as_array().unwrap().len(), 1);

    assert_eq!(stdio(&["templates"]).await.ok().out(), json!([]));
    assert_eq!(stdio(&["ping"]).await.ok().out(), json!({}));
}

#[tokio::test]
async fn stdio_calls_tools_gets_prompts_reads_and_completes() {
    let echoed = stdio(&["call", "echo", r#"{"message":"hello, cli"}"#])
        .await
        .ok();
    assert_eq!(echoed.text(), "hello, cli");
    assert_ne!(echoed.out()["isError"], true);

    let prompt = stdio(&["prompt", "greet", r#"{"name":"Ada"}"#])
        .await
        .ok()
        .out();
    assert_eq!(prompt["messages"][0]["role"], "user");
    assert_eq!(prompt["messages"][0]["content"]["text"], "Hello, Ada!");

    let read = stdio(&["read", "file:///example/readme.txt"])
        .await
        .ok()
        .out();
    assert_eq!(
        read["contents"][0]["text"],
        "This is the actix-mcp stdio example server.\n"
    );

    // The example server offers no completions: an empty list, well formed.
    let completed = stdio(&["complete", "--prompt", "greet", "name", "A"])
        .await
        .ok()
        .out();
    assert_eq!(completed["completion"]["values"], json!([]));
}

#[tokio::test]
async fn progress_lines_go_to_stderr_and_the_result_to_stdout() {
    let run = stdio(&["--progress", "call", "sleep", r#"{"ms":500}"#])
        .await
        .ok();
    assert_eq!(run.text(), "slept 500 ms");
    let progress = run.err_lines();
    assert!(!progress.is_empty(), "no progress line: {run:#?}");
    let token = &progress[0]["progressToken"];
    let mut last = 0.0;
    for line in &progress {
        assert_eq!(&line["progressToken"], token, "{run:#?}");
        assert_eq!(line["total"], 500.0, "{run:#?}");
        assert_eq!(line["message"], "sleeping", "{run:#?}");
        let now = line["progress"].as_f64().unwrap();
        assert!(now >= last, "progress went backwards: {run:#?}");
        last = now;
    }
}

#[tokio::test]
async fn log_level_sets_the_servers_level_and_prints_its_logs() {
    let run = stdio(&["--log-level", "debug", "call", "echo", r#"{"message":"x"}"#])
        .await
        .ok();
    assert_eq!(run.text(), "x");
    assert_eq!(
        run.err_lines(),
        [json!({"level": "debug", "logger": "echo", "data": "echo: x"})]
    );
    // At `info`, the server keeps its debug log to itself.
    let run = stdio(&["--log-level", "info", "call", "echo", r#"{"message":"x"}"#])
        .await
        .ok();
    assert_eq!(run.text(), "x");
    assert!(run.err_lines().is_empty(), "{run:#?}");
}

#[tokio::test]
async fn sampling_and_elicitation_are_answered_as_asked() {
    let sampled = stdio(&[
        "--sampling-reply",
        "short.",
        "call",
        "summarize",
        r#"{"text":"long"}"#,
    ])
    .await
    .ok();
    assert_eq!(sampled.text(), "short.");
    // Without the flag the client does not offer sampling: the tool says so.
    let refused = stdio(&["call", "summarize", r#"{"text":"long"}"#])
        .await
        .ok();
    assert_eq!(refused.out()["isError"], true);

    let accepted = stdio(&["--elicit-accept", r#"{"name":"Ada"}"#, "call", "ask_name"])
        .await
        .ok();
    assert_eq!(accepted.text(), "Hello, Ada!");
    let declined = stdio(&["--elicit-decline", "call", "ask_name"]).await.ok();
    assert_eq!(declined.text(), "You declined to say.");
}

#[tokio::test]
async fn cancel_after_ms_prints_cancelled_and_exits_0() {
    // The call would take a minute; the run cap is far shorter.
    let run = stdio(&[
        "--cancel-after-ms",
        "100",
        "call",
        "sleep",
        r#"{"ms":60000}"#,
    ])
    .await
    .ok();
    assert_eq!(run.out(), json!({"cancelled": true}));
}

#[tokio::test]
async fn timeout_ms_gives_up_with_an_error() {
    let error = stdio(&["--timeout-ms", "100", "call", "sleep", r#"{"ms":60000}"#])
        .await
        .failed();
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("no answer within"), "{error}");
}

#[tokio::test]
async fn json_rpc_errors_exit_1_with_the_error_on_stderr() {
    let error = stdio(&["call", "no_such_tool"]).await.failed();
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("no_such_tool"),
        "{error}"
    );

    let error = stdio(&["read", "file:///nowhere"]).await.failed();
    assert!(error["code"].is_i64(), "{error}");
}

#[tokio::test]
async fn a_server_that_cannot_start_or_dies_at_once_exits_1() {
    let error = client(&["--stdio", "/nonexistent/mcp-server", "ping"])
        .await
        .failed();
    assert!(error["message"].is_string(), "{error}");
    let error = client(&["--stdio", "python3 -c pass", "ping"])
        .await
        .failed();
    assert!(
        error["message"].as_str().unwrap().contains("closed"),
        "{error}"
    );
}

#[tokio::test]
async fn bad_usage_exits_2() {
    let server = stdio_server();
    for args in [
        &[][..],
        &["ping"],
        &["--stdio", &server],
        &[
            "--stdio",
            &server,
            "--url",
            "http://127.0.0.1:1/mcp",
            "ping",
        ],
        &["--stdio", &server, "--log-level", "loud", "ping"],
        &["--stdio", &server, "frobnicate"],
        &["--stdio", &server, "complete", "name", "A"],
        &["--stdio", &server, "call", "echo", "not json"],
        &["--stdio", &server, "call", "echo", "[1]"],
        &["--stdio", &server, "prompt", "greet", "3"],
        &["--stdio", &server, "--elicit-accept", "{", "ping"],
        &[
            "--url",
            "http://127.0.0.1:1/mcp",
            "--header",
            "no colon",
            "ping",
        ],
    ] {
        let run = client(args).await;
        assert_eq!(run.code, 2, "{args:?}: {run:#?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:#?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Against a peer doing what our servers do not

#[tokio::test]
async fn log_level_against_a_server_without_logging_still_prints_its_logs() {
    let peer = peer();
    let run = client(&["--stdio", &peer, "--log-level", "debug", "call", "log"])
        .await
        .ok();
    assert_eq!(run.text(), "logged");
    assert_eq!(
        run.err_lines(),
        [json!({"level": "info", "logger": "peer", "data": "logged anyway"})]
    );
}

#[tokio::test]
async fn roots_are_repeatable_or_comma_separated_and_precede_the_subcommand() {
    let peer = peer();
    let args = [
        "--stdio",
        &peer,
        "--roots",
        "file:///a",
        "--roots",
        "file:///b",
    ];
    let run = client(&[&args[..], &["call", "roots"]].concat()).await.ok();
    assert_eq!(run.text(), "file:///a file:///b");

    // Several after one flag, and both forms together.
    let args = [
        "--stdio",
        &peer,
        "--roots",
        "file:///a,file:///b",
        "--roots",
        "file:///c",
    ];
    let run = client(&[&args[..], &["call", "roots"]].concat()).await.ok();
    assert_eq!(run.text(), "file:///a file:///b file:///c");
}

#[tokio::test]
async fn lifecycle_pins_the_era_and_info_says_which_one_was_chosen() {
    let server = stdio_server();
    // Auto: our server answers server/discover.
    let info = client(&["--stdio", &server, "info"]).await.ok().out();
    assert_eq!(info["era"], "2026-07-28");
    assert_eq!(
        info["discover"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "stdio-example"
    );
    assert!(info["discover"]["supportedVersions"].is_array(), "{info}");

    let info = client(&["--stdio", &server, "--lifecycle", "2025-11-25", "info"])
        .await
        .ok()
        .out();
    assert_eq!(info["era"], "2025-11-25");
    assert_eq!(info["protocolVersion"], "2025-11-25");
    assert!(info.get("discover").is_none(), "{info}");

    let info = client(&["--stdio", &server, "--lifecycle", "2026-07-28", "info"])
        .await
        .ok()
        .out();
    assert_eq!(info["era"], "2026-07-28");

    // The peer speaks 2025-11-25 only: pinned to 2026-07-28, no fallback.
    let peer = peer();
    let run = client(&["--stdio", &peer, "--lifecycle", "2026-07-28", "info"]).await;
    assert_eq!(run.code, 1, "{run:#?}");
    let info = client(&["--stdio", &peer, "info"]).await.ok().out();
    assert_eq!(info["era"], "2025-11-25");

    let run = client(&["--stdio", &server, "--lifecycle", "2027-01-01", "info"]).await;
    assert_eq!(run.code, 2, "{run:#?}");
}

#[tokio::test]
async fn elicit_accept_answers_a_url_elicitation_without_content() {
    let peer = peer();
    let args = ["--stdio", &peer, "--elicit-accept", r#"{"name":"Ada"}"#];
    let run = client(&[&args[..], &["call", "visit"]].concat()).await.ok();
    let result: Value = serde_json::from_str(&run.text()).unwrap();
    assert_eq!(result, json!({"action": "accept"}));
    let run = client(&["--stdio", &peer, "--elicit-decline", "call", "visit"])
        .await
        .ok();
    let result: Value = serde_json::from_str(&run.text()).unwrap();
    assert_eq!(result, json!({"action": "decline"}));
}

// ---------------------------------------------------------------------------------------------
// Over Streamable HTTP

#[tokio::test]
async fn http_lists_calls_reads_and_completes() {
    let server = HttpServer::start().await;
    let info = server.run(&["info"]).await.ok().out();
    assert_eq!(info["serverInfo"]["name"], "actix-mcp-example");
    assert_eq!(info["serverInfo"]["title"], "actix-mcp example server");
    let tools = server.run(&["tools"]).await.ok().out();
    assert_eq!(
        names(&tools),
        [
            "echo",
            "sleep",
            "summarize",
            "add_tool",
            "whoami",
            "cancelled_sleeps"
        ]
    );
    let prompts = server.run(&["prompts"]).await.ok().out();
    assert_eq!(names(&prompts), ["greet"]);
    let resources = server.run(&["resources"]).await.ok().out();
    assert_eq!(resources[0]["uri"], "file:///example/readme.txt");
    let templates = server.run(&["templates"]).await.ok().out();
    assert_eq!(templates[0]["uriTemplate"], "greeting://{name}");
    assert_eq!(server.run(&["ping"]).await.ok().out(), json!({}));

    let echoed = server
        .run(&[
            "--header",
            "X-Trace: cli-test",
            "call",
            "echo",
            r#"{"message":"over http"}"#,
        ])
        .await
        .ok();
    assert_eq!(echoed.text(), "over http");
    let prompt = server
        .run(&["prompt", "greet", r#"{"message":"Ada"}"#])
        .await
        .ok()
        .out();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Please greet Ada");
    let read = server
        .run(&["read", "file:///example/readme.txt"])
        .await
        .ok()
        .out();
    assert_eq!(
        read["contents"][0]["text"],
        "This server is an actix-mcp example."
    );
    let greeting = server.run(&["read", "greeting://Bob"]).await.ok().out();
    assert_eq!(greeting["contents"][0]["text"], "Hello, Bob!");
    let completed = server
        .run(&["complete", "--prompt", "greet", "message", "A"])
        .await
        .ok()
        .out();
    assert_eq!(
        completed["completion"]["values"],
        json!(["Ada", "Alan", "Alonzo"])
    );
    let completed = server
        .run(&["complete", "--template", "greeting://{name}", "name", "B"])
        .await
        .ok()
        .out();
    assert_eq!(completed["completion"]["values"], json!(["Barbara"]));
}

#[tokio::test]
async fn http_progress_logs_sampling_cancel_and_errors() {
    let server = HttpServer::start().await;
    let run = server
        .run(&["--progress", "call", "sleep", r#"{"ms":500}"#])
        .await
        .ok();
    assert_eq!(run.text(), "slept 500 ms");
    let progress = run.err_lines();
    assert!(!progress.is_empty(), "no progress line: {run:#?}");
    assert!(progress.iter().all(|p| p["total"] == 500.0), "{run:#?}");

    let run = server
        .run(&["--log-level", "debug", "call", "echo", r#"{"message":"y"}"#])
        .await
        .ok();
    assert_eq!(
        run.err_lines(),
        [json!({"level": "debug", "logger": "echo", "data": "echo: y"})]
    );

    let run = server
        .run(&[
            "--sampling-reply",
            "brief",
            "call",
            "summarize",
            r#"{"text":"long"}"#,
        ])
        .await
        .ok();
    assert_eq!(run.text(), "brief");

    let run = server
        .run(&[
            "--cancel-after-ms",
            "100",
            "call",
            "sleep",
            r#"{"ms":60000}"#,
        ])
        .await
        .ok();
    assert_eq!(run.out(), json!({"cancelled": true}));

    let error = server.run(&["call", "no_such_tool"]).await.failed();
    assert_eq!(error["code"], -32602, "{error}");
}

#[tokio::test]
async fn an_unreachable_url_exits_1_with_the_error_on_stderr() {
    let url = format!("http://127.0.0.1:{}/mcp", common::pipe::free_port());
    let error = client(&["--url", &url, "ping"]).await.failed();
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("127.0.0.1"), "{error}");
}

#[tokio::test]
async fn http_calls_mirror_annotated_arguments_in_param_headers() {
    // The conformance server refuses a call whose Mcp-Param-* headers are missing (-32020):
    // the CLI's call goes through the same path as `call_tool`.
    let server = HttpServer::start_example("conformance_server", &[]).await;
    let run = server
        .run(&[
            "call",
            "test_header_params",
            r#"{"region":"eu-west","priority":3,"verbose":true,"note":"n"}"#,
        ])
        .await
        .ok();
    let echoed: Value = serde_json::from_str(&run.text()).unwrap();
    assert_eq!(
        echoed,
        json!({"region": "eu-west", "priority": 3, "verbose": true, "note": "n"})
    );
}

// ---------------------------------------------------------------------------------------------
// examples/tokio_client: the client in a plain tokio application

#[tokio::test]
async fn the_tokio_client_example_lists_and_calls_a_tool() {
    let server = HttpServer::start().await;
    let run = run_example("tokio_client", &[&server.url]).await.ok();
    assert!(
        run.stdout.starts_with("connected to actix-mcp-example "),
        "{run:#?}"
    );
    assert!(run.stdout.contains("\ntool echo: "), "{run:#?}");
    assert!(
        run.stdout.trim_end().ends_with("echo: hello from tokio"),
        "{run:#?}"
    );

    let run = run_example(
        "tokio_client",
        &[&server.url, "echo", r#"{"message":"chosen"}"#],
    )
    .await
    .ok();
    assert!(run.stdout.trim_end().ends_with("echo: chosen"), "{run:#?}");

    // A server that is not there: an error, and exit status 1.
    let run = run_example("tokio_client", &["http://127.0.0.1:9/mcp"]).await;
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("Error"), "{run:#?}");
}

#[cfg(feature = "skills")]
#[tokio::test]
async fn skills_and_skill_list_and_load_verified_skills() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/skills");
    let server = HttpServer::start_example("http_server", &["--skills", dir]).await;
    let listed = server.run(&["skills"]).await.ok().out();
    let uris: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris.len(), 3, "{listed}");
    let one = server
        .run(&["skill", "skill://pdf-processing/SKILL.md"])
        .await
        .ok()
        .out();
    assert_eq!(
        one["skill"]["frontmatter"]["name"], "pdf-processing",
        "{one}"
    );
    assert!(
        one["instructions"]
            .as_str()
            .unwrap()
            .contains("# PDF processing"),
        "{one}"
    );
    let error = server
        .run(&["skill", "skill://pdf-processing/references/FORMS.md"])
        .await
        .failed();
    assert_eq!(error["code"], -32602, "{error}");
}

/// `call --task` declares the Tasks extension, follows the task `examples/tasks` answers with
/// (the client's debug log names it) and prints the tool's result as `call` does; in the
/// 2025 era it refuses with an error.
#[tokio::test]
async fn call_task_follows_the_task_and_prints_the_tools_result() {
    let port = common::pipe::free_port();
    let _server = Command::new(common::pipe::example_binary("tasks"))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    common::pipe::listening(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let args = [
        "--url",
        &url,
        "call",
        "--task",
        "report",
        r#"{"topic":"cli"}"#,
    ];
    let child = Command::new(common::pipe::example_binary("client"))
        .args(args)
        .env("RUST_LOG", "actix_mcp::client::tasks=debug")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(RUN_CAP, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("client {args:?} did not finish within {RUN_CAP:?}"))
        .unwrap();
    let run = Run {
        code: output.status.code().expect("the client was not killed"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
    .ok();
    assert_eq!(run.text(), "report on cli: 4 sections", "{run:#?}");
    assert!(
        run.stderr.contains("the server runs the call as a task"),
        "{run:#?}"
    );

    let refused = client(&[
        "--url",
        &url,
        "--lifecycle",
        "2025-11-25",
        "call",
        "--task",
        "report",
        r#"{"topic":"cli"}"#,
    ])
    .await
    .failed();
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("2026-07-28")),
        "{refused}"
    );
}
