//! Fake 2026-07-28 servers for the client tests, whose answers each test scripts: an actix-web
//! handler for HTTP (a JSON answer, an SSE stream of several messages, or a plain status) and a
//! line loop over an in-memory pipe for stdio. Each records what it received (HTTP method,
//! headers, body) in a [`Log`]. Every wait is bounded by [`WAIT`](super::WAIT).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix_mcp::client::transport::IoTransport;
use actix_mcp::client::{Client, ClientBuilder};
use actix_mcp::protocol::{ElicitAction, ElicitResult};
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::eventually;

/// Revision 2026-07-28.
pub const V2026: &str = "2026-07-28";

/// What a fake server answers one message with.
pub enum Reply {
    /// HTTP status and JSON-RPC message (the status is ignored over stdio).
    Json(u16, Value),
    /// HTTP 202 / nothing over stdio.
    Nothing,
    /// HTTP status and a plain-text body (not JSON-RPC).
    Text(u16, &'static str),
    /// Several messages: over HTTP one SSE stream (status 200) with an event each, which ends
    /// after the last; over stdio one line each. Notifications or requests, then maybe a
    /// response.
    Lines(Vec<Value>),
}

/// A result response to `body`.
pub fn ok(body: &Value, result: Value) -> Reply {
    Reply::Json(
        200,
        json!({"jsonrpc": "2.0", "id": body["id"], "result": result}),
    )
}

/// An error response to `body`, with an HTTP status (ignored over stdio).
pub fn error(status: u16, body: &Value, code: i64, data: Value) -> Reply {
    Reply::Json(
        status,
        json!({"jsonrpc": "2.0", "id": body["id"], "error": {"code": code, "message": "no", "data": data}}),
    )
}

/// What a fake server answers each message with, given how many of its method came before.
pub type Script = Arc<dyn Fn(&Seen, usize) -> Reply + Send + Sync>;

/// One message the fake server received: its HTTP headers (lowercase names) and body.
#[derive(Debug, Clone)]
pub struct Seen {
    pub http_method: String,
    pub headers: HashMap<String, String>,
    pub body: Value,
}

/// Everything a fake server received, in order.
#[derive(Clone, Default)]
pub struct Log(pub Arc<Mutex<Vec<Seen>>>);

impl Log {
    /// Every message.
    pub fn all(&self) -> Vec<Seen> {
        self.0.lock().unwrap().clone()
    }

    /// The messages of `method`.
    pub fn with_method(&self, method: &str) -> Vec<Seen> {
        self.all()
            .into_iter()
            .filter(|seen| seen.body["method"] == method)
            .collect()
    }

    /// Records `seen`; returns how many messages of its method came before it.
    pub fn push(&self, seen: Seen) -> usize {
        let mut log = self.0.lock().unwrap();
        let before = log
            .iter()
            .filter(|s| s.body["method"] == seen.body["method"])
            .count();
        log.push(seen);
        before
    }

    /// Waits until `check` holds for what was received; fails after [`WAIT`](super::WAIT).
    pub async fn wait_for(&self, what: &str, check: impl Fn(&[Seen]) -> bool) {
        eventually(what, || check(&self.all())).await;
    }
}

/// The discover result of a 2026-07-28 server.
pub fn discover(body: &Value) -> Reply {
    ok(
        body,
        json!({
            "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "supportedVersions": [V2026], "capabilities": {"tools": {}, "prompts": {}},
            "instructions": "be kind",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "9"}}
        }),
    )
}

async fn post(
    req: HttpRequest,
    body: web::Bytes,
    log: web::Data<Log>,
    script: web::Data<Script>,
) -> HttpResponse {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let seen = Seen {
        http_method: "POST".into(),
        headers,
        body,
    };
    let before = log.push(seen.clone());
    match (script.get_ref())(&seen, before) {
        Reply::Json(status, message) => {
            HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                .insert_header(("mcp-session-id", "not-in-2026"))
                .content_type("application/json")
                .body(message.to_string())
        }
        Reply::Nothing => HttpResponse::Accepted().finish(),
        Reply::Text(status, text) => {
            HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                .content_type("text/plain")
                .body(text)
        }
        Reply::Lines(messages) => {
            let events: String = messages
                .iter()
                .map(|message| format!("data: {message}\n\n"))
                .collect();
            HttpResponse::Ok()
                .content_type("text/event-stream")
                .body(events)
        }
    }
}

async fn other(req: HttpRequest, log: web::Data<Log>) -> HttpResponse {
    log.push(Seen {
        http_method: req.method().to_string(),
        headers: HashMap::new(),
        body: Value::Null,
    });
    HttpResponse::MethodNotAllowed().finish()
}

/// Serves `script` on `http://127.0.0.1:PORT/mcp`.
pub fn serve_http(
    script: impl Fn(&Value, usize) -> Reply + Send + Sync + 'static,
) -> (String, Log) {
    serve_http_seen(move |seen, before| script(&seen.body, before))
}

/// [`serve_http`] with a script that sees each message's headers too.
pub fn serve_http_seen(
    script: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static,
) -> (String, Log) {
    let log = Log::default();
    let script: Script = Arc::new(script);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let data = (log.clone(), script);
    let server = actix_web::HttpServer::new(move || {
        actix_web::App::new()
            .app_data(web::Data::new(data.0.clone()))
            .app_data(web::Data::new(data.1.clone()))
            .service(
                web::resource("/mcp")
                    .route(web::post().to(post))
                    .route(web::get().to(other))
                    .route(web::delete().to(other)),
            )
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(1)
    .listen(listener)
    .unwrap()
    .run();
    actix_rt::spawn(server);
    (format!("http://127.0.0.1:{port}/mcp"), log)
}

/// Serves `script` over an in-memory stdio pipe; returns the client's end.
pub fn serve_stdio(
    script: impl Fn(&Value, usize) -> Reply + Send + Sync + 'static,
) -> (
    IoTransport<
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    >,
    Log,
) {
    let log = Log::default();
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_read, mut server_write) = tokio::io::split(server_end);
    let seen = log.clone();
    actix_rt::spawn(async move {
        let mut lines = BufReader::new(server_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let body: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            let before = seen.push(Seen {
                http_method: "STDIO".into(),
                headers: HashMap::new(),
                body: body.clone(),
            });
            let out = match script(&body, before) {
                Reply::Json(_, message) => vec![message],
                Reply::Lines(messages) => messages,
                Reply::Nothing | Reply::Text(..) => Vec::new(),
            };
            for message in out {
                let text = format!("{message}\n");
                if server_write.write_all(text.as_bytes()).await.is_err() {
                    return;
                }
            }
        }
    });
    let (read, write) = tokio::io::split(client_end);
    (IoTransport::new(read, write), log)
}

/// A client builder with the tests' name.
pub fn builder() -> ClientBuilder {
    Client::builder("v2026-test", "0.1.0")
}

/// Accepts every elicitation with `{"name": "Alice"}`.
pub fn accepting() -> ClientBuilder {
    builder().elicitation(|_, _| async {
        let mut result = ElicitResult::new(ElicitAction::Accept);
        result
            .content
            .get_or_insert_with(Default::default)
            .insert("name".into(), json!("Alice"));
        Ok(result)
    })
}

/// A tool with `x-mcp-header` annotations on four of its arguments.
pub const ANNOTATED_TOOL: &str = r#"{"name": "route", "inputSchema": {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "note": {"type": "string", "x-mcp-header": "Note"},
    "priority": {"type": "integer", "x-mcp-header": "Priority"},
    "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
    "query": {"type": "string"}
}}}"#;

/// A `tools/list` page with `tools`, fresh for `ttl` ms.
pub fn tools_page(body: &Value, ttl: u64, tools: Value) -> Reply {
    ok(
        body,
        json!({"resultType": "complete", "ttlMs": ttl, "cacheScope": "private", "tools": tools}),
    )
}

/// A complete `tools/call` result with one text block.
pub fn text(body: &Value, text: &str) -> Reply {
    ok(
        body,
        json!({"resultType": "complete", "content": [{"type": "text", "text": text}]}),
    )
}
