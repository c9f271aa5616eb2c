//! The malformed-input corpus: one table of hostile or broken messages, each with the exact
//! answer expected (HTTP status, JSON-RPC error code and `id`, or no answer at all), run
//! against both transports: stdio framing (over an in-memory pipe) and Streamable HTTP in each
//! mode (SSE answers in a session, JSON answers in a session, stateless). A case states one
//! expectation and overrides it only where a transport's rules differ (the spec's or this
//! server's documented ones); HTTP-only cases (headers, sessions) are skipped over stdio.
//!
//! Categories: invalid JSON and UTF-8, deep nesting (100,000 levels), ids of every JSON type,
//! envelope errors, batches, unknown methods and wrong param types, notifications with ids
//! and responses to nothing, oversized fields and bodies, sessions, header abuse, and the
//! error cases the spec names (unknown tool, bad cursor, bad log level, a second or failing
//! `initialize`).
//!
//! Every answer is validated against the MCP schema, and every wait is bounded by
//! [`common::WAIT`].
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic>,
//! <https://www.jsonrpc.org/specification>
#![cfg(feature = "http")]
#![allow(clippy::unwrap_used)]

mod common;

use std::fmt;

use actix_mcp::transport::stdio::StdioConfig;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use common::http::{TestServer, VERSION};
use common::pipe::PipeClient;

/// The body and line limit every runner is configured with.
const LIMIT: usize = 1 << 20;

/// What a case must produce.
#[derive(Clone, PartialEq)]
enum Out {
    /// A JSON-RPC error with this code and `id`, sent with this HTTP status (ignored over
    /// stdio).
    Error { status: u16, code: i64, id: Value },
    /// A JSON-RPC result for this `id` (HTTP 200).
    Result { id: Value },
    /// No answer: nothing over stdio, 202 with an empty body over HTTP.
    Nothing,
    /// The case does not apply to this runner.
    Skip,
}

impl fmt::Debug for Out {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Error { status, code, id } => write!(f, "{status} error {code} id {id}"),
            Self::Result { id } => write!(f, "result id {id}"),
            Self::Nothing => f.write_str("no answer"),
            Self::Skip => f.write_str("skipped"),
        }
    }
}

fn error(status: u16, code: i64, id: Value) -> Out {
    Out::Error { status, code, id }
}

fn result(id: Value) -> Out {
    Out::Result { id }
}

/// How a case uses the session of its runner.
#[derive(Clone, Copy, PartialEq)]
enum Session {
    /// Sent in the runner's established session (stdio: its connection after the handshake;
    /// HTTP: with `Mcp-Session-Id` and `MCP-Protocol-Version`).
    Inside,
    /// Sent on a new connection without any session (stdio: a new pipe, no handshake; HTTP: no
    /// session headers).
    Fresh,
    /// HTTP: with an `Mcp-Session-Id` no session has.
    Unknown,
}

/// One entry of the table.
#[derive(Clone)]
struct Case {
    name: &'static str,
    body: Vec<u8>,
    session: Session,
    /// Headers set (replacing the default) or, with `append`, added beside it; `None` removes.
    headers: Vec<(&'static str, Option<Vec<u8>>, bool)>,
    expect: Out,
    stdio: Option<Out>,
    stateless: Option<Out>,
}

fn case(name: &'static str, body: impl Into<Vec<u8>>, expect: Out) -> Case {
    Case {
        name,
        body: body.into(),
        session: Session::Inside,
        headers: Vec::new(),
        expect,
        stdio: None,
        stateless: None,
    }
}

fn json_case(name: &'static str, body: &Value, expect: Out) -> Case {
    case(name, body.to_string(), expect)
}

impl Case {
    /// The expectation over stdio.
    fn stdio(mut self, out: Out) -> Self {
        self.stdio = Some(out);
        self
    }

    /// The expectation in stateless HTTP mode.
    fn stateless(mut self, out: Out) -> Self {
        self.stateless = Some(out);
        self
    }

    fn session(mut self, session: Session) -> Self {
        self.session = session;
        self
    }

    /// Sets header `name` (HTTP only).
    fn header(mut self, name: &'static str, value: &[u8]) -> Self {
        self.headers.push((name, Some(value.to_vec()), false));
        self.stdio = Some(Out::Skip);
        self
    }

    /// Sets header `name` over HTTP; the case still runs over stdio, without it.
    fn http_header(mut self, name: &'static str, value: &[u8]) -> Self {
        self.headers.push((name, Some(value.to_vec()), false));
        self
    }

    /// Adds a second header `name` (HTTP only).
    fn also(mut self, name: &'static str, value: &[u8]) -> Self {
        self.headers.push((name, Some(value.to_vec()), true));
        self.stdio = Some(Out::Skip);
        self
    }

    /// Removes header `name` (HTTP only).
    fn without(mut self, name: &'static str) -> Self {
        self.headers.push((name, None, false));
        self.stdio = Some(Out::Skip);
        self
    }

    fn http_only(mut self) -> Self {
        self.stdio = Some(Out::Skip);
        self
    }
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn ping(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

fn call(id: Value, params: Value) -> Value {
    request(id, "tools/call", params)
}

fn initialize(id: Value, version: Value) -> Value {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "corpus", "version": "1"},
        }),
    )
}

/// `depth` nested arrays.
fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// The table.
fn corpus() -> Vec<Case> {
    const NULL: Value = Value::Null;
    let deep = nested(100_000);
    let long = "x".repeat(300);
    vec![
        // Invalid JSON and UTF-8: -32700, id null (it cannot be read).
        case("truncated JSON", r#"{"jsonrpc":"2.0","id":1,"#, error(400, -32700, NULL)),
        case("not JSON at all", "hello", error(400, -32700, NULL)),
        case("trailing garbage", r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#, error(400, -32700, NULL)),
        case("two messages in one", r#"{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}"#, error(400, -32700, NULL)),
        case("invalid UTF-8 in a string", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\xffng\"}".to_vec(), error(400, -32700, NULL)),
        case("invalid UTF-8 outside strings", b"{\"jsonrpc\":\"2.0\",\"id\":1,\xc3\x28\"method\":\"ping\"}".to_vec(), error(400, -32700, NULL)),
        case("a lone surrogate escape", r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800"}}"#, error(400, -32700, NULL)),
        case("a byte order mark", b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".to_vec(), error(400, -32700, NULL)),
        case("a NUL byte", b"{\"jsonrpc\":\"2.0\",\0\"id\":1,\"method\":\"ping\"}".to_vec(), error(400, -32700, NULL)),
        case("an empty body", "", error(400, -32700, NULL)).stdio(Out::Nothing),
        case("whitespace only", "  \t ", error(400, -32700, NULL)).stdio(Out::Nothing),
        // Deep nesting: refused by the parser's depth limit where values are built, never a
        // stack overflow.
        // (Valid JSON, skipped without recursion: a batch, refused as such.)
        case("100,000 nested arrays", deep.clone(), error(400, -32600, NULL)),
        case("100,000 nested arrays in params", format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{deep}}}}}"#), error(400, -32700, NULL)),
        case("100,000 nested arrays as the id", format!(r#"{{"jsonrpc":"2.0","id":{deep},"method":"ping"}}"#), error(400, -32600, NULL)),
        // (Over HTTP the tree it would make is past the budget of request bytes: refused
        // before parsing.)
        case("100,000 nested objects", format!("{}{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000)), error(413, -32600, NULL)).stdio(error(400, -32700, NULL)),
        // Not one JSON-RPC object.
        case("a number", "42", error(400, -32600, NULL)),
        case("a string", r#""ping""#, error(400, -32600, NULL)),
        case("null", "null", error(400, -32600, NULL)),
        case("a batch", format!("[{}]", ping(json!(1))), error(400, -32600, NULL)),
        case("an empty batch", "[]", error(400, -32600, NULL)),
        case("a batch with initialize", format!("[{}]", initialize(json!(1), json!(VERSION))), error(400, -32600, NULL)),
        case("an empty object", "{}", error(400, -32600, NULL)),
        // Envelope errors once the id is known: -32600 with that id.
        json_case("no jsonrpc member", &json!({"id": 1, "method": "ping"}), error(400, -32600, json!(1))),
        json_case("jsonrpc 1.0", &json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}), error(400, -32600, json!(1))),
        json_case("jsonrpc as a number", &json!({"jsonrpc": 2.0, "id": 1, "method": "ping"}), error(400, -32600, json!(1))),
        json_case("no method", &json!({"jsonrpc": "2.0", "id": 1}), error(400, -32600, json!(1))),
        json_case("a method that is a number", &json!({"jsonrpc": "2.0", "id": 1, "method": 5}), error(400, -32600, json!(1))),
        json_case("a method that is an object", &json!({"jsonrpc": "2.0", "id": 1, "method": {"name": "ping"}}), error(400, -32600, json!(1))),
        json_case("a method name over 256 bytes", &ping(json!(1)).as_object().map(|m| { let mut m = m.clone(); m.insert("method".into(), json!(long)); Value::Object(m) }).unwrap(), error(400, -32600, json!(1))),
        json_case("a request with a result", &json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {}}), error(400, -32600, json!(1))),
        case("a duplicate id member", r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#, error(400, -32600, NULL)),
        // Ids of every JSON type.
        json_case("id: a string", &ping(json!("abc")), result(json!("abc"))),
        json_case("id: an empty string", &ping(json!("")), result(json!(""))),
        json_case("id: unicode", &ping(json!("ключ-🔑")), result(json!("ключ-🔑"))),
        json_case("id: zero", &ping(json!(0)), result(json!(0))),
        json_case("id: negative", &ping(json!(-7)), result(json!(-7))),
        json_case("id: i64::MAX", &ping(json!(i64::MAX)), result(json!(i64::MAX))),
        json_case("id: i64::MIN", &ping(json!(i64::MIN)), result(json!(i64::MIN))),
        json_case("id: u64::MAX", &ping(json!(u64::MAX)), error(400, -32600, NULL)),
        case("id: 1.5", r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, error(400, -32600, NULL)),
        case("id: 1.0", r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#, error(400, -32600, NULL)),
        case("id: 1e3", r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#, error(400, -32600, NULL)),
        json_case("id: null", &ping(Value::Null), error(400, -32600, NULL)),
        json_case("id: true", &ping(json!(true)), error(400, -32600, NULL)),
        json_case("id: an object", &ping(json!({"a": 1})), error(400, -32600, NULL)),
        json_case("id: an array", &ping(json!([1])), error(400, -32600, NULL)),
        json_case("id: a string over 256 bytes", &ping(json!(long)), error(400, -32600, NULL)),
        // Unknown methods and wrong params.
        json_case("an unknown method", &request(json!(1), "no/such/method", json!({})), error(200, -32601, json!(1))),
        json_case("an empty method name", &request(json!(1), "", json!({})), error(200, -32601, json!(1))),
        json_case("an rpc. method", &request(json!(1), "rpc.discover", json!({})), error(200, -32601, json!(1))),
        json_case("params: an array", &json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]}), error(400, -32602, json!(1))),
        json_case("params: a string", &json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"}), error(400, -32600, json!(1))),
        json_case("params: a number", &json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3}), error(400, -32600, json!(1))),
        json_case("params: null", &json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": null}), result(json!(1))),
        json_case("_meta: not an object", &request(json!(1), "ping", json!({"_meta": 5})), result(json!(1))),
        json_case("tools/call without a name", &call(json!(1), json!({})), error(200, -32602, json!(1))),
        json_case("tools/call with a numeric name", &call(json!(1), json!({"name": 5})), error(200, -32602, json!(1))),
        json_case("tools/call of an unknown tool", &call(json!(1), json!({"name": "nope"})), error(200, -32602, json!(1))),
        json_case("tools/call with arguments that are a string", &call(json!(1), json!({"name": "echo", "arguments": "hi"})), error(200, -32602, json!(1))),
        json_case("tools/list with a bad cursor", &request(json!(1), "tools/list", json!({"cursor": "garbage"})), error(200, -32602, json!(1))),
        json_case("tools/list with a numeric cursor", &request(json!(1), "tools/list", json!({"cursor": 5})), error(200, -32602, json!(1))),
        json_case("logging/setLevel to an unknown level", &request(json!(1), "logging/setLevel", json!({"level": "loud"})), error(200, -32602, json!(1))),
        json_case("tools/call with arguments of the wrong type", &call(json!(1), json!({"name": "echo", "arguments": {"message": 5}})), result(json!(1))),
        json_case("prompts/get of an unknown prompt", &request(json!(1), "prompts/get", json!({"name": "p"})), error(200, -32602, json!(1))),
        json_case("resources/read of an unknown resource", &request(json!(1), "resources/read", json!({"uri": "file:///x"})), error(200, -32002, json!(1))),
        json_case("resources/read without a uri", &request(json!(1), "resources/read", json!({})), error(200, -32602, json!(1))),
        json_case("completion/complete with a bad ref", &request(json!(1), "completion/complete", json!({"ref": {"type": "ref/nothing"}, "argument": {"name": "a", "value": "b"}})), error(200, -32602, json!(1))),
        // Oversized fields and bodies.
        json_case("a progressToken over 256 bytes", &request(json!(1), "ping", json!({"_meta": {"progressToken": long}})), error(200, -32602, json!(1))),
        json_case("a progressToken that is an object", &request(json!(1), "ping", json!({"_meta": {"progressToken": {"a": 1}}})), result(json!(1))),
        case("a body over the limit", format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(LIMIT)), error(413, -32600, NULL)),
        // Notifications with ids, notifications, and responses to nothing.
        json_case("notifications/initialized with an id", &request(json!(1), "notifications/initialized", json!({})), error(200, -32601, json!(1))),
        json_case("notifications/cancelled with an id", &request(json!(1), "notifications/cancelled", json!({"requestId": 9})), error(200, -32601, json!(1))),
        json_case("an unknown notification", &json!({"jsonrpc": "2.0", "method": "notifications/no_such"}), Out::Nothing),
        json_case("a notification with array params", &json!({"jsonrpc": "2.0", "method": "notifications/no_such", "params": [1]}), error(400, -32602, NULL)),
        json_case("a cancellation of nothing", &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}}), Out::Nothing)
            .stateless(error(400, -32600, NULL)),
        json_case("a malformed cancellation", &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"x": 1}}}), Out::Nothing)
            .stateless(error(400, -32600, NULL)),
        json_case("a response to nothing", &json!({"jsonrpc": "2.0", "id": 99, "result": {}}), Out::Nothing),
        json_case("an error response to nothing", &json!({"jsonrpc": "2.0", "id": 99, "error": {"code": 1, "message": "no"}}), Out::Nothing),
        json_case("a response with result and error", &json!({"jsonrpc": "2.0", "id": 99, "result": {}, "error": {"code": 1, "message": "no"}}), error(400, -32600, json!(99))),
        json_case("a response with a malformed error", &json!({"jsonrpc": "2.0", "id": 99, "error": 5}), error(400, -32600, json!(99))),
        json_case("a response without an id", &json!({"jsonrpc": "2.0", "result": {}}), error(400, -32600, NULL)),
        // The lifecycle.
        json_case("a second initialize", &initialize(json!(1), json!(VERSION)), error(200, -32600, json!(1)))
            .stateless(result(json!(1))),
        json_case("an initialize with a numeric version", &initialize(json!(1), json!(5)), error(200, -32602, json!(1)))
            .session(Session::Fresh),
        json_case("an initialize without params", &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}), error(200, -32602, json!(1)))
            .session(Session::Fresh),
        json_case("a request before initialize", &request(json!(1), "tools/list", json!({})), error(400, -32600, json!(1)))
            .session(Session::Fresh)
            .stateless(result(json!(1))),
        json_case("ping before initialize", &ping(json!(1)), error(400, -32600, json!(1)))
            .session(Session::Fresh)
            .stdio(result(json!(1)))
            .stateless(result(json!(1))),
        json_case("an unknown session", &ping(json!(1)), error(404, -32600, json!(1)))
            .session(Session::Unknown)
            .http_only()
            .stateless(result(json!(1))),
        json_case("a session id that is not ASCII", &ping(json!(1)), error(400, -32600, json!(1)))
            .header("mcp-session-id", b"caf\xe9")
            .stateless(result(json!(1))),
        // 2026-07-28 requests (stateless, on the same endpoint and the same stdio process).
        json_case("a 2026 request without clientCapabilities", &request(json!(1), "tools/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})), error(400, -32602, json!(1)))
            .http_header("mcp-protocol-version", b"2026-07-28")
            .http_header("mcp-method", b"tools/list"),
        json_case("a 2026 request with an unsupported version", &request(json!(1), "tools/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}})), error(400, -32022, json!(1)))
            .http_header("mcp-protocol-version", b"2099-01-01")
            .http_header("mcp-method", b"tools/list"),
        json_case("a 2026 request whose header disagrees", &request(json!(1), "tools/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}})), error(400, -32020, json!(1)))
            .http_header("mcp-method", b"tools/list")
            .stdio(result(json!(1))),
        json_case("a 2026 request without Mcp-Method", &request(json!(1), "tools/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}})), error(400, -32020, json!(1)))
            .http_header("mcp-protocol-version", b"2026-07-28")
            .stdio(result(json!(1))),
        json_case("a method removed in 2026", &request(json!(1), "ping", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}})), error(404, -32601, json!(1)))
            .http_header("mcp-protocol-version", b"2026-07-28")
            .http_header("mcp-method", b"ping"),
        // Header abuse (HTTP only).
        json_case("no Accept", &ping(json!(1)), error(406, -32600, NULL)).without("accept"),
        json_case("Accept without text/event-stream", &ping(json!(1)), error(406, -32600, NULL)).header("accept", b"application/json"),
        json_case("no Content-Type", &ping(json!(1)), error(415, -32600, NULL)).without("content-type"),
        json_case("Content-Type text/plain", &ping(json!(1)), error(415, -32600, NULL)).header("content-type", b"text/plain"),
        json_case("Content-Type not ASCII", &ping(json!(1)), error(415, -32600, NULL)).header("content-type", b"application/json\xff"),
        json_case("an unknown MCP-Protocol-Version", &ping(json!(1)), error(400, -32022, json!(1))).header("mcp-protocol-version", b"1999-01-01"),
        json_case("an MCP-Protocol-Version that is not ASCII", &ping(json!(1)), error(400, -32020, json!(1))).header("mcp-protocol-version", b"2025-11-25\xff"),
        json_case("a foreign Origin", &ping(json!(1)), error(403, -32600, NULL)).header("origin", b"http://evil.example"),
        json_case("an Origin that is not ASCII", &ping(json!(1)), error(403, -32600, NULL)).header("origin", b"http://localhost\xff"),
        json_case("two Origins, one foreign", &ping(json!(1)), error(403, -32600, NULL)).header("origin", b"http://localhost").also("origin", b"http://evil.example"),
        json_case("a foreign Host", &ping(json!(1)), error(403, -32600, NULL)).header("host", b"evil.example"),
        json_case("a Host that is not ASCII", &ping(json!(1)), error(403, -32600, NULL)).header("host", b"localhost\xe9"),
    ]
}

/// Records a mismatch between what a case expects and what the runner saw.
fn seen(mismatches: &mut Vec<String>, case: &Case, out: &Out, got: &Out) {
    if got != out {
        mismatches.push(format!("{:?}: expected {out:?}, got {got:?}", case.name));
    }
}

/// Fails, listing every mismatch of a runner at once.
fn assert_none(runner: &str, ran: usize, mismatches: &[String]) {
    assert!(
        mismatches.is_empty(),
        "{runner}: {} of {ran} cases answered otherwise:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    eprintln!("{runner}: {ran} cases");
}

/// The answers that arrived on a pipe before the fence (a `ping` sent after the case).
async fn before_fence(client: &mut PipeClient) -> Vec<Value> {
    client.send(ping(json!("corpus-fence"))).await;
    let mut answers = Vec::new();
    loop {
        let message = client.read().await;
        if message["id"] == "corpus-fence" && message.get("result").is_some() {
            return answers;
        }
        answers.push(message);
    }
}

/// What one JSON-RPC message is, as an [`Out`] (with `status`).
fn classify(status: u16, message: &Value) -> Out {
    common::assert_valid_message(message);
    let id = message
        .get("id")
        .unwrap_or_else(|| panic!("an answer without an id member: {message}"))
        .clone();
    match message.get("error") {
        Some(error) => Out::Error {
            status,
            code: error["code"].as_i64().unwrap(),
            id,
        },
        None => Out::Result { id },
    }
}

fn stdio_config() -> StdioConfig {
    StdioConfig {
        max_line_bytes: LIMIT,
    }
}

/// Runs the table over stdio framing: in one session after its handshake, or on a new pipe.
#[actix_web::test]
async fn the_corpus_over_stdio() {
    let fixture = common::http_tools::fixture();
    let mut inside = PipeClient::connect_with(&fixture.server, json!({}), stdio_config()).await;
    let (mut ran, mut mismatches) = (0, Vec::new());
    for case in corpus() {
        let out = case.stdio.clone().unwrap_or_else(|| case.expect.clone());
        if out == Out::Skip {
            continue;
        }
        // Over the line limit, a line is skipped whole: it is sent as it is.
        let mut fresh;
        let client = match case.session {
            Session::Inside => &mut inside,
            Session::Fresh | Session::Unknown => {
                fresh = PipeClient::serve(&fixture.server, stdio_config());
                &mut fresh
            }
        };
        client.send_line(&case.body).await;
        let answers = before_fence(client).await;
        let got = match answers.as_slice() {
            [] => Out::Nothing,
            [answer] => {
                let got = classify(0, answer);
                match (&got, &out) {
                    // stdio has no status.
                    (Out::Error { code, id, .. }, Out::Error { status, .. }) => Out::Error {
                        status: *status,
                        code: *code,
                        id: id.clone(),
                    },
                    _ => got,
                }
            }
            more => panic!("case {:?}: several answers: {more:?}", case.name),
        };
        seen(&mut mismatches, &case, &out, &got);
        ran += 1;
    }
    assert_none("stdio", ran, &mismatches);
    // The session survived all of it.
    assert_eq!(before_fence(&mut inside).await, Vec::<Value>::new());
}

/// The HTTP modes the table runs in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Sse,
    Json,
    Stateless,
}

async fn http_runner(mode: Mode) {
    let (_fixture, srv) = common::http_tools::start(|mcp| {
        mcp.body_limit(LIMIT)
            .json_response(mode == Mode::Json)
            .stateless(mode == Mode::Stateless)
    });
    let mut client = srv.client();
    if mode != Mode::Stateless {
        client.initialize(json!({})).await;
    }
    let (mut ran, mut mismatches) = (0, Vec::new());
    for case in corpus() {
        let out = match (&case.stateless, mode) {
            (Some(out), Mode::Stateless) => out.clone(),
            _ => case.expect.clone(),
        };
        if out == Out::Skip {
            continue;
        }
        let got = post_case(&srv, &client, &case).await;
        seen(&mut mismatches, &case, &out, &got);
        ran += 1;
    }
    assert_none(&format!("HTTP {mode:?}"), ran, &mismatches);
    // The session (if any) survived all of it.
    common::http::assert_ping(&client, 424_242).await;
    srv.stop().await;
}

/// POSTs one case and classifies the answer.
async fn post_case(srv: &TestServer, client: &common::http::Client, case: &Case) -> Out {
    let mut headers = HeaderMap::new();
    headers.insert(
        "accept",
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    match case.session {
        Session::Inside => {
            if let Some(session) = &client.session {
                headers.insert("mcp-session-id", HeaderValue::from_str(session).unwrap());
                headers.insert("mcp-protocol-version", HeaderValue::from_static(VERSION));
            }
        }
        Session::Fresh => {}
        Session::Unknown => {
            headers.insert(
                "mcp-session-id",
                HeaderValue::from_static("no-such-session"),
            );
            headers.insert("mcp-protocol-version", HeaderValue::from_static(VERSION));
        }
    }
    for (name, value, append) in &case.headers {
        let name = HeaderName::from_static(name);
        match value {
            None => {
                headers.remove(&name);
            }
            Some(value) => {
                let value = HeaderValue::from_bytes(value).unwrap();
                if *append {
                    headers.append(name, value);
                } else {
                    headers.insert(name, value);
                }
            }
        }
    }
    let builder = client
        .http()
        .post(&srv.url)
        .headers(headers)
        .body(case.body.clone());
    let response = common::http::send(builder).await;
    let status = response.status();
    if status == StatusCode::ACCEPTED {
        let body = response.text().await.unwrap();
        assert!(
            body.is_empty(),
            "case {:?}: 202 with a body: {body}",
            case.name
        );
        return Out::Nothing;
    }
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    if content_type.starts_with("text/event-stream") {
        // The answer's id is read from the stream itself.
        let mut reader = common::sse::SseReader::new(response);
        let message = loop {
            let message = reader.next_message().await;
            if message.get("method").is_none() {
                break message;
            }
        };
        reader.expect_end().await;
        return classify(status.as_u16(), &message);
    }
    if content_type.starts_with("application/json") {
        let body = response.text().await.unwrap();
        let message: Value = serde_json::from_str(&body)
            .unwrap_or_else(|err| panic!("case {:?}: not JSON ({err}): {body}", case.name));
        return classify(status.as_u16(), &message);
    }
    panic!(
        "case {:?}: {status} with content type {content_type:?}",
        case.name
    );
}

#[actix_web::test]
async fn the_corpus_over_http_sse() {
    http_runner(Mode::Sse).await;
}

#[actix_web::test]
async fn the_corpus_over_http_json() {
    http_runner(Mode::Json).await;
}

#[actix_web::test]
async fn the_corpus_over_http_stateless() {
    http_runner(Mode::Stateless).await;
}

/// One table: its cases have distinct names (a mismatch names exactly one case), and it is
/// not accidentally emptied.
#[test]
fn the_table_names_each_case_once() {
    let cases = corpus();
    let mut names: Vec<&str> = cases.iter().map(|case| case.name).collect();
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "duplicate case names");
    assert!(count >= 100, "{count} cases");
}
