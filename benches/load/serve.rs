//! The server roles of the load benchmark, each run in a child process pinned to its own core:
//! the MCP server of `examples/http_server.rs` (`--serve-mcp`), a bare actix-web handler
//! (`--serve-bare`) and the official Rust SDK's server, rmcp with its Streamable HTTP service
//! (`--serve-rmcp`). Every role serves the same `echo` tool at `/mcp` on 127.0.0.1 with
//! TCP_NODELAY, announces its port on stdout, and exits when the driver goes away.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::sync::Arc;

use actix_mcp::prelude::*;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Result, SERVER_LIFETIME};

/// Arguments of `echo`, as in `examples/http_server.rs`.
#[derive(Deserialize, schemars::JsonSchema)]
pub(super) struct EchoArgs {
    /// The text to send back.
    message: String,
}

/// Pins the calling thread, and so every thread it starts afterwards, to `cpu`.
pub(super) fn pin_to(cpu: usize) -> Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set)?;
    Ok(())
}

/// Reads `--cpu N` (anywhere in `args`) and pins this process to that core before any thread
/// is started, so the whole server (workers, acceptor, blocking pool) runs there.
fn pin_from_args(args: &[String]) -> Result<()> {
    if let Some(at) = args.iter().position(|a| a == "--cpu") {
        let cpu: usize = args.get(at + 1).ok_or("--cpu needs a number")?.parse()?;
        pin_to(cpu)?;
    }
    Ok(())
}

/// Exits when the driver goes away (stdin closes) or after [`SERVER_LIFETIME`].
fn watch_parent() {
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
        std::process::exit(0);
    });
    std::thread::spawn(|| {
        std::thread::sleep(SERVER_LIFETIME);
        std::process::exit(0);
    });
}

fn announce(addr: std::net::SocketAddr) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "LISTENING {}", addr.port())?;
    out.flush()?;
    Ok(())
}

/// Serves `factory` on 127.0.0.1 with one worker until the process exits (inside a running
/// actix system).
async fn serve_actix<F, T>(factory: F) -> Result<()>
where
    F: Fn() -> App<T> + Send + Clone + 'static,
    T: actix_web::dev::ServiceFactory<
            actix_web::dev::ServiceRequest,
            Config = (),
            Response = actix_web::dev::ServiceResponse,
            Error = actix_web::Error,
            InitError = (),
        > + 'static,
{
    let http = HttpServer::new(factory)
        .workers(1)
        .tcp_nodelay(true)
        .disable_signals()
        .bind(("127.0.0.1", 0))?;
    announce(*http.addrs().first().ok_or("not bound")?)?;
    http.run().await?;
    Ok(())
}

/// Runs an actix-web server with one worker until the process exits.
fn run_actix<F, T>(factory: F) -> Result<()>
where
    F: Fn() -> App<T> + Send + Clone + 'static,
    T: actix_web::dev::ServiceFactory<
            actix_web::dev::ServiceRequest,
            Config = (),
            Response = actix_web::dev::ServiceResponse,
            Error = actix_web::Error,
            InitError = (),
        > + 'static,
{
    actix_web::rt::System::new().block_on(serve_actix(factory))
}

/// `--serve-mcp MODE MAX_SESSIONS [--redis URL [--session-lease MS] [--request-streams-on-node]]
/// [--cpu N]`; MODE is `sse`, `json`, `stateless` or `v2026` (the default endpoint with JSON
/// answers, which serves 2026-07-28 requests statelessly). With `--redis URL` the endpoint is a
/// node of a cluster on that Redis server (`Cluster::redis`, cargo feature `redis`), with a
/// session lease of `MS` milliseconds when given (`Cluster::session_lease`), keeping requests'
/// streams in its memory with `--request-streams-on-node`
/// (`RedisEventStore::request_streams_on_node`).
pub(super) fn mcp(args: &[String]) -> Result<()> {
    pin_from_args(args)?;
    watch_parent();
    let (stateless, json_response) = match args.first().map(String::as_str) {
        Some("sse") => (false, false),
        Some("json") => (false, true),
        Some("stateless") => (true, true),
        Some("v2026") => (false, true),
        other => return Err(format!("unknown mode {other:?}").into()),
    };
    let max_sessions: usize = args.get(1).ok_or("missing MAX_SESSIONS")?.parse()?;
    let redis = match args.iter().position(|a| a == "--redis") {
        Some(at) => Some(args.get(at + 1).ok_or("--redis needs a URL")?.clone()),
        None => None,
    };
    let server = Server::builder("actix-mcp-load", env!("CARGO_PKG_VERSION"))
        .tool(
            ToolDef::new("echo", |Params(args): Params<EchoArgs>| async move {
                args.message
            })
            .description("Returns its message unchanged"),
        )
        .build()?;
    let mut mcp = server
        .http("/mcp")
        .stateless(stateless)
        .json_response(json_response);
    if !stateless {
        // A stateless endpoint has no sessions to cap.
        mcp = mcp.max_sessions(max_sessions);
    }
    let lease = match args.iter().position(|a| a == "--session-lease") {
        Some(at) => std::time::Duration::from_millis(
            args.get(at + 1)
                .ok_or("--session-lease needs milliseconds")?
                .parse()?,
        ),
        None => std::time::Duration::ZERO,
    };
    let Some(url) = redis else {
        let mcp = mcp.build()?;
        return run_actix(move || App::new().configure(mcp.configure()));
    };
    let on_node = args.iter().any(|a| a == "--request-streams-on-node");
    cluster_node(mcp, &url, lease, on_node)
}

/// Serves `mcp` as a node of a cluster on the Redis server at `url`, with a session lease of
/// `lease`.
#[cfg(feature = "redis")]
fn cluster_node(
    mcp: actix_mcp::transport::http::McpHttpBuilder,
    url: &str,
    lease: std::time::Duration,
    requests_on_node: bool,
) -> Result<()> {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};
    actix_web::rt::System::new().block_on(async move {
        let redis = Redis::connect(url, "mcp").await?;
        let mut events = RedisEventStore::new(redis.clone());
        if requests_on_node {
            events = events.request_streams_on_node();
        }
        let cluster = actix_mcp::cluster::Cluster::on_redis(redis)
            .event_store(Arc::new(events))
            .session_lease(lease);
        let mcp = mcp.cluster(cluster).build()?;
        serve_actix(move || App::new().configure(mcp.configure())).await
    })
}

/// Without the `redis` feature there is no Redis cluster to be a node of.
#[cfg(not(feature = "redis"))]
fn cluster_node(
    _mcp: actix_mcp::transport::http::McpHttpBuilder,
    _url: &str,
    _lease: std::time::Duration,
    _requests_on_node: bool,
) -> Result<()> {
    Err(super::NEEDS_REDIS_FEATURE.into())
}

/// `--exec-pinned CPU PROGRAM [ARGS...]`: pins this process to core `CPU` (`-` for none),
/// asks to be killed with the driver (the parent), and becomes `PROGRAM` (same pid, same
/// affinity). This is how the driver starts redis-server and HAProxy on the servers' core.
pub(super) fn exec_pinned(args: &[String]) -> Result<()> {
    use std::os::unix::process::CommandExt as _;

    let cpu = args.first().ok_or("--exec-pinned needs a core")?;
    if cpu != "-" {
        pin_to(cpu.parse()?)?;
    }
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
    // The driver may have died before the line above: then nobody would kill us.
    if rustix::process::getppid().is_none_or(|pid| pid.as_raw_nonzero().get() == 1) {
        return Err("the driver is gone".into());
    }
    let program = args.get(1).ok_or("--exec-pinned needs a program")?;
    let err = std::process::Command::new(program).args(&args[2..]).exec();
    Err(format!("could not run {program}: {err}").into())
}

/// A JSON-RPC message as the floor reads it: `id` and `params` borrowed as raw JSON, nothing
/// else looked at. Unknown members (`jsonrpc`, `_meta`) are skipped by the parser.
#[derive(Deserialize)]
struct BareMessage<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// The one field of `initialize`'s params the floor answers with.
#[derive(Deserialize)]
struct BareInitialize<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Cow<'a, str>,
}

/// The fields of `tools/call echo`'s params the floor needs.
#[derive(Deserialize)]
struct BareCall<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: BareEchoArguments<'a>,
}

/// `echo`'s arguments.
#[derive(Deserialize)]
struct BareEchoArguments<'a> {
    #[serde(borrow)]
    message: Cow<'a, str>,
}

/// A JSON-RPC response, serialized once.
#[derive(Serialize)]
struct BareResponse<'a, R> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: R,
}

/// `initialize`'s result.
#[derive(Serialize)]
struct BareInitializeResult<'a> {
    #[serde(rename = "protocolVersion")]
    protocol_version: &'a str,
    capabilities: BareCapabilities,
    #[serde(rename = "serverInfo")]
    server_info: BareServerInfo,
}

/// `{"tools":{"listChanged":true}}`.
#[derive(Serialize)]
struct BareCapabilities {
    tools: BareToolsCapability,
}

/// `{"listChanged":true}`.
#[derive(Serialize)]
struct BareToolsCapability {
    #[serde(rename = "listChanged")]
    list_changed: bool,
}

/// `{"name":"bare","version":"0"}`.
#[derive(Serialize)]
struct BareServerInfo {
    name: &'static str,
    version: &'static str,
}

/// `echo`'s result: one text block.
#[derive(Serialize)]
struct BareCallResult<'a> {
    content: [BareText<'a>; 1],
}

/// `{"type":"text","text":...}`.
#[derive(Serialize)]
struct BareText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// Serializes `response` once: the JSON-RPC response as the body, or with `SSE` one `data:`
/// event holding it (`text/event-stream`), as the server under test frames its answers.
fn bare_answer<const SSE: bool, R: Serialize>(response: &BareResponse<'_, R>) -> HttpResponse {
    let mut body = Vec::with_capacity(256);
    if SSE {
        body.extend_from_slice(b"data: ");
    }
    if serde_json::to_writer(&mut body, response).is_err() {
        return HttpResponse::InternalServerError().finish();
    }
    let content_type = if SSE {
        body.extend_from_slice(b"\n\n");
        "text/event-stream"
    } else {
        "application/json"
    };
    HttpResponse::Ok().content_type(content_type).body(body)
}

/// The floor: the least an actix-web JSON-RPC handler does to answer what the MCP server
/// answers (`echo`'s result, an `initialize` result with a fresh session id, 202 for a
/// notification). It parses into the typed structs above, borrowing `id` and `params` as raw
/// JSON and reading only the fields it answers with, and serializes one typed response.
async fn bare_post<const SSE: bool>(body: web::Bytes) -> HttpResponse {
    let Ok(message) = serde_json::from_slice::<BareMessage<'_>>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    let Some(id) = message.id else {
        return HttpResponse::Accepted().finish();
    };
    let Some(params) = message.params else {
        return HttpResponse::BadRequest().finish();
    };
    match &*message.method {
        "initialize" => {
            let Ok(params) = serde_json::from_str::<BareInitialize<'_>>(params.get()) else {
                return HttpResponse::BadRequest().finish();
            };
            let response = BareResponse {
                jsonrpc: "2.0",
                id,
                result: BareInitializeResult {
                    protocol_version: &params.protocol_version,
                    capabilities: BareCapabilities {
                        tools: BareToolsCapability { list_changed: true },
                    },
                    server_info: BareServerInfo {
                        name: "bare",
                        version: "0",
                    },
                },
            };
            let mut answer = bare_answer::<SSE, _>(&response);
            let session = uuid::Uuid::new_v4().simple().to_string();
            if let Ok(value) = actix_web::http::header::HeaderValue::from_str(&session) {
                answer.headers_mut().insert(
                    actix_web::http::header::HeaderName::from_static("mcp-session-id"),
                    value,
                );
            }
            answer
        }
        "tools/call" => {
            let Ok(call) = serde_json::from_str::<BareCall<'_>>(params.get()) else {
                return HttpResponse::BadRequest().finish();
            };
            if call.name != "echo" {
                return HttpResponse::BadRequest().finish();
            }
            let response = BareResponse {
                jsonrpc: "2.0",
                id,
                result: BareCallResult {
                    content: [BareText {
                        kind: "text",
                        text: &call.arguments.message,
                    }],
                },
            };
            bare_answer::<SSE, _>(&response)
        }
        _ => HttpResponse::BadRequest().finish(),
    }
}

/// The bare handler's DELETE: 200 when a session header is present.
async fn bare_delete(req: HttpRequest) -> HttpResponse {
    if req.headers().contains_key("mcp-session-id") {
        HttpResponse::Ok().finish()
    } else {
        HttpResponse::BadRequest().finish()
    }
}

/// The bare handler's GET: an SSE stream that sends a priming event and then stays open, the
/// least one open SSE connection costs on actix-web.
async fn bare_get() -> HttpResponse {
    let priming = futures::stream::once(async {
        Ok::<_, std::convert::Infallible>(web::Bytes::from_static(
            b"retry: 1000\n\nid: 0\ndata: \n\n",
        ))
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .streaming(futures::StreamExt::chain(
            priming,
            futures::stream::pending(),
        ))
}

/// `--serve-bare FRAMING [--cpu N]`; FRAMING is `json` or `sse`, how `initialize` and
/// `tools/call` are answered.
pub(super) fn bare(args: &[String]) -> Result<()> {
    pin_from_args(args)?;
    watch_parent();
    let sse = match args.first().map(String::as_str) {
        Some("json") => false,
        Some("sse") => true,
        other => return Err(format!("unknown bare framing {other:?}").into()),
    };
    run_actix(move || {
        // One route for every method, as the server under test has: a route per method would
        // be chosen by method guards, which allocate for every request.
        let route = if sse {
            web::route().to(bare_endpoint::<true>)
        } else {
            web::route().to(bare_endpoint::<false>)
        };
        App::new().service(web::resource("/mcp").route(route))
    })
}

/// The bare handler's endpoint: its method tells the request apart.
async fn bare_endpoint<const SSE: bool>(req: HttpRequest, body: web::Bytes) -> HttpResponse {
    match *req.method() {
        actix_web::http::Method::POST => bare_post::<SSE>(body).await,
        actix_web::http::Method::GET => bare_get().await,
        actix_web::http::Method::DELETE => bare_delete(req).await,
        _ => HttpResponse::MethodNotAllowed().finish(),
    }
}

/// The rmcp server: one `echo` tool.
#[derive(Clone)]
struct RmcpEcho;

#[rmcp::tool_router(server_handler)]
impl RmcpEcho {
    #[rmcp::tool(description = "Returns its message unchanged")]
    async fn echo(
        &self,
        rmcp::handler::server::wrapper::Parameters(args): rmcp::handler::server::wrapper::Parameters<EchoArgs>,
    ) -> String {
        args.message
    }
}

/// `--serve-rmcp MODE [--cpu N]`; MODE is `sse` (sessions, SSE answers) or `stateless`
/// (no sessions, JSON answers). One tokio thread, hyper's HTTP/1.1 server with TCP_NODELAY.
pub(super) fn rmcp(args: &[String]) -> Result<()> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };

    pin_from_args(args)?;
    watch_parent();
    let stateful = match args.first().map(String::as_str) {
        Some("sse") => true,
        Some("stateless") => false,
        other => return Err(format!("unknown rmcp mode {other:?}").into()),
    };
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = stateful;
    config.json_response = !stateful;
    let service = StreamableHttpService::new(
        || Ok(RmcpEcho),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        announce(listener.local_addr()?)?;
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            let service = hyper_util::service::TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    })
}
